//! How the kernel reaches each event's function: per mechanism and release, the call path
//! from the entry (the syscall's handler, the NET_RX softirq, TCP's receive of an ACK) down
//! to the function [`crate::kernel_fn`] names, as frames read in that release's source, with
//! the functions the compiler inlines marked (a live kernel stack does not show them) and a
//! rename across releases named. docs/call-paths.md records how each path was read, and why
//! the rows without one have none ([`GAPS`]).

use crate::consts::Era;
use crate::events::{Event, EventKind, EventKind::*};
use crate::kernel_fn::{elixir_url, kernel_fn, Flow, KernelFn};
use crate::mechanism::Mechanism;
use crate::mptcp::MptcpScenario;
use crate::{rx::RxScenario, send::SendScenario};

/// How a frame is joined to its caller when a path is told innermost first, as a captured
/// kernel stack is (`Capture::path`): the two read alike.
pub const FRAME_SEP: &str = " ← ";

/// Where a path starts: the handler a syscall or a softirq enters the stack by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// sendmsg(2), at the protocol's handler (`inet_sendmsg` calls it).
    Sendmsg,
    /// recvmsg(2), at the protocol's handler (`inet_recvmsg` calls it).
    Recvmsg,
    /// The NET_RX softirq's handler, which polls each NAPI instance.
    NetRx,
    /// A segment (an ACK, data) arriving in the NET_RX softirq, at TCP's receive handler
    /// (IP's local delivery calls it; the frames between the driver and it were not read,
    /// so the path starts here).
    TcpRcv,
    /// A datagram arriving in the NET_RX softirq, at UDP's receive handler (IP's local
    /// delivery calls it, as it does TCP's).
    UdpRcv,
}

impl Entry {
    /// The functions a path from this entry starts at.
    pub fn handlers(self) -> &'static [&'static str] {
        match self {
            Entry::Sendmsg => &["tcp_sendmsg"],
            Entry::Recvmsg => &["tcp_recvmsg", "udp_recvmsg"],
            Entry::NetRx => &["net_rx_action"],
            Entry::TcpRcv => &["tcp_v4_rcv"],
            Entry::UdpRcv => &["udp_rcv"],
        }
    }

    /// What a host prints before the path.
    pub fn label(self) -> &'static str {
        match self {
            Entry::Sendmsg => "sendmsg(2)",
            Entry::Recvmsg => "recvmsg(2)",
            Entry::NetRx => "the NET_RX softirq",
            Entry::TcpRcv => "a segment's receive, in the NET_RX softirq",
            Entry::UdpRcv => "a datagram's receive, in the NET_RX softirq",
        }
    }

    /// A path from TCP's receive is no UDP flow's, nor UDP's a TCP flow's.
    fn fits(self, udp: bool) -> bool {
        match self {
            Entry::TcpRcv => !udp,
            Entry::UdpRcv => udp,
            _ => true,
        }
    }
}

/// One function of a path, at the path's release, read out of [`Path::frames`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    pub name: &'static str,
    /// The file of `line`; empty where no line is pinned.
    pub file: &'static str,
    /// The line of `file` where this function calls the next frame, where it calls it at
    /// one place (or in the one branch the model follows); 0 where not pinned. The last
    /// frame's line is its [`KernelFn::line`].
    pub line: u32,
    /// `static inline` or defined in a header: the compiler inlines it, so a live stack
    /// shows its caller instead.
    pub inlined: bool,
    /// Its name in other releases, where it was renamed ("was sk_stream_alloc_skb through
    /// v5.15").
    pub renamed: Option<&'static str>,
}

impl Frame {
    /// A frame as a path writes it: `name`, then ` file:line` where a line is pinned, then
    /// ` (inlined)` and ` (its other name)` where they apply.
    fn parse(s: &'static str) -> Frame {
        // Split by chars, not strings: a string pattern's searcher costs the bundle its code.
        let mut notes = s.split('(').map(str::trim);
        let head = notes.next().unwrap_or_default();
        let (name, at) = head.split_once(' ').unwrap_or((head, ""));
        let (file, line) = at.split_once(':').unwrap_or_default();
        let mut f = Frame {
            name,
            file,
            line: line.parse().unwrap_or(0),
            inlined: false,
            renamed: None,
        };
        for n in notes.map(|n| n.strip_suffix(')').unwrap_or(n)) {
            match n {
                "inlined" => f.inlined = true,
                _ => f.renamed = Some(n),
            }
        }
        f
    }
}

/// The path of the events of `kinds` of `mechanism` at release `tag`, ending at their
/// row's function.
#[derive(Clone, Copy, Debug)]
pub struct Path {
    pub mechanism: &'static str,
    pub kinds: &'static [EventKind],
    pub tag: &'static str,
    pub entry: Entry,
    /// The op (as a scenario writes it) whose events take this path, where another op
    /// reaches the function another way; `None` for every op.
    pub op: Option<&'static str>,
    /// The frames outermost first, one string parsed when shown (as static frames they
    /// cost the playground's bundle more): [`Frame::parse`]'s frames joined by ` → `.
    pub frames: &'static str,
}

impl Path {
    pub fn frames(&self) -> impl Iterator<Item = Frame> {
        self.frames.split('→').map(|f| Frame::parse(f.trim()))
    }

    fn last(&self) -> Option<Frame> {
        self.frames().last()
    }

    /// This path only for the events of `op`.
    const fn on(self, op: &'static str) -> Path {
        Path {
            op: Some(op),
            ..self
        }
    }
}

/// Rows of the kernel_fn table with no path, and why: mechanism, eras, the rows' functions
/// (none: every row), the op (`None`: every op a path does not name).
#[derive(Clone, Copy, Debug)]
pub struct Gap {
    pub mechanism: &'static str,
    pub eras: &'static [Era],
    pub names: &'static [&'static str],
    pub op: Option<&'static str>,
    /// Only for a UDP flow, where a row shared with TCP has a path only from TCP's receive.
    pub udp: bool,
    pub why: &'static str,
}

