//! The playground's URL fragment, decoded natively ([`skblab_core::permalink`]).
//!
//! Properties: no panic; a decoded link encodes to a fragment that decodes to it again; an
//! error is one short sentence (it is shown on the page); a position clamped to the traces of
//! its lanes exists in them (each lane's event in its own trace, the lead among the lanes).

use skblab_core::permalink::{Link, Position, LANES};
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

/// The rx-page-reuse walkthrough's two lanes: steps with several events each, of different
/// numbers in each lane.
fn traces() -> &'static [Trace] {
    static TRACES: OnceLock<Vec<Trace>> = OnceLock::new();
    TRACES.get_or_init(|| {
        let w = walkthrough::find("rx-page-reuse").expect("the rx-page-reuse walkthrough");
        let run = |v: &String| {
            let opts = RunOptions::traced(Some(v));
            w.scenario.run(&opts).expect("it runs")
        };
        w.variants.iter().map(run).collect()
    })
}

fn check_clamp(at: Position) {
    // Against both lanes, and against the left one alone (a view of one trace).
    for traces in [traces(), &traces()[..1]] {
        let c = at.clamp(traces);
        let len = traces[0].steps.len();
        assert!(c.step <= len, "{at:?} clamped to {c:?}, past the end");
        assert!(
            c.lead.is_none_or(|l| l < traces.len()),
            "{at:?} clamped to {c:?}: no such lane"
        );
        for lane in 0..LANES {
            let Some(e) = c.events[lane] else { continue };
            let t = traces
                .get(lane)
                .unwrap_or_else(|| panic!("{at:?} clamped to {c:?}: lane {lane} shown"));
            let events = c.step.checked_sub(1).map_or(0, |i| t.steps[i].events.len());
            assert!(
                e < events,
                "{at:?} clamped to {c:?}: no such event in lane {lane}"
            );
        }
        assert_eq!(c.clamp(traces), c, "clamping is not idempotent");
    }
}
