//! `skblab tap`: the model's segments on a real wire, with the real Linux TCP stack as the
//! peer, inside a private network namespace.
//!
//! **Call [`run`] first thing in `main`, before any thread starts**: it moves the process
//! into a new network namespace with `unshare(CLONE_NEWNET)`, which moves only the calling
//! thread (it refuses to run if other threads exist).
//!
//! One concern per module: [`socket`] (the kernel's socket and counters), [`plan`] (the send
//! and receive models on this traffic), [`session`] (one transfer), [`bench`] (throughput
//! against veth); the namespace, the TAP, frames, the TCP endpoint, faults and the capture
//! are the network layer's ([`crate::net`]).

mod bench;
mod plan;
mod session;
mod socket;

use crate::net::{faults, netns, pcap, tcp};
use faults::Rates;
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

/// The kernel's GSO super-packets beside the model's size goal for the same MSS and limit.
#[derive(Debug, serde::Serialize)]
pub struct GsoCheck {
    pub mss: u64,
    pub gso_max_size: u32,
    pub model_size_goal: u32,
    pub kernel_largest: u32,
    /// The kernel's largest equals the model's size goal.
    pub agree: bool,
    /// The kernel built a packet above the model's size goal: a fidelity bug in the model.
    /// (Below it is no contradiction: under loss the congestion window keeps packets small.)
    pub kernel_exceeds_model: bool,
}

/// The model's counters on the real traffic.
#[derive(Debug, serde::Serialize)]
struct Model {
    mechanism: &'static str,
    variant: String,
    counters: skblab_core::trace::Counters,
}

#[derive(Debug, serde::Serialize)]
struct Report {
    command: &'static str,
    model: Model,
    #[serde(flatten)]
    outcome: Outcome,
    /// The skbs the runner sent, by payload size -> how many (send).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    skbs: BTreeMap<u64, u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gso_check: Option<GsoCheck>,
    /// What the run could not do, said plainly.
    notes: Vec<String>,
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

/// The kernel's largest super-packet against `tcp_xmit_size_goal` for the same MSS, the
/// default GSO limit and the window the runner advertised.
fn gso_check(o: &Outcome) -> Option<GsoCheck> {
    let largest = *o.kernel_super_packets.keys().last()?;
    let goal = plan::size_goal(o.mss as u32, 8 << 20);
    Some(GsoCheck {
        mss: o.mss,
        gso_max_size: plan::today().1.gso_max_size,
        model_size_goal: goal,
        kernel_largest: largest,
        agree: largest == goal,
        kernel_exceeds_model: largest > goal,
    })
}

fn finish(r: Report, json: bool) -> Result<(), String> {
    if json {
        let text = serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?;
        session::print(&format!("{text}\n"))?;
    } else {
        session::print(&render(&r))?;
    }
    if !r.outcome.intact {
        return Err(format!(
            "the bytes differ: sent sha256 {}, received {}",
            r.outcome.sha256_sent, r.outcome.sha256_received
        ));
    }
    if let Some(g) = r.gso_check.as_ref().filter(|g| g.kernel_exceeds_model) {
        return Err(format!(
            "fidelity bug: the kernel's largest GSO super-packet is {} bytes but the model's \
             size_goal is {} (mss {}, GSO limit {})",
            g.kernel_largest, g.model_size_goal, g.mss, g.gso_max_size
        ));
    }
    Ok(())
}

/// 1234567 -> "1,234,567".
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let groups: Vec<&str> = s
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|g| std::str::from_utf8(g).expect("ASCII digits"))
        .collect();
    groups.join(",")
}

/// `  label      a, b, c` wrapped under itself at 100 columns.
fn wrapped(label: &str, items: &[String]) -> String {
    let indent = " ".repeat(29);
    let mut out = format!("  {label:<26} ");
    let mut col = out.len();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            if col + 2 + item.len() > 100 {
                out.push_str(",\n");
                out.push_str(&indent);
                col = indent.len();
            } else {
                out.push_str(", ");
                col += 2;
            }
        }
        out.push_str(item);
        col += item.len();
    }
    out.push('\n');
    out
}

