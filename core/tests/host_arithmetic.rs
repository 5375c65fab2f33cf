//! The hosts hold no kernel arithmetic and type no model name the core owns. Every `.rs`
//! file under `native-runner/src` and `web/src`, less its `#[cfg(test)] mod`s, is checked
//! against [`RULES`]: in its code (comments and string literals out), header sizes and the
//! MSS and frame lengths they give (the core's `consts::wire`: `hdr_len`, `advmss`,
//! `mss_option`, `mss_now`, ...), a header size added to or taken from an MTU, MSS or header
//! length, and arithmetic on the core's header constants; in its string literals, a
//! mechanism's, variant's or event's name typed whole (`"sendmsg"`, `"modern"`,
//! `"alloc_skb"`: the core's `scenario::NAMES` and `EventKind::NAMES` say them), and in them
//! or in a clap argument's help (the doc comment over `#[arg`), a variant's name written
//! into a text (`pre-2010`, `modern+defer-free`: a help text lists the core's table). What
//! is fine anyway is in [`ALLOWED`], each with why; an entry that no longer matches anything
//! fails too, so the list cannot rot.

// Only its file walk and module paths are used here.
#[allow(dead_code)]
#[path = "../../tests/imports.rs"]
mod imports;

use skblab_core::events::EventKind;
use skblab_core::scenario;
use std::path::Path;
use std::sync::OnceLock;

/// Bare numbers that are kernel arithmetic on a 1500-byte Ethernet link: the MSS with and
/// without timestamps (1448, 1460), a full frame (1514), the headers in front of its payload
/// with and without timestamps (66, 54), and the largest TCPv4 payloads (65483, 65495).
const NUMBERS: &[u64] = &[1448, 1460, 1514, 66, 54, 65_483, 65_495];

/// Header sizes (Ethernet 14, IPv4 and TCP 20, their sum 40, the timestamp option 12 and
/// TCP with it 32, Ethernet + IPv4 34, UDP 8) that, next to `+` or `-`, are header arithmetic.
const HEADER_SIZES: &[u64] = &[8, 12, 14, 20, 32, 34, 40];

/// Names of a length a header size would be added to or taken from.
const LENGTHS: &[&str] = &["mtu", "mss", "header_len", "hdr_len", "hlen", "HLEN"];

/// One line of a host file as the rules see it.
#[derive(Default)]
struct Line {
    /// The line's code: comments and string literals out.
    code: String,
    /// The string literals that start on the line, as written between the quotes.
    strings: Vec<String>,
    /// The line's text, when it is a clap argument's help (a doc comment over `#[arg`).
    help: Option<String>,
}

/// A check of one line.
type Rule = fn(&Line) -> bool;

/// What a line may not hold, with the message that names it.
const RULES: &[(&str, Rule)] = &[
    ("a model name typed as a string", has_model_name),
    ("a variant named in a text", names_a_variant),
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

/// Every mechanism's, variant's and event's name, from the core's tables.
fn model_names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mechanisms = scenario::NAMES.iter();
        let per_mechanism = mechanisms.flat_map(|m| {
            [m.name, m.today]
                .into_iter()
                .chain(m.variants.iter().copied())
        });
        per_mechanism
            .chain(EventKind::NAMES.iter().copied())
            .collect()
    })
}

/// The variants' names no text would hold but as a name (`kumar-2010`, `duyck-3.6`,
/// `modern+defer-free`): a digit or a `+` in them (`modern` and `none` are words).
fn variant_words() -> &'static [&'static str] {
    static WORDS: OnceLock<Vec<&'static str>> = OnceLock::new();
    WORDS.get_or_init(|| {
        let mechanisms = scenario::NAMES.iter();
        let all = mechanisms.flat_map(|m| m.variants.iter().copied().chain([m.today]));
        all.filter(|v| v.contains(|c: char| c.is_ascii_digit() || c == '+'))
            .collect()
    })
}

fn has_model_name(line: &Line) -> bool {
    (line.strings.iter()).any(|s| model_names().contains(&s.as_str()))
}

fn names_a_variant(line: &Line) -> bool {
    let words = |t: &str| {
        t.split(|c: char| !(c.is_ascii_alphanumeric() || "-+._".contains(c)))
            .map(|w| w.trim_matches('.'))
            .any(|w| variant_words().contains(&w))
    };
    line.strings.iter().any(|s| words(s)) || line.help.as_deref().is_some_and(words)
}

