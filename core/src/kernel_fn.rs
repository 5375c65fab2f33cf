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
    /// The function that takes over what `name` made, where the work is split in two
    /// (v5.11 MPTCP: `__mptcp_do_alloc_tx_skb` allocates, `sk_stream_alloc_skb` hands over).
    pub then: Option<&'static str>,
    /// The line of `file` at `tag` whose statement does the work, where it was read
    /// (docs/kernel-lines.md records how); `None` links the function only.
    pub line: Option<u32>,
}

impl KernelFn {
    /// The identifier on Elixir, the Bootlin cross-referencer, at this exact release.
    pub fn url(&self) -> String {
        elixir_url(self.tag, self.name)
    }

    /// The statement's line on Elixir at this release, where the table pins it.
    pub fn line_url(&self) -> Option<String> {
        let (tag, file) = (self.tag, self.file);
        self.line
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
pub fn elixir_url(tag: &str, name: &str) -> String {
    format!("https://elixir.bootlin.com/linux/{tag}/C/ident/{name}")
}

/// A statement read in a release: its tag, the line, and identifiers that stand on it.
pub type Stmt = (&'static str, u32, &'static str);

/// One row: the mechanism and event kind, the trace eras it covers, the kernel function, its
/// file, the release to link when not the era's own (a feature of another release), and the
/// statements read per release.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub mechanism: &'static str,
    pub kind: EventKind,
    pub eras: &'static [Era],
    pub name: &'static str,
    pub file: &'static str,
    pub at: Option<&'static str>,
    pub then: Option<&'static str>,
    /// Only for the put of an skb's head fragment (`Event::frees_head`), where the kernel
    /// frees it by another function than a frag's `put_page`.
    pub head: bool,
    pub lines: &'static [Stmt],
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
        head: false,
        lines: &[],
    }
}

impl Row {
    const fn at(self, tag: &'static str) -> Row {
        Row {
            at: Some(tag),
            ..self
        }
    }

    const fn then(self, name: &'static str) -> Row {
        Row {
            then: Some(name),
            ..self
        }
    }

    const fn head(self) -> Row {
        Row { head: true, ..self }
    }

    const fn lines(self, lines: &'static [Stmt]) -> Row {
        Row { lines, ..self }
    }

