//! Seeing the kernel's own skbs: bpftrace (Debian's, run as a child with `-f json`) on
//! tracepoints, inside this process's private mount and network namespaces.
//!
//! Tracepoints are global, so every probe is filtered to this process (`pid`, the thread
//! group). bpftrace is killed on every path: [`Tracer`] kills and reaps it when dropped, and the
//! kernel kills it if the runner itself dies (PR_SET_PDEATHSIG).

use super::skipped;
use super::verdict::{too_slow, Inconclusive, RunError};
use skblab_core::capture::Missed;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

const TRACEFS: &str = "/sys/kernel/tracing";
const BTF: &str = "/sys/kernel/btf/vmlinux";
/// How long bpftrace may take to parse BTF and attach (seconds on a busy 2-core machine).
const ATTACH_TIMEOUT: Duration = Duration::from_secs(60);
/// The probes every script ends with. bpftrace says "attached" before its probes are all
/// live, so the runner calls getpgid(2) until `ready` comes back (these come last, so the
/// script's own probes are attached by then); at the end it calls getppid(2), and bpftrace
/// prints `end` and exits.
pub const END_PROBE: &str =
    "tracepoint:syscalls:sys_enter_getpgid /pid == $1/ { printf(\"ready\\n\"); }\n\
tracepoint:syscalls:sys_enter_getppid /pid == $1/ { printf(\"end\\n\"); exit(); }\n";

/// Says exactly what this machine lacks for a kernel run, if anything (before any change).
pub fn preflight() -> Result<(), String> {
    let mut missing = Vec::new();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        missing.push("root (to load eBPF programs and unshare namespaces)".to_string());
    }
    if which("bpftrace").is_none() {
        missing.push("bpftrace on PATH (apt-get install bpftrace)".to_string());
    }
    if !Path::new(BTF).exists() {
        missing.push(format!("kernel BTF ({BTF}, CONFIG_DEBUG_INFO_BTF)"));
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "skblab kernel needs {}; nothing was run",
            missing.join(" and ")
        ))
    }
}

fn which(bin: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(bin))
        .find(|p| p.is_file())
}

/// Gives this process a private mount namespace (nothing it mounts is seen outside, and it
/// all goes when the process exits) and mounts tracefs there if it is missing. Call while
/// single-threaded (unshare(CLONE_NEWNS) refuses a process with other threads).
pub fn private_tracefs() -> Result<(), String> {
    let err = |what: &str| format!("{what}: {}", std::io::Error::last_os_error());
    // SAFETY: unshare and mount with valid C strings; no memory is shared with the kernel.
    unsafe {
        if libc::unshare(libc::CLONE_NEWNS) != 0 {
            return Err(err("unshare(CLONE_NEWNS)"));
        }
        if libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            return Err(err("making / private in the new mount namespace"));
        }
        if !Path::new(TRACEFS).join("events").exists()
            && libc::mount(
                c"nodev".as_ptr(),
                c"/sys/kernel/tracing".as_ptr(),
                c"tracefs".as_ptr(),
                0,
                std::ptr::null(),
            ) != 0
        {
            return Err(err("mount -t tracefs /sys/kernel/tracing"));
        }
    }
    Ok(())
}

/// Fails naming every tracepoint (`group/name`) this kernel does not have.
pub fn need_tracepoints(names: &[&str]) -> Result<(), String> {
    let missing: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| !Path::new(TRACEFS).join("events").join(n).exists())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "this kernel has no tracepoint {} (in {TRACEFS}/events); nothing was run",
            missing.join(", ")
        ))
    }
}

/// One line of bpftrace's `-f json` output.
pub enum Out {
    /// A `printf`'s text, its trailing newline off.
    Printf(String),
    /// Its buffers overflowed: `data` says how many events were lost.
    Lost(serde_json::Value),
    /// A blank line or another kind.
    Other,
}

/// Reads one line of bpftrace's `-f json` output.
pub fn read_line(line: &str) -> Result<Out, String> {
    if line.trim().is_empty() {
        return Ok(Out::Other);
    }
    let v: serde_json::Value = serde_json::from_str(line)
        .map_err(|e| format!("bpftrace printed a line that is not JSON ({e}): {line}"))?;
    Ok(match v["type"].as_str() {
        Some("lost_events") => Out::Lost(v["data"].clone()),
        Some("printf") => Out::Printf(v["data"].as_str().unwrap_or_default().trim_end().into()),
        _ => Out::Other,
    })
}

