//! Seed 003: MPTCP max-size skbs (Paolo Abeni, November 2020, commit 15e6ca974b14, v5.11).
//!
//! MPTCP copies user data into dfrags on the socket's page frag ([`dfrag`]), then pushes them
//! onto TCP subflows ([`push`]) with mptcp_sendmsg_frag ([`sendmsg_frag`]), which collapses
//! onto a subflow's tail skb through tcp_build_frag ([`subflow`]). Before the seed, the room
//! left in the tail was passed as tcp_build_frag's goal and tcp_build_frag subtracted the
//! tail's length again, so skbs stopped near half the size goal.
//!
//! This module holds the scenario format for `mechanism = "mptcp"` and the machine. The code
//! the seed patched is net-next of November 2020 (tcp_build_frag, mptcp_push_pending), which
//! became v5.11; its constants are those of [`Era::V5_10`].
//!
//! A subflow's new skb: in that tree MPTCP allocates it ahead of time,
//! `__mptcp_do_alloc_tx_skb` (`alloc_skb_fclone(MAX_TCP_HEADER)`, MAX_TCP_HEADER reserved,
//! the rest of the head `reserved_tailroom`), and parks it in `ssk->sk_tx_skb_cache`
//! (`__mptcp_alloc_tx_skb`), where tcp_build_frag's `sk_stream_alloc_skb(ssk, 0, ...)` takes
//! it; the head is the one `sk_stream_alloc_skb` would build ([`subflow`]).

pub mod counters;
pub mod dfrag;
pub mod push;
pub mod sendmsg_frag;
pub mod subflow;
pub mod tx;
pub mod variant;

use crate::consts::{ConstOverrides, Era};
use crate::events::Events;
use crate::limits::{check_range, ByteBudget, MAX_LIVE_SKBS, MAX_OPS};
use crate::mechanism::{is_one, one, pick_variant, variant_and_ops, Mechanism, RunOptions};
use crate::page::PagePool;
use crate::trace::{drive, queue, Counters, Machine, Queue, State, Trace};
use crate::Error;
use counters::MptcpCounters;
use dfrag::SendBuf;
use push::{PushCfg, Sched, Scheduler, MPTCP_SEND_BURST_SIZE};
use serde::{Deserialize, Serialize};
use subflow::Subflow;
pub use subflow::SubflowParams;
pub use tx::{Stats, Tx};
pub use variant::Fix;

/// `pre-2020` (the room left passed as the goal; PSH kept), `abeni-2020` (size_bias added
/// back; PSH cleared when collapsing).
pub const VARIANTS: &[&str] = Fix::NAMES;

/// At most this many subflows.
pub const MAX_SUBFLOWS: usize = 8;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MptcpScenario {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    #[serde(default, skip_serializing_if = "ConstOverrides::is_empty")]
    pub consts: ConstOverrides,
    /// The subflows (default: one over loopback).
    #[serde(default = "default_subflows")]
    pub subflows: Vec<SubflowParams>,
    #[serde(default)]
    pub scheduler: Scheduler,
    /// Bytes a subflow keeps before the round-robin scheduler moves on (msk->snd_burst).
    #[serde(default = "default_burst")]
    pub burst: u32,
    /// Subflows send as soon as they are pushed (`true`), or hold their queues until an
    /// explicit `transmit`.
    #[serde(default)]
    pub drain: bool,
    /// net.core.high_order_alloc_disable: the page frag falls back to 4 KiB pages.
    #[serde(default)]
    pub high_order_alloc_disable: bool,
    pub ops: Vec<MptcpOp>,
}

fn default_subflows() -> Vec<SubflowParams> {
    vec![SubflowParams::default()]
}

fn default_burst() -> u32 {
    MPTCP_SEND_BURST_SIZE
}

/// One operation of an MPTCP scenario.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum MptcpOp {
    /// `count` sendmsg calls of `bytes` each (each call copies, then pushes).
    Sendmsg {
        bytes: u64,
        #[serde(default = "one", skip_serializing_if = "is_one")]
        count: u64,
    },
    /// Every subflow (or just `subflow`) hands its unsent skbs to the device.
    Transmit {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        subflow: Option<u32>,
    },
    /// The peer acknowledges everything sent, at subflow and data level.
    Ack,
    /// close(): free every skb and dfrag. The page frag is the task's and survives.
    Close,
}