fn has_number(line: &Line) -> bool {
    let line = line.code.as_str();
    tokens(line).any(|(t, _)| number(t).is_some_and(|n| NUMBERS.contains(&n)))
}

fn has_header_arithmetic(line: &Line) -> bool {
    let line = line.code.as_str();
    let names_a_length = tokens(line)
        .filter(|(t, _)| number(t).is_none())
        .any(|(t, _)| LENGTHS.iter().any(|l| t.contains(l)));
    names_a_length
        && tokens(line).any(|(t, at)| {
            number(t).is_some_and(|n| HEADER_SIZES.contains(&n)) && beside_sign(line, at, t)
        })
}

fn defines_header_size(line: &Line) -> bool {
    let line = line.code.as_str();
    let mut words = tokens(line)
        .map(|(t, _)| t)
        .skip_while(|t| matches!(*t, "pub" | "crate" | "super"));
    words.next() == Some("const")
        && words.next().is_some_and(|n| {
            n.ends_with("HLEN") || n.ends_with("HDR_LEN") || n.starts_with("TCPOLEN")
        })
}

fn has_hlen_arithmetic(line: &Line) -> bool {
    let line = line.code.as_str();
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

/// `text` as the rules see it, line by line: each `#[cfg(test)] mod NAME { ... }` blanked
/// to its closing `}` at column 0 (line numbers stay true), then comments and literals out
/// of the code, the string literals and clap help beside it.
fn lines(text: &str) -> Vec<Line> {
    let mut kept = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        kept.push_str(line);
        kept.push('\n');
        let test_mod = |l: &&str| l.starts_with("mod ") && l.trim_end().ends_with('{');
        if line.trim() == "#[cfg(test)]" && lines.peek().is_some_and(test_mod) {
            for skipped in lines.by_ref() {
                kept.push('\n');
                if skipped == "}" {
                    break;
                }
            }
        }
    }
    let (code, strings) = strip_literals(&kept);
    let mut out: Vec<Line> = (code.lines())
        .map(|c| Line {
            code: c.to_string(),
            ..Line::default()
        })
        .collect();
    for (n, s) in strings {
        out[n].strings.push(s);
    }
    let raw: Vec<&str> = kept.lines().collect();
    for (n, l) in raw.iter().enumerate() {
        let doc = |l: &str| l.trim_start().starts_with("///");
        let over_arg = || {
            let next = raw[n..].iter().find(|l| !doc(l));
            next.is_some_and(|l| l.trim_start().starts_with("#[arg"))
        };
        if doc(l) && over_arg() {
            out[n].help = Some(l.trim_start().trim_start_matches('/').to_string());
        }
    }
    out
}

