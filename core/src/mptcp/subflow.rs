//! One TCP subflow's side: its size goal, its write queue, and tcp_build_frag, the helper
//! MPTCP calls to put a dfrag's bytes into the subflow's tail skb (net/ipv4/tcp.c,
//! tcp_build_frag, factored out of do_tcp_sendpages in November 2020, v5.11; tcp_push and
//! tcp_mark_push as in v5.10). The subflow's skbs are the run's state (its queue, `subflow
//! N`), read here and changed only by events.

use super::tx::Tx;
use crate::consts::wire::{advmss, tcp_hlen, IPV4_HLEN, TCP_HLEN};
use crate::consts::{Era, KernelConsts};
use crate::events::{Event, SkbId};
use crate::page::PageId;
use crate::page_alloc::Ref;
use crate::replay::{frag_event, Log};
use crate::size_goal::{tcp_xmit_size_goal, GoalInput};
use crate::skb::{skb_truesize, Skb, SkbHead};
use crate::trace::{queue, Queue, State};
use serde::{Deserialize, Serialize};

/// The DSS option's parts (net/mptcp/protocol.h, v5.10 and v6.x alike): kind, length,
/// subtype and flags; a 64-bit data sequence mapping; a 32-bit data ack.
const TCPOLEN_MPTCP_DSS_BASE: u32 = 4;
const TCPOLEN_MPTCP_DSS_MAP64: u32 = 14;
const TCPOLEN_MPTCP_DSS_ACK32: u32 = 4;
/// The option room an MPTCP subflow keeps off its MSS. tcp_current_mss takes off what
/// tcp_established_options reserves beyond tp->tcp_header_len, and for an MPTCP subflow
/// mptcp_established_options_dss, asked without an skb (the MSS computation), reserves a full
/// mapping plus the data ack, ALIGN(4 + 14 + 4, 4) = 24 (net/mptcp/options.c, v5.10 to v6.18).
/// The ack is 32-bit: a sender that has received no 64-bit mapping acks in 32 bits
/// (use_64bit_ack). Measured: loopback's mss_now is 65459 on 6.18 (docs/kernel-oracle.md).
const MPTCP_DSS_OPTION_ROOM: u32 =
    (TCPOLEN_MPTCP_DSS_BASE + TCPOLEN_MPTCP_DSS_MAP64 + TCPOLEN_MPTCP_DSS_ACK32)
        .next_multiple_of(4);

/// mss_now (tcp_current_mss) of an MPTCP subflow on a path of `mtu` when both ends share it:
/// the peer advertises ipv4_default_advmss = min(mtu - 40, IPV4_MAX_PMTU - 40), which clamps
/// tcp_mtu_to_mss, then the timestamp option and the DSS option's room are taken off.
/// Loopback (MTU 65536): min(65496, 65495) - 12 - 24 = 65459; Ethernet (1500): 1460 - 12 -
/// 24 = 1424.
pub fn mss_for_mtu(mtu: u32, timestamps: bool) -> u32 {
    let options = tcp_hlen(timestamps) - TCP_HLEN;
    advmss(mtu).saturating_sub(options + MPTCP_DSS_OPTION_ROOM)
}

/// One subflow's path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SubflowParams {
    /// The path MTU (loopback: 65536).
    pub mtu: u32,
    /// mss_now; by default derived from the MTU, less the DSS option room (loopback with
    /// timestamps: 65459).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mss: Option<u32>,
    /// The TCP timestamp option (12 bytes per segment).
    pub timestamps: bool,
    /// The device does GSO/TSO.
    pub gso: bool,
    /// sk_gso_max_size (default: consts.gso_max_size, 65536).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gso_max_size: Option<u32>,
    /// tp->max_window, 0 = not bounded.
    pub max_window: u32,
}

impl Default for SubflowParams {
    fn default() -> Self {
        SubflowParams {
            mtu: 65536,
            mss: None,
            timestamps: true,
            gso: true,
            gso_max_size: None,
            max_window: 0,
        }
    }
}

