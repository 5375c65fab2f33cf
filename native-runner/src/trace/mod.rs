//! `skblab trace`: a program's own skbs on the running kernel. It runs COMMAND (or attaches
//! to `--pid`), follows its process tree and its sockets, and reads every skb they send and
//! receive, every free and the pages under their frags, at tracepoints only, with the
//! oracle's bpftrace child ([`crate::kernel::probe`]); the capture is the core's format
//! ([`skblab_core::capture`]). It is one more [`KernelRun`]: plan (the parts this kernel
//! has), probes, one run, the kernel's side.
//!
//! Modules: [`parts`] (what each part needs and whether the kernel has it), [`script`] (the
//! probes), [`command`] (the traced command and the signals), [`lines`] (the probes' lines
//! into the capture), [`pcap`] (the packets, `--pcap`), [`render`] (the terminal's summary).

mod command;
mod lines;
mod parts;
mod pcap;
mod render;
mod script;

use crate::kernel::pinned::{self, Pinned};
use crate::kernel::probe::{self, Tracer};
use crate::kernel::run::{kernel_release, KernelRun};
use crate::kernel::verdict::RunError;
use skblab_core::capture::{self, Capture, Lost, Part, Process};
use skblab_core::Cpu;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args, Clone, Debug)]
pub struct TraceArgs {
    /// Also write the capture (JSON, docs/trace.md) to this new file (never through a
    /// symlink).
    #[arg(long, value_name = "REPORT")]
    pub out: Option<PathBuf>,
    /// Also write the packets to and from the program's sockets, whole, as a pcap for
    /// Wireshark (never through a symlink).
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// Let --out and --pcap replace an existing file (never a symlink).
    #[arg(long)]
    pub force: bool,
    /// Stop after this many seconds (the command is then sent SIGTERM).
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    /// Attach to this running process (and the processes it starts) instead of a COMMAND.
    #[arg(long, value_name = "N", conflicts_with = "command")]
    pub pid: Option<u32>,
    /// At most this many probe lines (the rest are counted as lost).
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub max_events: u64,
    /// At most this many skbs in the capture (the rest are counted as lost).
    #[arg(long, value_name = "N", default_value_t = capture::MAX_SKBS)]
    pub max_skbs: usize,
    /// The command to run and trace, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

/// `skblab trace`: the command's own exit status (128 + N if signal N killed it), 0 with
/// `--pid`, 2 when the capture could not be made.
pub fn main(args: &TraceArgs) -> ExitCode {
    match run_and_emit(args) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            crate::output::error(&e);
            ExitCode::from(2)
        }
    }
}

fn run_and_emit(args: &TraceArgs) -> Result<u8, String> {
    let create = |p: &Option<PathBuf>, flag| match p {
        Some(p) => crate::output::Output::create(p, args.force, flag).map(|f| Some((p.clone(), f))),
        None => Ok(None),
    };
    let out = create(&args.out, "--out")?;
    let pcap_out = create(&args.pcap, "--pcap")?;
    let (c, packets) = run(args)?;
    let mut kept = String::new();
    if let (Some((p, mut f)), Some(packets)) = (pcap_out, packets) {
        let n = pcap::write(&packets, &c, &mut f)?;
        f.commit()?;
        kept = format!(
            "pcap: {n} packets to or from the program's sockets in {} [read by a packet \
             socket]; lost: {} dropped by the kernel, {} past the {} MiB held\n",
            p.display(),
            packets.dropped,
            packets.over,
            pcap::MAX_HELD_BYTES >> 20
        );
    }
    if let Some((p, mut f)) = out {
        let json = serde_json::to_string_pretty(&c).expect("captures serialize") + "\n";
        f.write_all(json.as_bytes())
            .map_err(|e| format!("--out {}: {e}", p.display()))?;
        f.commit()?;
    }
    crate::output::stdout(&(render::render(&c) + &kept))?;
    Ok(c.exit.map_or(0, command::code))
}

