//! Seeds 001 and 002: the receive side on two CPUs.
//!
//! Frames arrive on the BH CPU (softirq, CPU 0), get a buffer from that CPU's frag cache
//! ([`frag_cache`], seed 001), become skbs ([`driver`]), are merged by GRO ([`gro`]) and
//! delivered to one TCP socket, which the application reads with recvmsg on its own CPU
//! (CPU 1 by default); where consumed skbs are freed is the rx cache axis ([`socket`],
//! seed 002). Every allocation and free records its CPU.
//!
//! Two independent variant axes (see `docs/scenario-format.md`):
//! - allocator: `pre-2012` and `duyck-2012` (v3.5 constants), `modern` (v6.12);
//! - rx cache: `none`, `dumazet-2019` (v5.1 behaviour), `defer-free` (v6.12 behaviour).
//!
//! A host that feeds frames one NAPI poll at a time (the TAP runner) builds an [`RxMachine`]
//! from [`RxParams`], calls [`RxMachine::poll`] / [`Machine::apply`] and reads
//! [`Machine::counters`] and [`Machine::state`] whenever it likes.

pub mod driver;
pub mod frag_cache;
pub mod gro;
pub mod socket;

use crate::consts::{ConstOverrides, Era, KernelConsts};
use crate::limits::{check_range, ByteBudget, MAX_OPS, MAX_OP_BYTES};
use crate::page::{PageId, PagePool};
use crate::scenario::RunOptions;
use crate::skb::{Frag, Skb, SkbId};
use crate::trace::{self, Counters, Event, Events, Machine, State, Trace};
use crate::{Cpu, Error, NR_CPUS};
use driver::DriverStyle;
use frag_cache::{FragCache, RefillKnobs};
use gro::Gro;
use serde::{Deserialize, Serialize};
use socket::{ReadLimit, Socket};

/// The allocator axis (seed 001).
pub const ALLOCATORS: &[&str] = &["pre-2012", "duyck-2012", "modern"];
/// The rx cache axis (seed 002).
pub const CACHES: &[&str] = &["none", "dumazet-2019", "defer-free"];
/// Every name a variant string may use (each names one axis; `A+B` names both).
pub const VARIANTS: &[&str] = &[
    "pre-2012",
    "duyck-2012",
    "modern",
    "none",
    "dumazet-2019",
    "defer-free",
];

/// The CPU running the NIC's softirq (NAPI, GRO, tcp_v4_rcv without RPS).
pub const BH_CPU: Cpu = 0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Allocator {
    /// netdev_alloc_frag in v3.5: the offset counts up, a full page is replaced.
    Pre2012,
    /// Seed 001 (v3.6): counts down, reuses the page when its count is 1.
    Duyck2012,
    /// page_frag_cache in v6.12: 32 KiB pages, pagecnt_bias, reuse at exhaustion.
    Modern,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxCache {
    /// recvmsg frees consumed skbs on the application's CPU.
    None,
    /// Seed 002 (v5.1): the per-socket one-skb cache, freed by the next BH delivery.
    Dumazet2019,
    /// v6.12: skb_attempt_defer_free to the allocating CPU's list.
    DeferFree,
}

/// A point on both axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Variant {
    pub alloc: Allocator,
    pub cache: RxCache,
}

impl Default for Variant {
    fn default() -> Self {
        Variant {
            alloc: Allocator::Pre2012,
            cache: RxCache::None,
        }
    }
}

impl Variant {
    /// Applies a variant string: one axis name (`duyck-2012`, `dumazet-2019`, ...), which
    /// leaves the other axis as it was, or `ALLOCATOR+CACHE`.
    pub fn set(&mut self, text: &str) -> Result<(), Error> {
        for name in text.split('+') {
            match name.trim() {
                "pre-2012" => self.alloc = Allocator::Pre2012,
                "duyck-2012" => self.alloc = Allocator::Duyck2012,
                "modern" => self.alloc = Allocator::Modern,
                "none" => self.cache = RxCache::None,
                "dumazet-2019" => self.cache = RxCache::Dumazet2019,
                "defer-free" => self.cache = RxCache::DeferFree,
                other => {
                    return Err(Error::Unknown {
                        what: "variant",
                        name: other.to_string(),
                        expected: format!("{}, or ALLOCATOR+CACHE", VARIANTS.join(", ")),
                    })
                }
            }
        }
        Ok(())
    }

