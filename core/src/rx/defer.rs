//! `skb_attempt_defer_free` (net/core/skbuff.c, v6.12): a consumed skb goes back to the CPU
//! that allocated it, on that CPU's `softnet_data.defer_list`, which `net_rx_action` there
//! frees (`skb_defer_free_flush`) before each poll.

use super::kernel::{self, Mem};
use crate::events::{Cpu, Event, SkbId};
use crate::replay::Log;
use crate::trace::queue;
use crate::NR_CPUS;

/// net.core.skb_defer_max default (net_hotdata.sysctl_skb_defer_max, v6.12).
pub const SKB_DEFER_MAX: usize = 64;

/// Every CPU's defer list: the lists are the state's queues `defer_list cpuN`; this keeps
/// their names and what the state does not.
#[derive(Clone, Debug)]
pub struct DeferLists {
    names: [std::borrow::Cow<'static, str>; NR_CPUS],
    /// skbs queued on another CPU's list.
    pub deferred: u64,
}

impl Default for DeferLists {
    fn default() -> DeferLists {
        DeferLists {
            names: std::array::from_fn(|c| queue::defer_list(c as Cpu)),
            deferred: 0,
        }
    }
}

impl DeferLists {
    /// skb_attempt_defer_free on `cpu`: queues `skb` on its allocating CPU's list (kicking
    /// that CPU with an IPI, whose softirq the model runs at once, when the list reaches
    /// half); false when it is to be freed here, because it was allocated here or that list
    /// is full.
    pub fn attempt(&mut self, skb: SkbId, cpu: Cpu, mem: &mut Mem, log: &mut Log) -> bool {
        let to = kernel::skb(log.state(), skb).cpu;
        let list_len = log.state().skbs_on(&self.names[to as usize]).len();
        if to == cpu || list_len >= SKB_DEFER_MAX {
            return false;
        }
        log.emit(Event::DeferFree {
            skb,
            cpu,
            to_cpu: to,
        });
        self.deferred += 1;
        if list_len == SKB_DEFER_MAX / 2 {
            log.note(|| Event::DeferKick { cpu: to });
            self.flush(to, mem, log);
        }
        true
    }

    /// skb_defer_free_flush on `cpu`: frees every skb on its defer list, there.
    pub fn flush(&mut self, cpu: Cpu, mem: &mut Mem, log: &mut Log) {
        let list = log.state().skbs_on(&self.names[cpu as usize]);
        if list.is_empty() {
            return;
        }
        let ids: Vec<SkbId> = list.iter().map(|s| s.id).collect();
        let skbs = ids.len() as u32;
        log.note(|| Event::DeferFlush { cpu, skbs });
        for skb in ids {
            mem.free_skb(skb, cpu, log);
        }
    }

    /// The lists' names, in CPU order.
    pub fn names(&self) -> &[std::borrow::Cow<'static, str>] {
        &self.names
    }
}
