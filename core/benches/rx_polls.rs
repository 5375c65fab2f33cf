//! Receive-path speed: for each variant pair, one million full-sized frames through NAPI,
//! GRO and a prompt reader, counters only (modelled frames per second); one million small
//! UDP frames through a header-split driver to a socket nobody reads, purged at close (the
//! state then holds a million skbs and their pages, freed oldest first); then a 10,000-step
//! traced run (one-frame arrive / recvmsg alternating), within MAX_TRACE_OBJECTS.
//!
//! `cargo bench -p skblab-core --bench rx_polls` (add `-- --quick` for 100,000 frames).

use skblab_core::rx::{AppParams, NicParams, RxMachine, RxOp, RxParams, SocketParams, Variant};
use skblab_core::rx::{DriverStyle, Proto};
use skblab_core::rx::{ALLOCATORS, CACHES};
use skblab_core::trace::{drive, Events};
use std::time::Instant;

fn params(name: &str, prompt: bool) -> RxParams {
    with_flow(name, prompt, NicParams::default(), SocketParams::default())
}

fn with_flow(name: &str, prompt: bool, nic: NicParams, socket: SocketParams) -> RxParams {
    let mut v = Variant::default();
    v.set(name).expect("known variant");
    let app = AppParams {
        prompt,
        ..AppParams::default()
    };
    RxParams::new(v, &Default::default(), nic, socket, app).expect("default knobs are valid")
}

/// `frames` 100-byte UDP frames through a header-split driver, unread, then close.
fn unread_udp(frames: usize) {
    let nic = NicParams {
        driver: DriverStyle::HeaderSplit,
        ..NicParams::default()
    };
    let socket = SocketParams {
        proto: Proto::Udp,
        ..SocketParams::default()
    };
    let mut m = RxMachine::new(with_flow("duyck-2012", false, nic, socket));
    let lens = vec![100; 64];
    let mut ev = Events::off();
    let t = Instant::now();
    for _ in 0..frames / 64 {
        m.arrive(&lens, &mut ev).expect("valid frames");
    }
    drive(&mut m, &[RxOp::Close], false).expect("close");
    let secs = t.elapsed().as_secs_f64();
    println!("{frames} unread UDP frames, header-split, purged at close: {secs:.3} s");
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let frames: usize = if quick { 100_000 } else { 1_000_000 };
    println!("{frames} frames of 1514 bytes, GRO, prompt reader, counters only:");
    for a in ALLOCATORS {
        for c in CACHES {
            let name = format!("{a}+{c}");
            let p = params(&name, true);
            let mut m = RxMachine::new(p);
            let lens = vec![p.frame_len(); 64];
            let mut ev = Events::off();
            let t = Instant::now();
            for _ in 0..frames / 64 {
                m.arrive(&lens, &mut ev).expect("valid frames");
            }
            let secs = t.elapsed().as_secs_f64();
            println!("{name:>28}: {:>12.0} frames/s", frames as f64 / secs);
        }
    }
    unread_udp(frames);
    let ops: Vec<RxOp> = (0..10_000)
        .map(|i| match i % 2 {
            0 => RxOp::Arrive {
                frames: Some(1),
                len: None,
                lens: None,
            },
            _ => RxOp::Recvmsg {
                bytes: None,
                skbs: None,
            },
        })
        .collect();
    let mut m = RxMachine::new(params("modern+defer-free", false));
    let t = Instant::now();
    let (steps, _) = drive(&mut m, &ops, true).expect("valid ops");
    println!(
        "traced 10,000 steps ({} steps): {:.3} s",
        steps.len(),
        t.elapsed().as_secs_f64()
    );
}