impl SubflowParams {
    /// mss_now and tcp_send_mss's size goal (tcp_xmit_size_goal) for this path.
    pub fn mss_and_size_goal(&self, era: Era, k: &KernelConsts) -> (u32, u32) {
        let tcp_header_len = tcp_hlen(self.timestamps);
        let mss = self
            .mss
            .unwrap_or_else(|| mss_for_mtu(self.mtu, self.timestamps));
        let goal = tcp_xmit_size_goal(
            era,
            k,
            &GoalInput {
                mss,
                gso: self.gso,
                gso_max_size: self.gso_max_size.unwrap_or(k.gso_max_size),
                max_window: self.max_window,
                net_header_len: IPV4_HLEN,
                tcp_header_len,
            },
        );
        (mss, goal)
    }
}

/// One subflow's TCP side: what it keeps beyond its queue in the state.
pub struct Subflow {
    pub id: u32,
    /// tcp_send_mss's size goal (tcp_xmit_size_goal).
    pub size_goal: u32,
    /// tp->write_seq relative to the ISN, which is also the subflow's rel_write_seq that DSS
    /// mappings carry: 1 for the first data byte, after the SYN (subflow_finish_connect and
    /// subflow_ulp_clone set rel_write_seq = 1).
    pub write_seq: u32,
    /// Its queue's name ([`queue::subflow`]), which each new skb's event carries.
    queue: std::borrow::Cow<'static, str>,
}

/// Subflow `id`'s queue in `s`: the retransmit queue (sent) followed by the write queue
/// (unsent), in seq order. The state lists the subflows' queues in id order.
pub fn queue(s: &State, id: u32) -> &Queue {
    &s.queues[id as usize]
}

/// The last skb of subflow `id`'s queue (tcp_build_frag has just made sure there is one).
pub fn tail(s: &State, id: u32) -> &Skb {
    queue(s, id).skbs.back().expect("model bug: no tail skb")
}

impl Subflow {
    pub fn new(id: u32, p: &SubflowParams, era: Era, k: &KernelConsts) -> Subflow {
        let (_, size_goal) = p.mss_and_size_goal(era, k);
        Subflow {
            id,
            size_goal,
            write_seq: 1,
            queue: queue::subflow(id),
        }
    }

    /// The index of tcp_send_head: sent skbs are a prefix (a transmit sends every unsent
    /// skb, new ones join at the tail), so the unsent ones are counted from the back.
    fn send_head(&self, s: &State) -> usize {
        let skbs = &queue(s, self.id).skbs;
        skbs.len() - skbs.iter().rev().take_while(|skb| !skb.sent).count()
    }

