//! What each event stands for in the kernel: per mechanism and era, the kernel function and
//! source file that do it, as one data table.

use crate::consts::Era;
use crate::events::Event;

/// A kernel function: its name and the source file that defines it, at the release `tag`
/// (usually the era's; a function that lives only in a later release names that one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelFn {
    pub name: &'static str,
    pub file: &'static str,
    pub tag: &'static str,
}

impl KernelFn {
    /// The identifier on Elixir, the Bootlin cross-referencer, at this exact release.
    pub fn url(&self) -> String {
        elixir_url(self.tag, self.name)
    }
}

/// `https://elixir.bootlin.com/linux/<tag>/C/ident/<name>`.
pub fn elixir_url(tag: &str, name: &str) -> String {
    format!("https://elixir.bootlin.com/linux/{tag}/C/ident/{name}")
}

/// One row: mechanism, event kind, the trace eras it covers, the kernel function, its file,
/// and the release to link when not the era's own (a feature of another release).
type Row = (
    &'static str,
    &'static str,
    &'static [Era],
    &'static str,
    &'static str,
    Option<&'static str>,
);

const OLD: &[Era] = &[Era::V2_6_33];
const NEW: &[Era] = &[Era::V6_12];
const RX_OLD: &[Era] = &[Era::V3_5, Era::V3_6];
const RX_ALL: &[Era] = &[Era::V3_5, Era::V3_6, Era::V6_12];
const V3_5: &[Era] = &[Era::V3_5];
const V3_6: &[Era] = &[Era::V3_6];
const MPTCP: &[Era] = &[Era::V5_10];
/// The MPTCP code the model follows is net-next of November 2020 with seed 003 applied,
/// released in v5.11.
const MPTCP_AT: Option<&str> = Some("v5.11");

