//! The rx scenario format (`mechanism = "rx"`): the NIC, socket and application knobs, the
//! operations, and [`RxParams`], the checked form every stage reads.

use super::variant::{Allocator, RxCache, Variant};
use crate::consts::wire::{ETH_HLEN, IPV4_HLEN, TCP_TS_HLEN, UDP_HLEN};
use crate::consts::{ConstOverrides, Era, KernelConsts};
use crate::limits::{add_capped, check_range, ByteBudget, MAX_OPS, MAX_OP_BYTES, MAX_TOTAL_FRAMES};
use crate::{Cpu, Error, NR_CPUS};
use serde::{Deserialize, Serialize};

/// The CPU running the NIC's softirq (NAPI, GRO, tcp_v4_rcv without RPS).
pub const BH_CPU: Cpu = 0;

/// At most this many frames in one `arrive`.
pub const MAX_FRAMES: u64 = 100_000;

/// `mechanism = "rx"`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RxScenario {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Either axis, or `ALLOCATOR+CACHE`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The rx cache axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    #[serde(default, skip_serializing_if = "ConstOverrides::is_empty")]
    pub consts: ConstOverrides,
    #[serde(default)]
    pub nic: NicParams,
    #[serde(default)]
    pub socket: SocketParams,
    #[serde(default)]
    pub app: AppParams,
    pub ops: Vec<RxOp>,
}

/// The receiving NIC, its driver and the softirq side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NicParams {
    /// `full-frame` (build_skb around a frag-cache buffer), `header-split` or `napi-frags`.
    pub driver: DriverStyle,
    /// Header-split head buffer length; unset: the era's IXGBE_RX_HDR_SIZE
    /// ([`ixgbe_rx_hdr_size`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hdr_size: Option<u32>,
    /// NETIF_F_GRO.
    pub gro: bool,
    /// NAPI poll budget (weight): frames per poll.
    pub budget: u32,
    /// RPS/RFS steers the flow to the application's CPU (after GRO).
    pub rps: bool,
    /// `modern`: the order-3 refill fails and page_frag_cache falls back to order 0.
    pub high_order_fails: bool,
    /// `modern`: refills come from the pfmemalloc reserves, so pages are never reused.
    pub pfmemalloc: bool,
}

impl Default for NicParams {
    fn default() -> Self {
        NicParams {
            driver: DriverStyle::FullFrame,
            hdr_size: None,
            gro: true,
            budget: 64,
            rps: false,
            high_order_fails: false,
            pfmemalloc: false,
        }
    }
}

/// IXGBE_RX_HDR_SIZE, the head ixgbe asks `netdev_alloc_skb_ip_align` (v3.x) or
/// `napi_alloc_skb` (v6.12) for, per era (drivers/net/ethernet/intel/ixgbe/ixgbe.h):
/// IXGBE_RXBUFFER_512 in v3.5, sized when heads were kmalloc'ed ("RXBUFFER_512 -->
/// size-1024 slab"); IXGBE_RXBUFFER_256 from v3.6 on, lowered because netdev_alloc_skb
/// now hands out page fragments. v3.5's value also stands for net-next of June 2012, the tree
/// seed 001 was posted on: v3.5 was released a month later still asking for 512 bytes, and the
/// date the lowering reached net-next is not established (docs/mechanisms.md).
pub const fn ixgbe_rx_hdr_size(era: Era) -> u32 {
    match era {
        Era::V3_5 => 512,
        _ => 256,
    }
}

/// How the driver lays a frame out (`nic.driver`; see [`super::driver`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DriverStyle {
    /// The whole frame in a page-fragment head (build_skb).
    #[default]
    FullFrame,
    /// The headers in a small head, the payload in driver pages.
    HeaderSplit,
    /// The headers in a `napi_get_frags` head, the payload in one frag-cache fragment
    /// (tun with IFF_NAPI_FRAGS, see [`super::driver`]). tun gained IFF_NAPI_FRAGS in v4.15:
    /// with a v3.x allocator it is accepted as a counterfactual (v6.12's tun path on that
    /// era's frag cache).
    NapiFrags,
}

