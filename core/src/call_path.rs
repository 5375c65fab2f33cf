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
}

impl Entry {
    /// The functions a path from this entry starts at.
    pub fn handlers(self) -> &'static [&'static str] {
        match self {
            Entry::Sendmsg => &["tcp_sendmsg"],
            Entry::Recvmsg => &["tcp_recvmsg", "udp_recvmsg"],
            Entry::NetRx => &["net_rx_action"],
            Entry::TcpRcv => &["tcp_v4_rcv"],
        }
    }

    /// What a host prints before the path.
    pub fn label(self) -> &'static str {
        match self {
            Entry::Sendmsg => "sendmsg(2)",
            Entry::Recvmsg => "recvmsg(2)",
            Entry::NetRx => "the NET_RX softirq",
            Entry::TcpRcv => "a segment's receive, in the NET_RX softirq",
        }
    }
}

/// One function of a path, at the path's release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    pub name: &'static str,
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

const fn f(name: &'static str, file: &'static str, line: u32) -> Frame {
    Frame {
        name,
        file,
        line,
        inlined: false,
        renamed: None,
    }
}

/// An inlined frame.
const fn i(name: &'static str, file: &'static str, line: u32) -> Frame {
    Frame {
        inlined: true,
        ..f(name, file, line)
    }
}

impl Frame {
    const fn renamed(self, note: &'static str) -> Frame {
        Frame {
            renamed: Some(note),
            ..self
        }
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
    pub frames: &'static [Frame],
}

/// Rows of the kernel_fn table with no path, and why: mechanism, eras, the rows' functions.
#[derive(Clone, Copy, Debug)]
pub struct Gap {
    pub mechanism: &'static str,
    pub eras: &'static [Era],
    pub names: &'static [&'static str],
    pub why: &'static str,
}

const SEND: &str = SendScenario::NAME;
const RX: &str = RxScenario::NAME;
const MPTCP: &str = MptcpScenario::NAME;

const TCP_C: &str = "net/ipv4/tcp.c";
const TCP_IPV4: &str = "net/ipv4/tcp_ipv4.c";
const TCP_INPUT: &str = "net/ipv4/tcp_input.c";
const SOCK_H: &str = "include/net/sock.h";
const SKBUFF_H: &str = "include/linux/skbuff.h";
const SKBUFF_C: &str = "net/core/skbuff.c";
const DEV_C: &str = "net/core/dev.c";
const UDP_C: &str = "net/ipv4/udp.c";
const IXGBE: &str = "drivers/net/ethernet/intel/ixgbe/ixgbe_main.c";

/// `sk_stream_alloc_skb` read in v5.15 (5.15.16, 5.15.189), `tcp_stream_alloc_skb` in
/// v5.17-rc5 and v5.19: renamed in between.
const WAS_SK_STREAM: &str = "was sk_stream_alloc_skb through v5.15";
const BECAME_TCP_STREAM: &str = "became tcp_stream_alloc_skb after v5.15";

// v2.6.33: tcp_sendmsg does the copy itself.
const O_SENDMSG: Frame = f("tcp_sendmsg", TCP_C, 0);
#[rustfmt::skip]
const O_ACK: [Frame; 4] = [
    f("tcp_v4_rcv", TCP_IPV4, 1678), f("tcp_v4_do_rcv", TCP_IPV4, 1554),
    f("tcp_rcv_established", TCP_INPUT, 5282), f("tcp_ack", TCP_INPUT, 3676),
];
// v6.12: tcp_sendmsg locks the socket and calls tcp_sendmsg_locked.
const N_SENDMSG: Frame = f("tcp_sendmsg", TCP_C, 1357);
const N_LOCKED: Frame = f("tcp_sendmsg_locked", TCP_C, 0);
#[rustfmt::skip]
const N_ACK: [Frame; 4] = [
    f("tcp_v4_rcv", TCP_IPV4, 2350), f("tcp_v4_do_rcv", TCP_IPV4, 1915),
    f("tcp_rcv_established", TCP_INPUT, 6173), f("tcp_ack", TCP_INPUT, 4032),
];

