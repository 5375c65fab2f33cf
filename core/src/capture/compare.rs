//! The model's prediction set beside the capture, write by write, in the kernel report's
//! words ([`Cell`], [`Verdict`]): for each write, the skbs the model built against the skbs
//! the kernel sent, field by field.

use super::predict::{payload, stream};
use super::{Capture, Prediction, Skb as Seen};
use crate::kernel_report::{Cell, Verdict};
use crate::send::Variant;
use crate::skb::Skb;
use crate::trace::{queue, Step, Trace};
use crate::{Error, RunOptions};
use std::collections::BTreeSet;
use std::ops::Range;

/// The prediction against the capture ([`Prediction::compare`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compared {
    /// The kernel's size goals (`tcp:tcp_sendmsg_locked`), each against the model's.
    pub totals: Vec<Cell>,
    /// One per write the model ran, in order.
    pub writes: Vec<WriteCompared>,
    /// Agree when every judged cell agrees.
    pub verdict: Verdict,
}

/// One write: the skbs holding its bytes on each side, the `i`th of one beside the `i`th
/// of the other.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteCompared {
    /// Its bytes' place in the stream: from the socket's first payload byte.
    pub bytes: Range<u64>,
    pub skbs: Vec<SkbCompared>,
}

/// One skb on both sides; a side with fewer skbs has `None` and no values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkbCompared {
    /// The capture's skb (its id in [`Capture::skbs`], as its lane draws it).
    pub captured: Option<u32>,
    /// The model's skb, as the model's lane draws it.
    pub model: Option<u32>,
    /// `len` and `linear` (payload bytes: the headers the capture read at the device left
    /// out, as the model's skb in tcp_sendmsg has none yet), `nr_frags`, then each frag's
    /// `size`, `offset` and its page's `order`.
    pub cells: Vec<Cell>,
}

impl SkbCompared {
    pub fn verdict(&self) -> Verdict {
        Verdict::from(
            self.cells
                .iter()
                .all(|c| c.verdict != Some(Verdict::Differ)),
        )
    }
}

impl Prediction {
    /// Each write's skbs in `model` (the model's run of [`Prediction::scenario`]) against
    /// those the capture `c` saw: the skbs whose bytes overlap the write's, by stream offset
    /// (the capture's from its first data skb's sequence number, the model's from 0).
    pub fn compare(&self, c: &Capture, model: &Trace) -> Compared {
        let stream = stream(&c.data_skbs(self.socket));
        let mut start = 0;
        let mut writes = Vec::new();
        let steps = (0..self.ops).map_while(|n| model.steps.get(self.write_step(n)));
        for (&w, step) in self.writes.iter().zip(steps) {
            let bytes = start..start + w;
            start += w;
            let kernel: Vec<&(u64, &Seen)> = (stream.iter())
                .filter(|&&(o, s)| overlaps(&bytes, o, payload(s)))
                .collect();
            let ours = model_skbs(step, &bytes);
            let skbs = (0..kernel.len().max(ours.len()))
                .map(|i| skb_cells(c, kernel.get(i).map(|k| k.1), ours.get(i).copied(), step))
                .collect();
            writes.push(WriteCompared { bytes, skbs });
        }
        let totals = self.goal_cells(c);
        let cells = writes.iter().flat_map(|w| &w.skbs).flat_map(|s| &s.cells);
        let verdict = Verdict::from(
            cells
                .chain(&totals)
                .all(|c| c.verdict != Some(Verdict::Differ)),
        );
        Compared {
            totals,
            writes,
            verdict,
        }
    }

    /// The kernel's size goals on the socket, each against the model's.
    fn goal_cells(&self, c: &Capture) -> Vec<Cell> {
        let goal = match &self.scenario {
            crate::Scenario::Sendmsg(sc) => (sc.variant.as_deref())
                .and_then(|v| v.parse().ok())
                .and_then(|v| sc.config(v).ok())
                .map(|cfg| u64::from(cfg.size_goal())),
            _ => None,
        };
        (c.sockets[self.socket as usize].size_goals.iter())
            .map(|&k| cell("size_goal", Some(k), goal))
            .collect()
    }
}