/// A gap's defaults: every op, either protocol.
const ANY: Gap = Gap {
    mechanism: "",
    eras: &[],
    names: &[],
    op: None,
    udp: false,
    why: "",
};

const SEND: &str = SendScenario::NAME;
const RX: &str = RxScenario::NAME;
const MPTCP: &str = MptcpScenario::NAME;

/// `sk_stream_alloc_skb` read in v5.15 (5.15.16, 5.15.189), `tcp_stream_alloc_skb` in
/// v5.17-rc5 and v5.19: renamed in between. A macro, as every shared piece of a path, so
/// `concat!` builds each path's one string.
macro_rules! became {
    () => {
        "became tcp_stream_alloc_skb after v5.15"
    };
}
macro_rules! was {
    () => {
        "was sk_stream_alloc_skb through v5.15"
    };
}

/// v6.12: tcp_sendmsg locks the socket and calls tcp_sendmsg_locked.
macro_rules! locked {
    () => {
        "tcp_sendmsg net/ipv4/tcp.c:1357 → tcp_sendmsg_locked"
    };
}

/// A segment's receive down to the established socket's handler: the lines of tcp_v4_rcv's
/// call for an unowned socket, tcp_v4_do_rcv's, tcp_rcv_established's call of the next frame.
macro_rules! est {
    ($rcv:literal, $do_rcv:literal, $est:literal) => {
        concat!(
            "tcp_v4_rcv net/ipv4/tcp_ipv4.c:",
            $rcv,
            " → tcp_v4_do_rcv net/ipv4/tcp_ipv4.c:",
            $do_rcv,
            " → tcp_rcv_established net/ipv4/tcp_input.c:",
            $est,
            " → "
        )
    };
}

/// An ACK's receive down to tcp_ack's cleaning of the retransmit queue.
macro_rules! ack {
    ($rcv:literal, $do_rcv:literal, $est:literal, $ack:literal) => {
        concat!(
            est!($rcv, $do_rcv, $est),
            "tcp_ack net/ipv4/tcp_input.c:",
            $ack,
            " → tcp_clean_rtx_queue"
        )
    };
}

/// A datagram's receive down to the socket's queueing: udp_rcv's, __udp4_lib_rcv's and
/// udp_queue_rcv_skb's lines (v3.x).
macro_rules! udp_q {
    ($rcv:literal, $lib:literal, $q:literal) => {
        concat!(
            "udp_rcv net/ipv4/udp.c:",
            $rcv,
            " → __udp4_lib_rcv net/ipv4/udp.c:",
            $lib,
            " → udp_queue_rcv_skb net/ipv4/udp.c:",
            $q,
            " → "
        )
    };
}

/// The v3.x NAPI poll down to ixgbe's receive loop: the lines of net_rx_action's poll,
/// ixgbe_poll's call of the loop.
macro_rules! ixgbe {
    ($poll:literal, $clean:literal) => {
        concat!(
            "net_rx_action net/core/dev.c:",
            $poll,
            " → ixgbe_poll drivers/net/ethernet/intel/ixgbe/ixgbe_main.c:",
            $clean,
            " → ixgbe_clean_rx_irq"
        )
    };
}

/// ixgbe's receive loop allocating the frame's skb: the loop's line, the two inline
/// wrappers' lines.
macro_rules! rx_skb {
    ($poll:literal, $clean:literal, $loop:literal, $wrap:literal, $align:literal) => {
        concat!(
            ixgbe!($poll, $clean),
            " drivers/net/ethernet/intel/ixgbe/ixgbe_main.c:",
            $loop,
            " → netdev_alloc_skb_ip_align include/linux/skbuff.h:",
            $wrap,
            " (inlined) → __netdev_alloc_skb_ip_align include/linux/skbuff.h:",
            $align,
            " (inlined) → __netdev_alloc_skb"
        )
    };
}

/// ixgbe's receive loop handing the frame to GRO, down to TCP's merge.
macro_rules! gro {
    ($poll:literal, $clean:literal, $l:literal, $rx:literal, $napi:literal, $in:literal, $dev:literal, $inet:literal, $tcp4:literal, $tcp:literal) => {
        concat!(
            ixgbe!($poll, $clean),
            " drivers/net/ethernet/intel/ixgbe/ixgbe_main.c:",
            $l,
            " → ixgbe_rx_skb drivers/net/ethernet/intel/ixgbe/ixgbe_main.c:",
            $rx,
            " → napi_gro_receive net/core/dev.c:",
            $napi,
            " → __napi_gro_receive net/core/dev.c:",
            $in,
            " (inlined) → dev_gro_receive net/core/dev.c:",
            $dev,
            " → inet_gro_receive net/ipv4/af_inet.c:",
            $inet,
            " → tcp4_gro_receive net/ipv4/tcp_ipv4.c:",
            $tcp4,
            " → tcp_gro_receive net/ipv4/tcp.c:",
            $tcp,
            " → skb_gro_receive"
        )
    };
}

