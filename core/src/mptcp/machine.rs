//! The MPTCP socket (`Msk`) and its subflows, and running an MPTCP scenario on it.

use super::counters::MptcpCounters;
use super::dfrag::SendBuf;
use super::push::{self, PushCfg, Sched};
use super::scenario::{MptcpOp, MptcpScenario};
use super::subflow::Subflow;
use super::tx::{Stats, Tx};
use super::variant::{Fix, VARIANTS};
use crate::consts::Era;
use crate::events::Events;
use crate::limits::MAX_LIVE_SKBS;
use crate::mechanism::{pick_variant, variant_and_ops, Mechanism, RunOptions};
use crate::page::PagePool;
use crate::trace::{drive, queue, Counters, Machine, Queue, State, Trace};
use crate::Error;

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
                    skbs: sf.skbs.iter().cloned().collect(),
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