/// The v3.x NAPI poll down to ixgbe's receive loop: the lines of net_rx_action's poll,
/// ixgbe_poll's call of the loop.
const fn ixgbe(poll: u32, clean: u32) -> [Frame; 2] {
    [
        f("net_rx_action", DEV_C, poll),
        f("ixgbe_poll", IXGBE, clean),
    ]
}
const V35_POLL: [Frame; 2] = ixgbe(3843, 2389);
const V36_POLL: [Frame; 2] = ixgbe(3939, 2379);

/// ixgbe's receive loop allocating the frame's skb: the loop's line, the two inline
/// wrappers' lines.
#[rustfmt::skip]
const fn rx_skb(clean: u32, wrap: u32, ip_align: u32) -> [Frame; 3] {
    [f("ixgbe_clean_rx_irq", IXGBE, clean), i("netdev_alloc_skb_ip_align", SKBUFF_H, wrap),
     i("__netdev_alloc_skb_ip_align", SKBUFF_H, ip_align)]
}
const V35_SKB: [Frame; 3] = rx_skb(1711, 1737, 1727);
const V36_SKB: [Frame; 3] = rx_skb(1703, 1774, 1764);

/// ixgbe's receive loop handing the frame to GRO, down to TCP's merge.
#[rustfmt::skip]
const fn gro(l: [u32; 8]) -> [Frame; 8] {
    [f("ixgbe_clean_rx_irq", IXGBE, l[0]), f("ixgbe_rx_skb", IXGBE, l[1]),
     f("napi_gro_receive", DEV_C, l[2]), i("__napi_gro_receive", DEV_C, l[3]),
     f("dev_gro_receive", DEV_C, l[4]), f("inet_gro_receive", "net/ipv4/af_inet.c", l[5]),
     f("tcp4_gro_receive", TCP_IPV4, l[6]), f("tcp_gro_receive", TCP_C, l[7])]
}
const V35_GRO: [Frame; 8] = gro([1793, 1423, 3532, 3482, 3396, 1388, 2564, 3071]);
const V36_GRO: [Frame; 8] = gro([1785, 1415, 3628, 3578, 3492, 1402, 2592, 3145]);

