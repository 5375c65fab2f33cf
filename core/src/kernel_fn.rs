//! What each event stands for in the kernel: its kind (the trace's `ev` tag) and, per
//! mechanism and era, the kernel function and source file that do it, as one data table.

use crate::trace::Event;

impl Event {
    /// The event's kind, as the trace's `ev` tag names it.
    pub fn kind(&self) -> &'static str {
        use Event::*;
        match self {
            AllocPage { .. } => "alloc_page",
            GetPage { .. } => "get_page",
            PutPage { .. } => "put_page",
            FreePage { .. } => "free_page",
            ReusePage { .. } => "reuse_page",
            AllocSkb { .. } => "alloc_skb",
            FreeSkb { .. } => "free_skb",
            CopyToLinear { .. } => "copy_to_linear",
            CopyToPage { .. } => "copy_to_page",
            NewFrag { .. } => "new_frag",
            Coalesce { .. } => "coalesce",
            MarkPsh { .. } => "mark_psh",
            ClearPsh { .. } => "clear_psh",
            Push { .. } => "push",
            Linearize { .. } => "linearize",
            Xmit { .. } => "xmit",
            Segment { .. } => "segment",
            Ack { .. } => "ack",
            NapiPoll { .. } => "napi_poll",
            RxFrame { .. } => "rx_frame",
            FragAlloc { .. } => "frag_alloc",
            FragCacheRelease { .. } => "frag_cache_release",
            GroMerge { .. } => "gro_merge",
            GroChain { .. } => "gro_chain",
            GroFlush { .. } => "gro_flush",
            QueueRcv { .. } => "queue_rcv",
            BacklogAdd { .. } => "backlog_add",
            BacklogProcess { .. } => "backlog_process",
            RxDrop { .. } => "rx_drop",
            CopyToUser { .. } => "copy_to_user",
            RxCachePark { .. } => "rx_cache_park",
            RxCacheTake { .. } => "rx_cache_take",
            DeferFree { .. } => "defer_free",
            DeferKick { .. } => "defer_kick",
            DeferFlush { .. } => "defer_flush",
            CarveDfrag { .. } => "carve_dfrag",
            CopyToDfrag { .. } => "copy_to_dfrag",
            PickSubflow { .. } => "pick_subflow",
            SendmsgFrag { .. } => "sendmsg_frag",
            MarkEor { .. } => "mark_eor",
            NewMapping { .. } => "new_mapping",
            ExtendMapping { .. } => "extend_mapping",
            SubflowXmit { .. } => "subflow_xmit",
            ClearDfrag { .. } => "clear_dfrag",
        }
    }

    /// The skb the event names, if it names one.
    pub fn skb(&self) -> Option<crate::skb::SkbId> {
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
            | ExtendMapping { skb, .. } => Some(skb),
            _ => None,
        }
    }
}

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