/// What `skblab trace` is asked, checked.
pub struct Trace {
    command: Vec<String>,
    pid: Option<u32>,
    duration: Option<Duration>,
    max_events: u64,
    max_skbs: usize,
    /// Whether the packets are kept (`--pcap`).
    packets: bool,
    parts: Vec<Part>,
}

/// The capture, and the packets when `--pcap` asks for them.
fn run(args: &TraceArgs) -> Result<(Capture, Option<pcap::Packets>), String> {
    let t = Trace::plan(args.clone())?;
    probe::preflight()?;
    probe::private_tracefs()?;
    let t = Trace {
        parts: parts::check()?,
        ..t
    };
    probe::need_tracepoints(&t.tracepoints())?;
    command::catch_stop_signals();
    t.once(0).map_err(|e| match e {
        RunError::Failed(e) => e,
        RunError::Untrusted(why) => why.0,
    })
}

impl KernelRun for Trace {
    type Ask = TraceArgs;
    type Seen = (Capture, Option<pcap::Packets>);

    /// The arguments, refused by name; the parts are checked once tracefs is mounted.
    fn plan(args: TraceArgs) -> Result<Trace, String> {
        if args.command.is_empty() == args.pid.is_none() {
            return Err("give a COMMAND after `--`, or --pid N".into());
        }
        if args.force && args.out.is_none() && args.pcap.is_none() {
            return Err("--force: give --out or --pcap, whose file it lets be replaced".into());
        }
        let duration = match args.duration {
            Some(s) if !(s > 0.0 && s <= 1e6) => {
                return Err(format!(
                    "--duration {s}: allowed more than 0, at most 1000000 s"
                ))
            }
            s => s.map(Duration::from_secs_f64),
        };
        if args.max_skbs == 0 || args.max_skbs > capture::MAX_SKBS {
            return Err(format!(
                "--max-skbs {}: allowed 1 to {}",
                args.max_skbs,
                capture::MAX_SKBS
            ));
        }
        if args.max_events == 0 || args.max_events > 10_000_000 {
            return Err(format!(
                "--max-events {}: allowed 1 to 10000000",
                args.max_events
            ));
        }
        Ok(Trace {
            command: args.command,
            pid: args.pid,
            duration,
            max_events: args.max_events,
            max_skbs: args.max_skbs,
            packets: args.pcap.is_some(),
            parts: Vec::new(),
        })
    }

    fn tracepoints(&self) -> Vec<&'static str> {
        (parts::NEEDS.iter().zip(&self.parts))
            .filter(|(_, p)| p.captured())
            .flat_map(|(n, _)| n.tracepoints.iter().copied())
            .collect()
    }

    fn script(&self) -> String {
        script::script(&self.parts)
    }

    /// Starts the probes and the packet socket, then the command (forked by this thread,
    /// which the probes follow), waits for it, and reads the capture.
    fn once(&self, _: u16) -> Result<(Capture, Option<pcap::Packets>), RunError> {
        // SAFETY: gettid has no preconditions.
        let me = unsafe { libc::gettid() } as u64;
        let (root, spawner) = match self.pid {
            Some(pid) => (u64::from(pid), 0),
            None => (0, me),
        };
        let env = [("BPFTRACE_MAP_KEYS_MAX", MAP_KEYS_MAX)];
        let args = [root, self.max_events, spawner];
        let script = self.script();
        let mut tracer = Tracer::start_env(&script, &args, &env)?;
        let sniffer = match self.packets {
            true => Some(pcap::Sniffer::start(self.pid).map_err(RunError::Failed)?),
            false => None,
        };
        let (pid, exit) = match self.pid {
            Some(pid) => {
                command::wait_pid(pid, self.duration);
                (pid, None)
            }
            None => {
                let mut child = command::spawn(&self.command)?;
                let exit = command::wait(&mut child, self.duration)?;
                (child.id(), Some(exit))
            }
        };
        let cpus = cpus();
        flush_deferred_frees(cpus);
        drain(&mut tracer, cpus);
        let missed = tracer.skipped();
        let (lines, lost) = tracer.finish_lossy()?;
        let packets = sniffer.map(pcap::Sniffer::finish).transpose();
        let packets = packets.map_err(RunError::Failed)?;
        let dropped: u64 = lost.iter().filter_map(|d| d["events"].as_u64()).sum();
        let c = Capture {
            format: capture::FORMAT,
            kernel: kernel_release(),
            command: self.command.clone(),
            pid,
            exit,
            parts: self.parts.clone(),
            processes: Vec::new(),
            sockets: Vec::new(),
            skbs: Vec::new(),
            pages: Vec::new(),
            page_orders: Vec::new(),
            timeline: Vec::new(),
            stacks: Vec::new(),
            lost: Lost {
                events: dropped,
                skbs: 0,
                missed,
            },
        };
        let mut c = lines::read(&lines, self.max_skbs, c)?;
        // The root first, its parent (this runner, or whoever started it) left out.
        let mut root = match c.processes.iter().position(|p| p.pid == pid) {
            Some(i) => c.processes.remove(i),
            None => Process {
                pid,
                parent: None,
                exec: Vec::new(),
                exited: false,
            },
        };
        root.parent = None;
        root.exited |= exit.is_some();
        c.processes.insert(0, root);
        Ok((c, packets))
    }
}

