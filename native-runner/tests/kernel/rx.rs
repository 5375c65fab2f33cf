//! Seed 002: where consumed skbs are freed (`defer-free`), frames through the TAP on CPU 0
//! read on CPU 1 or CPU 0 (`src/kernel/rx.rs`).

use super::*;

/// Each consumed skb as (len, alloc_cpu, free_cpu).
fn frees(v: &Value, side: &str) -> Vec<(u64, u64, u64)> {
    v[side]["skbs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let n = |f: &str| s[f].as_u64().unwrap_or(u64::MAX);
            (n("len"), n("alloc_cpu"), n("free_cpu"))
        })
        .collect()
}

/// Seed 002 as today's kernel does it: skbs allocated on CPU 0 (the TAP's writer, where
/// tcp_v4_rcv runs), read on CPU 1, are freed back on CPU 0 (skb_attempt_defer_free to the
/// allocating CPU's list, skb_defer_free_flush in net_rx_action), as `defer-free` says: the
/// seed's example (three full GRO skbs, read one at a time), 40 one-frame skbs read at
/// once (the list passes half of skb_defer_max: the kick; 4,000-byte segments, whose heads
/// are kmalloc'ed in the model, so its receive queue does not merge them, as the kernel's
/// does not merge the TAP's kmalloc'ed heads), and a reader on CPU 0 itself (freed at once,
/// there).
#[test]
fn seed_002_defer_free_frees_on_the_allocating_cpu() {
    if !kernel_available("seed_002_defer_free_frees_on_the_allocating_cpu") {
        return;
    }
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/rx-skb-cache.toml");
    let (code, v) = report(&example);
    assert_eq!(v["verdict"], "agree", "{v:#}");
    assert_eq!(code, 0);
    assert_eq!(v["variant"], "modern+defer-free");
    assert_eq!(frees(&v, "kernel_side"), [(65160, 0, 0); 3]);
    let many = scenario(
        "rx_kick",
        "mechanism = \"rx\"\n[nic]\ngro = false\n[socket]\nmss = 4000\n\
         [[ops]]\nop = \"arrive\"\nframes = 40\n[[ops]]\nop = \"recvmsg\"\n",
    );
    let (code, v) = report(&many);
    assert_eq!(v["verdict"], "agree", "{v:#}");
    assert_eq!(code, 0);
    assert_eq!(frees(&v, "kernel_side"), [(4000, 0, 0); 40]);
    // The reader on the allocating CPU: skb_attempt_defer_free frees at once, on the
    // reader's CPU, which is CPU 0 here; a softirq op on CPU 1 changes nothing.
    let local = scenario(
        "rx_reader_on_cpu0",
        "mechanism = \"rx\"\n[app]\ncpu = 0\n\
         [[ops]]\nop = \"arrive\"\nframes = 45\n[[ops]]\nop = \"recvmsg\"\n\
         [[ops]]\nop = \"arrive\"\nframes = 20\n[[ops]]\nop = \"recvmsg\"\n\
         [[ops]]\nop = \"softirq\"\ncpu = 1\n",
    );
    let (code, l) = report(&local);
    assert_eq!(l["verdict"], "agree", "{l:#}");
    assert_eq!(code, 0);
    assert_eq!(frees(&l, "kernel_side"), [(65160, 0, 0), (28960, 0, 0)]);
    // Seed 001, shown, never judged: the first 45 frames through tun_build_skb all wait
    // unread in the writer's task_frag, 1,920 bytes each (SKB_DATA_ALIGN(1514 + 64) + 320),
    // so its pages hold at least 45 x 1,920 bytes whatever order they came in.
    let built =
        &l["shown"]["kernel_pages"]["the same payload as MSS frames (tun_build_skb: task_frag)"];
    let bytes: u64 = built
        .as_object()
        .unwrap_or_else(|| panic!("{v:#}"))
        .iter()
        .map(|(order, n)| {
            let order: u32 = order.trim_start_matches("order ").parse().unwrap();
            (4096 << order) * n.as_u64().unwrap()
        })
        .sum();
    assert!(bytes >= 45 * 1920, "{built}");
    assert!(!l["rows"].to_string().contains("page"));
}

/// The rx checker can fail: `modern+none` (recvmsg frees on the reader's CPU, as before
/// 2019) is not the running kernel, and every consumed skb's free_cpu differs.
#[test]
fn rx_freeing_on_the_reader_cpu_is_reported_as_differ() {
    if !kernel_available("rx_freeing_on_the_reader_cpu_is_reported_as_differ") {
        return;
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/rx-skb-cache.toml");
    let out = skblab_kernel(&p, &["--json", "--variant", "modern+none"]);
    assert_eq!(out.status.code(), Some(1));
    let v = read_back(&out);
    assert_eq!(v["verdict"], "differ", "{v:#}");
    assert_eq!(frees(&v, "model"), [(65160, 0, 1); 3]);
    assert_eq!(frees(&v, "kernel_side"), [(65160, 0, 0); 3]);
    let bad: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["agree"] == false)
        .map(|r| r["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        bad,
        ["skb[0].free_cpu", "skb[1].free_cpu", "skb[2].free_cpu"]
    );
}