impl MptcpOp {
    /// The op's name, as a scenario writes it (`op = "transmit"`).
    pub fn name(&self) -> &'static str {
        match self {
            MptcpOp::Sendmsg { .. } => "sendmsg",
            MptcpOp::Transmit { .. } => "transmit",
            MptcpOp::Ack => "ack",
            MptcpOp::Close => "close",
        }
    }
}

impl Mechanism for MptcpScenario {
    const NAME: &'static str = "mptcp";
    const VARIANTS: &'static [&'static str] = VARIANTS;
    /// The fix has been in every kernel since 5.11.
    const TODAY: &'static str = Fix::Abeni2020.name();

    variant_and_ops!();

    fn run(&self, opts: &RunOptions) -> Result<Trace, Error> {
        let fix: Fix = pick_variant(opts.variant.as_deref(), self.variant.as_deref())?;
        let era = Era::V5_10;
        let k = self.consts.apply(era.consts())?;
        self.validate()?;
        let tx = Tx {
            k,
            pool: PagePool::default(),
            next_skb: 0,
            stats: Stats::default(),
        };
        let subflows = (0..)
            .zip(&self.subflows)
            .map(|(i, p)| Subflow::new(i, p, era, &k))
            .collect();
        let mut m = Msk {
            cfg: PushCfg {
                fix,
                scheduler: self.scheduler,
                burst: self.burst,
                drain: self.drain,
            },
            high_order: !self.high_order_alloc_disable,
            buf: SendBuf::default(),
            subflows,
            sched: Sched::default(),
            tx,
            closed: false,
        };
        let (steps, counters) = drive(&mut m, &self.ops, !opts.counters_only)?;
        Ok(Trace {
            mechanism: Self::NAME.into(),
            variant: fix.name().into(),
            era,
            udp: false,
            napi_frags: false,
            consts: k,
            steps,
            counters,
        })
    }
}

