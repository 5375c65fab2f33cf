//! `skblab kernel`: the model beside the running kernel. The scenario's operations run on
//! real kernel sockets inside a private network namespace, bpftrace reads the kernel's own
//! skbs at its tracepoints, and every judged field gets a verdict: agree or differ.
//!
//! **Call [`main`] first thing, before any thread starts**: like `tap`, it unshares the
//! network namespace (and a mount namespace for tracefs), which moves only the calling thread.
//!
//! One concern per module: [`probe`] (namespaces, tracefs, the bpftrace child), [`peer`]
//! (the runner's TCP endpoint, `net::tcp`, as the peer on the TAP: its window closed for seed
//! 000, the model's skbs written for 001 and 002), [`send`] (seed 000: the writes, the
//! tracepoint lines, the model's queue), [`mptcp`] (seed 003: MPTCP over lo, the DSS
//! mappings), [`rx`] (seeds 002 and 001: skbs into a kernel socket on CPU 0, read on CPU 1,
//! where each is freed), [`napi_frags`] (seed 001 judged: UDP frames through a TAP's NAPI
//! frags path, the pages of CPU 0's frag cache), [`pinned`] (threads pinned to a CPU, NET_RX raised there),
//! [`verdict`] (the comparison, testable without root).

mod mptcp;
mod napi_frags;
mod napi_tcp;
mod napi_writer;
mod peer;
mod pinned;
mod probe;
mod rx;
mod send;
pub mod verdict;

use crate::cli::read_scenario;
use crate::net::link::WSCALE;
use crate::net::netns;
use skblab_core::consts::wire::mss_option;
use skblab_core::kernel_report::PAGE_FIELDS;
use skblab_core::mechanism::Mechanism;
use skblab_core::mptcp::MptcpScenario;
use skblab_core::rx::RxScenario;
use skblab_core::send::SendScenario;
use skblab_core::{scenario, Scenario};
use std::io::Write as _;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::ExitCode;
use verdict::{RunError, Side, SkbView, Verdict};

/// The kernel's listening port on the TAP.
const PORT: u16 = 5001;

#[derive(clap::Args, Debug)]
pub struct KernelArgs {
    /// A scenario (TOML or JSON) of any mechanism.
    pub scenario: PathBuf,
    #[arg(long, help = variant_help())]
    pub variant: Option<String>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Also write the report (JSON) to this new file (never through a symlink).
    #[arg(long, value_name = "REPORT")]
    pub out: Option<PathBuf>,
    /// Let --out replace an existing file (never a symlink).
    #[arg(long, requires = "out")]
    pub force: bool,
}

pub use skblab_core::kernel_report::Report;

/// `--variant`'s help: each mechanism's variant of today, from the core's table.
fn variant_help() -> String {
    let today: Vec<String> = (scenario::NAMES.iter())
        .map(|m| format!("`{}` for {}", m.today, m.name))
        .collect();
    format!(
        "The model's variant to set beside the kernel (default: the one that stands for a \
         kernel of today: {})",
        today.join(", ")
    )
}

/// `skblab kernel`: exit 0 when every field agrees, 1 when one differs, 2 on an error (or
/// a trace that could not be trusted: "inconclusive").
pub fn main(args: &KernelArgs) -> ExitCode {
    match run_and_emit(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            crate::output::error(&e);
            ExitCode::from(2)
        }
    }
}

/// Starts `--out` before anything runs (an existing file or a symlink is refused at once),
/// runs, writes and names `--out` (so a stdout that fails loses nothing; a run that fails or
/// is killed leaves no file), then prints the report. Returns whether every field agrees.
fn run_and_emit(args: &KernelArgs) -> Result<bool, String> {
    let out = match &args.out {
        Some(p) => Some((p, crate::output::Output::create(p, args.force, "--out")?)),
        None => None,
    };
    let r = run(args)?;
    let json = json(&r);
    if let Some((p, mut f)) = out {
        f.write_all(json.as_bytes())
            .map_err(|e| format!("--out {}: {e}", p.display()))?;
        f.commit()?;
    }
    crate::output::stdout(&if args.json { json } else { render(&r) })?;
    Ok(r.verdict == Verdict::Agree)
}

