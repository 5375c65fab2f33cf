//! What a host sets beside the kernel's receive side, computed here so that no host folds
//! events or cuts packets itself: the skbs a step delivered to the socket, the bytes it
//! copied, each consumed skb's allocating and freeing CPU ([`delivered`], [`copied`],
//! [`consumed`], read from a finished trace), and the model fed with packets a host really
//! received ([`RxScenario::receive`]); and where a kernel of today's frag cache puts a
//! driver's fragments ([`napi_frag_stride`], [`napi_frags_per_page`]).

use super::driver::napi_fragsz;
use super::frag_cache::PAGE_FRAG_CACHE_MAX_SIZE;
use super::machine::RxMachine;
use super::scenario::{RxParams, RxScenario};
use super::variant::Variant;
use crate::consts::Era;
use crate::events::{Cpu, Event, Events, SkbId};
use crate::skb::gso_segments;
use crate::trace::{queue, Counters, Machine, Step, Trace};
use crate::Error;
use std::collections::BTreeMap;

/// Where fragments of `payload` bytes from a NIC driver's frag cache start one after another
/// on a kernel of today (v6.12 on, the oracle's): [`napi_fragsz`] apart.
pub fn napi_frag_stride(payload: u32) -> u32 {
    napi_fragsz(&Era::V6_12.consts(), payload)
}

/// How many fragments of `payload` bytes fill one frag cache page on a kernel of today:
/// PAGE_FRAG_CACHE_MAX_SIZE (32 KiB) over [`napi_frag_stride`].
pub fn napi_frags_per_page(payload: u32) -> u32 {
    PAGE_FRAG_CACHE_MAX_SIZE / napi_frag_stride(payload)
}

/// The payload of every skb `step` delivered to the socket (`tcp_queue_rcv`), in order.
/// Each is read off the receive queue at the step's end, so none may be read within the
/// step: the scenario's app must not be `prompt`.
pub fn delivered(step: &Step) -> Result<Vec<u32>, Error> {
    let rcv = step
        .state
        .queues
        .iter()
        .find(|q| q.name == queue::SK_RECEIVE_QUEUE);
    step.events
        .iter()
        .filter_map(|e| match e {
            Event::QueueRcv { skb, .. } => Some(*skb),
            _ => None,
        })
        .map(|id| {
            rcv.and_then(|q| q.skbs.iter().find(|s| s.id == id))
                .map(|s| s.end_seq.wrapping_sub(s.seq))
                .ok_or_else(|| {
                    Error::invalid(
                        "app.prompt",
                        format!("skb {id} was read in the step that delivered it: set false"),
                    )
                })
        })
        .collect()
}

/// The bytes `step` copied to the reader (`skb_copy_datagram_iter`).
pub fn copied(step: &Step) -> u64 {
    step.events
        .iter()
        .map(|e| match e {
            Event::CopyToUser { bytes, .. } => u64::from(*bytes),
            _ => 0,
        })
        .sum()
}

/// One skb recvmsg consumed ([`consumed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Consumed {
    pub skb: SkbId,
    /// The bytes copied from it.
    pub len: u64,
    /// Its frags when recvmsg began it (`skb_shinfo(skb)->nr_frags`), if it waited on the
    /// receive queue before that step.
    pub nr_frags: Option<u64>,
    /// Which copying recvmsg began it: 0 for the first step that copied anything.
    pub recvmsg: u64,
    /// The skbs `tcp_try_coalesce` merged into it on the receive queue.
    pub merged: u64,
    /// `skb->alloc_cpu`.
    pub alloc_cpu: Option<Cpu>,
    /// The CPU that freed it, or whose defer list holds it at the end
    /// (`skb_attempt_defer_free`).
    pub free_cpu: Option<Cpu>,
}

/// The skbs recvmsg consumed over the whole trace, in the order it began them.
pub fn consumed(t: &Trace) -> Vec<Consumed> {
    let mut order: Vec<Consumed> = Vec::new();
    let (mut at, mut alloc, mut free) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
    let (mut reads, mut before) = (0, None::<&Step>);
    for step in &t.steps {
        let mut copied = false;
        for e in &step.events {
            match *e {
                Event::AllocSkb { skb, cpu, .. } => {
                    alloc.insert(skb, cpu);
                }
                Event::CopyToUser { skb, bytes, .. } => {
                    copied = true;
                    let i = *at.entry(skb).or_insert_with(|| {
                        order.push(Consumed {
                            skb,
                            len: 0,
                            nr_frags: before.and_then(|s| queued_frags(s, skb)),
                            recvmsg: reads,
                            merged: 0,
                            alloc_cpu: None,
                            free_cpu: None,
                        });
                        order.len() - 1
                    });
                    order[i].len += u64::from(bytes);
                }
                Event::DeferFree { skb, to_cpu, .. } => {
                    free.insert(skb, to_cpu);
                }
                Event::FreeSkb { skb, cpu, .. } => {
                    free.insert(skb, cpu);
                }
                _ => {}
            }
        }
        reads += u64::from(copied);
        before = Some(step);
    }
    let merges = (t.steps.iter().flat_map(|s| &s.events)).filter_map(|e| match *e {
        Event::RcvCoalesce { into, .. } => Some(into),
        _ => None,
    });
    let mut merged = BTreeMap::new();
    for into in merges {
        *merged.entry(into).or_insert(0) += 1;
    }
    for c in &mut order {
        c.merged = merged.get(&c.skb).copied().unwrap_or(0);
        c.alloc_cpu = alloc.get(&c.skb).copied();
        c.free_cpu = free.get(&c.skb).copied();
    }
    order
}

