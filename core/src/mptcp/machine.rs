//! The MPTCP socket (`Msk`) and its subflows, and running an MPTCP scenario on it. The
//! subflows' queues, the pages, the task frag and the dfrags are the socket's [`Live`] state,
//! changed only by the events its parts emit.

use super::counters::MptcpCounters;
use super::dfrag::SendBuf;
use super::push::{self, PushCfg, Sched};
use super::scenario::{MptcpOp, MptcpScenario};
use super::subflow::Subflow;
use super::tx::Tx;
use super::variant::{Fix, VARIANTS};
use crate::consts::Era;
use crate::events::Events;
use crate::limits::MAX_LIVE_SKBS;
use crate::mechanism::{pick_variant, variant_and_ops, Mechanism, RunOptions};
use crate::replay::{Live, Log};
use crate::trace::{drive, queue, Counters, Machine, State, Trace};
use crate::Error;

impl Mechanism for MptcpScenario {
    const NAME: &'static str = "mptcp";
    const VARIANTS: &'static [&'static str] = VARIANTS;
    /// The fix has been in every kernel since 5.11.
    const TODAY: &'static str = Fix::Abeni2020.name();

    variant_and_ops!();

    fn run(&self, opts: &RunOptions) -> Result<Trace, Error> {
        let fix: Fix = pick_variant(opts.variant.as_deref(), self.variant.as_deref())?;
        let era = Era::V5_11Rc1;
        let k = self.consts.apply(era.consts())?;
        self.validate()?;
        let subflows: Vec<Subflow> = (0..)
            .zip(&self.subflows)
            .map(|(i, p)| Subflow::new(i, p, era, &k))
            .collect();
        // The subflows' queues in id order (`subflow::queue`), then the one cursor.
        let queues = subflows.iter().map(|sf| queue::subflow(sf.id).into_owned());
        let mut m = Msk {
            live: Live::new(queues, ["task_frag".to_string()]),
            sock: Sock {
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
                tx: Tx::new(k),
                closed: false,
            },
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

/// The MPTCP socket: its state, and the parts that read and change it.
struct Msk {
    /// The subflows' queues, the pages, the task frag and the dfrags.
    live: Live,
    sock: Sock,
}

/// What the socket and its subflows keep beyond the state.
struct Sock {
    cfg: PushCfg,
    high_order: bool,
    buf: SendBuf,
    subflows: Vec<Subflow>,
    sched: Sched,
    tx: Tx,
    closed: bool,
}

impl Sock {
    /// mptcp_sendmsg: copy everything into dfrags, then push.
    fn sendmsg(&mut self, bytes: u64, log: &mut Log) {
        self.buf
            .sendmsg_copy(bytes, self.high_order, &mut self.tx, log);
        if bytes > 0 {
            let (cfg, sched) = (&self.cfg, &mut self.sched);
            push::push_pending(cfg, &mut self.subflows, sched, &mut self.tx, log);
        }
    }

    /// Every sent skb is acknowledged: tcp_clean_rtx_queue on each subflow, then
    /// __mptcp_clean_una up to the first data byte still unsent on some subflow.
    fn ack(&mut self, log: &mut Log) {
        for sf in &mut self.subflows {
            sf.free_sent(&mut self.tx, log);
        }
        let snd_una = (self.subflows.iter())
            .filter_map(|sf| sf.first_unsent_data_seq(log.state()))
            .min()
            .unwrap_or(self.buf.write_seq);
        self.buf.clean_una(snd_una, &mut self.tx, log);
    }

    /// Refuses to go on past [`MAX_LIVE_SKBS`] skbs on the subflows (after `call` of the
    /// writes of `ops[at]`).
    fn check_live(s: &State, at: usize, call: u64) -> Result<(), Error> {
        let live: usize = s.queues.iter().map(|q| q.skbs.len()).sum();
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

    fn close(&mut self, log: &mut Log) {
        for sf in &mut self.subflows {
            sf.free_all(&mut self.tx, log);
        }
        self.buf.release(&mut self.tx, log);
        self.closed = true;
    }

    /// Applies `op`, the scenario's `ops[at]`.
    fn apply(&mut self, op: &MptcpOp, at: usize, log: &mut Log) -> Result<(), Error> {
        if self.closed {
            return Err(Error::invalid(
                format!("ops[{at}]"),
                "the socket is already closed",
            ));
        }
        match *op {
            MptcpOp::Sendmsg { bytes, count } => {
                for call in 1..=count {
                    self.sendmsg(bytes, log);
                    Self::check_live(log.state(), at, call)?;
                }
            }
            MptcpOp::Transmit { subflow } => {
                for sf in &mut self.subflows {
                    if subflow.is_none_or(|s| s == sf.id) {
                        sf.transmit(log);
                    }
                }
            }
            MptcpOp::Ack => self.ack(log),
            MptcpOp::Close => self.close(log),
        }
        Ok(())
    }
}

impl Machine for Msk {
    type Op = MptcpOp;

    fn apply(&mut self, op: &MptcpOp, at: usize, ev: &mut Events) -> Result<(), Error> {
        self.sock.apply(op, at, &mut self.live.log(ev))
    }

    fn name(op: &MptcpOp) -> &'static str {
        op.name()
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
        self.live.state().clone()
    }

    fn counters(&self) -> Counters {
        let s = &self.sock.tx.stats;
        let queues = self.live.state().queues.iter();
        let live_psh = queues.flat_map(|q| &q.skbs).filter(|skb| skb.psh).count() as u64;
        let ps = &self.sock.tx.pages.stats;
        MptcpCounters {
            size_goal: self.sock.subflows[0].size_goal as u64,
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