    /// Both axes, as the trace names them: `duyck-2012+dumazet-2019`.
    pub fn name(&self) -> String {
        let a = match self.alloc {
            Allocator::Pre2012 => ALLOCATORS[0],
            Allocator::Duyck2012 => ALLOCATORS[1],
            Allocator::Modern => ALLOCATORS[2],
        };
        let c = match self.cache {
            RxCache::None => CACHES[0],
            RxCache::Dumazet2019 => CACHES[1],
            RxCache::DeferFree => CACHES[2],
        };
        format!("{a}+{c}")
    }

    /// The constants follow the allocator's kernel: v3.5 (seed 001's base) or v6.12.
    pub fn era(&self) -> Era {
        match self.alloc {
            Allocator::Pre2012 | Allocator::Duyck2012 => Era::V3_5,
            Allocator::Modern => Era::V6_12,
        }
    }
}

/// `mechanism = "rx"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// `full-frame` (build_skb around a frag-cache buffer) or `header-split`.
    pub driver: DriverStyle,
    /// Header-split head buffer length (IXGBE_RX_HDR_SIZE = 256).
    pub hdr_size: u32,
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
            hdr_size: 256,
            gro: true,
            budget: 64,
            rps: false,
            high_order_fails: false,
            pfmemalloc: false,
        }
    }
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
    pub fn headers(self) -> u32 {
        match self {
            Proto::Tcp => 66,
            Proto::Udp => 42,
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
        check_range("nic.budget", nic.budget.into(), 1, 1024)?;
        let hdrs = socket.proto.headers();
        check_range("nic.hdr_size", nic.hdr_size.into(), hdrs.into(), 2048)?;
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
}

/// Model counters not kept by the page pool.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub frames: u64,
    pub bytes_arrived: u64,
    pub napi_polls: u64,
    pub skbs_allocated: u64,
    pub gro_merged: u64,
    pub skbs_delivered: u64,
    pub backlog_deliveries: u64,
    pub frags_allocated: u64,
    pub frag_cache_pages: u64,
    pub skb_frees: [u64; NR_CPUS],
    pub remote_skb_frees: u64,
    pub remote_put_page: u64,
    pub rx_cache_parked: u64,
    pub rx_cache_freed: u64,
    pub skbs_deferred: u64,
    pub recvmsg_calls: u64,
    pub recvmsg_skbs_freed: u64,
    pub recvmsg_put_page: u64,
    pub recvmsg_page_frees: u64,
    pub bytes_read: u64,
    pub bytes_purged: u64,
}

/// Kernel state every stage shares: pages, the per-CPU frag caches and defer lists, counters.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub consts: KernelConsts,
    pub variant: Variant,
    pub pool: PagePool,
    pub caches: [FragCache; NR_CPUS],
    /// softnet_data.defer_list per CPU (v6.12).
    pub defer: [Vec<Skb>; NR_CPUS],
    pub stats: Stats,
    next_skb: SkbId,
}

impl Kernel {
    fn new(consts: KernelConsts, variant: Variant) -> Kernel {
        Kernel {
            consts,
            variant,
            pool: PagePool::default(),
            caches: [FragCache::new(0), FragCache::new(1)],
            defer: Default::default(),
            stats: Stats::default(),
            next_skb: 0,
        }
    }

    pub fn new_skb_id(&mut self) -> SkbId {
        let id = self.next_skb;
        self.next_skb += 1;
        self.stats.skbs_allocated += 1;
        id
    }

    /// A fragment from `cpu`'s frag cache.
    pub fn alloc_frag(
        &mut self,
        cpu: Cpu,
        fragsz: u32,
        knobs: RefillKnobs,
        ev: &mut Events,
    ) -> Frag {
        let mut cache = std::mem::take(&mut self.caches[cpu as usize]);
        let frag = cache.alloc(self, fragsz, knobs, ev);
        self.caches[cpu as usize] = cache;
        frag
    }

    /// put_page on `cpu`, noting a reference dropped away from the page's CPU.
    pub fn put_page(&mut self, page: PageId, cpu: Cpu, ev: &mut Events) {
        if self.pool.page(page).cpu != cpu {
            self.stats.remote_put_page += 1;
        }
        self.pool.put(page, cpu, ev);
    }

    /// __kfree_skb on `cpu`: the head fragment's and every frag's page reference, then the
    /// skb itself; remote when `cpu` is not the CPU that allocated it.
    pub fn free_skb(&mut self, mut skb: Skb, cpu: Cpu, ev: &mut Events) {
        if let Some(h) = skb.head_frag {
            self.put_page(h.page, cpu, ev);
        }
        for f in &skb.frags {
            self.put_page(f.page, cpu, ev);
        }
        // skb_drop_fraglist: the chained skbs go with it, on the same CPU.
        for chained in std::mem::take(&mut skb.frag_list) {
            self.free_skb(chained, cpu, ev);
        }
        self.stats.skb_frees[cpu as usize] += 1;
        if skb.cpu != cpu {
            self.stats.remote_skb_frees += 1;
        }
        let id = skb.id;
        ev.emit(|| Event::FreeSkb { skb: id, cpu });
    }
}

