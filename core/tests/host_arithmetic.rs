//! The hosts hold no kernel arithmetic the core owns. Every `.rs` file under
//! `native-runner/src` and `web/src`, less its comments, string literals and
//! `#[cfg(test)] mod`s, is checked against [`RULES`]: header sizes and the MSS and frame
//! lengths they give (the core's `consts::wire`: `hdr_len`, `advmss`, `mss_option`, ...),
//! a header size added to or taken from an MTU, MSS or header length, and arithmetic on the
//! core's header constants. What is fine anyway is in [`ALLOWED`], each with why; an entry
//! that no longer matches anything fails too, so the list cannot rot.

use std::path::{Path, PathBuf};

/// Bare numbers that are kernel arithmetic on a 1500-byte Ethernet link: the MSS with and
/// without timestamps (1448, 1460), a full frame (1514), the headers in front of its payload
/// with and without timestamps (66, 54), and the largest TCPv4 payloads (65483, 65495).
const NUMBERS: &[u64] = &[1448, 1460, 1514, 66, 54, 65_483, 65_495];

/// Header sizes (Ethernet 14, IPv4 and TCP 20, their sum 40, the timestamp option 12 and
/// TCP with it 32, Ethernet + IPv4 34, UDP 8) that, next to `+` or `-`, are header arithmetic.
const HEADER_SIZES: &[u64] = &[8, 12, 14, 20, 32, 34, 40];

/// Names of a length a header size would be added to or taken from.
const LENGTHS: &[&str] = &["mtu", "mss", "header_len", "hdr_len", "hlen", "HLEN"];

/// A check of one line of code.
type Rule = fn(&str) -> bool;

/// What a line (of code only) may not hold, with the message that names it.
const RULES: &[(&str, Rule)] = &[
    ("a kernel length on a 1500-byte link", has_number),
    (
        "a header size added to or taken from a length",
        has_header_arithmetic,
    ),
    (
        "arithmetic on the core's header constants",
        has_hlen_arithmetic,
    ),
    ("a header size defined in a host", defines_header_size),
];

/// Exceptions: (file name, a piece of the line, why it is fine). Matched by file name, not
/// path, so that a file that moves keeps its exception.
const ALLOWED: &[(&str, &str, &str)] = &[(
    "netns.rs",
    "65_535 - skblab_core::consts::wire::ETH_HLEN",
    "the TAP device's own MTU limit (tun.c: max_mtu = MAX_MTU - ETH_HLEN), a fact of the \
         runner's network layer that the model never sees",
)];

fn has_number(line: &str) -> bool {
    tokens(line).any(|(t, _)| number(t).is_some_and(|n| NUMBERS.contains(&n)))
}

fn has_header_arithmetic(line: &str) -> bool {
    let names_a_length = tokens(line)
        .filter(|(t, _)| number(t).is_none())
        .any(|(t, _)| LENGTHS.iter().any(|l| t.contains(l)));
    names_a_length
        && tokens(line).any(|(t, at)| {
            number(t).is_some_and(|n| HEADER_SIZES.contains(&n)) && beside_sign(line, at, t)
        })
}

fn defines_header_size(line: &str) -> bool {
    let mut words = tokens(line)
        .map(|(t, _)| t)
        .skip_while(|t| matches!(*t, "pub" | "crate" | "super"));
    words.next() == Some("const")
        && words.next().is_some_and(|n| {
            n.ends_with("HLEN") || n.ends_with("HDR_LEN") || n.starts_with("TCPOLEN")
        })
}

fn has_hlen_arithmetic(line: &str) -> bool {
    tokens(line).any(|(t, at)| {
        (t.ends_with("HLEN") || t.starts_with("TCPOLEN")) && beside_sign(line, at, t)
    })
}

/// The token at `at` (or the path it ends, `wire::ETH_HLEN`) has a `+` or `-` next to it
/// (spaces aside).
fn beside_sign(line: &str, at: usize, t: &str) -> bool {
    let mut head = &line[..at];
    while let Some(path) = head.strip_suffix("::") {
        head = path.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_');
    }
    let before = head.trim_end().chars().next_back();
    let after = line[at + t.len()..].trim_start().chars().next();
    let sign = |c: Option<char>| matches!(c, Some('+' | '-'));
    // `->` is not arithmetic.
    sign(before) || (sign(after) && !line[at + t.len()..].trim_start().starts_with("->"))
}