impl MptcpScenario {
    /// Checks every size against its cap, naming the field.
    fn validate(&self) -> Result<(), Error> {
        check_range(
            "subflows",
            self.subflows.len() as u64,
            1,
            MAX_SUBFLOWS as u64,
        )?;
        for (i, p) in self.subflows.iter().enumerate() {
            let f = |name: &str| format!("subflows[{i}].{name}");
            check_range(&f("mtu"), p.mtu as u64, 576, 65536)?;
            if let Some(mss) = p.mss {
                check_range(&f("mss"), mss as u64, 64, 65535)?;
            }
            if let Some(g) = p.gso_max_size {
                check_range(&f("gso_max_size"), g as u64, 1024, 524_280)?;
            }
            check_range(&f("max_window"), p.max_window as u64, 0, 1 << 30)?;
        }
        check_range("burst", self.burst as u64, 1, 1 << 24)?;
        check_range("ops", self.ops.len() as u64, 0, MAX_OPS as u64)?;
        let mut budget = ByteBudget::default();
        for (i, op) in self.ops.iter().enumerate() {
            match *op {
                MptcpOp::Sendmsg { bytes, count } => {
                    let field = |name| move || format!("ops[{i}].{name}");
                    budget.writes((field("bytes"), bytes), (field("count"), count))?;
                }
                MptcpOp::Transmit { subflow: Some(s) } => {
                    check_range(
                        || format!("ops[{i}].subflow"),
                        s as u64,
                        0,
                        self.subflows.len() as u64 - 1,
                    )?;
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// The MPTCP socket and its subflows.
struct Msk {
    cfg: PushCfg,
    high_order: bool,
    buf: SendBuf,
    subflows: Vec<Subflow>,
    sched: Sched,
    tx: Tx,
    closed: bool,
}

impl Msk {
    /// mptcp_sendmsg: copy everything into dfrags, then push.
    fn sendmsg(&mut self, bytes: u64, ev: &mut Events) {
        self.buf
            .sendmsg_copy(bytes, self.high_order, &mut self.tx, ev);
        if bytes > 0 {
            push::push_pending(
                &self.cfg,
                &mut self.buf,
                &mut self.subflows,
                &mut self.sched,
                &mut self.tx,
                ev,
            );
        }
    }

    /// Every sent skb is acknowledged: tcp_clean_rtx_queue on each subflow, then
    /// __mptcp_clean_una up to the first data byte still unsent on some subflow.
    fn ack(&mut self, ev: &mut Events) {
        for sf in &mut self.subflows {
            sf.free_sent(&mut self.tx, ev);
        }
        let snd_una = self
            .subflows
            .iter()
            .filter_map(Subflow::first_unsent_data_seq)
            .min()
            .unwrap_or(self.buf.write_seq);
        self.buf.clean_una(snd_una, &mut self.tx, ev);
    }

    /// Refuses to go on past [`MAX_LIVE_SKBS`] skbs on the subflows (after `call` of the
    /// writes of `ops[at]`).
    fn check_live(&self, at: usize, call: u64) -> Result<(), Error> {
        let live: usize = self.subflows.iter().map(|sf| sf.skbs.len()).sum();
        if live as u64 <= MAX_LIVE_SKBS {
            return Ok(());
        }
        Err(Error::Range {
            field: format!("ops[{at}]"),
            value: format!("{live} skbs queued on the subflows after call {call}"),
            allowed: format!(
                "at most {MAX_LIVE_SKBS} at once: acknowledge (`ack`) or write less, or use a \
                 larger mss"
            ),
        })
    }

    fn close(&mut self, ev: &mut Events) {
        for sf in &mut self.subflows {
            sf.free_all(&mut self.tx, ev);
        }
        self.buf.release(&mut self.tx, ev);
        self.closed = true;
    }
}

impl Machine for Msk {
    type Op = MptcpOp;

    fn apply(&mut self, op: &MptcpOp, at: usize, ev: &mut Events) -> Result<(), Error> {
        if self.closed {
            return Err(Error::invalid(
                format!("ops[{at}]"),
                "the socket is already closed",
            ));
        }
        match *op {
            MptcpOp::Sendmsg { bytes, count } => {
                for call in 1..=count {
                    self.sendmsg(bytes, ev);
                    self.check_live(at, call)?;
                }
            }
            MptcpOp::Transmit { subflow } => {
                for sf in &mut self.subflows {
                    if subflow.is_none_or(|s| s == sf.id) {
                        sf.transmit(ev);
                    }
                }
            }
            MptcpOp::Ack => self.ack(ev),
            MptcpOp::Close => self.close(ev),
        }
        Ok(())
    }

    fn describe(&self, op: &MptcpOp) -> String {
        match *op {
            MptcpOp::Sendmsg { bytes, count: 1 } => format!("sendmsg {bytes} bytes"),
            MptcpOp::Sendmsg { bytes, count } => format!("sendmsg {bytes} bytes x {count}"),
            MptcpOp::Transmit { subflow: None } => "transmit".into(),
            MptcpOp::Transmit { subflow: Some(s) } => format!("transmit subflow {s}"),
            MptcpOp::Ack => "ack".into(),
            MptcpOp::Close => "close".into(),
        }
    }

    fn state(&self) -> State {
        State {
            queues: self
                .subflows
                .iter()
                .map(|sf| Queue {
                    name: queue::subflow(sf.id),
                    skbs: sf.skbs.clone(),
                })
                .collect(),
            pages: self.tx.pool.live().cloned().collect(),
            cursors: vec![self.buf.pfrag.cursor("task_frag")],
            dfrags: self.buf.dfrags.iter().map(|d| d.view()).collect(),
            ..State::default()
        }
    }

    fn counters(&self) -> Counters {
        let s = &self.tx.stats;
        let live_psh = self
            .subflows
            .iter()
            .flat_map(|sf| &sf.skbs)
            .filter(|skb| skb.psh)
            .count() as u64;
        let ps = &self.tx.pool.stats;
        MptcpCounters {
            size_goal: self.subflows[0].size_goal as u64,
            skbs_allocated: s.skbs_allocated,
            avg_skb_bytes: s.bytes_mapped.checked_div(s.skbs_allocated).unwrap_or(0),
            max_skb_bytes: s.max_skb_bytes,
            psh_skbs: s.psh_freed + live_psh,
            dss_mappings: s.dss_mappings,
            collapses: s.collapses,
            eor_marks: s.eor_marks,
            dfrags: s.dfrags,
            pages_allocated: ps.allocated,
            pages_freed: ps.freed,
            bytes_written: s.bytes_written,
            bytes_mapped: s.bytes_mapped,
        }
        .to_counters()
    }
}

#[cfg(test)]
mod tests {
    use super::MptcpOp;

    /// A host names an op with the scenario's own word, so a renamed op cannot leave a host
    /// printing the old one.
    #[test]
    fn an_op_is_named_as_the_scenario_writes_it() {
        let ops = [
            MptcpOp::Sendmsg { bytes: 1, count: 1 },
            MptcpOp::Transmit { subflow: None },
            MptcpOp::Ack,
            MptcpOp::Close,
        ];
        for op in ops {
            assert_eq!(serde_json::to_value(&op).unwrap()["op"], op.name());
        }
    }
}
