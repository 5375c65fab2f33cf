//! The MPTCP scenario format (`mechanism = "mptcp"`): the subflows, the scheduler, the
//! operations, and their checks.

use super::push::{Scheduler, MPTCP_SEND_BURST_SIZE};
use super::subflow::SubflowParams;
use crate::consts::ConstOverrides;
use crate::limits::{check_range, ByteBudget, MAX_OPS};
use crate::mechanism::{is_one, one};
use crate::Error;
use serde::{Deserialize, Serialize};

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

impl MptcpScenario {
    /// Checks every size against its cap, naming the field.
    pub(super) fn validate(&self) -> Result<(), Error> {
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

#[cfg(test)]
mod tests {
    use super::MptcpOp;
    use crate::mechanism::assert_named_by_tag;

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
        assert_named_by_tag(&ops, MptcpOp::name);
    }
}