/// The words and numbers of a line, with their byte offsets.
fn tokens(line: &str) -> impl Iterator<Item = (&str, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
        let word = c.is_ascii_alphanumeric() || c == '_';
        match (start, word) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                out.push((&line[s..i], s));
                start = None;
            }
            _ => {}
        }
    }
    out.into_iter()
}

/// A decimal literal's value (`65_535`, `40u32`); None for anything else.
fn number(t: &str) -> Option<u64> {
    if !t.starts_with(|c: char| c.is_ascii_digit()) || t.starts_with("0x") {
        return None;
    }
    let digits: String = t
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '_')
        .filter(|c| *c != '_')
        .collect();
    digits.parse().ok()
}

/// The text less comments, string and char literals (kept as `""`), and each
/// `#[cfg(test)] mod NAME { ... }` (blanked to its closing `}` at column 0); newlines are
/// kept so line numbers stay true.
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        let test_mod = |l: &&str| l.starts_with("mod ") && l.trim_end().ends_with('{');
        if line.trim() == "#[cfg(test)]" && lines.peek().is_some_and(test_mod) {
            for skipped in lines.by_ref() {
                out.push('\n');
                if skipped == "}" {
                    break;
                }
            }
        }
    }
    strip_literals(&out)
}

fn strip_literals(text: &str) -> String {
    let b = text.as_bytes();
    let (mut out, mut i) = (String::new(), 0);
    let newlines = |s: &[u8]| "\n".repeat(s.iter().filter(|&&c| c == b'\n').count());
    while i < b.len() {
        let rest = &b[i..];
        let skip = if rest.starts_with(b"//") {
            rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len())
        } else if rest.starts_with(b"/*") {
            find(rest, b"*/").map_or(rest.len(), |e| e + 2)
        } else if let Some(hashes) = raw_string(rest) {
            let close = format!("\"{}", "#".repeat(hashes));
            let open = hashes + 2;
            find(&rest[open..], close.as_bytes()).map_or(rest.len(), |e| open + e + close.len())
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            j + 1
        } else if rest[0] == b'\'' && char_literal(rest) {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'\'' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            j + 1
        } else {
            0
        };
        if skip == 0 {
            let c = text[i..].chars().next().expect("in bounds");
            out.push(c);
            i += c.len_utf8();
        } else {
            let end = (i + skip).min(b.len());
            if matches!(b[i], b'"' | b'r' | b'\'') {
                out.push_str("\"\"");
            }
            out.push_str(&newlines(&b[i..end]));
            i = end;
        }
    }
    out
}

/// `r"` or `r#..#"` at the start: how many `#`.
fn raw_string(rest: &[u8]) -> Option<usize> {
    let after_r = rest.strip_prefix(b"r")?;
    let hashes = after_r.iter().take_while(|&&c| c == b'#').count();
    (after_r.get(hashes) == Some(&b'"')).then_some(hashes)
}

/// A char literal (`'a'`, `'\n'`), not a lifetime (`'a`).
fn char_literal(rest: &[u8]) -> bool {
    rest.get(1) == Some(&b'\\') || rest.get(2) == Some(&b'\'')
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every line of `text` that breaks a rule and no exception of `file` covers, as
/// "file:line: rule: code", and the exceptions of `file` it used.
fn findings(file: &str, text: &str, used: &mut Vec<usize>) -> Vec<String> {
    let name = file.rsplit('/').next().unwrap_or(file);
    let mut out = Vec::new();
    for (n, (line, original)) in code(text).lines().zip(text.lines()).enumerate() {
        for (rule, breaks) in RULES {
            if !breaks(line) {
                continue;
            }
            let allowed = ALLOWED
                .iter()
                .position(|(f, piece, _)| *f == name && original.contains(piece));
            match allowed {
                Some(i) => used.push(i),
                None => out.push(format!("{file}:{}: {rule}: {}", n + 1, line.trim())),
            }
        }
    }
    out
}

/// Files that are test modules of their own (`#[cfg(test)] mod name;` beside them): tests
/// may compute what they check.
fn test_only(files: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for w in lines.windows(2) {
            let Some(name) = (w[0] == "#[cfg(test)]")
                .then(|| w[1].strip_prefix("mod ")?.strip_suffix(';'))
                .flatten()
            else {
                continue;
            };
            let dir = f.parent().unwrap();
            let own = f
                .file_stem()
                .is_some_and(|s| s == "mod" || s == "lib" || s == "main");
            let base = if own {
                dir.to_path_buf()
            } else {
                dir.join(f.file_stem().unwrap())
            };
            out.push(base.join(format!("{name}.rs")));
        }
    }
    out
}