/// The report as `--out` and `--json` write it.
fn json(r: &Report) -> String {
    serde_json::to_string_pretty(r).expect("reports serialize") + "\n"
}

fn run(args: &KernelArgs) -> Result<Report, String> {
    let text = read_scenario(&args.scenario).map_err(|e| e.0)?;
    let sc = Scenario::parse(&text).map_err(|e| e.to_string())?;
    let ops = sc.op_count();
    let report = match sc {
        Scenario::Sendmsg(sc) => run_send(&sc, args.variant.as_deref()),
        Scenario::Mptcp(sc) => run_mptcp(&sc, args.variant.as_deref()),
        Scenario::Rx(sc) if napi_tcp::applies(&sc) => run_napi_tcp(&sc, args.variant.as_deref()),
        Scenario::Rx(sc) if napi_frags::applies(&sc) => {
            run_napi_frags(&sc, args.variant.as_deref())
        }
        Scenario::Rx(sc) => run_rx(&sc, args.variant.as_deref()),
    }?;
    // A write after an op left out is refused, so the driven ops are a prefix.
    Ok(Report {
        scenario: text,
        driven: ops - report.not_driven.len(),
        ..report
    })
}

/// Checks the machine, then enters private network and mount namespaces with tracefs.
fn isolate(tracepoints: &[&str]) -> Result<(), String> {
    probe::preflight()?;
    netns::preflight()?;
    netns::enter_private_netns()?;
    probe::private_tracefs()?;
    probe::need_tracepoints(tracepoints)
}

/// Seed 000: the held write queue on the TAP (see [`send`]).
fn run_send(sc: &skblab_core::send::SendScenario, variant: Option<&str>) -> Result<Report, String> {
    // Everything the scenario can get wrong is said before anything is set up.
    let variant = send::variant(variant)?;
    let plan = send::plan(sc)?;
    let model = send::model(sc, variant, &plan)?;
    isolate(send::TRACEPOINTS)?;
    let ((mss, kernel_side), why) = trusted(|n| send_once(sc, &plan, PORT + n))?;
    let d = sc.device;
    let setup = serde_json::json!({
        "path": "TAP",
        "mss": mss,
        "tso": d.gso,
        "mtu": d.mtu,
        "peer_window": format!("{} then 0 (held queue)", window(sc.socket.max_window)),
        "sndbuf": sc.socket.sndbuf,
        "untrusted_runs_retried": why.len(),
    });
    report(
        SendScenario::NAME,
        variant.name(),
        setup,
        model,
        kernel_side,
        plan.not_driven,
    )
}

/// One kernel run of seed 000 with the kernel listening on `port`: its mss_now and its
/// queue's skbs.
fn send_once(
    sc: &skblab_core::send::SendScenario,
    plan: &send::Plan,
    port: u16,
) -> Result<(u32, Side), RunError> {
    let tap = netns::Tap::open()?;
    let (s, d) = (sc.socket, sc.device);
    netns::set_mtu(netns::TAP_NAME, d.mtu)?;
    tap.set_offload(d.gso)?;
    let listener = TcpListener::bind((netns::KERNEL_IP, port))
        .map_err(|e| format!("bind {}:{port} in the namespace: {e}", netns::KERNEL_IP))?;
    let tracer = probe::Tracer::start(&send::script())?;
    peer::open_closed(
        &tap,
        &peer::PeerParams {
            port,
            mss_option: mss_option(s.mss, s.timestamps()) as u16,
            timestamps: s.timestamps(),
            window: window(s.max_window),
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
        )
        .into());
    }
    // Let the zero window land before the first write.
    std::thread::sleep(std::time::Duration::from_millis(50));
    let sock = send::write_all(sock, plan.clone(), true, send::WHEN_FULL)?;
    let lines = tracer.finish()?;
    send::check_nothing_sent(&tap)?;
    drop(sock);
    Ok((mss, send::kernel_side(&lines, plan.bytes())?))
}

