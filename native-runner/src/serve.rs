//! `skblab serve`: a small static file server for the built playground (`dist/`).
//!
//! It binds 127.0.0.1 only, answers GET and HEAD, maps a handful of extensions to their MIME
//! types (the browser refuses to stream-compile wasm served as anything but
//! `application/wasm`) and refuses any path that would leave the served folder. Whatever a
//! client does costs bounded memory and threads: a fixed pool of workers with a bounded queue
//! (503 past it), a request head of at most a few KiB (414, 431), a deadline to send it (408),
//! and regular files only (a FIFO would block a worker for ever).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Serve the built playground on 127.0.0.1.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// The folder to serve (built by `cargo xtask build-web`).
    #[arg(long, default_value = "dist")]
    pub dir: PathBuf,
    /// The port on 127.0.0.1; 0 picks a free one (the printed URL names it).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
}

/// What one client may cost the server.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    /// Connections served at once (worker threads).
    pub workers: usize,
    /// Accepted connections waiting for a worker; past them a client gets 503.
    pub queue: usize,
    /// The request line, in bytes (414 past it).
    pub request_line: usize,
    /// The header lines together, in bytes (431 past them).
    pub headers: usize,
    /// Time to send the whole request head, and for each write of the answer.
    pub idle: Duration,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            workers: 8,
            queue: 64,
            request_line: 4 << 10,
            headers: 8 << 10,
            idle: Duration::from_secs(10),
        }
    }
}

/// Serves `dir` on 127.0.0.1:`port` until the process is stopped. Prints the URL first (to
/// stderr when stdout cannot take it: the server is still worth running).
pub fn serve(dir: &Path, port: u16) -> Result<(), String> {
    let root = dir
        .canonicalize()
        .map_err(|e| format!("cannot serve {}: {e}", dir.display()))?;
    if !root.join("index.html").is_file() {
        return Err(format!(
            "{} has no index.html: build it first with `cargo xtask build-web`",
            root.display()
        ));
    }
    let listener = TcpListener::bind(("127.0.0.1", port))
        .map_err(|e| format!("cannot listen on 127.0.0.1:{port}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let line = format!(
        "skblab playground: http://{addr}/  (serving {})\n",
        root.display()
    );
    let mut out = std::io::stdout();
    if out
        .write_all(line.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        let _ = std::io::stderr().write_all(line.as_bytes());
    }
    run(listener, root, Bounds::default())
}

/// Answers connections on `listener` with files under `root` (canonical), within `bounds`.
pub fn run(listener: TcpListener, root: PathBuf, bounds: Bounds) -> Result<(), String> {
    let (queue, waiting) = sync_channel::<TcpStream>(bounds.queue);
    let waiting = Arc::new(Mutex::new(waiting));
    let root = Arc::new(root);
    for i in 0..bounds.workers {
        let (waiting, root) = (waiting.clone(), root.clone());
        std::thread::Builder::new()
            .name(format!("serve-{i}"))
            .spawn(move || work(&waiting, &root, bounds))
            .map_err(|e| format!("cannot start a server thread: {e}"))?;
    }
    for stream in listener.incoming() {
        // A failed accept (a connection reset early, no descriptors left) concerns one client.
        let Ok(stream) = stream else { continue };
        if let Err(TrySendError::Full(mut s) | TrySendError::Disconnected(mut s)) =
            queue.try_send(stream)
        {
            let _ = s.set_write_timeout(Some(bounds.idle));
            let _ = respond(&mut s, "503 Service Unavailable", "text/plain", b"busy\n");
        }
    }
    Ok(())
}

/// A worker: takes the next waiting connection and answers it, until the queue is gone.
fn work(waiting: &Mutex<Receiver<TcpStream>>, root: &Path, bounds: Bounds) {
    loop {
        let next = waiting.lock().unwrap_or_else(|p| p.into_inner()).recv();
        let Ok(stream) = next else { return };
        // A broken connection concerns only that client.
        let _ = handle(stream, root, bounds);
    }
}

fn handle(mut stream: TcpStream, root: &Path, bounds: Bounds) -> std::io::Result<()> {
    stream.set_write_timeout(Some(bounds.idle))?;
    let request = match read_head(&mut stream, bounds)? {
        Ok(request) => request,
        Err(status) => return respond(&mut stream, status, "text/plain", b""),
    };
    let mut parts = request.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if method != "GET" && method != "HEAD" {
        return respond(&mut stream, "405 Method Not Allowed", "text/plain", b"");
    }
    let Some(path) = resolve(root, target) else {
        return respond(&mut stream, "403 Forbidden", "text/plain", b"forbidden\n");
    };
    let Some((file, len)) = open_regular(&path) else {
        return respond(&mut stream, "404 Not Found", "text/plain", b"not found\n");
    };
    write_head(&mut stream, "200 OK", mime(&path), len)?;
    if method == "GET" {
        std::io::copy(&mut file.take(len), &mut stream)?;
    }
    stream.flush()
}

/// Reads the request head (request line and headers, up to the blank line) within the byte
/// and time bounds; returns the request line, or the status that refuses the request.
fn read_head(
    stream: &mut TcpStream,
    bounds: Bounds,
) -> std::io::Result<Result<String, &'static str>> {
    let deadline = Instant::now() + bounds.idle;
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        let line_end = head.iter().position(|&b| b == b'\n');
        if line_end.map_or(head.len(), |e| e + 1) > bounds.request_line {
            return Ok(Err("414 URI Too Long"));
        }
        let end = find_blank_line(&head);
        if end.unwrap_or(head.len()) > bounds.request_line + bounds.headers {
            return Ok(Err("431 Request Header Fields Too Large"));
        }
        if let Some(end) = end {
            let line = &head[..line_end.unwrap_or(end)];
            return Ok(Ok(String::from_utf8_lossy(line).into_owned()));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Err("408 Request Timeout"));
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(&mut buf) {
            // A client that stops after the request line (HTTP/0.9 style) still gets its answer.
            Ok(0) => head.extend_from_slice(b"\r\n\r\n"),
            Ok(n) => head.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return Ok(Err("408 Request Timeout"))
            }
            Err(e) => return Err(e),
        }
    }
}

