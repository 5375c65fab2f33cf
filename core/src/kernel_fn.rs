//! What each event stands for in the kernel: per mechanism and era, the kernel function and
//! source file that do it, and where the release is pinned, the line of the statement that
//! does it, as one data table keyed by [`EventKind`].

use crate::consts::Era;
use crate::events::{Event, EventKind, EventKind::*};
use crate::mechanism::Mechanism;
use crate::{mptcp::MptcpScenario, rx::RxScenario, send::SendScenario};

/// A kernel function: its name and the source file that defines it, at the release `tag`
/// (usually the era's; a function that lives only in a later release names that one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelFn {
    pub name: &'static str,
    pub file: &'static str,
    pub tag: &'static str,
    /// Why `tag` is not the trace's era, the one kernel its lane is labelled with (the row's
    /// [`At::why`]); `None` where it is, and a host shows no release.
    pub why: Option<&'static str>,
    /// The function that takes over what `name` made, where the work is split in two
    /// (MPTCP from v5.11-rc1: `__mptcp_do_alloc_tx_skb` allocates, `sk_stream_alloc_skb` hands over).
    pub then: Option<&'static str>,
    /// The event kind it stands for (which statement of `name` does the work).
    pub kind: EventKind,
}

impl KernelFn {
    /// The identifier on Elixir, the Bootlin cross-referencer, at this exact release.
    pub fn url(&self) -> String {
        elixir_url(self.tag, self.name)
    }

    /// The line of `file` at `tag` whose statement does the work, where [`LINES`] pins it;
    /// `None` links the function only.
    pub fn line(&self) -> Option<u32> {
        LINES
            .iter()
            .find(|s| s.0 == self.tag && s.1 == self.name && s.2 == self.kind)
            .map(|s| s.3)
    }

    /// The statement's line on Elixir at this release, where [`LINES`] pins it.
    pub fn line_url(&self) -> Option<String> {
        let (tag, file) = (self.tag, self.file);
        self.line()
            .map(|n| format!("https://elixir.bootlin.com/linux/{tag}/source/{file}#L{n}"))
    }

    /// The name as a host prints it: `name`, or `name → then`.
    pub fn label(&self) -> String {
        match self.then {
            Some(then) => format!("{} → {then}", self.name),
            None => self.name.to_string(),
        }
    }
}

/// `https://elixir.bootlin.com/linux/<tag>/C/ident/<name>`.
pub(crate) fn elixir_url(tag: &str, name: &str) -> String {
    format!("https://elixir.bootlin.com/linux/{tag}/C/ident/{name}")
}

/// A statement read in a release: the release, the function, the event kind it does, the
/// line, and identifiers that stand on it.
pub(crate) type Stmt = (&'static str, &'static str, EventKind, u32, &'static str);

/// One row: the mechanism and event kind, the trace eras it covers, the kernel function, its
/// file, and the release to link when not the era's own (a feature of another release).
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub mechanism: &'static str,
    pub kind: EventKind,
    pub eras: &'static [Era],
    pub name: &'static str,
    pub file: &'static str,
    pub at: Option<At>,
    pub then: Option<&'static str>,
    /// Only for one kind of free of the event kind, which the kernel does by another function
    /// than the others.
    pub only: Option<Only>,
    /// Only for a UDP flow (`Trace::udp`), where its socket's function is UDP's; a UDP flow
    /// takes the other rows where it has none of its own.
    pub udp: bool,
    /// Only for frames through tun's IFF_NAPI_FRAGS path (`Trace::napi_frags`), where the
    /// driver's function is tun's; such a flow takes the other rows where it has none.
    pub napi_frags: bool,
}

/// The release a row links instead of its eras' own, and why, in words a host shows beside
/// the link: a lane names one kernel, its era, and a link to another release says why.
#[derive(Clone, Copy, Debug)]
pub struct At {
    pub tag: &'static str,
    /// A clause that names `tag`: "read in v5.11, where ...".
    pub why: &'static str,
}

/// A free the kernel does by another function than the other frees of its event kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Only {
    /// The put of an skb's head fragment (`Event::frees_head`): v6.12 `skb_free_frag`.
    Head,
    /// The free of an skb recvmsg has read (`Event::FreeSkb`'s `read`).
    Read,
    /// A socket's own page dropped as the socket is destroyed (`Event::PutPage`'s
    /// `destroy`): 2.6.33 `tcp_v4_destroy_sock`'s `__free_page`.
    Destroy,
}

impl Only {
    /// Which such free `e` is, if it is one.
    pub fn of(e: &Event) -> Option<Only> {
        match e {
            _ if e.frees_head() => Some(Only::Head),
            Event::FreeSkb { read: true, .. } => Some(Only::Read),
            Event::PutPage { destroy: true, .. } => Some(Only::Destroy),
            _ => None,
        }
    }
}

/// What picks a flow's rows beside its mechanism and era: its socket's protocol and its
/// driver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flow {
    pub udp: bool,
    pub napi_frags: bool,
}

impl Flow {
    /// A TCP flow through a NIC's own driver.
    pub const TCP: Flow = Flow {
        udp: false,
        napi_frags: false,
    };
}

const fn row(
    mechanism: &'static str,
    kind: EventKind,
    eras: &'static [Era],
    name: &'static str,
    file: &'static str,
) -> Row {
    Row {
        mechanism,
        kind,
        eras,
        name,
        file,
        at: None,
        then: None,
        only: None,
        udp: false,
        napi_frags: false,
    }
}

impl Row {
    const fn at(self, at: At) -> Row {
        Row {
            at: Some(at),
            ..self
        }
    }

    const fn then(self, name: &'static str) -> Row {
        Row {
            then: Some(name),
            ..self
        }
    }

    const fn only(self, only: Only) -> Row {
        Row {
            only: Some(only),
            ..self
        }
    }

    const fn udp(self) -> Row {
        Row { udp: true, ..self }
    }

    const fn napi_frags(self) -> Row {
        Row {
            napi_frags: true,
            ..self
        }
    }

    /// The release each covered era links.
    pub fn tag(&self, era: Era) -> &'static str {
        self.at.map_or(era.name(), |a| a.tag)
    }

    /// Why `era` links another release than its own, where it does.
    pub fn why(&self, era: Era) -> Option<&'static str> {
        self.at.filter(|a| a.tag != era.name()).map(|a| a.why)
    }
}

const SEND: &str = SendScenario::NAME;
const RX: &str = RxScenario::NAME;
const MPTCP: &str = MptcpScenario::NAME;