impl Prediction {
    /// The prediction run (today's `tcp_sendmsg_locked`) and set against the capture `c`,
    /// in one line for a host to print: what it was built from, then [`Compared::summary`].
    pub fn told(&self, c: &Capture) -> Result<String, Error> {
        let model = self.scenario.run(&RunOptions::traced(None))?;
        let facts: Vec<String> = (self.facts.iter())
            .map(|f| format!("{} {} [{}]", f.field, f.value, f.source.mark()))
            .collect();
        Ok(format!(
            "socket {}'s first {} of {} writes, run in the model's tcp_sendmsg_locked \
             ({}) with {}: {} [inferred: the model's run, not the kernel's]",
            self.socket,
            self.ops,
            self.writes.len(),
            Variant::TODAY.era().name(),
            facts.join(", "),
            self.compare(c, &model).summary(),
        ))
    }
}

impl Compared {
    /// How many of the kernel's skbs hold bytes of more than one write.
    pub fn spanning(&self) -> usize {
        let (mut seen, mut twice) = (BTreeSet::new(), BTreeSet::new());
        for w in &self.writes {
            let mine: BTreeSet<u32> = w.skbs.iter().filter_map(|s| s.captured).collect();
            twice.extend(mine.into_iter().filter(|&id| !seen.insert(id)));
        }
        twice.len()
    }

    /// The comparison in one sentence, for a host to print: how many of the kernel's skbs
    /// the model built alike (each skb once, though its bytes span writes), and each size
    /// goal of the kernel's the model does not reach, with what the capture cannot see
    /// behind it.
    pub fn summary(&self) -> String {
        let mut pairs: Vec<(Option<u32>, Option<u32>, Verdict)> = (self.writes.iter())
            .flat_map(|w| &w.skbs)
            .map(|s| (s.captured, s.model, s.verdict()))
            .collect();
        pairs.sort_by_key(|p| (p.0, p.1));
        pairs.dedup_by_key(|p| (p.0, p.1));
        let agree = pairs.iter().filter(|p| p.2 == Verdict::Agree).count();
        let kernel = pairs.iter().filter_map(|p| p.0).collect::<BTreeSet<_>>();
        let model = pairs.iter().filter_map(|p| p.1).collect::<BTreeSet<_>>();
        let mut o = format!(
            "{agree} of {} skbs alike (len, linear, frags, their pages' order): the kernel \
             sent {}, the model built {}",
            pairs.len(),
            kernel.len(),
            model.len()
        );
        let spanning = self.spanning();
        if spanning > 0 {
            o += &format!(
                "; {spanning} of the kernel's skbs hold bytes of more than one write: it kept \
                 them unsent while the next write came (the peer's window, cwnd or autocork, \
                 not traced), where the model sends each write's skbs at its end"
            );
        }
        let differ: Vec<String> = (self.totals.iter())
            .filter(|c| c.verdict == Some(Verdict::Differ))
            .filter_map(|c| Some(format!("{} (the model's {})", c.kernel?, c.model?)))
            .collect();
        if !differ.is_empty() {
            o += &format!(
                "; size goals the model does not reach: {}, a peer window that moved \
                 (tcp_bound_to_half_wnd) or a new MSS, which the capture does not see",
                differ.join(", ")
            );
        }
        o
    }
}

fn overlaps(bytes: &Range<u64>, start: u64, len: u64) -> bool {
    start < bytes.end && bytes.start < start + len
}

/// The model's write-queue skbs after `step` holding bytes of `bytes`, in stream order.
fn model_skbs<'a>(step: &'a Step, bytes: &Range<u64>) -> Vec<&'a Skb> {
    (step.state.queues.iter())
        .filter(|q| q.name == queue::WRITE_QUEUE)
        .flat_map(|q| &q.skbs)
        .filter(|s| overlaps(bytes, s.seq.into(), s.len.into()))
        .collect()
}