/// The flow's protocol.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Proto {
    /// A TCP stream: GRO merges, the rx cache applies.
    #[default]
    Tcp,
    /// A long-holding consumer (UDP-like, or forwarding): every frame stays its own skb (no
    /// GRO merging, no TCP rx cache) and lives as long as the application keeps it.
    Udp,
}

impl Proto {
    /// Ethernet + IPv4 + transport header bytes per frame: 14 + 20 + 32 (TCP with
    /// timestamps) or 14 + 20 + 8 (UDP).
    pub const fn headers(self) -> u32 {
        ETH_HLEN
            + IPV4_HLEN
            + match self {
                Proto::Tcp => TCP_TS_HLEN,
                Proto::Udp => UDP_HLEN,
            }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SocketParams {
    pub proto: Proto,
    /// Payload bytes of a full-sized frame (the sender's MSS); the rx buffers are sized for
    /// `mss + headers`.
    pub mss: u32,
}

impl Default for SocketParams {
    fn default() -> Self {
        SocketParams {
            proto: Proto::Tcp,
            mss: 1448,
        }
    }
}

/// The application reading the socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AppParams {
    /// The CPU recvmsg runs on (0 = the BH CPU itself).
    pub cpu: Cpu,
    /// How far behind it is: recvmsg never reads the newest `lag` skbs of the receive queue.
    pub lag: u32,
    /// A prompt reader: after every NAPI poll it reads everything the lag allows.
    pub prompt: bool,
}

impl Default for AppParams {
    fn default() -> Self {
        AppParams {
            cpu: 1,
            lag: 0,
            prompt: false,
        }
    }
}

/// One operation of an rx scenario.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum RxOp {
    /// `frames` frames of `len` bytes each (default: full-sized) reach the NIC, which raises
    /// its interrupt; NAPI polls them `budget` at a time. Or `lens`: each frame's length.
    Arrive {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        frames: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        len: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lens: Option<Vec<u64>>,
    },
    /// One recvmsg call: up to `bytes`, or up to `skbs` whole skbs, or (neither) everything
    /// the application's lag allows.
    Recvmsg {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        skbs: Option<u64>,
    },
    /// lock_sock: the application owns the socket (deliveries go to the backlog).
    Lock,
    /// release_sock: the backlog is processed on the application's CPU.
    Release,
    /// net_rx_action with no frames on `cpu` (frees its defer list).
    Softirq {
        #[serde(default)]
        cpu: Cpu,
    },
    /// tcp_disconnect: unread data and a parked skb are freed.
    Disconnect,
    /// close(): unread data, backlog and a parked skb are freed; later frames are dropped.
    Close,
}

impl RxOp {
    /// The op's name, as a scenario writes it (`op = "recvmsg"`).
    pub fn name(&self) -> &'static str {
        match self {
            RxOp::Arrive { .. } => "arrive",
            RxOp::Recvmsg { .. } => "recvmsg",
            RxOp::Lock => "lock",
            RxOp::Release => "release",
            RxOp::Softirq { .. } => "softirq",
            RxOp::Disconnect => "disconnect",
            RxOp::Close => "close",
        }
    }
}

/// Resolved parameters: everything a machine needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxParams {
    pub consts: KernelConsts,
    pub variant: Variant,
    pub nic: NicParams,
    pub socket: SocketParams,
    pub app: AppParams,
}

impl RxParams {
    /// Checks every knob, naming the field.
    pub fn new(
        variant: Variant,
        overrides: &ConstOverrides,
        nic: NicParams,
        socket: SocketParams,
        app: AppParams,
    ) -> Result<RxParams, Error> {
        let consts = overrides.apply(variant.era().consts())?;
        check_range("socket.mss", socket.mss.into(), 1, 9000)?;
        if nic.driver == DriverStyle::NapiFrags {
            // tun_napi_alloc_frags refuses an iovec after the first above PAGE_SIZE.
            let page = consts.page_size.into();
            check_range(
                "socket.mss (nic.driver = \"napi-frags\")",
                socket.mss.into(),
                1,
                page,
            )?;
        }
        check_range("nic.budget", nic.budget.into(), 1, 1024)?;
        let hdrs = socket.proto.headers();
        if let Some(h) = nic.hdr_size {
            check_range("nic.hdr_size", h.into(), hdrs.into(), 2048)?;
        }
        check_range("app.cpu", app.cpu.into(), 0, NR_CPUS as u64 - 1)?;
        check_range("app.lag", app.lag.into(), 0, 100_000)?;
        Ok(RxParams {
            consts,
            variant,
            nic,
            socket,
            app,
        })
    }

