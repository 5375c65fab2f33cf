//! One TCP socket's send side: the tcp_sendmsg copy loop (shared by every variant), the
//! socket's page for frags, the write queue, acknowledgements and close.
//!
//! Sources: `tcp_sendmsg` in net/ipv4/tcp.c of 2.6.32.21 (proxy for 2.6.33) and the seed's
//! diff; `tcp_sendmsg_locked` in net/ipv4/tcp.c of v6.12. The variant-specific rules come
//! from [`Variant`]; the transmit path is in [`super::xmit`].

use super::counters::SendCounters;
use super::params::{DeviceParams, SocketParams};
use super::variant::Variant;
use crate::consts::KernelConsts;
use crate::events::{Event, Events};
use crate::page::{PageId, PagePool};
use crate::page_frag::PageFrag;
use crate::size_goal::{tcp_xmit_size_goal, GoalInput};
use crate::skb::{Frag, Skb, SkbId};
use crate::trace::{queue, Cursor, Queue, State};
use crate::Cpu;
use std::collections::VecDeque;

/// The application and the socket run on CPU 0 (the send side models one CPU).
pub const CPU: Cpu = 0;

/// What `skb_page_frag_refill` is asked for in tcp_sendmsg_locked (`sk_page_frag_refill`):
/// 32 bytes.
const PAGE_FRAG_REFILL_SZ: u32 = 32;

/// A validated configuration: the variant, the era's constants (with overrides) and the
/// socket and device parameters (checked by [`super::SendScenario::config`]).
#[derive(Clone, Copy, Debug)]
pub struct SendConfig {
    pub variant: Variant,
    pub k: KernelConsts,
    pub socket: SocketParams,
    pub device: DeviceParams,
}

impl SendConfig {
    /// size_goal as `tcp_xmit_size_goal` computes it for this route.
    pub fn size_goal(&self) -> u32 {
        tcp_xmit_size_goal(
            self.variant.era(),
            &self.k,
            &GoalInput {
                mss: self.socket.mss,
                gso: self.device.gso,
                gso_max_size: self.k.gso_max_size,
                max_window: self.socket.max_window,
                net_header_len: self.socket.net_header_len,
                tcp_header_len: self.socket.tcp_header_len,
            },
        )
    }
}

/// The page the socket copies frags into.
#[derive(Clone, Copy, Debug)]
enum SndPage {
    /// 2.6.33: `TCP_PAGE(sk)` (sk->sk_sndmsg_page) and `TCP_OFF(sk)` (sk->sk_sndmsg_off).
    TcpPage { page: Option<PageId>, off: u32 },
    /// v6.12: the `struct page_frag` sk_page_frag(sk) returns, `current->task_frag`.
    Frag(PageFrag),
}

/// Where the next frag copy goes, as the variant's page rules decided.
struct FragTarget {
    page: PageId,
    off: u32,
    /// Room left in the page at `off`.
    room: u32,
    merge: bool,
}

/// One TCP socket's send side.
#[derive(Clone, Debug)]
pub struct SendSock {
    pub(super) cfg: SendConfig,
    pub(super) size_goal: u32,
    /// The write queue: sent-but-unacknowledged skbs first, then the unsent ones.
    pub(super) queue: VecDeque<Skb>,
    /// How many skbs at the front have been handed to the device (tcp_send_head's index).
    pub(super) sent: usize,
    pub(super) pool: PagePool,
    page: SndPage,
    /// Stream offsets (64-bit so comparisons never wrap; seq numbers are their low 32 bits).
    pub(super) write_seq: u64,
    pushed_seq: u64,
    pub(super) snd_nxt: u64,
    pub(super) snd_una: u64,
    /// Stream offset of the front skb's seq.
    pub(super) front_seq: u64,
    /// sk_wmem_queued: the truesize of every skb on the write queue.
    wmem_queued: u64,
    next_skb: SkbId,
    pub(super) closed: bool,
    pub(super) c: SendCounters,
    /// Every skb handed to the device, when a caller asked for them ([`SendSock::log_xmits`]).
    pub(super) xmitted: Option<Vec<Xmitted>>,
}

/// An skb as handed to the device: its bytes of the stream and whether its last wire segment
/// carries PSH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Xmitted {
    /// The stream offset of its first byte.
    pub offset: u64,
    pub len: u32,
    pub psh: bool,
}