/// bpftrace's map size: live skbs and the tree's slab objects waiting for their skb.
const MAP_KEYS_MAX: &str = "262144";

/// The CPUs online.
fn cpus() -> Cpu {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    n.clamp(1, Cpu::MAX.into()) as Cpu
}

/// Frees waiting on a CPU's defer list happen when NET_RX next runs there: raise it on
/// every CPU (a datagram over lo), so they are seen. Without lo, they may stay unseen.
fn flush_deferred_frees(cpus: Cpu) {
    for cpu in 0..cpus {
        let _ = pinned::softirq_on(cpu);
    }
}

/// Waits until bpftrace has read every CPU's buffer up to now: a `mark` from each CPU (a
/// CPU's lines come out in order). bpftrace stops reading at the end probe's exit, so lines
/// still waiting on another CPU's buffer then (its reader starved on a busy machine) would
/// be lost. A CPU that does not answer in time is left: its lines may be short.
fn drain(tracer: &mut Tracer, cpus: Cpu) {
    for cpu in 0..cpus {
        let mark = |_: &mut (), ()| {
            // SAFETY: getsid(0) has no preconditions; it fires the mark probe.
            unsafe { libc::getsid(0) };
            Ok(())
        };
        let _ = Pinned::spawn("skblab-mark", cpu, (), mark).and_then(|p| p.call(()));
    }
    let seen = std::cell::RefCell::new(std::collections::BTreeSet::new());
    let _ = tracer.read_until(|l| {
        if let Some(cpu) = l.strip_prefix("mark ") {
            seen.borrow_mut().insert(cpu.to_string());
        }
        seen.borrow().len() >= usize::from(cpus)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        trace: TraceArgs,
    }

    /// `skblab trace ARGS` planned: the error, if any.
    fn plan(args: &[&str]) -> Result<(), String> {
        let cli = Cli::try_parse_from(std::iter::once("trace").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?;
        Trace::plan(cli.trace).map(|_| ())
    }

    #[test]
    fn flags_out_of_range_are_refused_by_name() {
        assert_eq!(plan(&["--pcap", "p", "--", "true"]), Ok(()));
        for (args, says) in [
            (&["--", "true", "--force"][..], ""),
            (&["--force", "--", "true"], "--force: give --out or --pcap"),
            (
                &["--duration", "0", "--", "true"],
                "--duration 0: allowed more than 0",
            ),
            (
                &["--max-skbs", "0", "--", "true"],
                "--max-skbs 0: allowed 1 to",
            ),
            (
                &["--max-events", "0", "--", "true"],
                "--max-events 0: allowed 1 to",
            ),
            (&[], "give a COMMAND after `--`, or --pid N"),
        ] {
            if says.is_empty() {
                assert_eq!(plan(args), Ok(()), "{args:?}");
                continue;
            }
            let e = plan(args).unwrap_err();
            assert!(e.contains(says), "{args:?}: {e}");
        }
    }
}
