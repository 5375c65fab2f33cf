//! The model's run stepped beside the capture's lane: write n of the capture beside the
//! model's write n, a read (or another socket's write) holding the model where it was
//! ([`Prediction::model_steps`], [`Prediction::lane`]), so a host shows the two lanes at one
//! position as it shows two variants.

use super::{Capture, Moment, Prediction};
use crate::limits::MAX_TRACE_OBJECTS;
use crate::replay::empty_like;
use crate::trace::{Step, Trace};
use crate::Error;

impl Prediction {
    /// How many of the socket's writes (those made ops) the capture has made by each of its
    /// steps ([`Capture::trace`]: one per read or write, then one for what came after).
    pub fn writes_made(&self, c: &Capture) -> Vec<usize> {
        let mut written = 0usize;
        let mut made: Vec<usize> = (c.timeline.iter())
            .filter_map(|m| match *m {
                Moment::Write { socket, .. } if socket == self.socket => {
                    written += 1;
                    Some(written.min(self.ops))
                }
                Moment::Write { .. } | Moment::Read { .. } => Some(written.min(self.ops)),
                _ => None,
            })
            .collect();
        made.push(made.last().copied().unwrap_or(0));
        made
    }

    /// The model's step beside each of the capture's steps: the step of the socket's last
    /// write so far ([`Prediction::write_step`]), none before its first.
    pub fn model_steps(&self, c: &Capture) -> Vec<Option<usize>> {
        (self.writes_made(c).into_iter())
            .map(|n| n.checked_sub(1).map(|w| self.write_step(w)))
            .collect()
    }

    /// `model` (the run of [`Prediction::scenario`]) with one step per step of the
    /// capture's lane: where the capture reaches the socket's next write, the model's step
    /// for it (its events); elsewhere the model's state held, with no events. Its size is
    /// capped as a run's is.
    pub fn lane(&self, c: &Capture, model: &Trace) -> Result<Trace, Error> {
        let first = model.steps.first().ok_or_else(|| {
            Error::invalid("prediction", "the model's run has no step to stand beside")
        })?;
        let before = empty_like(&first.state);
        let mut steps = Vec::new();
        let (mut was, mut size) = (None, 0);
        for at in self.model_steps(c) {
            let step = match at.and_then(|m| model.steps.get(m)) {
                Some(_) if at != was => reached(model, was, at.unwrap_or(0)),
                Some(s) => held(&s.state, format!("the model holds after `{}`", s.op)),
                None => held(&before, "before the socket's first write".into()),
            };
            size += step.size();
            if size > MAX_TRACE_OBJECTS {
                return Err(Error::Range {
                    field: "prediction".into(),
                    value: format!("over {MAX_TRACE_OBJECTS} events, skbs, frags and pages"),
                    allowed: format!("at most {MAX_TRACE_OBJECTS} drawn beside a capture"),
                });
            }
            steps.push(step);
            was = at;
        }
        Ok(Trace {
            mechanism: model.mechanism.clone(),
            variant: model.variant.clone(),
            era: model.era,
            udp: model.udp,
            napi_frags: model.napi_frags,
            consts: model.consts,
            steps,
            counters: model.counters.clone(),
        })
    }
}

/// The model's step `at`, with the events of the steps since `was` (an `ack` before a
/// write) before its own, so the lane shows every event the model ran.
fn reached(model: &Trace, was: Option<usize>, at: usize) -> Step {
    let from = was.map_or(0, |w| w + 1);
    let between = model.steps.get(from..=at).unwrap_or_default();
    let mut step = model.steps[at].clone();
    if between.len() > 1 {
        step.events = between
            .iter()
            .flat_map(|s| s.events.iter().cloned())
            .collect();
        let ops: Vec<&str> = between.iter().map(|s| s.op.as_str()).collect();
        step.op = ops.join(", then ");
    }
    step
}

/// A step that changes nothing: `state` again, no events.
fn held(state: &crate::trace::State, op: String) -> Step {
    Step {
        op,
        name: String::new(),
        events: Vec::new(),
        state: state.clone(),
        counters: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use crate::capture::predict::tests::fixture;
    use crate::RunOptions;

    /// The model stands at write n beside the capture's write n, and stays there through
    /// the reads: one step per step of the capture's lane, a held step with no events.
    #[test]
    fn the_model_steps_with_the_writes() {
        let c = fixture();
        let p = c.prediction().unwrap();
        let steps = p.model_steps(&c);
        // write, write, read, write, read, then what came after.
        let at = Some;
        assert_eq!(steps, [at(0), at(1), at(1), at(2), at(2), at(2)]);
        let captured = c.trace().unwrap();
        assert_eq!(steps.len(), captured.steps.len());
        let model = p.scenario.run(&RunOptions::default()).unwrap();
        let lane = p.lane(&c, &model).unwrap();
        assert_eq!(lane.steps.len(), captured.steps.len());
        let events: Vec<bool> = lane.steps.iter().map(|s| !s.events.is_empty()).collect();
        assert_eq!(events, [true, true, false, true, false, false]);
        assert_eq!(lane.steps[2].state, model.steps[1].state);
        assert_eq!(lane.steps[3], model.steps[2]);
        let today = crate::send::Variant::TODAY.name();
        assert_eq!(
            (lane.variant.as_str(), lane.mechanism.as_str()),
            (today, "sendmsg")
        );
        for s in 0..lane.steps.len() {
            lane.state_at(s, lane.steps[s].events.len()).unwrap();
        }
    }
}
