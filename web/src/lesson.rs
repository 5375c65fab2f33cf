//! A lesson of one's own: a walkthrough or challenge file a teacher wrote, opened from disk or
//! carried whole in a link. The core reads both kinds; this only tells which the file is.

use skblab_core::challenge::{self, Challenge};
use skblab_core::limits::MAX_SCENARIO_TEXT;
use skblab_core::walkthrough::{self, Walkthrough};

/// At most this many bytes in a lesson file: the terminal's cap on the files it reads, and
/// what a link can carry (base64 of it fits in `permalink::MAX_FRAGMENT`, which a browser
/// opens; a larger file made a link Chromium could not open, issue 38).
pub const MAX_LESSON_TEXT: usize = MAX_SCENARIO_TEXT;

pub enum Lesson {
    Walk(Walkthrough),
    Challenge(Challenge),
}

/// At most this many bytes in a JSON file the page opens: a kernel report (the core refuses
/// one over `MAX_REPORT_TEXT`, 4 MiB) or a `skblab trace` capture, which the core reads up to
/// 64 MiB. Some 28,000 skbs of a capture (about 600 bytes each): a bound on what a tab reads
/// into its memory and replays, not a measured limit of its drawing.
pub const MAX_JSON_TEXT: usize = 16 << 20;

/// What a file the learner opens is, told from its first bytes (`start`): a kernel report or
/// a trace capture is JSON (the app tells them apart by their fields), a lesson TOML.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Report,
    Lesson,
}

impl FileKind {
    pub fn of(start: &str) -> FileKind {
        match start
            .trim_start_matches('\u{feff}')
            .trim_start()
            .starts_with('{')
        {
            true => FileKind::Report,
            false => FileKind::Lesson,
        }
    }

    /// The most bytes a file of this kind may hold, and its name: a larger one is refused
    /// unread.
    pub fn cap(self) -> (usize, &'static str) {
        match self {
            FileKind::Report => (MAX_JSON_TEXT, "a kernel report or trace capture"),
            FileKind::Lesson => (MAX_LESSON_TEXT, "a lesson file"),
        }
    }

    /// Refuses a file `name` of `size` bytes over [`FileKind::cap`], naming the cap.
    pub fn check_size(self, name: &str, size: f64) -> Result<(), String> {
        let (cap, what) = self.cap();
        match size > cap as f64 {
            true => Err(format!("{name}: {size} bytes; {what} is at most {cap}")),
            false => Ok(()),
        }
    }
}

/// Reads a walkthrough or a challenge file of at most [`MAX_LESSON_TEXT`] bytes. A file that
/// is neither gets the error of the kind it claims to be: a challenge has a top-level `goal`,
/// a walkthrough none.
pub fn parse(text: &str) -> Result<Lesson, String> {
    FileKind::Lesson.check_size("the lesson", text.len() as f64)?;
    let walk = match walkthrough::parse(text) {
        Ok(w) => return Ok(Lesson::Walk(w)),
        Err(e) => e,
    };
    let chal = match challenge::parse(text) {
        Ok(c) => return Ok(Lesson::Challenge(c)),
        Err(e) => e,
    };
    let (kind, e) = match text.starts_with("goal") || text.contains("\ngoal") {
        true => ("challenge", chal),
        false => ("walkthrough", walk),
    };
    Err(format!("this {kind} file is not valid: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lesson_file_is_a_walkthrough_or_a_challenge() {
        let walk = include_str!("../../core/walkthroughs/anatomy.toml");
        assert!(matches!(parse(walk), Ok(Lesson::Walk(w)) if w.name == "anatomy"));
        let chal = include_str!("../../core/challenges/reuse-a-page.toml");
        assert!(matches!(parse(chal), Ok(Lesson::Challenge(c)) if c.name == "reuse-a-page"));
    }

    /// A bad file's error names the field, in the kind of file it is.
    #[test]
    fn a_bad_lesson_names_its_field() {
        let walk =
            include_str!("../../core/walkthroughs/anatomy.toml").replacen("title", "titel", 1);
        let err = parse(&walk).err().unwrap();
        assert!(err.starts_with("this walkthrough file"), "{err}");
        assert!(err.contains("titel"), "{err}");
        let chal =
            include_str!("../../core/challenges/reuse-a-page.toml").replacen("hint", "hnt", 1);
        let err = parse(&chal).err().unwrap();
        assert!(err.starts_with("this challenge file"), "{err}");
        assert!(err.contains("hnt"), "{err}");
    }

    /// A lesson over the cap is refused, naming the cap, and unparsed; a report or capture
    /// may be larger, up to its own. A file's kind is told from its start.
    #[test]
    fn a_lesson_over_the_cap_is_refused() {
        let walk = include_str!("../../core/walkthroughs/anatomy.toml");
        let big = format!("{walk}\n#{}", "x".repeat(MAX_LESSON_TEXT));
        let err = parse(&big).err().unwrap();
        assert!(
            err.ends_with(&format!("a lesson file is at most {MAX_LESSON_TEXT}")),
            "{err}"
        );
        assert!(FileKind::Lesson
            .check_size("a", MAX_LESSON_TEXT as f64)
            .is_ok());
        let over = (MAX_LESSON_TEXT + 1) as f64;
        assert!(FileKind::Lesson.check_size("a.toml", over).is_err());
        assert!(FileKind::Report.check_size("a.json", over).is_ok());
        let err = (FileKind::Report)
            .check_size("a.json", (MAX_JSON_TEXT + 1) as f64)
            .unwrap_err();
        assert!(
            err.ends_with("a kernel report or trace capture is at most 16777216"),
            "{err}"
        );
        assert_eq!(
            FileKind::of("\u{feff} \n{\"skblab_kernel\""),
            FileKind::Report
        );
        assert_eq!(FileKind::of("name = \"x\""), FileKind::Lesson);
    }
}