    /// tcp_write_queue_tail: the last skb not yet handed to the device.
    pub fn write_queue_tail<'a>(&self, s: &'a State) -> Option<&'a Skb> {
        queue(s, self.id).skbs.back().filter(|skb| !skb.sent)
    }

    /// tcp_build_frag(ssk, goal, flags, page, offset, &size): appends at most `goal -
    /// skb->len` bytes to the tail skb, or starts a new skb (0 linear bytes) allowed `goal`
    /// bytes when that is <= 0 or the tail is EOR; grows the last frag when the bytes
    /// continue it on the same page; a full frag array marks PSH and starts a new skb.
    /// Returns the skb and the bytes copied.
    pub fn tcp_build_frag(
        &mut self,
        goal: i64,
        page: PageId,
        offset: u32,
        size: u32,
        tx: &mut Tx,
        log: &mut Log,
    ) -> (SkbId, u32) {
        let room = (self.write_queue_tail(log.state()))
            .filter(|skb| !skb.eor)
            .map(|skb| goal - skb.len as i64)
            .filter(|&copy| copy > 0);
        let mut copy = match room {
            Some(copy) => copy,
            None => {
                self.entail(tx, log);
                goal
            }
        };
        let t = tail(log.state(), self.id);
        let mut can_coalesce = t.can_coalesce(page, offset);
        if !can_coalesce && t.nr_frags() >= tx.k.max_skb_frags as usize {
            let id = t.id;
            log.emit(Event::MarkPsh { skb: id });
            self.entail(tx, log);
            copy = goal;
            can_coalesce = false;
        }
        let copy = copy.min(size as i64) as u32;
        let t = tail(log.state(), self.id);
        // Read once: the events below grow the skb by `copy`, as the frag event says.
        let at @ (id, ..) = (t.id, t.nr_frags() as u32, t.head.truesize);
        let len = (t.len + copy) as u64;
        if !can_coalesce {
            tx.pages.get(page, log);
        }
        let e = frag_event(at, can_coalesce, page, offset, copy);
        log.emit(e);
        tx.stats.max_skb_bytes = tx.stats.max_skb_bytes.max(len);
        self.write_seq = self.write_seq.wrapping_add(copy);
        (id, copy)
    }

    /// sk_stream_alloc_skb(sk, 0, ...) + tcp_skb_entail: a payload-free skb whose head only
    /// reserves MAX_TCP_HEADER, queued with seq = end_seq = write_seq.
    fn entail(&mut self, tx: &mut Tx, log: &mut Log) {
        let head = stream_skb_head(&tx.k);
        let id = tx.next_skb;
        tx.next_skb += 1;
        tx.stats.skbs_allocated += 1;
        log.emit(Event::AllocSkb {
            skb: id,
            cpu: 0,
            head_bytes: head.head_bytes,
            headroom: head.headroom,
            linear_room: 0,
            seq: self.write_seq,
            truesize: head.truesize,
            reserved_tailroom: head.tailroom,
            head_page: None,
            head_offset: None,
            queue: Some(self.queue.clone()),
            size_goal: Some(self.size_goal),
        });
    }

    /// tcp_push(ssk, 0, ...), as mptcp_push_release calls it: without MSG_MORE the tail of
    /// the write queue is marked PSH (tcp_mark_push).
    pub fn tcp_push(&mut self, log: &mut Log) {
        if let Some(skb) = self.write_queue_tail(log.state()) {
            let id = skb.id;
            log.emit(Event::MarkPsh { skb: id });
        }
    }

    /// tcp_write_xmit with an open window: every unsent skb goes to the device and leaves
    /// the write queue (it waits in the retransmit queue for its ACK).
    pub fn transmit(&mut self, log: &mut Log) {
        let head = self.send_head(log.state());
        let skbs = &queue(log.state(), self.id).skbs;
        let bytes: u64 = skbs.range(head..).map(|skb| skb.len as u64).sum();
        let n = skbs.len() - head;
        if n > 0 {
            log.emit(Event::SubflowXmit {
                subflow: self.id,
                skbs: n as u32,
                bytes,
            });
        }
    }

    /// The data sequence number of the first byte the device has not sent yet, if any.
    pub fn first_unsent_data_seq(&self, s: &State) -> Option<u64> {
        let skb = queue(s, self.id).skbs.get(self.send_head(s))?;
        skb.mapping.map(|m| m.data_seq)
    }

    /// tcp_clean_rtx_queue when everything sent is acknowledged: frees the sent skbs.
    pub fn free_sent(&mut self, tx: &mut Tx, log: &mut Log) {
        while (self.front(log.state())).is_some_and(|s| s.sent) {
            self.free_front(tx, log);
        }
    }

    /// The write queue purge at close: frees every skb.
    pub fn free_all(&mut self, tx: &mut Tx, log: &mut Log) {
        while self.front(log.state()).is_some() {
            self.free_front(tx, log);
        }
    }

    fn front<'a>(&self, s: &'a State) -> Option<&'a Skb> {
        queue(s, self.id).skbs.front()
    }

    /// Frees the queue's front skb, putting every frag's page.
    fn free_front(&self, tx: &mut Tx, log: &mut Log) {
        let s = self.front(log.state()).expect("model bug: no skb to free");
        let (id, nr) = (s.id, s.nr_frags());
        tx.stats.psh_freed += s.psh as u64;
        for i in 0..nr {
            let page = self.front(log.state()).expect("model bug: no skb").frags[i].page;
            tx.pages.put(page, 0, Ref::Frag, log);
        }
        log.emit(Event::FreeSkb {
            skb: id,
            cpu: 0,
            read: false,
        });
    }
}