impl SendSock {
    pub fn new(cfg: SendConfig) -> SendSock {
        let page = match cfg.variant {
            Variant::Modern => SndPage::Frag(PageFrag::default()),
            _ => SndPage::TcpPage { page: None, off: 0 },
        };
        SendSock {
            size_goal: cfg.size_goal(),
            cfg,
            queue: VecDeque::new(),
            sent: 0,
            pool: PagePool::default(),
            page,
            write_seq: 0,
            pushed_seq: 0,
            snd_nxt: 0,
            snd_una: 0,
            front_seq: 0,
            wmem_queued: 0,
            next_skb: 0,
            closed: false,
            c: SendCounters::default(),
            xmitted: None,
        }
    }

    /// Keeps every transmitted skb from now on (see [`SendSock::xmitted`]).
    pub fn log_xmits(&mut self) {
        self.xmitted.get_or_insert_with(Vec::new);
    }

    /// The skbs handed to the device since [`SendSock::log_xmits`], in order.
    pub fn xmitted(&self) -> &[Xmitted] {
        self.xmitted.as_deref().unwrap_or_default()
    }

    pub fn size_goal(&self) -> u32 {
        self.size_goal
    }

    /// tcp_sendmsg of the iovecs `iov`; `eor` is MSG_EOR. Returns the bytes copied (all),
    /// or, when a new skb is needed while sk_wmem_queued >= sk_sndbuf (a blocking socket
    /// would wait for acknowledgements that only a later op can bring), the queued truesize.
    pub fn sendmsg(&mut self, iov: &[u32], eor: bool, ev: &mut Events) -> Result<u64, u64> {
        let mut left: u64 = iov.iter().map(|&l| l as u64).sum();
        let mut copied = 0u64;
        // `goto new_segment`: the tail may not take this chunk; allocate without asking.
        let mut new_segment = false;
        // What one pass of the copy loop may take from: an iovec, or the whole message.
        let segs: Vec<u64> = if self.cfg.variant.copies_iov_as_one_stream() {
            vec![left]
        } else {
            iov.iter().map(|&l| l as u64).collect()
        };
        for &seglen in &segs {
            let mut seglen = seglen;
            while seglen > 0 {
                let (mut copy, mut max) = if new_segment {
                    (0, 0)
                } else {
                    self.tail_room()
                };
                new_segment = false;
                if copy == 0 {
                    if self.wmem_queued >= self.cfg.socket.sndbuf as u64 {
                        return Err(self.wmem_queued);
                    }
                    self.new_skb(ev);
                    (copy, max) = (self.size_goal, self.size_goal);
                }
                let Some(n) = self.copy_chunk((copy as u64).min(seglen) as u32, ev) else {
                    // No frag slot (MAX_SKB_FRAGS, or pre-2010 on a non-SG route).
                    self.mark_push(ev);
                    new_segment = true;
                    continue;
                };
                let skb = self.queue.back_mut().expect("model bug: no tail skb");
                if copied == 0 && skb.psh {
                    skb.psh = false;
                    let id = skb.id;
                    ev.emit(|| Event::ClearPsh { skb: id });
                }
                self.write_seq += n as u64;
                copied += n as u64;
                left -= n as u64;
                seglen -= n as u64;
                if left == 0 {
                    if eor && self.cfg.variant.honours_eor() {
                        skb.eor = true;
                        let id = skb.id;
                        ev.emit(|| Event::MarkEor { skb: id });
                    }
                    break;
                }
                if skb.len < max {
                    continue;
                }
                // The skb is full: __tcp_push_pending_frames when forced, else tcp_push_one
                // if it is the send head (the only unsent skb).
                if self.forced_push() {
                    self.mark_push(ev);
                    self.push(true, ev);
                } else if self.sent + 1 == self.queue.len() {
                    self.push(false, ev);
                }
            }
        }
        if copied > 0 {
            // tcp_push at `out:` (no MSG_MORE): PSH on the tail, then push.
            self.mark_push(ev);
            self.push(false, ev);
        }
        self.c.bytes_written += copied;
        Ok(copied)
    }

    /// (copy, max) for the tail skb: it takes more only while unsent (and, today, not EOR)
    /// and shorter than max = size_goal, or the MSS for a 2.6.33 skb without checksum
    /// offload (CHECKSUM_NONE). (0, _) means: allocate a new skb.
    fn tail_room(&self) -> (u32, u32) {
        let v = self.cfg.variant;
        match self.queue.back() {
            Some(skb) if self.sent < self.queue.len() && !(v.honours_eor() && skb.eor) => {
                let max = self.max_len();
                (max.saturating_sub(skb.len), max)
            }
            _ => (0, 0),
        }
    }

