//! What the kernel did: the [`Event`]s a mechanism emits as it runs, the ids they name
//! ([`PageId`], [`SkbId`], [`Cpu`]) and [`Events`], the sink that collects them.
//!
//! The bottom layer of the core: pages, skbs, every mechanism and the trace use it; it uses
//! nothing of theirs. Facts about an event kind (its name, how it prints) live beside it.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A CPU number. The receive side models two CPUs (BH and application).
pub type Cpu = u8;
/// A page's id: ids grow monotonically and are never reused, so "page 3" is unambiguous.
pub type PageId = u32;
/// An skb's id, unique within a run.
pub type SkbId = u32;

/// Declares [`Event`] and [`EventKind`] from one list, each variant written `Name = "name"`:
/// the name is the trace's `ev` tag, [`EventKind::name`] and what an event prints first, so
/// a kind is named in one place, and a table keyed by [`EventKind`] cannot keep a row for a
/// kind that no longer exists.
macro_rules! events {
    (
        $(#[$m:meta])*
        pub enum Event {
            $($(#[$vm:meta])* $v:ident = $name:literal { $($fields:tt)* }),* $(,)?
        }
    ) => {
        $(#[$m])*
        pub enum Event {
            $($(#[$vm])* #[serde(rename = $name)] $v { $($fields)* },)*
        }

        /// What kind of [`Event`] an event is, without its fields.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum EventKind {
            $($v),*
        }

        crate::names::names!(EventKind, "event", { $($v => $name),* });

        impl Event {
            /// The event's kind; its name is the trace's `ev` tag.
            pub fn kind(&self) -> EventKind {
                match self {
                    $(Event::$v { .. } => EventKind::$v),*
                }
            }
        }
    };
}

events! {
/// What the kernel did, in the kernel's own words. Sizes are bytes.

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "ev")]
pub enum Event {
    // -- pages (all mechanisms) --
    AllocPage = "alloc_page" {
        page: PageId,
        order: u32,
        cpu: Cpu,
        /// Bytes in the page (`PAGE_SIZE << order`).
        #[serde(default)]
        size: u32,
        /// The page refills `cpu`'s page-frag cursor, whose offset starts here.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cursor: Option<u32>,
        /// The cache took its references in advance (v3.6 `atomic_set`, v6.12
        /// `page_ref_add`), so the page's count is this (v3.6, v6.12: its `pagecnt_bias`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bias: Option<u32>,
    },
    GetPage = "get_page" {
        page: PageId,
        count: u32,
    },
    PutPage = "put_page" {
        page: PageId,
        cpu: Cpu,
        count: u32,
        /// The reference was a page-frag cursor's own: the cursor lets go of the page.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        release: bool,
        /// The reference was an skb's head fragment's (`skb_free_head`; v6.12 frees it with
        /// `skb_free_frag`, not `put_page`).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        head: bool,
        /// The cursor's reference dropped as its socket is destroyed (with `release`): 2.6.33
        /// `tcp_v4_destroy_sock` frees TCP_PAGE with `__free_page`, not `put_page`.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        destroy: bool,
    },
    FreePage = "free_page" {
        page: PageId,
        cpu: Cpu,
        /// Freed by the put of an skb's head fragment (v6.12: `page_frag_free`).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        head: bool,
    },
    /// An allocator starts over at the beginning of a page it still holds.
    ReusePage = "reuse_page" {
        page: PageId,
        /// The cursor's offset after it starts over (0, or the page size when it counts down).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cursor: Option<u32>,
        /// v3.6, v6.12: the count and `pagecnt_bias` are reset to this (`atomic_set`,
        /// `set_page_count`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bias: Option<u32>,
    },
    // -- skbs (all mechanisms) --
    /// An skb allocated with `headroom` reserved and `linear_room` for data; it starts at
    /// `seq`, is charged `truesize` and goes on `queue` (none: a driver is still building it).
    AllocSkb = "alloc_skb" {
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
        queue: Option<std::borrow::Cow<'static, str>>,
        /// A send skb's cap: the bytes tcp_sendmsg lets it grow to (`tcp_send_mss`'s
        /// size_goal; 2.6.33 without checksum offload, the MSS), or MPTCP's subflow size_goal.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size_goal: Option<u32>,
    },
    FreeSkb = "free_skb" {
        skb: SkbId,
        cpu: Cpu,
        /// recvmsg freed it once it had read it all (v6.12 UDP: `skb_consume_udp`; v3.5,
        /// v3.6 UDP: `skb_free_datagram_locked`).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        read: bool,
    },
    CopyToLinear = "copy_to_linear" {
        skb: SkbId,
        bytes: u32,
    },
    /// `bytes` copied to `offset` of `page` for `skb`; the socket's page frag (TCP_PAGE and
    /// TCP_OFF, v3.7+ `sk_page_frag`) is on the page at `cursor` after it, or none: 2.6.33
    /// keeps a fresh page only when the copy leaves room (`off + copy < PAGE_SIZE`).
    CopyToPage = "copy_to_page" {
        skb: SkbId,
        page: PageId,
        offset: u32,
        bytes: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cursor: Option<u32>,
    },
    /// Frag slot `idx` of `skb` now holds `size` bytes at `offset` of `page`; the skb is
    /// charged `truesize` in all.
    NewFrag = "new_frag" {
        skb: SkbId,
        idx: u32,
        page: PageId,
        offset: u32,
        size: u32,
        #[serde(default)]
        truesize: u32,
    },
    /// Frag slot `idx` (the last) grew by `bytes`; the skb is charged `truesize` in all.
    Coalesce = "coalesce" {
        skb: SkbId,
        idx: u32,
        bytes: u32,
        #[serde(default)]
        truesize: u32,
    },
    MarkPsh = "mark_psh" {
        skb: SkbId,
    },
    ClearPsh = "clear_psh" {
        skb: SkbId,
    },
    // -- send side (tcp_sendmsg, transmit) --
    /// `tcp_push` / `__tcp_push_pending_frames` / `tcp_push_one` on `skb`: `forced` when more
    /// than half the peer's max window went unpushed (forced_push), else the end of the call
    /// or a full send head.
    Push = "push" {
        skb: SkbId,
        forced: bool,
    },
    /// A non-SG device and an skb with frags: `skb_linearize` allocates a new head of
    /// `head_bytes` and pulls the `copied` frag bytes into it (for a GSO skb, software GSO's
    /// `skb_segment` copies them into one new linear skb per segment, `head_bytes` in all).
    Linearize = "linearize" {
        skb: SkbId,
        head_bytes: u32,
        copied: u32,
    },
    /// An skb handed to the device (`tcp_transmit_skb` -> `dev_queue_xmit`).
    Xmit = "xmit" {
        skb: SkbId,
        seq: u32,
        len: u32,
        gso_segs: u32,
        linearized: bool,
    },
    /// One segment on the wire (GSO/TSO cuts a super-packet into MSS-sized ones).
    Segment = "segment" {
        seq: u32,
        len: u32,
        psh: bool,
    },
    /// The peer acknowledged everything before `snd_una`.
    Ack = "ack" {
        snd_una: u32,
    },
    // -- receive side --
    /// net_rx_action ran one NAPI poll on `cpu`: `frames` frames out of a `budget`.
    NapiPoll = "napi_poll" {
        cpu: Cpu,
        frames: u32,
        budget: u32,
    },
    /// A frame of `len` bytes on the wire became `skb`; its payload starts at `seq`. Its
    /// `headers` are pulled; `linear` payload bytes stay in the head (the rest is in frags).
    RxFrame = "rx_frame" {
        skb: SkbId,
        len: u32,
        seq: u32,
        #[serde(default)]
        headers: u32,
        #[serde(default)]
        linear: u32,
    },
    /// A receive frag cache handed out `size` bytes at `offset` of `page`
    /// (netdev_alloc_frag / page_frag_alloc); its cursor is now at `cursor` (and, v3.6 and
    /// v6.12, its `pagecnt_bias` is `bias`).
    FragAlloc = "frag_alloc" {
        cpu: Cpu,
        page: PageId,
        offset: u32,
        size: u32,
        #[serde(default)]
        cursor: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bias: Option<u32>,
    },
    /// v6.12's 1 KiB small-head cache (`page_frag_alloc_1k`) handed out `size` (1024) bytes
    /// at `offset` of `page`; it still holds `bias` references for the pieces to come
    /// (`offset / size`), or none: it let go of the page with its last piece (offset 0).
    FragAlloc1k = "frag_alloc_1k" {
        cpu: Cpu,
        page: PageId,
        offset: u32,
        size: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bias: Option<u32>,
    },
    /// A receive frag cache let go of its page; `count` references remain (its fragments).
    FragCacheRelease = "frag_cache_release" {
        cpu: Cpu,
        page: PageId,
        count: u32,
    },
    /// GRO merged `skb` into `into`; `stolen_head`: its head page became a frag of `into`.
    /// `into` is charged `delta_truesize` more (what skb_gro_receive moves).
    GroMerge = "gro_merge" {
        skb: SkbId,
        into: SkbId,
        stolen_head: bool,
        #[serde(default)]
        delta_truesize: u32,
    },
    /// GRO chained `skb`, head and all, on the frag_list of `into` (v3.19+).
    GroChain = "gro_chain" {
        skb: SkbId,
        into: SkbId,
    },
    /// GRO passed `skb` (made of `segs` segments) up the stack.
    GroFlush = "gro_flush" {
        skb: SkbId,
        segs: u32,
    },
    /// tcp_v4_rcv on `cpu` queued `skb` on the socket's receive queue.
    QueueRcv = "queue_rcv" {
        skb: SkbId,
        cpu: Cpu,
    },
    /// tcp_queue_rcv on `cpu` merged `skb` into `into`, the receive queue's tail
    /// (tcp_try_coalesce -> skb_try_coalesce): its bytes copied into the tailroom
    /// (`copied`), or its frags moved and, with `stolen_head`, its page-fragment head made a
    /// frag; `into` is charged `delta_truesize` more. `kfree_skb_partial` frees the rest.
    RcvCoalesce = "rcv_coalesce" {
        skb: SkbId,
        into: SkbId,
        cpu: Cpu,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        copied: bool,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        stolen_head: bool,
        #[serde(default)]
        delta_truesize: u32,
    },
    /// The user owned the socket: `skb` went to the backlog (tcp_add_backlog).
    BacklogAdd = "backlog_add" {
        skb: SkbId,
        cpu: Cpu,
    },
    /// release_sock on `cpu` processed `skb` from the backlog.
    BacklogProcess = "backlog_process" {
        skb: SkbId,
        cpu: Cpu,
    },
    /// No socket (closed): `skb` was dropped on `cpu`.
    RxDrop = "rx_drop" {
        skb: SkbId,
        cpu: Cpu,
    },
    /// recvmsg on `cpu` copied `bytes` of `skb` to user space.
    CopyToUser = "copy_to_user" {
        skb: SkbId,
        cpu: Cpu,
        bytes: u32,
    },
    /// sk_eat_skb parked the consumed `skb` in sk_rx_skb_cache (seed 002).
    RxCachePark = "rx_cache_park" {
        skb: SkbId,
    },
    /// tcp_v4_rcv on `cpu` took `skb` out of sk_rx_skb_cache, to free it after unlocking.
    RxCacheTake = "rx_cache_take" {
        skb: SkbId,
        cpu: Cpu,
    },
    /// skb_attempt_defer_free on `cpu` queued `skb` on `to_cpu`'s defer list.
    DeferFree = "defer_free" {
        skb: SkbId,
        cpu: Cpu,
        to_cpu: Cpu,
    },
    /// skb_attempt_defer_free found the list half full and kicked `cpu` (an IPI).
    DeferKick = "defer_kick" {
        cpu: Cpu,
    },
    /// skb_defer_free_flush on `cpu` freed `skbs` deferred skbs.
    DeferFlush = "defer_flush" {
        cpu: Cpu,
        skbs: u32,
    },
    // -- MPTCP --
    /// mptcp_carve_data_frag: a dfrag header (`overhead` bytes incl. alignment) is carved at
    /// `offset` of the socket's page frag; its data starts right after it.
    CarveDfrag = "carve_dfrag" {
        data_seq: u64,
        page: PageId,
        offset: u32,
        overhead: u32,
    },
    /// mptcp_sendmsg copied user bytes into a dfrag.
    CopyToDfrag = "copy_to_dfrag" {
        data_seq: u64,
        page: PageId,
        offset: u32,
        bytes: u32,
    },
    /// mptcp_subflow_get_send picked a subflow.
    PickSubflow = "pick_subflow" {
        subflow: u32,
    },
    /// mptcp_sendmsg_frag decided: `goal` is what it passes to tcp_build_frag.
    SendmsgFrag = "sendmsg_frag" {
        subflow: u32,
        data_seq: u64,
        size_goal: u32,
        tail_len: Option<u32>,
        can_collapse: bool,
        goal: u32,
    },
    /// The tail may not grow any more (TCP_SKB_CB(skb)->eor).
    MarkEor = "mark_eor" {
        skb: SkbId,
    },
    /// A DSS mapping on a new skb.
    NewMapping = "new_mapping" {
        skb: SkbId,
        data_seq: u64,
        subflow_seq: u32,
        data_len: u32,
    },
    /// Collapsing really happened: the tail's mapping grew.
    ExtendMapping = "extend_mapping" {
        skb: SkbId,
        data_len: u32,
    },
    /// The subflow handed its unsent skbs to the device.
    SubflowXmit = "subflow_xmit" {
        subflow: u32,
        skbs: u32,
        bytes: u64,
    },
    /// A dfrag fully acknowledged at the data level was dropped (dfrag_clear), or, with
    /// `trim`, only its first `trim` bytes were acknowledged and cut off.
    ClearDfrag = "clear_dfrag" {
        data_seq: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        trim: Option<u32>,
    },
    // -- a capture (`skblab trace`): the running kernel's own skbs, as seen --
    // `at` says where each fact comes from: the kernel function, and the tracepoint it
    // was seen at, or that it is inferred and from what (crate::capture::Source).
    /// `skb` first seen: drawn on `queue` (its socket's) from here. `cpu` is the CPU that
    /// allocated it where the capture read that (`allocated`), else the one it was seen on.
    SeenSkb = "seen_skb" {
        skb: SkbId,
        cpu: Cpu,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        allocated: bool,
        queue: String,
        at: String,
    },
    /// `skb` at the device on `cpu`: `len` bytes, `linear` of them in the head (headers
    /// included), the rest in its frags (each a `seen_frag`), charged `truesize`.
    SeenXmit = "seen_xmit" {
        skb: SkbId,
        cpu: Cpu,
        len: u32,
        linear: u32,
        truesize: u32,
        gso_segs: u32,
        seq: u32,
        at: String,
    },
    /// Frag `idx` of `skb`, read at the device: `size` bytes at `offset` of `page` (of
    /// `order`, `page_size` bytes), whose count was `count` then. A page first seen is drawn
    /// with the CPU of the skb it was first seen in (its allocating CPU is not read).
    SeenFrag = "seen_frag" {
        skb: SkbId,
        idx: u32,
        page: PageId,
        order: u32,
        page_size: u32,
        offset: u32,
        size: u32,
        count: u32,
        at: String,
    },
    /// `skb` handed up on `cpu`, `len` bytes from the network header on: drawn on `queue`
    /// (its receiver's) from here.
    SeenRx = "seen_rx" {
        skb: SkbId,
        cpu: Cpu,
        len: u32,
        queue: String,
        at: String,
    },
    /// The program's read copied `bytes` of `skb` out, on `cpu`.
    SeenCopy = "seen_copy" {
        skb: SkbId,
        cpu: Cpu,
        bytes: u32,
        at: String,
    },
    /// `skb` freed on `cpu`; a page no skb of the program's holds any longer leaves the
    /// drawing with it (its own free is not traced).
    SeenFree = "seen_free" {
        skb: SkbId,
        cpu: Cpu,
        at: String,
    },
}
}

impl Event {
    /// Whether dropping the event frees nothing: true of every kind but an `alloc_skb` whose
    /// queue name was built at run time and a capture's `seen_*` events (their strings). A
    /// kind given a heap field must be listed here, or dropping it through
    /// the replay's `Log::emit`, which forgets the others when tracing is off, leaks it (the test
    /// `every_kind_owning_heap_data_is_dropped` reads the enum and fails).
    #[inline(always)]
    pub fn frees_nothing(&self) -> bool {
        use Event::*;
        match self {
            AllocSkb { queue, .. } => !matches!(queue, Some(std::borrow::Cow::Owned(_))),
            SeenSkb { .. }
            | SeenXmit { .. }
            | SeenFrag { .. }
            | SeenRx { .. }
            | SeenCopy { .. }
            | SeenFree { .. } => false,
            _ => true,
        }
    }

    /// Whether the event is the put of an skb's head fragment, or the free it ends in.
    pub fn frees_head(&self) -> bool {
        matches!(
            self,
            Event::PutPage { head: true, .. } | Event::FreePage { head: true, .. }
        )
    }

    /// The skb the event names, if it names one.
    pub fn skb(&self) -> Option<SkbId> {
        use Event::*;
        match *self {
            AllocSkb { skb, .. }
            | FreeSkb { skb, .. }
            | CopyToLinear { skb, .. }
            | CopyToPage { skb, .. }
            | NewFrag { skb, .. }
            | Coalesce { skb, .. }
            | MarkPsh { skb }
            | ClearPsh { skb }
            | Push { skb, .. }
            | Linearize { skb, .. }
            | Xmit { skb, .. }
            | RxFrame { skb, .. }
            | GroMerge { skb, .. }
            | RcvCoalesce { skb, .. }
            | GroChain { skb, .. }
            | GroFlush { skb, .. }
            | QueueRcv { skb, .. }
            | BacklogAdd { skb, .. }
            | BacklogProcess { skb, .. }
            | RxDrop { skb, .. }
            | CopyToUser { skb, .. }
            | RxCachePark { skb }
            | RxCacheTake { skb, .. }
            | DeferFree { skb, .. }
            | MarkEor { skb }
            | NewMapping { skb, .. }
            | ExtendMapping { skb, .. }
            | SeenSkb { skb, .. }
            | SeenXmit { skb, .. }
            | SeenFrag { skb, .. }
            | SeenRx { skb, .. }
            | SeenCopy { skb, .. }
            | SeenFree { skb, .. } => Some(skb),
            _ => None,
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// One line in the kernel's words: the event's name, then its fields as `name=value`, in
/// the order the trace's JSON has them; a field without a value (`null`) is left out.
/// `alloc_page page=3 order=0 cpu=0`. Every host prints events this way.
impl fmt::Display for Event {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(self) else {
            return Err(fmt::Error);
        };
        let name = fields
            .get("ev")
            .and_then(|v| v.as_str())
            .ok_or(fmt::Error)?;
        f.write_str(name)?;
        for (k, v) in fields.iter().filter(|(k, v)| *k != "ev" && !v.is_null()) {
            write!(f, " {k}={v}")?;
        }
        Ok(())
    }
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
            self.push(f());
        }
    }

    /// Records `e`, built already, only if tracing is on and there is room: with tracing off
    /// it is not moved at all.
    #[inline]
    pub fn record(&mut self, e: Event) {
        if self.on {
            self.push(e);
        }
    }

    fn push(&mut self, e: Event) {
        if self.list.len() < self.room {
            self.list.push(e);
        } else {
            self.overflowed = true;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_print_their_name_then_their_fields() {
        let e = Event::AllocPage {
            page: 3,
            order: 0,
            cpu: 1,
            size: 4096,
            cursor: None,
            bias: None,
        };
        assert_eq!(e.to_string(), "alloc_page page=3 order=0 cpu=1 size=4096");
        let frag = Event::SendmsgFrag {
            subflow: 0,
            data_seq: 7,
            size_goal: 100,
            tail_len: None,
            can_collapse: false,
            goal: 100,
        };
        assert_eq!(
            frag.to_string(),
            "sendmsg_frag subflow=0 data_seq=7 size_goal=100 can_collapse=false goal=100"
        );
    }

    #[test]
    fn events_past_the_limit_are_dropped_and_flagged() {
        let mut ev = Events::on();
        ev.limit(2);
        for page in 0..3 {
            ev.emit(|| Event::DeferKick { cpu: page });
        }
        assert!(ev.overflowed());
        assert_eq!(ev.take().len(), 2);
        let mut off = Events::off();
        off.emit(|| Event::DeferKick { cpu: 0 });
        assert!(!off.overflowed() && off.take().is_empty());
    }

    /// `frees_nothing` lets the replay forget an event instead of dropping it, so every kind
    /// with a field on the heap must be one it answers false for (or checks, as `alloc_skb`'s
    /// queue name): read from this file's enum, so a kind given a `String` later fails here.
    #[test]
    fn every_kind_owning_heap_data_is_dropped() {
        let src = include_str!("events.rs");
        let body = &src[src.find("\nevents! {").unwrap()..];
        let body = &body[..body.find("\n}\n").unwrap()];
        let (mut kind, mut owning) = (None, Vec::new());
        for line in body.lines().map(str::trim) {
            let variant = line.split_once(" = \"").filter(|(name, rest)| {
                rest.ends_with('{') && name.chars().all(|c| c.is_ascii_alphanumeric())
            });
            if let Some((name, _)) = variant {
                kind = Some(name.to_string());
            } else if ["String", "Vec<", "Cow<", "Box<"]
                .iter()
                .any(|t| line.contains(t))
            {
                owning.extend(kind.take());
            }
        }
        assert!(owning.len() >= 7, "{owning:?}");
        let f = &src[src.find("pub fn frees_nothing").unwrap()..];
        let arms = &f[..f.find("_ => true").unwrap()];
        for k in &owning {
            assert!(
                arms.contains(&format!("{k} {{")),
                "{k} owns heap data: list it in frees_nothing"
            );
        }
    }
}