    /// The largest frame on the wire, which every full-frame rx buffer is sized for.
    pub fn frame_len(&self) -> u32 {
        self.socket.mss + self.socket.proto.headers()
    }

    /// Whether a socket the user owns (`lock`) backlogs what arrives: TCP always
    /// (tcp_add_backlog); UDP in v3.5 and v3.6 (udp_queue_rcv_skb's sk_add_backlog), not in
    /// v6.12, whose `__udp_enqueue_schedule_skb` takes only the receive queue's spinlock, so
    /// the datagram is queued whoever owns the socket.
    pub fn owner_backlogs(&self) -> bool {
        self.socket.proto == Proto::Tcp || self.variant.era() != Era::V6_12
    }

    /// The header-split head length: `nic.hdr_size`, else the era's IXGBE_RX_HDR_SIZE (the
    /// napi-frags head's is GRO_MAX_HEAD, [`super::driver::GRO_MAX_HEAD`]).
    pub fn hdr_size(&self) -> u32 {
        self.nic
            .hdr_size
            .unwrap_or(ixgbe_rx_hdr_size(self.variant.era()))
    }

    /// Whether GRO merges this flow's segments (TCP with NETIF_F_GRO); otherwise each frame
    /// goes up on its own.
    pub fn gro_merges(&self) -> bool {
        self.nic.gro && self.socket.proto == Proto::Tcp
    }

    /// The CPU tcp_v4_rcv runs on: the BH CPU, or the application's under RPS/RFS.
    pub fn rcv_cpu(&self) -> Cpu {
        if self.nic.rps {
            self.app.cpu
        } else {
            BH_CPU
        }
    }

    /// Each frame must carry a payload and fit the rx buffer: `headers < len <= frame_len`.
    pub fn check_lens(&self, field: &str, lens: &[u32]) -> Result<(), Error> {
        let lo = u64::from(self.socket.proto.headers()) + 1;
        let hi = u64::from(self.frame_len());
        for (i, &l) in lens.iter().enumerate() {
            check_range(|| format!("{field}[{i}]"), l.into(), lo, hi)?;
        }
        Ok(())
    }
    /// Frame lengths for an `arrive` op, checked and named after `ops[at]`.
    pub fn frame_lens(&self, op: &RxOp, at: usize) -> Result<Vec<u32>, Error> {
        let RxOp::Arrive { frames, len, lens } = op else {
            return Ok(Vec::new());
        };
        let lo = u64::from(self.socket.proto.headers()) + 1;
        let hi = u64::from(self.frame_len());
        let field = |f: &str| format!("ops[{at}].{f}");
        let out: Vec<u32> = match (frames, lens) {
            (None, Some(lens)) if len.is_none() => {
                check_range(&field("lens"), lens.len() as u64, 1, MAX_FRAMES)?;
                lens.iter()
                    .enumerate()
                    .map(|(i, &l)| {
                        check_range(|| field(&format!("lens[{i}]")), l, lo, hi).map(|l| l as u32)
                    })
                    .collect::<Result<_, _>>()?
            }
            (Some(n), None) => {
                let n = check_range(&field("frames"), *n, 1, MAX_FRAMES)?;
                let l = check_range(&field("len"), len.unwrap_or(hi), lo, hi)? as u32;
                vec![l; n as usize]
            }
            _ => {
                return Err(Error::invalid(
                    format!("ops[{at}]"),
                    "arrive takes `frames` (and optionally `len`), or `lens`",
                ))
            }
        };
        let bytes: u64 = out.iter().map(|&l| u64::from(l)).sum();
        check_range(&field("bytes (frames x len)"), bytes, 1, MAX_OP_BYTES)?;
        Ok(out)
    }
}