/// The receive path's state machine: one NIC, one flow, one socket, two CPUs.
#[derive(Clone, Debug)]
pub struct RxMachine {
    p: RxParams,
    k: Kernel,
    gro: [Gro; NR_CPUS],
    sock: Socket,
    next_seq: u32,
}

impl RxMachine {
    pub fn new(p: RxParams) -> RxMachine {
        RxMachine {
            k: Kernel::new(p.consts, p.variant),
            p,
            gro: Default::default(),
            sock: Socket::default(),
            next_seq: 0,
        }
    }

    pub fn params(&self) -> &RxParams {
        &self.p
    }

    pub fn kernel(&self) -> &Kernel {
        &self.k
    }

    /// The frames one interrupt brought (their lengths on the wire): NAPI polls them
    /// `budget` at a time on the BH CPU. GRO keeps its packet across a poll that used its
    /// whole budget (the NAPI is polled again) and flushes when a poll finishes under budget
    /// (napi_complete_done), so the frames always end with such a poll.
    pub fn arrive(&mut self, lens: &[u32], ev: &mut Events) -> Result<(), Error> {
        self.check_lens("frames", lens)?;
        let budget = self.p.nic.budget as usize;
        let mut chunks = lens.chunks(budget);
        loop {
            let chunk = chunks.next().unwrap_or(&[]);
            self.poll_checked(chunk, ev);
            if chunk.len() < budget {
                return Ok(());
            }
        }
    }

    /// One NAPI poll of the given frames (at most `nic.budget`; the TAP runner's entry
    /// point). GRO flushes at its end only if it used less than the budget.
    pub fn poll(&mut self, lens: &[u32], ev: &mut Events) -> Result<(), Error> {
        check_range(
            "frames (one poll)",
            lens.len() as u64,
            0,
            self.p.nic.budget.into(),
        )?;
        self.check_lens("frames", lens)?;
        self.poll_checked(lens, ev);
        Ok(())
    }

    /// Each frame must carry a payload and fit the rx buffer: `headers < len <= frame_len`.
    fn check_lens(&self, field: &str, lens: &[u32]) -> Result<(), Error> {
        let lo = u64::from(self.p.socket.proto.headers()) + 1;
        let hi = u64::from(self.p.frame_len());
        for (i, &l) in lens.iter().enumerate() {
            check_range(|| format!("{field}[{i}]"), l.into(), lo, hi)?;
        }
        Ok(())
    }

    fn poll_checked(&mut self, lens: &[u32], ev: &mut Events) {
        let k = &mut self.k;
        socket::defer_flush(BH_CPU, k, ev);
        let budget = self.p.nic.budget;
        ev.emit(|| Event::NapiPoll {
            cpu: BH_CPU,
            frames: lens.len() as u32,
            budget,
        });
        k.stats.napi_polls += 1;
        let merge = self.p.gro_merges();
        for &len in lens {
            let skb = driver::rx_frame(k, &self.p, len, self.next_seq, BH_CPU, ev);
            self.next_seq = self.next_seq.wrapping_add(skb.len);
            k.stats.frames += 1;
            k.stats.bytes_arrived += u64::from(skb.len);
            let up = if merge {
                self.gro[BH_CPU as usize].receive(skb, k, BH_CPU, ev)
            } else {
                vec![skb]
            };
            for skb in up {
                self.sock.rcv(skb, self.p.rcv_cpu(), k, ev);
            }
        }
        if lens.len() < budget as usize {
            for skb in self.gro[BH_CPU as usize].flush(ev) {
                self.sock.rcv(skb, self.p.rcv_cpu(), k, ev);
            }
        }
        if self.p.app.prompt && !self.sock.owned && !self.sock.closed {
            self.recvmsg(ReadLimit::All, ev)
                .expect("model bug: a prompt read on an open, unowned socket failed");
        }
    }

    /// One recvmsg call on the application's CPU.
    pub fn recvmsg(&mut self, limit: ReadLimit, ev: &mut Events) -> Result<(), String> {
        self.sock.recvmsg(limit, &self.p, &mut self.k, ev)
    }

