//! Bad scenarios get an `Error` naming the field (and the allowed range), never a panic.
//! One row per case: the scenario body after `mechanism = "sendmsg"`, and the words the
//! message must contain.

use skblab_core::{run_text, RunOptions};

const WRITE: &str = "[[ops]]\nop = \"sendmsg\"\nbytes = 1000\n";

const CASES: &[(&str, &[&str])] = &[
    ("[socket]\nmss = 0\n[[ops]]\nop = \"close\"\n", &["socket.mss", "48..=1448"]),
    ("[device]\nmtu = 99\n[[ops]]\nop = \"close\"\n", &["device.mtu", "100..=65535"]),
    ("[socket]\nmss = 1449\n[[ops]]\nop = \"close\"\n", &["socket.mss", "48..=1448"]),
    ("[socket]\ntcp_header_len = 4\n[[ops]]\nop = \"close\"\n", &["socket.tcp_header_len"]),
    ("[socket]\nmax_window = 4294967295\n[[ops]]\nop = \"close\"\n", &["socket.max_window"]),
    ("[[ops]]\nop = \"sendmsg\"\nbytes = 1000000000000000\n", &["ops[0].bytes", "0..=16777216"]),
    ("[[ops]]\nop = \"sendmsg\"\niov = [1, 1000000000000000]\n", &["ops[0].iov[1]"]),
    ("[[ops]]\nop = \"sendmsg\"\n", &["ops[0]", "bytes", "iov"]),
    ("[[ops]]\nop = \"sendmsg\"\nbytes = 1\niov = [1]\n", &["ops[0]"]),
    ("[device]\nsg = false\ngso = true\n[[ops]]\nop = \"close\"\n", &["device.gso"]),
    ("[device]\ncsum = false\n[[ops]]\nop = \"close\"\n", &["device.sg"]),
    ("[socket]\nsndbuf = 4096\n[[ops]]\nop = \"sendmsg\"\nbytes = 100000\n", &["ops[0]", "would block", "socket.sndbuf"]),
    ("[socket]\nsndbuf = 100\n[[ops]]\nop = \"close\"\n", &["socket.sndbuf", "4096..=67108864"]),
    ("[consts]\nmax_skb_frags = 0\n[[ops]]\nop = \"close\"\n", &["consts.max_skb_frags", "1..=64"]),
    ("variant = \"2011\"\n[[ops]]\nop = \"close\"\n", &["variant", "pre-2010, kumar-2010, modern"]),
    ("[[ops]]\nop = \"close\"\n[[ops]]\nop = \"transmit\"\n", &["ops[1]", "closed"]),
    ("[[ops]]\nop = \"socket\"\n", &["ops[0]", "still open"]),
    ("[[ops]]\nop = \"sendmsg\"\nbytes = 1000\n[[ops]]\nop = \"transmit\"\n[[ops]]\nop = \"ack\"\nbytes = 1001\n",
        &["ops[2].bytes", "0..=1000"]),
    ("[[ops]]\nop = \"splice\"\n", &["ops[0]", "splice"]),
    // The playground titles a run by its title: a bidi override would reorder it, an escape
    // sequence drive a terminal.
    ("title = \"\\u202eRTL\"\n[[ops]]\nop = \"close\"\n", &["`title`", "control or format character U+202E"]),
    ("title = \"\\u001b[2J\"\n[[ops]]\nop = \"close\"\n", &["`title`", "U+001B"]),
    ("[[ops]]\nop = \"sendmsg\"\nbytes = -1\n", &["`ops[0].bytes`", "integer `-1`"]),
    ("[[ops]]\nop = \"sendmsg\"\nbytes = 1\ncount = 1.5\n", &["`ops[0].count`"]),
    ("[[ops]]\nop = \"sendmsg\"\nbytes = 1\ncuont = 2\n", &["`ops[0].cuont`", "unknown field"]),
    ("[[ops]]\nop = \"transmit\"\nsubflow = 1\n", &["`ops[0].subflow`", "`transmit` takes no fields"]),
    ("[socket]\nmss = \"big\"\n[[ops]]\nop = \"close\"\n", &["socket.mss"]),
    ("[[ops]]\nop = \"sendmsg\"\nbytes = 1\ncount = 0\n", &["ops[0].count", "1..=1000000"]),
    ("[socket]\nsndbuf = 65536\n[[ops]]\nop = \"sendmsg\"\nbytes = 60000\ncount = 5\n",
        &["ops[0]", "call 2 of 5", "would block"]),
    // nan and inf are no numbers: an optional field must not take them as absent.
    ("[[ops]]\nop = \"sendmsg\"\nbytes = 10\n[[ops]]\nop = \"transmit\"\n[[ops]]\nop = \"ack\"\nbytes = nan\n",
        &["TOML parse error at `ops[2].bytes`", "nan and inf are not allowed"]),
    ("variant = -inf\n[[ops]]\nop = \"close\"\n", &["TOML parse error at `variant`", "nan and inf"]),
    ("[[ops]]\nop = \"sendmsg\"\niov = [1, inf]\n", &["`ops[0].iov[1]`", "nan and inf"]),
    // Found by fuzzing (fuzz/regressions/scenario_text): toml has no message for this.
    ("# a comment \u{1}\n", &["line 2 column 13", "unexpected control character U+0001"]),
];

