//! Seed 000: tcp_sendmsg and the linear area (Krishna Kumar, 2010), plus today's form.
//!
//! Scenario format for `mechanism = "sendmsg"`, its validation, and the run; the machine
//! lives in the submodules: [`variant`] (what differs, as data), [`sock`] (the copy loop,
//! the socket's page, acks, close), [`xmit`] (the transmit path), [`counters`], and
//! [`matrix`] (the seed's benchmark matrix, counters only).

pub mod counters;
pub mod matrix;
pub mod params;
pub mod sock;
pub mod variant;
mod xmit;

pub use counters::SendCounters;
pub use params::{DeviceParams, SocketParams};
pub use sock::{SendConfig, SendSock, Xmitted};
pub use variant::Variant;

use crate::consts::{ConstOverrides, MAX_TCP_HEADERS};
use crate::events::Events;
use crate::limits::{check_range, ByteBudget, MAX_IOVECS, MAX_OPS, MAX_OP_BYTES, MAX_TOTAL_BYTES};
use crate::mechanism::{is_one, one, pick_variant, variant_and_ops, Mechanism, RunOptions};
use crate::trace::{drive, Counters, Machine, State, Trace};
use crate::Error;
use serde::{Deserialize, Serialize};

/// `pre-2010` (select_size), `kumar-2010` (no linear data), `modern` (tcp_sendmsg_locked).
pub const VARIANTS: &[&str] = Variant::NAMES;

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

impl Mechanism for SendScenario {
    const NAME: &'static str = "sendmsg";
    const VARIANTS: &'static [&'static str] = VARIANTS;
    const TODAY: &'static str = Variant::TODAY.name();

    variant_and_ops!();

    fn run(&self, opts: &RunOptions) -> Result<Trace, Error> {
        let mut m = self.machine(opts.variant.as_deref())?;
        let (steps, counters) = drive(&mut m, &self.ops, !opts.counters_only)?;
        let cfg = m.sock.cfg;
        Ok(Trace {
            mechanism: Self::NAME.to_string(),
            variant: cfg.variant.name().to_string(),
            era: cfg.variant.era(),
            udp: false,
            napi_frags: false,
            consts: cfg.k,
            steps,
            counters,
        })
    }
}

/// What a run handed to the device ([`SendScenario::transmitted`]).
#[derive(Clone, Debug)]
pub struct Transmitted {
    pub variant: Variant,
    /// Every skb the device got, in stream order.
    pub skbs: Vec<Xmitted>,
    /// The final counters.
    pub counters: Counters,
}

impl SendScenario {
    /// The checked machine for the variant `over` names (else the scenario's own).
    fn machine(&self, over: Option<&str>) -> Result<SendMachine, Error> {
        let variant: Variant = pick_variant(over, self.variant.as_deref())?;
        let cfg = self.config(variant)?;
        self.check_ops()?;
        Ok(SendMachine {
            sock: SendSock::new(cfg),
        })
    }