/// Every path, each read in its release's source (docs/call-paths.md).
#[rustfmt::skip]
pub static PATHS: &[Path] = &[
    // tcp_sendmsg, v2.6.33.
    p(SEND, &[AllocSkb], "v2.6.33", Entry::Sendmsg, &[f("tcp_sendmsg", TCP_C, 962), f("sk_stream_alloc_skb", TCP_C, 0).renamed(BECAME_TCP_STREAM)]),
    p(SEND, &[AllocPage], "v2.6.33", Entry::Sendmsg, &[f("tcp_sendmsg", TCP_C, 1026), i("sk_stream_alloc_page", SOCK_H, 0)]),
    p(SEND, &[GetPage], "v2.6.33", Entry::Sendmsg, &[O_SENDMSG, i("get_page", "include/linux/mm.h", 0)]),
    p(SEND, &[CopyToLinear], "v2.6.33", Entry::Sendmsg, &[f("tcp_sendmsg", TCP_C, 987), i("skb_add_data", SKBUFF_H, 0)]),
    p(SEND, &[CopyToPage], "v2.6.33", Entry::Sendmsg, &[f("tcp_sendmsg", TCP_C, 1032), i("skb_copy_to_page", SOCK_H, 0)]),
    p(SEND, &[NewFrag], "v2.6.33", Entry::Sendmsg, &[f("tcp_sendmsg", TCP_C, 1050), i("skb_fill_page_desc", SKBUFF_H, 0)]),
    p(SEND, &[Coalesce, ClearPsh], "v2.6.33", Entry::Sendmsg, &[O_SENDMSG]),
    p(SEND, &[Push], "v2.6.33", Entry::Sendmsg, &[O_SENDMSG, i("tcp_push", TCP_C, 0)]),
    p(SEND, &[Ack], "v2.6.33", Entry::TcpRcv, &[O_ACK[0], O_ACK[1], O_ACK[2], O_ACK[3], f("tcp_clean_rtx_queue", TCP_INPUT, 0)]),
    // tcp_sendmsg_locked, v6.12.
    p(SEND, &[AllocSkb], "v6.12", Entry::Sendmsg, &[N_SENDMSG, f("tcp_sendmsg_locked", TCP_C, 1167), f("tcp_stream_alloc_skb", TCP_C, 0).renamed(WAS_SK_STREAM)]),
    p(SEND, &[AllocPage, ReusePage], "v6.12", Entry::Sendmsg, &[N_SENDMSG, f("tcp_sendmsg_locked", TCP_C, 1197), f("sk_page_frag_refill", "net/core/sock.c", 3035), f("skb_page_frag_refill", "net/core/sock.c", 0)]),
    p(SEND, &[GetPage], "v6.12", Entry::Sendmsg, &[N_SENDMSG, f("tcp_sendmsg_locked", TCP_C, 1234), i("page_ref_inc", "include/linux/page_ref.h", 0)]),
    p(SEND, &[CopyToPage], "v6.12", Entry::Sendmsg, &[N_SENDMSG, f("tcp_sendmsg_locked", TCP_C, 1221), i("skb_copy_to_page_nocache", SOCK_H, 0)]),
    p(SEND, &[NewFrag], "v6.12", Entry::Sendmsg, &[N_SENDMSG, f("tcp_sendmsg_locked", TCP_C, 1232), i("skb_fill_page_desc", SKBUFF_H, 0)]),
    p(SEND, &[Coalesce], "v6.12", Entry::Sendmsg, &[N_SENDMSG, f("tcp_sendmsg_locked", TCP_C, 1230), i("skb_frag_size_add", SKBUFF_H, 0)]),
    p(SEND, &[ClearPsh, MarkEor], "v6.12", Entry::Sendmsg, &[N_SENDMSG, N_LOCKED]),
    p(SEND, &[Push], "v6.12", Entry::Sendmsg, &[N_SENDMSG, N_LOCKED, f("tcp_push", TCP_C, 0)]),
    p(SEND, &[Ack], "v6.12", Entry::TcpRcv, &[N_ACK[0], N_ACK[1], N_ACK[2], N_ACK[3], f("tcp_clean_rtx_queue", TCP_INPUT, 0)]),
    // The receive path through ixgbe, v3.5 (seed 001 as posted) and v3.6.
    p(RX, &[NapiPoll], "v3.5", Entry::NetRx, &[f("net_rx_action", DEV_C, 0)]),
    p(RX, &[RxFrame], "v3.5", Entry::NetRx, &[V35_POLL[0], V35_POLL[1], f("ixgbe_clean_rx_irq", IXGBE, 0)]),
    p(RX, &[AllocSkb], "v3.5", Entry::NetRx, &[V35_POLL[0], V35_POLL[1], V35_SKB[0], V35_SKB[1], V35_SKB[2], f("__netdev_alloc_skb", SKBUFF_C, 0)]),
    p(RX, &[FragAlloc, FragCacheRelease, ReusePage], "v3.5", Entry::NetRx, &[V35_POLL[0], V35_POLL[1], V35_SKB[0], V35_SKB[1], V35_SKB[2], f("__netdev_alloc_skb", SKBUFF_C, 357), f("netdev_alloc_frag", SKBUFF_C, 0)]),
    p(RX, &[NewFrag], "v3.5", Entry::NetRx, &[V35_POLL[0], V35_POLL[1], f("ixgbe_clean_rx_irq", IXGBE, 1742), f("ixgbe_add_rx_frag", IXGBE, 0)]),
    p(RX, &[GroMerge], "v3.5", Entry::NetRx, &[V35_POLL[0], V35_POLL[1], V35_GRO[0], V35_GRO[1], V35_GRO[2], V35_GRO[3], V35_GRO[4], V35_GRO[5], V35_GRO[6], V35_GRO[7], f("skb_gro_receive", SKBUFF_C, 0)]),
    p(RX, &[GroFlush], "v3.5", Entry::NetRx, &[V35_POLL[0], f("ixgbe_poll", IXGBE, 2397), f("napi_complete", DEV_C, 3758), f("napi_gro_flush", DEV_C, 0)]),
    p(RX, &[NapiPoll], "v3.6", Entry::NetRx, &[f("net_rx_action", DEV_C, 0)]),
    p(RX, &[RxFrame], "v3.6", Entry::NetRx, &[V36_POLL[0], V36_POLL[1], f("ixgbe_clean_rx_irq", IXGBE, 0)]),
    p(RX, &[AllocSkb], "v3.6", Entry::NetRx, &[V36_POLL[0], V36_POLL[1], V36_SKB[0], V36_SKB[1], V36_SKB[2], f("__netdev_alloc_skb", SKBUFF_C, 0)]),
    p(RX, &[FragAlloc, FragCacheRelease, ReusePage], "v3.6", Entry::NetRx, &[V36_POLL[0], V36_POLL[1], V36_SKB[0], V36_SKB[1], V36_SKB[2], f("__netdev_alloc_skb", SKBUFF_C, 425), f("__netdev_alloc_frag", SKBUFF_C, 0)]),
    p(RX, &[NewFrag], "v3.6", Entry::NetRx, &[V36_POLL[0], V36_POLL[1], f("ixgbe_clean_rx_irq", IXGBE, 1734), f("ixgbe_add_rx_frag", IXGBE, 0)]),
    p(RX, &[GroMerge], "v3.6", Entry::NetRx, &[V36_POLL[0], V36_POLL[1], V36_GRO[0], V36_GRO[1], V36_GRO[2], V36_GRO[3], V36_GRO[4], V36_GRO[5], V36_GRO[6], V36_GRO[7], f("skb_gro_receive", SKBUFF_C, 0)]),
    p(RX, &[GroFlush], "v3.6", Entry::NetRx, &[V36_POLL[0], f("ixgbe_poll", IXGBE, 2387), f("napi_complete", DEV_C, 3854), f("napi_gro_flush", DEV_C, 0)]),
    // Either era: recvmsg's copy, the softirq's poll.
    p(RX, &[CopyToUser], "v3.5", Entry::Recvmsg, &[f("tcp_recvmsg", TCP_C, 0)]),
    p(RX, &[CopyToUser], "v3.6", Entry::Recvmsg, &[f("tcp_recvmsg", TCP_C, 0)]),
    p(RX, &[CopyToUser], "v6.12", Entry::Recvmsg, &[f("tcp_recvmsg", TCP_C, 2851), f("tcp_recvmsg_locked", TCP_C, 0)]),
    p(RX, &[NapiPoll], "v6.12", Entry::NetRx, &[f("net_rx_action", DEV_C, 0)]),
    p(RX, &[CopyToUser], "v3.5", Entry::Recvmsg, &[f("udp_recvmsg", UDP_C, 0)]),
    p(RX, &[CopyToUser], "v3.6", Entry::Recvmsg, &[f("udp_recvmsg", UDP_C, 0)]),
    p(RX, &[CopyToUser], "v6.12", Entry::Recvmsg, &[f("udp_recvmsg", UDP_C, 0)]),
    p(RX, &[RxDrop], "v3.5", Entry::TcpRcv, &[f("tcp_v4_rcv", TCP_IPV4, 0)]),
    p(RX, &[RxDrop], "v3.6", Entry::TcpRcv, &[f("tcp_v4_rcv", TCP_IPV4, 0)]),
    p(RX, &[RxDrop], "v6.12", Entry::TcpRcv, &[f("tcp_v4_rcv", TCP_IPV4, 0)]),
    p(RX, &[RxCacheTake], "v5.11", Entry::TcpRcv, &[f("tcp_v4_rcv", TCP_IPV4, 0)]),
];

