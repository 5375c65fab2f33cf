//! `skblab kernel`: the model beside the running kernel. The scenario's operations run on
//! real kernel sockets inside a private network namespace, bpftrace reads the kernel's own
//! skbs at its tracepoints, and every judged field gets a verdict: agree or differ.
//!
//! **Call [`main`] first thing, before any thread starts**: like `tap`, it unshares the
//! network namespace (and a mount namespace for tracefs), which moves only the calling thread.
//!
//! One concern per module: [`probe`] (namespaces, tracefs, the bpftrace child), [`peer`]
//! (a TCP peer on the TAP whose window is closed), [`send`] (seed 000: the writes, the
//! tracepoint lines, the model's queue), [`verdict`] (the comparison, testable without root).

mod peer;
mod probe;
mod send;
pub mod verdict;

use crate::cli::read_scenario;
use crate::tap::netns;
use serde::Serialize;
use skblab_core::Scenario;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::ExitCode;
use verdict::{Row, Side};

/// The kernel's listening port on the TAP.
const PORT: u16 = 5001;

#[derive(clap::Args, Debug)]
pub struct KernelArgs {
    /// A scenario (TOML or JSON); today `mechanism = "sendmsg"` with a held queue.
    pub scenario: PathBuf,
    /// The model's variant to set beside the kernel (default: the one that stands for a
    /// kernel of today, `modern`).
    #[arg(long)]
    pub variant: Option<String>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Also write the report (JSON) to this file.
    #[arg(long, value_name = "REPORT")]
    pub out: Option<PathBuf>,
}

/// What one run found.
#[derive(Debug, Serialize)]
pub struct Report {
    pub mechanism: &'static str,
    pub variant: String,
    /// The running kernel (uname -r).
    pub kernel: String,
    pub setup: Setup,
    pub model: Side,
    #[serde(rename = "kernel_side")]
    pub kernel_side: Side,
    pub rows: Vec<Row>,
    /// "agree" or "differ".
    pub verdict: &'static str,
    /// Scenario ops the kernel run leaves out.
    pub not_driven: Vec<String>,
}

/// How the kernel's side was set up.
#[derive(Debug, Serialize)]
pub struct Setup {
    /// mss_now as the kernel has it (tcpi_snd_mss).
    pub mss: u32,
    /// TUN_F_CSUM | TUN_F_TSO4 on the TAP (device.gso).
    pub tso: bool,
    pub mtu: u32,
    /// The window announced before it was closed (tp->max_window).
    pub max_window: u32,
    pub sndbuf: u32,
}

