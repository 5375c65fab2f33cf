//! `skblab tap`: the model's segments on a real wire, with the real Linux TCP stack as the
//! peer, inside a private network namespace.
//!
//! **Call [`run`] first thing in `main`, before any thread starts**: it moves the process
//! into a new network namespace with `unshare(CLONE_NEWNET)`, which moves only the calling
//! thread (it refuses to run if other threads exist).
//!
//! One concern per module: [`socket`] (the kernel's socket and counters), [`plan`] (the send
//! and receive models on this traffic), [`session`] (one transfer), [`report`] (what a run
//! reports, as text or JSON), [`bench`] (throughput against veth); the namespace, the TAP, frames, the TCP endpoint, faults and the capture
//! are the network layer's ([`crate::net`]).

mod bench;
mod plan;
mod report;
mod session;
mod socket;

use crate::net::{faults, netns, pcap, tcp};
use faults::Rates;
pub use report::GsoCheck;
use report::{finish, gso_check, Model, Report};
use session::{Dir, Outcome, Transfer};
use skblab_core::mechanism::Mechanism;
use skblab_core::rx::{self, RxScenario};
use skblab_core::send::SendScenario;
use skblab_core::Scenario;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The largest transfer: the core's cap on a scenario's payload.
const MAX_BYTES: u64 = skblab_core::limits::MAX_TOTAL_BYTES;

/// `tap send --variant`'s help, from the core's table.
fn send_variant_help() -> String {
    let names = SendScenario::VARIANTS.join(", ");
    format!("The send model's variant ({names}); default: the scenario's")
}

/// `tap recv --variant`'s help, from the core's tables of either axis.
fn rx_variant_help() -> String {
    let (alloc, cache) = (rx::ALLOCATORS.join(", "), rx::CACHES.join(", "));
    format!(
        "The receive model's variant: an allocator ({alloc}), an rx cache ({cache}), or \
         ALLOCATOR+CACHE"
    )
}

#[derive(clap::Args, Debug)]
pub struct TapArgs {
    #[command(subcommand)]
    pub cmd: TapCmd,
}

#[derive(clap::Subcommand, Debug)]
pub enum TapCmd {
    /// The scenario's writes, as the model's skbs, to a kernel socket that reads them.
    Send {
        /// A `mechanism = "sendmsg"` scenario (TOML or JSON) that transmits what it writes.
        scenario: PathBuf,
        #[arg(long, help = send_variant_help())]
        variant: Option<String>,
        /// Make the kernel's receive buffer small and its reader pause, so its window closes.
        #[arg(long)]
        zero_window: bool,
        #[command(flatten)]
        wire: WireArgs,
    },
    /// A kernel socket writes a stream; the runner receives, acknowledges and reassembles it.
    Recv {
        /// Bytes the kernel writes.
        #[arg(long, default_value_t = 1 << 20)]
        bytes: u64,
        /// Offloads on: the kernel hands the TAP its own GSO super-packets.
        #[arg(long)]
        gso: bool,
        #[arg(long, help = rx_variant_help())]
        variant: Option<String>,
        #[command(flatten)]
        wire: WireArgs,
    },
    /// Bulk throughput each way, plain and GSO, beside kernel-to-kernel over a veth pair.
    Bench {
        /// Bytes per transfer.
        #[arg(long, default_value_t = 16 << 20)]
        bytes: u64,
        #[arg(long)]
        json: bool,
    },
}

/// Options every transfer takes: output, capture, faults.
#[derive(clap::Args, Debug)]
pub struct WireArgs {
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Capture every frame on the wire to this pcap file.
    #[arg(long, value_name = "FILE")]
    pcap: Option<PathBuf>,
    /// Let --pcap replace an existing file (never a symlink).
    #[arg(long, requires = "pcap")]
    force: bool,
    /// Drop this fraction of TCP frames (each direction).
    #[arg(long, default_value_t = 0.0)]
    drop: f64,
    /// Hold back this fraction of TCP frames behind the next one.
    #[arg(long, default_value_t = 0.0)]
    reorder: f64,
    /// Flip one bit in this fraction of TCP frames.
    #[arg(long, default_value_t = 0.0)]
    corrupt: f64,
    /// Seed of the faults and the payload bytes.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
}

