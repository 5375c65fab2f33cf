//! What the stage shows: a walkthrough, a permalink, a challenge's start, a lesson file or a
//! kernel report, each handed to the editor too; or a `skblab trace` capture, which has no
//! scenario to hand it (the editor keeps its text).

use super::{quiz, App, Seed, Shared};
use crate::dom;
use crate::form;
use crate::lesson::{self, FileKind, Lesson};
use crate::predict::{Quiz, Source};
use crate::session::{self, Link, Position, Session};
use serde_json::Value;
use skblab_core::challenge::Challenge;
use skblab_core::walkthrough::Walkthrough;
use std::rc::Rc;
use yew::AttrValue;

impl App {
    /// Opens what the URL fragment names, or the default walkthrough with a message saying
    /// why the link could not be used.
    pub(super) fn open_fragment(&mut self) {
        let link = Link::decode(&dom::fragment());
        // A broken scenario link still hands its text to the editor, to be fixed there.
        let keep = match &link {
            Ok(Some(Link::Custom { text, .. })) => Some(text.clone()),
            _ => None,
        };
        let opened = match link {
            Ok(None) => Ok(false),
            Ok(Some(Link::Walk { name, at })) => {
                match self.walks.iter().position(|w| w.name == name) {
                    Some(i) => self.open_walk(i, at.step).map(|_| self.restore_event(at)),
                    None => Err(format!("there is no walkthrough named `{name}`")),
                }
            }
            // The challenge files may come after the walkthroughs: a challenge (or a lesson
            // file, which may be one and joins their list) opens once they are here.
            Ok(Some(Link::Challenge { .. } | Link::Lesson { .. }))
                if self.challenges.is_empty() =>
            {
                Ok(true)
            }
            Ok(Some(Link::Challenge { name, work, at })) => {
                let built_in =
                    |(c, from): &(Challenge, Source)| *from == Source::BuiltIn && c.name == name;
                match self.challenges.iter().position(built_in) {
                    Some(i) => Ok(self.open_challenge(i, None, work, at)),
                    None => Err(format!("there is no challenge named `{name}`")),
                }
            }
            Ok(Some(Link::Lesson { text, work, at })) => {
                self.open_lesson(text, work, at).map(|_| true)
            }
            Ok(Some(Link::Custom { text, compare, at })) => {
                self.seed_editor(&text, compare.as_deref().unwrap_or_default());
                session::load_custom(&text, compare.as_deref()).map(|s| {
                    self.show(s, at.step);
                    self.restore_event(at)
                })
            }
            Err(e) => Err(e),
        };
        match opened {
            Ok(true) => {}
            Ok(false) => {
                let _ = self.open_walk(0, 0);
            }
            Err(e) => {
                self.notice = Some(format!(
                    "This link could not be opened ({e}); showing the default walkthrough."
                ));
                let _ = self.open_walk(0, 0);
                if let Some(text) = keep {
                    let compare = self.seed.compare.clone();
                    self.seed_editor(&text, &compare);
                }
            }
        }
    }

    pub(super) fn open_walk(&mut self, i: usize, step: usize) -> Result<(), String> {
        let Some(w) = self.walks.get(i).cloned() else {
            return Err("no walkthroughs are built in".into());
        };
        self.show_walk(&w, step, None)
    }

    /// Shows walkthrough `w` at `step`; `lesson` is the link of a lesson file's.
    fn show_walk(
        &mut self,
        w: &Walkthrough,
        step: usize,
        lesson: Option<Link>,
    ) -> Result<(), String> {
        self.challenge = None;
        match session::load_walkthrough(w) {
            Ok(mut s) => {
                s.lesson = lesson;
                // The editor names the variants the panels show (the walkthrough's own, not
                // the scenario's default).
                let shown = Value::String(s.traces[0].variant.clone());
                let text = form::set(&s.text, "variant", shown).unwrap_or_else(|_| s.text.clone());
                let compare = s.traces.get(1).map_or("", |t| t.variant.as_str());
                self.seed_editor(&text, compare);
                self.show(s, step);
                Ok(())
            }
            Err(e) => {
                self.notice = Some(format!("Walkthrough `{}` failed to run: {e}", w.name));
                Err(e)
            }
        }
    }

    pub(super) fn show(&mut self, s: Session, step: usize) {
        if step > s.len() {
            self.notice = Some(format!(
                "The link's step {step} is past the last step ({}); showing the last.",
                s.len()
            ));
        }
        self.nav.open(&s, step);
        // A walkthrough charts the counter its narration says to watch, in every lane.
        if let Some(c) = s.walk.as_ref().and_then(|w| w.chart.as_ref()) {
            self.chart = Some(c.clone().into());
        }
        self.quiz = match s.walk.as_ref().map(|w| Quiz::new(w, &s.traces)) {
            Some(Ok(q)) => q,
            Some(Err(e)) => {
                self.notice = Some(format!("The walkthrough's questions failed to load: {e}"));
                Quiz::default()
            }
            None => Quiz::default(),
        };
        self.session = Some(Shared(Rc::new(s)));
    }

    /// Starts the editor over from `text`, comparing with `compare` (empty: none).
    pub(super) fn seed_editor(&mut self, text: &str, compare: &str) {
        self.seed = Seed {
            key: self.seed.key + 1,
            text: text.to_string().into(),
            compare: compare.to_string().into(),
        };
    }

