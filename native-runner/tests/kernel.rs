//! `skblab kernel` against the running kernel, each run in a fresh process (the binary
//! unshares its own network and mount namespaces). They need root, /dev/net/tun, bpftrace
//! and kernel BTF; where any is missing they say so and fail, unless SKBLAB_ALLOW_NO_TAP=1
//! asks to skip them (visibly), as the TAP tests do.

mod common;

use common::{euid_is_root, skblab_unprivileged, Scratch};

use serde_json::Value;
use skblab_core::kernel_report::{KernelReport, Report, Verdict};
use skblab_core::{RunOptions, Scenario};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Whether this machine can run the kernel tests; prints why not, and fails unless skipping
/// is explicitly allowed.
fn kernel_available(test: &str) -> bool {
    let mut missing = Vec::new();
    if !euid_is_root() {
        missing.push("root");
    }
    if std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")
        .is_err()
    {
        missing.push("a usable /dev/net/tun");
    }
    if !std::path::Path::new("/usr/bin/bpftrace").exists() {
        missing.push("bpftrace (apt-get install bpftrace)");
    }
    if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
        missing.push("kernel BTF");
    }
    common::runnable(test, &missing)
}

fn scenario(name: &str, text: &str) -> Scratch {
    Scratch::file(&format!("{name}.toml"), text)
}

fn skblab_kernel(path: &Path, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skblab"))
        .arg("kernel")
        .arg(path)
        .args(extra)
        .output()
        .unwrap()
}

/// Runs `skblab kernel FILE --json`; returns the exit code and the report.
fn report(path: &Path) -> (i32, Value) {
    let out = skblab_kernel(path, &["--json"]);
    (out.status.code().unwrap_or(-1), read_back(&out))
}