    /// Bytes of the receive queue's first skb that recvmsg has already copied.
    pub fn copied_bytes(&self) -> u64 {
        self.sock.copied().into()
    }

    /// Skbs alive anywhere (GRO lists, socket, defer lists).
    pub fn skbs_live(&self) -> usize {
        self.gro.iter().map(Gro::held_count).sum::<usize>()
            + self.sock.skb_count()
            + self.k.defer.iter().flatten().map(skbs_in).sum::<usize>()
    }

    /// Frame lengths for an `arrive` op, checked and named after `ops[at]`.
    fn frame_lens(&self, op: &RxOp, at: usize) -> Result<Vec<u32>, Error> {
        let RxOp::Arrive { frames, len, lens } = op else {
            return Ok(Vec::new());
        };
        let lo = u64::from(self.p.socket.proto.headers()) + 1;
        let hi = u64::from(self.p.frame_len());
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

/// An skb and the skbs on its frag_list.
pub fn skbs_in(skb: &Skb) -> usize {
    1 + skb.frag_list.iter().map(skbs_in).sum::<usize>()
}

/// At most this many frames in one `arrive`.
pub const MAX_FRAMES: u64 = 100_000;

impl Machine for RxMachine {
    type Op = RxOp;

    fn apply(&mut self, op: &RxOp, at: usize, ev: &mut Events) -> Result<(), Error> {
        let app = self.p.app.cpu;
        let fail = |m: String| Error::invalid(format!("ops[{at}]"), m);
        match op {
            RxOp::Arrive { .. } => {
                let lens = self.frame_lens(op, at)?;
                self.arrive(&lens, ev)?;
            }
            RxOp::Recvmsg { bytes, skbs } => {
                let limit = match (bytes, skbs) {
                    (Some(b), None) => ReadLimit::Bytes(check_range(
                        &format!("ops[{at}].bytes"),
                        *b,
                        1,
                        MAX_OP_BYTES,
                    )?),
                    (None, Some(n)) => ReadLimit::Skbs(check_range(
                        || format!("ops[{at}].skbs"),
                        *n,
                        1,
                        MAX_FRAMES,
                    )?),
                    (None, None) => ReadLimit::All,
                    (Some(_), Some(_)) => {
                        return Err(fail("recvmsg takes `bytes` or `skbs`, not both".into()))
                    }
                };
                self.recvmsg(limit, ev).map_err(fail)?;
            }
            RxOp::Lock => {
                if self.sock.owned || self.sock.closed {
                    return Err(fail(
                        "lock needs an open socket the user does not own yet".into(),
                    ));
                }
                self.sock.owned = true;
            }
            RxOp::Release => {
                if !self.sock.owned {
                    return Err(fail(
                        "release needs a socket the user owns (`lock` first)".into(),
                    ));
                }
                self.sock.release(app, ev);
            }
            RxOp::Softirq { cpu } => {
                check_range(
                    &format!("ops[{at}].cpu"),
                    (*cpu).into(),
                    0,
                    NR_CPUS as u64 - 1,
                )?;
                socket::defer_flush(*cpu, &mut self.k, ev);
            }
            RxOp::Disconnect => {
                if self.sock.closed || self.sock.owned {
                    return Err(fail(
                        "disconnect needs an open socket the user does not own".into(),
                    ));
                }
                self.sock.disconnect(app, &mut self.k, ev);
            }
            RxOp::Close => {
                if self.sock.closed {
                    return Err(fail("the socket is already closed".into()));
                }
                self.sock.close(app, &mut self.k, ev);
            }
        }
        Ok(())
    }

    fn describe(&self, op: &RxOp) -> String {
        match op {
            RxOp::Arrive { frames, len, lens } => match (frames, lens) {
                (Some(n), _) => format!(
                    "{n} frames of {} bytes arrive",
                    len.unwrap_or(self.p.frame_len().into())
                ),
                (_, Some(l)) => format!("{} frames arrive", l.len()),
                _ => "frames arrive".into(),
            },
            RxOp::Recvmsg { bytes: Some(b), .. } => format!("recvmsg {b} bytes"),
            RxOp::Recvmsg { skbs: Some(n), .. } => format!("recvmsg {n} skbs"),
            RxOp::Recvmsg { .. } => "recvmsg".into(),
            RxOp::Lock => "lock_sock (the user owns the socket)".into(),
            RxOp::Release => "release_sock".into(),
            RxOp::Softirq { cpu } => format!("softirq on cpu{cpu}"),
            RxOp::Disconnect => "disconnect".into(),
            RxOp::Close => "close".into(),
        }
    }

    fn state(&self) -> State {
        let mut queues: Vec<_> = (0..NR_CPUS).map(|c| self.gro[c].queue(c as Cpu)).collect();
        queues.extend(self.sock.queues());
        queues.extend(socket::defer_queues(&self.k));
        State {
            queues,
            pages: self.k.pool.live().cloned().collect(),
            cursors: self
                .k
                .caches
                .iter()
                .map(|c| c.cursor(self.p.variant.alloc))
                .collect(),
            ..State::default()
        }
    }

    fn counters(&self) -> Counters {
        let s = &self.k.stats;
        let ps = &self.k.pool.stats;
        let per_page = (s.frags_allocated + s.frag_cache_pages / 2)
            .checked_div(s.frag_cache_pages)
            .unwrap_or(0);
        Counters::default()
            .with("frames_arrived", s.frames)
            .with("bytes_arrived", s.bytes_arrived)
            .with("napi_polls", s.napi_polls)
            .with("skbs_allocated", s.skbs_allocated)
            .with("gro_merged", s.gro_merged)
            .with("skbs_delivered", s.skbs_delivered)
            .with("backlog_deliveries", s.backlog_deliveries)
            .with("frags_allocated", s.frags_allocated)
            .with("frag_cache_pages", s.frag_cache_pages)
            .with("frags_per_page", per_page)
            .with("page_allocs", ps.allocated)
            .with("page_reuses", ps.reused)
            .with("page_frees", ps.freed)
            .with("page_frees_cpu0", ps.freed_on[0])
            .with("page_frees_cpu1", ps.freed_on[1])
            .with("put_page_cpu0", ps.put_page[0])
            .with("put_page_cpu1", ps.put_page[1])
            .with("remote_put_page", s.remote_put_page)
            .with("skb_frees_cpu0", s.skb_frees[0])
            .with("skb_frees_cpu1", s.skb_frees[1])
            .with("remote_skb_frees", s.remote_skb_frees)
            .with("rx_cache_parked", s.rx_cache_parked)
            .with("rx_cache_freed", s.rx_cache_freed)
            .with("skbs_deferred", s.skbs_deferred)
            .with("recvmsg_calls", s.recvmsg_calls)
            .with("recvmsg_skbs_freed", s.recvmsg_skbs_freed)
            .with("recvmsg_put_page", s.recvmsg_put_page)
            .with("recvmsg_page_frees", s.recvmsg_page_frees)
            .with("bytes_read", s.bytes_read)
            .with("bytes_purged", s.bytes_purged)
            .with("skbs_live", self.skbs_live() as u64)
            .with("pages_live", self.k.pool.live_count() as u64)
    }
}

impl RxScenario {
    /// The variant: the file's `variant`, then its `cache`, then the override (each may name
    /// one axis or both; later wins).
    pub fn pick_variant(&self, over: Option<&str>) -> Result<Variant, Error> {
        let mut v = Variant::default();
        if let Some(s) = &self.variant {
            v.set(s)?;
        }
        if let Some(c) = &self.cache {
            if !CACHES.contains(&c.as_str()) {
                return Err(Error::Unknown {
                    what: "cache",
                    name: c.clone(),
                    expected: CACHES.join(", "),
                });
            }
            v.set(c)?;
        }
        if let Some(s) = over {
            v.set(s)?;
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
    fn check_caps(&self, p: &RxParams) -> Result<(), Error> {
        check_range("ops", self.ops.len() as u64, 1, MAX_OPS as u64)?;
        let mut budget = ByteBudget::default();
        for (i, op) in self.ops.iter().enumerate() {
            if let RxOp::Arrive { frames, len, lens } = op {
                let bytes = match (frames, lens) {
                    (Some(n), _) => n.saturating_mul(len.unwrap_or(p.frame_len().into())),
                    (_, Some(l)) => l.iter().fold(0u64, |a, &b| a.saturating_add(b)),
                    _ => 0,
                };
                budget.take(|| format!("ops[{i}]"), bytes)?;
            }
        }
        Ok(())
    }

    pub fn run(&self, opts: &RunOptions) -> Result<Trace, Error> {
        let p = self.params(opts.variant.as_deref())?;
        self.check_caps(&p)?;
        let mut m = RxMachine::new(p);
        let (steps, counters) = trace::drive(&mut m, &self.ops, !opts.counters_only)?;
        Ok(Trace {
            mechanism: "rx".into(),
            variant: p.variant.name(),
            era: p.variant.era(),
            consts: p.consts,
            steps,
            counters,
        })
    }
}
