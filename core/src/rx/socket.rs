//! The receiving socket and where consumed skbs are freed: the rx skb cache variants.
//!
//! Delivery (`tcp_v4_rcv`) runs in softirq on the BH CPU, or on the application's CPU when
//! RPS/RFS steers the flow there: to the backlog when the user owns the socket, else to the
//! receive queue. `recvmsg` runs on the application's CPU, copies payload out and eats each
//! fully read skb. Where that skb is freed is the rx cache axis:
//! - `none`: `sk_eat_skb` frees it right there, on the application's CPU.
//! - `dumazet-2019` (seed 002, as merged for 5.2-rc1): `sk_eat_skb` parks it in the one-slot
//!   `sk_rx_skb_cache` when the slot is empty and RPS is off (`rps_needed`); the next
//!   `tcp_v4_rcv` that finds the socket unowned takes it and frees it after `bh_unlock_sock`,
//!   on the delivering CPU. `inet_sock_destruct` and `tcp_disconnect` free a parked skb.
//! - `defer-free` (v6.12): `tcp_eat_recv_skb` calls `skb_attempt_defer_free`, which frees
//!   locally when the skb was allocated on this CPU or the allocating CPU's list holds
//!   `sysctl_skb_defer_max` (64) skbs, else queues it on that CPU's `defer_list` (kicking that
//!   CPU with an IPI when the list reaches half). `net_rx_action` on that CPU frees the list
//!   (`skb_defer_free_flush`) before each poll ([`super::defer`]).
//!
//! A TCP skb reaching the receive queue may merge into its tail ([`super::coalesce`]).
//! Simplifications: the backlog does not coalesce (`tcp_add_backlog`, v4.20 on); the IPI's
//! softirq runs at once.

use super::coalesce::try_coalesce;
use super::defer::DeferLists;
use super::kernel::{self, skbs_in, Mem};
use super::scenario::{Proto, RxParams};
use super::variant::RxCache;
use crate::events::{Cpu, Event, SkbId};
use crate::replay::Log;
use crate::trace::queue::{SK_BACKLOG, SK_RECEIVE_QUEUE, SK_RX_SKB_CACHE};

/// How much one recvmsg call reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadLimit {
    Bytes(u64),
    Skbs(u64),
    /// Everything the application's lag allows.
    All,
}

/// The socket. Its receive queue, backlog and sk_rx_skb_cache (seed 002) are the state's
/// queues of those names; this keeps what the state does not.
#[derive(Clone, Debug, Default)]
pub struct Socket {
    /// sock_owned_by_user: the application holds the socket lock.
    pub owned: bool,
    pub closed: bool,
    /// Bytes of the receive queue's first skb already copied (copied_seq - its seq).
    copied: u32,
    pub tally: SocketTally,
}

/// What happened at the socket, for the counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct SocketTally {
    /// skbs tcp_v4_rcv got (queued, backlogged or dropped).
    pub delivered: u64,
    pub backlog_deliveries: u64,
    pub rx_cache_parked: u64,
    pub rx_cache_freed: u64,
    /// skbs tcp_try_coalesce merged into the receive queue's tail.
    pub coalesced: u64,
    pub recvmsg_calls: u64,
    /// skbs recvmsg freed itself (not parked, not deferred).
    pub recvmsg_skbs_freed: u64,
    /// put_page calls and page frees on the application's CPU during recvmsg.
    pub recvmsg_put_page: u64,
    pub recvmsg_page_frees: u64,
    pub bytes_read: u64,
    /// Bytes freed unread (disconnect, close, a closed socket).
    pub bytes_purged: u64,
}

/// The ids on queue `name`, front first.
fn ids(log: &Log, name: &str) -> Vec<SkbId> {
    log.state().skbs_on(name).iter().map(|s| s.id).collect()
}

/// The last skb on queue `name` (read in place: a long queue costs nothing per frame).
fn tail(log: &Log, name: &str) -> Option<SkbId> {
    log.state().skbs_on(name).back().map(|s| s.id)
}

