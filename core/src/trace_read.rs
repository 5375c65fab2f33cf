//! Reading a run: the inherent methods of [`Trace`] and [`State`] that need more than
//! trace.rs knows (the replay, the kernel-function table, the query's objects), in one place
//! above all of them: the state at any event, the kernel function an event stands for, what
//! a step freed, and what a state's diagram draws.

use crate::call_path::{call_path, gap, CallPath, Gap};
use crate::events::{Cpu, Event};
use crate::freed::{Freeable, Freed};
use crate::kernel_fn::{kernel_fn, Flow, KernelFn};
use crate::query::Value;
use crate::replay::empty_like;
use crate::trace::{State, Trace};
use crate::Error;

/// Replaying a run.
impl Trace {
    /// The state after the first `events` events of step `step` (0: the state before the
    /// step, which is the last step's state, or the empty state before the first).
    pub fn state_at(&self, step: usize, events: usize) -> Result<State, Error> {
        let s = self.steps.get(step).ok_or_else(|| Error::Range {
            field: "step".into(),
            value: step.to_string(),
            allowed: format!("0..{}", self.steps.len()),
        })?;
        let list = s.events.get(..events).ok_or_else(|| Error::Range {
            field: "event".into(),
            value: events.to_string(),
            allowed: format!("0..={} (the events of step {step})", s.events.len()),
        })?;
        let mut state = match step {
            0 => empty_like(&s.state),
            n => self.steps[n - 1].state.clone(),
        };
        for e in list {
            state.apply(e)?;
        }
        Ok(state)
    }

    /// The queues no skb is on at any moment of the run, between events included: drawn
    /// empty all along (the playground's presentation mode leaves them out). In the state's
    /// order; none when the events do not replay (the core's tests rule that out).
    pub fn idle_queues(&self) -> Vec<&str> {
        let Some(first) = self.steps.first() else {
            return Vec::new();
        };
        let names: Vec<&str> = first.state.queues.iter().map(|q| q.name.as_str()).collect();
        let mut busy = vec![false; names.len()];
        let mut state = empty_like(&first.state);
        for e in self.steps.iter().flat_map(|s| &s.events) {
            if state.apply(e).is_err() {
                return Vec::new();
            }
            for q in state.queues.iter().filter(|q| !q.skbs.is_empty()) {
                if let Some(i) = names.iter().position(|n| *n == q.name) {
                    busy[i] = true;
                }
            }
        }
        (names.into_iter().zip(busy))
            .filter_map(|(n, b)| (!b).then_some(n))
            .collect()
    }

    /// Replays every step's events from the state before it (the empty state before the
    /// first) and checks that they give the step's state: the events are a complete log.
    pub fn check_replay(&self) -> Result<(), Error> {
        let mut state = match self.steps.first() {
            Some(s) => empty_like(&s.state),
            None => return Ok(()),
        };
        for (n, step) in self.steps.iter().enumerate() {
            for e in &step.events {
                state.apply(e)?;
            }
            if state != step.state {
                return Err(Error::invalid(
                    format!("steps[{n}]"),
                    format!(
                        "replaying its events gives {state:?}, the step says {:?}",
                        step.state
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Naming a run's events after the kernel's functions, and its frees.
impl Trace {
    /// What picks this trace's rows beside its mechanism and era.
    pub fn flow(&self) -> Flow {
        Flow {
            udp: self.udp,
            napi_frags: self.napi_frags,
        }
    }

    /// The kernel function `e`, an event of this trace, stands for.
    pub fn kernel_fn(&self, e: &Event) -> Option<KernelFn> {
        kernel_fn(&self.mechanism, self.era, self.flow(), e)
    }

    /// How the kernel reaches `e`'s function, where the path was read: `e` an event of
    /// step `step` (0-based), whose op picks the path where two ops reach it two ways.
    pub fn call_path(&self, step: usize, e: &Event) -> Option<CallPath> {
        call_path(
            &self.mechanism,
            self.era,
            self.flow(),
            self.op_name(step),
            e,
        )
    }

    /// Why `e`, an event of step `step`, has no call path, where its row is a known gap.
    pub fn call_gap(&self, step: usize, e: &Event) -> Option<&'static Gap> {
        gap(
            &self.mechanism,
            self.era,
            self.flow(),
            self.op_name(step),
            e,
        )
    }

    fn op_name(&self, step: usize) -> &str {
        self.steps.get(step).map_or("", |s| &s.name)
    }

    /// What the first `events` events of step `step` (0-based) freed, grouped by kind, CPU
    /// and kernel function, in the order of each group's first free. Out of range: nothing.
    pub fn freed(&self, step: usize, events: usize) -> Vec<Freed> {
        let list = self.steps.get(step).map_or(&[][..], |s| &s.events);
        let mut out: Vec<Freed> = Vec::new();
        for e in list.iter().take(events) {
            let Some((what, id, cpu)) = Freed::of(e) else {
                continue;
            };
            let by = self.kernel_fn(e);
            match (out.iter_mut()).find(|f| (f.what, f.cpu, f.by) == (what, cpu, by)) {
                // Kept in order as they come (a sort costs the playground's bundle a kilobyte).
                Some(f) => f.ids.insert(f.ids.partition_point(|&i| i < id), id),
                None => out.push(Freed {
                    what,
                    ids: vec![id],
                    cpu,
                    by,
                }),
            }
        }
        out
    }

    /// The CPU that freed skb (or page) `id` among the first `events` events of step `step`.
    pub fn freed_on(&self, step: usize, events: usize, what: Freeable, id: u32) -> Option<Cpu> {
        let list = self.steps.get(step).map_or(&[][..], |s| &s.events);
        (list.iter().take(events))
            .filter_map(Freed::of)
            .find(|&(w, i, _)| (w, i) == (what, id))
            .map(|(_, _, cpu)| cpu)
    }
}

impl State {
    /// Every object the diagram of this state draws, in drawing order: each skb on a queue or
    /// chained on one, then its frags, then the live pages. What a learner can pick.
    pub fn drawn(&self) -> Vec<Value> {
        let skbs = self
            .queues
            .iter()
            .flat_map(|q| &q.skbs)
            .flat_map(|b| std::iter::once(b).chain(&b.frag_list));
        let mut out = Vec::new();
        for b in skbs {
            out.push(Value::Skb(b.id));
            out.extend((0..b.frags.len() as u32).map(|idx| Value::Frag { skb: b.id, idx }));
        }
        out.extend(self.pages.iter().map(|p| Value::Page(p.id)));
        out
    }

    /// The objects drawn of `answer`'s kind (skbs, frags or pages), in drawing order: what a
    /// pick question's answer is among.
    pub fn alike(&self, answer: Value) -> Vec<Value> {
        let kind = std::mem::discriminant(&answer);
        let mut drawn = self.drawn();
        drawn.retain(|v| std::mem::discriminant(v) == kind);
        drawn
    }

    /// Whether the diagram of this state draws `v` (see [`State::drawn`]).
    pub fn draws(&self, v: Value) -> bool {
        v.is_object() && self.drawn().contains(&v)
    }
}
