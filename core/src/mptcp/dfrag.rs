//! The MPTCP socket's data fragments (dfrags): mptcp_sendmsg copies user data into the
//! socket's page frag, each run of data preceded by a `struct mptcp_data_frag` header carved
//! from the same page (net/mptcp/protocol.c, net-next of November 2020 as patched by seed 003,
//! released in v5.11: mptcp_sendmsg, mptcp_carve_data_frag, mptcp_frag_can_collapse_to).
//!
//! The header sits in the page between runs of data, so two dfrags are never adjacent on the
//! page: a subflow skb gets one frag per dfrag, never a coalesced one. The dfrags (the rtx
//! queue, data-sequence order) and the page frag are the run's state: read here, changed only
//! by events.

use super::tx::Tx;
use crate::events::Event;
use crate::page_alloc::Ref;
use crate::replay::Log;
use crate::task_frag;
use crate::trace::{Dfrag, State};

/// The task frag runs on CPU 0 (the model's MPTCP socket runs on one CPU).
const CPU: crate::Cpu = 0;

/// sizeof(struct mptcp_data_frag) on x86_64 in the seed's tree: list_head (16), u64 data_seq
/// (8), u16 data_len, offset, overhead, already_sent (8), struct page * (8) = 40. The u16
/// fields and `already_sent` came with "mptcp: add accounting for pending data" (net-next,
/// 16 Nov 2020, ten days before the seed); v5.10 still has three ints and no already_sent
/// (48 bytes).
pub const MPTCP_DATA_FRAG_SIZE: u32 = 40;

/// mptcp_page_frag_refill asks skb_page_frag_refill for `32 + sizeof(struct
/// mptcp_data_frag)` = 72 bytes: room for a header and a little data.
pub const MPTCP_FRAG_REFILL: u32 = 32 + MPTCP_DATA_FRAG_SIZE;

/// The bytes of `df` still to hand to a subflow.
pub fn pending(df: &Dfrag) -> bool {
    df.already_sent < df.data_len
}

/// msk->first_pending: the index of the first dfrag with data not yet sent. Data goes out
/// in order, so the sent dfrags are a prefix of the list (a binary search finds it, where a
/// scan from the front would cost a write O(dfrags)); most often only the last is pending.
pub fn first_pending(s: &State) -> usize {
    let n = s.dfrags.len();
    let only_last = |i: usize| pending(&s.dfrags[i]) && (i == 0 || !pending(&s.dfrags[i - 1]));
    match n.checked_sub(1) {
        Some(last) if only_last(last) => last,
        _ => s.dfrags.partition_point(|d| !pending(d)),
    }
}

/// The MPTCP-level send buffer's own variable; its dfrags are the state's.
#[derive(Debug, Default)]
pub struct SendBuf {
    /// msk->write_seq: the data sequence number of the next user byte.
    pub write_seq: u64,
}

impl SendBuf {
    /// mptcp_pending_tail: the last dfrag, if some data is still pending.
    fn pending_tail(s: &State) -> Option<&Dfrag> {
        s.dfrags.back().filter(|d| pending(d))
    }

    /// mptcp_frag_can_collapse_to: append to the pending tail dfrag only when it lies on the
    /// page frag's page, the page has room left and the data sequence continues it.
    fn can_collapse_to(&self, log: &Log, df: &Dfrag) -> bool {
        let pfrag = task_frag::cursor(log, CPU);
        pfrag.page == Some(df.page)
            && pfrag.size > pfrag.offset
            && df.data_seq + df.data_len as u64 == self.write_seq
    }

    /// The copy half of mptcp_sendmsg: `bytes` of user data go into dfrags, refilling the
    /// page frag as needed. Returns the bytes copied (all of them: the model never runs out
    /// of memory).
    pub fn sendmsg_copy(&mut self, bytes: u64, high_order: bool, tx: &mut Tx, log: &mut Log) {
        let mut left = bytes;
        while left > 0 {
            let tail = Self::pending_tail(log.state());
            if !tail.is_some_and(|d| self.can_collapse_to(log, d)) {
                self.carve(high_order, tx, log);
            }
            let pfrag_size = task_frag::cursor(log, CPU).size;
            let df = log.state().dfrags.back();
            let df = df.expect("model bug: no dfrag to copy into");
            let offset = df.offset + df.data_len;
            let psize = (pfrag_size - offset).min(u32::try_from(left).unwrap_or(u32::MAX));
            let (data_seq, page) = (df.data_seq, df.page);
            log.emit(Event::CopyToDfrag {
                data_seq,
                page,
                offset,
                bytes: psize,
            });
            self.write_seq += psize as u64;
            tx.stats.bytes_written += psize as u64;
            left -= psize as u64;
        }
    }