fn render(r: &Report) -> String {
    use std::fmt::Write;
    let o = &r.outcome;
    let s = &o.runner;
    let mut t = String::new();
    let way = match o.dir {
        Dir::Send => "runner (model skbs) -> kernel socket",
        Dir::Recv => "kernel socket -> runner",
    };
    let mode = if o.gso {
        "GSO super-packets"
    } else {
        "plain frames"
    };
    let _ = writeln!(t, "{}: {way}, {mode}, MSS {}", r.command, o.mss);
    let verdict = if o.intact { "intact" } else { "CORRUPTED" };
    let _ = writeln!(
        t,
        "  {:<26} {verdict}, sha256 {}",
        "bytes",
        &o.sha256_received[..16]
    );
    let _ = writeln!(
        t,
        "  {:<26} {} in {:.3} s = {:.2} Gbit/s",
        "payload",
        thousands(o.bytes),
        o.seconds,
        o.gbit_per_s
    );
    let _ = writeln!(t, "  {:<26} {:>14} {:>14}", "", "to kernel", "to runner");
    let rows: [(&str, u64, u64); 6] = [
        ("frames", s.frames_out, s.frames_in),
        ("wire segments", s.segments_out, s.segments_in),
        ("GSO super-packets", s.super_packets_out, s.super_packets_in),
        ("payload bytes on the wire", s.bytes_out, s.bytes_in),
        (
            "dropped by --drop",
            o.faults_to_kernel.dropped,
            o.faults_to_runner.dropped,
        ),
        (
            "corrupted by --corrupt",
            o.faults_to_kernel.corrupted,
            o.faults_to_runner.corrupted,
        ),
    ];
    for (name, a, b) in rows {
        let _ = writeln!(t, "  {name:<26} {:>14} {:>14}", thousands(a), thousands(b));
    }
    let _ = writeln!(
        t,
        "  {:<26} {} segments ({} timeouts, {} fast recoveries, {} RACK-lost segments \
         ({} of them resends), {} loss probes, {} zero-window probes)",
        "runner retransmitted",
        s.retransmitted_segments,
        s.timeouts,
        s.fast_retransmits,
        s.rack_lost,
        s.rack_lost_resends,
        s.loss_probes,
        s.zero_window_probes
    );
    let _ = writeln!(
        t,
        "  {:<26} {} after timeouts, {} after fast recoveries; D-SACKs {} received, {} sent \
         ({} once both FINs were out)",
        "runner undid reductions",
        s.loss_undos,
        s.recovery_undos,
        s.dsacks_in,
        s.dsacks_out,
        s.dsacks_out_closing
    );
    if s.peer_fins_again > 0 {
        let _ = writeln!(
            t,
            "  {:<26} {}, each copy acknowledged (an ACK that finds the kernel's socket \
             closed is answered with a RST: Tcp.OutRsts)",
            "kernel's FIN sent again", s.peer_fins_again
        );
    }
    if !r.skbs.is_empty() {
        let list: Vec<String> = r
            .skbs
            .iter()
            .rev()
            .map(|(len, n)| format!("{n} x {}", thousands(*len)))
            .collect();
        let _ = writeln!(t, "  {:<26} {}", "skbs sent (bytes)", list.join(", "));
    }
    let mc: Vec<String> = r
        .model
        .counters
        .0
        .iter()
        .filter(|(_, v)| *v > 0)
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let label = format!("{} ({})", r.model.mechanism, r.model.variant);
    t.push_str(&wrapped(
        "model on this traffic",
        &[vec![label], mc].concat(),
    ));
    let nz: Vec<String> = o
        .kernel_counters
        .iter()
        .filter(|(_, v)| **v > 0)
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    t.push_str(&wrapped("kernel counters", &nz));
    if let Some(g) = &r.gso_check {
        let sizes: Vec<String> = o
            .kernel_super_packets
            .iter()
            .rev()
            .take(4)
            .map(|(len, n)| format!("{n} x {}", thousands(u64::from(*len))))
            .collect();
        let _ = writeln!(
            t,
            "  {:<26} {} ...",
            "kernel GSO super-packets",
            sizes.join(", ")
        );
        let verdict = if g.agree {
            "agree"
        } else if g.kernel_exceeds_model {
            "DISAGREE: the kernel builds larger packets, a fidelity bug in the model"
        } else {
            "the kernel never reached the goal here (its congestion window kept packets smaller)"
        };
        let _ = writeln!(
            t,
            "  {:<26} kernel's largest {} = {} x {}; model tcp_xmit_size_goal {} (GSO limit {}): {verdict}",
            "size goal",
            thousands(u64::from(g.kernel_largest)),
            u64::from(g.kernel_largest) / g.mss.max(1),
            g.mss,
            thousands(u64::from(g.model_size_goal)),
            thousands(u64::from(g.gso_max_size)),
        );
    }
    for n in &r.notes {
        let _ = writeln!(t, "  note: {n}");
    }
    t
}