/// Every path, each read in its release's source (docs/call-paths.md).
#[rustfmt::skip]
pub static PATHS: &[Path] = &[
    // tcp_sendmsg, v2.6.33.
    p(SEND, &[AllocSkb], "v2.6.33", Entry::Sendmsg, concat!("tcp_sendmsg net/ipv4/tcp.c:962 → sk_stream_alloc_skb (", became!(), ")")),
    p(SEND, &[AllocPage], "v2.6.33", Entry::Sendmsg, "tcp_sendmsg net/ipv4/tcp.c:1026 → sk_stream_alloc_page (inlined)"),
    p(SEND, &[GetPage], "v2.6.33", Entry::Sendmsg, "tcp_sendmsg → get_page (inlined)"),
    p(SEND, &[CopyToLinear], "v2.6.33", Entry::Sendmsg, "tcp_sendmsg net/ipv4/tcp.c:987 → skb_add_data (inlined)"),
    p(SEND, &[CopyToPage], "v2.6.33", Entry::Sendmsg, "tcp_sendmsg net/ipv4/tcp.c:1032 → skb_copy_to_page (inlined)"),
    p(SEND, &[NewFrag], "v2.6.33", Entry::Sendmsg, "tcp_sendmsg net/ipv4/tcp.c:1050 → skb_fill_page_desc (inlined)"),
    p(SEND, &[Coalesce, ClearPsh], "v2.6.33", Entry::Sendmsg, "tcp_sendmsg"),
    p(SEND, &[Push], "v2.6.33", Entry::Sendmsg, "tcp_sendmsg → tcp_push (inlined)"),
    p(SEND, &[Xmit], "v2.6.33", Entry::Sendmsg, "tcp_sendmsg → tcp_push net/ipv4/tcp.c:556 (inlined) → __tcp_push_pending_frames net/ipv4/tcp_output.c:1809 → tcp_write_xmit net/ipv4/tcp_output.c:1768 → tcp_transmit_skb").on("sendmsg"),
    p(SEND, &[Ack], "v2.6.33", Entry::TcpRcv, ack!(1678, 1554, 5282, 3676)),
    p(SEND, &[FreeSkb], "v2.6.33", Entry::TcpRcv, concat!(ack!(1678, 1554, 5282, 3676), " net/ipv4/tcp_input.c:3284 → sk_wmem_free_skb (inlined)")).on("ack"),
    // tcp_sendmsg_locked, v6.12.
    p(SEND, &[AllocSkb], "v6.12", Entry::Sendmsg, concat!(locked!(), " net/ipv4/tcp.c:1167 → tcp_stream_alloc_skb (", was!(), ")")),
    p(SEND, &[AllocPage, ReusePage], "v6.12", Entry::Sendmsg, concat!(locked!(), " net/ipv4/tcp.c:1197 → sk_page_frag_refill net/core/sock.c:3035 → skb_page_frag_refill")),
    p(SEND, &[GetPage], "v6.12", Entry::Sendmsg, concat!(locked!(), " net/ipv4/tcp.c:1234 → page_ref_inc (inlined)")),
    p(SEND, &[CopyToPage], "v6.12", Entry::Sendmsg, concat!(locked!(), " net/ipv4/tcp.c:1221 → skb_copy_to_page_nocache (inlined)")),
    p(SEND, &[NewFrag], "v6.12", Entry::Sendmsg, concat!(locked!(), " net/ipv4/tcp.c:1232 → skb_fill_page_desc (inlined)")),
    p(SEND, &[Coalesce], "v6.12", Entry::Sendmsg, concat!(locked!(), " net/ipv4/tcp.c:1230 → skb_frag_size_add (inlined)")),
    p(SEND, &[ClearPsh, MarkEor], "v6.12", Entry::Sendmsg, locked!()),
    p(SEND, &[Push], "v6.12", Entry::Sendmsg, concat!(locked!(), " → tcp_push")),
    p(SEND, &[Xmit], "v6.12", Entry::Sendmsg, concat!(locked!(), " → tcp_push net/ipv4/tcp.c:750 → __tcp_push_pending_frames net/ipv4/tcp_output.c:3012 → tcp_write_xmit net/ipv4/tcp_output.c:2827 → tcp_transmit_skb")).on("sendmsg"),
    p(SEND, &[Ack], "v6.12", Entry::TcpRcv, ack!(2350, 1915, 6173, 4032)),
    p(SEND, &[FreeSkb], "v6.12", Entry::TcpRcv, concat!(ack!(2350, 1915, 6173, 4032), " net/ipv4/tcp_input.c:3436 → tcp_rtx_queue_unlink_and_free include/net/tcp.h:2091 (inlined) → tcp_wmem_free_skb (inlined)")).on("ack"),
    // The receive path through ixgbe, v3.5 (seed 001 as posted) and v3.6.
    p(RX, &[NapiPoll], "v3.5", Entry::NetRx, "net_rx_action"),
    p(RX, &[RxFrame], "v3.5", Entry::NetRx, ixgbe!(3843, 2389)),
    p(RX, &[AllocSkb], "v3.5", Entry::NetRx, rx_skb!(3843, 2389, 1711, 1737, 1727)),
    p(RX, &[FragAlloc, FragCacheRelease, ReusePage], "v3.5", Entry::NetRx, concat!(rx_skb!(3843, 2389, 1711, 1737, 1727), " net/core/skbuff.c:357 → netdev_alloc_frag")),
    p(RX, &[NewFrag], "v3.5", Entry::NetRx, concat!(ixgbe!(3843, 2389), " drivers/net/ethernet/intel/ixgbe/ixgbe_main.c:1742 → ixgbe_add_rx_frag")),
    p(RX, &[GroMerge], "v3.5", Entry::NetRx, gro!(3843, 2389, 1793, 1423, 3532, 3482, 3396, 1388, 2564, 3071)),
    p(RX, &[GroFlush], "v3.5", Entry::NetRx, "net_rx_action net/core/dev.c:3843 → ixgbe_poll drivers/net/ethernet/intel/ixgbe/ixgbe_main.c:2397 → napi_complete net/core/dev.c:3758 → napi_gro_flush"),
    p(RX, &[NapiPoll], "v3.6", Entry::NetRx, "net_rx_action"),
    p(RX, &[RxFrame], "v3.6", Entry::NetRx, ixgbe!(3939, 2379)),
    p(RX, &[AllocSkb], "v3.6", Entry::NetRx, rx_skb!(3939, 2379, 1703, 1774, 1764)),
    p(RX, &[FragAlloc, FragCacheRelease, ReusePage], "v3.6", Entry::NetRx, concat!(rx_skb!(3939, 2379, 1703, 1774, 1764), " net/core/skbuff.c:425 → __netdev_alloc_frag")),
    p(RX, &[NewFrag], "v3.6", Entry::NetRx, concat!(ixgbe!(3939, 2379), " drivers/net/ethernet/intel/ixgbe/ixgbe_main.c:1734 → ixgbe_add_rx_frag")),
    p(RX, &[GroMerge], "v3.6", Entry::NetRx, gro!(3939, 2379, 1785, 1415, 3628, 3578, 3492, 1402, 2592, 3145)),
    p(RX, &[GroFlush], "v3.6", Entry::NetRx, "net_rx_action net/core/dev.c:3939 → ixgbe_poll drivers/net/ethernet/intel/ixgbe/ixgbe_main.c:2387 → napi_complete net/core/dev.c:3854 → napi_gro_flush"),
    // Either era: recvmsg's copy, the softirq's poll.
    p(RX, &[CopyToUser], "v3.5", Entry::Recvmsg, "tcp_recvmsg"),
    p(RX, &[CopyToUser], "v3.6", Entry::Recvmsg, "tcp_recvmsg"),
    p(RX, &[CopyToUser], "v6.12", Entry::Recvmsg, "tcp_recvmsg net/ipv4/tcp.c:2851 → tcp_recvmsg_locked"),
    p(RX, &[NapiPoll], "v6.12", Entry::NetRx, "net_rx_action"),
    p(RX, &[CopyToUser], "v3.5", Entry::Recvmsg, "udp_recvmsg"),
    p(RX, &[CopyToUser], "v3.6", Entry::Recvmsg, "udp_recvmsg"),
    p(RX, &[CopyToUser], "v6.12", Entry::Recvmsg, "udp_recvmsg"),
    // The socket's side of a segment's receive (an arrival's; a backlogged one is handled
    // at release_sock), and of a datagram's.
    p(RX, &[RxDrop], "v3.5", Entry::TcpRcv, "tcp_v4_rcv"),
    p(RX, &[RxDrop], "v3.6", Entry::TcpRcv, "tcp_v4_rcv"),
    p(RX, &[RxDrop], "v6.12", Entry::TcpRcv, "tcp_v4_rcv"),
    p(RX, &[RxCacheTake], "v5.11", Entry::TcpRcv, "tcp_v4_rcv"),
    p(RX, &[QueueRcv], "v3.5", Entry::TcpRcv, concat!(est!(1755, 1626, 5658), "tcp_queue_rcv")).on("arrive"),
    p(RX, &[QueueRcv], "v3.6", Entry::TcpRcv, concat!(est!(1800, 1633, 5535), "tcp_queue_rcv")).on("arrive"),
    p(RX, &[QueueRcv], "v6.12", Entry::TcpRcv, concat!(est!(2350, 1915, 6213), "tcp_queue_rcv")).on("arrive"),
    p(RX, &[RcvCoalesce], "v3.5", Entry::TcpRcv, concat!(est!(1755, 1626, 5658), "tcp_queue_rcv net/ipv4/tcp_input.c:4702 → tcp_try_coalesce net/ipv4/tcp_input.c:4563 → skb_try_coalesce")).on("arrive"),
    p(RX, &[RcvCoalesce], "v3.6", Entry::TcpRcv, concat!(est!(1800, 1633, 5535), "tcp_queue_rcv net/ipv4/tcp_input.c:4544 → tcp_try_coalesce net/ipv4/tcp_input.c:4402 → skb_try_coalesce")).on("arrive"),
    p(RX, &[RcvCoalesce], "v6.12", Entry::TcpRcv, concat!(est!(2350, 1915, 6213), "tcp_queue_rcv net/ipv4/tcp_input.c:5155 → tcp_try_coalesce net/ipv4/tcp_input.c:4888 → skb_try_coalesce")).on("arrive"),
    p(RX, &[BacklogAdd], "v3.5", Entry::TcpRcv, "tcp_v4_rcv net/ipv4/tcp_ipv4.c:1757 → sk_add_backlog (inlined)"),
    p(RX, &[BacklogAdd], "v3.6", Entry::TcpRcv, "tcp_v4_rcv net/ipv4/tcp_ipv4.c:1802 → sk_add_backlog (inlined)"),
    p(RX, &[BacklogAdd], "v6.12", Entry::TcpRcv, "tcp_v4_rcv net/ipv4/tcp_ipv4.c:2352 → tcp_add_backlog"),
    p(RX, &[BacklogAdd], "v3.5", Entry::UdpRcv, concat!(udp_q!(1723, 1669, 1491), "sk_add_backlog (inlined)")),
    p(RX, &[BacklogAdd], "v3.6", Entry::UdpRcv, concat!(udp_q!(1735, 1681, 1503), "sk_add_backlog (inlined)")),
    p(RX, &[QueueRcv], "v3.5", Entry::UdpRcv, concat!(udp_q!(1723, 1669, 1490), "__udp_queue_rcv_skb")).on("arrive"),
    p(RX, &[QueueRcv], "v3.6", Entry::UdpRcv, concat!(udp_q!(1735, 1681, 1502), "__udp_queue_rcv_skb")).on("arrive"),
    p(RX, &[QueueRcv], "v6.12", Entry::UdpRcv, "udp_rcv net/ipv4/udp.c:2632 → __udp4_lib_rcv → udp_unicast_rcv_skb net/ipv4/udp.c:2373 → udp_queue_rcv_skb net/ipv4/udp.c:2213 → udp_queue_rcv_one_skb net/ipv4/udp.c:2195 → __udp_queue_rcv_skb net/ipv4/udp.c:2064 → __udp_enqueue_schedule_skb"),
    p(RX, &[RxDrop], "v3.5", Entry::UdpRcv, "udp_rcv net/ipv4/udp.c:1723 → __udp4_lib_rcv"),
    p(RX, &[RxDrop], "v3.6", Entry::UdpRcv, "udp_rcv net/ipv4/udp.c:1735 → __udp4_lib_rcv"),
    p(RX, &[RxDrop], "v6.12", Entry::UdpRcv, "udp_rcv net/ipv4/udp.c:2632 → __udp4_lib_rcv"),
];

