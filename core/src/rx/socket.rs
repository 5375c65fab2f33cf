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
use super::kernel::{skbs_in, Mem};
use super::scenario::{Proto, RxParams};
use super::variant::RxCache;
use crate::events::{Cpu, Event, Events};
use crate::skb::Skb;
use crate::trace::{queue, Queue};
use std::collections::VecDeque;

/// How much one recvmsg call reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadLimit {
    Bytes(u64),
    Skbs(u64),
    /// Everything the application's lag allows.
    All,
}

#[derive(Clone, Debug, Default)]
pub struct Socket {
    pub receive_queue: VecDeque<Skb>,
    pub backlog: Vec<Skb>,
    /// sk_rx_skb_cache (seed 002).
    pub rx_cache: Option<Skb>,
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

impl Socket {
    /// tcp_v4_rcv on `cpu` for one skb that came up from GRO (or straight from the driver);
    /// an owned socket backlogs it ([`RxParams::owner_backlogs`]).
    pub fn rcv(&mut self, skb: Skb, cpu: Cpu, p: &RxParams, mem: &mut Mem, ev: &mut Events) {
        let backlog = p.owner_backlogs();
        let id = skb.id;
        self.tally.delivered += 1;
        if self.closed {
            ev.emit(|| Event::RxDrop { skb: id, cpu });
            self.tally.bytes_purged += u64::from(skb.len);
            mem.free_skb(skb, cpu, ev);
            return;
        }
        if self.owned && backlog {
            ev.emit(|| Event::BacklogAdd { skb: id, cpu });
            self.tally.backlog_deliveries += 1;
            self.backlog.push(skb);
            return;
        }
        let to_free = self.rx_cache.take();
        if let Some(parked) = &to_free {
            let pid = parked.id;
            ev.emit(|| Event::RxCacheTake { skb: pid, cpu });
        }
        self.queue_rcv(skb, cpu, p, mem, ev);
        // After bh_unlock_sock.
        if let Some(parked) = to_free {
            self.tally.rx_cache_freed += 1;
            mem.free_skb(parked, cpu, ev);
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
        ev: &mut Events,
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
            mem.pool.stats.put_page[cpu as usize],
            mem.pool.stats.freed_on[cpu as usize],
        );
        let (mut bytes_left, mut skbs_left) = match limit {
            ReadLimit::Bytes(b) => (b, u64::MAX),
            ReadLimit::Skbs(n) => (u64::MAX, n),
            ReadLimit::All => (u64::MAX, u64::MAX),
        };
        let lag = p.app.lag as usize;
        while bytes_left > 0 && skbs_left > 0 && self.receive_queue.len() > lag {
            let skb = &self.receive_queue[0];
            let n = (skb.len - self.copied).min(u32::try_from(bytes_left).unwrap_or(u32::MAX));
            let id = skb.id;
            ev.emit(|| Event::CopyToUser {
                skb: id,
                cpu,
                bytes: n,
            });
            self.copied += n;
            bytes_left -= u64::from(n);
            self.tally.bytes_read += u64::from(n);
            if self.copied < skb.len {
                break;
            }
            let skb = self
                .receive_queue
                .pop_front()
                .expect("model bug: queue emptied");
            self.copied = 0;
            skbs_left -= 1;
            self.eat_skb(skb, p, mem, defer, ev);
        }
        self.tally.recvmsg_put_page += mem.pool.stats.put_page[cpu as usize] - puts_before;
        self.tally.recvmsg_page_frees += mem.pool.stats.freed_on[cpu as usize] - frees_before;
        Ok(())
    }

    /// sk_eat_skb (5.2-rc1) / tcp_eat_recv_skb (v6.12): what happens to a fully read skb.
    fn eat_skb(
        &mut self,
        skb: Skb,
        p: &RxParams,
        mem: &mut Mem,
        defer: &mut DeferLists,
        ev: &mut Events,
    ) {
        let cpu = p.app.cpu;
        let tcp = p.socket.proto == Proto::Tcp;
        match p.variant.cache {
            RxCache::Dumazet2019 if tcp && !p.nic.rps && self.rx_cache.is_none() => {
                let id = skb.id;
                ev.emit(|| Event::RxCachePark { skb: id });
                self.tally.rx_cache_parked += 1;
                self.rx_cache = Some(skb);
            }
            RxCache::DeferFree if tcp => {
                if let Some(skb) = defer.attempt(skb, cpu, mem, ev) {
                    self.free_eaten(skb, cpu, mem, ev);
                }
            }
            _ => self.free_eaten(skb, cpu, mem, ev),
        }
    }

    /// recvmsg frees an eaten skb itself.
    fn free_eaten(&mut self, skb: Skb, cpu: Cpu, mem: &mut Mem, ev: &mut Events) {
        self.tally.recvmsg_skbs_freed += skbs_in(&skb) as u64;
        mem.free_read_skb(skb, cpu, ev);
    }

