//! The transmit path: unsent skbs go to the device (`tcp_write_xmit` -> `tcp_transmit_skb`
//! -> `dev_queue_xmit`). A non-SG device gets every skb with frags linearized
//! (`skb_linearize` in `dev_queue_xmit`, 2.6.33; `validate_xmit_skb` today), or, for a GSO
//! skb, cut by software GSO into linear segments. GSO/TSO cuts a super-packet into MSS-sized
//! wire segments, PSH only on the last (`tcp_tso_segment` / `tcp_gso_segment`).

use super::sock::{write_queue, TcpSock, Xmitted};
use crate::events::Event;
use crate::replay::Log;
use crate::skb::Skb;

/// `__pskb_pull_tail` asks `pskb_expand_head` for this much extra tailroom beyond what the
/// pulled bytes need ("eat + 128").
const PULL_TAIL_SLACK: u32 = 128;

impl TcpSock {
    /// Hands every unsent skb to the device: from the send head (the first skb not sent;
    /// the unsent ones are the queue's tail) to the end.
    pub(super) fn transmit(&mut self, log: &mut Log) {
        let q = &write_queue(log.state()).skbs;
        let (len, unsent) = (q.len(), q.iter().rev().take_while(|s| !s.sent).count());
        for idx in len - unsent..len {
            self.xmit_one(idx, log);
        }
    }

    fn xmit_one(&mut self, idx: usize, log: &mut Log) {
        let mss = self.cfg.socket.mss;
        let skb = &write_queue(log.state()).skbs[idx];
        let (id, seq, len, psh) = (skb.id, skb.seq, skb.len, skb.psh);
        // tcp_set_skb_tso_segs: one segment per MSS.
        let gso_segs = len.div_ceil(mss).max(1);
        let linearized = !self.cfg.device.sg && !skb.frags.is_empty();
        if linearized {
            let (head_bytes, allocs) = self.linearize_cost(skb, gso_segs);
            let copied = skb.data_len;
            log.emit(Event::Linearize {
                skb: id,
                head_bytes,
                copied,
            });
            self.c.linearize_copies += allocs as u64;
            self.c.linearize_head_bytes += head_bytes as u64;
            self.c.linearize_copy_bytes += copied as u64;
        }
        log.emit(Event::Xmit {
            skb: id,
            seq,
            len,
            gso_segs,
            linearized,
        });
        if log.is_on() {
            for s in 0..gso_segs {
                let off = s * mss;
                let seg_len = mss.min(len - off);
                log.note(|| Event::Segment {
                    seq: seq.wrapping_add(off),
                    len: seg_len,
                    psh: psh && s + 1 == gso_segs,
                });
            }
        }
        if let Some(log) = &mut self.xmitted {
            log.push(Xmitted {
                offset: self.snd_nxt,
                len,
                psh,
            });
        }
        self.c.xmit_skbs += 1;
        self.c.wire_segments += gso_segs as u64;
        self.c.wire_bytes += len as u64;
        self.c.psh_segments += psh as u64;
        self.snd_nxt += len as u64;
    }

    /// What a non-SG device costs for the frags of `skb`: (head bytes allocated,
    /// allocations).
    ///
    /// One MSS or less (every 2.6.33 skb on such a device): `skb_linearize`. The transmitted
    /// clone shares the head, so `__pskb_pull_tail` always reallocates it:
    /// `pskb_expand_head(skb, 0, eat + 128)` with `eat` = the bytes that do not fit the
    /// tailroom; then every frag byte is copied in. A GSO skb (today TCP always builds them)
    /// goes through software GSO instead: `skb_segment` allocates each segment with its
    /// payload copied into the linear area (head sized headroom + segment, approximate).
    /// Not counted: the old head's headers copied along, and the clone's transient page
    /// references.
    fn linearize_cost(&self, skb: &Skb, gso_segs: u32) -> (u32, u32) {
        let (v, k, mss) = (self.cfg.variant, &self.cfg.k, self.cfg.socket.mss);
        if gso_segs > 1 {
            let bytes = (0..gso_segs)
                .map(|s| v.head_alloc(k, skb.head.headroom + mss.min(skb.len - s * mss)))
                .sum();
            return (bytes, gso_segs);
        }
        let end = skb.head.headroom + skb.linear_len + skb.head.tailroom;
        let eat = skb.data_len.saturating_sub(skb.head.tailroom);
        let extra = if eat > 0 { eat + PULL_TAIL_SLACK } else { 0 };
        (v.head_alloc(k, end + extra), 1)
    }
}