/// Seed 003: MPTCP over lo, corked (see [`mptcp`]).
fn run_mptcp(sc: &MptcpScenario, variant: Option<&str>) -> Result<Report, String> {
    let variant = variant.unwrap_or(MptcpScenario::TODAY);
    let (writes, not_driven) = mptcp::plan(sc)?;
    let model = mptcp::model(sc, variant, writes.len())?;
    isolate(mptcp::TRACEPOINTS)?;
    let mtu = sc.subflows[0].mtu;
    let ((kernel_side, foreign), why) = trusted(|n| {
        let (lines, written) = mptcp::run_kernel(mtu, writes.clone(), mptcp::PORT + n)?;
        Ok(mptcp::kernel_side(&lines, written)?)
    })?;
    let setup = serde_json::json!({
        "path": "lo, MPTCP to MPTCP",
        "mtu": mtu,
        "warm_up_bytes": mptcp::WARM_UP,
        "tail": "held by TCP_CORK",
        "mappings": "this connection's (its data_seq range, MPTCP_INFO write_seq), whole \
            and contiguous",
        "other_connections_sightings_left_out": foreign,
        "untrusted_runs_retried": why.len(),
    });
    report(
        MptcpScenario::NAME,
        variant,
        setup,
        model,
        kernel_side,
        not_driven,
    )
}

/// How many kernel runs a comparison may take when a trace cannot be trusted.
const TRIES: usize = 3;

/// Runs `attempt(n)` (n = 0, 1, ...: a run may take ports of its own, as a torn-down
/// connection lingers) until one gives a trace that can be trusted, at most [`TRIES`]
/// times. An untrusted run (its trace, or a kernel too slow: [`RunError::Untrusted`]) is
/// retried; any other error ends the comparison. Returns the result and why the runs
/// before it were not trusted.
fn trusted<T>(
    mut attempt: impl FnMut(u16) -> Result<T, RunError>,
) -> Result<(T, Vec<String>), String> {
    let mut why = Vec::new();
    loop {
        let verdict::Inconclusive(w) = match attempt(why.len() as u16) {
            Ok(t) => return Ok((t, why)),
            Err(RunError::Untrusted(untrusted)) => untrusted,
            Err(RunError::Failed(e)) => return Err(e),
        };
        why.push(w);
        if why.len() == TRIES {
            return Err(inconclusive(&why));
        }
    }
}

/// The error for a comparison no run could make: every run's reason.
fn inconclusive(why: &[String]) -> String {
    format!(
        "inconclusive: no verdict, the trace could not be trusted in {} runs: {}",
        why.len(),
        why.join("; ")
    )
}

/// Seeds 002 and 001: skbs into a kernel socket through the TAP on CPU 0, read on CPU 1
/// (see [`rx`]).
fn run_rx(sc: &RxScenario, variant: Option<&str>) -> Result<Report, String> {
    let variant = variant.unwrap_or(RxScenario::TODAY);
    let model = rx::model(sc, variant)?;
    let defer_max = rx::defer_max();
    isolate(rx::TRACEPOINTS)?;
    let frees = (model.side.skbs.iter())
        .filter(|s| s.free_cpu.is_some())
        .count();
    let (lines, why) =
        trusted(|n| rx::run_kernel(rx::PORT + n, sc.socket.mss, sc.app.cpu, &model.steps, frees))?;
    let (kernel_side, pages) = rx::kernel_side(&lines)?;
    let setup = serde_json::json!({
        "path": "TAP, no NAPI: tun_get_user -> netif_receive_skb on CPU 0",
        "skbs": "one TAP write per skb the model's GRO delivers",
        "reader_cpu": sc.app.cpu,
        "softirq_cpu": skblab_core::rx::BH_CPU,
        "skb_defer_max": defer_max,
        "free_cpu": "the CPU that freed the consumed skb (or whose defer list holds it, model)",
        "untrusted_runs_retried": why.len(),
    });
    let mut r = report(
        RxScenario::NAME,
        variant,
        setup,
        model.side,
        kernel_side,
        Vec::new(),
    )?;
    let by_order = |m: &std::collections::BTreeMap<u32, u64>| -> serde_json::Value {
        m.iter()
            .map(|(order, n)| (format!("order {order}"), serde_json::Value::from(*n)))
            .collect::<serde_json::Map<_, _>>()
            .into()
    };
    r.shown.insert(
        "kernel_pages".into(),
        serde_json::json!({
            "compared run (tun_alloc_skb: alloc_skb_with_frags)": by_order(&pages[0]),
            "the same payload as MSS frames (tun_build_skb: task_frag)": by_order(&pages[1]),
            "why not judged": "a TAP allocates in the writer's task, not from a driver's \
                netdev_alloc_frag / napi_alloc_frag cache; slab refills count too \
                (docs/kernel-oracle.md)",
        }),
    );
    r.shown
        .insert("model_pages".into(), serde_json::json!(model.pages));
    Ok(r)
}

