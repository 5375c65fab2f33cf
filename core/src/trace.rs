//! The trace: the one format every host renders (terminal, browser, wasmtime, TAP).
//!
//! A run of a scenario gives one [`Step`] per operation: the kernel-level [`Event`]s the
//! operation caused, the full [`State`] after it and the cumulative [`Counters`]. With tracing
//! off (benchmarks) only the final counters are kept.
//!
//! The methods that read a trace through higher layers (replay, kernel functions, what a
//! diagram draws) are in [`crate::trace_read`]; a state's replay is [`crate::replay`]'s.

pub use crate::counters::Counters;
use crate::events::PageId;
pub use crate::events::{Event, Events};
use crate::page::Page;
pub use crate::page_frag::Cursor;
use crate::skb::Skb;
use crate::Error;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// A named list of skbs: a write queue, a receive queue, a backlog, a GRO list, a cache slot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queue {
    pub name: String,
    /// Front first; a receive queue is read from the front while frames join at the back.
    pub skbs: VecDeque<Skb>,
}

/// The whole model state after a step.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub queues: Vec<Queue>,
    /// Live pages in id order. A deque, as pages go the way skbs do: a long receive queue
    /// purged or read from its front frees its oldest pages first, each then O(1), where a
    /// vector would move every younger page down (quadratic over a million frames).
    pub pages: VecDeque<Page>,
    pub cursors: Vec<Cursor>,
    /// MPTCP data fragments (`struct mptcp_data_frag`) in data-sequence order.
    /// A deque: acknowledged dfrags leave from the front, each then O(1).
    #[serde(default, skip_serializing_if = "VecDeque::is_empty")]
    pub dfrags: VecDeque<Dfrag>,
    /// Skbs on no list for a moment: a driver's skb before GRO or the socket takes it, an
    /// skb unlinked to be freed. Only a replay between events sees any ([`State::apply`]);
    /// a step's state never holds one.
    #[serde(default, skip_serializing_if = "VecDeque::is_empty")]
    pub in_flight: VecDeque<Skb>,
    /// The linear copies a device without scatter-gather is given: the clone
    /// `tcp_transmit_skb` hands to `dev_queue_xmit`, linearized there (`skb_linearize`,
    /// v2.6.33) before the driver sees it. One lives from its skb's `linearize` event to its
    /// `xmit`; the driver frees it after transmission, so a step's state never holds one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub linearized: Vec<Linearized>,
}

/// A linearized clone of write-queue skb `skb`: a new head of `head_bytes` holding the
/// `copied` frag bytes (for a GSO skb, software GSO's linear segments, `head_bytes` in all).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Linearized {
    pub skb: crate::skb::SkbId,
    pub head_bytes: u32,
    pub copied: u32,
}

/// Queue names, shared by the mechanisms that build the state and the replay that moves skbs
/// between queues.
///
/// A name an event carries is a static string wherever the model can have the queue (each
/// CPU's, each subflow's), so emitting the event allocates nothing.
pub mod queue {
    use crate::Cpu;
    use std::borrow::Cow;
    pub const WRITE_QUEUE: &str = "write_queue";
    pub const SK_RECEIVE_QUEUE: &str = "sk_receive_queue";
    pub const SK_BACKLOG: &str = "sk_backlog";
    pub const SK_RX_SKB_CACHE: &str = "sk_rx_skb_cache";
    const GRO: [&str; crate::NR_CPUS] = ["gro cpu0", "gro cpu1"];
    const DEFER_LIST: [&str; crate::NR_CPUS] = ["defer_list cpu0", "defer_list cpu1"];
    /// As many as a scenario may have (`mptcp::MAX_SUBFLOWS`).
    const SUBFLOW: [&str; 8] = [
        "subflow 0",
        "subflow 1",
        "subflow 2",
        "subflow 3",
        "subflow 4",
        "subflow 5",
        "subflow 6",
        "subflow 7",
    ];

