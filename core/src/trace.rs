//! The trace: the one format every host renders (terminal, browser, wasmtime, TAP).
//!
//! A run of a scenario gives one [`Step`] per operation: the kernel-level [`Event`]s the
//! operation caused, the full [`State`] after it and the cumulative [`Counters`]. With tracing
//! off (benchmarks) only the final counters are kept.

use crate::page::{Page, PageId};
use crate::skb::{Skb, SkbId};
use crate::{Cpu, Error};
use serde::{Deserialize, Serialize};

/// What the kernel did, in the kernel's own words. Sizes are bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "ev", rename_all = "snake_case")]
pub enum Event {
    // -- pages (all mechanisms) --
    AllocPage {
        page: PageId,
        order: u32,
        cpu: Cpu,
        /// Bytes in the page (`PAGE_SIZE << order`).
        #[serde(default)]
        size: u32,
        /// The page refills `cpu`'s page-frag cursor, whose offset starts here.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cursor: Option<u32>,
        /// v6.12 `pagecnt_bias`: the cursor took its references in advance (`page_ref_add`),
        /// so the page's count is this bias.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bias: Option<u32>,
    },
    GetPage {
        page: PageId,
        count: u32,
    },
    PutPage {
        page: PageId,
        cpu: Cpu,
        count: u32,
        /// The reference was a page-frag cursor's own: the cursor lets go of the page.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        release: bool,
    },
    FreePage {
        page: PageId,
        cpu: Cpu,
    },
    /// An allocator starts over at the beginning of a page it still holds.
    ReusePage {
        page: PageId,
        /// The cursor's offset after it starts over (0, or the page size when it counts down).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cursor: Option<u32>,
        /// v6.12: the count and `pagecnt_bias` are reset to this (`set_page_count`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bias: Option<u32>,
    },
    // -- skbs (all mechanisms) --
    /// An skb allocated with `headroom` reserved and `linear_room` for data; it starts at
    /// `seq`, is charged `truesize` and goes on `queue` (none: a driver is still building it).
    AllocSkb {
        skb: SkbId,
        cpu: Cpu,
        head_bytes: u32,
        headroom: u32,
        linear_room: u32,
        #[serde(default)]
        seq: u32,
        #[serde(default)]
        truesize: u32,
        /// `skb->reserved_tailroom`: tailroom beyond `linear_room` that no data may use.
        #[serde(default, skip_serializing_if = "is_zero")]
        reserved_tailroom: u32,
        /// The head lives at `head_offset` of page `head_page` (build_skb, `head_frag`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        head_page: Option<PageId>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        head_offset: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        queue: Option<String>,
    },
    FreeSkb {
        skb: SkbId,
        cpu: Cpu,
    },
    CopyToLinear {
        skb: SkbId,
        bytes: u32,
    },
    CopyToPage {
        skb: SkbId,
        page: PageId,
        offset: u32,
        bytes: u32,
    },
    /// Frag slot `idx` of `skb` now holds `size` bytes at `offset` of `page`; the skb is
    /// charged `truesize` in all.
    NewFrag {
        skb: SkbId,
        idx: u32,
        page: PageId,
        offset: u32,
        size: u32,
        #[serde(default)]
        truesize: u32,
    },
    /// Frag slot `idx` (the last) grew by `bytes`; the skb is charged `truesize` in all.
    Coalesce {
        skb: SkbId,
        idx: u32,
        bytes: u32,
        #[serde(default)]
        truesize: u32,
    },
    MarkPsh {
        skb: SkbId,
    },
    ClearPsh {
        skb: SkbId,
    },
    // -- send side (tcp_sendmsg, transmit) --
    /// `tcp_push` / `__tcp_push_pending_frames` / `tcp_push_one` on `skb`: `forced` when more
    /// than half the peer's max window went unpushed (forced_push), else the end of the call
    /// or a full send head.
    Push {
        skb: SkbId,
        forced: bool,
    },
    /// A non-SG device and an skb with frags: `skb_linearize` allocates a new head of
    /// `head_bytes` and pulls the `copied` frag bytes into it (for a GSO skb, software GSO's
    /// `skb_segment` copies them into one new linear skb per segment, `head_bytes` in all).
    Linearize {
        skb: SkbId,
        head_bytes: u32,
        copied: u32,
    },
    /// An skb handed to the device (`tcp_transmit_skb` -> `dev_queue_xmit`).
    Xmit {
        skb: SkbId,
        seq: u32,
        len: u32,
        gso_segs: u32,
        linearized: bool,
    },
    /// One segment on the wire (GSO/TSO cuts a super-packet into MSS-sized ones).
    Segment {
        seq: u32,
        len: u32,
        psh: bool,
    },
    /// The peer acknowledged everything before `snd_una`.
    Ack {
        snd_una: u32,
    },
    // -- receive side --
    /// net_rx_action ran one NAPI poll on `cpu`: `frames` frames out of a `budget`.
    NapiPoll {
        cpu: Cpu,
        frames: u32,
        budget: u32,
    },
    /// A frame of `len` bytes on the wire became `skb`; its payload starts at `seq`. Its
    /// `headers` are pulled; `linear` payload bytes stay in the head (the rest is in frags).
    RxFrame {
        skb: SkbId,
        len: u32,
        seq: u32,
        #[serde(default)]
        headers: u32,
        #[serde(default)]
        linear: u32,
    },
    /// A receive frag cache handed out `size` bytes at `offset` of `page`
    /// (netdev_alloc_frag / page_frag_alloc); its cursor is now at `cursor` (and, v6.12,
    /// its `pagecnt_bias` is `bias`).
    FragAlloc {
        cpu: Cpu,
        page: PageId,
        offset: u32,
        size: u32,
        #[serde(default)]
        cursor: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bias: Option<u32>,
    },
    /// A receive frag cache let go of its page; `count` references remain (its fragments).
    FragCacheRelease {
        cpu: Cpu,
        page: PageId,
        count: u32,
    },
    /// GRO merged `skb` into `into`; `stolen_head`: its head page became a frag of `into`.
    /// `into` is charged `delta_truesize` more (what skb_gro_receive moves).
    GroMerge {
        skb: SkbId,
        into: SkbId,
        stolen_head: bool,
        #[serde(default)]
        delta_truesize: u32,
    },
    /// GRO chained `skb`, head and all, on the frag_list of `into` (v3.19+).
    GroChain {
        skb: SkbId,
        into: SkbId,
    },
    /// GRO passed `skb` (made of `segs` segments) up the stack.
    GroFlush {
        skb: SkbId,
        segs: u32,
    },
    /// tcp_v4_rcv on `cpu` queued `skb` on the socket's receive queue.
    QueueRcv {
        skb: SkbId,
        cpu: Cpu,
    },
    /// The user owned the socket: `skb` went to the backlog (tcp_add_backlog).
    BacklogAdd {
        skb: SkbId,
        cpu: Cpu,
    },
    /// release_sock on `cpu` processed `skb` from the backlog.
    BacklogProcess {
        skb: SkbId,
        cpu: Cpu,
    },
    /// No socket (closed): `skb` was dropped on `cpu`.
    RxDrop {
        skb: SkbId,
        cpu: Cpu,
    },
    /// recvmsg on `cpu` copied `bytes` of `skb` to user space.
    CopyToUser {
        skb: SkbId,
        cpu: Cpu,
        bytes: u32,
    },
    /// sk_eat_skb parked the consumed `skb` in sk_rx_skb_cache (seed 002).
    RxCachePark {
        skb: SkbId,
    },
    /// tcp_v4_rcv on `cpu` took `skb` out of sk_rx_skb_cache, to free it after unlocking.
    RxCacheTake {
        skb: SkbId,
        cpu: Cpu,
    },
    /// skb_attempt_defer_free on `cpu` queued `skb` on `to_cpu`'s defer list.
    DeferFree {
        skb: SkbId,
        cpu: Cpu,
        to_cpu: Cpu,
    },
    /// skb_attempt_defer_free found the list half full and kicked `cpu` (an IPI).
    DeferKick {
        cpu: Cpu,
    },
    /// skb_defer_free_flush on `cpu` freed `skbs` deferred skbs.
    DeferFlush {
        cpu: Cpu,
        skbs: u32,
    },
    // -- MPTCP --
    /// mptcp_carve_data_frag: a dfrag header (`overhead` bytes incl. alignment) is carved at
    /// `offset` of the socket's page frag; its data starts right after it.
    CarveDfrag {
        data_seq: u64,
        page: PageId,
        offset: u32,
        overhead: u32,
    },
    /// mptcp_sendmsg copied user bytes into a dfrag.
    CopyToDfrag {
        data_seq: u64,
        page: PageId,
        offset: u32,
        bytes: u32,
    },
    /// mptcp_subflow_get_send picked a subflow.
    PickSubflow {
        subflow: u32,
    },
    /// mptcp_sendmsg_frag decided: `goal` is what it passes to tcp_build_frag.
    SendmsgFrag {
        subflow: u32,
        data_seq: u64,
        size_goal: u32,
        tail_len: Option<u32>,
        can_collapse: bool,
        goal: u32,
    },
    /// The tail may not grow any more (TCP_SKB_CB(skb)->eor).
    MarkEor {
        skb: SkbId,
    },
    /// A DSS mapping on a new skb.
    NewMapping {
        skb: SkbId,
        data_seq: u64,
        subflow_seq: u32,
        data_len: u32,
    },
    /// Collapsing really happened: the tail's mapping grew.
    ExtendMapping {
        skb: SkbId,
        data_len: u32,
    },
    /// The subflow handed its unsent skbs to the device.
    SubflowXmit {
        subflow: u32,
        skbs: u32,
        bytes: u64,
    },
    /// A dfrag fully acknowledged at the data level was dropped (dfrag_clear), or, with
    /// `trim`, only its first `trim` bytes were acknowledged and cut off.
    ClearDfrag {
        data_seq: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trim: Option<u32>,
    },
}