/// Seed 001: the frag cache's pages through tun's NAPI frags path (see [`napi_frags`]).
fn run_napi_frags(
    sc: &skblab_core::rx::RxScenario,
    variant: Option<&str>,
) -> Result<Report, String> {
    let variant = variant.unwrap_or(RxScenario::TODAY);
    let reader = napi_frags::check(sc)?;
    let (payloads, model) = napi_frags::model(sc, variant)?;
    isolate(napi_frags::TRACEPOINTS)?;
    let (kernel, why) = trusted(|_| {
        let (lines, first) = napi_writer::run_kernel(&payloads, reader)?;
        Ok(napi_frags::kernel_pages(&lines, first, &payloads)?)
    })?;
    let setup = serde_json::json!({
        "path": "TAP with IFF_NAPI | IFF_NAPI_FRAGS: writev -> tun_napi_alloc_frags \
            (netdev_alloc_frag: CPU 0's napi_alloc_cache.page) -> napi_gro_frags",
        "frame": "one writev: Ethernet + IPv4 + UDP headers, then the payload",
        "reader": format!("{reader:?} on CPU 0"),
        "first_frame": "the first refill of CPU 0's cache (held frames before it prime it)",
        "untrusted_runs_retried": why.len(),
    });
    let pages = |cache| Side {
        frag_cache: Some(cache),
        ..Side::default()
    };
    report(
        RxScenario::NAME,
        variant,
        setup,
        pages(model),
        pages(kernel),
        Vec::new(),
    )
}

/// TCP's receive coalescing through tun's NAPI frags path (see [`napi_tcp`]).
fn run_napi_tcp(sc: &RxScenario, variant: Option<&str>) -> Result<Report, String> {
    let variant = variant.unwrap_or(RxScenario::TODAY);
    let (model, steps, payloads) = napi_tcp::model(sc, variant)?;
    isolate(napi_tcp::TRACEPOINTS)?;
    let (kernel, why) = trusted(|n| {
        let port = napi_tcp::PORT + n;
        let (lines, first) = napi_writer::run_tcp(port, sc.nic.gro, &steps, &payloads)?;
        Ok(napi_tcp::kernel_side(&lines, first, &payloads)?)
    })?;
    let setup = serde_json::json!({
        "path": "TAP with IFF_NAPI | IFF_NAPI_FRAGS: writev -> tun_napi_alloc_frags -> \
            napi_gro_frags, napi_complete -> tcp_v4_rcv on CPU 0",
        "frame": "one writev: virtio-net, Ethernet, IPv4 and TCP headers, then the payload",
        "gro": sc.nic.gro,
        "reader_cpu": napi_tcp::READER_CPU,
        "first_frame": "a fresh page of CPU 0's cache (held UDP frames before it prime it)",
        "merged": "skbs tcp_try_coalesce merged into this one, freed at arrival on CPU 0",
        "untrusted_runs_retried": why.len(),
    });
    report(RxScenario::NAME, variant, setup, model, kernel, Vec::new())
}

fn report(
    mechanism: &'static str,
    variant: &str,
    setup: serde_json::Value,
    model: Side,
    kernel_side: Side,
    not_driven: Vec<String>,
) -> Result<Report, String> {
    let rows = verdict::compare(&model, &kernel_side);
    let serde_json::Value::Object(setup) = setup else {
        unreachable!("setup is an object literal")
    };
    Ok(Report {
        mechanism: mechanism.to_string(),
        variant: variant.to_string(),
        kernel: kernel_release(),
        setup,
        verdict: Verdict::of(&rows),
        model,
        kernel_side,
        rows,
        not_driven,
        scenario: String::new(),
        driven: 0,
        shown: serde_json::Map::new(),
    })
}