const OLD: &[Era] = &[Era::V2_6_33];
const NEW: &[Era] = &[Era::V6_12];
const RX_OLD: &[Era] = &[Era::V3_5, Era::V3_6];
const RX_ALL: &[Era] = &[Era::V3_5, Era::V3_6, Era::V6_12];
const V3_5: &[Era] = &[Era::V3_5];
const V3_6: &[Era] = &[Era::V3_6];
/// Both MPTCP lanes: net-next of November 2020, labelled with v5.11-rc1, the first tag with
/// seed 003 (`tcp_build_frag` is not in v5.10). No v5.11-rc1 tree was read, so its functions
/// are linked without a line (docs/kernel-lines.md).
const V5_11_RC1: &[Era] = &[Era::V5_11Rc1];
/// Seed 002's park, in net-next of March 2019; from 5.2 final a sysctl (off by default)
/// gates it, so no later release parks as the model does (docs/kernel-lines.md).
#[rustfmt::skip]
const PARK_AT: At = At { tag: "v5.2-rc1", why: "linked at v5.2-rc1, the release seed 002's cache was merged for (later ones gate it behind a sysctl)" };
/// No 5.2-rc1 tree was read; v5.11 holds seed 002's take unchanged (docs/kernel-lines.md).
#[rustfmt::skip]
const TAKE_AT: At = At { tag: "v5.11", why: "read in v5.11, where seed 002's take is unchanged since 5.2-rc1" };
/// skb_attempt_defer_free's per-CPU lists, with a v3.x allocator: a pairing no kernel had.
#[rustfmt::skip]
const DEFER_AT: At = At { tag: "v6.12", why: "linked at v6.12: v3.x has no per-CPU defer lists" };
/// tun's IFF_NAPI_FRAGS path, with a v3.x allocator: a driver no v3.x kernel had.
#[rustfmt::skip]
const TUN_AT: At = At { tag: "v6.12", why: "linked at v6.12: tun's napi-frags path came in v4.15, after v3.x" };

