//! The playground's URL fragment, decoded natively ([`skblab_core::permalink`]).
//!
//! Properties: no panic; a decoded link encodes to a fragment that decodes to it again; an
//! error is one short sentence (it is shown on the page); a position clamped to a trace
//! exists in it.

use skblab_core::permalink::{Link, Position};
use skblab_core::{walkthrough, RunOptions, Trace};
use std::sync::OnceLock;

pub fn permalink(data: &[u8]) {
    let Ok(fragment) = std::str::from_utf8(data) else {
        return;
    };
    match Link::decode(fragment) {
        Ok(None) => {}
        Ok(Some(link)) => {
            let again = Link::decode(&link.encode());
            assert_eq!(
                again.as_ref(),
                Ok(&Some(link.clone())),
                "re-encoded link differs"
            );
            check_clamp(link.at());
        }
        Err(e) => assert!(
            !e.is_empty() && e.len() <= 300 && !e.contains('\n'),
            "error is not one short line: {e:.400}"
        ),
    }
}

/// The anatomy walkthrough's trace: steps with several events each.
fn trace() -> &'static Trace {
    static TRACE: OnceLock<Trace> = OnceLock::new();
    TRACE.get_or_init(|| {
        let w = walkthrough::find("anatomy").expect("the anatomy walkthrough");
        w.scenario.run(&RunOptions::default()).expect("it runs")
    })
}

fn check_clamp(at: Position) {
    let t = trace();
    let c = at.clamp(t);
    assert!(
        c.step <= t.steps.len(),
        "{at:?} clamped to {c:?}, past the end"
    );
    if let Some(e) = c.event {
        let events = c.step.checked_sub(1).map_or(0, |i| t.steps[i].events.len());
        assert!(e < events, "{at:?} clamped to {c:?}: no such event");
    }
    assert_eq!(c.clamp(t), c, "clamping is not idempotent");
}