/// The window the runner announces before closing it: the scenario's max_window, or for 0
/// (unbounded) the widest a 16-bit field scaled by 2^[`WSCALE`] carries.
fn window(max_window: u32) -> u32 {
    if max_window == 0 {
        65_535 << WSCALE
    } else {
        max_window.min(65_535 << WSCALE) >> WSCALE << WSCALE
    }
}

fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn mark(ok: bool) -> &'static str {
    if ok {
        "agree"
    } else {
        "DIFFER"
    }
}

fn pair(m: Option<u64>, k: Option<u64>) -> String {
    let s = |v: Option<u64>| v.map_or("-".to_string(), |v| v.to_string());
    format!("{}/{}", s(m), s(k))
}

/// `n` skbs or pages (`what`) as lines of `columns`, each cell model/kernel
/// (`cell(i, column)`), each line marked by its rows' verdict; nothing when `n` is 0.
fn table(
    r: &Report,
    what: &str,
    columns: &[&str],
    n: usize,
    cell: impl Fn(usize, usize) -> (Option<u64>, Option<u64>),
) -> String {
    if n == 0 || columns.is_empty() {
        return String::new();
    }
    let mut o = format!("{what:<5}");
    for name in columns {
        o += &format!(" {name:<16}");
    }
    o += " verdict\n";
    for i in 0..n {
        o += &format!("{i:<5}");
        for c in 0..columns.len() {
            let (m, k) = cell(i, c);
            o += &format!(" {:<16}", pair(m, k));
        }
        let prefix = format!("{what}[{i}].");
        let ok = (r.rows.iter())
            .filter(|row| row.field.starts_with(&prefix))
            .all(|row| row.agree);
        o += &format!(" {}\n", mark(ok));
    }
    o
}

/// The report as a table: the totals, then one line per skb or page, model/kernel in each
/// column.
pub fn render(r: &Report) -> String {
    let setup: Vec<String> = r
        .setup
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k} {s}"),
            v => format!("{k} {v}"),
        })
        .collect();
    let mut o = format!(
        "skblab kernel: {} on Linux {} beside the model's `{}`\nsetup: {}\n",
        r.mechanism,
        r.kernel,
        r.variant,
        setup.join(", ")
    );
    let rows = || r.rows.iter().filter(|row| !row.field.contains('['));
    let width = rows().map(|row| row.field.len()).max().unwrap_or(0).max(10);
    for row in rows() {
        o += &format!(
            "{:<width$} model/kernel {:<16} {}\n",
            row.field,
            pair(row.model, row.kernel),
            mark(row.agree)
        );
    }
    // The columns either side has, judged first, then truesize (shown only).
    let shown: (&str, fn(&SkbView) -> Option<u64>) = ("truesize(shown)", |s| s.truesize);
    let (m, k) = (&r.model.skbs, &r.kernel_side.skbs);
    let cols: Vec<_> = verdict::judged()
        .chain([shown])
        .filter(|(_, get)| m.iter().chain(k).any(|s| get(s).is_some()))
        .collect();
    let names: Vec<&str> = cols.iter().map(|(name, _)| *name).collect();
    o += &table(r, "skb", &names, m.len().max(k.len()), |i, c| {
        let get = cols[c].1;
        (m.get(i).and_then(get), k.get(i).and_then(get))
    });
    let (m, k) = (r.model.pages(), r.kernel_side.pages());
    let names = PAGE_FIELDS.map(|(name, _)| name);
    o += &table(r, "page", &names, m.len().max(k.len()), |i, c| {
        let get = PAGE_FIELDS[c].1;
        (m.get(i).map(get), k.get(i).map(get))
    });
    if !r.not_driven.is_empty() {
        o += &format!("not driven: {}\n", r.not_driven.join(", "));
    }
    for (k, v) in &r.shown {
        o += &format!("shown, not judged: {k} {v}\n");
    }
    let judged = r.rows.len();
    let differ = r.rows.iter().filter(|row| !row.agree).count();
    o += &format!(
        "verdict: {} ({judged} fields, {differ} differ)\n",
        r.verdict
    );
    o
}