/// Every event kind of every mechanism, per era, as the kernel names it. Each name was read
/// in that release's source; docs/kernel-functions.md lists the trees read.
#[rustfmt::skip]
pub static TABLE: &[Row] = &[
    // tcp_sendmsg, 2.6.33 (pre-2010, kumar-2010).
    row(SEND, AllocSkb, OLD, "sk_stream_alloc_skb", "net/ipv4/tcp.c"),
    row(SEND, AllocPage, OLD, "sk_stream_alloc_page", "include/net/sock.h"),
    row(SEND, GetPage, OLD, "get_page", "include/linux/mm.h"),
    row(SEND, PutPage, OLD, "put_page", "mm/swap.c"),
    row(SEND, PutPage, OLD, "tcp_v4_destroy_sock", "net/ipv4/tcp_ipv4.c").only(Only::Destroy).then("__free_page"),
    row(SEND, FreePage, OLD, "free_hot_page", "mm/page_alloc.c"),
    row(SEND, CopyToLinear, OLD, "skb_add_data", "include/linux/skbuff.h"),
    row(SEND, CopyToPage, OLD, "skb_copy_to_page", "include/net/sock.h"),
    row(SEND, NewFrag, OLD, "skb_fill_page_desc", "include/linux/skbuff.h"),
    row(SEND, Coalesce, OLD, "tcp_sendmsg", "net/ipv4/tcp.c"),
    row(SEND, MarkPsh, OLD, "tcp_mark_push", "net/ipv4/tcp.c"),
    row(SEND, ClearPsh, OLD, "tcp_sendmsg", "net/ipv4/tcp.c"),
    row(SEND, Push, OLD, "tcp_push", "net/ipv4/tcp.c"),
    row(SEND, Linearize, OLD, "__skb_linearize", "include/linux/skbuff.h"),
    row(SEND, Xmit, OLD, "tcp_transmit_skb", "net/ipv4/tcp_output.c"),
    row(SEND, Segment, OLD, "tcp_tso_segment", "net/ipv4/tcp.c"),
    row(SEND, Ack, OLD, "tcp_clean_rtx_queue", "net/ipv4/tcp_input.c"),
    row(SEND, FreeSkb, OLD, "sk_wmem_free_skb", "include/net/sock.h"),
    // tcp_sendmsg_locked, v6.12 (modern).
    row(SEND, AllocSkb, NEW, "tcp_stream_alloc_skb", "net/ipv4/tcp.c"),
    row(SEND, AllocPage, NEW, "skb_page_frag_refill", "net/core/sock.c"),
    row(SEND, ReusePage, NEW, "skb_page_frag_refill", "net/core/sock.c"),
    row(SEND, GetPage, NEW, "page_ref_inc", "include/linux/page_ref.h"),
    row(SEND, PutPage, NEW, "put_page", "include/linux/mm.h"),
    row(SEND, FreePage, NEW, "__folio_put", "mm/swap.c"),
    row(SEND, CopyToPage, NEW, "skb_copy_to_page_nocache", "include/net/sock.h"),
    row(SEND, NewFrag, NEW, "skb_fill_page_desc", "include/linux/skbuff.h"),
    row(SEND, Coalesce, NEW, "skb_frag_size_add", "include/linux/skbuff.h"),
    row(SEND, MarkPsh, NEW, "tcp_mark_push", "net/ipv4/tcp.c"),
    row(SEND, ClearPsh, NEW, "tcp_sendmsg_locked", "net/ipv4/tcp.c"),
    row(SEND, MarkEor, NEW, "tcp_sendmsg_locked", "net/ipv4/tcp.c"),
    row(SEND, Push, NEW, "tcp_push", "net/ipv4/tcp.c"),
    row(SEND, Linearize, NEW, "validate_xmit_skb", "net/core/dev.c"),
    row(SEND, Xmit, NEW, "tcp_transmit_skb", "net/ipv4/tcp_output.c"),
    row(SEND, Segment, NEW, "tcp_gso_segment", "net/ipv4/tcp_offload.c"),
    row(SEND, Ack, NEW, "tcp_clean_rtx_queue", "net/ipv4/tcp_input.c"),
    row(SEND, FreeSkb, NEW, "tcp_wmem_free_skb", "include/net/tcp.h"),
    // The receive path, v3.5 (pre-2012, duyck-2012) and v3.6 (duyck-3.6).
    row(RX, NapiPoll, RX_ALL, "net_rx_action", "net/core/dev.c"),
    row(RX, RxFrame, RX_OLD, "ixgbe_clean_rx_irq", IXGBE),
    row(RX, AllocPage, RX_OLD, "alloc_pages", "include/linux/gfp.h"),
    row(RX, AllocSkb, RX_OLD, "__netdev_alloc_skb", "net/core/skbuff.c"),
    row(RX, NewFrag, RX_OLD, "ixgbe_add_rx_frag", IXGBE),
    row(RX, GetPage, RX_OLD, "get_page", "include/linux/mm.h"),
    row(RX, PutPage, RX_OLD, "put_page", "mm/swap.c"),
    row(RX, FreePage, RX_OLD, "__put_single_page", "mm/swap.c"),
    row(RX, FragAlloc, V3_5, "netdev_alloc_frag", "net/core/skbuff.c"),
    row(RX, FragAlloc, V3_6, "__netdev_alloc_frag", "net/core/skbuff.c"),
    row(RX, FragCacheRelease, V3_5, "netdev_alloc_frag", "net/core/skbuff.c"),
    row(RX, FragCacheRelease, V3_6, "__netdev_alloc_frag", "net/core/skbuff.c"),
    row(RX, ReusePage, V3_5, "netdev_alloc_frag", "net/core/skbuff.c"),
    row(RX, ReusePage, V3_6, "__netdev_alloc_frag", "net/core/skbuff.c"),
    row(RX, GroMerge, RX_OLD, "skb_gro_receive", "net/core/skbuff.c"),
    row(RX, GroFlush, RX_OLD, "napi_gro_flush", "net/core/dev.c"),
    row(RX, QueueRcv, RX_OLD, "tcp_queue_rcv", "net/ipv4/tcp_input.c"),
    row(RX, RcvCoalesce, RX_OLD, "skb_try_coalesce", "net/core/skbuff.c").then("kfree_skb_partial"),
    row(RX, BacklogAdd, RX_OLD, "sk_add_backlog", "include/net/sock.h"),
    row(RX, CopyToUser, RX_OLD, "tcp_recvmsg", "net/ipv4/tcp.c"),
    // The receive path, v6.12 (modern). Its two drivers, one that cuts the whole frame from
    // napi_alloc_cache (napi_alloc_skb) and ixgbe in legacy-rx mode (by default v6.12's ixgbe
    // builds skbs around its own pages, ixgbe_build_skb), both hand the frame to GRO.
    row(RX, RxFrame, NEW, "napi_gro_receive", "net/core/gro.c"),
    row(RX, AllocSkb, NEW, "napi_alloc_skb", "net/core/skbuff.c"),
    row(RX, FragAlloc1k, NEW, "page_frag_alloc_1k", "net/core/skbuff.c"),
    row(RX, NewFrag, NEW, "skb_add_rx_frag", "include/linux/skbuff.h"),
    // Every v6.12 rx page (page_frag_cache's refill, page_frag_alloc_1k, ixgbe's
    // dev_alloc_pages) comes from alloc_pages_node(NUMA_NO_NODE, ...), not alloc_pages.
    row(RX, AllocPage, NEW, "alloc_pages_node", "include/linux/gfp.h"),
    row(RX, PutPage, NEW, "put_page", "include/linux/mm.h"),
    row(RX, FreePage, NEW, "__folio_put", "mm/swap.c"),
    row(RX, PutPage, NEW, "skb_free_frag", "include/linux/skbuff.h").only(Only::Head).then("page_frag_free"),
    row(RX, FreePage, NEW, "page_frag_free", PAGE_FRAG).only(Only::Head),
    row(RX, FragAlloc, NEW, "__page_frag_alloc_align", PAGE_FRAG),
    row(RX, FragCacheRelease, NEW, "__page_frag_alloc_align", PAGE_FRAG),
    row(RX, ReusePage, NEW, "__page_frag_alloc_align", PAGE_FRAG),
    row(RX, GroMerge, NEW, "skb_gro_receive", "net/core/gro.c"),
    row(RX, GroChain, NEW, "skb_gro_receive", "net/core/gro.c"),
    row(RX, GroFlush, NEW, "napi_gro_flush", "net/core/gro.c"),
    row(RX, QueueRcv, NEW, "tcp_queue_rcv", "net/ipv4/tcp_input.c"),
    row(RX, RcvCoalesce, NEW, "skb_try_coalesce", "net/core/skbuff.c").then("kfree_skb_partial"),
    row(RX, BacklogAdd, NEW, "tcp_add_backlog", "net/ipv4/tcp_ipv4.c"),
    row(RX, CopyToUser, NEW, "tcp_recvmsg_locked", "net/ipv4/tcp.c"),
    // A UDP flow's socket: v3.5 and v3.6 (udp_queue_rcv_skb), v6.12 (udp_queue_rcv_one_skb).
    row(RX, QueueRcv, RX_OLD, "__udp_queue_rcv_skb", UDP).then("sock_queue_rcv_skb").udp(),
    row(RX, QueueRcv, NEW, "__udp_enqueue_schedule_skb", UDP).udp(),
    row(RX, CopyToUser, RX_ALL, "udp_recvmsg", UDP).udp(),
    row(RX, RxDrop, RX_ALL, "__udp4_lib_rcv", UDP).udp(),
    row(RX, FreeSkb, RX_OLD, "skb_free_datagram_locked", "net/core/datagram.c").udp().only(Only::Read),
    row(RX, FreeSkb, NEW, "skb_consume_udp", UDP).udp().only(Only::Read),
    // tun's IFF_NAPI_FRAGS path (v6.12): tun_get_user feeds one frame to napi_gro_frags under
    // local_bh_disable, with no NAPI poll; napi_get_frags allocates the head and
    // tun_napi_alloc_frags fills the frags. Before v4.15 tun had no such path: with a v3.x
    // allocator the driver is a counterfactual, linked where it lives, v6.12.
    row(RX, NapiPoll, RX_ALL, "tun_get_user", TUN).at(TUN_AT).napi_frags(),
    row(RX, RxFrame, RX_ALL, "napi_gro_frags", "net/core/gro.c").at(TUN_AT).napi_frags(),
    row(RX, AllocSkb, RX_ALL, "napi_get_frags", "net/core/gro.c").at(TUN_AT).then("napi_alloc_skb").napi_frags(),
    row(RX, NewFrag, RX_ALL, "tun_napi_alloc_frags", TUN).at(TUN_AT).napi_frags(),
    // napi_complete after every napi_gro_frags: GRO flushes each frame.
    row(RX, GroFlush, RX_ALL, "tun_get_user", TUN).at(TUN_AT).napi_frags(),
    // Either allocator era: the socket side, and each rx cache in the release it lives in.
    row(RX, BacklogProcess, RX_ALL, "__release_sock", "net/core/sock.c"),
    row(RX, RxDrop, RX_ALL, "tcp_v4_rcv", "net/ipv4/tcp_ipv4.c"),
    row(RX, FreeSkb, RX_ALL, "__kfree_skb", "net/core/skbuff.c"),
    row(RX, RxCachePark, RX_ALL, "sk_eat_skb", "include/net/sock.h").at(PARK_AT),
    // v5.11's take is seed 002's lines unchanged, in a release whose file was read (no
    // 5.2-rc1 tree was); its park is not: 5.2 put it behind a sysctl (docs/kernel-lines.md).
    row(RX, RxCacheTake, RX_ALL, "tcp_v4_rcv", "net/ipv4/tcp_ipv4.c").at(TAKE_AT),
    row(RX, DeferFree, RX_ALL, "skb_attempt_defer_free", "net/core/skbuff.c").at(DEFER_AT),
    row(RX, DeferKick, RX_ALL, "kick_defer_list_purge", "net/core/dev.c").at(DEFER_AT),
    row(RX, DeferFlush, RX_ALL, "skb_defer_free_flush", "net/core/dev.c").at(DEFER_AT),
    // MPTCP's send path (pre-2020, abeni-2020), at the lanes' own tag.
    row(MPTCP, AllocSkb, V5_11_RC1, "__mptcp_do_alloc_tx_skb", MPTCP_C).then("sk_stream_alloc_skb"),
    row(MPTCP, AllocPage, V5_11_RC1, "skb_page_frag_refill", "net/core/sock.c"),
    row(MPTCP, ReusePage, V5_11_RC1, "skb_page_frag_refill", "net/core/sock.c"),
    row(MPTCP, GetPage, V5_11_RC1, "get_page", "include/linux/mm.h"),
    row(MPTCP, PutPage, V5_11_RC1, "put_page", "include/linux/mm.h"),
    row(MPTCP, FreePage, V5_11_RC1, "__put_page", "mm/swap.c"),
    row(MPTCP, CarveDfrag, V5_11_RC1, "mptcp_carve_data_frag", MPTCP_C),
    row(MPTCP, CopyToDfrag, V5_11_RC1, "mptcp_sendmsg", MPTCP_C),
    row(MPTCP, PickSubflow, V5_11_RC1, "mptcp_subflow_get_send", MPTCP_C),
    row(MPTCP, SendmsgFrag, V5_11_RC1, "mptcp_sendmsg_frag", MPTCP_C),
    row(MPTCP, MarkEor, V5_11_RC1, "mptcp_sendmsg_frag", MPTCP_C),
    row(MPTCP, ClearPsh, V5_11_RC1, "mptcp_sendmsg_frag", MPTCP_C),
    row(MPTCP, NewMapping, V5_11_RC1, "mptcp_sendmsg_frag", MPTCP_C),
    row(MPTCP, ExtendMapping, V5_11_RC1, "mptcp_sendmsg_frag", MPTCP_C),
    row(MPTCP, NewFrag, V5_11_RC1, "tcp_build_frag", "net/ipv4/tcp.c"),
    row(MPTCP, Coalesce, V5_11_RC1, "tcp_build_frag", "net/ipv4/tcp.c"),
    row(MPTCP, MarkPsh, V5_11_RC1, "tcp_mark_push", "net/ipv4/tcp.c"),
    row(MPTCP, SubflowXmit, V5_11_RC1, "tcp_write_xmit", "net/ipv4/tcp_output.c"),
    row(MPTCP, ClearDfrag, V5_11_RC1, "__mptcp_clean_una", MPTCP_C),
    row(MPTCP, FreeSkb, V5_11_RC1, "sk_wmem_free_skb", "include/net/sock.h"),
];

