//! The traced command: started as the invoking user when run through sudo, killed by the
//! kernel if the runner dies (PR_SET_PDEATHSIG), waited for until it exits, `--duration`
//! runs out, or the runner is asked to stop (SIGINT or SIGTERM, passed on to it).

use skblab_core::capture::Exit;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// The signal that asked the runner to stop (0: none yet).
static STOP: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_stop(sig: libc::c_int) {
    STOP.store(sig, Ordering::SeqCst);
}

/// From now on SIGINT and SIGTERM only ask the capture to stop: the command gets the signal
/// and the capture ends when it exits, so bpftrace is ended and the report written.
pub fn catch_stop_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { libc::signal(sig, on_stop as *const () as libc::sighandler_t) };
    }
}

/// The user sudo ran as (SUDO_UID, SUDO_GID), if any.
fn invoking_user() -> Result<Option<(u32, u32)>, String> {
    let var = |name: &str| -> Result<Option<u32>, String> {
        match std::env::var(name) {
            Ok(v) => v
                .parse()
                .map(Some)
                .map_err(|_| format!("{name}={v:?} is not a number")),
            Err(_) => Ok(None),
        }
    };
    Ok(match (var("SUDO_UID")?, var("SUDO_GID")?) {
        (Some(u), Some(g)) => Some((u, g)),
        _ => None,
    })
}

/// Starts `argv` (as the invoking user under sudo).
pub fn spawn(argv: &[String]) -> Result<Child, String> {
    let user = invoking_user()?;
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..]);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if let Some((uid, gid)) = user {
                if libc::setgroups(0, std::ptr::null()) != 0
                    || libc::setgid(gid) != 0
                    || libc::setuid(uid) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
            }
            // After setuid, which clears it.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.spawn()
        .map_err(|e| format!("starting {}: {e}", argv[0]))
}

/// How long a command asked to stop may take before SIGKILL.
const GRACE: Duration = Duration::from_secs(5);
/// How often the wait looks.
const POLL: Duration = Duration::from_millis(20);

/// Waits for `child` and returns how it ended. A stop signal is passed on to it; once
/// `duration` runs out it gets SIGTERM; either way SIGKILL if it lingers past [`GRACE`].
pub fn wait(child: &mut Child, duration: Option<Duration>) -> Result<Exit, String> {
    let start = Instant::now();
    let mut asked: Option<Instant> = None;
    let mut passed = 0;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| format!("waiting: {e}"))? {
            return Ok(match status.signal() {
                Some(s) => Exit::Signal(s),
                None => Exit::Code(status.code().unwrap_or(0)),
            });
        }
        let stop = STOP.load(Ordering::SeqCst);
        if stop != 0 && passed == 0 {
            passed = stop;
            signal(child, stop);
            asked.get_or_insert_with(Instant::now);
        }
        if asked.is_none() && duration.is_some_and(|d| start.elapsed() >= d) {
            signal(child, libc::SIGTERM);
            asked = Some(Instant::now());
        }
        if asked.is_some_and(|t| t.elapsed() >= GRACE) {
            let _ = child.kill();
        }
        std::thread::sleep(POLL);
    }
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: kill(2) on our own child, which is not reaped yet.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// Waits for process `pid` (not our child) to end, for at most `duration`, or until a stop
/// signal: `--pid`. A process that is gone reads as such through /proc.
pub fn wait_pid(pid: u32, duration: Option<Duration>) {
    let start = Instant::now();
    let alive = || std::path::Path::new(&format!("/proc/{pid}")).exists();
    while alive()
        && STOP.load(Ordering::SeqCst) == 0
        && duration.is_none_or(|d| start.elapsed() < d)
    {
        std::thread::sleep(POLL);
    }
}

/// The exit code the runner passes back for the command's `exit`: its own code, or 128 +
/// the signal that killed it, as a shell does.
pub fn code(exit: Exit) -> u8 {
    match exit {
        Exit::Code(c) => c as u8,
        Exit::Signal(s) => 128u8.wrapping_add(s as u8),
    }
}
