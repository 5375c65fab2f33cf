//! Tun's NAPI frags path: seed 001's frag cache pages (`src/kernel/napi_frags.rs`) and TCP's
//! receive coalescing (`src/kernel/napi_tcp.rs`), and another user of CPU 0's frag cache.

use super::*;

/// Seed 001's runs share CPU 0's frag cache: the tests that use it take turns (the noise of
/// one would make another's trace untrusted).
static FRAG_CACHE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn frag_cache_turn() -> std::sync::MutexGuard<'static, ()> {
    FRAG_CACHE.lock().unwrap_or_else(|e| e.into_inner())
}

/// One judged row's (model, kernel) values.
fn row(v: &Value, field: &str) -> (u64, u64) {
    let r = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["field"] == field)
        .unwrap_or_else(|| panic!("no row {field}: {v:#}"));
    (r["model"].as_u64().unwrap(), r["kernel"].as_u64().unwrap())
}

/// Seed 001 on the running kernel, through tun's NAPI frags path (netdev_alloc_frag on CPU
/// 0's page_frag_cache): 100 frames of 1,448 payload bytes, 1,472-byte fragments, 22 to a
/// 32 KiB page. A prompt reader: one page, started over every 22 frames. A reader that holds
/// everything: no reuse and no page more than the fragments need (5), every page but the
/// cache's own freed at close. Every page order 3, on CPU 0, as `modern` says.
#[test]
fn seed_001_frag_cache_pages_agree_with_modern() {
    if !kernel_available("seed_001_frag_cache_pages_agree_with_modern") {
        return;
    }
    let _turn = frag_cache_turn();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let (code, v) = report(&dir.join("rx-napi-frags-prompt.toml"));
    eprintln!("prompt: retried {}", v["setup"]["untrusted_runs_retried"]);
    assert_eq!(v["verdict"], "agree", "{v:#}");
    assert_eq!(code, 0);
    assert_eq!(row(&v, "frag_cache_pages"), (1, 1));
    assert_eq!(row(&v, "page_reuses"), (4, 4));
    assert_eq!(row(&v, "page[0].fragments"), (100, 100));
    assert_eq!(row(&v, "page_frees"), (0, 0));
    let (code, v) = report(&dir.join("rx-napi-frags-lagging.toml"));
    eprintln!("lagging: retried {}", v["setup"]["untrusted_runs_retried"]);
    assert_eq!(v["verdict"], "agree", "{v:#}");
    assert_eq!(code, 0);
    assert_eq!(row(&v, "frag_cache_pages"), (5, 5));
    assert_eq!(row(&v, "page_reuses"), (0, 0));
    assert_eq!(row(&v, "page_frees"), (4, 4));
    for i in 0..5 {
        let frames = if i < 4 { 22 } else { 12 };
        assert_eq!(row(&v, &format!("page[{i}].fragments")), (frames, frames));
        assert_eq!(row(&v, &format!("page[{i}].order")), (3, 3));
        assert_eq!(row(&v, &format!("page[{i}].cpu")), (0, 0));
    }
}

/// The seed-001 checker can fail: v3.5's netdev_alloc_frag (order-0 pages) is not the
/// running kernel's cache. There `napi_get_frags`' head (GRO_MAX_HEAD: 704 bytes) came from
/// the same cache as the payload (1,472), so three allocations fit a 4 KiB page: 200 in 67.
#[test]
fn seed_001_an_order_0_cache_is_reported_as_differ() {
    if !kernel_available("seed_001_an_order_0_cache_is_reported_as_differ") {
        return;
    }
    let _turn = frag_cache_turn();
    let p =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/rx-napi-frags-lagging.toml");
    let out = skblab_kernel(&p, &["--json", "--variant", "pre-2012"]);
    let v = read_back(&out);
    assert_eq!(v["verdict"], "differ", "{v:#}");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(row(&v, "frag_cache_pages"), (67, 5));
    assert_eq!(row(&v, "page[0].order"), (0, 3));
}

/// `scenarios/rx-napi-frags-tcp.toml` with GRO `gro` and the extra TOML `consts` (a
/// `[consts]` table), as `skblab kernel --json` judges it.
fn napi_tcp_report(gro: bool, consts: &str, extra: &[&str]) -> (Option<i32>, Value) {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/rx-napi-frags-tcp.toml");
    let text = std::fs::read_to_string(p).unwrap();
    let text = text.replace("gro = true", &format!("gro = {gro}")) + consts;
    let f = scenario(&format!("napi-tcp-{gro}"), &text);
    let out = skblab_kernel(&f, &[&["--json"], extra].concat());
    (out.status.code(), read_back(&out))
}