/// Collects events when tracing is on; costs nothing when it is off.
#[derive(Debug, Default)]
pub struct Events {
    on: bool,
    list: Vec<Event>,
    /// At most this many events are kept; past it [`Events::overflowed`] says so. One op
    /// with a large `count` must not build millions of events before the trace cap refuses
    /// them.
    room: usize,
    overflowed: bool,
}

impl Events {
    pub fn on() -> Events {
        Events {
            on: true,
            room: usize::MAX,
            ..Events::default()
        }
    }

    pub fn off() -> Events {
        Events::default()
    }

    /// Records the event `f` builds, only if tracing is on and there is room.
    #[inline]
    pub fn emit(&mut self, f: impl FnOnce() -> Event) {
        if self.on {
            if self.list.len() < self.room {
                self.list.push(f());
            } else {
                self.overflowed = true;
            }
        }
    }

    /// Keeps at most `room` events from now on.
    pub fn limit(&mut self, room: usize) {
        self.room = room;
    }

    /// Whether an event was dropped for want of room.
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    pub fn is_on(&self) -> bool {
        self.on
    }

    pub fn take(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.list)
    }
}

/// A named list of skbs: a write queue, a receive queue, a backlog, a GRO list, a cache slot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Queue {
    pub name: String,
    pub skbs: Vec<Skb>,
}

