//! One TCP socket's send side: the tcp_sendmsg copy loop (shared by every variant), the
//! write queue, acknowledgements and close. The write queue, the pages and the page-frag
//! cursor are the socket's [`Live`] state: [`TcpSock`] reads them to decide and changes
//! them only by emitting events; it keeps only TCP's own variables and the counters.
//!
//! Sources: `tcp_sendmsg` in net/ipv4/tcp.c of 2.6.32.21 (proxy for 2.6.33) and the seed's
//! diff; `tcp_sendmsg_locked` in net/ipv4/tcp.c of v6.12. The variant-specific rules come
//! from [`Variant`]; the frag copy in [`super::frag`], the transmit path in [`super::xmit`].

use super::counters::SendCounters;
use super::params::{DeviceParams, SocketParams};
use super::variant::Variant;
use crate::consts::KernelConsts;
use crate::events::{Event, Events};
use crate::page_alloc::{PageAlloc, Ref};
use crate::replay::{Live, Log};
use crate::size_goal::{tcp_xmit_size_goal, GoalInput};
use crate::skb::{Frag, Skb, SkbId};
use crate::trace::{queue, Queue, State};
use crate::Cpu;

/// The application and the socket run on CPU 0 (the send side models one CPU).
pub const CPU: Cpu = 0;

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

/// One TCP socket's send side: its state, and the socket that reads and changes it.
#[derive(Clone, Debug)]
pub struct SendSock {
    /// The write queue, the live pages and the page-frag cursor (TCP_PAGE/TCP_OFF, or the
    /// task frag): changed only by the events [`TcpSock`] emits.
    live: Live,
    tcp: TcpSock,
}

/// TCP's own variables of the socket (`struct tcp_sock`), its page allocator and what the
/// model counts: everything the socket keeps beyond the [`State`].
#[derive(Clone, Debug)]
pub(super) struct TcpSock {
    pub(super) cfg: SendConfig,
    pub(super) size_goal: u32,
    pub(super) pages: PageAlloc,
    /// Stream offsets (64-bit so comparisons never wrap; seq numbers are their low 32 bits).
    pub(super) write_seq: u64,
    pushed_seq: u64,
    pub(super) snd_nxt: u64,
    pub(super) snd_una: u64,
    /// Stream offset of the front skb's seq.
    front_seq: u64,
    /// sk_wmem_queued: the truesize of every skb on the write queue.
    pub(super) wmem_queued: u64,
    next_skb: SkbId,
    closed: bool,
    pub(super) c: SendCounters,
    /// Every skb handed to the device, when a caller asked for them ([`SendSock::log_xmits`]).
    pub(super) xmitted: Option<Vec<Xmitted>>,
}

/// The write queue of `s`: sent-but-unacknowledged skbs first, then the unsent ones
/// (`tcp_send_head` is the first skb not `sent`).
/// The socket's state holds that one queue ([`SendSock::new`]), so it is not looked up by name
/// on every read.
pub(super) fn write_queue(s: &State) -> &Queue {
    let q = s.queues.first().expect("model bug: no write queue");
    debug_assert_eq!(q.name, queue::WRITE_QUEUE);
    q
}

/// The write queue's tail, where sendmsg copies.
pub(super) fn tail(s: &State) -> &Skb {
    write_queue(s).skbs.back().expect("model bug: no tail skb")
}

/// What one copy reads of the tail skb, read once ([`Tail::of`]): the copy's events change
/// the skb only as they say (its bytes, its last frag), so nothing more is read back.
#[derive(Clone, Copy, Debug)]
pub(super) struct Tail {
    pub(super) id: SkbId,
    len: u32,
    tailroom: u32,
    pub(super) nr_frags: u32,
    pub(super) last: Option<Frag>,
    pub(super) truesize: u32,
    psh: bool,
}

impl Tail {
    fn of(s: &State) -> Tail {
        let skb = tail(s);
        Tail {
            id: skb.id,
            len: skb.len,
            tailroom: skb.head.tailroom,
            nr_frags: skb.nr_frags() as u32,
            last: skb.frags.last().copied(),
            truesize: skb.head.truesize,
            psh: skb.psh,
        }
    }

    /// `skb_can_coalesce` on the tail ([`Skb::can_coalesce`]).
    pub(super) fn can_coalesce(&self, page: crate::page::PageId, off: u32) -> bool {
        self.last.is_some_and(|f| f.continued_by(page, off))
    }
}

