//! Seed 003: MPTCP max-size skbs (Paolo Abeni, November 2020, commit 15e6ca974b14, v5.11).
//!
//! MPTCP copies user data into dfrags on the socket's page frag ([`dfrag`]), then pushes them
//! onto TCP subflows ([`push`]) with mptcp_sendmsg_frag ([`sendmsg_frag`]), which collapses
//! onto a subflow's tail skb through tcp_build_frag ([`subflow`]). Before the seed, the room
//! left in the tail was passed as tcp_build_frag's goal and tcp_build_frag subtracted the
//! tail's length again, so skbs stopped near half the size goal.
//!
//! The code the seed patched is net-next of November 2020 (tcp_build_frag,
//! mptcp_push_pending), merged for v5.11: both lanes are labelled with
//! [`Era::V5_11Rc1`](crate::consts::Era::V5_11Rc1), the first tag with the seed (no tag has
//! the code without it; v5.10 has no tcp_build_frag).
//!
//! A subflow's new skb: in that tree MPTCP allocates it ahead of time,
//! `__mptcp_do_alloc_tx_skb` (`alloc_skb_fclone(MAX_TCP_HEADER)`, MAX_TCP_HEADER reserved,
//! the rest of the head `reserved_tailroom`), and parks it in `ssk->sk_tx_skb_cache`
//! (`__mptcp_alloc_tx_skb`), where tcp_build_frag's `sk_stream_alloc_skb(ssk, 0, ...)` takes
//! it; the head is the one `sk_stream_alloc_skb` would build ([`subflow`]).
//!
//! Layers, each using only those above it: [`variant`], [`counters`] and [`tx`] ->
//! [`dfrag`], [`subflow`] -> [`sendmsg_frag`] -> [`push`] -> [`scenario`] (the format for
//! `mechanism = "mptcp"` and its checks) -> [`machine`] (the socket and the run).

pub(crate) mod counters;
pub(crate) mod dfrag;
pub(crate) mod machine;
pub(crate) mod push;
pub(crate) mod scenario;
pub(crate) mod sendmsg_frag;
pub(crate) mod subflow;
pub(crate) mod tx;
pub(crate) mod variant;

pub use counters::MptcpCounters;
pub use dfrag::MPTCP_FRAG_REFILL;
pub use push::Scheduler;
pub use scenario::{MptcpOp, MptcpScenario};
pub use subflow::SubflowParams;
pub use tx::{Stats, Tx};
pub use variant::{Fix, VARIANTS};
