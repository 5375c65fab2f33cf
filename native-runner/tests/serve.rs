//! `skblab serve` under pressure from this machine: clients that send their request a byte at
//! a time do not keep the page from anyone else, a refused client reads its whole 503, running
//! out of descriptors does not make the server spin, and `--bind` beyond loopback warns.
//!
//! Read timeouts here only turn a hung server into a failed test; nothing asserts speed.

use skblab_runner::serve::{run, Bounds};
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

mod common;
use common::Scratch;

const PAGE: &str = "<p>the playground</p>";

/// A served folder of one page (its parent), per test.
fn site() -> Scratch {
    Scratch::file("index.html", PAGE)
}

/// A server in this process on a free loopback port, and the folder it serves.
fn start(bounds: Bounds) -> (SocketAddr, Scratch) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
    let addr = listener.local_addr().unwrap();
    let page = site();
    let root = page.parent().unwrap().canonicalize().unwrap();
    std::thread::spawn(move || run(listener, root, bounds));
    (addr, page)
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s
}

/// The whole answer to `GET /` on a new connection, which must end in an orderly close.
fn get(addr: SocketAddr) -> String {
    let mut s = connect(addr);
    s.write_all(b"GET / HTTP/1.1\r\nHost: test\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    answer
}

fn assert_page(answer: &str) {
    assert!(
        answer.starts_with("HTTP/1.1 200 OK\r\n") && answer.ends_with(PAGE),
        "{answer:?}"
    );
}

/// The attack: a hundred connections each sending its request a byte at a time. Every
/// normal GET meanwhile gets the page, and the slow ones are still waiting for their answer
/// (they were there all along), which they get once they finish their request.
#[test]
fn slow_clients_do_not_keep_the_page_from_others() {
    let bounds = Bounds {
        // So that no slow client is answered 408 while the test runs, however slow the machine.
        idle: Duration::from_secs(300),
        ..Bounds::default()
    };
    let (addr, _site) = start(bounds);
    const REQUEST: &[u8] = b"GET / HTTP/1.1\r\nHost: slow\r\n\r\n";
    let mut slow: Vec<TcpStream> = (0..100).map(|_| connect(addr)).collect();
    for sent in 0..4 {
        for s in &mut slow {
            s.write_all(&REQUEST[sent..=sent]).unwrap();
        }
        assert_page(&get(addr));
        assert_page(&get(addr));
        std::thread::sleep(Duration::from_millis(300));
    }
    for s in &mut slow {
        s.set_nonblocking(true).unwrap();
        let mut byte = [0u8; 1];
        let read = s.read(&mut byte).map_err(|e| e.kind());
        assert_eq!(
            read,
            Err(ErrorKind::WouldBlock),
            "a slow client was answered"
        );
        s.set_nonblocking(false).unwrap();
    }
    for mut s in slow {
        s.write_all(&REQUEST[4..]).unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        assert_page(&answer);
    }
}

/// With every slot taken, a client is told 503, and the answer reaches it whole, ending in an
/// orderly close: the server reads what the client sent before closing, where closing over
/// unread input would reset the connection (and the client would read an error).
#[test]
fn a_refused_client_reads_its_503_to_an_orderly_end() {
    let bounds = Bounds {
        connections: 1,
        idle: Duration::from_secs(300),
        ..Bounds::default()
    };
    let (addr, _site) = start(bounds);
    // Connected first, so accepted first: it takes the one slot.
    let _holder = connect(addr);
    let mut c = connect(addr);
    let pad = "X-Pad: 0123456789abcdef0123456789abcdef\r\n".repeat(1000);
    c.write_all(format!("GET / HTTP/1.1\r\n{pad}\r\n").as_bytes())
        .unwrap();
    let mut answer = String::new();
    let end = c.read_to_string(&mut answer);
    assert!(
        answer.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
        "{answer:?}"
    );
    assert!(end.is_ok(), "the 503 ended in {end:?}");
}

/// The built `skblab serve` on a free port of `bind`, stopped when dropped; its URL line read.
struct Served {
    child: Child,
    line: String,
    _site: Scratch,
}

impl Served {
    fn start(mut cmd: Command, bind: &str) -> Served {
        let site = site();
        cmd.args(["serve", "--port", "0", "--bind", bind, "--dir"])
            .arg(site.parent().unwrap())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut line = String::new();
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        std::io::BufRead::read_line(&mut out, &mut line).unwrap();
        Served {
            child,
            line,
            _site: site,
        }
    }

    fn addr(&self) -> SocketAddr {
        let url = self
            .line
            .split_whitespace()
            .find(|w| w.starts_with("http://"));
        let addr = url.and_then(|u| u.strip_prefix("http://")?.strip_suffix('/'));
        addr.and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("no URL in {:?}", self.line))
    }

    /// Stops the server and returns what it wrote to stderr.
    fn stop(mut self) -> String {
        let _ = self.child.kill();
        let mut err = String::new();
        let _ = self.child.stderr.take().unwrap().read_to_string(&mut err);
        err
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// User plus system CPU time the process has used, from /proc/PID/stat.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command's closing parenthesis start at field 3 (state); utime and
    // stime are fields 14 and 15, in clock ticks.
    let fields: Vec<u64> = stat[stat.rfind(')').unwrap() + 2..]
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    // SAFETY: sysconf reads a constant of the system and touches no memory of ours.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as u64;
    Duration::from_millis((fields[11] + fields[12]) * 1000 / hz)
}

/// `ulimit -n 40` and 80 idle connections: the server takes what its descriptors allow and,
/// with the rest waiting in its backlog, sleeps instead of retrying accept at once for ever;
/// once the connections close, it serves again.
#[test]
fn out_of_descriptors_the_server_waits_then_serves_again() {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_skblab"));
    // SAFETY: the closure runs in the child between fork and exec and calls only setrlimit,
    // which is async-signal-safe.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            let limit = libc::rlimit {
                rlim_cur: 40,
                rlim_max: 40,
            };
            match libc::setrlimit(libc::RLIMIT_NOFILE, &limit) {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            }
        });
    }
    let served = Served::start(cmd, "127.0.0.1");
    let addr = served.addr();
    let idle: Vec<TcpStream> = (0..80).map(|_| connect(addr)).collect();
    std::thread::sleep(Duration::from_millis(500));
    let (before, window) = (cpu_time(served.child.id()), Duration::from_secs(2));
    std::thread::sleep(window);
    let used = cpu_time(served.child.id()) - before;
    // A bound on work done, not a speed: retrying accept at once for ever takes a whole CPU
    // (or all it can get of one), waiting takes milliseconds.
    assert!(
        used < window / 10,
        "the server used {used:?} of CPU in {window:?} while out of descriptors"
    );
    drop(idle);
    assert_page(&get(addr));
    let err = served.stop();
    assert!(!err.contains("warning"), "on loopback: {err}");
}

/// `--bind 0.0.0.0` (in a network namespace of its own, so nothing outside can reach it)
/// listens on every address and says, before the URL, who can read the folder.
#[test]
fn binding_beyond_loopback_warns() {
    let mut cmd = Command::new("unshare");
    cmd.args(["--net", "--map-root-user", env!("CARGO_BIN_EXE_skblab")]);
    let served = Served::start(cmd, "0.0.0.0");
    assert!(served.addr().ip().is_unspecified(), "{}", served.line);
    let err = served.stop();
    assert!(
        err.starts_with("skblab: warning: listening on 0.0.0.0:")
            && err.contains("beyond loopback: anyone who can reach this machine there can read"),
        "{err}"
    );
}