const fn p(
    mechanism: &'static str,
    kinds: &'static [EventKind],
    tag: &'static str,
    entry: Entry,
    frames: &'static [Frame],
) -> Path {
    Path {
        mechanism,
        kinds,
        tag,
        entry,
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
          why: "a page is put from several places (a freed skb's frags, the socket's page switch, its close); the event does not say which" },
    Gap { mechanism: SEND, eras: ALL_SEND, names: &["sk_wmem_free_skb", "tcp_wmem_free_skb"],
          why: "an skb is freed on an ACK (tcp_clean_rtx_queue) or at close (tcp_write_queue_purge); the event does not say which" },
    Gap { mechanism: SEND, eras: ALL_SEND, names: &["tcp_mark_push"],
          why: "tcp_sendmsg calls it at several places and through tcp_push; the event does not say which" },
    Gap { mechanism: SEND, eras: ALL_SEND, names: &["tcp_transmit_skb", "__skb_linearize", "validate_xmit_skb", "tcp_tso_segment", "tcp_gso_segment"],
          why: "sent from sendmsg's push or later (an ACK, TSQ), and below it through IP and the device layer, which were not read" },
    Gap { mechanism: RX, eras: RX_ALL, names: &["alloc_pages", "alloc_pages_node", "get_page", "put_page", "__put_single_page", "__folio_put", "skb_free_frag", "page_frag_free"],
          why: "a page is taken or put by the driver, the frag cache and every skb free; the event does not say which caller" },
    Gap { mechanism: RX, eras: NEW, names: &["napi_gro_receive", "napi_alloc_skb", "page_frag_alloc_1k", "skb_add_rx_frag", "__page_frag_alloc_align", "skb_gro_receive", "napi_gro_flush"],
          why: "the model's v6.12 driver is either of two (napi_alloc_skb's or ixgbe in legacy-rx mode), and the trace does not say which: the frames of its poll are unknown" },
    Gap { mechanism: RX, eras: RX_ALL, names: &["tun_get_user", "napi_gro_frags", "napi_get_frags", "tun_napi_alloc_frags"],
          why: "tun's napi-frags path (write(2) on the tun device) was not read" },
    Gap { mechanism: RX, eras: RX_ALL, names: &["tcp_queue_rcv", "skb_try_coalesce", "sk_add_backlog", "tcp_add_backlog", "__release_sock", "__kfree_skb", "sk_eat_skb",
              "skb_attempt_defer_free", "kick_defer_list_purge", "skb_defer_free_flush", "__udp_queue_rcv_skb", "__udp_enqueue_schedule_skb", "__udp4_lib_rcv",
              "skb_free_datagram_locked", "skb_consume_udp"],
          why: "the socket's side: reached after GRO through IP's receive (not read), from a lock's release, or from recvmsg at several places" },
    Gap { mechanism: MPTCP, eras: &[Era::V5_11Rc1], names: &[],
          why: "no v5.11-rc1 tree was read, and v5.11's differs (its __mptcp_do_alloc_tx_skb calls alloc_skb_fclone itself), so no later release stands in" },
];