const fn p(
    mechanism: &'static str,
    kinds: &'static [EventKind],
    tag: &'static str,
    entry: Entry,
    frames: &'static str,
) -> Path {
    Path {
        mechanism,
        kinds,
        tag,
        entry,
        op: None,
        frames,
    }
}

const ALL_SEND: &[Era] = &[Era::V2_6_33, Era::V6_12];
const RX_ALL: &[Era] = &[Era::V3_5, Era::V3_6, Era::V6_12];
const NEW: &[Era] = &[Era::V6_12];

/// The rows without a path, and why (docs/call-paths.md).
#[rustfmt::skip]
pub static GAPS: &[Gap] = &[
    Gap { mechanism: SEND, eras: ALL_SEND, names: &["put_page", "free_hot_page", "__folio_put", "tcp_v4_destroy_sock"],
          why: "a page is put from several places (a freed skb's frags, the socket's page switch, its close); the event does not say which", ..ANY },
    Gap { mechanism: SEND, eras: ALL_SEND, names: &["sk_wmem_free_skb", "tcp_wmem_free_skb"], op: Some("close"),
          why: "the model frees the queue at close, which the kernel does at once only when close aborts (tcp_disconnect's tcp_write_queue_purge, with SO_LINGER 0 or unread data); otherwise the FIN's ACKs free it (tcp_clean_rtx_queue) or the socket's later destroy does (tcp_v4_destroy_sock): which the close stands for is not said", ..ANY },
    Gap { mechanism: SEND, eras: ALL_SEND, names: &["tcp_mark_push"],
          why: "tcp_sendmsg calls it at several places and through tcp_push; the event does not say which", ..ANY },
    Gap { mechanism: SEND, eras: ALL_SEND, names: &["tcp_transmit_skb"], op: Some("transmit"),
          why: "the transmit op stands for the device or the window letting the queue go, which the kernel does from an ACK (tcp_data_snd_check) or a timer: the op does not say which", ..ANY },
    Gap { mechanism: SEND, eras: ALL_SEND, names: &["__skb_linearize", "validate_xmit_skb", "tcp_tso_segment", "tcp_gso_segment"],
          why: "below tcp_transmit_skb, through IP and the device layer, which were not read", ..ANY },
    Gap { mechanism: RX, eras: RX_ALL, names: &["alloc_pages", "alloc_pages_node", "get_page", "put_page", "__put_single_page", "__folio_put", "skb_free_frag", "page_frag_free"],
          why: "a page is taken or put by the driver, the frag cache and every skb free; the event does not say which caller", ..ANY },
    Gap { mechanism: RX, eras: NEW, names: &["napi_gro_receive", "napi_alloc_skb", "page_frag_alloc_1k", "skb_add_rx_frag", "__page_frag_alloc_align", "skb_gro_receive", "napi_gro_flush"],
          why: "the model's v6.12 driver is either of two (napi_alloc_skb's or ixgbe in legacy-rx mode), and the trace does not say which: the frames of its poll are unknown", ..ANY },
    Gap { mechanism: RX, eras: RX_ALL, names: &["tun_get_user", "napi_gro_frags", "napi_get_frags", "tun_napi_alloc_frags"],
          why: "tun's napi-frags path (write(2) on the tun device) was not read", ..ANY },
    Gap { mechanism: RX, eras: RX_ALL, names: &["tcp_queue_rcv", "skb_try_coalesce", "__udp_queue_rcv_skb"],
          why: "queued from the backlog as the socket's lock is released (release_sock, by the release op or recvmsg), a path not read; an arrival's is", ..ANY },
    Gap { mechanism: RX, eras: RX_ALL, names: &["tcp_v4_rcv"], udp: true,
          why: "seed 002's rx cache is taken in TCP's receive: a UDP flow's take has no path", ..ANY },
    Gap { mechanism: RX, eras: NEW, names: &["sk_add_backlog", "tcp_add_backlog"], udp: true,
          why: "v6.12's UDP queues a datagram whether or not the socket is owned: no backlog", ..ANY },
    Gap { mechanism: RX, eras: RX_ALL, names: &["__release_sock", "__kfree_skb", "sk_eat_skb", "skb_attempt_defer_free", "kick_defer_list_purge", "skb_defer_free_flush",
              "skb_free_datagram_locked", "skb_consume_udp"],
          why: "reached from a lock's release, from recvmsg at several places, or from every free of an skb: not read", ..ANY },
    Gap { mechanism: MPTCP, eras: &[Era::V5_11Rc1], names: &[],
          why: "no v5.11-rc1 tree was read, and v5.11's differs (its __mptcp_do_alloc_tx_skb calls alloc_skb_fclone itself), so no later release stands in", ..ANY },
];