    /// The release each covered era links.
    pub fn tag(&self, era: Era) -> &'static str {
        self.at.unwrap_or(era.name())
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
const V5_10: &[Era] = &[Era::V5_10];
/// The MPTCP code the model follows is net-next of November 2020 with seed 003 applied,
/// released in v5.11.
const MPTCP_AT: &str = "v5.11";

/// Every event kind of every mechanism, per era, as the kernel names it. Each name was read
/// in that release's source; docs/kernel-functions.md lists the trees read.
#[rustfmt::skip]
pub static TABLE: &[Row] = &[
    // tcp_sendmsg, 2.6.33 (pre-2010, kumar-2010).
    row(SEND, AllocSkb, OLD, "sk_stream_alloc_skb", "net/ipv4/tcp.c").lines(&[("v2.6.33", 686, "alloc_skb_fclone")]),
    row(SEND, AllocPage, OLD, "sk_stream_alloc_page", "include/net/sock.h").lines(&[("v2.6.33", 1456, "alloc_pages")]),
    row(SEND, GetPage, OLD, "get_page", "include/linux/mm.h").lines(&[("v2.6.33", 313, "atomic_inc")]),
    row(SEND, PutPage, OLD, "put_page", "mm/swap.c").lines(&[("v2.6.33", 76, "put_page_testzero")]),
    row(SEND, FreePage, OLD, "free_hot_page", "mm/page_alloc.c").lines(&[("v2.6.33", 1140, "free_hot_cold_page")]),
    row(SEND, CopyToLinear, OLD, "skb_add_data", "include/linux/skbuff.h").lines(&[("v2.6.33", 1609, "copy_from_user(skb_put")]),
    row(SEND, CopyToPage, OLD, "skb_copy_to_page", "include/net/sock.h").lines(&[("v2.6.33", 1243, "copy_from_user(page_address(page) + off")]),
    row(SEND, NewFrag, OLD, "skb_fill_page_desc", "include/linux/skbuff.h").lines(&[("v2.6.33", 1065, "nr_frags = i + 1")]),
    row(SEND, Coalesce, OLD, "tcp_sendmsg", "net/ipv4/tcp.c").lines(&[("v2.6.33", 1047, "frags[i - 1].size +=")]),
    row(SEND, MarkPsh, OLD, "tcp_mark_push", "net/ipv4/tcp.c").lines(&[("v2.6.33", 513, "TCPCB_FLAG_PSH")]),
    row(SEND, ClearPsh, OLD, "tcp_sendmsg", "net/ipv4/tcp.c").lines(&[("v2.6.33", 1063, "&= ~TCPCB_FLAG_PSH")]),
    row(SEND, Push, OLD, "tcp_push", "net/ipv4/tcp.c").lines(&[("v2.6.33", 556, "__tcp_push_pending_frames")]),
    row(SEND, Linearize, OLD, "__skb_linearize", "include/linux/skbuff.h").lines(&[("v2.6.33", 1630, "__pskb_pull_tail")]),
    row(SEND, Xmit, OLD, "tcp_transmit_skb", "net/ipv4/tcp_output.c").lines(&[("v2.6.33", 884, "queue_xmit(")]),
    row(SEND, Segment, OLD, "tcp_tso_segment", "net/ipv4/tcp.c").lines(&[("v2.6.33", 2636, "skb_segment(")]),
    row(SEND, Ack, OLD, "tcp_clean_rtx_queue", "net/ipv4/tcp_input.c").lines(&[("v2.6.33", 3283, "tcp_unlink_write_queue")]),
    row(SEND, FreeSkb, OLD, "sk_wmem_free_skb", "include/net/sock.h").lines(&[("v2.6.33", 895, "__kfree_skb")]),
    // tcp_sendmsg_locked, v6.12 (modern).
    row(SEND, AllocSkb, NEW, "tcp_stream_alloc_skb", "net/ipv4/tcp.c").lines(&[("v6.12", 885, "alloc_skb_fclone")]),
    row(SEND, AllocPage, NEW, "skb_page_frag_refill", "net/core/sock.c").lines(&[("v6.12", 3015, "alloc_pages(")]),
    row(SEND, ReusePage, NEW, "skb_page_frag_refill", "net/core/sock.c").lines(&[("v6.12", 3002, "page_ref_count(pfrag->page) == 1")]),
    row(SEND, GetPage, NEW, "page_ref_inc", "include/linux/page_ref.h").lines(&[("v6.12", 153, "atomic_inc")]),
    row(SEND, PutPage, NEW, "put_page", "include/linux/mm.h").lines(&[("v6.12", 1550, "folio_put(")]),
    row(SEND, FreePage, NEW, "__folio_put", "mm/swap.c").lines(&[("v6.12", 112, "free_unref_page")]),
    row(SEND, CopyToPage, NEW, "skb_copy_to_page_nocache", "include/net/sock.h").lines(&[("v6.12", 2197, "skb_do_copy_data_nocache")]),
    row(SEND, NewFrag, NEW, "skb_fill_page_desc", "include/linux/skbuff.h").lines(&[("v6.12", 2601, "skb_fill_netmem_desc(skb, i")]),
    row(SEND, Coalesce, NEW, "skb_frag_size_add", "include/linux/skbuff.h").lines(&[("v6.12", 393, "+= delta")]),
    row(SEND, MarkPsh, NEW, "tcp_mark_push", "net/ipv4/tcp.c").lines(&[("v6.12", 666, "TCPHDR_PSH")]),
    row(SEND, ClearPsh, NEW, "tcp_sendmsg_locked", "net/ipv4/tcp.c").lines(&[("v6.12", 1285, "&= ~TCPHDR_PSH")]),
    row(SEND, MarkEor, NEW, "tcp_sendmsg_locked", "net/ipv4/tcp.c").lines(&[("v6.12", 1294, "eor = 1")]),
    row(SEND, Push, NEW, "tcp_push", "net/ipv4/tcp.c").lines(&[("v6.12", 750, "__tcp_push_pending_frames")]),
    row(SEND, Linearize, NEW, "validate_xmit_skb", "net/core/dev.c").lines(&[("v6.12", 3682, "__skb_linearize")]),
    row(SEND, Xmit, NEW, "tcp_transmit_skb", "net/ipv4/tcp_output.c").lines(&[("v6.12", 1484, "__tcp_transmit_skb(")]),
    row(SEND, Segment, NEW, "tcp_gso_segment", "net/ipv4/tcp_offload.c").lines(&[("v6.12", 176, "skb_segment(")]),
    row(SEND, Ack, NEW, "tcp_clean_rtx_queue", "net/ipv4/tcp_input.c").lines(&[("v6.12", 3436, "tcp_rtx_queue_unlink_and_free")]),
    row(SEND, FreeSkb, NEW, "tcp_wmem_free_skb", "include/net/tcp.h").lines(&[("v6.12", 306, "__kfree_skb")]),
    // The receive path, v3.5 (pre-2012, duyck-2012) and v3.6 (duyck-3.6).
    row(RX, NapiPoll, RX_ALL, "net_rx_action", "net/core/dev.c").lines(&[("v3.5", 3843, "n->poll(n, weight)"), ("v3.6", 3939, "n->poll(n, weight)"), ("v6.12", 6970, "napi_poll(")]),
    row(RX, RxFrame, RX_ALL, "ixgbe_clean_rx_irq", IXGBE).lines(&[("v3.5", 1711, "netdev_alloc_skb_ip_align"), ("v3.6", 1703, "netdev_alloc_skb_ip_align"), ("v6.12", 2397, "ixgbe_construct_skb(")]),
    row(RX, AllocPage, RX_ALL, "alloc_pages", "include/linux/gfp.h").lines(&[("v3.5", 329, "alloc_pages_current(gfp_mask, order)"), ("v3.6", 335, "alloc_pages_current(gfp_mask, order)"), ("v6.12", 333, "alloc_pages_noprof(__VA_ARGS__)")]),
    row(RX, AllocSkb, RX_OLD, "__netdev_alloc_skb", "net/core/skbuff.c").lines(&[("v3.5", 357, "alloc_frag(fragsz"), ("v3.6", 425, "alloc_frag(fragsz")]),
    row(RX, NewFrag, RX_OLD, "ixgbe_add_rx_frag", IXGBE).lines(&[("v3.5", 1636, "skb_fill_page_desc"), ("v3.6", 1628, "skb_fill_page_desc")]),
    row(RX, GetPage, RX_OLD, "get_page", "include/linux/mm.h").lines(&[("v3.5", 406, "atomic_inc"), ("v3.6", 406, "atomic_inc")]),
    row(RX, PutPage, RX_OLD, "put_page", "mm/swap.c").lines(&[("v3.5", 164, "put_page_testzero"), ("v3.6", 164, "put_page_testzero")]),
    row(RX, FreePage, RX_OLD, "__put_single_page", "mm/swap.c").lines(&[("v3.5", 66, "free_hot_cold_page"), ("v3.6", 66, "free_hot_cold_page")]),
    row(RX, FragAlloc, V3_5, "netdev_alloc_frag", "net/core/skbuff.c").lines(&[("v3.5", 328, "nc->offset += fragsz")]),
    row(RX, FragAlloc, V3_6, "__netdev_alloc_frag", "net/core/skbuff.c").lines(&[("v3.6", 379, "nc->offset += fragsz")]),
    row(RX, FragCacheRelease, V3_5, "netdev_alloc_frag", "net/core/skbuff.c").lines(&[("v3.5", 324, "put_page(nc->page)")]),
    row(RX, FragCacheRelease, V3_6, "__netdev_alloc_frag", "net/core/skbuff.c").lines(&[("v3.6", 373, "atomic_sub_and_test")]),
    row(RX, ReusePage, V3_5, "netdev_alloc_frag", "net/core/skbuff.c"),
    row(RX, ReusePage, V3_6, "__netdev_alloc_frag", "net/core/skbuff.c").lines(&[("v3.6", 372, "== nc->pagecnt_bias")]),
    row(RX, GroMerge, RX_OLD, "skb_gro_receive", "net/core/skbuff.c").lines(&[("v3.5", 2941, "frag->page.p"), ("v3.6", 3022, "frag->page.p")]),
    row(RX, GroFlush, RX_OLD, "napi_gro_flush", "net/core/dev.c").lines(&[("v3.5", 3360, "napi_gro_complete"), ("v3.6", 3456, "napi_gro_complete")]),
    row(RX, QueueRcv, RX_OLD, "tcp_queue_rcv", "net/ipv4/tcp_input.c").lines(&[("v3.5", 4705, "__skb_queue_tail"), ("v3.6", 4547, "__skb_queue_tail")]),
    row(RX, BacklogAdd, RX_OLD, "sk_add_backlog", "include/net/sock.h").lines(&[("v3.5", 729, "__sk_add_backlog"), ("v3.6", 754, "__sk_add_backlog")]),
    row(RX, CopyToUser, RX_OLD, "tcp_recvmsg", "net/ipv4/tcp.c").lines(&[("v3.5", 1808, "skb_copy_datagram_iovec(skb, offset"), ("v3.6", 1872, "skb_copy_datagram_iovec(skb, offset")]),
    // The receive path, v6.12 (modern).
    row(RX, AllocSkb, NEW, "napi_alloc_skb", "net/core/skbuff.c").lines(&[("v6.12", 860, "build_skb")]),
    row(RX, FragAlloc1k, NEW, "page_frag_alloc_1k", "net/core/skbuff.c").lines(&[("v6.12", 259, "nc->offset = offset")]),
    row(RX, NewFrag, NEW, "skb_add_rx_frag", "include/linux/skbuff.h").lines(&[("v6.12", 2632, "skb_add_rx_frag_netmem")]),
    row(RX, PutPage, NEW, "put_page", "include/linux/mm.h").lines(&[("v6.12", 1550, "folio_put(")]),
    row(RX, FreePage, NEW, "__folio_put", "mm/swap.c").lines(&[("v6.12", 112, "free_unref_page")]),
    row(RX, PutPage, NEW, "skb_free_frag", "include/linux/skbuff.h").head().then("page_frag_free").lines(&[("v6.12", 3399, "page_frag_free")]),
    row(RX, FreePage, NEW, "page_frag_free", PAGE_FRAG).head().lines(&[("v6.12", 4989, "free_unref_page")]),
    row(RX, FragAlloc, NEW, "__page_frag_alloc_align", PAGE_FRAG).lines(&[("v6.12", 4975, "nc->offset = offset")]),
    row(RX, FragCacheRelease, NEW, "__page_frag_alloc_align", PAGE_FRAG).lines(&[("v6.12", 4941, "page_ref_sub_and_test")]),
    row(RX, ReusePage, NEW, "__page_frag_alloc_align", PAGE_FRAG).lines(&[("v6.12", 4954, "set_page_count")]),
    row(RX, GroMerge, NEW, "skb_gro_receive", "net/core/gro.c").lines(&[("v6.12", 178, "skb_frag_fill_page_desc(frag, page, first_offset")]),
    row(RX, GroChain, NEW, "skb_gro_receive", "net/core/gro.c").lines(&[("v6.12", 208, "skb_shinfo(p)->frag_list = skb")]),
    row(RX, GroFlush, NEW, "napi_gro_flush", "net/core/gro.c").lines(&[("v6.12", 323, "__napi_gro_flush_chain")]),
    row(RX, QueueRcv, NEW, "tcp_queue_rcv", "net/ipv4/tcp_input.c").lines(&[("v6.12", 5159, "__skb_queue_tail")]),
    row(RX, BacklogAdd, NEW, "tcp_add_backlog", "net/ipv4/tcp_ipv4.c").lines(&[("v6.12", 2127, "sk_add_backlog(")]),
    row(RX, CopyToUser, NEW, "tcp_recvmsg_locked", "net/ipv4/tcp.c").lines(&[("v6.12", 2746, "skb_copy_datagram_msg(skb, offset")]),
    // Either allocator era: the socket side, and each rx cache in the release it lives in.
    row(RX, BacklogProcess, RX_ALL, "__release_sock", "net/core/sock.c").lines(&[("v3.5", 1713, "sk_backlog_rcv("), ("v3.6", 1782, "sk_backlog_rcv("), ("v6.12", 3078, "sk_backlog_rcv(")]),
    row(RX, RxDrop, RX_ALL, "tcp_v4_rcv", "net/ipv4/tcp_ipv4.c").lines(&[("v3.5", 1782, "kfree_skb(skb);"), ("v3.6", 1827, "kfree_skb(skb);"), ("v6.12", 2384, "sk_skb_reason_drop(sk, skb, drop_reason)")]),
    row(RX, FreeSkb, RX_ALL, "__kfree_skb", "net/core/skbuff.c").lines(&[("v3.5", 530, "kfree_skbmem"), ("v3.6", 599, "kfree_skbmem"), ("v6.12", 1205, "kfree_skbmem")]),
    row(RX, RxCachePark, RX_ALL, "sk_eat_skb", "include/net/sock.h").at("v5.2-rc1"),
    row(RX, RxCacheTake, RX_ALL, "tcp_v4_rcv", "net/ipv4/tcp_ipv4.c").at("v5.2-rc1"),
    row(RX, DeferFree, RX_ALL, "skb_attempt_defer_free", "net/core/skbuff.c").at("v6.12").lines(&[("v6.12", 7157, "WRITE_ONCE(sd->defer_list, skb)")]),
    row(RX, DeferKick, RX_ALL, "kick_defer_list_purge", "net/core/dev.c").at("v6.12").lines(&[("v6.12", 4809, "smp_call_function_single_async")]),
    row(RX, DeferFlush, RX_ALL, "skb_defer_free_flush", "net/core/dev.c").at("v6.12").lines(&[("v6.12", 6321, "napi_consume_skb")]),
    // MPTCP's send path (pre-2020, abeni-2020).
    row(MPTCP, AllocSkb, V5_10, "__mptcp_do_alloc_tx_skb", MPTCP_C).at(MPTCP_AT).then("sk_stream_alloc_skb").lines(&[("v5.11", 1144, "alloc_skb_fclone")]),
    row(MPTCP, AllocPage, V5_10, "skb_page_frag_refill", "net/core/sock.c").at(MPTCP_AT).lines(&[("v5.11", 2479, "alloc_pages(")]),
    row(MPTCP, ReusePage, V5_10, "skb_page_frag_refill", "net/core/sock.c").at(MPTCP_AT).lines(&[("v5.11", 2466, "page_ref_count(pfrag->page) == 1")]),
    row(MPTCP, GetPage, V5_10, "get_page", "include/linux/mm.h").at(MPTCP_AT).lines(&[("v5.11", 1180, "page_ref_inc")]),
    row(MPTCP, PutPage, V5_10, "put_page", "include/linux/mm.h").at(MPTCP_AT).lines(&[("v5.11", 1209, "put_page_testzero")]),
    row(MPTCP, FreePage, V5_10, "__put_page", "mm/swap.c").at(MPTCP_AT).lines(&[("v5.11", 129, "__put_single_page")]),
    row(MPTCP, CarveDfrag, V5_10, "mptcp_carve_data_frag", MPTCP_C).at(MPTCP_AT).lines(&[("v5.11", 1094, "page_to_virt(pfrag->page) + offset")]),
    row(MPTCP, CopyToDfrag, V5_10, "mptcp_sendmsg", MPTCP_C).at(MPTCP_AT).lines(&[("v5.11", 1651, "copy_page_from_iter")]),
    row(MPTCP, PickSubflow, V5_10, "mptcp_subflow_get_send", MPTCP_C).at(MPTCP_AT).lines(&[("v5.11", 1432, "last_snd =")]),
    row(MPTCP, SendmsgFrag, V5_10, "mptcp_sendmsg_frag", MPTCP_C).at(MPTCP_AT).lines(&[("v5.11", 1309, "tcp_build_frag(")]),
    row(MPTCP, MarkEor, V5_10, "mptcp_sendmsg_frag", MPTCP_C).at(MPTCP_AT).lines(&[("v5.11", 1285, "eor = 1")]),
    row(MPTCP, ClearPsh, V5_10, "mptcp_sendmsg_frag", MPTCP_C).at(MPTCP_AT).lines(&[("v5.11", 1319, "&= ~TCPHDR_PSH")]),
    row(MPTCP, NewMapping, V5_10, "mptcp_sendmsg_frag", MPTCP_C).at(MPTCP_AT).lines(&[("v5.11", 1333, "mpext->data_seq =")]),
    row(MPTCP, ExtendMapping, V5_10, "mptcp_sendmsg_frag", MPTCP_C).at(MPTCP_AT).lines(&[("v5.11", 1320, "data_len +=")]),
    row(MPTCP, NewFrag, V5_10, "tcp_build_frag", "net/ipv4/tcp.c").at(MPTCP_AT).lines(&[("v5.11", 1009, "skb_fill_page_desc")]),
    row(MPTCP, Coalesce, V5_10, "tcp_build_frag", "net/ipv4/tcp.c").at(MPTCP_AT).lines(&[("v5.11", 1006, "skb_frag_size_add")]),
    row(MPTCP, MarkPsh, V5_10, "tcp_mark_push", "net/ipv4/tcp.c").at(MPTCP_AT).lines(&[("v5.11", 653, "TCPHDR_PSH")]),
    row(MPTCP, SubflowXmit, V5_10, "tcp_write_xmit", "net/ipv4/tcp_output.c").at(MPTCP_AT).lines(&[("v5.11", 2689, "tcp_transmit_skb(")]),
    row(MPTCP, ClearDfrag, V5_10, "__mptcp_clean_una", MPTCP_C).at(MPTCP_AT).lines(&[("v5.11", 1014, "dfrag_clear(")]),
    row(MPTCP, FreeSkb, V5_10, "sk_wmem_free_skb", "include/net/sock.h").at(MPTCP_AT).lines(&[("v5.11", 1552, "__kfree_skb")]),
];

const IXGBE: &str = "drivers/net/ethernet/intel/ixgbe/ixgbe_main.c";
/// The page-frag allocator is in mm/page_alloc.c in v6.12 (a later release moved it).
const PAGE_FRAG: &str = "mm/page_alloc.c";
const MPTCP_C: &str = "net/mptcp/protocol.c";

/// The kernel function an event of `mechanism` stands for in `era` (the trace's), if the
/// table has it.
pub fn kernel_fn(mechanism: &str, era: Era, e: &Event) -> Option<KernelFn> {
    let r = row_of(mechanism, era, e)?;
    let tag = r.tag(era);
    Some(KernelFn {
        name: r.name,
        file: r.file,
        tag,
        then: r.then,
        line: r.lines.iter().find(|s| s.0 == tag).map(|s| s.1),
    })
}

/// The row of an event: for the put of a head fragment its own row where there is one.
pub fn row_of(mechanism: &str, era: Era, e: &Event) -> Option<&'static Row> {
    let (kind, head) = (e.kind(), e.frees_head());
    let rows = || {
        TABLE
            .iter()
            .filter(move |r| r.mechanism == mechanism && r.kind == kind && r.eras.contains(&era))
    };
    rows()
        .find(|r| r.head == head)
        .or_else(|| rows().find(|r| !r.head))
}