    /// Runs the scenario (counters only) and gives the skbs it handed to the device: what
    /// a host replays on a real wire.
    pub fn transmitted(&self, over: Option<&str>) -> Result<Transmitted, Error> {
        let mut m = self.machine(over)?;
        m.sock.log_xmits();
        let (_, counters) = drive(&mut m, &self.ops, false)?;
        Ok(Transmitted {
            variant: m.sock.cfg.variant,
            skbs: m.sock.xmitted.unwrap_or_default(),
            counters,
        })
    }

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
    fn check_ops(&self) -> Result<(), Error> {
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

/// The error for a sendmsg that finds the write queue full (`sk_stream_memory_free` false):
/// the model does not sleep, so the scenario must ack first.
fn would_block(at: usize, (call, count): (u64, u64), queued: u64, sock: &SendSock) -> Error {
    let which = if count > 1 {
        format!(" (call {call} of {count})")
    } else {
        String::new()
    };
    Error::invalid(
        format!("ops[{at}]"),
        format!(
            "sendmsg{which} would block: the write queue holds {queued} bytes of truesize, \
             socket.sndbuf is {}; acknowledge data first (an `ack` op) or raise socket.sndbuf",
            sock.cfg.socket.sndbuf
        ),
    )
}

/// [`SendSock`] driven by scenario operations.
struct SendMachine {
    sock: SendSock,
}

impl Machine for SendMachine {
    type Op = SendOp;

    fn apply(&mut self, op: &SendOp, at: usize, ev: &mut Events) -> Result<(), Error> {
        let sock = &mut self.sock;
        // A closed socket takes only `socket`; an open one anything else.
        if sock.closed != (*op == SendOp::Socket) {
            let why = if sock.closed {
                "the socket is closed; only `socket` (the task's next socket) may follow"
            } else {
                "the socket is still open; `close` it before the task opens the next one"
            };
            return Err(Error::invalid(format!("ops[{at}]"), why));
        }
        match op {
            SendOp::Sendmsg {
                bytes,
                iov,
                eor,
                count,
            } => {
                let iov = iov_lengths(*bytes, iov.as_deref());
                for call in 1..=*count {
                    sock.sendmsg(&iov, *eor, ev)
                        .map_err(|queued| would_block(at, (call, *count), queued, sock))?;
                }
            }
            SendOp::Transmit => sock.transmit(ev),
            SendOp::Ack { bytes: None } => sock.ack_all(ev),
            SendOp::Ack { bytes: Some(b) } => {
                check_range(|| format!("ops[{at}].bytes"), *b, 0, sock.in_flight())?;
                sock.ack_to(sock.snd_una + b, ev);
            }
            SendOp::Close => sock.close(ev),
            SendOp::Socket => sock.reopen(),
        }
        Ok(())
    }

    fn describe(&self, op: &SendOp) -> String {
        match op {
            SendOp::Sendmsg {
                bytes,
                iov,
                eor,
                count,
            } => {
                let what = match (bytes, iov) {
                    (Some(b), _) => format!("{b} bytes"),
                    (None, Some(iov)) => {
                        let parts: Vec<String> = iov.iter().map(u64::to_string).collect();
                        let total: u64 = iov.iter().sum();
                        format!(
                            "{} iovecs ({} = {total} bytes)",
                            iov.len(),
                            parts.join(" + ")
                        )
                    }
                    (None, None) => "0 bytes".to_string(),
                };
                let eor = if *eor { " (MSG_EOR)" } else { "" };
                let times = if *count > 1 {
                    format!(" x {count}")
                } else {
                    String::new()
                };
                format!("sendmsg {what}{eor}{times}")
            }
            SendOp::Transmit => "transmit".to_string(),
            SendOp::Ack { bytes: None } => "ack everything sent".to_string(),
            SendOp::Ack { bytes: Some(b) } => format!("ack {b} bytes"),
            SendOp::Close => "close".to_string(),
            SendOp::Socket => "socket: the task's next connection".to_string(),
        }
    }

    fn state(&self) -> State {
        self.sock.state()
    }

    fn counters(&self) -> Counters {
        self.sock.send_counters().to_counters()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;

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
        for op in ops {
            assert_eq!(serde_json::to_value(&op).unwrap()["op"], op.name());
        }
    }

    #[test]
    fn transmitted_gives_each_skb_and_its_psh() {
        let text = "mechanism = \"sendmsg\"\nops = [{ op = \"sendmsg\", bytes = 140000 }, \
                    { op = \"transmit\" }]";
        let Ok(Scenario::Sendmsg(s)) = Scenario::parse(text) else {
            panic!("a sendmsg scenario");
        };
        let sent = s.transmitted(Some("modern")).unwrap();
        let skbs: Vec<(u64, u32, bool)> =
            sent.skbs.iter().map(|x| (x.offset, x.len, x.psh)).collect();
        // size_goal 65160 (45 x 1448); PSH on the last skb, where the write ends.
        assert_eq!(
            skbs,
            [
                (0, 65_160, false),
                (65_160, 65_160, false),
                (130_320, 9_680, true)
            ]
        );
        assert_eq!(sent.variant, Variant::Modern);
        assert_eq!(sent.counters.get("xmit_skbs"), Some(3));
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