/// The write queue's front, which an acknowledgement frees first.
fn front(s: &State) -> &Skb {
    write_queue(s).skbs.front().expect("model bug: no skb")
}

/// The write queue's tail, if it is unsent (every skb after the send head is).
fn unsent_tail(s: &State) -> Option<&Skb> {
    write_queue(s).skbs.back().filter(|skb| !skb.sent)
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
        let name = cfg.variant.cursor_name().to_string();
        SendSock {
            live: Live::new([queue::WRITE_QUEUE.to_string()], [name]),
            tcp: TcpSock::new(cfg),
        }
    }

    pub fn cfg(&self) -> &SendConfig {
        &self.tcp.cfg
    }

    /// Whether the socket is closed (only the task's next socket may follow).
    pub fn is_closed(&self) -> bool {
        self.tcp.closed
    }

    /// Keeps every transmitted skb from now on (see [`SendSock::xmitted`]).
    pub fn log_xmits(&mut self) {
        self.tcp.xmitted.get_or_insert_with(Vec::new);
    }

    /// The skbs handed to the device since [`SendSock::log_xmits`], in order.
    pub fn xmitted(&self) -> &[Xmitted] {
        self.tcp.xmitted.as_deref().unwrap_or_default()
    }

    /// Takes the skbs handed to the device since [`SendSock::log_xmits`].
    pub fn take_xmitted(&mut self) -> Vec<Xmitted> {
        self.tcp.xmitted.take().unwrap_or_default()
    }

    pub fn size_goal(&self) -> u32 {
        self.tcp.size_goal
    }

    /// tcp_sendmsg of the iovecs `iov`; `eor` is MSG_EOR. Returns the bytes copied (all),
    /// or, when a new skb is needed while sk_wmem_queued >= sk_sndbuf (a blocking socket
    /// would wait for acknowledgements that only a later op can bring), the queued truesize.
    pub fn sendmsg(&mut self, iov: &[u32], eor: bool, ev: &mut Events) -> Result<u64, u64> {
        self.tcp.sendmsg(iov, eor, &mut self.live.log(ev))
    }

    /// Hands every unsent skb to the device.
    pub fn transmit(&mut self, ev: &mut Events) {
        self.tcp.transmit(&mut self.live.log(ev));
    }

    /// The peer acknowledges up to stream offset `una`.
    pub fn ack_to(&mut self, una: u64, ev: &mut Events) {
        self.tcp.ack_to(una, &mut self.live.log(ev));
    }

    /// Everything sent so far is acknowledged.
    pub fn ack_all(&mut self, ev: &mut Events) {
        self.ack_to(self.tcp.snd_nxt, ev);
    }

    /// The stream offset everything before which is acknowledged.
    pub fn snd_una(&self) -> u64 {
        self.tcp.snd_una
    }

    /// Bytes sent and not yet acknowledged.
    pub fn in_flight(&self) -> u64 {
        self.tcp.snd_nxt - self.tcp.snd_una
    }

    /// Bytes written and not yet acknowledged.
    pub fn unacked(&self) -> u64 {
        self.tcp.write_seq - self.tcp.snd_una
    }

    /// The socket is destroyed (see [`TcpSock::close`]).
    pub fn close(&mut self, ev: &mut Events) {
        self.tcp.close(&mut self.live.log(ev));
    }

    /// The task opens its next socket after `close`: a new connection (sequence numbers from
    /// 0, empty queue), the same task. The 2.6.33 socket starts without a TCP_PAGE (its
    /// close let go of it); today's finds the task frag as the last socket left it. Counters
    /// keep adding up.
    pub fn reopen(&mut self) {
        let t = &mut self.tcp;
        *t = TcpSock {
            pages: std::mem::take(&mut t.pages),
            c: t.c,
            next_skb: t.next_skb,
            ..TcpSock::new(t.cfg)
        };
    }

    /// The counters, with the page allocator's own and the live pages' references.
    pub fn send_counters(&self) -> SendCounters {
        let (mut c, stats, pages) = (self.tcp.c, self.tcp.pages.stats, &self.live.state().pages);
        c.pages_allocated = stats.allocated;
        c.pages_freed = stats.freed;
        c.pages_reused = stats.reused;
        c.pages_live = pages.len() as u64;
        c.page_refs = pages.iter().map(|p| p.count as u64).sum();
        c
    }

    /// The write queue, the live pages and the page-frag cursor.
    pub fn state(&self) -> State {
        self.live.state().clone()
    }
}

