//! Receiving: the peer's stream reassembled in order, SACK blocks (RFC 2018) for what is
//! held out of order, a D-SACK block (RFC 2883) for what came twice, and our ACKs.

use super::{Arrival, Endpoint, Event};
use crate::net::vnet::VnetHdr;
use crate::net::wire::{TcpIn, TcpOut};
use etherparse::TcpOptionElement as Opt;
use std::collections::{BTreeMap, VecDeque};

/// The receiving half of the connection. Sequence numbers are stream offsets of the peer's
/// data (0 = its first byte).
#[derive(Debug, Default)]
pub struct Receiver {
    pub irs: u32,
    /// The next byte expected: everything below it was delivered.
    pub nxt: u64,
    ooo: BTreeMap<u64, Vec<u8>>,
    /// Where the latest out-of-order segments start, most recent first (for SACK's order).
    sack_recent: Vec<u64>,
    /// Where the peer's FIN sits in its stream, once seen (perhaps before the data up to it).
    peer_fin: Option<u64>,
    /// In-order data arrived and is not acknowledged yet.
    pub ack_due: bool,
    /// A range received twice, to report once in the next ACK (RFC 2883; the kernel's
    /// `duplicate_sack`).
    pub dsack: Option<(u64, u64)>,
    /// Bytes handed out as [`Event::Data`].
    pub delivered: u64,
}

impl Receiver {
    /// Our 32-bit wire number of the peer's stream offset `off`.
    pub fn wire(&self, off: u64) -> u32 {
        self.irs.wrapping_add(1).wrapping_add(off as u32)
    }

    /// No segment is held out of order past `nxt`.
    #[cfg(feature = "fuzzing")]
    pub fn held_past_nxt(&self) -> bool {
        self.ooo.keys().all(|&s| s > self.nxt)
    }

    /// Takes `payload` at stream offset `start`: in order straight to the stream, else held;
    /// then delivers everything now in order as [`Event::Data`].
    fn take(&mut self, start: u64, payload: &[u8], events: &mut VecDeque<Event>) {
        let end = start + payload.len() as u64;
        if start <= self.nxt && end > self.nxt {
            let skip = (self.nxt - start) as usize;
            self.deliver(payload[skip..].to_vec(), events);
        } else if start > self.nxt {
            self.ooo.entry(start).or_insert_with(|| payload.to_vec());
            self.sack_recent.insert(0, start);
            self.sack_recent.truncate(3);
        }
        while let Some((&s, _)) = self.ooo.first_key_value() {
            if s > self.nxt {
                break;
            }
            let (s, mut d) = self.ooo.pop_first().expect("non-empty");
            let e = s + d.len() as u64;
            if e > self.nxt {
                d.drain(..(self.nxt - s) as usize);
                self.deliver(d, events);
            }
        }
    }

    fn deliver(&mut self, data: Vec<u8>, events: &mut VecDeque<Event>) {
        self.nxt += data.len() as u64;
        self.delivered += data.len() as u64;
        events.push_back(Event::Data(data));
    }

    /// The part of `start..end` already received, if any: below `nxt` (the kernel's
    /// `tcp_data_queue`), else within the held range just below `start` or the first held
    /// range inside it (`tcp_data_queue_ofo`); two lookups, not a scan of the held queue.
    fn duplicate(&self, start: u64, end: u64) -> Option<(u64, u64)> {
        if start < self.nxt {
            return Some((start, end.min(self.nxt)));
        }
        let below = self.ooo.range(..start).next_back();
        let inside = self.ooo.range(start..end).next();
        below
            .into_iter()
            .chain(inside)
            .map(|(&s, d)| (s.max(start), end.min(s + d.len() as u64)))
            .find(|(s, e)| s < e)
    }