/// The head sk_stream_alloc_skb(sk, 0, ...) gets in 5.10: alloc_skb_fclone(MAX_TCP_HEADER)
/// kmallocs SKB_DATA_ALIGN(320) + SKB_DATA_ALIGN(sizeof(skb_shared_info)) = 640 bytes, which
/// the kmalloc-1k cache rounds to 1024; __alloc_skb keeps SKB_WITH_OVERHEAD(ksize) = 704
/// bytes of buffer and charges SKB_TRUESIZE(704) (struct sk_buff aligns to 256 bytes in 5.10
/// as in 6.x, so the 6.x helper serves). sk_stream_alloc_skb then reserves
/// MAX_TCP_HEADER as headroom and sets reserved_tailroom to the other 384 bytes, so that no
/// payload goes into the linear area (tcp_build_frag only adds frags).
fn stream_skb_head(k: &crate::consts::KernelConsts) -> SkbHead {
    let asked = k.skb_data_align(k.max_tcp_header) + k.skb_data_align(k.shinfo_size);
    let head_bytes = asked.next_power_of_two();
    let end = k.skb_with_overhead(head_bytes);
    SkbHead {
        headroom: k.max_tcp_header,
        tailroom: end - k.max_tcp_header,
        head_bytes,
        truesize: skb_truesize(k, end),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::Events;
    use crate::replay::Live;

    fn setup(max_skb_frags: u32) -> (Subflow, Tx, PageId, Live) {
        let era = Era::V5_11Rc1;
        let mut k = era.consts();
        k.max_skb_frags = max_skb_frags;
        let mut tx = Tx::new(k);
        let mut live = Live::new([queue::subflow(0).into_owned()], ["task_frag".to_string()]);
        let page = (tx.pages).alloc(3, k.page_size, 0, None, &mut live.log(&mut Events::off()));
        let sf = Subflow::new(0, &SubflowParams::default(), era, &k);
        (sf, tx, page, live)
    }

    #[test]
    fn loopback_mss_is_65459_and_ethernet_1424() {
        assert_eq!(MPTCP_DSS_OPTION_ROOM, 24);
        assert_eq!(mss_for_mtu(65536, true), 65459);
        assert_eq!(mss_for_mtu(1500, true), 1424);
        assert_eq!(mss_for_mtu(1500, false), 1436);
    }

    /// (goal, page offset, size) per call -> (skb, copied) per call, and frags at the end.
    #[test]
    fn build_frag_table() {
        type Call = (i64, u32, u32);
        /// max_skb_frags, calls, (skb, copied) per call, frags per skb at the end.
        type Case<'a> = (u32, &'a [Call], &'a [(SkbId, u32)], &'a [usize]);
        let cases: &[Case] = &[
            // Continuing bytes grow the last frag; a gap makes a second frag.
            (
                17,
                &[(1000, 48, 100), (1000, 148, 100), (1000, 400, 10)],
                &[(0, 100), (0, 100), (0, 10)],
                &[2],
            ),
            // goal - len <= 0: a new skb, allowed `goal` bytes.
            (
                17,
                &[(100, 48, 100), (100, 148, 500)],
                &[(0, 100), (1, 100)],
                &[1, 1],
            ),
            // Frag array full: PSH on the full skb and a new one.
            (
                2,
                &[(1000, 0, 10), (1000, 20, 10), (1000, 40, 10)],
                &[(0, 10), (0, 10), (1, 10)],
                &[2, 1],
            ),
        ];
        for (max_frags, calls, want, frags) in cases {
            let (mut sf, mut tx, page, mut live) = setup(*max_frags);
            let mut ev = Events::off();
            let log = &mut live.log(&mut ev);
            let got: Vec<_> = calls
                .iter()
                .map(|&(goal, off, size)| sf.tcp_build_frag(goal, page, off, size, &mut tx, log))
                .collect();
            assert_eq!(&got, want, "{calls:?}");
            let skbs = &queue(log.state(), 0).skbs;
            let nr: Vec<_> = skbs.iter().map(|s| s.nr_frags()).collect();
            assert_eq!(&nr, frags, "{calls:?}");
        }
        let (mut sf, mut tx, page, mut live) = setup(1);
        let mut ev = Events::off();
        let log = &mut live.log(&mut ev);
        sf.tcp_build_frag(1000, page, 0, 10, &mut tx, log);
        sf.tcp_build_frag(1000, page, 20, 10, &mut tx, log);
        let skbs = &queue(log.state(), 0).skbs;
        assert!(skbs[0].psh && !skbs[1].psh, "tcp_mark_push on the full skb");
    }
}