    /// Opens challenge `i` at `at`: the learner's scenario (`work`, from a link), else its
    /// start in the variant its goal is checked in, in the editor and on the stage, with the
    /// core's verdict on the learner's. Its link names it, or carries its file (`lesson`), and
    /// the learner's scenario. Says that it opened.
    pub(super) fn open_challenge(
        &mut self,
        i: usize,
        lesson: Option<Link>,
        work: Option<String>,
        at: Position,
    ) -> bool {
        let Some((c, _)) = self.challenges.get(i) else {
            return false;
        };
        let name = c.name.clone();
        let variant = Value::String(c.variant.clone());
        let start = form::set(&c.start(), "variant", variant).unwrap_or_else(|_| c.start());
        let text = work.clone().unwrap_or(start);
        let lesson = lesson.unwrap_or(Link::Challenge {
            name: name.clone(),
            work: work.clone(),
            at,
        });
        self.stop();
        self.notice = None;
        self.seed_editor(&text, "");
        match session::load_custom(&text, None) {
            Ok(s) => {
                self.show(
                    Session {
                        lesson: Some(lesson),
                        ..s
                    },
                    at.step,
                );
                self.restore_event(at);
            }
            Err(e) => self.notice = Some(format!("Challenge {name} failed to run: {e}")),
        }
        self.challenge = Some(quiz::Open {
            i,
            verdict: None,
            work: None,
        });
        if let Some(w) = &work {
            self.check(w);
        }
        true
    }

    /// Opens a walkthrough or challenge file's `text` at `at` (a challenge's on the learner's
    /// scenario `work`, when given); its link carries the text.
    fn open_lesson(
        &mut self,
        text: String,
        work: Option<String>,
        at: Position,
    ) -> Result<(), String> {
        let link = Some(Link::Lesson {
            text: text.clone(),
            work: work.clone(),
            at,
        });
        let lesson = lesson::parse(&text)?;
        self.challenge = None;
        match lesson {
            Lesson::Walk(_) if work.is_some() => {
                Err("a walkthrough file's link carries no scenario (s=)".into())
            }
            Lesson::Walk(w) => self.show_walk(&w, at.step, link).map(|_| {
                self.restore_event(at);
            }),
            Lesson::Challenge(c) => {
                // The file's challenge joins the list, once however often it is opened; its
                // solved mark is its own, whatever its name.
                let from = Source::lesson(&text);
                let i = match self.challenges.iter().position(|(_, s)| *s == from) {
                    Some(i) => i,
                    None => {
                        self.challenges.push((c, from));
                        self.challenges.len() - 1
                    }
                };
                self.open_challenge(i, link, work, at);
                Ok(())
            }
        }
    }

    /// Opens a file's text: a kernel report (JSON) at the step the kernel reached, the
    /// kernel's skbs as a lane beside the model's; a `skblab trace` capture (JSON with a
    /// capture's fields) as the program's own skbs, before its first syscall; else a lesson
    /// file. A file that does not open (too large, unreadable, invalid) leaves the stage as it
    /// was, with a notice.
    pub(super) fn open_report(&mut self, text: Result<String, String>) {
        self.stop();
        self.notice = None;
        let report = text.and_then(|t| match FileKind::of(&t) {
            FileKind::Lesson => self.open_lesson(t, None, Position::default()).map(|_| None),
            FileKind::Report => Ok(Some(t)),
        });
        let text = match report {
            Ok(Some(t)) => t,
            Ok(None) => return,
            Err(e) => {
                self.notice = Some(format!("The file did not open: {e}"));
                return;
            }
        };
        if skblab_core::capture::Capture::is_one(&text) {
            return self.open_capture(&text);
        }
        match session::load_report(&text) {
            Ok(s) => {
                let driven = s.kernel.as_ref().map_or(0, |r| r.driven);
                let compare = s.traces.get(1).map_or(String::new(), |t| t.variant.clone());
                self.seed_editor(&s.text.clone(), &compare);
                self.show(s, driven);
            }
            Err(e) => self.notice = Some(format!("The kernel report did not open: {e}")),
        }
    }

    /// Sets the model's prediction beside the capture shown, at the same step; the editor
    /// is offered its scenario ([`App::offered`]), keeping the learner's text to go back to.
    pub(super) fn open_beside(&mut self) {
        let Some(s) = self.session.clone() else {
            return;
        };
        match crate::beside::open(&s) {
            Ok(beside) => self.show(beside, self.nav.pos),
            Err(e) => self.notice = Some(format!("The model's prediction did not open: {e}")),
        }
    }

    /// The derived scenario the editor is offered while a prediction is beside a capture.
    pub(super) fn offered(&self) -> Option<AttrValue> {
        let s = self.session.as_ref()?;
        let b = s.capture.as_ref()?.beside.as_ref()?;
        Some(b.text.clone().into())
    }

    /// Opens a capture before the program's first syscall. The editor keeps what the learner
    /// typed (a capture has no scenario to give it); an open challenge closes, as the stage no
    /// longer shows its scenario.
    fn open_capture(&mut self, capture: &str) {
        match session::load_capture(capture) {
            Ok(s) => {
                self.challenge = None;
                self.show(s, 0);
            }
            Err(e) => self.notice = Some(format!("The capture did not open: {e}")),
        }
    }
}
