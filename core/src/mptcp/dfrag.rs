//! The MPTCP socket's data fragments (dfrags): mptcp_sendmsg copies user data into the
//! socket's page frag, each run of data preceded by a `struct mptcp_data_frag` header carved
//! from the same page (net/mptcp/protocol.c, net-next of November 2020 as patched by seed 003,
//! released in v5.11: mptcp_sendmsg, mptcp_carve_data_frag, mptcp_frag_can_collapse_to).
//!
//! The header sits in the page between runs of data, so two dfrags are never adjacent on the
//! page: a subflow skb gets one frag per dfrag, never a coalesced one.

use super::tx::Tx;
use crate::events::{Event, Events};
use crate::page::PageId;
use crate::page_frag::PageFrag;
use crate::trace;

/// sizeof(struct mptcp_data_frag) on x86_64 in the seed's tree: list_head (16), u64 data_seq
/// (8), u16 data_len, offset, overhead, already_sent (8), struct page * (8) = 40. The u16
/// fields and `already_sent` came with "mptcp: add accounting for pending data" (net-next,
/// 16 Nov 2020, ten days before the seed); v5.10 still has three ints and no already_sent
/// (48 bytes).
pub const MPTCP_DATA_FRAG_SIZE: u32 = 40;

/// mptcp_page_frag_refill asks skb_page_frag_refill for `32 + sizeof(struct
/// mptcp_data_frag)` = 72 bytes: room for a header and a little data.
pub const MPTCP_FRAG_REFILL: u32 = 32 + MPTCP_DATA_FRAG_SIZE;

/// `struct mptcp_data_frag`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dfrag {
    pub data_seq: u64,
    pub page: PageId,
    /// Where the data starts in the page (just past the header).
    pub offset: u32,
    pub data_len: u32,
    /// Header bytes plus the alignment padding before it.
    pub overhead: u32,
    /// Bytes already handed to some subflow.
    pub already_sent: u32,
}

impl Dfrag {
    pub fn pending(&self) -> bool {
        self.already_sent < self.data_len
    }

    pub fn view(&self) -> trace::Dfrag {
        trace::Dfrag {
            data_seq: self.data_seq,
            page: self.page,
            offset: self.offset,
            data_len: self.data_len,
            already_sent: self.already_sent,
        }
    }
}

/// The MPTCP-level send buffer: the page frag cursor and the dfrags (the rtx queue, whose
/// unsent part starts at `first_pending`).
#[derive(Debug, Default)]
pub struct SendBuf {
    pub pfrag: PageFrag,
    pub dfrags: Vec<Dfrag>,
    /// msk->write_seq: the data sequence number of the next user byte.
    pub write_seq: u64,
}

impl SendBuf {
    /// msk->first_pending: the index of the first dfrag with data not yet sent. Data goes
    /// out in order, so the sent dfrags are a prefix of the list (a binary search finds it,
    /// where a scan from the front would cost a write O(dfrags)).
    pub fn first_pending(&self) -> usize {
        self.dfrags.partition_point(|d| !d.pending())
    }

    /// mptcp_pending_tail: the last dfrag, if some data is still pending.
    fn pending_tail(&self) -> Option<&Dfrag> {
        self.dfrags.last().filter(|d| d.pending())
    }

    /// mptcp_frag_can_collapse_to: append to the pending tail dfrag only when it lies on the
    /// page frag's page, the page has room left and the data sequence continues it.
    fn can_collapse_to(&self, df: &Dfrag) -> bool {
        self.pfrag.page == Some(df.page)
            && self.pfrag.size > self.pfrag.offset
            && df.data_seq + df.data_len as u64 == self.write_seq
    }

    /// The copy half of mptcp_sendmsg: `bytes` of user data go into dfrags, refilling the
    /// page frag as needed. Returns the bytes copied (all of them: the model never runs out
    /// of memory).
    pub fn sendmsg_copy(&mut self, bytes: u64, high_order: bool, tx: &mut Tx, ev: &mut Events) {
        let mut left = bytes;
        while left > 0 {
            let collapse = self.pending_tail().is_some_and(|d| self.can_collapse_to(d));
            if !collapse {
                self.carve(high_order, tx, ev);
            }
            let pfrag_size = self.pfrag.size;
            let df = self
                .dfrags
                .last_mut()
                .expect("model bug: no dfrag to copy into");
            let offset = df.offset + df.data_len;
            let psize = (pfrag_size - offset).min(u32::try_from(left).unwrap_or(u32::MAX));
            let (data_seq, page) = (df.data_seq, df.page);
            df.data_len += psize;
            ev.emit(|| Event::CopyToDfrag {
                data_seq,
                page,
                offset,
                bytes: psize,
            });
            self.pfrag.advance(psize, &mut tx.pool);
            self.write_seq += psize as u64;
            tx.stats.bytes_written += psize as u64;
            left -= psize as u64;
        }
    }

