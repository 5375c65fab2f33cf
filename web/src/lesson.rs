//! A lesson of one's own: a walkthrough or challenge file a teacher wrote, opened from disk or
//! carried whole in a link. The core reads both kinds; this only tells which the file is.

use skblab_core::challenge::{self, Challenge};
use skblab_core::walkthrough::{self, Walkthrough};

pub enum Lesson {
    Walk(Walkthrough),
    Challenge(Challenge),
}

/// Reads a walkthrough or a challenge file. A file that is neither gets the error of the kind
/// it claims to be: a challenge has a top-level `goal`, a walkthrough none.
pub fn parse(text: &str) -> Result<Lesson, String> {
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
}