/// An event's path: its entry, its frames down to its kernel function, the release read.
#[derive(Clone, Copy, Debug)]
pub struct CallPath {
    pub entry: Entry,
    pub frames: &'static [Frame],
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

/// The path of an event of `mechanism` in `era` and `flow`, where one was read.
pub fn call_path(mechanism: &str, era: Era, flow: Flow, e: &Event) -> Option<CallPath> {
    let at = kernel_fn(mechanism, era, flow, e)?;
    let p = path_of(mechanism, at.kind, at.tag, at.name)?;
    Some(CallPath {
        entry: p.entry,
        frames: p.frames,
        at,
    })
}

/// The path ending at `name` for events of `kind` of `mechanism` at `tag`.
fn path_of(mechanism: &str, kind: EventKind, tag: &str, name: &str) -> Option<&'static Path> {
    PATHS.iter().find(|p| {
        p.mechanism == mechanism
            && p.tag == tag
            && p.kinds.contains(&kind)
            && p.frames.last().is_some_and(|f| f.name == name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel_fn::{Row, TABLE};
    use std::collections::BTreeSet;

    /// The rows a path could end at: same mechanism, one of its kinds, its function, an era
    /// that links its release.
    fn rows_of(p: &Path) -> Vec<&'static Row> {
        let last = p.frames.last().expect("a frame");
        TABLE
            .iter()
            .filter(|r| r.mechanism == p.mechanism && p.kinds.contains(&r.kind))
            .filter(|r| r.name == last.name && r.eras.iter().any(|&e| r.tag(e) == p.tag))
            .collect()
    }

    /// Each path starts at its entry's handler, names no function twice, and ends at the
    /// function (and file) of a row for each of its kinds at its release, whose own line is
    /// the statement's (so the last frame pins none).
    #[test]
    fn each_path_is_well_formed() {
        for p in PATHS {
            let (first, last) = (p.frames[0], *p.frames.last().unwrap());
            assert!(p.entry.handlers().contains(&first.name), "{p:?}");
            let names: BTreeSet<_> = p.frames.iter().map(|f| f.name).collect();
            assert_eq!(names.len(), p.frames.len(), "a frame twice: {p:?}");
            let rows = rows_of(p);
            for k in p.kinds {
                assert!(rows.iter().any(|r| r.kind == *k), "{k} at {}: {p:?}", p.tag);
            }
            assert!(rows.iter().all(|r| r.file == last.file), "{p:?}");
            assert_eq!(last.line, 0, "{p:?}");
            let twice = PATHS
                .iter()
                .filter(|q| q.mechanism == p.mechanism && q.tag == p.tag)
                .filter(|q| q.frames.last() == p.frames.last())
                .filter(|q| q.kinds.iter().any(|k| p.kinds.contains(k)))
                .count();
            assert_eq!(twice, 1, "two paths: {p:?}");
        }
    }

    /// Every row of the kernel_fn table, in each era it covers, has a path or is a gap with a
    /// reason, never both.
    #[test]
    fn every_row_has_a_path_or_a_gap() {
        for r in TABLE {
            for &era in r.eras {
                let path = path_of(r.mechanism, r.kind, r.tag(era), r.name);
                let gap = GAPS.iter().find(|g| {
                    g.mechanism == r.mechanism
                        && g.eras.contains(&era)
                        && (g.names.is_empty() || g.names.contains(&r.name))
                });
                assert!(
                    path.is_some() != gap.is_some(),
                    "{} {} {} at {}: path {path:?}, gap {gap:?}",
                    r.mechanism,
                    r.kind,
                    r.name,
                    era.name()
                );
            }
        }
        for g in GAPS {
            assert!(!g.why.is_empty(), "{g:?}");
        }
    }

    /// The path of the first event of `kind` in a run of `mechanism` and `variant` (one
    /// sendmsg of 2000 bytes, on a device without GSO for tcp_sendmsg, or one frame's arrival).
    fn path(mechanism: &str, variant: &str, kind: EventKind) -> Option<CallPath> {
        let (op, device) = match mechanism {
            RX => (r#"{ op = "arrive", frames = 1 }"#, ""),
            SEND => (
                r#"{ op = "sendmsg", bytes = 2000 }"#,
                "[device]\ngso = false\n",
            ),
            _ => (r#"{ op = "sendmsg", bytes = 2000 }"#, ""),
        };
        let text =
            format!("mechanism = \"{mechanism}\"\nvariant = \"{variant}\"\nops = [{op}]\n{device}");
        let t = crate::Scenario::parse(&text).unwrap();
        let t = t.run(&crate::RunOptions::default()).unwrap();
        let mut events = t.steps.iter().flat_map(|s| &s.events);
        let e = events
            .find(|e| e.kind() == kind)
            .unwrap_or_else(|| panic!("no {kind} in {variant}"));
        t.call_path(e)
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

    /// A frame as docs/call-paths.md writes it: `name`:line, `(inlined)`.
    fn chain(p: &Path) -> String {
        let frame = |f: &Frame| {
            let mut s = format!("`{}`", f.name);
            if f.line > 0 {
                s += &format!(":{}", f.line);
            }
            if f.inlined {
                s += " (inlined)";
            }
            s
        };
        p.frames.iter().map(frame).collect::<Vec<_>>().join(" → ")
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
                let (tag, m, c) = (p.tag, p.mechanism, chain(p));
                format!("| {tag} | {m} | {} | {c} |", kinds.join(", "))
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