/// Where the table pins it, the line of the statement that does the work, per release:
/// release, function, event kind, line, identifiers that stand on the line. Apart from
/// [`TABLE`], so a host that links no line (the playground, for now) carries none of it.
/// docs/kernel-lines.md records how each was read.
#[rustfmt::skip]
pub(crate) static LINES: &[Stmt] = &[
    ("v2.6.33", "sk_stream_alloc_skb", AllocSkb, 686, "alloc_skb_fclone"),
    ("v2.6.33", "sk_stream_alloc_page", AllocPage, 1456, "alloc_pages"),
    ("v2.6.33", "get_page", GetPage, 313, "atomic_inc"),
    ("v2.6.33", "put_page", PutPage, 76, "put_page_testzero"),
    ("v2.6.33", "tcp_v4_destroy_sock", PutPage, 1934, "__free_page(sk->sk_sndmsg_page)"),
    ("v2.6.33", "free_hot_page", FreePage, 1140, "free_hot_cold_page"),
    ("v2.6.33", "skb_add_data", CopyToLinear, 1609, "copy_from_user(skb_put"),
    ("v2.6.33", "skb_copy_to_page", CopyToPage, 1243, "copy_from_user(page_address(page) + off"),
    ("v2.6.33", "skb_fill_page_desc", NewFrag, 1065, "nr_frags = i + 1"),
    ("v2.6.33", "tcp_sendmsg", Coalesce, 1047, "frags[i - 1].size +="),
    ("v2.6.33", "tcp_mark_push", MarkPsh, 513, "TCPCB_FLAG_PSH"),
    ("v2.6.33", "tcp_sendmsg", ClearPsh, 1063, "&= ~TCPCB_FLAG_PSH"),
    ("v2.6.33", "tcp_push", Push, 556, "__tcp_push_pending_frames"),
    ("v2.6.33", "__skb_linearize", Linearize, 1630, "__pskb_pull_tail"),
    ("v2.6.33", "tcp_transmit_skb", Xmit, 884, "queue_xmit("),
    ("v2.6.33", "tcp_tso_segment", Segment, 2636, "skb_segment("),
    ("v2.6.33", "tcp_clean_rtx_queue", Ack, 3283, "tcp_unlink_write_queue"),
    ("v2.6.33", "sk_wmem_free_skb", FreeSkb, 895, "__kfree_skb"),
    ("v6.12", "tcp_stream_alloc_skb", AllocSkb, 885, "alloc_skb_fclone"),
    ("v6.12", "skb_page_frag_refill", AllocPage, 3015, "alloc_pages("),
    ("v6.12", "skb_page_frag_refill", ReusePage, 3002, "page_ref_count(pfrag->page) == 1"),
    ("v6.12", "page_ref_inc", GetPage, 153, "atomic_inc"),
    ("v6.12", "put_page", PutPage, 1550, "folio_put("),
    ("v6.12", "__folio_put", FreePage, 112, "free_unref_page"),
    ("v6.12", "skb_copy_to_page_nocache", CopyToPage, 2197, "skb_do_copy_data_nocache"),
    ("v6.12", "skb_fill_page_desc", NewFrag, 2601, "skb_fill_netmem_desc(skb, i"),
    ("v6.12", "skb_frag_size_add", Coalesce, 393, "+= delta"),
    ("v6.12", "tcp_mark_push", MarkPsh, 666, "TCPHDR_PSH"),
    ("v6.12", "tcp_sendmsg_locked", ClearPsh, 1285, "&= ~TCPHDR_PSH"),
    ("v6.12", "tcp_sendmsg_locked", MarkEor, 1294, "eor = 1"),
    ("v6.12", "tcp_push", Push, 750, "__tcp_push_pending_frames"),
    ("v6.12", "validate_xmit_skb", Linearize, 3682, "__skb_linearize"),
    ("v6.12", "tcp_transmit_skb", Xmit, 1484, "__tcp_transmit_skb("),
    ("v6.12", "tcp_gso_segment", Segment, 176, "skb_segment("),
    ("v6.12", "tcp_clean_rtx_queue", Ack, 3436, "tcp_rtx_queue_unlink_and_free"),
    ("v6.12", "tcp_wmem_free_skb", FreeSkb, 306, "__kfree_skb"),
    ("v3.5", "net_rx_action", NapiPoll, 3843, "n->poll(n, weight)"),
    ("v3.6", "net_rx_action", NapiPoll, 3939, "n->poll(n, weight)"),
    ("v6.12", "net_rx_action", NapiPoll, 6970, "napi_poll("),
    ("v3.5", "ixgbe_clean_rx_irq", RxFrame, 1711, "netdev_alloc_skb_ip_align"),
    ("v3.6", "ixgbe_clean_rx_irq", RxFrame, 1703, "netdev_alloc_skb_ip_align"),
    ("v6.12", "napi_gro_receive", RxFrame, 635, "dev_gro_receive(napi, skb)"),
    ("v3.5", "alloc_pages", AllocPage, 329, "alloc_pages_current(gfp_mask, order)"),
    ("v3.6", "alloc_pages", AllocPage, 335, "alloc_pages_current(gfp_mask, order)"),
    ("v6.12", "alloc_pages_node", AllocPage, 299, "alloc_pages_node_noprof(__VA_ARGS__)"),
    ("v6.12", "tun_get_user", NapiPoll, 1977, "napi_gro_frags(&tfile->napi)"),
    ("v6.12", "tun_get_user", GroFlush, 1978, "napi_complete(&tfile->napi)"),
    ("v6.12", "napi_gro_frags", RxFrame, 765, "dev_gro_receive(napi, skb)"),
    ("v6.12", "napi_get_frags", AllocSkb, 676, "napi_alloc_skb(napi, GRO_MAX_HEAD)"),
    ("v6.12", "tun_napi_alloc_frags", NewFrag, 1499, "skb_fill_page_desc"),
    ("v3.5", "__netdev_alloc_skb", AllocSkb, 357, "alloc_frag(fragsz"),
    ("v3.6", "__netdev_alloc_skb", AllocSkb, 425, "alloc_frag(fragsz"),
    ("v3.5", "ixgbe_add_rx_frag", NewFrag, 1636, "skb_fill_page_desc"),
    ("v3.6", "ixgbe_add_rx_frag", NewFrag, 1628, "skb_fill_page_desc"),
    ("v3.5", "get_page", GetPage, 406, "atomic_inc"),
    ("v3.6", "get_page", GetPage, 406, "atomic_inc"),
    ("v3.5", "put_page", PutPage, 164, "put_page_testzero"),
    ("v3.6", "put_page", PutPage, 164, "put_page_testzero"),
    ("v3.5", "__put_single_page", FreePage, 66, "free_hot_cold_page"),
    ("v3.6", "__put_single_page", FreePage, 66, "free_hot_cold_page"),
    ("v3.5", "netdev_alloc_frag", FragAlloc, 328, "nc->offset += fragsz"),
    ("v3.6", "__netdev_alloc_frag", FragAlloc, 379, "nc->offset += fragsz"),
    ("v3.5", "netdev_alloc_frag", FragCacheRelease, 324, "put_page(nc->page)"),
    ("v3.6", "__netdev_alloc_frag", FragCacheRelease, 373, "atomic_sub_and_test"),
    ("v3.6", "__netdev_alloc_frag", ReusePage, 372, "== nc->pagecnt_bias"),
    ("v3.5", "skb_gro_receive", GroMerge, 2941, "frag->page.p"),
    ("v3.6", "skb_gro_receive", GroMerge, 3022, "frag->page.p"),
    ("v3.5", "napi_gro_flush", GroFlush, 3360, "napi_gro_complete"),
    ("v3.6", "napi_gro_flush", GroFlush, 3456, "napi_gro_complete"),
    ("v3.5", "tcp_queue_rcv", QueueRcv, 4705, "__skb_queue_tail"),
    ("v3.6", "tcp_queue_rcv", QueueRcv, 4547, "__skb_queue_tail"),
    ("v3.5", "sk_add_backlog", BacklogAdd, 729, "__sk_add_backlog"),
    ("v3.6", "sk_add_backlog", BacklogAdd, 754, "__sk_add_backlog"),
    ("v3.5", "tcp_recvmsg", CopyToUser, 1808, "skb_copy_datagram_iovec(skb, offset"),
    ("v3.6", "tcp_recvmsg", CopyToUser, 1872, "skb_copy_datagram_iovec(skb, offset"),
    ("v6.12", "napi_alloc_skb", AllocSkb, 860, "build_skb"),
    ("v6.12", "page_frag_alloc_1k", FragAlloc1k, 259, "nc->offset = offset"),
    ("v6.12", "skb_add_rx_frag", NewFrag, 2632, "skb_add_rx_frag_netmem"),
    ("v6.12", "skb_free_frag", PutPage, 3399, "page_frag_free"),
    ("v6.12", "page_frag_free", FreePage, 4989, "free_unref_page"),
    ("v6.12", "__page_frag_alloc_align", FragAlloc, 4975, "nc->offset = offset"),
    ("v6.12", "__page_frag_alloc_align", FragCacheRelease, 4941, "page_ref_sub_and_test"),
    ("v6.12", "__page_frag_alloc_align", ReusePage, 4954, "set_page_count"),
    ("v6.12", "skb_gro_receive", GroMerge, 178, "skb_frag_fill_page_desc(frag, page, first_offset"),
    ("v6.12", "skb_gro_receive", GroChain, 208, "skb_shinfo(p)->frag_list = skb"),
    ("v6.12", "napi_gro_flush", GroFlush, 323, "__napi_gro_flush_chain"),
    ("v6.12", "tcp_queue_rcv", QueueRcv, 5159, "__skb_queue_tail"),
    ("v3.5", "skb_try_coalesce", RcvCoalesce, 3416, "memcpy(skb_shinfo(to)->frags + skb_shinfo(to)->nr_frags"),
    ("v3.6", "skb_try_coalesce", RcvCoalesce, 3497, "memcpy(skb_shinfo(to)->frags + skb_shinfo(to)->nr_frags"),
    ("v6.12", "skb_try_coalesce", RcvCoalesce, 6074, "memcpy(to_shinfo->frags + to_shinfo->nr_frags"),
    ("v6.12", "tcp_add_backlog", BacklogAdd, 2127, "sk_add_backlog("),
    ("v6.12", "tcp_recvmsg_locked", CopyToUser, 2746, "skb_copy_datagram_msg(skb, offset"),
    ("v3.5", "__udp_queue_rcv_skb", QueueRcv, 1365, "sock_queue_rcv_skb(sk, skb)"),
    ("v3.6", "__udp_queue_rcv_skb", QueueRcv, 1377, "sock_queue_rcv_skb(sk, skb)"),
    ("v6.12", "__udp_enqueue_schedule_skb", QueueRcv, 1561, "__skb_queue_tail(list, skb)"),
    ("v3.5", "udp_recvmsg", CopyToUser, 1211, "skb_copy_datagram_iovec(skb, sizeof(struct udphdr)"),
    ("v3.6", "udp_recvmsg", CopyToUser, 1216, "skb_copy_datagram_iovec(skb, sizeof(struct udphdr)"),
    ("v3.5", "skb_free_datagram_locked", FreeSkb, 252, "__kfree_skb(skb)"),
    ("v3.6", "skb_free_datagram_locked", FreeSkb, 251, "__kfree_skb(skb)"),
    ("v6.12", "skb_consume_udp", FreeSkb, 1629, "__consume_stateless_skb(skb)"),
    ("v3.5", "__release_sock", BacklogProcess, 1713, "sk_backlog_rcv("),
    ("v3.6", "__release_sock", BacklogProcess, 1782, "sk_backlog_rcv("),
    ("v6.12", "__release_sock", BacklogProcess, 3078, "sk_backlog_rcv("),
    ("v3.5", "tcp_v4_rcv", RxDrop, 1782, "kfree_skb(skb);"),
    ("v3.6", "tcp_v4_rcv", RxDrop, 1827, "kfree_skb(skb);"),
    ("v6.12", "tcp_v4_rcv", RxDrop, 2384, "sk_skb_reason_drop(sk, skb, drop_reason)"),
    ("v3.5", "__kfree_skb", FreeSkb, 530, "kfree_skbmem"),
    ("v3.6", "__kfree_skb", FreeSkb, 599, "kfree_skbmem"),
    ("v6.12", "__kfree_skb", FreeSkb, 1205, "kfree_skbmem"),
    ("v6.12", "skb_attempt_defer_free", DeferFree, 7157, "WRITE_ONCE(sd->defer_list, skb)"),
    ("v6.12", "kick_defer_list_purge", DeferKick, 4809, "smp_call_function_single_async"),
    ("v6.12", "skb_defer_free_flush", DeferFlush, 6321, "napi_consume_skb"),
    ("v5.11", "tcp_v4_rcv", RxCacheTake, 2057, "skb_to_free = sk->sk_rx_skb_cache"),
];

