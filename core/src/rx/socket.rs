//! The receiving socket and where consumed skbs are freed: the rx skb cache variants.
//!
//! Delivery (`tcp_v4_rcv`) runs in softirq on the BH CPU, or on the application's CPU when
//! RPS/RFS steers the flow there: to the backlog when the user owns the socket, else to the
//! receive queue. `recvmsg` runs on the application's CPU, copies payload out and eats each
//! fully read skb. Where that skb is freed is the rx cache axis:
//! - `none`: `sk_eat_skb` frees it right there, on the application's CPU.
//! - `dumazet-2019` (seed 002, v5.1): `sk_eat_skb` parks it in the one-slot
//!   `sk_rx_skb_cache` when the slot is empty and RPS is off (`rps_needed`); the next
//!   `tcp_v4_rcv` that finds the socket unowned takes it and frees it after `bh_unlock_sock`,
//!   on the delivering CPU. `inet_sock_destruct` and `tcp_disconnect` free a parked skb.
//! - `defer-free` (v6.12): `tcp_eat_recv_skb` calls `skb_attempt_defer_free`, which frees
//!   locally when the skb was allocated on this CPU or the allocating CPU's list holds
//!   `sysctl_skb_defer_max` (64) skbs, else queues it on that CPU's `defer_list` (kicking that
//!   CPU with an IPI when the list reaches half). `net_rx_action` on that CPU frees the list
//!   (`skb_defer_free_flush`) before each poll.
//!
//! Simplifications: TCP's receive-queue coalescing (`tcp_try_coalesce`, v3.5+) is not
//! modelled (each delivered skb is queued as is); the IPI's softirq runs at once.

use super::{Kernel, Proto, RxCache, RxParams};
use crate::skb::Skb;
use crate::trace::{queue, Event, Events, Queue};
use crate::{Cpu, NR_CPUS};
use std::collections::VecDeque;

/// net.core.skb_defer_max default (net_hotdata.sysctl_skb_defer_max, v6.12).
pub const SKB_DEFER_MAX: usize = 64;

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
}

impl Socket {
    /// tcp_v4_rcv on `cpu` for one skb that came up from GRO (or straight from the driver).
    pub fn rcv(&mut self, skb: Skb, cpu: Cpu, k: &mut Kernel, ev: &mut Events) {
        let id = skb.id;
        k.stats.skbs_delivered += 1;
        if self.closed {
            ev.emit(|| Event::RxDrop { skb: id, cpu });
            k.stats.bytes_purged += u64::from(skb.len);
            k.free_skb(skb, cpu, ev);
            return;
        }
        if self.owned {
            ev.emit(|| Event::BacklogAdd { skb: id, cpu });
            k.stats.backlog_deliveries += 1;
            self.backlog.push(skb);
            return;
        }
        let to_free = self.rx_cache.take();
        if let Some(parked) = &to_free {
            let pid = parked.id;
            ev.emit(|| Event::RxCacheTake { skb: pid, cpu });
        }
        ev.emit(|| Event::QueueRcv { skb: id, cpu });
        self.receive_queue.push_back(skb);
        // After bh_unlock_sock.
        if let Some(parked) = to_free {
            k.stats.rx_cache_freed += 1;
            k.free_skb(parked, cpu, ev);
        }
    }

    /// tcp_recvmsg on the application's CPU: copies from the receive queue, leaving the newest
    /// `app.lag` skbs unread, and eats every skb it has read completely.
    pub fn recvmsg(
        &mut self,
        limit: ReadLimit,
        p: &RxParams,
        k: &mut Kernel,
        ev: &mut Events,
    ) -> Result<(), String> {
        if self.closed {
            return Err("the socket is closed".into());
        }
        if self.owned {
            return Err("the socket is owned by the user (`lock`): `release` it first".into());
        }
        let cpu = p.app.cpu;
        k.stats.recvmsg_calls += 1;
        let (puts_before, frees_before) = (
            k.pool.stats.put_page[cpu as usize],
            k.pool.stats.freed_on[cpu as usize],
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
            k.stats.bytes_read += u64::from(n);
            if self.copied < skb.len {
                break;
            }
            let skb = self
                .receive_queue
                .pop_front()
                .expect("model bug: queue emptied");
            self.copied = 0;
            skbs_left -= 1;
            self.eat_skb(skb, p, k, ev);
        }
        k.stats.recvmsg_put_page += k.pool.stats.put_page[cpu as usize] - puts_before;
        k.stats.recvmsg_page_frees += k.pool.stats.freed_on[cpu as usize] - frees_before;
        Ok(())
    }

