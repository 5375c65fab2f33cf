//! Seed 000: `sendmsg` scenarios on a kernel TCP socket whose peer window is closed (a
//! held queue), beside the send model (`src/kernel/send.rs`).

use super::*;

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