impl Socket {
    /// tcp_v4_rcv on `cpu` for one skb that came up from GRO (or straight from the driver);
    /// an owned socket backlogs it ([`RxParams::owner_backlogs`]).
    pub fn rcv(&mut self, skb: SkbId, cpu: Cpu, p: &RxParams, mem: &mut Mem, log: &mut Log) {
        let backlog = p.owner_backlogs();
        self.tally.delivered += 1;
        if self.closed {
            log.note(|| Event::RxDrop { skb, cpu });
            self.tally.bytes_purged += u64::from(kernel::skb(log.state(), skb).len);
            mem.free_skb(skb, cpu, log);
            return;
        }
        if self.owned && backlog {
            log.emit(Event::BacklogAdd { skb, cpu });
            self.tally.backlog_deliveries += 1;
            return;
        }
        let to_free = log.state().skbs_on(SK_RX_SKB_CACHE).front().map(|s| s.id);
        if let Some(parked) = to_free {
            log.emit(Event::RxCacheTake { skb: parked, cpu });
        }
        let tail = tail(log, SK_RECEIVE_QUEUE);
        if !self.coalesce(skb, tail, cpu, p, mem, log) {
            log.emit(Event::QueueRcv { skb, cpu });
        }
        // After bh_unlock_sock.
        if let Some(parked) = to_free {
            self.tally.rx_cache_freed += 1;
            mem.free_skb(parked, cpu, log);
        }
    }

    /// tcp_recvmsg on the application's CPU: copies from the receive queue, leaving the newest
    /// `app.lag` skbs unread, and eats every skb it has read completely.
    pub fn recvmsg(
        &mut self,
        limit: ReadLimit,
        p: &RxParams,
        mem: &mut Mem,
        defer: &mut DeferLists,
        log: &mut Log,
    ) -> Result<(), String> {
        if self.closed {
            return Err("the socket is closed".into());
        }
        if self.owned {
            return Err("the socket is owned by the user (`lock`): `release` it first".into());
        }
        let cpu = p.app.cpu;
        self.tally.recvmsg_calls += 1;
        let (puts_before, frees_before) = (
            mem.pages.stats.put_page[cpu as usize],
            mem.pages.stats.freed_on[cpu as usize],
        );
        let (mut bytes_left, mut skbs_left) = match limit {
            ReadLimit::Bytes(b) => (b, u64::MAX),
            ReadLimit::Skbs(n) => (u64::MAX, n),
            ReadLimit::All => (u64::MAX, u64::MAX),
        };
        let lag = p.app.lag as usize;
        while bytes_left > 0 && skbs_left > 0 {
            let queue = log.state().skbs_on(SK_RECEIVE_QUEUE);
            if queue.len() <= lag {
                break;
            }
            let (id, len) = (queue[0].id, queue[0].len);
            let n = (len - self.copied).min(u32::try_from(bytes_left).unwrap_or(u32::MAX));
            log.note(|| Event::CopyToUser {
                skb: id,
                cpu,
                bytes: n,
            });
            self.copied += n;
            bytes_left -= u64::from(n);
            self.tally.bytes_read += u64::from(n);
            if self.copied < len {
                break;
            }
            self.copied = 0;
            skbs_left -= 1;
            self.eat_skb(id, p, mem, defer, log);
        }
        self.tally.recvmsg_put_page += mem.pages.stats.put_page[cpu as usize] - puts_before;
        self.tally.recvmsg_page_frees += mem.pages.stats.freed_on[cpu as usize] - frees_before;
        Ok(())
    }

    /// sk_eat_skb (5.2-rc1) / tcp_eat_recv_skb (v6.12): what happens to a fully read skb,
    /// the receive queue's first.
    fn eat_skb(
        &mut self,
        skb: SkbId,
        p: &RxParams,
        mem: &mut Mem,
        defer: &mut DeferLists,
        log: &mut Log,
    ) {
        let cpu = p.app.cpu;
        let tcp = p.socket.proto == Proto::Tcp;
        let slot_free = log.state().skbs_on(SK_RX_SKB_CACHE).is_empty();
        match p.variant.cache {
            RxCache::Dumazet2019 if tcp && !p.nic.rps && slot_free => {
                log.emit(Event::RxCachePark { skb });
                self.tally.rx_cache_parked += 1;
            }
            RxCache::DeferFree if tcp => {
                if !defer.attempt(skb, cpu, mem, log) {
                    self.free_eaten(skb, cpu, mem, log);
                }
            }
            _ => self.free_eaten(skb, cpu, mem, log),
        }
    }