/// A `printf`'s text, or `None`; lost events (the trace is incomplete, `why`) make a run to
/// retry.
fn printf(line: &str, why: &str) -> Result<Option<String>, RunError> {
    match read_line(line)? {
        Out::Printf(data) => Ok(Some(data)),
        Out::Lost(data) => Err(Inconclusive(format!("bpftrace lost events ({data}){why}")).into()),
        Out::Other => Ok(None),
    }
}

/// A running bpftrace. Dropping it kills and reaps it.
pub struct Tracer {
    child: Child,
    lines: Receiver<String>,
    /// Lines printed while the probes came up, before any write: another sender's events
    /// (the MPTCP probe sees every connection), kept for the caller to judge.
    early: Vec<String>,
    /// The script's attach points, in the order bpftrace loads their programs.
    points: Vec<String>,
    /// Each program's skipped firings ([`skipped::misses`]) when the probes became live.
    misses_live: Vec<u64>,
}

impl Tracer {
    /// Starts `bpftrace -f json -e SCRIPT PID` and waits until its probes are attached.
    pub fn start(script: &str) -> Result<Tracer, RunError> {
        Tracer::start_with(script, &[])
    }

    /// As [`Tracer::start`], with `args` as the script's `$2`, `$3`, ...
    pub fn start_with(script: &str, args: &[u64]) -> Result<Tracer, RunError> {
        Tracer::start_env(script, args, &[])
    }