#[test]
fn hosts_hold_no_kernel_arithmetic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for host in ["native-runner/src", "web/src"] {
        rs_files(&root.join(host), &mut files);
    }
    assert!(files.len() > 20, "found only {} host files", files.len());
    let tests = test_only(&files);
    assert!(tests.iter().any(|t| t.ends_with("pair.rs")), "{tests:?}");
    let (mut bad, mut used) = (Vec::new(), Vec::new());
    for f in files.iter().filter(|f| !tests.contains(f)) {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        bad.extend(findings(&rel, &text, &mut used));
    }
    assert!(
        bad.is_empty(),
        "the core owns this arithmetic (consts::wire, skb, rx::received, ...): call it, or \
         add an exception to ALLOWED saying why it is fine:\n{}",
        bad.join("\n")
    );
    let stale: Vec<_> = (0..ALLOWED.len())
        .filter(|i| !used.contains(i))
        .map(|i| format!("{}: {}", ALLOWED[i].0, ALLOWED[i].1))
        .collect();
    assert!(
        stale.is_empty(),
        "exceptions that match nothing:\n{}",
        stale.join("\n")
    );
}

/// Each rule catches what it is for, and only in code.
#[test]
fn the_rules_catch_host_arithmetic_and_nothing_in_tests_comments_or_strings() {
    let caught = |text: &str| findings("native-runner/src/x.rs", text, &mut Vec::new());
    for line in [
        "mss: (t.mtu - 40).min(65_535) as u16,",
        "mss_option: (s.mss + s.tcp_header_len - 20) as u16,",
        "let hdr = (ETH_HLEN + IPV4_HLEN + TCP_TS_HLEN + 1) as u16;",
        "plan::receive(variant, 1448, &[])?;",
        "const MAX: u32 = 65_535 - skblab_core::consts::wire::ETH_HLEN;",
        "pub(crate) const TCP_HLEN: u32 = 20;",
        "let frame = 66 + len;",
    ] {
        assert_eq!(caught(line).len(), 1, "{line}: {:?}", caught(line));
    }
    for fine in [
        "// mtu - 40 in a comment",
        "let s = \"MTU - 40, 1448\";",
        "let r = r#\"mss - 20 \"quoted\" 1448\"#;",
        "let x = width - 12;",
        "fn mss(&self) -> u32 {",
        "net_header_len: IPV4_HLEN,",
        "port: 40_000 + t.port % 20_000,",
        "let c = '\"'; let mss = mtu_of(x);",
        "#[cfg(test)]\nmod tests {\n    const SEG: u64 = 1448;\n    let m = mtu - 40;\n}",
    ] {
        assert!(caught(fine).is_empty(), "{fine}: {:?}", caught(fine));
    }
    // Lines stay where they were, past a test module and a multi-line string.
    let text = "let a = \"x\n y\";\n#[cfg(test)]\nmod t {\n}\nlet b = mtu - 40;\n";
    assert_eq!(caught(text)[0].split(':').nth(1), Some("6"));
    let tcp = "const HDR_LEN: u16 = (ETH_HLEN + IPV4_HLEN + TCP_TS_HLEN) as u16;";
    assert!(!findings("native-runner/src/net/tcp/mod.rs", tcp, &mut Vec::new()).is_empty());
}