/// An event's path: its entry, its frames down to its kernel function, the release read.
#[derive(Clone, Debug)]
pub struct CallPath {
    pub entry: Entry,
    /// Outermost first.
    pub frames: Vec<Frame>,
    /// The event's kernel function (the last frame), which links its statement's line.
    pub at: KernelFn,
}

impl CallPath {
    /// Frame `k`'s link on Elixir at the path's release: its calling line where pinned,
    /// the last frame's statement where [`KernelFn::line_url`] pins one, else the ident.
    pub fn url(&self, k: usize) -> String {
        let (fr, tag) = (&self.frames[k], self.at.tag);
        if k + 1 == self.frames.len() {
            if let Some(u) = self.at.line_url() {
                return u;
            }
        }
        match fr.line {
            0 => elixir_url(tag, fr.name),
            n => format!(
                "https://elixir.bootlin.com/linux/{tag}/source/{}#L{n}",
                fr.file
            ),
        }
    }

    /// The frames innermost first, as a captured stack is told, joined by [`FRAME_SEP`],
    /// each inlined one marked.
    pub fn text(&self) -> String {
        let names = self.frames.iter().rev().map(|f| match f.inlined {
            true => format!("{} (inlined)", f.name),
            false => f.name.to_string(),
        });
        names.collect::<Vec<_>>().join(FRAME_SEP)
    }
}