/// Every event kind of every mechanism, per era, as the kernel names it. Each name was read
/// in that release's source; docs/kernel-functions.md lists the trees read.
const TABLE: &[Row] = &[
    // tcp_sendmsg, 2.6.33 (pre-2010, kumar-2010).
    (
        "sendmsg",
        "alloc_skb",
        OLD,
        "sk_stream_alloc_skb",
        "net/ipv4/tcp.c",
        None,
    ),
    (
        "sendmsg",
        "alloc_page",
        OLD,
        "sk_stream_alloc_page",
        "include/net/sock.h",
        None,
    ),
    (
        "sendmsg",
        "get_page",
        OLD,
        "get_page",
        "include/linux/mm.h",
        None,
    ),
    ("sendmsg", "put_page", OLD, "put_page", "mm/swap.c", None),
    (
        "sendmsg",
        "free_page",
        OLD,
        "free_hot_page",
        "mm/page_alloc.c",
        None,
    ),
    (
        "sendmsg",
        "copy_to_linear",
        OLD,
        "skb_add_data",
        "include/linux/skbuff.h",
        None,
    ),
    (
        "sendmsg",
        "copy_to_page",
        OLD,
        "skb_copy_to_page",
        "include/net/sock.h",
        None,
    ),
    (
        "sendmsg",
        "new_frag",
        OLD,
        "skb_fill_page_desc",
        "include/linux/skbuff.h",
        None,
    ),
    (
        "sendmsg",
        "coalesce",
        OLD,
        "tcp_sendmsg",
        "net/ipv4/tcp.c",
        None,
    ),
    (
        "sendmsg",
        "mark_psh",
        OLD,
        "tcp_mark_push",
        "net/ipv4/tcp.c",
        None,
    ),
    (
        "sendmsg",
        "clear_psh",
        OLD,
        "tcp_sendmsg",
        "net/ipv4/tcp.c",
        None,
    ),
    ("sendmsg", "push", OLD, "tcp_push", "net/ipv4/tcp.c", None),
    (
        "sendmsg",
        "linearize",
        OLD,
        "skb_linearize",
        "include/linux/skbuff.h",
        None,
    ),
    (
        "sendmsg",
        "xmit",
        OLD,
        "tcp_transmit_skb",
        "net/ipv4/tcp_output.c",
        None,
    ),
    (
        "sendmsg",
        "segment",
        OLD,
        "tcp_tso_segment",
        "net/ipv4/tcp.c",
        None,
    ),
    (
        "sendmsg",
        "ack",
        OLD,
        "tcp_clean_rtx_queue",
        "net/ipv4/tcp_input.c",
        None,
    ),
    (
        "sendmsg",
        "free_skb",
        OLD,
        "sk_wmem_free_skb",
        "include/net/sock.h",
        None,
    ),
    // tcp_sendmsg_locked, v6.12 (modern).
    (
        "sendmsg",
        "alloc_skb",
        NEW,
        "tcp_stream_alloc_skb",
        "net/ipv4/tcp.c",
        None,
    ),
    (
        "sendmsg",
        "alloc_page",
        NEW,
        "skb_page_frag_refill",
        "net/core/sock.c",
        None,
    ),
    (
        "sendmsg",
        "reuse_page",
        NEW,
        "skb_page_frag_refill",
        "net/core/sock.c",
        None,
    ),
    (
        "sendmsg",
        "get_page",
        NEW,
        "get_page",
        "include/linux/mm.h",
        None,
    ),
    (
        "sendmsg",
        "put_page",
        NEW,
        "put_page",
        "include/linux/mm.h",
        None,
    ),
    (
        "sendmsg",
        "free_page",
        NEW,
        "__folio_put",
        "mm/swap.c",
        None,
    ),
    (
        "sendmsg",
        "copy_to_page",
        NEW,
        "skb_copy_to_page_nocache",
        "include/net/sock.h",
        None,
    ),
    (
        "sendmsg",
        "new_frag",
        NEW,
        "skb_fill_page_desc",
        "include/linux/skbuff.h",
        None,
    ),
    (
        "sendmsg",
        "coalesce",
        NEW,
        "skb_frag_size_add",
        "include/linux/skbuff.h",
        None,
    ),
    (
        "sendmsg",
        "mark_psh",
        NEW,
        "tcp_mark_push",
        "net/ipv4/tcp.c",
        None,
    ),
    (
        "sendmsg",
        "clear_psh",
        NEW,
        "tcp_sendmsg_locked",
        "net/ipv4/tcp.c",
        None,
    ),
    (
        "sendmsg",
        "mark_eor",
        NEW,
        "tcp_sendmsg_locked",
        "net/ipv4/tcp.c",
        None,
    ),
    ("sendmsg", "push", NEW, "tcp_push", "net/ipv4/tcp.c", None),
    (
        "sendmsg",
        "linearize",
        NEW,
        "validate_xmit_skb",
        "net/core/dev.c",
        None,
    ),
    (
        "sendmsg",
        "xmit",
        NEW,
        "tcp_transmit_skb",
        "net/ipv4/tcp_output.c",
        None,
    ),
    (
        "sendmsg",
        "segment",
        NEW,
        "tcp_gso_segment",
        "net/ipv4/tcp_offload.c",
        None,
    ),
    (
        "sendmsg",
        "ack",
        NEW,
        "tcp_clean_rtx_queue",
        "net/ipv4/tcp_input.c",
        None,
    ),
    (
        "sendmsg",
        "free_skb",
        NEW,
        "tcp_wmem_free_skb",
        "include/net/tcp.h",
        None,
    ),
    // The receive path, v3.5 (pre-2012, duyck-2012) and v3.6 (duyck-3.6).
    (
        "rx",
        "napi_poll",
        RX_ALL,
        "net_rx_action",
        "net/core/dev.c",
        None,
    ),
    ("rx", "rx_frame", RX_ALL, "ixgbe_clean_rx_irq", IXGBE, None),
    (
        "rx",
        "alloc_page",
        RX_ALL,
        "alloc_pages",
        "include/linux/gfp.h",
        None,
    ),
    (
        "rx",
        "alloc_skb",
        RX_OLD,
        "__netdev_alloc_skb",
        "net/core/skbuff.c",
        None,
    ),
    (
        "rx",
        "new_frag",
        RX_OLD,
        "skb_add_rx_frag",
        "net/core/skbuff.c",
        None,
    ),
    (
        "rx",
        "get_page",
        RX_OLD,
        "get_page",
        "include/linux/mm.h",
        None,
    ),
    ("rx", "put_page", RX_OLD, "put_page", "mm/swap.c", None),
    (
        "rx",
        "free_page",
        RX_OLD,
        "__put_single_page",
        "mm/swap.c",
        None,
    ),
    (
        "rx",
        "frag_alloc",
        V3_5,
        "netdev_alloc_frag",
        "net/core/skbuff.c",
        None,
    ),
    (
        "rx",
        "frag_alloc",
        V3_6,
        "__netdev_alloc_frag",
        "net/core/skbuff.c",
        None,
    ),
    (
        "rx",
        "frag_cache_release",
        V3_5,
        "netdev_alloc_frag",
        "net/core/skbuff.c",
        None,
    ),
    (
        "rx",
        "frag_cache_release",
        V3_6,
        "__netdev_alloc_frag",
        "net/core/skbuff.c",
        None,
    ),
    (
        "rx",
        "reuse_page",
        V3_5,
        "netdev_alloc_frag",
        "net/core/skbuff.c",
        None,
    ),
    (
        "rx",
        "reuse_page",
        V3_6,
        "__netdev_alloc_frag",
        "net/core/skbuff.c",
        None,
    ),
    (
        "rx",
        "gro_merge",
        RX_OLD,
        "skb_gro_receive",
        "net/core/skbuff.c",
        None,
    ),
    (
        "rx",
        "gro_flush",
        RX_OLD,
        "napi_gro_flush",
        "net/core/dev.c",
        None,
    ),
    (
        "rx",
        "queue_rcv",
        RX_OLD,
        "tcp_queue_rcv",
        "net/ipv4/tcp_input.c",
        None,
    ),
    (
        "rx",
        "backlog_add",
        RX_OLD,
        "sk_add_backlog",
        "include/net/sock.h",
        None,
    ),
    (
        "rx",
        "copy_to_user",
        RX_OLD,
        "tcp_recvmsg",
        "net/ipv4/tcp.c",
        None,
    ),
    // The receive path, v6.12 (modern).
    (
        "rx",
        "alloc_skb",
        NEW,
        "napi_alloc_skb",
        "net/core/skbuff.c",
        None,
    ),
    (
        "rx",
        "frag_alloc_1k",
        NEW,
        "page_frag_alloc_1k",
        "net/core/skbuff.c",
        None,
    ),
    (
        "rx",
        "new_frag",
        NEW,
        "skb_add_rx_frag",
        "include/linux/skbuff.h",
        None,
    ),
    (
        "rx",
        "put_page",
        NEW,
        "put_page",
        "include/linux/mm.h",
        None,
    ),
    ("rx", "free_page", NEW, "__folio_put", "mm/swap.c", None),
    (
        "rx",
        "frag_alloc",
        NEW,
        "__page_frag_alloc_align",
        PAGE_FRAG,
        None,
    ),
    (
        "rx",
        "frag_cache_release",
        NEW,
        "__page_frag_alloc_align",
        PAGE_FRAG,
        None,
    ),
    (
        "rx",
        "reuse_page",
        NEW,
        "__page_frag_alloc_align",
        PAGE_FRAG,
        None,
    ),
    (
        "rx",
        "gro_merge",
        NEW,
        "skb_gro_receive",
        "net/core/gro.c",
        None,
    ),
    (
        "rx",
        "gro_chain",
        NEW,
        "skb_gro_receive",
        "net/core/gro.c",
        None,
    ),
    (
        "rx",
        "gro_flush",
        NEW,
        "napi_gro_flush",
        "net/core/gro.c",
        None,
    ),
    (
        "rx",
        "queue_rcv",
        NEW,
        "tcp_queue_rcv",
        "net/ipv4/tcp_input.c",
        None,
    ),
    (
        "rx",
        "backlog_add",
        NEW,
        "tcp_add_backlog",
        "net/ipv4/tcp_ipv4.c",
        None,
    ),
    (
        "rx",
        "copy_to_user",
        NEW,
        "tcp_recvmsg_locked",
        "net/ipv4/tcp.c",
        None,
    ),
    // Either allocator era: the socket side, and each rx cache in the release it lives in.
    (
        "rx",
        "backlog_process",
        RX_ALL,
        "__release_sock",
        "net/core/sock.c",
        None,
    ),
    (
        "rx",
        "rx_drop",
        RX_ALL,
        "tcp_v4_rcv",
        "net/ipv4/tcp_ipv4.c",
        None,
    ),
    (
        "rx",
        "free_skb",
        RX_ALL,
        "__kfree_skb",
        "net/core/skbuff.c",
        None,
    ),
    (
        "rx",
        "rx_cache_park",
        RX_ALL,
        "sk_eat_skb",
        "include/net/sock.h",
        Some("v5.2-rc1"),
    ),
    (
        "rx",
        "rx_cache_take",
        RX_ALL,
        "tcp_v4_rcv",
        "net/ipv4/tcp_ipv4.c",
        Some("v5.2-rc1"),
    ),
    (
        "rx",
        "defer_free",
        RX_ALL,
        "skb_attempt_defer_free",
        "net/core/skbuff.c",
        Some("v6.12"),
    ),
    (
        "rx",
        "defer_kick",
        RX_ALL,
        "kick_defer_list_purge",
        "net/core/dev.c",
        Some("v6.12"),
    ),
    (
        "rx",
        "defer_flush",
        RX_ALL,
        "skb_defer_free_flush",
        "net/core/dev.c",
        Some("v6.12"),
    ),
    // MPTCP's send path (pre-2020, abeni-2020).
    (
        "mptcp",
        "alloc_skb",
        MPTCP,
        "sk_stream_alloc_skb",
        "net/ipv4/tcp.c",
        MPTCP_AT,
    ),
    (
        "mptcp",
        "alloc_page",
        MPTCP,
        "skb_page_frag_refill",
        "net/core/sock.c",
        MPTCP_AT,
    ),
    (
        "mptcp",
        "reuse_page",
        MPTCP,
        "skb_page_frag_refill",
        "net/core/sock.c",
        MPTCP_AT,
    ),
    (
        "mptcp",
        "get_page",
        MPTCP,
        "get_page",
        "include/linux/mm.h",
        MPTCP_AT,
    ),
    (
        "mptcp",
        "put_page",
        MPTCP,
        "put_page",
        "include/linux/mm.h",
        MPTCP_AT,
    ),
    (
        "mptcp",
        "free_page",
        MPTCP,
        "__put_page",
        "mm/swap.c",
        MPTCP_AT,
    ),
    (
        "mptcp",
        "carve_dfrag",
        MPTCP,
        "mptcp_carve_data_frag",
        MPTCP_C,
        MPTCP_AT,
    ),
    (
        "mptcp",
        "copy_to_dfrag",
        MPTCP,
        "mptcp_sendmsg",
        MPTCP_C,
        MPTCP_AT,
    ),
    (
        "mptcp",
        "pick_subflow",
        MPTCP,
        "mptcp_subflow_get_send",
        MPTCP_C,
        MPTCP_AT,
    ),
    (
        "mptcp",
        "sendmsg_frag",
        MPTCP,
        "mptcp_sendmsg_frag",
        MPTCP_C,
        MPTCP_AT,
    ),
    (
        "mptcp",
        "mark_eor",
        MPTCP,
        "mptcp_sendmsg_frag",
        MPTCP_C,
        MPTCP_AT,
    ),
    (
        "mptcp",
        "clear_psh",
        MPTCP,
        "mptcp_sendmsg_frag",
        MPTCP_C,
        MPTCP_AT,
    ),
    (
        "mptcp",
        "new_mapping",
        MPTCP,
        "mptcp_sendmsg_frag",
        MPTCP_C,
        MPTCP_AT,
    ),
    (
        "mptcp",
        "extend_mapping",
        MPTCP,
        "mptcp_sendmsg_frag",
        MPTCP_C,
        MPTCP_AT,
    ),
    (
        "mptcp",
        "new_frag",
        MPTCP,
        "tcp_build_frag",
        "net/ipv4/tcp.c",
        MPTCP_AT,
    ),
    (
        "mptcp",
        "coalesce",
        MPTCP,
        "tcp_build_frag",
        "net/ipv4/tcp.c",
        MPTCP_AT,
    ),
    (
        "mptcp",
        "mark_psh",
        MPTCP,
        "tcp_mark_push",
        "net/ipv4/tcp.c",
        MPTCP_AT,
    ),
    (
        "mptcp",
        "subflow_xmit",
        MPTCP,
        "tcp_write_xmit",
        "net/ipv4/tcp_output.c",
        MPTCP_AT,
    ),
    (
        "mptcp",
        "clear_dfrag",
        MPTCP,
        "__mptcp_clean_una",
        MPTCP_C,
        MPTCP_AT,
    ),
    (
        "mptcp",
        "free_skb",
        MPTCP,
        "sk_wmem_free_skb",
        "include/net/sock.h",
        MPTCP_AT,
    ),
];