/// A page-frag allocator's cursor: the socket's TCP_PAGE/TCP_OFF, `sk_page_frag`, or a CPU's
/// netdev_alloc_cache.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cursor {
    pub name: String,
    pub page: Option<PageId>,
    pub offset: u32,
    /// Bytes in the page (`pfrag->size`), 0 when there is no page.
    pub size: u32,
    /// page_frag_cache's pagecnt_bias (references taken in advance), where the era has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bias: Option<u32>,
}

/// The whole model state after a step.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub queues: Vec<Queue>,
    pub pages: Vec<Page>,
    pub cursors: Vec<Cursor>,
    /// MPTCP data fragments (`struct mptcp_data_frag`) in data-sequence order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dfrags: Vec<Dfrag>,
    /// Skbs on no list for a moment: a driver's skb before GRO or the socket takes it, an
    /// skb unlinked to be freed. Only a replay between events sees any ([`State::apply`]);
    /// a step's state never holds one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_flight: Vec<Skb>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Queue names, shared by the mechanisms that build the state and the replay that moves skbs
/// between queues.
pub mod queue {
    use crate::Cpu;
    pub const WRITE_QUEUE: &str = "write_queue";
    pub const SK_RECEIVE_QUEUE: &str = "sk_receive_queue";
    pub const SK_BACKLOG: &str = "sk_backlog";
    pub const SK_RX_SKB_CACHE: &str = "sk_rx_skb_cache";
    /// The skb GRO holds on `cpu`.
    pub fn gro(cpu: Cpu) -> String {
        format!("gro cpu{cpu}")
    }
    /// softnet_data.defer_list of `cpu`.
    pub fn defer_list(cpu: Cpu) -> String {
        format!("defer_list cpu{cpu}")
    }
    /// MPTCP subflow `id`'s write queue.
    pub fn subflow(id: u32) -> String {
        format!("subflow {id}")
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

/// Named counters in the mechanism's chosen order; serialized as a JSON/TOML map.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters(pub Vec<(String, u64)>);

impl Counters {
    pub fn with(mut self, name: &str, value: u64) -> Self {
        self.0.push((name.to_string(), value));
        self
    }

    pub fn get(&self, name: &str) -> Option<u64> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|(n, _)| n.as_str())
    }
}

impl Serialize for Counters {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

impl<'de> Deserialize<'de> for Counters {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Counters;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map of counter names to numbers")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<Counters, A::Error> {
                let mut c = Counters::default();
                while let Some((k, v)) = m.next_entry::<String, u64>()? {
                    c.0.push((k, v));
                }
                Ok(c)
            }
        }
        d.deserialize_map(V)
    }
}

/// One operation of the scenario and what it did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// The operation, in words ("sendmsg 4096 bytes").
    pub op: String,
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

/// A traced run keeps a full state per step, so its size grows with steps x state. This caps
/// the events, skbs, frags and pages summed over all steps (a browser tab must never freeze).
pub const MAX_TRACE_OBJECTS: usize = 250_000;

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
mod tests {
    use super::*;

    #[test]
    fn events_past_the_limit_are_dropped_and_flagged() {
        let mut ev = Events::on();
        ev.limit(2);
        for cpu in 0..3 {
            ev.emit(|| Event::DeferKick { cpu });
        }
        assert!(ev.overflowed());
        assert_eq!(ev.take().len(), 2);
        let mut off = Events::off();
        off.emit(|| Event::DeferKick { cpu: 0 });
        assert!(!off.overflowed() && off.take().is_empty());
    }
}