/// The path of an event of `mechanism` in `era` and `flow`, emitted by the op named `op`,
/// where one was read.
pub fn call_path(mechanism: &str, era: Era, flow: Flow, op: &str, e: &Event) -> Option<CallPath> {
    let at = kernel_fn(mechanism, era, flow, e)?;
    let p = path_of(mechanism, at.kind, at.tag, at.name, op, flow.udp)?;
    Some(CallPath {
        entry: p.entry,
        frames: p.frames().collect(),
        at,
    })
}

/// Why an event (as for [`call_path`]) has no path, where its row is a gap.
pub fn gap(mechanism: &str, era: Era, flow: Flow, op: &str, e: &Event) -> Option<&'static Gap> {
    let at = kernel_fn(mechanism, era, flow, e)?;
    match path_of(mechanism, at.kind, at.tag, at.name, op, flow.udp) {
        Some(_) => None,
        None => gap_of(mechanism, era, at.name, op, flow.udp),
    }
}

/// The path ending at `name` for events of `kind` of `mechanism` at `tag`, of the op `op`,
/// in a UDP flow or not.
fn path_of(
    mechanism: &str,
    kind: EventKind,
    tag: &str,
    name: &str,
    op: &str,
    udp: bool,
) -> Option<&'static Path> {
    PATHS.iter().find(|p| {
        p.mechanism == mechanism
            && p.tag == tag
            && p.kinds.contains(&kind)
            && p.op.is_none_or(|o| o == op)
            && p.entry.fits(udp)
            && p.last().is_some_and(|f| f.name == name)
    })
}