/// `text` less comments and string and char literals (each kept as `""`), newlines kept;
/// and each string literal, as (the line it starts on, from 0, its text between the quotes).
fn strip_literals(text: &str) -> (String, Vec<(usize, String)>) {
    let b = text.as_bytes();
    let (mut out, mut strings, mut i) = (String::new(), Vec::new(), 0);
    let newlines = |s: &[u8]| "\n".repeat(s.iter().filter(|&&c| c == b'\n').count());
    while i < b.len() {
        let rest = &b[i..];
        let (skip, inner) = if rest.starts_with(b"//") {
            let end = rest.iter().position(|&c| c == b'\n').unwrap_or(rest.len());
            (end, None)
        } else if rest.starts_with(b"/*") {
            (find(rest, b"*/").map_or(rest.len(), |e| e + 2), None)
        } else if let Some(hashes) = raw_string(rest) {
            let close = format!("\"{}", "#".repeat(hashes));
            let open = hashes + 2;
            let end = find(&rest[open..], close.as_bytes()).map_or(rest.len(), |e| open + e);
            (end + close.len(), Some(open..end))
        } else if rest[0] == b'"' {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'"' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            (j + 1, Some(1..j.min(rest.len())))
        } else if rest[0] == b'\'' && char_literal(rest) {
            let mut j = 1;
            while j < rest.len() && rest[j] != b'\'' {
                j += if rest[j] == b'\\' { 2 } else { 1 };
            }
            (j + 1, None)
        } else {
            (0, None)
        };
        if skip == 0 {
            let c = text[i..].chars().next().expect("in bounds");
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        let end = (i + skip).min(b.len());
        if let Some(r) = inner {
            let line = out.matches('\n').count();
            let s = String::from_utf8_lossy(&rest[r.start..r.end.min(rest.len())]);
            strings.push((line, s.into_owned()));
        }
        if matches!(b[i], b'"' | b'r' | b'\'') {
            out.push_str("\"\"");
        }
        out.push_str(&newlines(&b[i..end]));
        i = end;
    }
    (out, strings)
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

/// Every line of `text` that breaks a rule and no exception of `file` covers, as
/// "file:line: rule: code", and the exceptions of `file` it used.
fn findings(file: &str, text: &str, used: &mut Vec<usize>) -> Vec<String> {
    let name = file.rsplit('/').next().unwrap_or(file);
    let mut out = Vec::new();
    for (n, (line, original)) in lines(text).iter().zip(text.lines()).enumerate() {
        for (rule, breaks) in RULES {
            if !breaks(line) {
                continue;
            }
            let allowed = ALLOWED
                .iter()
                .position(|(f, piece, _)| *f == name && original.contains(piece));
            match allowed {
                Some(i) => used.push(i),
                None => out.push(format!("{file}:{}: {rule}: {}", n + 1, original.trim())),
            }
        }
    }
    out
}

/// The modules that are tests of their own (`#[cfg(test)] mod name;`): tests may compute
/// what they check.
fn test_modules(files: &[(String, String)]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for (file, text) in files {
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for w in lines.windows(2) {
            let name = (w[0] == "#[cfg(test)]")
                .then(|| w[1].strip_prefix("mod ")?.strip_suffix(';'))
                .flatten();
            if let Some(name) = name {
                let mut module = imports::module_of(file);
                module.push(name.to_string());
                out.push(module);
            }
        }
    }
    out
}

#[test]
fn hosts_hold_no_kernel_arithmetic() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let (mut bad, mut used, mut skipped) = (Vec::new(), Vec::new(), Vec::new());
    let mut read = 0;
    for host in ["native-runner/src", "web/src"] {
        let files = imports::sources(&root.join(host));
        let tests = test_modules(&files);
        for (f, text) in &files {
            if (tests.iter()).any(|t| imports::module_of(f).starts_with(t)) {
                skipped.push(format!("{host}/{f}"));
                continue;
            }
            bad.extend(findings(&format!("{host}/{f}"), text, &mut used));
            read += 1;
        }
    }
    assert!(read > 20, "read only {read} host files");
    assert!(
        skipped.contains(&"native-runner/src/net/tcp/tests/pair.rs".into()),
        "{skipped:?}"
    );
    assert!(
        bad.is_empty(),
        "the core owns this arithmetic and these names (consts::wire, skb, rx::received, \
         scenario::NAMES, ...): call it, or add an exception to ALLOWED saying why it is fine:\n{}",
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
        "report(\"mptcp\", variant, setup)",
        "Model { mechanism: \"rx\", variant: name }",
        "let v = variant.unwrap_or(\"modern\");",
        "EventKind::AllocSkb => \"alloc_skb\",",
        "let help = format!(\"one of pre-2010, {more}\");",
        "/// The variant (an allocator: duyck-3.6, ...).\n#[arg(long)]",
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
        "#[cfg(test)]\nmod tests {\n    report(\"rx\", \"modern+defer-free\");\n}",
        "html! { <option>{ \"— none —\" }</option> }",
        "let svg = format!(r#\"<rect rx=\"4\"/>\"#);",
        "let e = \"the bench builds a sendmsg scenario\";",
        "/// The modern allocator's pages, as in pre-2012.\nfn pages() {}",
        "#[arg(long, help = rx_variant_help())]",
    ] {
        assert!(caught(fine).is_empty(), "{fine}: {:?}", caught(fine));
    }
    // Lines stay where they were, past a test module and a multi-line string.
    let text = "let a = \"x\n y\";\n#[cfg(test)]\nmod t {\n}\nlet b = mtu - 40;\n";
    assert_eq!(caught(text)[0].split(':').nth(1), Some("6"));
    let tcp = "const HDR_LEN: u16 = (ETH_HLEN + IPV4_HLEN + TCP_TS_HLEN) as u16;";
    assert!(!findings("native-runner/src/net/tcp/mod.rs", tcp, &mut Vec::new()).is_empty());
}
