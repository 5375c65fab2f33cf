//! The sendmsg scenario format (`mechanism = "sendmsg"`): the socket and device knobs, the
//! operations, and their checks; [`SendScenario::config`] gives the checked [`SendConfig`]
//! the socket runs with.

use super::params::{DeviceParams, SocketParams};
use super::sock::SendConfig;
use super::variant::Variant;
use crate::consts::{ConstOverrides, MAX_TCP_HEADERS};
use crate::limits::{check_range, ByteBudget, MAX_IOVECS, MAX_OPS, MAX_OP_BYTES, MAX_TOTAL_BYTES};
use crate::mechanism::{is_one, one};
use crate::Error;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SendScenario {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    #[serde(default, skip_serializing_if = "ConstOverrides::is_empty")]
    pub consts: ConstOverrides,
    #[serde(default)]
    pub socket: SocketParams,
    #[serde(default)]
    pub device: DeviceParams,
    pub ops: Vec<SendOp>,
}

/// One operation of a send scenario.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum SendOp {
    /// sendmsg of `bytes`, or of the iovecs `iov` (lengths), one call.
    Sendmsg {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        iov: Option<Vec<u64>>,
        /// MSG_EOR: nothing may be appended to the last skb (modern only; 2.6.33 ignores it).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        eor: bool,
        /// This many calls of the same write, one after another (default 1).
        #[serde(default = "one", skip_serializing_if = "is_one")]
        count: u64,
    },
    /// Hand every unsent skb to the device.
    Transmit,
    /// The peer acknowledges `bytes` (default: everything sent); fully acked skbs are freed.
    Ack {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<u64>,
    },
    /// close(): free the write queue and (2.6.33) the socket's TCP_PAGE.
    Close,
    /// After `close`, the same task opens its next socket: a new connection, the same task
    /// frag (today).
    Socket,
}

impl SendOp {
    /// The op's name, as a scenario writes it (`op = "transmit"`).
    pub fn name(&self) -> &'static str {
        match self {
            SendOp::Sendmsg { .. } => "sendmsg",
            SendOp::Transmit => "transmit",
            SendOp::Ack { .. } => "ack",
            SendOp::Close => "close",
            SendOp::Socket => "socket",
        }
    }
}

/// The iovec lengths of one sendmsg op: `bytes` as one iovec, else `iov` (validation allows
/// one of the two).
pub fn iov_lengths(bytes: Option<u64>, iov: Option<&[u64]>) -> Vec<u32> {
    match (bytes, iov) {
        (Some(b), _) => vec![b as u32],
        (None, Some(iov)) => iov.iter().map(|&l| l as u32).collect(),
        (None, None) => Vec::new(),
    }
}

impl SendScenario {
    /// The validated configuration for `variant`: every socket and device field checked
    /// against its allowed range.
    pub fn config(&self, variant: Variant) -> Result<SendConfig, Error> {
        let k = self.consts.apply(variant.era().consts())?;
        let (s, d) = (self.socket, self.device);
        check_range("socket.net_header_len", s.net_header_len as u64, 20, 60)?;
        check_range("socket.tcp_header_len", s.tcp_header_len as u64, 20, 60)?;
        let headers = (s.net_header_len + s.tcp_header_len) as u64;
        check_range("device.mtu", d.mtu as u64, headers + MIN_MSS, 65_535)?;
        // mss_cache = MTU less the IP and TCP headers (options included).
        check_range("socket.mss", s.mss as u64, MIN_MSS, d.mtu as u64 - headers)?;
        check_range("socket.max_window", s.max_window as u64, 0, MAX_WINDOW)?;
        check_range("socket.sndbuf", s.sndbuf as u64, 4096, MAX_SNDBUF)?;
        if d.gso && !d.sg {
            return Err(Error::invalid(
                "device.gso",
                "GSO/TSO needs scatter-gather: set device.sg = true",
            ));
        }
        if d.sg && !d.csum {
            return Err(Error::invalid(
                "device.sg",
                "the kernel drops NETIF_F_SG from a device without checksum offload: \
                 set device.csum = true or device.sg = false",
            ));
        }
        Ok(SendConfig {
            variant,
            k,
            socket: s,
            device: d,
        })
    }

