//! What the stage shows: a walkthrough, a permalink, a challenge's start or a kernel report,
//! each handed to the editor too.

use super::{quiz, App, Seed, Shared};
use crate::dom;
use crate::form;
use crate::predict::Quiz;
use crate::session::{self, Link, Session};
use serde_json::Value;
use std::rc::Rc;

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
        let Some(w) = self.walks.get(i) else {
            return Err("no walkthroughs are built in".into());
        };
        match session::load_walkthrough(w) {
            Ok(s) => {
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
        self.reset_lanes();
        self.go(step.min(s.len()));
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

    /// Opens challenge `i`: its start in the editor and on the stage.
    pub(super) fn open_challenge(&mut self, i: usize) {
        let Some((text, name)) = self.challenges.get(i).map(|c| (c.start(), c.name.clone())) else {
            return;
        };
        self.stop();
        self.notice = None;
        self.seed_editor(&text, "");
        match session::load_custom(&text, None) {
            Ok(s) => self.show(s, 0),
            Err(e) => self.notice = Some(format!("Challenge {name} failed to run: {e}")),
        }
        self.challenge = Some(quiz::Open { i, verdict: None });
    }

    /// Opens a kernel report's text: its scenario at the step the kernel reached, the
    /// kernel's skbs as a lane beside the model's.
    pub(super) fn open_report(&mut self, text: Result<String, String>) {
        self.stop();
        self.notice = None;
        match text.and_then(|t| session::load_report(&t)) {
            Ok(s) => {
                let driven = s.kernel.as_ref().map_or(0, |r| r.driven);
                let compare = s.traces.get(1).map_or(String::new(), |t| t.variant.clone());
                self.seed_editor(&s.text.clone(), &compare);
                self.show(s, driven);
            }
            Err(e) => self.notice = Some(format!("The kernel report did not open: {e}")),
        }
    }
}