    /// As [`Tracer::start_with`], with environment variables for bpftrace
    /// (`BPFTRACE_MAP_KEYS_MAX`, ...).
    pub fn start_env(script: &str, args: &[u64], env: &[(&str, &str)]) -> Result<Tracer, RunError> {
        let mut cmd = Command::new("bpftrace");
        // SAFETY: prctl and setpgid are async-signal-safe. SIGKILL when this process dies, so
        // bpftrace cannot outlive a runner that is killed; a process group of its own, so a
        // terminal's Ctrl-C reaches the runner, which ends it (a capture in `skblab trace`
        // ends with its end probe).
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0
                    || libc::setpgid(0, 0) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        cmd.envs(env.iter().copied());
        let mut child = cmd
            .args(["-f", "json", "-e", script])
            .arg(std::process::id().to_string())
            .args(args.iter().map(u64::to_string))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("starting bpftrace: {e}"))?;
        let out = child.stdout.take().expect("piped");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        let mut t = Tracer {
            child,
            lines,
            early: Vec::new(),
            points: skipped::tracepoints_in(script),
            misses_live: Vec::new(),
        };
        let deadline = Instant::now() + ATTACH_TIMEOUT;
        loop {
            match t.next_line(deadline) {
                Ok(Some(l)) if l.contains("\"attached_probes\"") => break,
                Ok(Some(_)) => {}
                Ok(None) => return Err(format!("bpftrace did not attach: {}", t.stderr()).into()),
                Err(why) => return Err(too_slow(&format!("bpftrace did not attach: {why}"))),
            }
        }
        t.wait_ready(deadline)?;
        t.misses_live = skipped::misses(t.child.id());
        Ok(t)
    }

    /// Pokes the `ready` probe until its line comes back. Other lines (another sender's
    /// events) are kept in `early`.
    fn wait_ready(&mut self, deadline: Instant) -> Result<(), RunError> {
        let ready = |l: &str| l.contains("\"ready\\n\"");
        loop {
            // SAFETY: getpgid(0) has no preconditions; it triggers the ready probe.
            unsafe { libc::getpgid(0) };
            match self.lines.recv_timeout(Duration::from_millis(50)) {
                Ok(l) if ready(&l) => break,
                Ok(l) => self.early.push(l),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Err(self.stderr().into()),
            }
            if Instant::now() > deadline {
                return Err(too_slow("bpftrace's probes did not become live"));
            }
        }
        // Drain the other `ready` lines the pokes caused, for a bounded time: another
        // sender's lines may never stop.
        let drained = Instant::now() + Duration::from_millis(100);
        while let Ok(l) = self
            .lines
            .recv_timeout(drained.saturating_duration_since(Instant::now()))
        {
            if !ready(&l) {
                self.early.push(l);
            }
        }
        Ok(())
    }

    /// The `printf` lines bpftrace prints until one `until` accepts (that one included),
    /// while the probes keep running; they are also kept for [`Tracer::finish`]. A line
    /// comes out after every earlier line printed on the same CPU.
    pub fn read_until(&mut self, until: impl Fn(&str) -> bool) -> Result<Vec<String>, RunError> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut out = Vec::new();
        loop {
            let l = self
                .next_line(deadline)?
                .ok_or_else(|| format!("bpftrace ended early: {}", self.stderr()))?;
            self.early.push(l.clone());
            if let Some(data) = printf(&l, "")? {
                let done = until(&data);
                out.push(data);
                if done {
                    return Ok(out);
                }
            }
        }
    }

    /// The next line bpftrace prints; `None` once it has exited.
    fn next_line(&mut self, deadline: Instant) -> Result<Option<String>, String> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(l) => Ok(Some(l)),
            Err(RecvTimeoutError::Timeout) => Err(format!("no answer in {left:?}")),
            Err(RecvTimeoutError::Disconnected) => Ok(None),
        }
    }

    /// What bpftrace said on stderr (after it exited), less the harmless RLIMIT_MEMLOCK note.
    fn stderr(&mut self) -> String {
        let _ = self.child.wait();
        let mut s = String::new();
        if let Some(mut e) = self.child.stderr.take() {
            let _ = e.read_to_string(&mut s);
        }
        let s: Vec<&str> = s
            .lines()
            .filter(|l| !l.contains("RLIMIT_MEMLOCK"))
            .collect();
        format!("bpftrace exited: {}", s.join(" / "))
    }

    /// Fires the end probe and collects every `printf` line bpftrace prints until it exits.
    /// Its lines come from per-CPU buffers, so lines from another CPU may follow `end`:
    /// reading on to the end of its output loses none (callers order lines by timestamp).
    /// Lost events make the run untrusted, and so do firings the kernel skipped since the
    /// probes became live ([`Tracer::skipped`]).
    pub fn finish(self) -> Result<Vec<String>, RunError> {
        if let Some(why) = skipped::untrusted(&self.skipped()) {
            return Err(why.into());
        }
        let (lines, lost) = self.finish_lossy()?;
        match lost.into_iter().next() {
            None => Ok(lines),
            Some(data) => Err(Inconclusive(format!(
                "bpftrace lost events ({data}): the comparison would be incomplete"
            ))
            .into()),
        }
    }

    /// Each tracepoint's firings the kernel skipped since the probes became live (another
    /// BPF program was running on that CPU, [`skipped`]): skbs or pages the probes may
    /// never have seen. Read while bpftrace is attached, before [`Tracer::finish_lossy`].
    pub fn skipped(&self) -> Vec<Missed> {
        let now = skipped::misses(self.child.id());
        skipped::since(&self.points, &self.misses_live, &now)
    }

    /// As [`Tracer::finish`], keeping what bpftrace says it lost beside the lines.
    pub fn finish_lossy(mut self) -> Result<(Vec<String>, Vec<serde_json::Value>), RunError> {
        // SAFETY: getppid has no preconditions; it is the end probe's trigger.
        unsafe { libc::getppid() };
        let deadline = Instant::now() + Duration::from_secs(20);
        let (mut out, mut lost, mut ended) = (Vec::new(), Vec::new(), false);
        let mut early = std::mem::take(&mut self.early).into_iter();
        loop {
            let next = match early.next() {
                Some(l) => Some(l),
                None => self.next_line(deadline).map_err(|e| {
                    too_slow(&format!(
                        "bpftrace's output: {e} (ended: {ended}, {} lines)",
                        out.len()
                    ))
                })?,
            };
            let Some(l) = next else {
                return if ended {
                    Ok((out, lost))
                } else {
                    Err(format!("bpftrace ended before the end probe: {}", self.stderr()).into())
                };
            };
            let data = match read_line(&l)? {
                Out::Printf(data) => data,
                Out::Lost(data) => {
                    lost.push(data);
                    continue;
                }
                Out::Other => continue,
            };
            if data == "end" {
                ended = true;
            } else if data != "ready" {
                out.push(data);
            }
        }
    }
}

impl Drop for Tracer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