    /// sk_eat_skb (v5.1) / tcp_eat_recv_skb (v6.12): what happens to a fully read skb.
    fn eat_skb(&mut self, skb: Skb, p: &RxParams, k: &mut Kernel, ev: &mut Events) {
        let cpu = p.app.cpu;
        let tcp = p.socket.proto == Proto::Tcp;
        match k.variant.cache {
            RxCache::Dumazet2019 if tcp && !p.nic.rps && self.rx_cache.is_none() => {
                let id = skb.id;
                ev.emit(|| Event::RxCachePark { skb: id });
                k.stats.rx_cache_parked += 1;
                self.rx_cache = Some(skb);
            }
            RxCache::DeferFree if tcp => defer_free(skb, cpu, k, ev),
            _ => {
                k.stats.recvmsg_skbs_freed += super::skbs_in(&skb) as u64;
                k.free_skb(skb, cpu, ev);
            }
        }
    }

    /// release_sock on the application's CPU: the backlog goes through tcp_v4_do_rcv to the
    /// receive queue (no rx cache handling on this path).
    pub fn release(&mut self, cpu: Cpu, ev: &mut Events) {
        self.owned = false;
        for skb in std::mem::take(&mut self.backlog) {
            let id = skb.id;
            ev.emit(|| Event::BacklogProcess { skb: id, cpu });
            self.receive_queue.push_back(skb);
        }
    }

    /// tcp_disconnect: purges the receive queue and frees a parked skb.
    pub fn disconnect(&mut self, cpu: Cpu, k: &mut Kernel, ev: &mut Events) {
        self.purge_receive_queue(cpu, k, ev);
        if let Some(parked) = self.rx_cache.take() {
            k.free_skb(parked, cpu, ev);
        }
    }

    /// tcp_close then inet_sock_destruct: the backlog is processed (into the closed socket,
    /// so dropped), the receive queue purged, a parked skb freed.
    pub fn close(&mut self, cpu: Cpu, k: &mut Kernel, ev: &mut Events) {
        self.release(cpu, ev);
        self.disconnect(cpu, k, ev);
        self.closed = true;
    }

    fn purge_receive_queue(&mut self, cpu: Cpu, k: &mut Kernel, ev: &mut Events) {
        for skb in std::mem::take(&mut self.receive_queue) {
            k.stats.bytes_purged += u64::from(skb.len);
            k.free_skb(skb, cpu, ev);
        }
        if self.copied > 0 {
            // The partly read skb's read bytes were counted as read, not purged.
            k.stats.bytes_purged -= u64::from(self.copied);
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
            .map(super::skbs_in)
            .sum()
    }
}

/// skb_attempt_defer_free (net/core/skbuff.c, v6.12) called on `cpu`.
pub fn defer_free(skb: Skb, cpu: Cpu, k: &mut Kernel, ev: &mut Events) {
    let to = skb.cpu;
    let list_len = k.defer[to as usize].len();
    if to == cpu || list_len >= SKB_DEFER_MAX {
        k.stats.recvmsg_skbs_freed += super::skbs_in(&skb) as u64;
        k.free_skb(skb, cpu, ev);
        return;
    }
    let id = skb.id;
    ev.emit(|| Event::DeferFree {
        skb: id,
        cpu,
        to_cpu: to,
    });
    k.stats.skbs_deferred += 1;
    k.defer[to as usize].push(skb);
    if list_len == SKB_DEFER_MAX / 2 {
        ev.emit(|| Event::DeferKick { cpu: to });
        defer_flush(to, k, ev);
    }
}

/// skb_defer_free_flush on `cpu`: frees every skb on its defer list, there.
pub fn defer_flush(cpu: Cpu, k: &mut Kernel, ev: &mut Events) {
    let list = std::mem::take(&mut k.defer[cpu as usize]);
    if list.is_empty() {
        return;
    }
    let skbs = list.len() as u32;
    ev.emit(|| Event::DeferFlush { cpu, skbs });
    for skb in list {
        k.free_skb(skb, cpu, ev);
    }
}

/// The per-CPU defer lists, for the trace.
pub fn defer_queues(k: &Kernel) -> Vec<Queue> {
    (0..NR_CPUS)
        .map(|c| Queue {
            name: queue::defer_list(c as Cpu),
            skbs: k.defer[c].clone(),
        })
        .collect()
}