fn check(body: &str, words: &[&str]) {
    let text = format!("mechanism = \"sendmsg\"\n{body}");
    let err = run_text(&text, &RunOptions::default())
        .expect_err(body)
        .to_string();
    for w in words {
        assert!(err.contains(w), "{body:?}: `{err}` lacks `{w}`");
    }
}

#[test]
fn bad_scenarios_name_the_field() {
    for (body, words) in CASES {
        check(body, words);
    }
}

#[test]
fn caps_on_ops_iovecs_and_total() {
    check(&WRITE.repeat(10_001), &["ops", "0..=10000"]);
    let iov = vec!["1"; 1025].join(", ");
    check(
        &format!("[[ops]]\nop = \"sendmsg\"\niov = [{iov}]\n"),
        &["ops[0].iov", "0..=1024"],
    );
    let big = "[[ops]]\nop = \"sendmsg\"\nbytes = 16777216\n".repeat(17);
    check(&big, &["ops[16].bytes", "running total"]);
    let many = "[[ops]]\nop = \"sendmsg\"\nbytes = 1\ncount = 600000\n".repeat(2);
    check(
        &many,
        &["ops[1].count", "1200000 (running total)", "1000000 writes"],
    );
    let heavy = "[[ops]]\nop = \"sendmsg\"\niov = [16384, 16384]\ncount = 9000\n";
    check(heavy, &["ops[0].iov", "294912000 (running total)"]);
}

#[test]
fn a_trace_too_large_to_show_is_an_error_but_counters_only_runs() {
    // 16 MiB held in 1448-byte skbs (11,587 of them), shown by 100 more steps.
    let text = format!(
        "mechanism = \"sendmsg\"\n[socket]\nsndbuf = 67108864\n[device]\ngso = false\n\
         [[ops]]\nop = \"sendmsg\"\nbytes = 16777216\n{}",
        "[[ops]]\nop = \"transmit\"\n".repeat(100)
    );
    let err = run_text(&text, &RunOptions::default()).expect_err("too big to trace");
    let msg = err.to_string();
    assert!(
        msg.contains("`ops`") && msg.contains("counters-only"),
        "{msg}"
    );
    let quiet = RunOptions::counters(None);
    let t = run_text(&text, &quiet).expect("counters-only runs");
    assert_eq!(t.counters.get("wire_bytes"), Some(16 << 20));
}

#[test]
fn one_op_with_too_many_events_is_refused_not_built() {
    // A million writes in one step would be millions of events: the run stops keeping them
    // at the trace cap and says so (the counters-only run still does all the work).
    let text = "mechanism = \"mptcp\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 256\ncount = 1000000\n";
    let err = run_text(text, &RunOptions::default()).expect_err("too many events");
    assert!(err.to_string().contains("ops[0]"), "{err}");
    let quiet = RunOptions::counters(None);
    let t = run_text(text, &quiet).expect("counters-only runs");
    assert_eq!(t.counters.get("bytes_written"), Some(256_000_000));
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_text() {
    let json =
        "\u{feff}{\"mechanism\": \"sendmsg\", \"ops\": [{\"op\": \"sendmsg\", \"bytes\": 5}]}";
    let toml = "\u{feff}mechanism = \"sendmsg\"\n[[ops]]\nop = \"sendmsg\"\nbytes = 5\n";
    for text in [json, toml] {
        let t = run_text(text, &RunOptions::default()).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert_eq!(t.counters.get("bytes_written"), Some(5), "{text:?}");
    }
}

#[test]
fn text_that_ends_where_a_value_should_be_says_so() {
    let err = run_text("mechanism = ", &RunOptions::default())
        .expect_err("no value")
        .to_string();
    assert_eq!(
        err,
        "TOML parse error at `line 1 column 13`: expected a value here (the text ends)"
    );
}
