//! What differs between two states: the previous step and this one, or the two variants of a
//! split view. Items are matched by their ids (skbs, pages) and names (cursors).

use skblab_core::page::PageId;
use skblab_core::skb::SkbId;
use skblab_core::trace::{Counters, State};
use skblab_core::Cpu;

/// The items of a state that are new or different from another state.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changed {
    /// (Lists, in the state's order: a drawing asks of the few dozen items it writes, and a
    /// set type cost the download its own tree and sort code.)
    pub skbs: Vec<SkbId>,
    pub pages: Vec<PageId>,
    /// (A list: a state has a cursor or two, and a set of strings cost the download a
    /// BTreeSet of its own.)
    pub cursors: Vec<String>,
    /// Frag slots (skb, index) an event touched: outlined on their own. (A list: an event
    /// touches one, and a set of pairs would cost the bundle a BTreeMap of its own.)
    pub frags: Vec<(SkbId, u32)>,
    /// Pages an event freed, drawn once more, fading out (the state passed holds them), with
    /// the CPU that freed each (the core's `Trace::freed_on`).
    /// (Lists, not maps: another map type cost the bundle a kilobyte; an event frees one.)
    pub gone: Vec<(PageId, Cpu)>,
    /// Skbs an event freed, likewise.
    pub gone_skbs: Vec<(SkbId, Cpu)>,
}

impl Changed {
    /// Items of `cur` that `base` lacks or holds differently. With no `base`, nothing is
    /// marked (the first drawing of a scene, where everything would be).
    pub fn between(base: Option<&State>, cur: &State) -> Changed {
        let Some(base) = base else {
            return Changed::default();
        };
        // Skbs keep their order from state to state (queued at a tail, taken from a head),
        // so each is looked for from where the last was found, wrapping around: one pass in
        // the usual case, and no map of every skb (a map type of its own cost the download
        // 3 KB).
        let base_skbs: Vec<_> = base.queues.iter().flat_map(|q| &q.skbs).collect();
        let mut at = 0;
        let skbs = cur
            .queues
            .iter()
            .flat_map(|q| &q.skbs)
            .filter(|s| {
                let n = base_skbs.len();
                let found = (0..n)
                    .map(|k| (at + k) % n)
                    .find(|&i| base_skbs[i].id == s.id);
                at = found.map_or(at, |i| i + 1);
                found.map(|i| base_skbs[i]) != Some(*s)
            })
            .map(|s| s.id)
            .collect();
        let pages = cur
            .pages
            .iter()
            .filter(|p| {
                let i = base.page_slot(p.id);
                i.map(|i| &base.pages[i]).ok() != Some(*p)
            })
            .map(|p| p.id)
            .collect();
        let cursors = cur
            .cursors
            .iter()
            .filter(|c| !base.cursors.contains(c))
            .map(|c| c.name.clone())
            .collect();
        Changed {
            skbs,
            pages,
            cursors,
            ..Changed::default()
        }
    }

    /// The CPU that freed `id`, if it is in `gone` (a page's) or `gone_skbs` (an skb's).
    pub fn freed_on(list: &[(u32, Cpu)], id: u32) -> Option<Cpu> {
        list.iter().find(|g| g.0 == id).map(|g| g.1)
    }

    pub fn is_empty(&self) -> bool {
        self.skbs.is_empty() && self.pages.is_empty() && self.cursors.is_empty()
    }
}

/// `cur - prev` for a counter (`prev` absent counts as 0).
pub fn delta(prev: Option<&Counters>, cur: &Counters, name: &str) -> i128 {
    let p = prev.and_then(|c| c.get(name)).unwrap_or(0);
    i128::from(cur.get(name).unwrap_or(0)) - i128::from(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use skblab_core::page::Page;
    use skblab_core::skb::{Skb, SkbHead};
    use skblab_core::trace::{Cursor, Queue};

    fn state(skbs: &[(SkbId, u32)], pages: &[(PageId, u32)], cursor_off: u32) -> State {
        State {
            queues: vec![Queue {
                name: "write".into(),
                skbs: skbs
                    .iter()
                    .map(|&(id, len)| {
                        let mut s = Skb::new(id, 0, SkbHead::default(), 0);
                        s.len = len;
                        s
                    })
                    .collect(),
            }],
            pages: pages
                .iter()
                .map(|&(id, count)| Page {
                    id,
                    order: 0,
                    size: 4096,
                    count,
                    cpu: 0,
                    cpu_unread: false,
                    used: 0,
                })
                .collect(),
            cursors: vec![Cursor {
                name: "sk_page_frag".into(),
                page: Some(0),
                offset: cursor_off,
                size: 4096,
                bias: None,
            }],
            ..Default::default()
        }
    }

    #[test]
    fn marks_new_and_changed_items_only() {
        let a = state(&[(1, 10), (2, 20)], &[(0, 1), (1, 2)], 0);
        let b = state(&[(1, 10), (2, 25), (3, 0)], &[(0, 1), (1, 1)], 100);
        let c = Changed::between(Some(&a), &b);
        assert_eq!(c.skbs, [2, 3]);
        assert_eq!(c.pages, [1]);
        assert_eq!(c.cursors, ["sk_page_frag"]);
        assert!(Changed::between(Some(&b), &b).is_empty());
        assert!(Changed::between(None, &b).is_empty());
        // Found wherever they moved to: skb 1 now last, 2 changed, a new one first.
        let d = state(&[(4, 0), (2, 25), (1, 10)], &[(1, 2)], 0);
        let c = Changed::between(Some(&a), &d);
        assert_eq!(c.skbs, [4, 2]);
        assert!(c.pages.is_empty());
    }

    #[test]
    fn deltas() {
        let a = Counters::default().with("pages", 2);
        let b = Counters::default().with("pages", 1).with("skbs", 4);
        assert_eq!(delta(Some(&a), &b, "pages"), -1);
        assert_eq!(delta(Some(&a), &b, "skbs"), 4);
        assert_eq!(delta(None, &b, "pages"), 1);
    }
}