/// The end of the head: an empty line (CRLF or bare LF endings).
fn find_blank_line(head: &[u8]) -> Option<usize> {
    let crlf = head.windows(4).position(|w| w == b"\r\n\r\n");
    let lf = head.windows(2).position(|w| w == b"\n\n");
    crlf.into_iter().chain(lf).min()
}

/// Opens `path` if it is a regular file, with its length. The check is made on the open file
/// (no race with a rename), and the open does not wait for a FIFO's writer (`O_NONBLOCK`).
fn open_regular(path: &Path) -> Option<(std::fs::File, u64)> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = file.metadata().ok()?;
    meta.is_file().then_some((file, meta.len()))
}

/// Maps a request target to a file under `root`, or `None` when it would leave `root`.
fn resolve(root: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next().unwrap_or("");
    let path = percent_decode(path)?;
    let mut file = root.to_path_buf();
    for c in Path::new(path.trim_start_matches('/')).components() {
        match c {
            Component::Normal(p) => file.push(p),
            Component::CurDir => {}
            _ => return None,
        }
    }
    if file.is_dir() {
        file.push("index.html");
    }
    // A symlink inside dist/ must not lead out of it either.
    match file.canonicalize() {
        Ok(real) if !real.starts_with(root) => None,
        _ => Some(file),
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hex = [bytes.next()?, bytes.next()?];
            out.push(u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?);
        } else {
            out.push(b);
        }
    }
    let s = String::from_utf8(out).ok()?;
    (!s.contains('\0') && !s.contains('\\')).then_some(s)
}

fn mime(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "svg" => "image/svg+xml",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "png" => "image/png",
        "toml" | "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn respond(stream: &mut TcpStream, status: &str, mime: &str, body: &[u8]) -> std::io::Result<()> {
    write_head(stream, status, mime, body.len() as u64)?;
    stream.write_all(body)?;
    stream.flush()
}