    fn named(table: &[&'static str], i: usize, name: impl FnOnce() -> String) -> Cow<'static, str> {
        table.get(i).map_or_else(|| name().into(), |&n| n.into())
    }

    /// The skb GRO holds on `cpu`.
    pub fn gro(cpu: Cpu) -> Cow<'static, str> {
        named(&GRO, cpu as usize, || format!("gro cpu{cpu}"))
    }
    /// softnet_data.defer_list of `cpu`.
    pub fn defer_list(cpu: Cpu) -> Cow<'static, str> {
        named(&DEFER_LIST, cpu as usize, || format!("defer_list cpu{cpu}"))
    }
    /// MPTCP subflow `id`'s write queue.
    pub fn subflow(id: u32) -> Cow<'static, str> {
        named(&SUBFLOW, id as usize, || format!("subflow {id}"))
    }
    /// Whether `name` is [`subflow`]`(id)`, without building the name.
    pub fn is_subflow(name: &str, id: u32) -> bool {
        name.strip_prefix("subflow ")
            .is_some_and(|n| n.parse() == Ok(id))
    }
}

/// An MPTCP data fragment: user data at `offset` in `page`, `already_sent` of it pushed to
/// subflows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dfrag {
    pub data_seq: u64,
    pub page: PageId,
    pub offset: u32,
    pub data_len: u32,
    pub already_sent: u32,
}

/// One operation of the scenario and what it did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The operation, in words ("sendmsg 4096 bytes").
    pub op: String,
    /// The operation's name as a scenario writes it (`ack`), which picks the kernel's path to
    /// an event where the path depends on it ([`crate::call_path`]); empty in a capture's step.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    pub events: Vec<Event>,
    pub state: State,
    pub counters: Counters,
}

/// A whole run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trace {
    pub mechanism: String,
    pub variant: String,
    pub era: crate::consts::Era,
    /// The flow is UDP (rx's `socket.proto = "udp"`): its socket's kernel functions are
    /// UDP's (`udp_recvmsg`, not `tcp_recvmsg`). sendmsg and MPTCP are TCP.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub udp: bool,
    /// The frames come through tun's IFF_NAPI_FRAGS path (rx's `nic.driver =
    /// "napi-frags"`): the driver's kernel functions are tun's and `napi_gro_frags`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub napi_frags: bool,
    pub consts: crate::consts::KernelConsts,
    /// Empty when tracing is off.
    pub steps: Vec<Step>,
    /// The final counters.
    pub counters: Counters,
}

/// A mechanism's state machine: applies one operation at a time.
pub trait Machine {
    type Op;
    /// Applies `op`, the scenario's `ops[at]` (errors name it so).
    fn apply(&mut self, op: &Self::Op, at: usize, ev: &mut Events) -> Result<(), Error>;
    /// The operation, in words, for the trace.
    fn describe(&self, op: &Self::Op) -> String;
    /// The operation's name, as a scenario writes it.
    fn name(op: &Self::Op) -> &'static str;
    fn state(&self) -> State;
    fn counters(&self) -> Counters;
}

/// Runs `ops` through `m`, recording a step per op when `tracing`.
pub fn drive<M: Machine>(
    m: &mut M,
    ops: &[M::Op],
    tracing: bool,
) -> Result<(Vec<Step>, Counters), Error> {
    let mut ev = if tracing { Events::on() } else { Events::off() };
    let mut steps = Vec::with_capacity(if tracing { ops.len() } else { 0 });
    let mut size = 0;
    for (i, op) in ops.iter().enumerate() {
        ev.limit(MAX_TRACE_OBJECTS - size);
        m.apply(op, i, &mut ev)?;
        if tracing {
            let step = Step {
                op: m.describe(op),
                name: M::name(op).into(),
                events: ev.take(),
                state: m.state(),
                counters: m.counters(),
            };
            size += step.size();
            if size > MAX_TRACE_OBJECTS || ev.overflowed() {
                return Err(Error::Range {
                    field: "ops".into(),
                    value: format!("a trace of over {MAX_TRACE_OBJECTS} events, skbs, frags and pages by ops[{i}]"),
                    allowed: format!("at most {MAX_TRACE_OBJECTS} in a traced run: shorten the scenario, or run it counters-only"),
                });
            }
            steps.push(step);
        }
    }
    Ok((steps, m.counters()))
}