/// TCP through tun's NAPI frags path (heads from napi_get_frags, payload in CPU 0's frag
/// cache), GRO off and on: tun flushes GRO after every frame, so the receive queue does the
/// merging either way. 40 segments of 1,448 bytes become skbs of 17, 17 and 6 frags (16, 16
/// and 5 skbs merged into them and freed at arrival on CPU 0), read by one recvmsg; 10 more
/// become one of 10. Each read skb goes back to CPU 0; the payload filled 3 pages of 22
/// fragments, and the 2 the cache let go of are freed once the skbs on them are.
#[test]
fn tcp_receive_coalescing_agrees_with_modern() {
    if !kernel_available("tcp_receive_coalescing_agrees_with_modern") {
        return;
    }
    let _turn = frag_cache_turn();
    for gro in [false, true] {
        let (code, v) = napi_tcp_report(gro, "", &[]);
        eprintln!(
            "gro {gro}: retried {}",
            v["setup"]["untrusted_runs_retried"]
        );
        assert_eq!(v["verdict"], "agree", "gro {gro}: {v:#}");
        assert_eq!(code, Some(0));
        assert_eq!(row(&v, "skbs"), (4, 4));
        for (i, frags, merged, recvmsg) in
            [(0, 17, 16, 0), (1, 17, 16, 0), (2, 6, 5, 0), (3, 10, 9, 1)]
        {
            assert_eq!(row(&v, &format!("skb[{i}].nr_frags")), (frags, frags));
            assert_eq!(row(&v, &format!("skb[{i}].merged")), (merged, merged));
            assert_eq!(row(&v, &format!("skb[{i}].recvmsg")), (recvmsg, recvmsg));
            assert_eq!(
                row(&v, &format!("skb[{i}].len")),
                (frags * 1448, frags * 1448)
            );
            assert_eq!(row(&v, &format!("skb[{i}].free_cpu")), (0, 0));
        }
        assert_eq!(row(&v, "frag_cache_pages"), (3, 3));
        assert_eq!(row(&v, "page_frees"), (2, 2));
    }
}

/// The coalescing checker can fail: a model whose skbs hold at most 8 frags
/// (`max_skb_frags = 8`) merges 7 into each, where the kernel merges 16.
#[test]
fn tcp_coalescing_with_a_wrong_frag_limit_is_reported_as_differ() {
    if !kernel_available("tcp_coalescing_with_a_wrong_frag_limit_is_reported_as_differ") {
        return;
    }
    let _turn = frag_cache_turn();
    let (code, v) = napi_tcp_report(false, "\n[consts]\nmax_skb_frags = 8\n", &[]);
    assert_eq!(v["verdict"], "differ", "{v:#}");
    assert_eq!(code, Some(1));
    assert_eq!(row(&v, "skbs"), (7, 4));
    assert_eq!(row(&v, "skb[0].merged"), (7, 16));
}

/// Another user of CPU 0's frag cache while seed 001 runs: a thread pinned to CPU 0, in a
/// namespace of its own, writing frames to a NAPI frags TAP of its own (to a MAC that is not
/// the TAP's, so each is dropped and its fragment freed at once), as fast as it can. Its
/// fragments fall between the run's: the run must see that and say `inconclusive`, or agree
/// where a run was spared, never differ.
#[test]
fn another_frag_cache_user_never_yields_a_wrong_verdict() {
    if !kernel_available("another_frag_cache_user_never_yields_a_wrong_verdict") {
        return;
    }
    let _turn = frag_cache_turn();
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let (stop, frames) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let (flag, count) = (stop.clone(), frames.clone());
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let noise = std::thread::spawn(move || {
        // SAFETY: plain syscalls on this thread: unshare moves it alone; the CPU set names
        // CPU 0; the ifreq is plain data; the iovecs point at live buffers.
        unsafe {
            assert_eq!(libc::unshare(libc::CLONE_NEWNET), 0);
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut set);
            assert_eq!(
                libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set),
                0
            );
            let fd = libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR);
            assert!(fd >= 0);
            let mut r: libc::ifreq = std::mem::zeroed();
            for (i, b) in b"skbnoise0".iter().enumerate() {
                r.ifr_name[i] = *b as libc::c_char;
            }
            // IFF_TAP | IFF_NO_PI | IFF_NAPI | IFF_NAPI_FRAGS.
            r.ifr_ifru.ifru_flags = 0x0002 | 0x1000 | 0x0010 | 0x0020;
            assert_eq!(libc::ioctl(fd, 0x4004_54ca, &mut r), 0, "TUNSETIFF");
            link_up("skbnoise0");
            // Ethernet to 02:..:99, IPv4 192.0.2.2 -> 192.0.2.1, UDP: headers the flow
            // dissector reads whole; then 1,448 payload bytes.
            let mut hdr = vec![2, 0, 0, 0, 0, 0x99, 2, 0, 0, 0, 0, 2, 8, 0];
            hdr.extend([
                0x45, 0, 0x05, 0xc4, 0, 0, 0, 0, 64, 17, 0, 0, 192, 0, 2, 2, 192, 0, 2, 1,
            ]);
            hdr.extend([0x9c, 0x40, 0x13, 0x8c, 0x05, 0xb0, 0, 0]);
            let body = vec![0u8; 1448];
            let iov = [&hdr[..], &body[..]].map(|b| libc::iovec {
                iov_base: b.as_ptr() as *mut libc::c_void,
                iov_len: b.len(),
            });
            ready_tx.send(()).unwrap();
            while !flag.load(Ordering::Relaxed) {
                assert!(libc::writev(fd, iov.as_ptr(), 2) > 0);
                count.fetch_add(1, Ordering::Relaxed);
            }
            libc::close(fd);
        }
    });
    ready_rx.recv().expect("the other frag cache user started");
    let p =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/rx-napi-frags-lagging.toml");
    let out = skblab_kernel(&p, &["--json"]);
    stop.store(true, Ordering::Relaxed);
    noise.join().unwrap();
    let (code, err) = (out.status.code(), String::from_utf8_lossy(&out.stderr));
    eprintln!(
        "exit {code:?}, the other user wrote {} frames: {err}",
        frames.load(Ordering::Relaxed)
    );
    assert!(frames.load(Ordering::Relaxed) > 0);
    match code {
        Some(0) => {
            let v = read_back(&out);
            assert_eq!(row(&v, "frag_cache_pages"), (5, 5), "{v:#}");
        }
        Some(2) => assert!(err.contains("inconclusive"), "{err}"),
        _ => panic!("a wrong verdict under another frag cache user: {code:?} {err}"),
    }
}
