//! The transmit path: unsent skbs go to the device (`tcp_write_xmit` -> `tcp_transmit_skb`
//! -> `dev_queue_xmit`). A non-SG device gets every skb with frags linearized
//! (`skb_linearize` in `dev_queue_xmit`, 2.6.33; `validate_xmit_skb` today); GSO/TSO cuts a
//! super-packet into MSS-sized wire segments, PSH only on the last (`tcp_tso_segment` /
//! `tcp_gso_segment`).

use super::sock::SendSock;
use crate::trace::{Event, Events};

/// `__pskb_pull_tail` asks `pskb_expand_head` for this much extra tailroom beyond what the
/// pulled bytes need ("eat + 128").
const PULL_TAIL_SLACK: u32 = 128;

impl SendSock {
    /// Hands every unsent skb to the device.
    pub fn transmit(&mut self, ev: &mut Events) {
        while self.sent < self.queue.len() {
            self.xmit_one(self.sent, ev);
            self.sent += 1;
        }
    }

    fn xmit_one(&mut self, idx: usize, ev: &mut Events) {
        let (mss, sg) = (self.cfg.socket.mss, self.cfg.device.sg);
        let skb = &mut self.queue[idx];
        skb.sent = true;
        let (id, seq, len) = (skb.id, skb.seq, skb.len);
        let linearized = !sg && !skb.frags.is_empty();
        if linearized {
            // The transmitted clone shares the head, so __pskb_pull_tail always reallocates:
            // pskb_expand_head(skb, 0, eat + 128) with eat = the bytes that do not fit the
            // tailroom, then copies every frag byte into the new head. (The old head's
            // headers and linear bytes are copied too; not counted here. The transient page
            // references of the clone are not modelled.)
            let end = skb.head.headroom + skb.linear_len + skb.head.tailroom;
            let eat = skb.data_len.saturating_sub(skb.head.tailroom);
            let extra = if eat > 0 { eat + PULL_TAIL_SLACK } else { 0 };
            let head_bytes = self.cfg.variant.head_alloc(&self.cfg.k, end + extra);
            let copied = skb.data_len;
            ev.emit(|| Event::Linearize {
                skb: id,
                head_bytes,
                copied,
            });
            self.c.linearize_copies += 1;
            self.c.linearize_head_bytes += head_bytes as u64;
            self.c.linearize_copy_bytes += copied as u64;
        }
        // tcp_set_skb_tso_segs: one segment per MSS (a non-GSO skb is never above the MSS).
        let gso_segs = len.div_ceil(mss).max(1);
        let psh = skb.psh;
        ev.emit(|| Event::Xmit {
            skb: id,
            seq,
            len,
            gso_segs,
            linearized,
        });
        if ev.is_on() {
            for s in 0..gso_segs {
                let off = s * mss;
                let seg_len = mss.min(len - off);
                ev.emit(|| Event::Segment {
                    seq: seq.wrapping_add(off),
                    len: seg_len,
                    psh: psh && s + 1 == gso_segs,
                });
            }
        }
        self.c.xmit_skbs += 1;
        self.c.wire_segments += gso_segs as u64;
        self.c.wire_bytes += len as u64;
        self.c.psh_segments += psh as u64;
        self.snd_nxt += len as u64;
    }
}
