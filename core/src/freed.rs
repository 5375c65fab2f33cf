//! Where skbs and pages were freed: which CPU freed each, by which kernel function, read from
//! a step's `free_skb` and `free_page` events. A step's state holds only what is live, so the
//! frees are what tells two lanes apart when only the freeing CPU moved (the rx skb cache).

use crate::events::{Cpu, Event};
use crate::kernel_fn::KernelFn;
use std::fmt;

/// What was freed: an skb or a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Freeable {
    Skb,
    Page,
}

/// The skbs, or the pages, one kernel function freed on one CPU: `ids` in ascending order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Freed {
    pub what: Freeable,
    pub ids: Vec<u32>,
    pub cpu: Cpu,
    /// The function the free event stands for in the trace's kernel.
    pub by: Option<KernelFn>,
}

impl Freed {
    /// The object and CPU a free event frees, if it is one.
    pub(crate) fn of(e: &Event) -> Option<(Freeable, u32, Cpu)> {
        match *e {
            Event::FreeSkb { skb, cpu, .. } | Event::SeenFree { skb, cpu, .. } => {
                Some((Freeable::Skb, skb, cpu))
            }
            Event::FreePage { page, cpu, .. } => Some((Freeable::Page, page, cpu)),
            _ => None,
        }
    }
}

/// `skbs 1-17, 19 freed on cpu0 by __kfree_skb`: runs of ids written as ranges.
impl fmt::Display for Freed {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        let noun = match self.what {
            Freeable::Skb => "skb",
            Freeable::Page => "page",
        };
        let plural = if self.ids.len() == 1 { "" } else { "s" };
        write!(f, "{noun}{plural}")?;
        let mut sep = " ";
        let mut i = 0;
        while i < self.ids.len() {
            let mut j = i;
            while j + 1 < self.ids.len() && self.ids[j + 1] == self.ids[j] + 1 {
                j += 1;
            }
            match j - i {
                0 => write!(f, "{sep}{}", self.ids[i])?,
                1 => write!(f, "{sep}{}, {}", self.ids[i], self.ids[j])?,
                _ => write!(f, "{sep}{}-{}", self.ids[i], self.ids[j])?,
            }
            sep = ", ";
            i = j + 1;
        }
        write!(f, " freed on cpu{}", self.cpu)?;
        match &self.by {
            Some(by) => write!(f, " by {}", by.label()),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{walkthrough, RunOptions, Trace};

    fn trace(variant: &str) -> Trace {
        let w = walkthrough::find("rx-skb-cache").expect("a walkthrough");
        let opts = RunOptions::traced(Some(variant));
        w.scenario.run(&opts).expect("it runs")
    }

    /// rx-skb-cache step 2 and 3: before the patch recvmsg frees the 64 KiB packet (skb 0 and
    /// the skbs 18 and 36 on its frag_list) and its two full pages on CPU 1; after it, the
    /// next burst's tcp_v4_rcv frees the parked packet on CPU 0 (snapshots/rx-skb-cache.snap).
    #[test]
    fn the_frees_name_their_cpu_and_function() {
        let before = trace("none");
        let read: Vec<String> = (before.freed(1, before.steps[1].events.len()).iter())
            .map(|f| f.to_string())
            .collect();
        assert_eq!(
            read,
            [
                "pages 0, 1 freed on cpu1 by __folio_put",
                "skbs 0, 18, 36 freed on cpu1 by __kfree_skb"
            ]
        );
        let after = trace("dumazet-2019");
        assert_eq!(after.freed(1, after.steps[1].events.len()), []);
        let n = after.steps[2].events.len();
        let freed = after.freed(2, n);
        let parked = (freed.iter())
            .find(|f| f.what == Freeable::Skb && f.ids.contains(&0))
            .expect("the parked skb is freed");
        assert_eq!(parked.cpu, 0);
        assert_eq!(after.freed_on(2, n, Freeable::Skb, 0), Some(0));
        assert_eq!(before.freed_on(1, 1000, Freeable::Skb, 0), Some(1));
        assert_eq!(before.freed_on(1, 0, Freeable::Skb, 0), None);
        // GRO's merged skbs, freed on CPU 0 in step 1, as runs.
        let gro = before.freed(0, before.steps[0].events.len());
        assert_eq!(
            gro[0].to_string(),
            "skbs 1-17, 19-35, 37-44 freed on cpu0 by __kfree_skb"
        );
    }
}