/// One skb's fields on both sides, judged.
fn skb_cells(c: &Capture, k: Option<&Seen>, m: Option<&Skb>, step: &Step) -> SkbCompared {
    let x = k.and_then(|k| k.xmit.as_ref());
    let order = |page| {
        step.state
            .pages
            .iter()
            .find(|p| p.id == page)
            .map(|p| p.order)
    };
    let mut cells = vec![
        cell("len", k.map(payload), m.map(|m| m.len.into())),
        cell(
            "linear",
            x.map(|x| x.linear.saturating_sub(x.headers)),
            m.map(|m| m.linear_len.into()),
        ),
        cell(
            "nr_frags",
            x.map(|x| x.frags.len() as u64 + x.frags_not_read),
            m.map(|m| m.nr_frags() as u64),
        ),
    ];
    let frags = |i| {
        (
            x.and_then(|x| x.frags.get(i)),
            m.and_then(|m| m.frags.get(i)),
        )
    };
    let count = x
        .map_or(0, |x| x.frags.len())
        .max(m.map_or(0, |m| m.frags.len()));
    for i in 0..count {
        let (kf, mf) = frags(i);
        let kernel_order = kf
            .and_then(|f| c.pages.get(f.page as usize))
            .map(|p| p.order);
        cells.extend([
            cell(
                &format!("frag[{i}].size"),
                kf.map(|f| f.size),
                mf.map(|f| f.size.into()),
            ),
            cell(
                &format!("frag[{i}].offset"),
                kf.map(|f| f.offset),
                mf.map(|f| f.offset.into()),
            ),
            cell(
                &format!("frag[{i}].order"),
                kernel_order.map(u64::from),
                mf.and_then(|f| order(f.page)).map(u64::from),
            ),
        ]);
    }
    SkbCompared {
        captured: k.map(|k| k.id),
        model: m.map(|m| m.id),
        cells,
    }
}