fn write_head(stream: &mut TcpStream, status: &str, mime: &str, len: u64) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {mime}\r\nContent-Length: {len}\r\n\
         Cache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("skblab-serve-test-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("index.html"), "<p>hi</p>").unwrap();
        std::fs::write(dir.join("sub/a.wasm"), "\0asm").unwrap();
        dir.canonicalize().unwrap()
    }

    #[test]
    fn paths_resolve_inside_root_only() {
        let root = root();
        let cases: &[(&str, Option<&str>)] = &[
            ("/", Some("index.html")),
            ("/index.html?x=1", Some("index.html")),
            ("/sub/a.wasm", Some("sub/a.wasm")),
            ("/sub/%61.wasm", Some("sub/a.wasm")),
            ("/../etc/passwd", None),
            ("/sub/../../etc/passwd", None),
            ("/%2e%2e/etc/passwd", None),
            ("/%2", None),
            ("/a%00b", None),
            ("/..\\etc", None),
        ];
        for (target, want) in cases {
            assert_eq!(
                resolve(&root, target),
                want.map(|w| root.join(w)),
                "target {target}"
            );
        }
    }

    /// A server on a free port with small bounds, for the tests below.
    fn start(bounds: Bounds) -> std::net::SocketAddr {
        let listener = TcpListener::bind(("127.0.0.1", 0)).unwrap();
        let addr = listener.local_addr().unwrap();
        let root = root();
        std::thread::spawn(move || run(listener, root, bounds));
        addr
    }

    fn small() -> Bounds {
        Bounds {
            workers: 2,
            queue: 2,
            request_line: 64,
            headers: 128,
            idle: Duration::from_millis(300),
        }
    }

    /// Sends `request` and returns the status line of the answer.
    fn status(addr: std::net::SocketAddr, request: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        // The server may answer and close before it has read everything.
        let _ = s.write_all(request);
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        answer.lines().next().unwrap_or("").to_string()
    }

    #[test]
    fn oversized_heads_are_refused_with_414_and_431() {
        let addr = start(small());
        let long_line = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(100));
        assert_eq!(
            status(addr, long_line.as_bytes()),
            "HTTP/1.1 414 URI Too Long"
        );
        let many_headers = format!("GET / HTTP/1.1\r\n{}\r\n", "X-A: b\r\n".repeat(40));
        assert_eq!(
            status(addr, many_headers.as_bytes()),
            "HTTP/1.1 431 Request Header Fields Too Large"
        );
        assert_eq!(
            status(addr, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
            "HTTP/1.1 200 OK"
        );
    }

    #[test]
    fn idle_clients_time_out_and_a_full_queue_gets_503() {
        let bounds = Bounds {
            idle: Duration::from_secs(2),
            ..small()
        };
        let addr = start(bounds);
        // Five idle clients: two take the workers, two fill the queue, and the accept loop
        // (which takes connections in order) refuses at least one at once, well before the
        // idle ones time out, rather than give it a thread.
        let clients: Vec<_> = (0..5).map(|_| TcpStream::connect(addr).unwrap()).collect();
        let deadline = Instant::now() + bounds.idle / 2;
        let mut refused = vec![false; clients.len()];
        while !refused.contains(&true) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            for (c, r) in clients.iter().zip(&mut refused) {
                c.set_nonblocking(true).unwrap();
                let mut answer = [0u8; 64];
                let n = (&*c).read(&mut answer).unwrap_or(0);
                *r |= answer[..n].starts_with(b"HTTP/1.1 503 Service Unavailable");
            }
        }
        let n = refused.iter().filter(|&&r| r).count();
        assert!((1..=3).contains(&n), "{n} of 5 refused: {refused:?}");
        // The first two are answered 408 when their time is up; then the server serves again.
        for mut c in clients.into_iter().take(bounds.workers) {
            c.set_nonblocking(false).unwrap();
            let mut answer = String::new();
            let _ = c.read_to_string(&mut answer);
            assert!(
                answer.starts_with("HTTP/1.1 408 Request Timeout"),
                "{answer}"
            );
        }
        assert_eq!(status(addr, b"GET / HTTP/1.1\r\n\r\n"), "HTTP/1.1 200 OK");
    }

    #[test]
    fn only_regular_files_are_served() {
        let addr = start(small());
        let fifo = root().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads a NUL-terminated path and touches no memory of ours.
        let made = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
        assert!(made == 0 || fifo.exists(), "mkfifo");
        assert_eq!(
            status(addr, b"GET /fifo HTTP/1.1\r\n\r\n"),
            "HTTP/1.1 404 Not Found"
        );
        assert_eq!(
            status(addr, b"GET /sub/a.wasm HTTP/1.1\r\n\r\n"),
            "HTTP/1.1 200 OK"
        );
    }

    #[test]
    fn mime_types() {
        let cases = [
            ("a.wasm", "application/wasm"),
            ("a.js", "text/javascript; charset=utf-8"),
            ("a.html", "text/html; charset=utf-8"),
            ("a.svg", "image/svg+xml"),
            ("a.css", "text/css; charset=utf-8"),
        ];
        for (file, want) in cases {
            assert_eq!(mime(Path::new(file)), want);
        }
    }
}