/// The frags of `skb` on the receive queue at the end of `step`.
fn queued_frags(step: &Step, skb: SkbId) -> Option<u64> {
    let q = (step.state.queues.iter()).find(|q| q.name == queue::SK_RECEIVE_QUEUE)?;
    let s = q.skbs.iter().find(|s| s.id == skb)?;
    Some(s.nr_frags() as u64)
}

/// A packet a host received: `len` payload bytes, a GSO super-packet of `gso_size`-byte
/// segments (0: one plain frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    pub len: u32,
    pub gso_size: u32,
}

/// The wire frames (lengths, headers included) a packet stands for: a super-packet as the
/// segments it would have been on a real wire, a plain frame whole; none over the MSS.
fn wire_frames(p: &RxParams, a: Packet) -> impl Iterator<Item = u32> {
    let seg = if a.gso_size > 0 { a.gso_size } else { a.len };
    let headers = p.socket.proto.headers();
    gso_segments(a.len, seg.clamp(1, p.socket.mss)).map(move |n| n + headers)
}

impl RxScenario {
    /// The model fed with packets a host received (the TAP runner), one NAPI interrupt per
    /// batch it got at once, under the scenario's settings (its ops are not run): the
    /// variant, and the counters.
    pub fn receive(
        &self,
        over: Option<&str>,
        batches: &[Vec<Packet>],
    ) -> Result<(Variant, Counters), Error> {
        let p = self.params(over)?;
        let mut m = RxMachine::new(p);
        let mut ev = Events::off();
        for batch in batches {
            let lens: Vec<u32> = batch.iter().flat_map(|&a| wire_frames(&p, a)).collect();
            if !lens.is_empty() {
                m.arrive(&lens, &mut ev)?;
            }
        }
        Ok((p.variant, m.counters()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::{Mechanism, RunOptions};
    use crate::Scenario;

    fn scenario(text: &str) -> RxScenario {
        match Scenario::parse(text).unwrap() {
            Scenario::Rx(s) => s,
            _ => panic!("not an rx scenario"),
        }
    }

    #[test]
    fn super_packets_stand_for_their_wire_frames() {
        let p = RxScenario::default().params(None).unwrap();
        let frames = |len, gso_size| wire_frames(&p, Packet { len, gso_size }).collect::<Vec<_>>();
        assert_eq!(frames(3000, 1448), [1514, 1514, 170]);
        assert_eq!(frames(1000, 0), [1066]);
        // A segment never exceeds the MSS the model's buffers are sized for.
        assert_eq!(frames(3000, 9000), [1514, 1514, 170]);
    }

    #[test]
    fn the_receive_model_counts_the_real_frames() {
        let batches = vec![
            vec![Packet {
                len: 65_160,
                gso_size: 1448,
            }],
            vec![Packet {
                len: 1448,
                gso_size: 0,
            }],
        ];
        let sc = RxScenario::default();
        let (v, c) = sc
            .receive(Some("duyck-2012+dumazet-2019"), &batches)
            .unwrap();
        assert_eq!(v.name(), "duyck-2012+dumazet-2019");
        assert_eq!(c.get("frames_arrived"), Some(46));
        assert!(sc.receive(Some("nope"), &[]).is_err());
    }

    #[test]
    fn delivered_copied_and_consumed_follow_each_skb() {
        let sc = scenario(
            "mechanism = \"rx\"\n[[ops]]\nop = \"arrive\"\nframes = 45\n\
             [[ops]]\nop = \"recvmsg\"\n[[ops]]\nop = \"arrive\"\nframes = 10\n\
             [[ops]]\nop = \"recvmsg\"\n",
        );
        let run = |v: &str| sc.run(&RunOptions::traced(Some(v))).unwrap();
        let t = run("modern+defer-free");
        assert_eq!(delivered(&t.steps[0]).unwrap(), [65_160]);
        assert_eq!(delivered(&t.steps[2]).unwrap(), [14_480]);
        assert!(delivered(&t.steps[1]).unwrap().is_empty());
        assert_eq!(copied(&t.steps[1]), 65_160);
        assert_eq!(copied(&t.steps[0]), 0);
        let got: Vec<_> = consumed(&t)
            .iter()
            .map(|c| (c.len, c.alloc_cpu, c.free_cpu))
            .collect();
        // The first is freed by the second arrive's poll; the second waits on CPU 0's list.
        assert_eq!(
            got,
            [(65_160, Some(0), Some(0)), (14_480, Some(0), Some(0))]
        );
        let none = consumed(&run("modern+none"));
        assert!(none.iter().all(|c| c.free_cpu == Some(1)));
    }

    #[test]
    fn a_prompt_reader_makes_delivered_an_error_naming_the_field() {
        let sc = scenario(
            "mechanism = \"rx\"\n[app]\nprompt = true\n[[ops]]\nop = \"arrive\"\nframes = 2\n",
        );
        let t = sc.run(&RunOptions::default()).unwrap();
        let e = delivered(&t.steps[0]).unwrap_err().to_string();
        assert!(e.contains("app.prompt"), "{e}");
    }

    /// A kernel of today's frag cache hands out SKB_DATA_ALIGN'ed fragments: 1,448 bytes
    /// take 1,472, 22 to a 32 KiB page; one byte takes a cache line, 512 to a page.
    #[test]
    fn napi_frags_are_cache_line_aligned_on_a_32k_page() {
        assert_eq!(
            (napi_frag_stride(1448), napi_frags_per_page(1448)),
            (1472, 22)
        );
        assert_eq!((napi_frag_stride(1), napi_frags_per_page(1)), (64, 512));
    }
}