fn cell(field: &str, kernel: Option<u64>, model: Option<u64>) -> Cell {
    Cell {
        field: field.to_string(),
        kernel,
        model,
        verdict: Some(Verdict::from(kernel == model)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::predict::tests::fixture;
    use crate::RunOptions;

    /// The fixture's prediction run, and set beside the capture.
    fn compared(c: &Capture) -> Compared {
        let p = c.prediction().unwrap();
        p.compare(c, &p.scenario.run(&RunOptions::default()).unwrap())
    }

    /// (len, linear, nr_frags, then each frag's size, offset, order) of one side.
    fn side(s: &SkbCompared, kernel: bool) -> Vec<Option<u64>> {
        (s.cells.iter())
            .map(|c| if kernel { c.kernel } else { c.model })
            .collect()
    }

    /// `skbpeer tcp 7000 14480 3` on Linux 6.18: three writes of 14480 bytes on tcp socket 1,
    /// MSS 32741 (its first size goal), each write's skb pushed before the next write.
    /// By hand, v6.12's tcp_sendmsg_locked: each write finds no unsent tail (the last went
    /// to the device), so it allocates an skb with no linear payload (tcp_stream_alloc_skb
    /// with 0 bytes of linear room, MSG_ZEROCOPY off) and copies into the task's page frag
    /// (sk_page_frag: a user socket's is current->task_frag), an order-3 page of 32768 bytes
    /// (SKB_FRAG_PAGE_ORDER). Write 1: 14480 at offset 0; write 2: 14480 at 14480 (the page
    /// is the frag's and two skbs'); write 3: 32768 - 28960 = 3808 left, so 3808 at 28960,
    /// then skb_page_frag_refill finds the page still held by the skbs (count above 1), puts
    /// it and takes a new order-3 page: 10672 at 0 as a second frag. The capture's skbs 3, 5
    /// and 7 read exactly that at net_dev_start_xmit, so every skb agrees. The size goals:
    /// the kernel's first, 32741, is the model's (an MSS of 32741 under the 65,535-byte GSO
    /// limit gives one segment's goal); its second, 54784, half of a larger peer window
    /// (tcp_bound_to_half_wnd), is not: the capture does not see the window.
    #[test]
    fn the_fixtures_skbs_agree_and_its_second_size_goal_differs() {
        let c = fixture();
        let got = compared(&c);
        let want: [(u32, &[u64]); 3] = [
            (3, &[14480, 0, 1, 14480, 0, 3]),
            (5, &[14480, 0, 1, 14480, 14480, 3]),
            (7, &[14480, 0, 2, 3808, 28960, 3, 10672, 0, 3]),
        ];
        assert_eq!(got.writes.len(), 3);
        for (i, (w, (id, values))) in got.writes.iter().zip(want).enumerate() {
            let n = 14480 * i as u64;
            assert_eq!(w.bytes, n..n + 14480);
            assert_eq!(w.skbs.len(), 1, "write {i}");
            let s = &w.skbs[0];
            assert_eq!(s.captured, Some(id));
            let values: Vec<_> = values.iter().map(|&v| Some(v)).collect();
            assert_eq!((side(s, true), side(s, false)), (values.clone(), values));
            assert_eq!(s.verdict(), Verdict::Agree);
        }
        let goals: Vec<_> = got
            .totals
            .iter()
            .map(|c| (c.kernel, c.model, c.verdict))
            .collect();
        assert_eq!(
            goals,
            [
                (Some(32741), Some(32741), Some(Verdict::Agree)),
                (Some(54784), Some(32741), Some(Verdict::Differ)),
            ]
        );
        assert_eq!(got.verdict, Verdict::Differ);
        assert_eq!(
            got.summary(),
            "3 of 3 skbs alike (len, linear, frags, their pages' order): the kernel sent 3, \
             the model built 3; size goals the model does not reach: 54784 (the model's \
             32741), a peer window that moved (tcp_bound_to_half_wnd) or a new MSS, which the \
             capture does not see"
        );
    }

    /// The line a host prints: the writes, the release, the facts with their sources, then
    /// the summary.
    #[test]
    fn the_prediction_is_told_with_its_facts_and_its_summary() {
        let c = fixture();
        let p = c.prediction().unwrap();
        let line = p.told(&c).unwrap();
        assert!(
            line.starts_with(
                "socket 1's first 3 of 3 writes, run in the model's tcp_sendmsg_locked \
                 (v6.12) with mss 32741 [seen at tcp:tcp_sendmsg_locked"
            ),
            "{line}"
        );
        assert!(
            line.contains("tcp_header_len 32 [seen at net:net_dev_start_xmit"),
            "{line}"
        );
        let summary = compared(&c).summary();
        assert!(
            line.ends_with(&format!(
                "{summary} [inferred: the model's run, not the kernel's]"
            )),
            "{line}"
        );
    }

    /// Had the kernel kept write 1's skb unsent and put write 2's bytes in it too (skb 3
    /// of 28960 bytes, skb 5 never sent), that skb holds bytes of two writes, and the
    /// summary says why the model's (one skb a write) differ.
    #[test]
    fn an_skb_holding_two_writes_is_told() {
        let mut c = fixture();
        let second = c.skbs[5].xmit.clone().unwrap().frags;
        c.skbs[5].tx_socket = None;
        let x = c.skbs[3].xmit.as_mut().unwrap();
        x.len += 14480;
        x.frags.extend(second);
        let got = compared(&c);
        assert_eq!(got.spanning(), 1);
        assert!(
            got.summary().contains(
                "; 1 of the kernel's skbs hold bytes of more than one write: it kept them \
                 unsent while the next write came"
            ),
            "{}",
            got.summary()
        );
        assert_eq!(compared(&fixture()).spanning(), 0);
    }

    /// A forced difference: had the kernel put write 3 in one frag on a new page, the model's
    /// two frags differ from it, cell by cell; a missing skb differs in every field.
    #[test]
    fn a_forced_difference_is_outlined() {
        let mut c = fixture();
        let x = c.skbs[7].xmit.as_mut().unwrap();
        x.frags = vec![super::super::Frag {
            page: 1,
            offset: 0,
            size: 14480,
            count: 2,
        }];
        let got = compared(&c);
        let s = &got.writes[2].skbs[0];
        let differ: Vec<&str> = (s.cells.iter())
            .filter(|c| c.verdict == Some(Verdict::Differ))
            .map(|c| c.field.as_str())
            .collect();
        assert_eq!(
            differ,
            [
                "nr_frags",
                "frag[0].size",
                "frag[0].offset",
                "frag[1].size",
                "frag[1].offset",
                "frag[1].order"
            ]
        );
        assert_eq!(s.verdict(), Verdict::Differ);
        assert!(
            got.summary().starts_with("2 of 3 skbs alike"),
            "{}",
            got.summary()
        );
        c.skbs[5].tx_socket = None;
        let got = compared(&c);
        // Skb 5 unseen: write 2's bytes are in no skb of the kernel's, and write 3's skb 7
        // (still one frag) differs: one of three pairs alike, two skbs sent against three.
        assert!(
            got.summary().starts_with(
                "1 of 3 skbs alike (len, linear, frags, their pages' order): the kernel \
                 sent 2, the model built 3"
            ),
            "{}",
            got.summary()
        );
        let s = &got.writes[1].skbs[0];
        assert_eq!((s.captured, s.model.is_some()), (None, true));
        assert!(s.cells.iter().all(|c| c.verdict == Some(Verdict::Differ)));
    }
}
