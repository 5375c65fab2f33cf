//! `skblab serve`: a small static file server for the built playground (`dist/`).
//!
//! It binds 127.0.0.1 only, answers GET and HEAD, maps a handful of extensions to their MIME
//! types (the browser refuses to stream-compile wasm served as anything but
//! `application/wasm`) and refuses any path that would leave the served folder.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

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

/// Serves `dir` on 127.0.0.1:`port` until the process is stopped. Prints the URL first.
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
    println!(
        "skblab playground: http://{addr}/  (serving {})",
        root.display()
    );
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let root = root.clone();
        std::thread::spawn(move || {
            // A broken connection concerns only that client.
            let _ = handle(stream, &root);
        });
    }
    Ok(())
}

fn handle(mut stream: TcpStream, root: &Path) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // Drain the headers; nothing in them changes the answer.
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    let mut parts = request.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if method != "GET" && method != "HEAD" {
        return respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain",
            b"",
            true,
        );
    }
    let Some(file) = resolve(root, target) else {
        return respond(
            &mut stream,
            "403 Forbidden",
            "text/plain",
            b"forbidden\n",
            true,
        );
    };
    match std::fs::read(&file) {
        Ok(body) => respond(&mut stream, "200 OK", mime(&file), &body, method == "GET"),
        Err(_) => respond(
            &mut stream,
            "404 Not Found",
            "text/plain",
            b"not found\n",
            true,
        ),
    }
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

fn respond(
    stream: &mut TcpStream,
    status: &str,
    mime: &str,
    body: &[u8],
    with_body: bool,
) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {mime}\r\nContent-Length: {}\r\n\
         Cache-Control: no-cache\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if with_body {
        stream.write_all(body)?;
    }
    stream.flush()
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