    /// recvmsg frees an eaten skb itself.
    fn free_eaten(&mut self, skb: SkbId, cpu: Cpu, mem: &mut Mem, log: &mut Log) {
        self.tally.recvmsg_skbs_freed += skbs_in(kernel::skb(log.state(), skb)) as u64;
        mem.free_read_skb(skb, cpu, log);
    }

    /// tcp_queue_rcv on `cpu`: merges a TCP `skb` into `tail`, the receive queue's last skb,
    /// when `skb_try_coalesce` can ([`try_coalesce`]), and `kfree_skb_partial` frees the rest
    /// of it here. False when it did not (a UDP datagram never merges).
    fn coalesce(
        &mut self,
        skb: SkbId,
        tail: Option<SkbId>,
        cpu: Cpu,
        p: &RxParams,
        mem: &mut Mem,
        log: &mut Log,
    ) -> bool {
        let Some(into) = tail.filter(|_| p.socket.proto == Proto::Tcp) else {
            return false;
        };
        let st = log.state();
        let how = try_coalesce(kernel::skb(st, into), kernel::skb(st, skb), &p.consts);
        let Some(how) = how else {
            return false;
        };
        log.emit(Event::RcvCoalesce {
            skb,
            into,
            cpu,
            copied: how.copied,
            stolen_head: how.stolen_head,
            delta_truesize: how.delta_truesize,
        });
        self.tally.coalesced += 1;
        mem.free_skb(skb, cpu, log);
        true
    }

    /// release_sock on the application's CPU: the backlog goes through tcp_v4_do_rcv to the
    /// receive queue (no rx cache handling on this path), each skb through tcp_queue_rcv,
    /// coalescing there, unless the socket is closing (`coalesce` none: tcp_close drops them).
    pub fn release(&mut self, cpu: Cpu, coalesce: Option<(&RxParams, &mut Mem)>, log: &mut Log) {
        self.owned = false;
        let mut coalesce = coalesce;
        for skb in ids(log, SK_BACKLOG) {
            let tail = tail(log, SK_RECEIVE_QUEUE);
            log.emit(Event::BacklogProcess { skb, cpu });
            if let Some((p, mem)) = coalesce.as_mut() {
                self.coalesce(skb, tail, cpu, p, mem, log);
            }
        }
    }

    /// tcp_disconnect: purges the receive queue and frees a parked skb.
    pub fn disconnect(&mut self, cpu: Cpu, mem: &mut Mem, log: &mut Log) {
        self.purge_receive_queue(cpu, mem, log);
        for parked in ids(log, SK_RX_SKB_CACHE) {
            mem.free_skb(parked, cpu, log);
        }
    }

    /// tcp_close then inet_sock_destruct: the backlog is processed (into the closed socket,
    /// so dropped), the receive queue purged, a parked skb freed.
    pub fn close(&mut self, cpu: Cpu, mem: &mut Mem, log: &mut Log) {
        self.release(cpu, None, log);
        self.disconnect(cpu, mem, log);
        self.closed = true;
    }

    fn purge_receive_queue(&mut self, cpu: Cpu, mem: &mut Mem, log: &mut Log) {
        for skb in ids(log, SK_RECEIVE_QUEUE) {
            self.tally.bytes_purged += u64::from(kernel::skb(log.state(), skb).len);
            mem.free_skb(skb, cpu, log);
        }
        if self.copied > 0 {
            // The partly read skb's read bytes were counted as read, not purged.
            self.tally.bytes_purged -= u64::from(self.copied);
            self.copied = 0;
        }
    }

    /// Bytes of the first queued skb already read.
    pub fn copied(&self) -> u32 {
        self.copied
    }
}