    /// The size goal under each MAX_TCP_HEADER a kernel of today may be built with
    /// ([`MAX_TCP_HEADERS`]), as (MAX_TCP_HEADER, size goal), when they differ: the goal is
    /// `gso_max_size - 1 - MAX_TCP_HEADER` cut to whole segments, so near MSS 1448 the config
    /// does not change it and at a small MSS it does (MSS 48: 65,328 with 192, 65,184 with
    /// 320). `None` when the scenario names the constant or every config gives one goal.
    pub fn size_goals_by_config(&self, v: Variant) -> Result<Option<Vec<(u32, u32)>>, Error> {
        if self.consts.max_tcp_header.is_some() {
            return Ok(None);
        }
        let goals = (MAX_TCP_HEADERS.iter())
            .map(|&h| {
                let mut sc = self.clone();
                sc.consts.max_tcp_header = Some(h);
                Ok((h, sc.config(v)?.size_goal()))
            })
            .collect::<Result<Vec<(u32, u32)>, Error>>()?;
        Ok((goals.iter().any(|g| g.1 != goals[0].1)).then_some(goals))
    }

    /// Checks the operations against the caps in [`crate::limits`].
    pub(super) fn check_ops(&self) -> Result<(), Error> {
        check_range("ops", self.ops.len() as u64, 0, MAX_OPS as u64)?;
        let mut budget = ByteBudget::default();
        for (i, op) in self.ops.iter().enumerate() {
            match op {
                SendOp::Sendmsg {
                    bytes: Some(b),
                    iov: None,
                    count,
                    ..
                } => budget.writes(
                    (|| format!("ops[{i}].bytes"), *b),
                    (|| format!("ops[{i}].count"), *count),
                )?,
                SendOp::Sendmsg {
                    bytes: None,
                    iov: Some(iov),
                    count,
                    ..
                } => {
                    let field = || format!("ops[{i}].iov");
                    check_range(field, iov.len() as u64, 0, MAX_IOVECS as u64)?;
                    for (j, l) in iov.iter().enumerate() {
                        check_range(|| format!("ops[{i}].iov[{j}]"), *l, 0, MAX_OP_BYTES)?;
                    }
                    let count_field = || format!("ops[{i}].count");
                    budget.writes((field, iov.iter().sum()), (count_field, *count))?;
                }
                SendOp::Sendmsg { .. } => {
                    return Err(Error::invalid(
                        format!("ops[{i}]"),
                        "sendmsg takes either `bytes` or `iov` (a list of lengths)",
                    ))
                }
                SendOp::Ack { bytes: Some(b) } => {
                    check_range(|| format!("ops[{i}].bytes"), *b, 0, MAX_TOTAL_BYTES)?;
                }
                SendOp::Transmit | SendOp::Ack { bytes: None } | SendOp::Close | SendOp::Socket => {
                }
            }
        }
        Ok(())
    }
}

/// The smallest MSS a scenario may ask for (2.6.33 `tcp_mtu_to_mss` clamps to 48).
pub const MIN_MSS: u64 = 48;
/// The largest max_window: 65535 << 14 (the largest window scale), about 1 GiB.
pub const MAX_WINDOW: u64 = 65_535 << 14;
/// The largest sndbuf a scenario may ask for (it bounds the write queue a step can show).
pub const MAX_SNDBUF: u64 = 64 << 20;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::assert_named_by_tag;
    use crate::Scenario;

    /// A host names an op with the scenario's own word, so a renamed op cannot leave a host
    /// printing the old one.
    #[test]
    fn an_op_is_named_as_the_scenario_writes_it() {
        let ops = [
            SendOp::Sendmsg {
                bytes: Some(1),
                iov: None,
                eor: false,
                count: 1,
            },
            SendOp::Transmit,
            SendOp::Ack { bytes: None },
            SendOp::Close,
            SendOp::Socket,
        ];
        assert_named_by_tag(&ops, SendOp::name);
    }

    /// Near MSS 1448 the kernel's config does not change the size goal; at MSS 48 it does,
    /// unless the scenario names MAX_TCP_HEADER.
    #[test]
    fn the_size_goal_depends_on_max_tcp_header_only_at_a_small_mss() {
        let goals = |extra: &str| {
            let text = format!("mechanism = \"sendmsg\"\nops = []\n{extra}");
            let Ok(Scenario::Sendmsg(s)) = Scenario::parse(&text) else {
                panic!("a sendmsg scenario");
            };
            s.size_goals_by_config(Variant::Modern).unwrap()
        };
        assert_eq!(goals(""), None);
        let small = goals("[socket]\nmss = 48").expect("the goal depends on the config");
        assert_eq!((small[0], small[2]), ((192, 65_328), (320, 65_184)));
        assert_eq!(
            goals("[socket]\nmss = 48\n[consts]\nmax_tcp_header = 320"),
            None
        );
    }
}