    /// mptcp_page_frag_refill + mptcp_carve_data_frag: the header goes at the page frag's
    /// offset rounded up to sizeof(long); the dfrag takes its own page reference.
    fn carve(&mut self, high_order: bool, tx: &mut Tx, log: &mut Log) {
        task_frag::refill(
            MPTCP_FRAG_REFILL,
            high_order,
            &tx.k,
            &mut tx.pages,
            CPU,
            log,
        );
        let pfrag = task_frag::cursor(log, CPU);
        let page = pfrag.page.expect("model bug: refill left no page");
        let orig = pfrag.offset;
        let aligned = orig.next_multiple_of(8);
        let overhead = aligned - orig + MPTCP_DATA_FRAG_SIZE;
        log.emit(Event::CarveDfrag {
            data_seq: self.write_seq,
            page,
            offset: aligned,
            overhead,
        });
        tx.pages.get(page, log);
        tx.stats.dfrags += 1;
    }

    /// __mptcp_clean_una: drop dfrags the peer acknowledged at the data level up to
    /// `snd_una` (dfrag_clear puts the page), and trim a partly acknowledged head.
    pub fn clean_una(&mut self, snd_una: u64, tx: &mut Tx, log: &mut Log) {
        let end = |df: &Dfrag| df.data_seq + df.data_len as u64;
        while let Some(&df) = log.state().dfrags.front().filter(|df| end(df) <= snd_una) {
            log.emit(Event::ClearDfrag {
                data_seq: df.data_seq,
                trim: None,
            });
            tx.pages.put(df.page, CPU, Ref::Frag, log);
        }
        if let Some(&df) = log.state().dfrags.front() {
            if snd_una > df.data_seq {
                let delta = (snd_una - df.data_seq) as u32;
                log.emit(Event::ClearDfrag {
                    data_seq: df.data_seq,
                    trim: Some(delta),
                });
            }
        }
    }

    /// __mptcp_clear_xmit at close: every dfrag goes. The page frag stays: it is
    /// `current->task_frag` (sk_page_frag), which the task keeps for its next socket and
    /// puts only when it exits.
    pub fn release(&mut self, tx: &mut Tx, log: &mut Log) {
        self.clean_una(u64::MAX, tx, log);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::consts::Era;
    use crate::events::Events;
    use crate::replay::Live;

    /// A 100-byte write, then a 50-byte write, with the first still unsent or already sent:
    /// the state after, and each dfrag's overhead (from its carve).
    fn two_writes(sent_between: bool) -> (State, Vec<u32>) {
        let mut tx = Tx::new(Era::V5_11Rc1.consts());
        let mut live = Live::new([], ["task_frag".to_string()]);
        let (mut b, mut ev) = (SendBuf::default(), Events::on());
        let log = &mut live.log(&mut ev);
        b.sendmsg_copy(100, true, &mut tx, log);
        if sent_between {
            // The whole first dfrag mapped onto some subflow's skb.
            let skb = |id| Event::AllocSkb {
                skb: id,
                cpu: 0,
                head_bytes: 0,
                headroom: 0,
                linear_room: 0,
                seq: 0,
                truesize: 0,
                reserved_tailroom: 0,
                head_page: None,
                head_offset: None,
                queue: None,
                size_goal: None,
            };
            log.emit(skb(0));
            let (data_seq, subflow_seq, data_len) = (0, 1, 100);
            log.emit(Event::NewMapping {
                skb: 0,
                data_seq,
                subflow_seq,
                data_len,
            });
        }
        b.sendmsg_copy(50, true, &mut tx, log);
        let state = log.state().clone();
        let overheads = (ev.take().into_iter())
            .filter_map(|e| match e {
                Event::CarveDfrag { overhead, .. } => Some(overhead),
                _ => None,
            })
            .collect();
        (state, overheads)
    }

    /// mptcp_frag_can_collapse_to with mptcp_pending_tail (v5.11 net/mptcp/protocol.c lines
    /// 852-858, protocol.h 315-326): a later write extends the last dfrag on the page frag's
    /// page only while that dfrag still has unsent data. Hand-derived: the first write's header
    /// takes 0..40 and its data 40..140. Unsent, the 50 bytes follow at 140 in the same dfrag.
    /// Sent, they get a header of their own at 144 (140 rounded up to 8: overhead 4 + 40) and
    /// start at 184, where v5.10 (rtx tail, no unsent test) would still have extended it.
    #[test]
    fn a_later_write_extends_the_last_dfrag_only_while_it_is_unsent() {
        let layout = |s: &State| -> Vec<(u32, u32)> {
            s.dfrags.iter().map(|d| (d.offset, d.data_len)).collect()
        };
        let (unsent, overheads) = two_writes(false);
        assert_eq!((layout(&unsent), overheads), (vec![(40, 150)], vec![40]));
        assert_eq!(unsent.cursors[0].offset, 190);
        let (sent, overheads) = two_writes(true);
        assert_eq!(layout(&sent), [(40, 100), (184, 50)]);
        assert_eq!(overheads, [40, 44]);
        assert_eq!(sent.cursors[0].offset, 234);
        assert_eq!(sent.dfrags[0].page, sent.dfrags[1].page);
    }
}