    /// The most an skb may hold: size_goal, or the MSS for a 2.6.33 skb without checksum
    /// offload (CHECKSUM_NONE).
    fn max_len(&self) -> u32 {
        if self.cfg.variant.csum_none_caps_at_mss() && !self.cfg.device.csum {
            self.cfg.socket.mss
        } else {
            self.size_goal
        }
    }

    /// `new_segment:` sk_stream_alloc_skb / tcp_stream_alloc_skb, then skb_entail: seq =
    /// end_seq = write_seq, appended to the write queue.
    fn new_skb(&mut self, ev: &mut Events) {
        let (v, k, d) = (self.cfg.variant, &self.cfg.k, &self.cfg.device);
        let room = v.linear_room(k, self.cfg.socket.mss, d.sg, d.gso);
        let head = v.new_skb_head(k, room);
        let id = self.next_skb;
        self.next_skb += 1;
        self.c.skbs_allocated += 1;
        self.c.skb_head_bytes += head.head_bytes as u64;
        self.wmem_queued += head.truesize as u64;
        let seq = self.write_seq as u32;
        let goal = self.max_len();
        ev.emit(|| Event::AllocSkb {
            skb: id,
            cpu: CPU,
            head_bytes: head.head_bytes,
            headroom: head.headroom,
            linear_room: head.tailroom,
            seq,
            truesize: head.truesize,
            reserved_tailroom: 0,
            head_page: None,
            head_offset: None,
            queue: Some(queue::WRITE_QUEUE.into()),
            size_goal: Some(goal),
        });
        let mut skb = Skb::new(id, CPU, head, seq);
        skb.size_goal = Some(goal);
        self.queue.push_back(skb);
    }

    /// Copies at most `copy` bytes into the tail skb: linear tailroom first (pre-2010), else
    /// a page frag. `None` when the skb may take no new frag.
    fn copy_chunk(&mut self, copy: u32, ev: &mut Events) -> Option<u32> {
        let skb = self.queue.back_mut().expect("model bug: no tail skb");
        if self.cfg.variant.linear_first() && skb.head.tailroom > 0 {
            let n = copy.min(skb.head.tailroom);
            skb.put_linear(n);
            let id = skb.id;
            ev.emit(|| Event::CopyToLinear { skb: id, bytes: n });
            self.c.linear_bytes += n as u64;
            self.c.sendmsg_copy_bytes += n as u64;
            return Some(n);
        }
        let t = self.frag_target(ev)?;
        let n = copy.min(t.room);
        self.copy_to_page(&t, n, ev);
        Some(n)
    }

    /// The variant's page rules: which page and offset the next frag copy uses.
    fn frag_target(&mut self, ev: &mut Events) -> Option<FragTarget> {
        let skb = self.queue.back().expect("model bug: no tail skb");
        let (i, k, v) = (skb.nr_frags() as u32, &self.cfg.k, self.cfg.variant);
        let page_size = k.page_size;
        match &mut self.page {
            // tcp_sendmsg, 2.6.33 (both sides of the seed's diff).
            SndPage::TcpPage { page, off } => {
                let merge = page.is_some_and(|p| skb.can_coalesce(p, *off)) && *off != page_size;
                if !merge {
                    if i >= k.max_skb_frags || (v.frags_need_sg() && !self.cfg.device.sg) {
                        return None;
                    }
                    match *page {
                        Some(p) if *off == page_size => {
                            // The socket's page is full: drop the socket's reference.
                            self.pool.release(p, CPU, ev);
                            *page = None;
                            *off = 0;
                        }
                        Some(_) => {}
                        None => *off = 0,
                    }
                }
                let p = match *page {
                    Some(p) => p,
                    // sk_stream_alloc_page; the socket keeps it only if room is left.
                    None => self.pool.alloc(0, page_size, CPU, None, ev),
                };
                Some(FragTarget {
                    page: p,
                    off: *off,
                    room: page_size - *off,
                    merge,
                })
            }
            // tcp_sendmsg_locked, v6.12.
            SndPage::Frag(pf) => {
                let high_order = !self.cfg.device.high_order_alloc_disable;
                pf.refill(PAGE_FRAG_REFILL_SZ, high_order, k, &mut self.pool, CPU, ev);
                let p = pf.page.expect("model bug: refill gives a page");
                let merge = skb.can_coalesce(p, pf.offset);
                if !merge && i >= k.max_skb_frags {
                    return None;
                }
                Some(FragTarget {
                    page: p,
                    off: pf.offset,
                    room: pf.size - pf.offset,
                    merge,
                })
            }
        }
    }

