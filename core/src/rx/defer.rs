//! `skb_attempt_defer_free` (net/core/skbuff.c, v6.12): a consumed skb goes back to the CPU
//! that allocated it, on that CPU's `softnet_data.defer_list`, which `net_rx_action` there
//! frees (`skb_defer_free_flush`) before each poll.

use super::kernel::{skbs_in, Mem};
use crate::events::{Cpu, Event, Events};
use crate::skb::Skb;
use crate::trace::{queue, Queue};
use crate::NR_CPUS;

/// net.core.skb_defer_max default (net_hotdata.sysctl_skb_defer_max, v6.12).
pub const SKB_DEFER_MAX: usize = 64;

/// Every CPU's defer list.
#[derive(Clone, Debug, Default)]
pub struct DeferLists {
    lists: [Vec<Skb>; NR_CPUS],
    /// skbs queued on another CPU's list.
    pub deferred: u64,
}

impl DeferLists {
    /// skb_attempt_defer_free on `cpu`: queues `skb` on its allocating CPU's list (kicking
    /// that CPU with an IPI, whose softirq the model runs at once, when the list reaches
    /// half), or gives it back to be freed here when it was allocated here or that list is
    /// full.
    pub fn attempt(&mut self, skb: Skb, cpu: Cpu, mem: &mut Mem, ev: &mut Events) -> Option<Skb> {
        let to = skb.cpu;
        let list_len = self.lists[to as usize].len();
        if to == cpu || list_len >= SKB_DEFER_MAX {
            return Some(skb);
        }
        let id = skb.id;
        ev.emit(|| Event::DeferFree {
            skb: id,
            cpu,
            to_cpu: to,
        });
        self.deferred += 1;
        self.lists[to as usize].push(skb);
        if list_len == SKB_DEFER_MAX / 2 {
            ev.emit(|| Event::DeferKick { cpu: to });
            self.flush(to, mem, ev);
        }
        None
    }

    /// skb_defer_free_flush on `cpu`: frees every skb on its defer list, there.
    pub fn flush(&mut self, cpu: Cpu, mem: &mut Mem, ev: &mut Events) {
        let list = std::mem::take(&mut self.lists[cpu as usize]);
        if list.is_empty() {
            return;
        }
        let skbs = list.len() as u32;
        ev.emit(|| Event::DeferFlush { cpu, skbs });
        for skb in list {
            mem.free_skb(skb, cpu, ev);
        }
    }

    /// Skbs on the lists, frag_list members included.
    pub fn skb_count(&self) -> usize {
        self.lists.iter().flatten().map(skbs_in).sum()
    }

    /// The lists, for the trace.
    pub fn queues(&self) -> impl Iterator<Item = Queue> + '_ {
        self.lists.iter().enumerate().map(|(c, list)| Queue {
            name: queue::defer_list(c as Cpu),
            skbs: list.clone(),
        })
    }
}