/// An rx scenario from its text, for the tests of the rx runs.
#[cfg(test)]
fn rx_scenario(text: &str) -> skblab_core::rx::RxScenario {
    match skblab_core::Scenario::parse(text).unwrap() {
        skblab_core::Scenario::Rx(s) => s,
        _ => panic!("not an rx scenario"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `--out` writes, the playground reads back as the same report: one format, the
    /// core's, on both ends.
    #[test]
    fn a_written_report_reads_back_in_the_core() {
        let skb = SkbView {
            len: 100,
            alloc_cpu: Some(0),
            free_cpu: Some(1),
            ..SkbView::default()
        };
        let model = Side {
            skbs: vec![skb],
            ..Side::default()
        };
        let kernel_side = Side {
            skbs: vec![skb, skb],
            ..model.clone()
        };
        let setup = serde_json::json!({ "frames": 2, "mtu": 1500 });
        let mut r = report("rx", "modern+defer-free", setup, model, kernel_side, vec![]).unwrap();
        r.scenario = "mechanism = \"rx\"\n[[ops]]\nop = \"arrive\"\nframes = 2\n".into();
        r.driven = 1;
        r.shown.insert("model_pages".into(), serde_json::json!(1));
        let text = json(&r);
        assert_eq!(skblab_core::kernel_report::Report::parse(&text), Ok(r));
        let lane = skblab_core::kernel_report::KernelReport::parse(&text).unwrap();
        assert_eq!(lane.verdict, Verdict::Differ);
        assert_eq!(lane.columns(), ["len", "alloc_cpu", "free_cpu"]);
        assert_eq!(lane.skbs[1][0].model, None);
    }

    /// Each untrusted run (a spoiled trace, a kernel too slow) is retried on the next
    /// number; a trusted one ends the retries; any other error ends the comparison at once.
    #[test]
    fn untrusted_runs_are_retried_then_inconclusive() {
        let mut tried = Vec::new();
        let runs = |n: u16| -> Result<u16, RunError> {
            match n {
                0 => Err(verdict::too_slow("late")),
                1 => Err(verdict::Inconclusive("spoiled".into()).into()),
                _ => Ok(n),
            }
        };
        let (n, why) = trusted(|n| {
            tried.push(n);
            runs(n)
        })
        .unwrap();
        assert_eq!((n, tried), (2, vec![0, 1, 2]));
        assert_eq!(why, ["too slow under load: late", "spoiled"]);
        let e = trusted(|_| -> Result<(), _> { Err(verdict::too_slow("late")) }).unwrap_err();
        assert!(e.starts_with("inconclusive: no verdict"), "{e}");
        assert_eq!(e.matches("late").count(), TRIES, "{e}");
        let mut calls = 0;
        let e = trusted(|_| -> Result<(), RunError> {
            calls += 1;
            Err("bind: address in use".to_string().into())
        })
        .unwrap_err();
        assert_eq!((e.as_str(), calls), ("bind: address in use", 1));
    }

    #[test]
    fn the_table_marks_the_skb_that_differs_and_ends_with_the_verdict() {
        let skb = |len, nr_frags| SkbView {
            len,
            linear: Some(0),
            nr_frags: Some(nr_frags),
            truesize: Some(len + 896),
            ..SkbView::default()
        };
        let model = Side {
            size_goals: vec![65160],
            skbs: vec![skb(65160, 2), skb(100, 1)],
            frag_cache: None,
        };
        let mut kernel_side = model.clone();
        kernel_side.skbs[1].nr_frags = Some(2);
        let r = report(
            "sendmsg",
            "modern",
            serde_json::json!({ "mss": 1448 }),
            model,
            kernel_side,
            vec!["ops[1] (transmit)".into()],
        )
        .unwrap();
        let t = render(&r);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[1], "setup: mss 1448");
        assert!(
            lines[2].starts_with("size_goal") && lines[2].ends_with("agree"),
            "{t}"
        );
        assert!(
            lines[5].starts_with("0 ") && lines[5].ends_with("agree"),
            "{t}"
        );
        assert!(
            lines[6].starts_with("1 ") && lines[6].ends_with("DIFFER"),
            "{t}"
        );
        assert!(lines[6].contains("1/2"), "{t}");
        assert_eq!(lines[7], "not driven: ops[1] (transmit)");
        assert_eq!(lines[8], "verdict: differ (8 fields, 1 differ)");
    }
}