/// The rx cache a kernel of the allocator's era runs when none is named: v6.12's
/// tcp_eat_recv_skb hands every read TCP skb to `skb_attempt_defer_free` (net/ipv4/tcp.c),
/// which frees it where it is only when it was allocated there, its list is full, or
/// net.core.skb_defer_max is 0 (`none`); a UDP read (skb_consume_udp) is never deferred.
/// The older eras free in recvmsg.
pub fn era_cache(alloc: Allocator, proto: Proto) -> RxCache {
    match (alloc, proto) {
        (Allocator::Modern, Proto::Tcp) => RxCache::DeferFree,
        _ => RxCache::None,
    }
}

impl RxScenario {
    /// The variant: the file's `variant`, then its `cache`, then the override (each may name
    /// one axis or both; later wins). Where none names the rx cache, the allocator's kernel
    /// frees as it does by default ([`era_cache`]: a v6.12 TCP read is deferred).
    pub fn pick_variant(&self, over: Option<&str>) -> Result<Variant, Error> {
        let mut v = Variant::default();
        let mut named_cache = false;
        if let Some(s) = &self.variant {
            named_cache |= v.set(s)?;
        }
        if let Some(c) = &self.cache {
            v.cache = c.parse()?;
            named_cache = true;
        }
        if let Some(s) = over {
            named_cache |= v.set(s)?;
        }
        if !named_cache {
            v.cache = era_cache(v.alloc, self.socket.proto);
        }
        Ok(v)
    }

    pub fn params(&self, over: Option<&str>) -> Result<RxParams, Error> {
        RxParams::new(
            self.pick_variant(over)?,
            &self.consts,
            self.nic,
            self.socket,
            self.app,
        )
    }

    /// Checks the scenario-wide caps (op count, total bytes).
    pub fn check_caps(&self, p: &RxParams) -> Result<(), Error> {
        check_range("ops", self.ops.len() as u64, 1, MAX_OPS as u64)?;
        let mut budget = ByteBudget::default();
        let mut frames_total = 0;
        for (i, op) in self.ops.iter().enumerate() {
            if let RxOp::Arrive { frames, len, lens } = op {
                let len = len.unwrap_or(p.frame_len().into());
                let (n, bytes, field) = match (frames, lens) {
                    (Some(n), _) => (*n, n.saturating_mul(len), "frames"),
                    (_, Some(l)) => (
                        l.len() as u64,
                        l.iter().fold(0u64, |a, &b| a.saturating_add(b)),
                        "lens",
                    ),
                    _ => (0, 0, ""),
                };
                let field = || format!("ops[{i}].{field}");
                if bytes > MAX_OP_BYTES {
                    let (value, fit) = match frames {
                        Some(_) => (
                            format!("{n} (x {len} bytes = {bytes} bytes)"),
                            format!(": {} frames of {len} bytes", MAX_OP_BYTES / len.max(1)),
                        ),
                        None => (format!("{n} frames of {bytes} bytes in all"), String::new()),
                    };
                    let allowed =
                        format!("at most {MAX_OP_BYTES} bytes in one arrive (MAX_OP_BYTES){fit}");
                    return Err(Error::Range {
                        field: field(),
                        value,
                        allowed,
                    });
                }
                budget.take(field, bytes)?;
                let cap = (MAX_TOTAL_FRAMES, "frames");
                add_capped(&mut frames_total, n, cap, || format!("ops[{i}].frames"))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::RxOp;
    use crate::mechanism::assert_named_by_tag;

    /// A host names an op with the scenario's own word, so a renamed op cannot leave a host
    /// printing the old one.
    #[test]
    fn an_op_is_named_as_the_scenario_writes_it() {
        let ops = [
            RxOp::Arrive {
                frames: Some(1),
                len: None,
                lens: None,
            },
            RxOp::Recvmsg {
                bytes: None,
                skbs: None,
            },
            RxOp::Lock,
            RxOp::Release,
            RxOp::Softirq { cpu: 0 },
            RxOp::Disconnect,
            RxOp::Close,
        ];
        assert_named_by_tag(&ops, RxOp::name);
    }
}