impl crate::Trace {
    /// The kernel function `e`, an event of this trace, stands for.
    pub fn kernel_fn(&self, e: &Event) -> Option<KernelFn> {
        kernel_fn(&self.mechanism, self.era, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn one_row_per_mechanism_kind_and_era() {
        for (i, a) in TABLE.iter().enumerate() {
            for b in &TABLE[i + 1..] {
                let overlap = a.eras.iter().any(|e| b.eras.contains(e));
                let same = a.mechanism == b.mechanism && a.kind == b.kind && a.head == b.head;
                assert!(!(same && overlap), "{a:?} and {b:?}");
            }
        }
    }

    #[test]
    fn links_name_the_release_the_function_lives_in() {
        let park = Event::RxCachePark { skb: 0 };
        let f = kernel_fn(RX, Era::V6_12, &park).unwrap();
        assert_eq!(
            f.url(),
            "https://elixir.bootlin.com/linux/v5.2-rc1/C/ident/sk_eat_skb"
        );
        let psh = Event::MarkPsh { skb: 0 };
        let f = kernel_fn(SEND, Era::V2_6_33, &psh).unwrap();
        assert_eq!(
            (f.name, f.file, f.tag),
            ("tcp_mark_push", "net/ipv4/tcp.c", "v2.6.33")
        );
        assert_eq!(kernel_fn(SEND, Era::V5_10, &psh), None);
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
        };
        let free = Event::FreePage {
            page: 0,
            cpu: 0,
            head: true,
        };
        let name = |era, e: &Event| kernel_fn(RX, era, e).map(|f| f.label());
        assert_eq!(
            name(Era::V6_12, &put(true)).as_deref(),
            Some("skb_free_frag → page_frag_free")
        );
        assert_eq!(name(Era::V6_12, &free).as_deref(), Some("page_frag_free"));
        assert_eq!(name(Era::V6_12, &put(false)).as_deref(), Some("put_page"));
        assert_eq!(name(Era::V3_6, &put(true)).as_deref(), Some("put_page"));
        assert_eq!(name(Era::V3_6, &free).as_deref(), Some("__put_single_page"));
    }

    /// The releases whose source the table links.
    const RELEASES: &[&str] = &["v2.6.33", "v3.5", "v3.6", "v5.2-rc1", "v5.11", "v6.12"];

    #[test]
    fn each_line_belongs_to_a_release_its_row_links() {
        for r in TABLE {
            let tags: Vec<&str> = r.eras.iter().map(|&e| r.tag(e)).collect();
            assert!(tags.iter().all(|t| RELEASES.contains(t)), "{r:?}");
            for (i, &(tag, line, on)) in r.lines.iter().enumerate() {
                assert!(
                    tags.contains(&tag),
                    "{r:?}: {tag} is not a release it links"
                );
                assert!(line > 0 && !on.trim().is_empty(), "{r:?}");
                assert!(
                    r.lines[..i].iter().all(|s| s.0 != tag),
                    "{r:?}: two lines at {tag}"
                );
            }
        }
    }

    /// docs/kernel-lines.md records how each line was read; it and the table hold the same
    /// statements (release, file, line, identifiers), so a line renumbered in one is a failure
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
        let in_table: BTreeSet<(String, String, u32, String)> = TABLE
            .iter()
            .flat_map(|r| {
                r.lines
                    .iter()
                    .map(move |s| (s.0.into(), r.file.into(), s.1, s.2.into()))
            })
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
        let f = kernel_fn(RX, Era::V3_6, &alloc).unwrap();
        assert_eq!(
            f.line_url().as_deref(),
            Some("https://elixir.bootlin.com/linux/v3.6/source/net/core/skbuff.c#L379")
        );
        let park = kernel_fn(RX, Era::V3_6, &Event::RxCachePark { skb: 0 }).unwrap();
        assert_eq!(park.line_url(), None);
    }
}