/// `skblab kernel`: exit 0 when every field agrees, 1 when one differs, 2 on an error.
pub fn main(args: &KernelArgs) -> ExitCode {
    match run(args) {
        Ok(r) => {
            let agree = r.verdict == "agree";
            let out = if args.json {
                serde_json::to_string_pretty(&r).expect("reports serialize") + "\n"
            } else {
                render(&r)
            };
            print!("{out}");
            if let Some(p) = &args.out {
                let json = serde_json::to_string_pretty(&r).expect("reports serialize");
                if let Err(e) = std::fs::write(p, json + "\n") {
                    eprintln!("skblab: error: --out {}: {e}", p.display());
                    return ExitCode::from(2);
                }
            }
            if agree {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        Err(e) => {
            eprintln!("skblab: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: &KernelArgs) -> Result<Report, String> {
    let text = read_scenario(&args.scenario).map_err(|e| e.0)?;
    let sc = match Scenario::parse(&text).map_err(|e| e.to_string())? {
        Scenario::Sendmsg(s) => s,
        other => {
            return Err(format!(
                "mechanism = \"{}\": the kernel run covers \"sendmsg\" so far",
                other.mechanism()
            ))
        }
    };
    // Everything the scenario can get wrong is said before anything is set up.
    let variant = send::variant(args.variant.as_deref())?;
    let plan = send::plan(&sc)?;
    let model = send::model(&sc, variant, &plan)?;
    probe::preflight()?;
    netns::preflight()?;
    netns::enter_private_netns()?;
    probe::private_tracefs()?;
    probe::need_tracepoints(send::TRACEPOINTS)?;

    let tap = netns::Tap::open()?;
    let (s, d) = (sc.socket, sc.device);
    netns::set_mtu(netns::TAP_NAME, d.mtu)?;
    tap.set_offload(d.gso)?;
    let listener = TcpListener::bind((netns::KERNEL_IP, PORT))
        .map_err(|e| format!("bind {}:{PORT} in the namespace: {e}", netns::KERNEL_IP))?;
    let tracer = probe::Tracer::start(&send::script())?;
    let max_window = window(s.max_window);
    peer::open_closed(
        &tap,
        &peer::PeerParams {
            port: PORT,
            mss_option: (s.mss + s.tcp_header_len - 20) as u16,
            timestamps: s.tcp_header_len == 32,
            window: max_window,
        },
    )?;
    let (sock, _) = listener
        .accept()
        .map_err(|e| format!("kernel accept: {e}"))?;
    send::set_sndbuf(&sock, s.sndbuf)?;
    let mss = send::kernel_mss(&sock)?;
    if mss != s.mss {
        return Err(format!(
            "the kernel's mss_now is {mss}, the scenario's socket.mss {}: nothing compared",
            s.mss
        ));
    }
    // Let the zero window land before the first write.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let sock = send::write_all(sock, plan.clone())?;
    let lines = tracer.finish()?;
    send::check_nothing_sent(&tap)?;
    drop(sock);
    let kernel_side = send::kernel_side(&lines)?;
    let rows = verdict::compare(&model, &kernel_side);
    Ok(Report {
        mechanism: "sendmsg",
        variant: variant.name().to_string(),
        kernel: kernel_release(),
        setup: Setup {
            mss,
            tso: d.gso,
            mtu: d.mtu,
            max_window,
            sndbuf: s.sndbuf,
        },
        verdict: verdict::verdict(&rows),
        model,
        kernel_side,
        rows,
        not_driven: plan.not_driven,
    })
}

/// The window the runner announces before closing it: the scenario's max_window, or for 0
/// (unbounded) the widest a 16-bit field scaled by 2^7 carries.
fn window(max_window: u32) -> u32 {
    if max_window == 0 {
        65_535 << peer::WSCALE
    } else {
        max_window.min(65_535 << peer::WSCALE) >> peer::WSCALE << peer::WSCALE
    }
}

fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The report as a table: one line per skb, model/kernel in each column.
pub fn render(r: &Report) -> String {
    let mut o = format!(
        "skblab kernel: {} on Linux {} beside the model's `{}`\n\
         setup: TAP, mss {}, TSO {}, mtu {}, peer window {} then 0 (held queue), sndbuf {}\n",
        r.mechanism,
        r.kernel,
        r.variant,
        r.setup.mss,
        if r.setup.tso { "on" } else { "off" },
        r.setup.mtu,
        r.setup.max_window,
        r.setup.sndbuf
    );
    let mark = |ok: bool| if ok { "agree" } else { "DIFFER" };
    let field_ok = |prefix: &str| {
        r.rows
            .iter()
            .filter(|row| row.field == prefix || row.field.starts_with(&format!("{prefix}.")))
            .all(|row| row.agree)
    };
    let pair = |m: Option<u64>, k: Option<u64>| {
        let s = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
        format!("{}/{}", s(m), s(k))
    };
    for row in r.rows.iter().filter(|row| !row.field.starts_with("skb[")) {
        o += &format!(
            "{:<10} model/kernel {:<16} {}\n",
            row.field,
            pair(row.model, row.kernel),
            mark(row.agree)
        );
    }
    o += &format!(
        "{:<5} {:<14} {:<8} {:<9} {:<16} {}\n",
        "skb", "len", "linear", "nr_frags", "truesize (shown)", "verdict"
    );
    for i in 0..r.model.skbs.len().max(r.kernel_side.skbs.len()) {
        let (m, k) = (r.model.skbs.get(i), r.kernel_side.skbs.get(i));
        let col = |f: fn(&verdict::SkbView) -> u64| pair(m.map(f), k.map(f));
        o += &format!(
            "{:<5} {:<14} {:<8} {:<9} {:<16} {}\n",
            i,
            col(|s| s.len),
            col(|s| s.linear),
            col(|s| s.nr_frags),
            col(|s| s.truesize),
            mark(field_ok(&format!("skb[{i}]")))
        );
    }
    if !r.not_driven.is_empty() {
        o += &format!("not driven: {}\n", r.not_driven.join(", "));
    }
    let judged = r.rows.len();
    let differ = r.rows.iter().filter(|row| !row.agree).count();
    o += &format!(
        "verdict: {} ({judged} fields, {differ} differ)\n",
        r.verdict
    );
    o
}
