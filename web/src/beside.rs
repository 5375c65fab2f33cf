//! A capture with the model's prediction beside it: the core derives the scenario for the
//! capture's writes (`Capture::prediction`), runs it, steps it beside the capture's lane
//! (`Prediction::lane`) and judges each write's skbs (`Prediction::compare`); this module only
//! puts the two lanes in one [`Session`] and says which skbs each lane outlines. Pure Rust,
//! tested natively.

use crate::diff::Changed;
use crate::session::{Captured, Session};
use skblab_core::capture::{Compared, Fact};
use skblab_core::kernel_report::Verdict;
use skblab_core::RunOptions;
use std::rc::Rc;

/// The prediction shown beside a capture.
#[derive(Clone, Debug)]
pub struct Beside {
    /// Each write's skbs on both sides, judged.
    pub compared: Compared,
    /// Per step of the capture's lane, how many of the socket's writes were made by then.
    pub writes: Vec<usize>,
    /// The derived scenario, for the editor.
    pub text: String,
    /// The MSS and TCP header it used, each with where it came from.
    pub facts: Vec<Fact>,
    /// The tcp socket predicted.
    pub socket: u32,
}

/// The capture session `s` with the model's prediction as a second lane, or why there is
/// none (the core's refusal: no TCP socket that wrote, a run past its caps).
pub fn open(s: &Session) -> Result<Session, String> {
    let captured = s
        .capture
        .as_ref()
        .ok_or("only a capture has a prediction")?;
    let c = &captured.capture;
    let p = c.prediction().map_err(|e| e.to_string())?;
    let model = (p.scenario.run(&RunOptions::traced(None))).map_err(|e| e.to_string())?;
    let lane = p.lane(c, &model).map_err(|e| e.to_string())?;
    let beside = Beside {
        compared: p.compare(c, &model),
        writes: p.writes_made(c),
        text: p.text,
        facts: p.facts,
        socket: p.socket,
    };
    Ok(Session {
        title: format!("{} · beside it, the model's prediction", s.title),
        traces: vec![s.traces[0].clone(), lane],
        capture: Some(Captured {
            beside: Some(Rc::new(beside)),
            ..captured.clone()
        }),
        texts: Default::default(),
        ..s.clone()
    })
}

impl Beside {
    /// The skbs lane `lane` (0: the capture, 1: the model) outlines at position `pos`: those
    /// of the writes made so far whose fields differ from the other side's.
    pub fn differs(&self, lane: usize, pos: usize) -> Changed {
        let at = pos.checked_sub(1).and_then(|p| self.writes.get(p));
        let written = at.copied().unwrap_or(0);
        let skbs = (self.compared.writes.iter().take(written))
            .flat_map(|w| &w.skbs)
            .filter(|s| s.verdict() == Verdict::Differ)
            .filter_map(|s| if lane == 0 { s.captured } else { s.model })
            .collect();
        Changed {
            skbs,
            ..Changed::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::load_capture;

    fn fixture() -> Session {
        let text = include_str!("../../tests/fixtures/capture-tcp.json");
        load_capture(text).unwrap()
    }

    /// The prediction is a second lane stepped with the capture's, its scenario the core's.
    #[test]
    fn the_prediction_opens_as_a_second_lane() {
        let s = open(&fixture()).unwrap();
        assert_eq!(s.traces.len(), 2);
        assert_eq!(s.traces[0].steps.len(), s.traces[1].steps.len());
        let today = skblab_core::send::Variant::TODAY.name();
        assert_eq!(s.traces[1].variant, today);
        let b = s.capture.as_ref().unwrap().beside.as_ref().unwrap();
        assert!(b.text.contains("[[ops]]"), "{}", b.text);
        assert_eq!(s.lane_name(1), format!("{today} · kernel v6.12"));
        assert!(s.lane_name(0).starts_with("Linux 6.18"));
        assert!(open(&s).is_ok(), "a prediction opens again from itself");
    }

    /// The fixture's skbs all agree: nothing outlined; a forced difference outlines the
    /// write's skb in each lane, once the model has made that write.
    #[test]
    fn differing_skbs_are_outlined_in_both_lanes() {
        let s = open(&fixture()).unwrap();
        let b = s.capture.as_ref().unwrap().beside.clone().unwrap();
        assert!((0..=6).all(|p| b.differs(0, p).skbs.is_empty()));
        let mut forced = (*b).clone();
        forced.compared.writes[1].skbs[0].cells[0].model = Some(1);
        forced.compared.writes[1].skbs[0].cells[0].verdict = Some(Verdict::Differ);
        assert!(forced.differs(0, 1).skbs.is_empty(), "before write 2");
        let model = forced.compared.writes[1].skbs[0].model.unwrap();
        assert_eq!(
            (forced.differs(0, 2).skbs, forced.differs(1, 2).skbs),
            (vec![5], vec![model])
        );
        assert_eq!(forced.differs(1, 6).skbs, vec![model]);
    }
}