impl TcpSock {
    fn new(cfg: SendConfig) -> TcpSock {
        TcpSock {
            size_goal: cfg.size_goal(),
            cfg,
            pages: PageAlloc::default(),
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

    fn sendmsg(&mut self, iov: &[u32], eor: bool, log: &mut Log) -> Result<u64, u64> {
        let mut left: u64 = iov.iter().map(|&l| l as u64).sum();
        let mut copied = 0u64;
        // `goto new_segment`: the tail may not take this chunk; allocate without asking.
        let mut new_segment = false;
        // What one pass of the copy loop may take from: an iovec, or the whole message. Chosen
        // per pass by index: collecting them cost a write an allocation, and chaining
        // iterators 19 instructions more than this (callgrind).
        let (whole, total) = (self.cfg.variant.copies_iov_as_one_stream(), left);
        let passes = if whole { 1 } else { iov.len() };
        #[allow(clippy::needless_range_loop)]
        for pass in 0..passes {
            let mut seglen = if whole { total } else { iov[pass] as u64 };
            while seglen > 0 {
                let (mut copy, mut max) = if new_segment {
                    (0, 0)
                } else {
                    self.tail_room(log.state())
                };
                new_segment = false;
                if copy == 0 {
                    if self.wmem_queued >= self.cfg.socket.sndbuf as u64 {
                        return Err(self.wmem_queued);
                    }
                    self.new_skb(log);
                    (copy, max) = (self.size_goal, self.size_goal);
                }
                let skb = Tail::of(log.state());
                let Some(n) = self.copy_chunk(&skb, (copy as u64).min(seglen) as u32, log) else {
                    // No frag slot (MAX_SKB_FRAGS, or pre-2010 on a non-SG route).
                    self.mark_push(log);
                    new_segment = true;
                    continue;
                };
                if copied == 0 && skb.psh {
                    log.emit(Event::ClearPsh { skb: skb.id });
                }
                self.write_seq += n as u64;
                copied += n as u64;
                left -= n as u64;
                seglen -= n as u64;
                if left == 0 {
                    if eor && self.cfg.variant.honours_eor() {
                        log.emit(Event::MarkEor { skb: skb.id });
                    }
                    break;
                }
                if skb.len + n < max {
                    continue;
                }
                // The skb is full: __tcp_push_pending_frames when forced, else tcp_push_one
                // if it is the send head (the only unsent skb).
                if self.forced_push() {
                    self.mark_push(log);
                    self.push(true, log);
                } else if only_unsent_is_tail(log.state()) {
                    self.push(false, log);
                }
            }
        }
        if copied > 0 {
            // tcp_push at `out:` (no MSG_MORE): PSH on the tail, then push.
            self.mark_push(log);
            self.push(false, log);
        }
        self.c.bytes_written += copied;
        Ok(copied)
    }

    /// (copy, max) for the tail skb: it takes more only while unsent (and, today, not EOR)
    /// and shorter than max = size_goal, or the MSS for a 2.6.33 skb without checksum
    /// offload (CHECKSUM_NONE). (0, _) means: allocate a new skb.
    fn tail_room(&self, s: &State) -> (u32, u32) {
        let v = self.cfg.variant;
        match unsent_tail(s) {
            Some(skb) if !(v.honours_eor() && skb.eor) => {
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
    fn new_skb(&mut self, log: &mut Log) {
        let (v, k, d) = (self.cfg.variant, &self.cfg.k, &self.cfg.device);
        let room = v.linear_room(k, self.cfg.socket.mss, d.sg, d.gso);
        let head = v.new_skb_head(k, room);
        let id = self.next_skb;
        self.next_skb += 1;
        self.c.skbs_allocated += 1;
        self.c.skb_head_bytes += head.head_bytes as u64;
        self.wmem_queued += head.truesize as u64;
        log.emit(Event::AllocSkb {
            skb: id,
            cpu: CPU,
            head_bytes: head.head_bytes,
            headroom: head.headroom,
            linear_room: head.tailroom,
            seq: self.write_seq as u32,
            truesize: head.truesize,
            reserved_tailroom: 0,
            head_page: None,
            head_offset: None,
            queue: Some(queue::WRITE_QUEUE.into()),
            size_goal: Some(self.max_len()),
        });
    }

    /// Copies at most `copy` bytes into the tail skb: linear tailroom first (pre-2010), else
    /// a page frag. `None` when the skb may take no new frag.
    fn copy_chunk(&mut self, skb: &Tail, copy: u32, log: &mut Log) -> Option<u32> {
        if self.cfg.variant.linear_first() && skb.tailroom > 0 {
            let n = copy.min(skb.tailroom);
            log.emit(Event::CopyToLinear {
                skb: skb.id,
                bytes: n,
            });
            self.c.linear_bytes += n as u64;
            self.c.sendmsg_copy_bytes += n as u64;
            return Some(n);
        }
        let t = self.frag_target(skb, log)?;
        let n = copy.min(t.room);
        self.copy_to_page(skb, &t, n, log);
        Some(n)
    }

    /// tcp_mark_push on the tail: PSH, and pushed_seq = write_seq.
    fn mark_push(&mut self, log: &mut Log) {
        if let Some(skb) = unsent_tail(log.state()) {
            let id = skb.id;
            log.emit(Event::MarkPsh { skb: id });
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
    fn push(&mut self, forced: bool, log: &mut Log) {
        // The event changes nothing: the tail is read only for a trace.
        if let Some(skb) = (log.is_on()).then(|| unsent_tail(log.state())).flatten() {
            let id = skb.id;
            log.note(|| Event::Push { skb: id, forced });
        }
        if self.cfg.device.drain {
            self.transmit(log);
        }
    }

    /// The peer acknowledges up to stream offset `una`: fully acknowledged skbs are freed
    /// (tcp_clean_rtx_queue; a partly acknowledged skb is kept whole, tcp_trim_head is not
    /// modelled).
    fn ack_to(&mut self, una: u64, log: &mut Log) {
        debug_assert!(una <= self.snd_nxt, "model bug: ack beyond snd_nxt");
        self.c.bytes_acked += una.saturating_sub(self.snd_una);
        self.snd_una = self.snd_una.max(una);
        let snd_una = self.snd_una as u32;
        log.note(|| Event::Ack { snd_una });
        while let Some(skb) = write_queue(log.state()).skbs.front().filter(|s| s.sent) {
            let (id, len) = (skb.id, skb.len as u64);
            if self.front_seq + len > self.snd_una {
                break;
            }
            self.front_seq += len;
            self.free_skb(id, log);
        }
    }

    /// sk_wmem_free_skb: put_page per frag, then the skb.
    fn free_skb(&mut self, id: SkbId, log: &mut Log) {
        let skb = front(log.state());
        debug_assert_eq!(skb.id, id, "model bug: frees start at the front");
        self.wmem_queued -= skb.head.truesize as u64;
        for i in 0..skb.nr_frags() {
            let page = front(log.state()).frags[i].page;
            self.pages.put(page, CPU, Ref::Frag, log);
        }
        self.c.skbs_freed += 1;
        log.emit(Event::FreeSkb {
            skb: id,
            cpu: CPU,
            read: false,
        });
    }

    /// The socket is destroyed: tcp_write_queue_purge frees every skb. In 2.6.33
    /// tcp_v4_destroy_sock then frees the socket's TCP_PAGE. Today's page frag is the task's
    /// (`current->task_frag`): the socket never owned it, so it stays with the task, for its
    /// next socket, until the task exits.
    fn close(&mut self, log: &mut Log) {
        while let Some(skb) = write_queue(log.state()).skbs.front() {
            self.free_skb(skb.id, log);
        }
        self.front_seq = self.write_seq;
        if !self.cfg.variant.uses_task_frag() {
            if let Some(p) = log.state().cursors[0].page {
                self.pages.put(p, CPU, Ref::Destroy, log);
            }
        }
        self.closed = true;
    }
}

/// The tail is the send head: the only unsent skb.
fn only_unsent_is_tail(s: &State) -> bool {
    let q = &write_queue(s).skbs;
    let before = q.len().checked_sub(2).map(|i| &q[i]);
    unsent_tail(s).is_some() && before.is_none_or(|b| b.sent)
}