const IXGBE: &str = "drivers/net/ethernet/intel/ixgbe/ixgbe_main.c";
/// The page-frag allocator is in mm/page_alloc.c in v6.12 (a later release moved it).
const PAGE_FRAG: &str = "mm/page_alloc.c";
const MPTCP_C: &str = "net/mptcp/protocol.c";

/// The kernel function an event of `mechanism` stands for in `era` (the trace's), if the
/// table has it.
pub fn kernel_fn(mechanism: &str, era: Era, e: &Event) -> Option<KernelFn> {
    let kind = e.kind();
    TABLE
        .iter()
        .find(|r| r.0 == mechanism && r.1 == kind && r.2.contains(&era))
        .map(|&(_, _, _, name, file, at)| KernelFn {
            name,
            file,
            tag: at.unwrap_or(era.name()),
        })
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

    #[test]
    fn one_row_per_mechanism_kind_and_era() {
        for (i, a) in TABLE.iter().enumerate() {
            for b in &TABLE[i + 1..] {
                let overlap = a.2.iter().any(|e| b.2.contains(e));
                assert!(!(a.0 == b.0 && a.1 == b.1 && overlap), "{a:?} and {b:?}");
            }
        }
    }

    #[test]
    fn links_name_the_release_the_function_lives_in() {
        let park = Event::RxCachePark { skb: 0 };
        let f = kernel_fn("rx", Era::V6_12, &park).unwrap();
        assert_eq!(
            f.url(),
            "https://elixir.bootlin.com/linux/v5.2-rc1/C/ident/sk_eat_skb"
        );
        let alloc = Event::MarkPsh { skb: 0 };
        let f = kernel_fn("sendmsg", Era::V2_6_33, &alloc).unwrap();
        assert_eq!(
            (f.name, f.file, f.tag),
            ("tcp_mark_push", "net/ipv4/tcp.c", "v2.6.33")
        );
        assert_eq!(kernel_fn("sendmsg", Era::V5_10, &alloc), None);
    }
}