    /// mptcp_page_frag_refill + mptcp_carve_data_frag: the header goes at the page frag's
    /// offset rounded up to sizeof(long); the dfrag takes its own page reference.
    fn carve(&mut self, high_order: bool, tx: &mut Tx, ev: &mut Events) {
        self.pfrag
            .refill(MPTCP_FRAG_REFILL, high_order, &tx.k, &mut tx.pool, 0, ev);
        let page = self.pfrag.page.expect("model bug: refill left no page");
        let orig = self.pfrag.offset;
        let aligned = orig.next_multiple_of(8);
        let overhead = aligned - orig + MPTCP_DATA_FRAG_SIZE;
        let data_seq = self.write_seq;
        ev.emit(|| Event::CarveDfrag {
            data_seq,
            page,
            offset: aligned,
            overhead,
        });
        tx.pool.get(page, ev);
        self.pfrag.advance(overhead, &mut tx.pool);
        self.dfrags.push(Dfrag {
            data_seq,
            page,
            offset: orig + overhead,
            data_len: 0,
            overhead,
            already_sent: 0,
        });
        tx.stats.dfrags += 1;
    }

    /// __mptcp_clean_una: drop dfrags the peer acknowledged at the data level up to
    /// `snd_una` (dfrag_clear puts the page), and trim a partly acknowledged head.
    pub fn clean_una(&mut self, snd_una: u64, tx: &mut Tx, ev: &mut Events) {
        let end = |df: &Dfrag| df.data_seq + df.data_len as u64;
        let acked = self.dfrags.partition_point(|df| end(df) <= snd_una);
        for df in self.dfrags.drain(..acked) {
            ev.emit(|| Event::ClearDfrag {
                data_seq: df.data_seq,
                trim: None,
            });
            tx.pool.put(df.page, 0, ev);
        }
        if let Some(df) = self.dfrags.first_mut() {
            if snd_una > df.data_seq {
                let delta = (snd_una - df.data_seq) as u32;
                ev.emit(|| Event::ClearDfrag {
                    data_seq: df.data_seq,
                    trim: Some(delta),
                });
                df.data_seq += delta as u64;
                df.offset += delta;
                df.data_len -= delta;
                df.already_sent -= delta;
            }
        }
    }

    /// __mptcp_clear_xmit at close: every dfrag goes. The page frag stays: it is
    /// `current->task_frag` (sk_page_frag), which the task keeps for its next socket and
    /// puts only when it exits.
    pub fn release(&mut self, tx: &mut Tx, ev: &mut Events) {
        self.clean_una(u64::MAX, tx, ev);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::Era;
    use crate::page::PagePool;

    /// A 100-byte write, then a 50-byte write, with the first still unsent or already sent.
    fn two_writes(sent_between: bool) -> SendBuf {
        let mut tx = Tx {
            k: Era::V5_10.consts(),
            pool: PagePool::default(),
            next_skb: 0,
            stats: Default::default(),
        };
        let (mut b, mut ev) = (SendBuf::default(), Events::off());
        b.sendmsg_copy(100, true, &mut tx, &mut ev);
        if sent_between {
            b.dfrags[0].already_sent = 100;
        }
        b.sendmsg_copy(50, true, &mut tx, &mut ev);
        b
    }

    /// mptcp_frag_can_collapse_to with mptcp_pending_tail (v5.11 net/mptcp/protocol.c lines
    /// 852-858, protocol.h 315-326): a later write extends the last dfrag on the page frag's
    /// page only while that dfrag still has unsent data. Hand-derived: the first write's header
    /// takes 0..40 and its data 40..140. Unsent, the 50 bytes follow at 140 in the same dfrag.
    /// Sent, they get a header of their own at 144 (140 rounded up to 8: overhead 4 + 40) and
    /// start at 184, where v5.10 (rtx tail, no unsent test) would still have extended it.
    #[test]
    fn a_later_write_extends_the_last_dfrag_only_while_it_is_unsent() {
        let layout = |b: &SendBuf| -> Vec<(u32, u32, u32)> {
            b.dfrags
                .iter()
                .map(|d| (d.offset, d.data_len, d.overhead))
                .collect()
        };
        let unsent = two_writes(false);
        assert_eq!(layout(&unsent), [(40, 150, 40)]);
        assert_eq!(unsent.pfrag.offset, 190);
        let sent = two_writes(true);
        assert_eq!(layout(&sent), [(40, 100, 40), (184, 50, 44)]);
        assert_eq!(sent.pfrag.offset, 234);
        assert_eq!(sent.dfrags[0].page, sent.dfrags[1].page);
    }
}