/// The report a run printed, read as the playground reads it: the core's reader takes it
/// (every row and the verdict made again from its sides) and its model side is the model's
/// own run of its scenario in its variant.
fn read_back(out: &Output) -> Value {
    let text = String::from_utf8_lossy(&out.stdout);
    let r = Report::parse(&text).unwrap_or_else(|e| {
        panic!(
            "no report the core reads ({e}), exit {:?}: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let opts = RunOptions::traced(Some(&r.variant));
    let t = Scenario::parse(&r.scenario).unwrap().run(&opts).unwrap();
    r.check_model(&t).unwrap_or_else(|e| panic!("{e}: {text}"));
    serde_json::from_str(&text).unwrap()
}

fn lens(v: &Value, side: &str) -> Vec<u64> {
    v[side]["skbs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["len"].as_u64().unwrap())
        .collect()
}

/// The seed's writes (1 B to 1 MiB), each three times, TSO on and off, with and without
/// MSG_EOR, on a held queue: every skb's len, linear length and nr_frags and the kernel's
/// size_goal agree with `modern`.
fn seed_000(tso: bool, eor: bool) {
    let name = format!("seed_000_tso_{tso}_eor_{eor}");
    if !kernel_available(&name) {
        return;
    }
    for bytes in [1u64, 100, 1448, 4096, 14480, 65536, 1 << 20] {
        let p = scenario(
            &format!("{name}_{bytes}"),
            &format!(
                "mechanism = \"sendmsg\"\n[device]\ngso = {tso}\n\
                 [[ops]]\nop = \"sendmsg\"\nbytes = {bytes}\neor = {eor}\ncount = 3\n"
            ),
        );
        let (code, v) = report(&p);
        assert_eq!(v["verdict"], "agree", "{name} {bytes}: {v:#}");
        assert_eq!(code, 0, "{name} {bytes}");
        assert_eq!(v["setup"]["mss"], 1448);
        assert_eq!(v["kernel_side"]["size_goals"], serde_json::json!([65160]));
        // Hand-derived: the queue holds every byte; without EOR the skbs are full size
        // goals but the last; with EOR each write ends its own skbs.
        let k = lens(&v, "kernel_side");
        assert_eq!(k.iter().sum::<u64>(), 3 * bytes, "{name} {bytes}: {k:?}");
        let per_write: Vec<u64> = (0..bytes.div_ceil(65160))
            .map(|i| (bytes - i * 65160).min(65160))
            .collect();
        if eor {
            assert_eq!(k, per_write.repeat(3), "{name} {bytes}");
        } else {
            assert!(k.iter().rev().skip(1).all(|&l| l == 65160), "{name}: {k:?}");
        }
        assert!(v["kernel_side"]["skbs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["linear"] == 0));
    }
}

#[test]
fn seed_000_tso_on() {
    seed_000(true, false);
}

#[test]
fn seed_000_tso_on_eor() {
    seed_000(true, true);
}

#[test]
fn seed_000_tso_off() {
    seed_000(false, false);
}

#[test]
fn seed_000_tso_off_eor() {
    seed_000(false, true);
}

/// 5,600 writes of 1,024 one-byte iovecs: tcp_sendmsg_locked copies from the iov_iter as one
/// stream, so its frags end where the 32 KiB pages do; a model that looped once per iovec
/// (as 2.6.33 did) refilled before every byte and left the last 31 bytes of each page unused
/// (skb 87: 3 frags in the model, 2 in the kernel).
#[test]
fn one_byte_iovecs_agree_with_the_kernel() {
    if !kernel_available("one_byte_iovecs_agree_with_the_kernel") {
        return;
    }
    let iov = vec!["1"; 1024].join(", ");
    let p = scenario(
        "one_byte_iovecs",
        &format!(
            "mechanism = \"sendmsg\"\n[socket]\nsndbuf = 67108864\n\
             [[ops]]\nop = \"sendmsg\"\niov = [{iov}]\ncount = 5600\n"
        ),
    );
    let (code, v) = report(&p);
    assert_eq!(v["verdict"], "agree", "{v:#}");
    assert_eq!(code, 0);
    assert_eq!(lens(&v, "kernel_side").iter().sum::<u64>(), 5600 * 1024);
}

/// The checker can fail: one frag per skb (`[consts] max_skb_frags = 1`) is not the running
/// kernel, and the command must say "differ" and exit 1.
#[test]
fn a_wrong_constant_is_reported_as_differ() {
    if !kernel_available("a_wrong_constant_is_reported_as_differ") {
        return;
    }
    let p = scenario(
        "wrong_constant",
        "mechanism = \"sendmsg\"\n[consts]\nmax_skb_frags = 1\n\
         [[ops]]\nop = \"sendmsg\"\nbytes = 100000\n",
    );
    let (code, v) = report(&p);
    assert_eq!(v["verdict"], "differ", "{v:#}");
    assert_eq!(code, 1);
    // The model cuts at each 32 KiB page; the kernel fills size goals.
    assert_eq!(lens(&v, "model"), [32768, 32768, 32768, 1696]);
    assert_eq!(lens(&v, "kernel_side"), [65160, 34840]);
    let text = skblab_kernel(&p, &[]);
    assert_eq!(text.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("verdict: differ"), "{stdout}");
}

/// `--out` writes the same report the JSON output prints, with the scenario, and the
/// playground's reader (`kernel_report`) takes it: the kernel lane's cells are the rows.
#[test]
fn out_writes_the_report() {
    if !kernel_available("out_writes_the_report") {
        return;
    }
    let text = "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 4096\n";
    let p = scenario("out", text);
    let file = p.with_extension("json");
    let out = skblab_kernel(&p, &["--out", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v["verdict"], "agree");
    assert_eq!(lens(&v, "kernel_side"), [4096]);
    let lane = KernelReport::parse(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        (lane.scenario.as_str(), lane.verdict.as_str()),
        (text, "agree")
    );
    assert_eq!(lane.variant, "modern");
    let len = &lane.skbs[0][0];
    assert_eq!(
        (len.field.as_str(), len.kernel, len.model, len.verdict),
        ("len", Some(4096), Some(4096), Some(Verdict::Agree))
    );
    let truesize = lane.skbs[0].iter().find(|c| c.field == "truesize").unwrap();
    assert_eq!(truesize.verdict, None, "truesize is shown, not judged");
}

#[test]
fn without_root_the_command_says_what_is_missing() {
    let p = scenario(
        "no_root",
        "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 1\n",
    );
    std::fs::set_permissions(
        p.parent().unwrap(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::set_permissions(&p, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
    let mut cmd = skblab_unprivileged();
    let out = cmd
        .arg("kernel")
        .arg(&p)
        .output()
        .expect("setpriv (util-linux)");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("skblab kernel needs root"), "{err}");
    assert!(err.contains("nothing was run"), "{err}");
}

#[test]
fn a_scenario_the_kernel_cannot_hold_is_refused_before_any_setup() {
    let p = scenario(
        "drain",
        "mechanism = \"sendmsg\"\n[device]\ndrain = true\n[[ops]]\nop = \"sendmsg\"\nbytes = 1\n",
    );
    let out = skblab_kernel(&p, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("device.drain"));
    let rx = scenario(
        "rx_rps",
        "mechanism = \"rx\"\n[nic]\nrps = true\n[[ops]]\nop = \"arrive\"\nframes = 1\n",
    );
    let out = skblab_kernel(&rx, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nic.rps"));
}

/// Every example send scenario whose queue the kernel run can hold agrees with `modern`.
#[test]
fn example_send_scenarios_agree_with_the_kernel() {
    if !kernel_available("example_send_scenarios_agree_with_the_kernel") {
        return;
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("sendmsg-")
        })
        .collect();
    names.sort();
    let mut ran = 0;
    for p in names {
        let out = skblab_kernel(&p, &["--json"]);
        if out.status.code() == Some(2) {
            // Refused before any setup (a drained queue, a write after transmit): say so.
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("device.drain") || err.contains("a write after"),
                "{}: {err}",
                p.display()
            );
            continue;
        }
        let v = read_back(&out);
        assert_eq!(v["verdict"], "agree", "{}: {v:#}", p.display());
        ran += 1;
    }
    assert!(ran >= 4, "only {ran} example scenarios ran");
}

/// Seed 003: MPTCP over lo, 8 and 64 writes of 16 KiB onto a subflow whose tail is held:
/// every mapping's data_seq, subflow_seq and data_len, and so every skb's size, agree with
/// `abeni-2020`. The subflow's MSS is the model's default, 65,459: the DSS option's room
/// taken off, as tcp_current_mss does (docs/kernel-oracle.md).
#[test]
fn seed_003_mptcp_mappings_agree_with_abeni_2020() {
    if !kernel_available("seed_003_mptcp_mappings_agree_with_abeni_2020") {
        return;
    }
    for writes in [8u64, 64] {
        let p = scenario(
            &format!("mptcp_{writes}"),
            &format!(
                "mechanism = \"mptcp\"\n[[subflows]]\nmtu = 65536\n\
                 [[ops]]\nop = \"sendmsg\"\nbytes = 16384\ncount = {writes}\n"
            ),
        );
        let (code, v) = report(&p);
        assert_eq!(v["verdict"], "agree", "{writes} writes: {v:#}");
        assert_eq!(code, 0);
        // Hand-derived: full mappings of one MSS, back to back, then the rest.
        let total = 16384 * writes;
        let full = total / 65459;
        let mut want: Vec<u64> = vec![65459; full as usize];
        want.push(total - full * 65459);
        assert_eq!(lens(&v, "kernel_side"), want, "{writes} writes");
        for (i, s) in v["kernel_side"]["skbs"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
        {
            assert_eq!(s["data_seq"], i as u64 * 65459);
            assert_eq!(s["subflow_seq"], i as u64 * 65459);
        }
    }
}

/// The seed's own example, scenarios/mptcp-max-size.toml (8 writes of 16 KiB, then close,
/// which the kernel run does not drive), agrees with `abeni-2020` at the default MSS.
#[test]
fn mptcp_max_size_example_agrees_with_the_kernel() {
    if !kernel_available("mptcp_max_size_example_agrees_with_the_kernel") {
        return;
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/mptcp-max-size.toml");
    let (code, v) = report(&p);
    assert_eq!(v["verdict"], "agree", "{v:#}");
    assert_eq!(code, 0);
    assert_eq!(lens(&v, "kernel_side"), [65459, 65459, 154]);
}

/// Another MPTCP sender on the machine while the test runs: a thread moved into a network
/// namespace of its own (unshare(CLONE_NEWNET) moves only the calling thread) writes to an
/// MPTCP peer over its own lo, which a second thread reads, until it is dropped. Its
/// mappings pass the same global tracepoint as the run's own.
struct OtherMptcpSender {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    writer: Option<std::thread::JoinHandle<u64>>,
}

impl OtherMptcpSender {
    fn start() -> OtherMptcpSender {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let flag = stop.clone();
        let writer = std::thread::spawn(move || {
            use std::io::{Read, Write};
            // SAFETY: unshare has no memory preconditions; it moves this thread only.
            assert_eq!(unsafe { libc::unshare(libc::CLONE_NEWNET) }, 0);
            lo_up();
            let (mut w, mut r) = mptcp_pair();
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 1 << 16];
                while matches!(r.read(&mut buf), Ok(n) if n > 0) {}
            });
            ready_tx.send(()).unwrap();
            let (chunk, mut sent) = (vec![0xa5u8; 10_346], 0u64);
            while !flag.load(Ordering::Relaxed) {
                w.write_all(&chunk).unwrap();
                sent += chunk.len() as u64;
            }
            sent
        });
        ready_rx.recv().expect("the other MPTCP sender started");
        OtherMptcpSender {
            stop,
            writer: Some(writer),
        }
    }

    /// Stops it; the bytes it sent.
    fn finish(mut self) -> u64 {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.writer.take().unwrap().join().unwrap()
    }
}

/// Brings lo up in the calling thread's network namespace.
fn lo_up() {
    link_up("lo");
}

/// A connected MPTCP pair over 127.0.0.1 in the calling thread's namespace.
fn mptcp_pair() -> (std::net::TcpStream, std::net::TcpStream) {
    use std::os::fd::FromRawFd;
    const IPPROTO_MPTCP: i32 = 262;
    let a = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: 5099u16.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be(),
        },
        sin_zero: [0; 8],
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: plain socket calls with a valid sockaddr_in; each descriptor is owned once.
    unsafe {
        let l = libc::socket(libc::AF_INET, libc::SOCK_STREAM, IPPROTO_MPTCP);
        let c = libc::socket(libc::AF_INET, libc::SOCK_STREAM, IPPROTO_MPTCP);
        assert!(l >= 0 && c >= 0, "MPTCP sockets");
        assert_eq!(
            libc::bind(l, (&a as *const libc::sockaddr_in).cast(), len),
            0
        );
        assert_eq!(libc::listen(l, 1), 0);
        assert_eq!(
            libc::connect(c, (&a as *const libc::sockaddr_in).cast(), len),
            0
        );
        let p = libc::accept(l, std::ptr::null_mut(), std::ptr::null_mut());
        assert!(p >= 0);
        libc::close(l);
        (
            std::net::TcpStream::from_raw_fd(c),
            std::net::TcpStream::from_raw_fd(p),
        )
    }
}

/// Another MPTCP sender runs through the whole comparison, its mappings in the same global
/// tracepoint: the run keeps its own connection's (its data sequence range), so the verdict
/// is still the right one; a run whose trace it spoiled would say "inconclusive" (exit 2),
/// never "agree" or "differ" on a wrong trace. Every run must give the right verdict; the
/// runs go on (up to six) until one has traced the other connection's mappings and left them
/// out, so the test never passes without having met one. (On a loaded machine the other
/// sender, blocked on its own window while its reader waits for a core, may send nothing
/// inside one run's short traced window: one run alone cannot promise a sighting.)
#[test]
fn another_mptcp_sender_never_yields_a_wrong_verdict() {
    if !kernel_available("another_mptcp_sender_never_yields_a_wrong_verdict") {
        return;
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/mptcp-max-size.toml");
    let mut sightings = Vec::new();
    for run in 0..6 {
        let other = OtherMptcpSender::start();
        let out = skblab_kernel(&p, &["--json"]);
        let sent = other.finish();
        assert!(sent > 0, "run {run}: the other sender sent nothing");
        let err = String::from_utf8_lossy(&out.stderr);
        if out.status.code() == Some(2) {
            assert!(err.contains("inconclusive"), "run {run}: {err}");
            continue;
        }
        let v = read_back(&out);
        assert_eq!(v["verdict"], "agree", "run {run}: {v:#}");
        assert_eq!(lens(&v, "kernel_side"), [65459, 65459, 154]);
        let left_out = v["setup"]["other_connections_sightings_left_out"].as_u64();
        sightings.push(left_out.unwrap_or(0));
        if sightings.iter().any(|&n| n > 0) && run >= 1 {
            return;
        }
    }
    panic!(
        "no run traced the other connection's mappings (left out per judged run: {sightings:?})"
    );
}

/// Each consumed skb as (len, alloc_cpu, free_cpu).
fn frees(v: &Value, side: &str) -> Vec<(u64, u64, u64)> {
    v[side]["skbs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let n = |f: &str| s[f].as_u64().unwrap_or(u64::MAX);
            (n("len"), n("alloc_cpu"), n("free_cpu"))
        })
        .collect()
}

/// Seed 002 as today's kernel does it: skbs allocated on CPU 0 (the TAP's writer, where
/// tcp_v4_rcv runs), read on CPU 1, are freed back on CPU 0 (skb_attempt_defer_free to the
/// allocating CPU's list, skb_defer_free_flush in net_rx_action), as `defer-free` says: the
/// seed's example (three full GRO skbs, read one at a time), 40 one-frame skbs read at
/// once (the list passes half of skb_defer_max: the kick; 4,000-byte segments, whose heads
/// are kmalloc'ed in the model, so its receive queue does not merge them, as the kernel's
/// does not merge the TAP's kmalloc'ed heads), and a reader on CPU 0 itself (freed at once,
/// there).
#[test]
fn seed_002_defer_free_frees_on_the_allocating_cpu() {
    if !kernel_available("seed_002_defer_free_frees_on_the_allocating_cpu") {
        return;
    }
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/rx-skb-cache.toml");
    let (code, v) = report(&example);
    assert_eq!(v["verdict"], "agree", "{v:#}");
    assert_eq!(code, 0);
    assert_eq!(v["variant"], "modern+defer-free");
    assert_eq!(frees(&v, "kernel_side"), [(65160, 0, 0); 3]);
    let many = scenario(
        "rx_kick",
        "mechanism = \"rx\"\n[nic]\ngro = false\n[socket]\nmss = 4000\n\
         [[ops]]\nop = \"arrive\"\nframes = 40\n[[ops]]\nop = \"recvmsg\"\n",
    );
    let (code, v) = report(&many);
    assert_eq!(v["verdict"], "agree", "{v:#}");
    assert_eq!(code, 0);
    assert_eq!(frees(&v, "kernel_side"), [(4000, 0, 0); 40]);
    // The reader on the allocating CPU: skb_attempt_defer_free frees at once, on the
    // reader's CPU, which is CPU 0 here; a softirq op on CPU 1 changes nothing.
    let local = scenario(
        "rx_reader_on_cpu0",
        "mechanism = \"rx\"\n[app]\ncpu = 0\n\
         [[ops]]\nop = \"arrive\"\nframes = 45\n[[ops]]\nop = \"recvmsg\"\n\
         [[ops]]\nop = \"arrive\"\nframes = 20\n[[ops]]\nop = \"recvmsg\"\n\
         [[ops]]\nop = \"softirq\"\ncpu = 1\n",
    );
    let (code, l) = report(&local);
    assert_eq!(l["verdict"], "agree", "{l:#}");
    assert_eq!(code, 0);
    assert_eq!(frees(&l, "kernel_side"), [(65160, 0, 0), (28960, 0, 0)]);
    // Seed 001, shown, never judged: the first 45 frames through tun_build_skb all wait
    // unread in the writer's task_frag, 1,920 bytes each (SKB_DATA_ALIGN(1514 + 64) + 320),
    // so its pages hold at least 45 x 1,920 bytes whatever order they came in.
    let built =
        &l["shown"]["kernel_pages"]["the same payload as MSS frames (tun_build_skb: task_frag)"];
    let bytes: u64 = built
        .as_object()
        .unwrap_or_else(|| panic!("{v:#}"))
        .iter()
        .map(|(order, n)| {
            let order: u32 = order.trim_start_matches("order ").parse().unwrap();
            (4096 << order) * n.as_u64().unwrap()
        })
        .sum();
    assert!(bytes >= 45 * 1920, "{built}");
    assert!(!l["rows"].to_string().contains("page"));
}

/// The rx checker can fail: `modern+none` (recvmsg frees on the reader's CPU, as before
/// 2019) is not the running kernel, and every consumed skb's free_cpu differs.
#[test]
fn rx_freeing_on_the_reader_cpu_is_reported_as_differ() {
    if !kernel_available("rx_freeing_on_the_reader_cpu_is_reported_as_differ") {
        return;
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/rx-skb-cache.toml");
    let out = skblab_kernel(&p, &["--json", "--variant", "modern+none"]);
    assert_eq!(out.status.code(), Some(1));
    let v = read_back(&out);
    assert_eq!(v["verdict"], "differ", "{v:#}");
    assert_eq!(frees(&v, "model"), [(65160, 0, 1); 3]);
    assert_eq!(frees(&v, "kernel_side"), [(65160, 0, 0); 3]);
    let bad: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["agree"] == false)
        .map(|r| r["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        bad,
        ["skb[0].free_cpu", "skb[1].free_cpu", "skb[2].free_cpu"]
    );
}

/// Seed 001's runs share CPU 0's frag cache: the tests that use it take turns (the noise of
/// one would make another's trace untrusted).
static FRAG_CACHE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn frag_cache_turn() -> std::sync::MutexGuard<'static, ()> {
    FRAG_CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

/// One judged row's (model, kernel) values.
fn row(v: &Value, field: &str) -> (u64, u64) {
    let r = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["field"] == field)
        .unwrap_or_else(|| panic!("no row {field}: {v:#}"));
    (r["model"].as_u64().unwrap(), r["kernel"].as_u64().unwrap())
}

/// Seed 001 on the running kernel, through tun's NAPI frags path (netdev_alloc_frag on CPU
/// 0's page_frag_cache): 100 frames of 1,448 payload bytes, 1,472-byte fragments, 22 to a
/// 32 KiB page. A prompt reader: one page, started over every 22 frames. A reader that holds
/// everything: no reuse and no page more than the fragments need (5), every page but the
/// cache's own freed at close. Every page order 3, on CPU 0, as `modern` says.
#[test]
fn seed_001_frag_cache_pages_agree_with_modern() {
    if !kernel_available("seed_001_frag_cache_pages_agree_with_modern") {
        return;
    }
    let _turn = frag_cache_turn();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let (code, v) = report(&dir.join("rx-napi-frags-prompt.toml"));
    eprintln!("prompt: retried {}", v["setup"]["untrusted_runs_retried"]);
    assert_eq!(v["verdict"], "agree", "{v:#}");
    assert_eq!(code, 0);
    assert_eq!(row(&v, "frag_cache_pages"), (1, 1));
    assert_eq!(row(&v, "page_reuses"), (4, 4));
    assert_eq!(row(&v, "page[0].fragments"), (100, 100));
    assert_eq!(row(&v, "page_frees"), (0, 0));
    let (code, v) = report(&dir.join("rx-napi-frags-lagging.toml"));
    eprintln!("lagging: retried {}", v["setup"]["untrusted_runs_retried"]);
    assert_eq!(v["verdict"], "agree", "{v:#}");
    assert_eq!(code, 0);
    assert_eq!(row(&v, "frag_cache_pages"), (5, 5));
    assert_eq!(row(&v, "page_reuses"), (0, 0));
    assert_eq!(row(&v, "page_frees"), (4, 4));
    for i in 0..5 {
        let frames = if i < 4 { 22 } else { 12 };
        assert_eq!(row(&v, &format!("page[{i}].fragments")), (frames, frames));
        assert_eq!(row(&v, &format!("page[{i}].order")), (3, 3));
        assert_eq!(row(&v, &format!("page[{i}].cpu")), (0, 0));
    }
}

/// The seed-001 checker can fail: v3.5's netdev_alloc_frag (order-0 pages) is not the
/// running kernel's cache. There `napi_get_frags`' head (GRO_MAX_HEAD: 704 bytes) came from
/// the same cache as the payload (1,472), so three allocations fit a 4 KiB page: 200 in 67.
#[test]
fn seed_001_an_order_0_cache_is_reported_as_differ() {
    if !kernel_available("seed_001_an_order_0_cache_is_reported_as_differ") {
        return;
    }
    let _turn = frag_cache_turn();
    let p =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/rx-napi-frags-lagging.toml");
    let out = skblab_kernel(&p, &["--json", "--variant", "pre-2012"]);
    let v = read_back(&out);
    assert_eq!(v["verdict"], "differ", "{v:#}");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(row(&v, "frag_cache_pages"), (67, 5));
    assert_eq!(row(&v, "page[0].order"), (0, 3));
}

/// `scenarios/rx-napi-frags-tcp.toml` with GRO `gro` and the extra TOML `consts` (a
/// `[consts]` table), as `skblab kernel --json` judges it.
fn napi_tcp_report(gro: bool, consts: &str, extra: &[&str]) -> (Option<i32>, Value) {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/rx-napi-frags-tcp.toml");
    let text = std::fs::read_to_string(p).unwrap();
    let text = text.replace("gro = true", &format!("gro = {gro}")) + consts;
    let f = scenario(&format!("napi-tcp-{gro}"), &text);
    let out = skblab_kernel(&f, &[&["--json"], extra].concat());
    (out.status.code(), read_back(&out))
}

/// TCP through tun's NAPI frags path (heads from napi_get_frags, payload in CPU 0's frag
/// cache), GRO off and on: tun flushes GRO after every frame, so the receive queue does the
/// merging either way. 40 segments of 1,448 bytes become skbs of 17, 17 and 6 frags (16, 16
/// and 5 skbs merged into them and freed at arrival on CPU 0), read by one recvmsg; 10 more
/// become one of 10. Each read skb goes back to CPU 0; the payload filled 3 pages of 22
/// fragments, and the 2 the cache let go of are freed once the skbs on them are.
#[test]
fn tcp_receive_coalescing_agrees_with_modern() {
    if !kernel_available("tcp_receive_coalescing_agrees_with_modern") {
        return;
    }
    let _turn = frag_cache_turn();
    for gro in [false, true] {
        let (code, v) = napi_tcp_report(gro, "", &[]);
        eprintln!(
            "gro {gro}: retried {}",
            v["setup"]["untrusted_runs_retried"]
        );
        assert_eq!(v["verdict"], "agree", "gro {gro}: {v:#}");
        assert_eq!(code, Some(0));
        assert_eq!(row(&v, "skbs"), (4, 4));
        for (i, frags, merged, recvmsg) in
            [(0, 17, 16, 0), (1, 17, 16, 0), (2, 6, 5, 0), (3, 10, 9, 1)]
        {
            assert_eq!(row(&v, &format!("skb[{i}].nr_frags")), (frags, frags));
            assert_eq!(row(&v, &format!("skb[{i}].merged")), (merged, merged));
            assert_eq!(row(&v, &format!("skb[{i}].recvmsg")), (recvmsg, recvmsg));
            assert_eq!(
                row(&v, &format!("skb[{i}].len")),
                (frags * 1448, frags * 1448)
            );
            assert_eq!(row(&v, &format!("skb[{i}].free_cpu")), (0, 0));
        }
        assert_eq!(row(&v, "frag_cache_pages"), (3, 3));
        assert_eq!(row(&v, "page_frees"), (2, 2));
    }
}

/// The coalescing checker can fail: a model whose skbs hold at most 8 frags
/// (`max_skb_frags = 8`) merges 7 into each, where the kernel merges 16.
#[test]
fn tcp_coalescing_with_a_wrong_frag_limit_is_reported_as_differ() {
    if !kernel_available("tcp_coalescing_with_a_wrong_frag_limit_is_reported_as_differ") {
        return;
    }
    let _turn = frag_cache_turn();
    let (code, v) = napi_tcp_report(false, "\n[consts]\nmax_skb_frags = 8\n", &[]);
    assert_eq!(v["verdict"], "differ", "{v:#}");
    assert_eq!(code, Some(1));
    assert_eq!(row(&v, "skbs"), (7, 4));
    assert_eq!(row(&v, "skb[0].merged"), (7, 16));
}

/// Another user of CPU 0's frag cache while seed 001 runs: a thread pinned to CPU 0, in a
/// namespace of its own, writing frames to a NAPI frags TAP of its own (to a MAC that is not
/// the TAP's, so each is dropped and its fragment freed at once), as fast as it can. Its
/// fragments fall between the run's: the run must see that and say `inconclusive`, or agree
/// where a run was spared, never differ.
#[test]
fn another_frag_cache_user_never_yields_a_wrong_verdict() {
    if !kernel_available("another_frag_cache_user_never_yields_a_wrong_verdict") {
        return;
    }
    let _turn = frag_cache_turn();
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let (stop, frames) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let (flag, count) = (stop.clone(), frames.clone());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let noise = std::thread::spawn(move || {
        // SAFETY: plain syscalls on this thread: unshare moves it alone; the CPU set names
        // CPU 0; the ifreq is plain data; the iovecs point at live buffers.
        unsafe {
            assert_eq!(libc::unshare(libc::CLONE_NEWNET), 0);
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut set);
            assert_eq!(
                libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set),
                0
            );
            let fd = libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR);
            assert!(fd >= 0);
            let mut r: libc::ifreq = std::mem::zeroed();
            for (i, b) in b"skbnoise0".iter().enumerate() {
                r.ifr_name[i] = *b as libc::c_char;
            }
            // IFF_TAP | IFF_NO_PI | IFF_NAPI | IFF_NAPI_FRAGS.
            r.ifr_ifru.ifru_flags = 0x0002 | 0x1000 | 0x0010 | 0x0020;
            assert_eq!(libc::ioctl(fd, 0x4004_54ca, &mut r), 0, "TUNSETIFF");
            link_up("skbnoise0");
            // Ethernet to 02:..:99, IPv4 192.0.2.2 -> 192.0.2.1, UDP: headers the flow
            // dissector reads whole; then 1,448 payload bytes.
            let mut hdr = vec![2, 0, 0, 0, 0, 0x99, 2, 0, 0, 0, 0, 2, 8, 0];
            hdr.extend([
                0x45, 0, 0x05, 0xc4, 0, 0, 0, 0, 64, 17, 0, 0, 192, 0, 2, 2, 192, 0, 2, 1,
            ]);
            hdr.extend([0x9c, 0x40, 0x13, 0x8c, 0x05, 0xb0, 0, 0]);
            let body = vec![0u8; 1448];
            let iov = [&hdr[..], &body[..]].map(|b| libc::iovec {
                iov_base: b.as_ptr() as *mut libc::c_void,
                iov_len: b.len(),
            });
            ready_tx.send(()).unwrap();
            while !flag.load(Ordering::Relaxed) {
                assert!(libc::writev(fd, iov.as_ptr(), 2) > 0);
                count.fetch_add(1, Ordering::Relaxed);
            }
            libc::close(fd);
        }
    });
    ready_rx.recv().expect("the other frag cache user started");
    let p =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/rx-napi-frags-lagging.toml");
    let out = skblab_kernel(&p, &["--json"]);
    stop.store(true, Ordering::Relaxed);
    noise.join().unwrap();
    let (code, err) = (out.status.code(), String::from_utf8_lossy(&out.stderr));
    eprintln!(
        "exit {code:?}, the other user wrote {} frames: {err}",
        frames.load(Ordering::Relaxed)
    );
    assert!(frames.load(Ordering::Relaxed) > 0);
    match code {
        Some(0) => {
            let v = read_back(&out);
            assert_eq!(row(&v, "frag_cache_pages"), (5, 5), "{v:#}");
        }
        Some(2) => assert!(err.contains("inconclusive"), "{err}"),
        _ => panic!("a wrong verdict under another frag cache user: {code:?} {err}"),
    }
}

/// Brings an interface up in the calling thread's network namespace (SIOCSIFFLAGS).
fn link_up(name: &str) {
    // SAFETY: a datagram socket for the ioctl; ifreq is plain data with a short name.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0);
        assert!(fd >= 0);
        let mut r: libc::ifreq = std::mem::zeroed();
        for (i, b) in name.bytes().enumerate() {
            r.ifr_name[i] = b as libc::c_char;
        }
        assert_eq!(libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut r), 0);
        r.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        assert_eq!(libc::ioctl(fd, libc::SIOCSIFFLAGS, &mut r), 0);
        libc::close(fd);
    }
}

/// A scenario in a directory and file nobody can read, for runs as nobody.
fn readable_by_all(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mode = |m| std::fs::Permissions::from_mode(m);
    std::fs::set_permissions(p.parent().unwrap(), mode(0o755)).unwrap();
    std::fs::set_permissions(p, mode(0o644)).unwrap();
}

/// Settings the kernel run cannot give the kernel are refused by name before anything is
/// set up (run as nobody: a refusal that came later would say "needs root" instead), so the
/// model is never blamed for a setting the kernel did not get.
#[test]
fn settings_the_kernel_run_cannot_apply_are_refused_before_setup() {
    let mptcp = "mechanism = \"mptcp\"\n";
    let write = "[[ops]]\nop = \"sendmsg\"\nbytes = 16384\n";
    let send = "mechanism = \"sendmsg\"\n";
    for (name, text, field) in [
        (
            "mptcp_no_ts",
            format!("{mptcp}[[subflows]]\ntimestamps = false\n{write}"),
            "subflows[0].timestamps",
        ),
        (
            "mptcp_mss",
            format!("{mptcp}[[subflows]]\nmss = 1000\n{write}"),
            "subflows[0].mss",
        ),
        (
            "mptcp_hoad",
            format!("{mptcp}high_order_alloc_disable = true\n{write}"),
            "high_order_alloc_disable",
        ),
        (
            "send_hoad",
            format!("{send}[device]\nhigh_order_alloc_disable = true\n{write}"),
            "device.high_order_alloc_disable",
        ),
        (
            "send_window_100",
            format!("{send}[socket]\nmax_window = 100\n{write}"),
            "socket.max_window = 100",
        ),
        (
            "send_window_half",
            format!("{send}[socket]\nmax_window = 2048\n{write}"),
            "set socket.mss = 1024",
        ),
        (
            "send_mtu",
            format!("{send}[device]\nmtu = 65535\n{write}"),
            "device.mtu = 65535",
        ),
        (
            "send_small_mss",
            format!("{send}[socket]\nmss = 48\n{write}"),
            "MAX_TCP_HEADER",
        ),
    ] {
        let p = scenario(name, &text);
        readable_by_all(&p);
        let out = skblab_unprivileged()
            .arg("kernel")
            .arg(&p)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(field), "{name}: {err}");
        assert!(!err.contains("needs root"), "{name}: {err}");
    }
    // MSS 48: 192 and 320 give different size goals, so the run needs to be told which.
    let p = scenario(
        "send_small_mss_named",
        &format!("{send}[socket]\nmss = 48\n{write}"),
    );
    let err = skblab_kernel(&p, &[]).stderr;
    assert!(String::from_utf8_lossy(&err).contains("192 gives 65328"));
    assert!(String::from_utf8_lossy(&err).contains("320 gives 65184"));
}