const IXGBE: &str = "drivers/net/ethernet/intel/ixgbe/ixgbe_main.c";
/// The page-frag allocator is in mm/page_alloc.c in v6.12 (a later release moved it).
const PAGE_FRAG: &str = "mm/page_alloc.c";
const MPTCP_C: &str = "net/mptcp/protocol.c";
const UDP: &str = "net/ipv4/udp.c";
const TUN: &str = "drivers/net/tun.c";

/// The kernel function an event of `mechanism` stands for in `era` (the trace's), in `flow`,
/// if the table has it.
pub fn kernel_fn(mechanism: &str, era: Era, flow: Flow, e: &Event) -> Option<KernelFn> {
    let r = row_of(mechanism, era, flow, e)?;
    Some(KernelFn {
        name: r.name,
        file: r.file,
        tag: r.tag(era),
        why: r.why(era),
        then: r.then,
        kind: r.kind,
    })
}

/// The row of an event: for a free the kernel does by another function ([`Only`]) its own
/// row where there is one; in a UDP flow or through tun's NAPI frags path (`flow`) that
/// flow's row where there is one.
pub fn row_of(mechanism: &str, era: Era, flow: Flow, e: &Event) -> Option<&'static Row> {
    let (kind, only) = (e.kind(), Only::of(e));
    let rows = || {
        TABLE.iter().filter(move |r| {
            r.mechanism == mechanism
                && r.kind == kind
                && r.eras.contains(&era)
                && (flow.udp || !r.udp)
                && (flow.napi_frags || !r.napi_frags)
        })
    };
    // The flow's own row before a shared one; no two rows are equally specific.
    let specific = |r: &&Row| u8::from(r.udp) + u8::from(r.napi_frags);
    rows()
        .filter(|r| r.only == only)
        .max_by_key(specific)
        .or_else(|| rows().filter(|r| r.only.is_none()).max_by_key(specific))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    const UDP_FLOW: Flow = Flow {
        udp: true,
        napi_frags: false,
    };

    fn udp_flow(udp: bool) -> Flow {
        Flow {
            udp,
            napi_frags: false,
        }
    }

    #[test]
    fn one_row_per_mechanism_kind_and_era() {
        for (i, a) in TABLE.iter().enumerate() {
            for b in &TABLE[i + 1..] {
                let overlap = a.eras.iter().any(|e| b.eras.contains(e));
                let key = |r: &Row| (r.mechanism, r.kind, r.only, r.udp, r.napi_frags);
                let same = key(a) == key(b);
                assert!(!(same && overlap), "{a:?} and {b:?}");
            }
        }
    }

    #[test]
    fn links_name_the_release_the_function_lives_in() {
        let park = Event::RxCachePark { skb: 0 };
        let f = kernel_fn(RX, Era::V6_12, Flow::TCP, &park).unwrap();
        assert_eq!(
            f.url(),
            "https://elixir.bootlin.com/linux/v5.2-rc1/C/ident/sk_eat_skb"
        );
        let psh = Event::MarkPsh { skb: 0 };
        let f = kernel_fn(SEND, Era::V2_6_33, Flow::TCP, &psh).unwrap();
        assert_eq!(
            (f.name, f.file, f.tag),
            ("tcp_mark_push", "net/ipv4/tcp.c", "v2.6.33")
        );
        assert_eq!(kernel_fn(SEND, Era::V5_10, Flow::TCP, &psh), None);
    }

    /// v6.12 frees a head fragment with skb_free_frag (page_frag_free), a frag's page with
    /// put_page; v3.6 puts both with put_page.
    #[test]
    fn a_head_fragment_is_freed_by_its_own_function() {
        let put = |head| Event::PutPage {
            page: 0,
            cpu: 0,
            count: 0,
            release: false,
            head,
            destroy: false,
        };
        let free = Event::FreePage {
            page: 0,
            cpu: 0,
            head: true,
        };
        let name = |era, e: &Event| kernel_fn(RX, era, Flow::TCP, e).map(|f| f.label());
        assert_eq!(
            name(Era::V6_12, &put(true)).as_deref(),
            Some("skb_free_frag → page_frag_free")
        );
        assert_eq!(name(Era::V6_12, &free).as_deref(), Some("page_frag_free"));
        assert_eq!(name(Era::V6_12, &put(false)).as_deref(), Some("put_page"));
        assert_eq!(name(Era::V3_6, &put(true)).as_deref(), Some("put_page"));
        assert_eq!(name(Era::V3_6, &free).as_deref(), Some("__put_single_page"));
    }

    /// A UDP flow's socket names UDP's functions in every era, its other events the shared
    /// rows; a TCP flow never takes a UDP row.
    #[test]
    fn a_udp_flow_names_udp_functions() {
        let q = Event::QueueRcv { skb: 0, cpu: 0 };
        let copy = Event::CopyToUser {
            skb: 0,
            cpu: 0,
            bytes: 1,
        };
        let name = |era, udp, e: &Event| kernel_fn(RX, era, udp_flow(udp), e).map(|f| f.label());
        let queued = |era, udp| name(era, udp, &q);
        assert_eq!(
            queued(Era::V3_5, true).as_deref(),
            Some("__udp_queue_rcv_skb → sock_queue_rcv_skb")
        );
        assert_eq!(
            queued(Era::V6_12, true).as_deref(),
            Some("__udp_enqueue_schedule_skb")
        );
        assert_eq!(queued(Era::V6_12, false).as_deref(), Some("tcp_queue_rcv"));
        for era in [Era::V3_5, Era::V3_6, Era::V6_12] {
            assert_eq!(name(era, true, &copy).as_deref(), Some("udp_recvmsg"));
        }
        assert_eq!(
            name(Era::V3_6, false, &copy).as_deref(),
            Some("tcp_recvmsg")
        );
        let drop = Event::RxDrop { skb: 0, cpu: 0 };
        assert_eq!(
            name(Era::V6_12, true, &drop).as_deref(),
            Some("__udp4_lib_rcv")
        );
        let poll = Event::NapiPoll {
            cpu: 0,
            frames: 1,
            budget: 64,
        };
        assert_eq!(
            name(Era::V3_6, true, &poll).as_deref(),
            Some("net_rx_action")
        );
        let f = kernel_fn(RX, Era::V3_6, UDP_FLOW, &q).unwrap();
        assert_eq!(
            f.line_url().as_deref(),
            Some("https://elixir.bootlin.com/linux/v3.6/source/net/ipv4/udp.c#L1377")
        );
    }

    /// A scenario's `socket.proto = "udp"` reaches the trace, and so `Trace::kernel_fn`.
    #[test]
    fn a_udp_scenario_traces_a_udp_flow() {
        let run = |proto: &str| {
            let text = format!(
                "mechanism = \"rx\"\nops = [{{ op = \"arrive\", frames = 1 }}]\n\
                 [socket]\nproto = \"{proto}\"\n"
            );
            let s = crate::Scenario::parse(&text).unwrap();
            s.run(&crate::RunOptions::default()).unwrap()
        };
        let (udp, tcp) = (run("udp"), run("tcp"));
        assert!(udp.udp && !tcp.udp);
        let q = Event::QueueRcv { skb: 0, cpu: 0 };
        assert_ne!(udp.kernel_fn(&q), tcp.kernel_fn(&q));
    }

    /// A locked UDP socket: v3.6 backlogs the datagram (sk_add_backlog), v6.12 queues it
    /// (`__udp_enqueue_schedule_skb` does not look at the owner); recvmsg frees what it read
    /// with skb_free_datagram_locked (v3.6) or skb_consume_udp (v6.12), a TCP flow's with
    /// __kfree_skb.
    #[test]
    fn a_locked_udp_socket_and_a_read_datagram_follow_their_release() {
        let run = |variant: &str, proto: &str| {
            let text = format!(
                "mechanism = \"rx\"\nvariant = \"{variant}\"\n\
                 ops = [{{ op = \"lock\" }}, {{ op = \"arrive\", frames = 1 }}, \
                 {{ op = \"release\" }}, {{ op = \"recvmsg\" }}]\n\
                 [socket]\nproto = \"{proto}\"\n"
            );
            let t = crate::Scenario::parse(&text).unwrap();
            let t = t.run(&crate::RunOptions::default()).unwrap();
            let named = |k: EventKind| {
                let e = t
                    .steps
                    .iter()
                    .flat_map(|s| &s.events)
                    .find(|e| e.kind() == k)?;
                t.kernel_fn(e).map(|f| f.name)
            };
            (named(BacklogAdd), named(QueueRcv), named(FreeSkb))
        };
        assert_eq!(
            run("duyck-3.6", "udp"),
            (
                Some("sk_add_backlog"),
                None,
                Some("skb_free_datagram_locked")
            )
        );
        assert_eq!(
            run("modern", "udp"),
            (
                None,
                Some("__udp_enqueue_schedule_skb"),
                Some("skb_consume_udp")
            )
        );
        // v6.12 TCP defers a read skb by default; with net.core.skb_defer_max = 0 (`none`)
        // recvmsg frees it.
        assert_eq!(
            run("modern+none", "tcp"),
            (Some("tcp_add_backlog"), None, Some("__kfree_skb"))
        );
        // Any other free in a UDP flow (a drop, a purge) is __kfree_skb's.
        let drop = Event::FreeSkb {
            skb: 0,
            cpu: 0,
            read: false,
        };
        let f = kernel_fn(RX, Era::V6_12, UDP_FLOW, &drop).unwrap();
        assert_eq!(f.name, "__kfree_skb");
    }

    /// v6.12's rx_frame is where the frame's skb enters GRO, for either of the model's
    /// drivers; v3.x's is ixgbe's receive loop.
    #[test]
    fn a_v6_12_frame_enters_gro_whatever_the_driver() {
        let frame = Event::RxFrame {
            skb: 0,
            len: 1514,
            seq: 0,
            headers: 66,
            linear: 1448,
        };
        let name = |era| kernel_fn(RX, era, Flow::TCP, &frame).map(|f| f.label());
        assert_eq!(name(Era::V6_12).as_deref(), Some("napi_gro_receive"));
        assert_eq!(name(Era::V3_6).as_deref(), Some("ixgbe_clean_rx_irq"));
    }

    /// tun's IFF_NAPI_FRAGS path has no NAPI poll and no NIC receive loop: its frame enters
    /// GRO through napi_gro_frags from tun_get_user, its head is napi_get_frags' and its frags
    /// are filled by tun_napi_alloc_frags, in every era (a v3.x allocator on it is a
    /// counterfactual, linked at v6.12); its frag cache and socket rows are the shared ones.
    #[test]
    fn the_napi_frags_driver_names_tun_functions() {
        let frags = Flow {
            udp: true,
            napi_frags: true,
        };
        let poll = Event::NapiPoll {
            cpu: 0,
            frames: 1,
            budget: 64,
        };
        let frame = Event::RxFrame {
            skb: 0,
            len: 1514,
            seq: 0,
            headers: 42,
            linear: 0,
        };
        let new_frag = Event::NewFrag {
            skb: 0,
            idx: 0,
            page: 0,
            offset: 0,
            size: 1472,
            truesize: 2752,
        };
        let q = Event::QueueRcv { skb: 0, cpu: 0 };
        let name = |era, flow, e: &Event| kernel_fn(RX, era, flow, e).map(|f| (f.label(), f.tag));
        for era in [Era::V3_5, Era::V6_12] {
            assert_eq!(
                name(era, frags, &poll),
                Some(("tun_get_user".into(), "v6.12"))
            );
            assert_eq!(
                name(era, frags, &frame),
                Some(("napi_gro_frags".into(), "v6.12"))
            );
            let tun_frag = name(era, frags, &new_frag);
            assert_eq!(tun_frag, Some(("tun_napi_alloc_frags".into(), "v6.12")));
        }
        let udp_q = name(Era::V6_12, frags, &q).map(|n| n.0);
        assert_eq!(udp_q.as_deref(), Some("__udp_enqueue_schedule_skb"));
        let nic = name(Era::V6_12, UDP_FLOW, &frame).map(|n| n.0);
        assert_eq!(nic.as_deref(), Some("napi_gro_receive"));
        let f = kernel_fn(RX, Era::V6_12, frags, &new_frag).unwrap();
        assert_eq!(
            f.line_url().as_deref(),
            Some("https://elixir.bootlin.com/linux/v6.12/source/drivers/net/tun.c#L1499")
        );
    }

    /// v6.12's rx pages come from alloc_pages_node; MPTCP's 32 KiB pages are compound,
    /// so their last put takes `__put_page`'s compound branch.
    #[test]
    fn pages_are_allocated_and_freed_by_their_release_s_functions() {
        let alloc = Event::AllocPage {
            page: 0,
            order: 3,
            cpu: 0,
            size: 32768,
            cursor: None,
            bias: None,
        };
        let f = kernel_fn(RX, Era::V6_12, Flow::TCP, &alloc).unwrap();
        assert_eq!(f.name, "alloc_pages_node");
        let old = kernel_fn(RX, Era::V3_6, Flow::TCP, &alloc).unwrap();
        assert_eq!(old.name, "alloc_pages");
        let free = Event::FreePage {
            page: 0,
            cpu: 0,
            head: false,
        };
        // MPTCP's lanes are v5.11-rc1's: the function linked at that tag, with no line (no
        // tree of the tag was read) and no reason (it is the lane's own kernel).
        let f = kernel_fn(MPTCP, Era::V5_11Rc1, Flow::TCP, &free).unwrap();
        assert_eq!(
            (f.name, f.url(), f.line_url(), f.why),
            (
                "__put_page",
                "https://elixir.bootlin.com/linux/v5.11-rc1/C/ident/__put_page".to_string(),
                None,
                None
            )
        );
    }

    /// 2.6.33 frees the socket's TCP_PAGE at close with `__free_page` in
    /// `tcp_v4_destroy_sock`; every other put of a send page is `put_page`.
    #[test]
    fn a_2_6_33_socket_frees_its_page_at_close_with_free_page() {
        let put = |destroy| Event::PutPage {
            page: 0,
            cpu: 0,
            count: 0,
            release: true,
            head: false,
            destroy,
        };
        let name = |e: &Event| kernel_fn(SEND, Era::V2_6_33, Flow::TCP, e).map(|f| f.label());
        let at_close = name(&put(true));
        assert_eq!(
            at_close.as_deref(),
            Some("tcp_v4_destroy_sock → __free_page")
        );
        assert_eq!(name(&put(false)).as_deref(), Some("put_page"));
        let t = crate::Scenario::parse(
            "mechanism = \"sendmsg\"\nvariant = \"pre-2010\"\n\
             ops = [{ op = \"sendmsg\", bytes = 100 }, { op = \"close\" }]\n",
        )
        .unwrap()
        .run(&crate::RunOptions::default())
        .unwrap();
        let last = t.steps.last().unwrap().events.iter();
        let freed = last.filter_map(|e| t.kernel_fn(e)).map(|f| f.label());
        assert!(
            freed
                .clone()
                .any(|l| l == "tcp_v4_destroy_sock → __free_page"),
            "{:?}",
            freed.collect::<Vec<_>>()
        );
    }

    /// The releases whose source the table links.
    const RELEASES: &[&str] = &[
        "v2.6.33",
        "v3.5",
        "v3.6",
        "v5.2-rc1",
        "v5.11-rc1",
        "v5.11",
        "v6.12",
    ];

    /// The file of each pinned line: that of the rows (one per mechanism) whose function,
    /// kind and releases it names.
    fn file_of(&(tag, name, kind, _, _): &Stmt) -> &'static str {
        let rows: Vec<&Row> = TABLE
            .iter()
            .filter(|r| r.name == name && r.kind == kind)
            .filter(|r| r.eras.iter().any(|&e| r.tag(e) == tag))
            .collect();
        let file = rows
            .first()
            .unwrap_or_else(|| panic!("{tag} {name} {kind}: no row"))
            .file;
        assert!(
            rows.iter().all(|r| r.file == file),
            "{tag} {name} {kind}: {rows:?}"
        );
        file
    }

    #[test]
    fn each_line_belongs_to_one_row_at_a_release_it_links() {
        for r in TABLE {
            assert!(
                r.eras.iter().all(|&e| RELEASES.contains(&r.tag(e))),
                "{r:?}"
            );
        }
        for (i, s) in LINES.iter().enumerate() {
            file_of(s);
            assert!(s.3 > 0 && !s.4.trim().is_empty(), "{s:?}");
            let twice = LINES[..i]
                .iter()
                .any(|t| (t.0, t.1, t.2) == (s.0, s.1, s.2));
            assert!(!twice, "{s:?}: two lines");
        }
    }

    /// docs/kernel-lines.md records how each line was read; it and the table hold the same
    /// statements (release, file, line, identifiers), so a line renumbered in one fails
    /// until the other agrees.
    #[test]
    fn the_table_and_the_record_of_lines_agree() {
        let record = include_str!("../../docs/kernel-lines.md");
        let (_, lines) = record
            .split_once("## The lines")
            .expect("a section of lines");
        let in_doc: BTreeSet<(String, String, u32, String)> = lines
            .lines()
            .filter(|l| l.starts_with("| v"))
            .map(|l| {
                let c: Vec<&str> = l
                    .split(" | ")
                    .map(|c| c.trim_matches(['|', ' ', '`']))
                    .collect();
                let line = c[2]
                    .parse()
                    .unwrap_or_else(|_| panic!("a line number: {l}"));
                (c[0].into(), c[1].into(), line, c[4].into())
            })
            .collect();
        let in_table: BTreeSet<(String, String, u32, String)> = LINES
            .iter()
            .map(|s| (s.0.into(), file_of(s).into(), s.3, s.4.into()))
            .collect();
        let only_doc: Vec<_> = in_doc.difference(&in_table).collect();
        let only_table: Vec<_> = in_table.difference(&in_doc).collect();
        assert!(
            only_doc.is_empty() && only_table.is_empty(),
            "only in the record: {only_doc:?}; only in the table: {only_table:?}"
        );
    }

    #[test]
    fn an_event_links_its_statement_at_the_release() {
        let alloc = Event::FragAlloc {
            cpu: 0,
            page: 0,
            offset: 0,
            size: 2048,
            cursor: 2048,
            bias: None,
        };
        let f = kernel_fn(RX, Era::V3_6, Flow::TCP, &alloc).unwrap();
        assert_eq!(
            f.line_url().as_deref(),
            Some("https://elixir.bootlin.com/linux/v3.6/source/net/core/skbuff.c#L379")
        );
        let park = kernel_fn(RX, Era::V3_6, Flow::TCP, &Event::RxCachePark { skb: 0 }).unwrap();
        assert_eq!(park.line_url(), None);
        let take = kernel_fn(
            RX,
            Era::V3_6,
            Flow::TCP,
            &Event::RxCacheTake { skb: 0, cpu: 0 },
        )
        .unwrap();
        assert_eq!(
            take.line_url().as_deref(),
            Some("https://elixir.bootlin.com/linux/v5.11/source/net/ipv4/tcp_ipv4.c#L2057")
        );
    }
}