    /// The SACK blocks to send (RFC 2018 4): the range holding the latest out-of-order
    /// arrival first, then the ranges of the arrivals before it, most recent first (as the
    /// kernel's `tcp_sack_new_ofo_skb` keeps them), then the lowest others; three at most.
    fn sack_blocks(&self) -> Vec<(u64, u64)> {
        let mut held: Vec<(u64, u64)> = Vec::new();
        for (&s, d) in &self.ooo {
            let e = s + d.len() as u64;
            match held.last_mut() {
                Some((_, b)) if s <= *b => *b = (*b).max(e),
                _ => held.push((s, e)),
            }
        }
        let recent = self
            .sack_recent
            .iter()
            .filter_map(|&at| held.iter().find(|(s, e)| (*s..*e).contains(&at)));
        let mut out: Vec<(u64, u64)> = Vec::with_capacity(3);
        for &b in recent.chain(held.iter()) {
            if out.len() == 3 {
                break;
            }
            if !out.contains(&b) {
                out.push(b);
            }
        }
        out
    }
}

impl Endpoint {
    /// Our acknowledgment number: the next byte expected, past the peer's FIN once received.
    pub(super) fn ack_field(&self) -> Option<u32> {
        Some(
            self.rcv
                .wire(self.rcv.nxt + u64::from(self.st.peer_closed())),
        )
    }

    /// An ACK of everything received in order, with SACK blocks for what is held out of order,
    /// after a D-SACK block for a duplicate (three blocks at most, as 40 option bytes less 12
    /// for timestamps leave room for three).
    pub(super) fn send_ack(&mut self) {
        self.rcv.ack_due = false;
        let mut opts = self.opts();
        let dsack = self.rcv.dsack.take();
        self.stats.dsacks_out += u64::from(dsack.is_some());
        self.stats.dsacks_out_closing += u64::from(dsack.is_some() && self.st.both_fins_out());
        let sacks = match self.sack_ok {
            true => self.rcv.sack_blocks(),
            false => Vec::new(),
        };
        let blocks: Vec<(u32, u32)> = dsack
            .into_iter()
            .chain(sacks)
            .take(3)
            .map(|(a, b)| (self.rcv.wire(a), self.rcv.wire(b)))
            .collect();
        if !blocks.is_empty() {
            let rest = [1, 2].map(|i| blocks.get(i).copied());
            opts.extend([Opt::Noop, Opt::Noop]);
            opts.push(Opt::SelectiveAcknowledgement(
                blocks[0],
                [rest[0], rest[1], None],
            ));
        }
        let t = TcpOut {
            seq: self.snd.wire(self.snd.nxt),
            ack: self.ack_field(),
            wnd: self.rcv_wnd_field(),
            opts,
            ..TcpOut::default()
        };
        self.emit(t, VnetHdr::default());
    }

    pub(super) fn on_data(&mut self, vnet: VnetHdr, t: &TcpIn) {
        let len = t.payload.len() as u64;
        if len == 0 && !t.fin {
            return;
        }
        let start = Self::unwrap(self.rcv.nxt, self.rcv.wire(self.rcv.nxt), t.seq);
        if len > 0 {
            self.stats.bytes_in += len;
            let gso = if vnet.is_gso() { vnet.gso_size } else { 0 };
            self.stats.segments_in += if gso > 0 {
                self.stats.super_packets_in += 1;
                len.div_ceil(u64::from(gso))
            } else {
                1
            };
            self.events.push_back(Event::Arrival(Arrival {
                len: len as u32,
                gso_size: gso,
            }));
        }
        let end = start + len;
        if len > 0 && self.sack_ok {
            self.rcv.dsack = self.rcv.dsack.or(self.rcv.duplicate(start, end));
        }
        self.rcv.take(start, t.payload, &mut self.events);
        if t.fin {
            self.stats.peer_fins_again += u64::from(self.st.peer_closed());
            self.rcv.peer_fin = Some(end);
        }
        if self.rcv.peer_fin == Some(self.rcv.nxt) {
            self.st = self.st.peer_fin();
        }
        if self.rcv.ooo.is_empty() && !t.fin && start <= self.rcv.nxt {
            // In-order data: one ACK for the whole batch the TAP delivered (as GRO makes one
            // skb, and one ACK, of a NAPI poll's frames).
            self.rcv.ack_due = true;
        } else {
            // A hole, a duplicate or a FIN: say so now (duplicate ACK with SACK blocks).
            self.send_ack();
        }
    }

    /// Sends the ACK held back for the batch, if any: call after each batch of frames.
    pub fn flush_ack(&mut self) {
        if std::mem::take(&mut self.rcv.ack_due) {
            self.send_ack();
        }
    }
}