/// `--out` never replaces a file, nor writes through a symlink (a root run once replaced a
/// symlink's target), and refuses before anything runs.
#[test]
fn out_never_replaces_a_file_or_follows_a_symlink() {
    let p = scenario(
        "out_kept",
        "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 1\n",
    );
    let kept = p.with_extension("kept");
    let link = p.with_extension("link");
    std::fs::write(&kept, "precious").unwrap();
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&p, &link).unwrap();
    for (target, extra, why) in [
        (&kept, None, "exists; give --force"),
        (&link, None, "is a symlink"),
        (&link, Some("--force"), "is a symlink"),
        // The scenario itself, through --out.
        (&p.to_path_buf(), None, "exists; give --force"),
    ] {
        let mut args = vec!["--out", target.to_str().unwrap()];
        args.extend(extra);
        let out = skblab_kernel(&p, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(why), "{args:?}: {err}");
        assert!(!err.contains("needs root"), "refused before the run: {err}");
    }
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), "precious");
    assert!(std::fs::read_to_string(&p)
        .unwrap()
        .starts_with("mechanism"));
}

/// A file name with an escape sequence is printed escaped, as `run` and `tap` print it.
#[test]
fn an_escape_in_a_file_name_is_escaped() {
    let p = std::env::temp_dir().join("no-such-\u{1b}[31mred.toml");
    let out = skblab_kernel(&p, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        !out.stderr.contains(&0x1b),
        "{:?}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("\\u{1b}[31mred"));
}

/// A stdout that fails (a full device, a reader gone) loses no report: `--out` is written
/// first; a full stdout is an error (exit 2) with a message, a closed pipe ends quietly with
/// the verdict's exit code; nothing panics.
#[test]
fn a_failing_stdout_loses_no_report() {
    if !kernel_available("a_failing_stdout_loses_no_report") {
        return;
    }
    let p = scenario(
        "stdout_fails",
        "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 4096\n",
    );
    for (name, full) in [("full", true), ("closed", false)] {
        let file = p.with_extension(format!("{name}.json"));
        let _ = std::fs::remove_file(&file);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_skblab"));
        cmd.arg("kernel")
            .arg(&p)
            .args(["--out", file.to_str().unwrap()]);
        let out = if full {
            cmd.stdout(std::fs::File::create("/dev/full").unwrap())
                .output()
                .unwrap()
        } else {
            let mut child = cmd
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            drop(child.stdout.take());
            child.wait_with_output().unwrap()
        };
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{name}: {err}");
        if full {
            assert_eq!(out.status.code(), Some(2), "{name}: {err}");
            assert!(err.contains("writing to stdout"), "{name}: {err}");
        } else {
            assert_eq!(out.status.code(), Some(0), "{name}: {err}");
        }
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(v["verdict"], "agree", "{name}");
    }
}

/// A run stopped by a signal while it traces (SIGINT from Ctrl-C, SIGTERM, SIGKILL) leaves
/// its `--out` as it was: no file where there was none (an empty one would be refused by the
/// next run without `--force`), the old report where `--force` was to replace one, and
/// nothing beside it. The report is named only once it is whole.
#[test]
fn a_run_stopped_by_a_signal_leaves_out_as_it_was() {
    if !kernel_available("a_run_stopped_by_a_signal_leaves_out_as_it_was") {
        return;
    }
    let p = scenario(
        "stopped",
        "mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 4096\n",
    );
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGKILL] {
        for old in [None, Some("old report")] {
            let out = Scratch::path("report.json");
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_skblab"));
            cmd.arg("kernel").arg(&p).arg("--out").arg(&*out);
            if let Some(old) = old {
                std::fs::write(&out, old).unwrap();
                cmd.arg("--force");
            }
            // Stopped while it traces: once its bpftrace runs, the output is open and the
            // report is yet to come. What the path holds then is kept.
            let mut at_kill = None;
            common::stop_when(&mut cmd, signal, |pid| {
                let tasks = std::fs::read_dir(format!("/proc/{pid}/task"));
                let mut tasks = tasks.into_iter().flatten().flatten();
                let tracing = tasks.any(|t| {
                    std::fs::read_to_string(t.path().join("children"))
                        .is_ok_and(|c| !c.trim().is_empty())
                });
                at_kill = Some(std::fs::read_to_string(&out).ok());
                tracing
            });
            let case = format!("signal {signal}, old {old:?}");
            let old_text = old.map(String::from);
            assert_eq!(at_kill, Some(old_text), "{case}: while it ran");
            assert_eq!(std::fs::read_to_string(&out).ok().as_deref(), old, "{case}");
            let left = common::names(out.parent().unwrap());
            assert_eq!(left.len(), usize::from(old.is_some()), "{case}: {left:?}");
        }
    }
}

/// An MPTCP run whose writes overfill the kernel's buffers (the peer reads nothing after the
/// warm-up) says which setting to change, not a bare "os error 11".
#[test]
fn an_overfilled_mptcp_send_buffer_is_explained() {
    if !kernel_available("an_overfilled_mptcp_send_buffer_is_explained") {
        return;
    }
    let p = scenario(
        "mptcp_overfill",
        "mechanism = \"mptcp\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 65536\ncount = 1000\n",
    );
    let out = skblab_kernel(&p, &[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("send buffer filled after"), "{err}");
    assert!(err.contains("write fewer bytes"), "{err}");
    assert!(!err.contains("os error"), "{err}");
}