impl WireArgs {
    fn rates(&self) -> Rates {
        Rates {
            drop: self.drop,
            reorder: self.reorder,
            corrupt: self.corrupt,
        }
    }

    /// Bad rates, and a --pcap that cannot be written, refused before anything is set up.
    fn check(&self) -> Result<(), String> {
        self.rates().check()?;
        let pcap = |p: &PathBuf| crate::output::check(p, self.force, "--pcap");
        self.pcap.iter().try_for_each(pcap)
    }
}

/// Entry point of `skblab tap ...`. Must be called before any thread starts (see the module
/// docs).
pub fn run(args: &TapArgs) -> Result<(), String> {
    // Bad flags and scenarios are reported before anything is set up.
    match &args.cmd {
        TapCmd::Send { wire, .. } => wire.check()?,
        TapCmd::Recv { wire, bytes, .. } => wire.check().and_then(|()| check_bytes(*bytes))?,
        TapCmd::Bench { bytes, .. } => check_bytes(*bytes)?,
    }
    let job = match &args.cmd {
        TapCmd::Send {
            scenario,
            variant,
            zero_window,
            wire,
        } => Some(send_job(scenario, variant.as_deref(), *zero_window, wire)?),
        _ => None,
    };
    netns::preflight()?;
    netns::enter_private_netns()?;
    let tap = netns::Tap::open()?;
    match (&args.cmd, job) {
        (TapCmd::Send { wire, .. }, Some(job)) => send(&tap, job, wire),
        (TapCmd::Send { .. }, None) => Err("model bug: `tap send` without its plan".into()),
        (
            TapCmd::Recv {
                bytes,
                gso,
                variant,
                wire,
            },
            _,
        ) => recv(&tap, *bytes, *gso, variant.as_deref(), wire),
        (TapCmd::Bench { bytes, json }, _) => bench::run(&tap, *bytes, *json),
    }
}

fn payload(bytes: u64, seed: u64) -> Arc<Vec<u8>> {
    let mut v = vec![0u8; bytes as usize];
    faults::Rng(seed).fill(&mut v);
    Arc::new(v)
}

fn check_bytes(bytes: u64) -> Result<(), String> {
    if (1..=MAX_BYTES).contains(&bytes) {
        Ok(())
    } else {
        Err(format!(
            "`--bytes` = {bytes} is out of range: allowed 1..={MAX_BYTES}"
        ))
    }
}

fn transfer(tap: &netns::Tap, mut t: Transfer, w: &WireArgs) -> Result<Outcome, String> {
    t.rates = w.rates();
    t.seed = w.seed;
    t.timeout = Duration::from_secs(w.timeout);
    let mut pcap = None;
    if let Some(p) = &w.pcap {
        let f = crate::output::Output::create(p, w.force, "--pcap")?;
        pcap = Some(pcap::Pcap::new(std::io::BufWriter::new(f)).map_err(|e| e.to_string())?);
    }
    let out = session::run(tap, t, pcap.as_mut());
    // A transfer that failed keeps its capture too: the wire shows why.
    let saved = pcap.map_or(Ok(()), |p| {
        let f = p
            .finish()
            .and_then(|b| b.into_inner().map_err(|e| e.into_error()));
        f.map_err(|e| format!("writing the pcap: {e}"))?.commit()
    });
    let out = out?;
    saved?;
    Ok(out)
}

fn base(dir: Dir, gso: bool, payload: Arc<Vec<u8>>) -> Transfer {
    Transfer {
        dir,
        gso,
        payload,
        chunks: Vec::new(),
        rates: Rates::default(),
        seed: 1,
        slow_reader: None,
        port: 5001,
        timeout: Duration::from_secs(60),
        progress: true,
        seg_cap: u64::MAX,
        mtu: 1500,
        csum_offload: false,
    }
}