    /// tcp_queue_rcv on `cpu`: a TCP skb merges into the receive queue's tail when
    /// `skb_try_coalesce` can ([`try_coalesce`]), and `kfree_skb_partial` frees the rest of
    /// it here; otherwise it is returned, to be queued. A UDP datagram is always returned.
    fn coalesce(
        &mut self,
        skb: Skb,
        cpu: Cpu,
        p: &RxParams,
        mem: &mut Mem,
        ev: &mut Events,
    ) -> Option<Skb> {
        let tail = (self.receive_queue.back_mut()).filter(|_| p.socket.proto == Proto::Tcp);
        let Some((to, how)) = tail.and_then(|t| try_coalesce(t, &skb, &p.consts).map(|h| (t, h)))
        else {
            return Some(skb);
        };
        let mut from = skb;
        to.absorb(&mut from, how)
            .expect("model bug: skb_try_coalesce decided a merge it cannot make");
        let (id, into) = (from.id, to.id);
        ev.emit(|| Event::RcvCoalesce {
            skb: id,
            into,
            cpu,
            copied: how.copied,
            stolen_head: how.stolen_head,
            delta_truesize: how.delta_truesize,
        });
        self.tally.coalesced += 1;
        mem.free_skb(from, cpu, ev);
        None
    }

    /// tcp_queue_rcv on `cpu` from tcp_v4_rcv: merged ([`Socket::coalesce`]) or queued.
    fn queue_rcv(&mut self, skb: Skb, cpu: Cpu, p: &RxParams, mem: &mut Mem, ev: &mut Events) {
        if let Some(skb) = self.coalesce(skb, cpu, p, mem, ev) {
            let id = skb.id;
            ev.emit(|| Event::QueueRcv { skb: id, cpu });
            self.receive_queue.push_back(skb);
        }
    }

    /// release_sock on the application's CPU: the backlog goes through tcp_v4_do_rcv to the
    /// receive queue (no rx cache handling on this path), each skb through tcp_queue_rcv,
    /// coalescing there, unless the socket is closing (`coalesce` none: tcp_close drops them).
    pub fn release(&mut self, cpu: Cpu, coalesce: Option<(&RxParams, &mut Mem)>, ev: &mut Events) {
        self.owned = false;
        let mut coalesce = coalesce;
        for skb in std::mem::take(&mut self.backlog) {
            let id = skb.id;
            ev.emit(|| Event::BacklogProcess { skb: id, cpu });
            let left = match coalesce.as_mut() {
                Some((p, mem)) => self.coalesce(skb, cpu, p, mem, ev),
                None => Some(skb),
            };
            self.receive_queue.extend(left);
        }
    }

    /// tcp_disconnect: purges the receive queue and frees a parked skb.
    pub fn disconnect(&mut self, cpu: Cpu, mem: &mut Mem, ev: &mut Events) {
        self.purge_receive_queue(cpu, mem, ev);
        if let Some(parked) = self.rx_cache.take() {
            mem.free_skb(parked, cpu, ev);
        }
    }

    /// tcp_close then inet_sock_destruct: the backlog is processed (into the closed socket,
    /// so dropped), the receive queue purged, a parked skb freed.
    pub fn close(&mut self, cpu: Cpu, mem: &mut Mem, ev: &mut Events) {
        self.release(cpu, None, ev);
        self.disconnect(cpu, mem, ev);
        self.closed = true;
    }

    fn purge_receive_queue(&mut self, cpu: Cpu, mem: &mut Mem, ev: &mut Events) {
        for skb in std::mem::take(&mut self.receive_queue) {
            self.tally.bytes_purged += u64::from(skb.len);
            mem.free_skb(skb, cpu, ev);
        }
        if self.copied > 0 {
            // The partly read skb's read bytes were counted as read, not purged.
            self.tally.bytes_purged -= u64::from(self.copied);
            self.copied = 0;
        }
    }

    pub fn queues(&self) -> [Queue; 3] {
        [
            Queue {
                name: queue::SK_RECEIVE_QUEUE.into(),
                skbs: self.receive_queue.iter().cloned().collect(),
            },
            Queue {
                name: queue::SK_BACKLOG.into(),
                skbs: self.backlog.clone(),
            },
            Queue {
                name: queue::SK_RX_SKB_CACHE.into(),
                skbs: self.rx_cache.iter().cloned().collect(),
            },
        ]
    }

    /// Bytes of the first queued skb already read.
    pub fn copied(&self) -> u32 {
        self.copied
    }

    /// Skbs held by the socket, frag_list members included.
    pub fn skb_count(&self) -> usize {
        self.receive_queue
            .iter()
            .chain(&self.backlog)
            .chain(&self.rx_cache)
            .map(skbs_in)
            .sum()
    }
}