    /// skb_copy_to_page, then the skb update and the page references: a new frag holds one
    /// reference; the socket holds its own while it keeps the page.
    fn copy_to_page(&mut self, t: &FragTarget, n: u32, ev: &mut Events) {
        let end = t.off + n;
        // Where the socket's page frag stands after the copy: on this page, at `end`, unless
        // 2.6.33 took a fresh page the copy filled (it keeps one only if room is left).
        let cursor = match &self.page {
            SndPage::TcpPage { page, .. } => {
                (page.is_some() || end < self.cfg.k.page_size).then_some(end)
            }
            SndPage::Frag(_) => Some(end),
        };
        let skb = self.queue.back_mut().expect("model bug: no tail skb");
        let id = skb.id;
        ev.emit(|| Event::CopyToPage {
            skb: id,
            page: t.page,
            offset: t.off,
            bytes: n,
            cursor,
        });
        skb.head.truesize += n;
        self.wmem_queued += n as u64;
        let i = skb.nr_frags() as u32;
        // Does the frag take a new reference (get_page), or the page's first one?
        let mut get = true;
        let truesize = skb.head.truesize;
        if t.merge {
            skb.grow_last_frag(n);
            ev.emit(|| Event::Coalesce {
                skb: id,
                idx: i - 1,
                bytes: n,
                truesize,
            });
        } else {
            if i == 0 {
                // One allocation for the frag array, as the shared info has room for all.
                skb.frags.reserve_exact(self.cfg.k.max_skb_frags as usize);
            }
            skb.add_frag(Frag {
                page: t.page,
                offset: t.off,
                size: n,
            });
            ev.emit(|| Event::NewFrag {
                skb: id,
                idx: i,
                page: t.page,
                offset: t.off,
                size: n,
                truesize,
            });
            self.c.frags += 1;
            self.c.max_frags_per_skb = self.c.max_frags_per_skb.max(i as u64 + 1);
        }
        match &mut self.page {
            SndPage::TcpPage { page, off } => {
                if !t.merge {
                    if page.is_none() {
                        // A fresh page: its first reference is the frag's; the socket takes
                        // one more only if the page still has room.
                        get = end < self.cfg.k.page_size;
                        *page = get.then_some(t.page);
                    }
                    if get {
                        self.pool.get(t.page, ev);
                    }
                }
                *off = end;
            }
            SndPage::Frag(pf) => {
                if !t.merge {
                    self.pool.get(t.page, ev);
                }
                pf.offset = end;
            }
        }
        if ev.is_on() {
            // How full the page is, for the trace's drawing only (the counters-only hot path
            // skips the lookup).
            let p = self.pool.page_mut(t.page);
            p.used = p.used.max(end);
        }
        self.c.frag_bytes += n as u64;
        self.c.sendmsg_copy_bytes += n as u64;
    }

    /// tcp_mark_push on the tail: PSH, and pushed_seq = write_seq.
    fn mark_push(&mut self, ev: &mut Events) {
        let unsent = self.sent < self.queue.len();
        if let Some(skb) = self.queue.back_mut().filter(|_| unsent) {
            skb.psh = true;
            let id = skb.id;
            ev.emit(|| Event::MarkPsh { skb: id });
        }
        self.pushed_seq = self.write_seq;
    }

    /// forced_push: more than half the peer's max window written since the last push
    /// (max_window 0 = not modelled: never forced).
    fn forced_push(&self) -> bool {
        let half = (self.cfg.socket.max_window >> 1) as u64;
        self.cfg.socket.max_window != 0 && self.write_seq > self.pushed_seq + half
    }

    /// A push point: the tail is offered to the device; with `device.drain` every unsent skb
    /// goes out at once, otherwise they stay queued until a `transmit` (device or window
    /// busy). Nagle is not modelled (TCP_NODELAY behaviour).
    fn push(&mut self, forced: bool, ev: &mut Events) {
        if let Some(skb) = self.queue.back().filter(|_| self.sent < self.queue.len()) {
            let id = skb.id;
            ev.emit(|| Event::Push { skb: id, forced });
        }
        if self.cfg.device.drain {
            self.transmit(ev);
        }
    }

