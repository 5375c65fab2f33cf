//! Checks shared by the send and MPTCP test files.

use skblab_core::trace::State;

/// After close, the only live page may be the one a page-frag cursor still points at (today's
/// task frag, which outlives the socket), held by that cursor alone. Returns how many pages
/// are left (0 or 1), so a caller can check `allocated = freed + left`.
pub fn only_task_frag_left(st: &State) -> u64 {
    let held: Vec<_> = st.cursors.iter().filter_map(|c| c.page).collect();
    let live: Vec<_> = st.pages.iter().map(|p| (p.id, p.count)).collect();
    let want: Vec<_> = held.iter().map(|&p| (p, 1)).collect();
    assert_eq!(live, want, "live pages (id, count) after close");
    assert!(
        st.queues.iter().all(|q| q.skbs.is_empty()),
        "an skb outlived close"
    );
    held.len() as u64
}