pub use crate::limits::MAX_TRACE_OBJECTS;

impl Step {
    /// The number of objects this step holds (what [`MAX_TRACE_OBJECTS`] counts).
    pub fn size(&self) -> usize {
        let skbs: usize = self
            .state
            .queues
            .iter()
            .flat_map(|q| &q.skbs)
            .map(Skb::objects)
            .sum();
        self.events.len() + skbs + self.state.pages.len() + self.state.dfrags.len()
    }
}

#[cfg(test)]
mod queue_tests {
    use super::queue;
    use std::borrow::Cow;

    /// The static names are the names the pattern gives, and past the tables the pattern
    /// still names the queue.
    #[test]
    fn queue_names_are_static_where_the_model_has_the_queue() {
        for cpu in 0..3u8 {
            let static_ = usize::from(cpu) < crate::NR_CPUS;
            for (name, want) in [
                (queue::gro(cpu), format!("gro cpu{cpu}")),
                (queue::defer_list(cpu), format!("defer_list cpu{cpu}")),
            ] {
                assert_eq!(
                    (matches!(name, Cow::Borrowed(_)), &*name),
                    (static_, &*want)
                );
            }
        }
        for id in 0..9u32 {
            let name = queue::subflow(id);
            assert_eq!(matches!(name, Cow::Borrowed(_)), id < 8);
            assert_eq!(name, format!("subflow {id}"));
        }
    }
}

#[cfg(test)]
mod page_tests {
    use super::*;

    fn page(id: PageId, count: u32) -> Page {
        Page {
            id,
            order: 0,
            size: 4096,
            count,
            cpu: 0,
            cpu_unread: false,
            used: 0,
        }
    }

    /// A page put back in any order lands in its id's place, and every reader finds it there.
    #[test]
    fn pages_keep_id_order() {
        let mut s = State::default();
        for id in [4, 1, 3, 7, 2] {
            s.insert_page(page(id, 1));
        }
        let ids: Vec<_> = s.pages.iter().map(|p| p.id).collect();
        assert_eq!(ids, [1, 2, 3, 4, 7]);
        assert_eq!(s.page_slot(3), Ok(2));
        assert_eq!(s.page_slot(5), Err(4));
        assert_eq!(s.find_page(7).map(|p| p.id), Some(7));
    }

    #[test]
    fn frags_out_is_the_count_less_the_bias_on_the_cursors_page_only() {
        let c = Cursor {
            name: "netdev_alloc_cache cpu0".into(),
            page: Some(3),
            offset: 1920,
            size: 4096,
            bias: Some(62),
        };
        assert_eq!(c.frags_out(&page(3, 64)), Some(2));
        assert_eq!(c.frags_out(&page(4, 64)), None, "another page");
        let unbiased = Cursor { bias: None, ..c };
        assert_eq!(
            unbiased.frags_out(&page(3, 64)),
            None,
            "an era with no bias"
        );
    }
}

#[cfg(test)]
mod idle_tests {
    /// The page-reuse scenario (seed 001) draws every rx queue, most empty all along; an skb
    /// passing through a queue between two steps (read after every poll) makes it busy.
    #[test]
    fn idle_queues_never_hold_an_skb() {
        let text = include_str!("../../scenarios/rx-page-reuse.toml");
        let t = crate::run_text(text, &Default::default()).unwrap();
        let idle = t.idle_queues();
        let all = t.steps[0].state.queues.len();
        assert!(!idle.is_empty() && idle.len() < all, "{idle:?} of {all}");
        for (i, s) in t.steps.iter().enumerate() {
            for k in 0..=s.events.len() {
                for q in t.state_at(i, k).unwrap().queues {
                    if !q.skbs.is_empty() {
                        assert!(!idle.contains(&q.name.as_str()), "{} holds an skb", q.name);
                    }
                }
            }
        }
        assert!(idle.contains(&"sk_backlog"), "{idle:?}");
    }
}