/// The gap of the row of `name` for the op `op`: the op's own before every op's.
fn gap_of(mechanism: &str, era: Era, name: &str, op: &str, udp: bool) -> Option<&'static Gap> {
    let gaps = || {
        GAPS.iter().filter(move |g| {
            g.mechanism == mechanism
                && g.eras.contains(&era)
                && (g.names.is_empty() || g.names.contains(&name))
                && (udp || !g.udp)
        })
    };
    (gaps().find(|g| g.op == Some(op))).or_else(|| gaps().find(|g| g.op.is_none()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_fn::{Row, TABLE};
    use std::collections::BTreeSet;

    /// How a path's frames are joined, outermost first, as docs/call-paths.md writes them.
    const ARROW: &str = " → ";

    /// The rows a path could end at: same mechanism, one of its kinds, its function, an era
    /// that links its release.
    fn rows_of(p: &Path) -> Vec<&'static Row> {
        let last = p.last().expect("a frame");
        TABLE
            .iter()
            .filter(|r| r.mechanism == p.mechanism && p.kinds.contains(&r.kind))
            .filter(|r| r.name == last.name && r.eras.iter().any(|&e| r.tag(e) == p.tag))
            .collect()
    }

    /// A frame written back as a path writes it.
    fn unparse(f: &Frame) -> String {
        let mut s = f.name.to_string();
        if f.line > 0 {
            s += &format!(" {}:{}", f.file, f.line);
        }
        if f.inlined {
            s += " (inlined)";
        }
        if let Some(r) = f.renamed {
            s += &format!(" ({r})");
        }
        s
    }

    /// Each path reads back as written (so no frame's line or note was lost to a typo),
    /// starts at its entry's handler, names no function twice, pins a line with its file,
    /// and ends at the function of a row for each of its kinds at its release, whose own
    /// line is the statement's (so the last frame pins none). No two paths serve one event.
    #[test]
    fn each_path_is_well_formed() {
        for p in PATHS {
            let frames: Vec<Frame> = p.frames().collect();
            let back: Vec<String> = frames.iter().map(unparse).collect();
            assert_eq!(back.join(ARROW), p.frames, "{p:?}");
            assert!(p.entry.handlers().contains(&frames[0].name), "{p:?}");
            let names: BTreeSet<_> = frames.iter().map(|f| f.name).collect();
            assert_eq!(names.len(), frames.len(), "a frame twice: {p:?}");
            assert!(
                frames.iter().all(|f| (f.line > 0) != f.file.is_empty()),
                "{p:?}"
            );
            let rows = rows_of(p);
            for k in p.kinds {
                assert!(rows.iter().any(|r| r.kind == *k), "{k} at {}: {p:?}", p.tag);
            }
            assert_eq!(p.last().unwrap().line, 0, "{p:?}");
            let twice = PATHS
                .iter()
                .filter(|q| q.mechanism == p.mechanism && q.tag == p.tag && q.op == p.op)
                .filter(|q| q.entry.fits(true) == p.entry.fits(true))
                .filter(|q| q.last() == p.last())
                .filter(|q| q.kinds.iter().any(|k| p.kinds.contains(k)))
                .count();
            assert_eq!(twice, 1, "two paths: {p:?}");
        }
    }

    /// Every row of the kernel_fn table, in each era it covers and each flow that takes it
    /// (a UDP flow takes a shared row where it has none of its own), has a path or a gap
    /// with a reason for every op: a path for every op, or a gap for every op, or a path for
    /// some ops and a gap for the others; never a path and a gap for the same op.
    #[test]
    fn every_row_has_a_path_or_a_gap() {
        for r in TABLE {
            let udp_row = |era| {
                TABLE.iter().any(|u| {
                    u.udp && u.mechanism == r.mechanism && u.kind == r.kind && u.eras.contains(&era)
                })
            };
            for &era in r.eras {
                let flows = match r.udp {
                    true => vec![true],
                    false if udp_row(era) => vec![false],
                    false if r.mechanism == RX => vec![false, true],
                    false => vec![false],
                };
                for udp in flows {
                    let tag = r.tag(era);
                    let paths: Vec<_> = PATHS
                        .iter()
                        .filter(|p| p.mechanism == r.mechanism && p.tag == tag)
                        .filter(|p| p.kinds.contains(&r.kind) && p.entry.fits(udp))
                        .filter(|p| p.last().is_some_and(|f| f.name == r.name))
                        .collect();
                    let ops: BTreeSet<_> = paths.iter().map(|p| p.op).collect();
                    let what = format!(
                        "{} {} {} at {} (udp {udp})",
                        r.mechanism,
                        r.kind,
                        r.name,
                        era.name()
                    );
                    assert_eq!(ops.len(), paths.len(), "two paths for one op: {what}");
                    let gaps: Vec<_> = GAPS
                        .iter()
                        .filter(|g| g.mechanism == r.mechanism && g.eras.contains(&era))
                        .filter(|g| g.names.is_empty() || g.names.contains(&r.name))
                        .filter(|g| udp || !g.udp)
                        .collect();
                    let every_op = ops.contains(&None);
                    assert!(
                        every_op == gaps.is_empty(),
                        "{what}: paths {paths:?}, gaps {gaps:?}"
                    );
                    assert!(
                        gaps.iter().all(|g| !ops.contains(&g.op)),
                        "{what}: an op with a path and a gap"
                    );
                }
            }
        }
        for g in GAPS {
            assert!(!g.why.is_empty(), "{g:?}");
        }
    }

    /// The trace of one op of `mechanism` and `variant` after `before` (one sendmsg of 2000
    /// bytes, on a device without GSO for tcp_sendmsg, or one frame's arrival), and `extra`
    /// scenario lines.
    fn run(mechanism: &str, variant: &str, ops: &str, extra: &str) -> crate::Trace {
        let device = if mechanism == SEND {
            "[device]\ngso = false\n"
        } else {
            ""
        };
        let text = format!(
            "mechanism = \"{mechanism}\"\nvariant = \"{variant}\"\nops = [{ops}]\n{device}{extra}"
        );
        let t = crate::Scenario::parse(&text).unwrap();
        t.run(&crate::RunOptions::default()).unwrap()
    }

    /// The path of the first event of `kind` in the trace `t`.
    fn first(t: &crate::Trace, kind: EventKind) -> Option<CallPath> {
        let mut events = t
            .steps
            .iter()
            .enumerate()
            .flat_map(|(i, s)| s.events.iter().map(move |e| (i, e)));
        let (step, e) = events
            .find(|(_, e)| e.kind() == kind)
            .unwrap_or_else(|| panic!("no {kind} in {}", t.variant));
        t.call_path(step, e)
    }

    fn path(mechanism: &str, variant: &str, kind: EventKind) -> Option<CallPath> {
        let op = match mechanism {
            RX => r#"{ op = "arrive", frames = 1 }"#,
            _ => r#"{ op = "sendmsg", bytes = 2000 }"#,
        };
        first(&run(mechanism, variant, op, ""), kind)
    }

    /// Hand-checked: today's copy into the task's page frag, 2.6.33's copy into the linear area,
    /// seed 001's netdev_alloc_frag on receive (v3.5, as posted); MPTCP has none.
    #[test]
    fn exact_paths() {
        let modern = path(SEND, "modern", CopyToPage).unwrap();
        assert_eq!(modern.entry, Entry::Sendmsg);
        assert_eq!(
            modern.text(),
            "skb_copy_to_page_nocache (inlined) ← tcp_sendmsg_locked ← tcp_sendmsg"
        );
        let urls: Vec<String> = (0..3).map(|k| modern.url(k)).collect();
        assert_eq!(
            urls,
            [
                "https://elixir.bootlin.com/linux/v6.12/source/net/ipv4/tcp.c#L1357",
                "https://elixir.bootlin.com/linux/v6.12/source/net/ipv4/tcp.c#L1221",
                "https://elixir.bootlin.com/linux/v6.12/source/include/net/sock.h#L2197",
            ]
        );
        let old = path(SEND, "pre-2010", CopyToLinear).unwrap();
        assert_eq!(old.text(), "skb_add_data (inlined) ← tcp_sendmsg");
        assert_eq!(
            old.url(0),
            "https://elixir.bootlin.com/linux/v2.6.33/source/net/ipv4/tcp.c#L987"
        );
        let seed_001 = path(RX, "pre-2012", FragAlloc).unwrap();
        assert_eq!(seed_001.entry, Entry::NetRx);
        assert_eq!(
            seed_001.text(),
            "netdev_alloc_frag ← __netdev_alloc_skb ← __netdev_alloc_skb_ip_align (inlined) \
             ← netdev_alloc_skb_ip_align (inlined) ← ixgbe_clean_rx_irq ← ixgbe_poll ← net_rx_action"
        );
        let v3_6 = path(RX, "duyck-3.6", FragAlloc).unwrap();
        assert_eq!(v3_6.frames.last().unwrap().name, "__netdev_alloc_frag");
        assert!(path(MPTCP, "pre-2020", AllocSkb).is_none());
    }

    /// Hand-checked, where the op picks the path: an skb freed by an ACK (v6.12), by close
    /// (no path: why is said), a transmit by sendmsg's push (2.6.33); a segment queued by
    /// its arrival (v3.6) and by the lock's release (no path), a datagram queued (v6.12).
    #[test]
    fn the_op_picks_the_path() {
        let send = r#"{ op = "sendmsg", bytes = 2000 }, { op = "transmit" }"#;
        let acked = run(SEND, "modern", &format!(r#"{send}, {{ op = "ack" }}"#), "");
        let free = first(&acked, FreeSkb).unwrap();
        assert_eq!(free.entry, Entry::TcpRcv);
        assert_eq!(
            free.text(),
            "tcp_wmem_free_skb (inlined) ← tcp_rtx_queue_unlink_and_free (inlined) \
             ← tcp_clean_rtx_queue ← tcp_ack ← tcp_rcv_established ← tcp_v4_do_rcv ← tcp_v4_rcv"
        );
        assert_eq!(
            free.url(4),
            "https://elixir.bootlin.com/linux/v6.12/source/net/ipv4/tcp_input.c#L3436"
        );
        let closed = run(
            SEND,
            "modern",
            &format!(r#"{send}, {{ op = "close" }}"#),
            "",
        );
        assert!(first(&closed, FreeSkb).is_none());
        let e = closed.steps[2].events.iter().find(|e| e.kind() == FreeSkb);
        let (step, e) = (2, e.unwrap());
        assert!(closed
            .call_gap(step, e)
            .unwrap()
            .why
            .contains("tcp_disconnect"));
        let drained = run(
            SEND,
            "pre-2010",
            r#"{ op = "sendmsg", bytes = 2000 }"#,
            "drain = true\n",
        );
        assert_eq!(
            first(&drained, Xmit).unwrap().text(),
            "tcp_transmit_skb ← tcp_write_xmit ← __tcp_push_pending_frames ← tcp_push (inlined) ← tcp_sendmsg"
        );
        assert!(first(&run(SEND, "pre-2010", send, ""), Xmit).is_none());
        let arrive = r#"{ op = "arrive", frames = 1 }"#;
        let queued = first(&run(RX, "duyck-3.6", arrive, ""), QueueRcv).unwrap();
        assert_eq!(
            queued.text(),
            "tcp_queue_rcv ← tcp_rcv_established ← tcp_v4_do_rcv ← tcp_v4_rcv"
        );
        assert_eq!(
            queued.url(2),
            "https://elixir.bootlin.com/linux/v3.6/source/net/ipv4/tcp_input.c#L5535"
        );
        let held = format!(r#"{{ op = "lock" }}, {arrive}, {{ op = "release" }}"#);
        let released = run(RX, "duyck-3.6", &held, "");
        assert_eq!(
            first(&released, BacklogAdd).unwrap().text(),
            "sk_add_backlog (inlined) ← tcp_v4_rcv"
        );
        let e = released.steps[2]
            .events
            .iter()
            .find(|e| e.kind() == BacklogProcess);
        assert!(released.call_path(2, e.unwrap()).is_none());
        let udp = run(RX, "modern", arrive, "[socket]\nproto = \"udp\"\n");
        let dgram = first(&udp, QueueRcv).unwrap();
        assert_eq!(dgram.entry, Entry::UdpRcv);
        assert_eq!(
            dgram.text(),
            "__udp_enqueue_schedule_skb ← __udp_queue_rcv_skb ← udp_queue_rcv_one_skb \
             ← udp_queue_rcv_skb ← udp_unicast_rcv_skb ← __udp4_lib_rcv ← udp_rcv"
        );
    }

    /// The skb allocation of tcp_sendmsg names the rename in both releases.
    #[test]
    fn a_renamed_function_names_its_other_name() {
        let last = |variant| {
            *path(SEND, variant, AllocSkb)
                .unwrap()
                .frames
                .last()
                .unwrap()
        };
        let (old, new) = (last("pre-2010"), last("modern"));
        assert_eq!(
            (old.name, new.name),
            ("sk_stream_alloc_skb", "tcp_stream_alloc_skb")
        );
        assert!(old.renamed.unwrap().contains(new.name));
        assert!(new.renamed.unwrap().contains(old.name));
    }

    /// A path as docs/call-paths.md writes it: `name`:line, `(inlined)`.
    fn chain(p: &Path) -> String {
        let frame = |f: Frame| {
            let mut s = format!("`{}`", f.name);
            if f.line > 0 {
                s += &format!(":{}", f.line);
            }
            if f.inlined {
                s += " (inlined)";
            }
            s
        };
        p.frames().map(frame).collect::<Vec<_>>().join(ARROW)
    }

    /// docs/call-paths.md records each path as the table holds it, and no other.
    #[test]
    fn the_table_and_the_record_of_paths_agree() {
        let record = include_str!("../../docs/call-paths.md");
        let (_, rows) = record
            .split_once("## The paths")
            .expect("a section of paths");
        let in_doc: BTreeSet<String> = rows
            .lines()
            .filter(|l| l.starts_with("| v"))
            .map(String::from)
            .collect();
        let in_table: BTreeSet<String> = PATHS
            .iter()
            .map(|p| {
                let kinds: Vec<&str> = p.kinds.iter().map(|k| k.name()).collect();
                let (tag, m, c, op) = (p.tag, p.mechanism, chain(p), p.op.unwrap_or("any"));
                format!("| {tag} | {m} | {} | {op} | {c} |", kinds.join(", "))
            })
            .collect();
        let only_doc: Vec<_> = in_doc.difference(&in_table).collect();
        let only_table: Vec<_> = in_table.difference(&in_doc).collect();
        assert!(
            only_doc.is_empty() && only_table.is_empty(),
            "only in the record: {only_doc:#?}; only in the table: {only_table:#?}"
        );
    }
}