/// A `tap send` read, planned by the send model and checked, before any namespace exists.
struct SendJob {
    plan: plan::SendPlan,
    transfer: Transfer,
    /// The scenario's `socket.mss`.
    mss: u32,
}

fn send_job(
    path: &std::path::Path,
    variant: Option<&str>,
    zero_window: bool,
    w: &WireArgs,
) -> Result<SendJob, String> {
    let text = crate::cli::read_scenario(path).map_err(|e| e.0)?;
    let sc = Scenario::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let Scenario::Sendmsg(s) = &sc else {
        return Err(format!(
            "{}: `tap send` runs a sendmsg scenario, not `{}`",
            path.display(),
            sc.mechanism()
        ));
    };
    let plan = plan::send_plan(s, variant).map_err(|e| format!("{}: {e}", path.display()))?;
    let total = plan.chunks.last().map_or(0, |c| c.end);
    check_bytes(total)?;
    let gso = s.device.gso && s.device.sg;
    if let Some((&len, _)) = plan.skbs.iter().next_back().filter(|_| gso) {
        if len > tcp::MAX_SUPER_PAYLOAD {
            return Err(format!(
                "an skb of {len} bytes cannot cross the TAP as one IPv4 super-packet (at most {})",
                tcp::MAX_SUPER_PAYLOAD
            ));
        }
    }
    let mtus = netns::TAP_MIN_MTU..=netns::TAP_MAX_MTU;
    if !mtus.contains(&s.device.mtu) {
        return Err(format!(
            "{}: `device.mtu` = {} is out of range for a TAP: allowed {}..={} (the kernel's \
             limit for a TAP, 65535 less its 14-byte Ethernet header; the runner's floor)",
            path.display(),
            s.device.mtu,
            mtus.start(),
            mtus.end()
        ));
    }
    let mut t = base(Dir::Send, gso, payload(total, w.seed));
    t.chunks = plan.chunks.clone();
    t.seg_cap = u64::from(s.socket.mss);
    t.mtu = s.device.mtu;
    t.slow_reader = zero_window.then_some(socket::SlowReader {
        rcvbuf: 16 << 10,
        pause: Duration::from_millis(300),
    });
    Ok(SendJob {
        plan,
        transfer: t,
        mss: s.socket.mss,
    })
}

fn send(tap: &netns::Tap, job: SendJob, w: &WireArgs) -> Result<(), String> {
    let SendJob {
        plan,
        transfer: t,
        mss,
    } = job;
    let outcome = transfer(tap, t, w)?;
    let mut notes = Vec::new();
    if outcome.mss < u64::from(mss) {
        notes.push(format!(
            "the scenario's mss is {mss} but the connection allows only {} per segment: \
             segments are cut at {}",
            outcome.mss, outcome.mss
        ));
    }
    finish(
        Report {
            command: "tap send",
            model: Model {
                mechanism: SendScenario::NAME,
                variant: plan.variant,
                counters: plan.counters,
            },
            outcome,
            skbs: plan.skbs,
            gso_check: None,
            notes,
        },
        w.json,
    )
}

fn recv(
    tap: &netns::Tap,
    bytes: u64,
    gso: bool,
    variant: Option<&str>,
    w: &WireArgs,
) -> Result<(), String> {
    check_bytes(bytes)?;
    // Check the variant before the transfer, on an empty run.
    plan::rx_variant(variant)?;
    let outcome = transfer(tap, base(Dir::Recv, gso, payload(bytes, w.seed)), w)?;
    let (name, counters) = plan::receive(variant, outcome.mss, &outcome.arrivals)?;
    let gso_check = gso_check(&outcome);
    finish(
        Report {
            command: "tap recv",
            model: Model {
                mechanism: RxScenario::NAME,
                variant: name,
                counters,
            },
            outcome,
            skbs: BTreeMap::new(),
            gso_check,
            notes: Vec::new(),
        },
        w.json,
    )
}