    /// The peer acknowledges up to stream offset `una`: fully acknowledged skbs are freed
    /// (tcp_clean_rtx_queue; a partly acknowledged skb is kept whole, tcp_trim_head is not
    /// modelled).
    pub fn ack_to(&mut self, una: u64, ev: &mut Events) {
        debug_assert!(una <= self.snd_nxt, "model bug: ack beyond snd_nxt");
        self.c.bytes_acked += una.saturating_sub(self.snd_una);
        self.snd_una = self.snd_una.max(una);
        let snd_una = self.snd_una as u32;
        ev.emit(|| Event::Ack { snd_una });
        while self.sent > 0 {
            let len = self.queue[0].len as u64;
            if self.front_seq + len > self.snd_una {
                break;
            }
            let skb = self.queue.pop_front().expect("model bug: sent > 0");
            self.sent -= 1;
            self.front_seq += len;
            self.free_skb(skb, ev);
        }
    }

    /// Everything sent so far is acknowledged.
    pub fn ack_all(&mut self, ev: &mut Events) {
        self.ack_to(self.snd_nxt, ev);
    }

    /// The stream offset everything before which is acknowledged.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// Bytes sent and not yet acknowledged.
    pub fn in_flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// sk_wmem_free_skb: put_page per frag, then the skb.
    fn free_skb(&mut self, skb: Skb, ev: &mut Events) {
        self.wmem_queued -= skb.head.truesize as u64;
        for f in &skb.frags {
            self.pool.put(f.page, CPU, ev);
        }
        self.c.skbs_freed += 1;
        ev.emit(|| Event::FreeSkb {
            skb: skb.id,
            cpu: CPU,
            read: false,
        });
    }

    /// The socket is destroyed: tcp_write_queue_purge frees every skb. In 2.6.33
    /// tcp_v4_destroy_sock then frees the socket's TCP_PAGE. Today's page frag is the task's
    /// (`current->task_frag`): the socket never owned it, so it stays with the task, for its
    /// next socket, until the task exits.
    pub fn close(&mut self, ev: &mut Events) {
        while let Some(skb) = self.queue.pop_front() {
            self.free_skb(skb, ev);
        }
        self.sent = 0;
        self.front_seq = self.write_seq;
        if let SndPage::TcpPage { page, off } = &mut self.page {
            if let Some(p) = page.take() {
                self.pool.release_at_destroy(p, CPU, ev);
            }
            *off = 0;
        }
        self.closed = true;
    }

    /// The task opens its next socket after `close`: a new connection (sequence numbers from
    /// 0, empty queue), the same task. The 2.6.33 socket starts without a TCP_PAGE; today's
    /// finds the task frag as the last socket left it. Counters keep adding up.
    pub fn reopen(&mut self) {
        let (page, pool, c) = (self.page, std::mem::take(&mut self.pool), self.c);
        let next_skb = self.next_skb;
        *self = SendSock {
            page,
            pool,
            c,
            next_skb,
            ..SendSock::new(self.cfg)
        };
    }

    /// The counters, with the page allocator's own.
    pub fn send_counters(&self) -> SendCounters {
        let mut c = self.c;
        c.pages_allocated = self.pool.stats.allocated;
        c.pages_freed = self.pool.stats.freed;
        c.pages_reused = self.pool.stats.reused;
        c.pages_live = self.pool.live_count() as u64;
        c.page_refs = self.pool.live().map(|p| p.count as u64).sum();
        c
    }

    /// The page-frag cursor: TCP_PAGE/TCP_OFF or the task frag.
    pub fn cursor(&self) -> Cursor {
        let name = self.cfg.variant.cursor_name();
        match self.page {
            SndPage::TcpPage { page, off } => Cursor {
                name: name.to_string(),
                page,
                offset: if page.is_some() { off } else { 0 },
                size: if page.is_some() {
                    self.cfg.k.page_size
                } else {
                    0
                },
                bias: None,
            },
            SndPage::Frag(pf) => pf.cursor(name),
        }
    }

    /// The write queue, the live pages and the page-frag cursor. (A page's `used` is kept
    /// up to date only while events are on: the counters-only path skips it.)
    pub fn state(&self) -> State {
        State {
            queues: vec![Queue {
                name: queue::WRITE_QUEUE.to_string(),
                skbs: self.queue.iter().cloned().collect(),
            }],
            pages: self.pool.live().cloned().collect(),
            cursors: vec![self.cursor()],
            ..State::default()
        }
    }
}
