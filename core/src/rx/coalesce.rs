//! TCP's receive queue coalescing: `tcp_queue_rcv` -> `tcp_try_coalesce` ->
//! `skb_try_coalesce` (net/ipv4/tcp_input.c, net/core/skbuff.c; the same rules in v3.5, v3.6,
//! 5.2-rc1 and v6.12). Each in-order skb that reaches the receive queue is merged into the
//! queue's tail skb when it can be, and `kfree_skb_partial` frees what is left of it at once,
//! on the CPU that queued it (the softirq's, or the reader's when `release_sock` processes the
//! backlog):
//! - its bytes are copied into the tail's tailroom when they fit and the tail has no frags
//!   (`skb_tailroom` is 0 for a nonlinear skb); nothing of it is kept;
//! - else, neither having a frag_list: with its headers pulled, a header-split or tun skb
//!   holds nothing in its head, and its frags move while the tail has room for them
//!   (`nr_frags` together at most MAX_SKB_FRAGS); its head is freed;
//! - a payload in a page-fragment head (`head_frag`, not cloned) becomes one more frag of the
//!   tail while the tail has fewer than MAX_SKB_FRAGS together; only its `struct sk_buff`
//!   is freed (the head stolen); a kmalloc'ed head (`skb_head_is_locked`) is never merged.
//!
//! The tail is charged the truesize that moves (`delta_truesize`): the frags' share
//! (`truesize - SKB_TRUESIZE(skb_end_offset)`), or everything but the `struct sk_buff`
//! (`truesize - SKB_DATA_ALIGN(sizeof(struct sk_buff))`) when the head is stolen, 0 for a
//! copy. Era differences the model has no use for: v3.5 and v3.6 refuse a FIN (the model
//! sends none); 5.2-rc1 refuses zerocopy skbs and (CONFIG_TLS_DEVICE) a decrypted mix; v6.12
//! refuses a page_pool mix and unreadable frags (the model has neither). GRO's own merging
//! ([`super::gro`]) has the same frag rules.

use crate::consts::KernelConsts;
use crate::skb::{sk_buff_truesize, Absorb, Skb};

/// Whether `skb_try_coalesce` merges `from` into `to`, and how.
pub fn try_coalesce(to: &Skb, from: &Skb, k: &KernelConsts) -> Option<Absorb> {
    if to.nr_frags() == 0 && from.len <= to.head.tailroom {
        return Some(Absorb {
            copied: true,
            stolen_head: false,
            delta_truesize: 0,
        });
    }
    if !to.frag_list.is_empty() || !from.frag_list.is_empty() {
        return None;
    }
    let frags = to.nr_frags() + from.nr_frags();
    let max = k.max_skb_frags as usize;
    let sk_buff = sk_buff_truesize(k);
    if from.linear_len == 0 {
        return (frags <= max).then(|| Absorb {
            copied: false,
            stolen_head: false,
            delta_truesize: from.head.truesize - (from.head.head_bytes + sk_buff),
        });
    }
    from.head_frag?;
    (frags < max).then(|| Absorb {
        copied: false,
        stolen_head: true,
        delta_truesize: from.head.truesize - sk_buff,
    })
}

#[cfg(test)]
mod tests {
    use crate::trace::queue;
    use crate::Scenario;

    /// The receive queue after `frames` arrive with GRO off and nothing read: each skb's
    /// (len, linear, nr_frags, truesize).
    fn queued(variant: &str, nic: &str, arrive: &str) -> Vec<(u32, u32, usize, u32)> {
        let text = format!(
            "mechanism = \"rx\"\nvariant = \"{variant}\"\n[nic]\ngro = false\nbudget = 64\n{nic}\n\
             [[ops]]\nop = \"arrive\"\n{arrive}\n"
        );
        let t = Scenario::parse(&text)
            .unwrap()
            .run(&Default::default())
            .unwrap();
        let q = (t.steps[0].state.queues.iter())
            .find(|q| q.name == queue::SK_RECEIVE_QUEUE)
            .unwrap();
        (q.skbs.iter())
            .map(|s| (s.len, s.linear_len, s.nr_frags(), s.head.truesize))
            .collect()
    }

    /// v6.12 full frames (1514 bytes in a 1920-byte napi_alloc_cache fragment, truesize
    /// 1920 + 256): the first keeps its payload in the head, the next 17 heads are stolen as
    /// frags (each moving 2176 - 256 = 1920 of truesize), the 19th starts a new skb: 17 frags
    /// are MAX_SKB_FRAGS, and a stolen head needs `nr_frags + 0 < 17`.
    #[test]
    fn full_frames_merge_their_heads_until_max_skb_frags() {
        let got = queued("modern+none", "driver = \"full-frame\"", "frames = 17");
        assert_eq!(got, [(17 * 1448, 1448, 16, 2176 + 16 * 1920)]);
        let got = queued("modern+none", "driver = \"full-frame\"", "frames = 19");
        assert_eq!(
            got,
            [
                (18 * 1448, 1448, 17, 2176 + 17 * 1920),
                (1448, 1448, 0, 2176)
            ]
        );
    }

    /// v3.5 header split (a 512-byte head in an 896-byte fragment, truesize 896 + 256, and
    /// 2048 per payload buffer): the frags move, 2048 of truesize each, and the head is
    /// freed; 17 frames fill one skb (`nr_frags` together at most 17), the 18th starts the
    /// next.
    #[test]
    fn header_split_frags_move_until_max_skb_frags() {
        let got = queued(
            "duyck-2012+none",
            "driver = \"header-split\"",
            "frames = 18",
        );
        let one = 896 + 256 + 2048;
        assert_eq!(
            got,
            [(17 * 1448, 0, 17, one + 16 * 2048), (1448, 0, 1, one)]
        );
    }

    /// A linear tail with room takes a small segment's bytes by copy (v6.12 full frame: 1600
    /// bytes behind NET_SKB_PAD, 86 used), truesize unchanged; a tail with frags has no
    /// tailroom (`skb_tailroom` of a nonlinear skb is 0).
    #[test]
    fn small_segments_are_copied_into_a_linear_tail() {
        let got = queued(
            "modern+none",
            "driver = \"full-frame\"",
            "lens = [86, 86, 1514]",
        );
        assert_eq!(got, [(40 + 1448, 40, 1, 2176 + 1920)]);
    }

    /// A head that is no page fragment (a 9066-byte frame's, kmalloc'ed: `skb_head_is_locked`)
    /// is never merged.
    #[test]
    fn a_kmalloced_head_is_never_merged() {
        let got = queued(
            "modern+none",
            "driver = \"full-frame\"\n[socket]\nmss = 9000",
            "frames = 2",
        );
        assert_eq!(got.len(), 2);
    }
}
