//! The model's side of a report, read from the model's trace of the report's scenario in its
//! variant: what the runner sets beside the kernel, and what a reader checks a report's
//! model side against.

use super::{compare, shown, FragCache, Report, Side, SkbView, Verdict};
use crate::rx::{DriverStyle, Proto};
use crate::skb::Skb;
use crate::trace::{queue, Step};
use crate::{Error, Scenario, Trace};

impl Side {
    /// The model's side after the scenario's first `driven` ops, from `t`, its traced run in the
    /// report's variant: sendmsg's size goal and write queue; MPTCP's subflow 0 mappings (each
    /// relative to the first); rx's consumed skbs (their length, `alloc_cpu` and freeing CPU);
    /// seed 001's frag cache pages ([`FragCache::of`]), and through that driver over TCP the skbs
    /// each recvmsg read.
    pub fn of_model(s: &Scenario, t: &Trace, driven: usize) -> Result<Side, Error> {
        let step = driven.checked_sub(1).and_then(|i| t.steps.get(i));
        Ok(match s {
            Scenario::Sendmsg(sc) => Side {
                size_goals: vec![sc.config(t.variant.parse()?)?.size_goal().into()],
                skbs: (skbs(step, queue::WRITE_QUEUE).into_iter())
                    .map(|s| SkbView {
                        len: s.len as u64,
                        linear: Some(s.linear_len as u64),
                        nr_frags: Some(s.nr_frags() as u64),
                        truesize: Some(s.head.truesize as u64),
                        ..SkbView::default()
                    })
                    .collect(),
                frag_cache: None,
            },
            Scenario::Mptcp(_) => {
                let maps: Vec<_> = (skbs(step, &queue::subflow(0)).into_iter())
                    .filter_map(|s| s.mapping)
                    .collect();
                let first = maps.first().copied();
                let skbs = (first.into_iter())
                    .flat_map(|first| maps.iter().map(move |m| (first, m)))
                    .map(|(first, m)| SkbView {
                        len: m.data_len.into(),
                        data_seq: Some(m.data_seq - first.data_seq),
                        subflow_seq: Some(m.subflow_seq.wrapping_sub(first.subflow_seq).into()),
                        data_len: Some(m.data_len.into()),
                        ..SkbView::default()
                    })
                    .collect();
                Side {
                    skbs,
                    ..Side::default()
                }
            }
            Scenario::Rx(sc) if sc.nic.driver == DriverStyle::NapiFrags => Side {
                frag_cache: Some(FragCache::of(t)),
                skbs: match sc.socket.proto {
                    Proto::Udp => Vec::new(),
                    Proto::Tcp => napi_tcp_skbs(t),
                },
                ..Side::default()
            },
            Scenario::Rx(_) => Side {
                skbs: (crate::rx::consumed(t).iter())
                    .map(|c| SkbView {
                        len: c.len,
                        alloc_cpu: c.alloc_cpu.map(u64::from),
                        free_cpu: c.free_cpu.map(u64::from),
                        ..SkbView::default()
                    })
                    .collect(),
                ..Side::default()
            },
        })
    }
}

impl Report {
    /// Refuses a model side that is not the model's: `t` is the model's traced run of the
    /// report's scenario in the report's variant ([`Side::of_model`]). The error names the
    /// first field apart.
    pub fn check_model(&self, t: &Trace) -> Result<(), Error> {
        if t.variant != self.variant {
            return Err(Error::invalid(
                "report.variant",
                format!(
                    "`{}`, checked against a run of `{}`",
                    self.variant, t.variant
                ),
            ));
        }
        let want = Side::of_model(&Scenario::parse(&self.scenario)?, t, self.driven)?;
        if want == self.model {
            return Ok(());
        }
        let apart = compare(&want, &self.model)
            .into_iter()
            .find(|r| r.verdict == Verdict::Differ);
        Err(Error::invalid(
            "report.model",
            match apart {
                Some(r) => format!(
                    "`{}` is {}, but the model's `{}` gives {}",
                    r.field,
                    shown(r.kernel),
                    self.variant,
                    shown(r.model)
                ),
                None => format!(
                    "a value shown beside the kernel's (truesize) is not the model's `{}`",
                    self.variant
                ),
            },
        ))
    }
}

/// TCP through tun's NAPI frags path: each skb recvmsg read, which read began it, its length,
/// frags, the skbs merged into it at arrival, and its CPUs.
fn napi_tcp_skbs(t: &Trace) -> Vec<SkbView> {
    (crate::rx::consumed(t).iter())
        .map(|c| SkbView {
            len: c.len,
            nr_frags: c.nr_frags,
            recvmsg: Some(c.recvmsg),
            merged: Some(c.merged),
            alloc_cpu: c.alloc_cpu.map(u64::from),
            free_cpu: c.free_cpu.map(u64::from),
            ..SkbView::default()
        })
        .collect()
}

/// The skbs of queue `name` after `step` (none before the first step).
fn skbs<'a>(step: Option<&'a Step>, name: &str) -> Vec<&'a Skb> {
    (step.into_iter())
        .flat_map(|s| &s.state.queues)
        .filter(|q| q.name == name)
        .flat_map(|q| &q.skbs)
        .collect()
}
