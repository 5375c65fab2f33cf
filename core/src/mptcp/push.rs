//! mptcp_push_pending and the packet scheduler (net/mptcp/protocol.c, net-next November 2020
//! / v5.11): every pending dfrag is spooled to the subflow the scheduler picks, one
//! mptcp_sendmsg_frag call at a time; a subflow left behind, and the last one used, get a
//! tcp_push (mptcp_push_release).

use super::dfrag::{first_pending, pending};
use super::sendmsg_frag::mptcp_sendmsg_frag;
use super::subflow::Subflow;
use super::tx::Tx;
use super::variant::Fix;
use crate::events::Event;
use crate::replay::Log;
use serde::{Deserialize, Serialize};

/// MPTCP_SEND_BURST_SIZE: (1 << 16) - sizeof(struct tcphdr) 20 - MAX_TCP_OPTION_SPACE 40 -
/// sizeof(struct ipv6hdr) 40 - sizeof(struct frag_hdr) 8 = 65428 bytes a subflow keeps
/// before the scheduler looks again.
pub const MPTCP_SEND_BURST_SIZE: u32 = 65428;

/// Which subflow mptcp_subflow_get_send returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheduler {
    /// Always subflow 0 (one subflow, or a fallback-like connection).
    #[default]
    First,
    /// Keep the last subflow while its burst lasts, then take the next one. The kernel picks
    /// the subflow with the lowest queued-bytes-to-pacing-rate ratio; with equal rates and
    /// queues that do not drain, that is the next one in turn.
    RoundRobin,
}

/// The scheduler's memory: msk->last_snd and msk->snd_burst.
#[derive(Debug, Default)]
pub struct Sched {
    last: Option<usize>,
    burst_left: i64,
}

impl Sched {
    fn pick(&mut self, kind: Scheduler, n: usize, burst: u32, log: &mut Log) -> usize {
        let next = match (kind, self.last) {
            (Scheduler::First, _) => 0,
            (Scheduler::RoundRobin, Some(last)) if self.burst_left > 0 => last,
            (Scheduler::RoundRobin, last) => {
                self.burst_left = burst as i64;
                last.map_or(0, |l| (l + 1) % n)
            }
        };
        if self.last != Some(next) {
            log.note(|| Event::PickSubflow {
                subflow: next as u32,
            });
        }
        self.last = Some(next);
        next
    }
}

/// What a push needs to know besides the state it changes.
pub struct PushCfg {
    pub fix: Fix,
    pub scheduler: Scheduler,
    pub burst: u32,
    /// The subflows transmit as soon as they are pushed.
    pub drain: bool,
}

/// mptcp_push_pending: every pending dfrag, first to last, goes to the subflows the
/// scheduler picks; each `mptcp_sendmsg_frag`'s mapping event counts its bytes as sent.
pub fn push_pending(
    cfg: &PushCfg,
    subflows: &mut [Subflow],
    sched: &mut Sched,
    tx: &mut Tx,
    log: &mut Log,
) {
    let mut ssk: Option<usize> = None;
    while let Some(&df) = log.state().dfrags.get(first_pending(log.state())) {
        debug_assert!(pending(&df));
        let prev = ssk;
        let s = sched.pick(cfg.scheduler, subflows.len(), cfg.burst, log);
        if let Some(p) = prev.filter(|&p| p != s) {
            push_release(cfg, &mut subflows[p], log);
        }
        ssk = Some(s);
        let sent = df.already_sent;
        let ret = mptcp_sendmsg_frag(
            cfg.fix,
            &mut subflows[s],
            df.data_seq + sent as u64,
            df.page,
            df.offset + sent,
            df.data_len - sent,
            tx,
            log,
        );
        sched.burst_left -= ret as i64;
    }
    if let Some(s) = ssk {
        push_release(cfg, &mut subflows[s], log);
    }
}

/// mptcp_push_release: tcp_push on the subflow (PSH on its tail); a draining subflow then
/// sends.
fn push_release(cfg: &PushCfg, sf: &mut Subflow, log: &mut Log) {
    sf.tcp_push(log);
    if cfg.drain {
        sf.transmit(log);
    }
}
