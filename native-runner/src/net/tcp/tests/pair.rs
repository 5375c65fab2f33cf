//! Loss recovery without root: two endpoints through the TAP runs' faults ([`Wire`]) in
//! memory, on a simulated clock. One opens and sends a stream cut into skbs, the other
//! listens, receives and reassembles it; both close.

use super::{config, ends, kernel_ends, IRS, ISS};
use crate::net::faults::{Rates, Tally, Wire};
use crate::net::tcp::{Chunk, Endpoint, Event, Out};
use std::time::Duration;

const MS: Duration = Duration::from_millis(1);

/// What one transfer did: the bytes received, each direction's faults, and the sender.
struct Run {
    received: Vec<u8>,
    faults: [Tally; 2],
    sender: Endpoint,
}

/// Hands `frames` to `to` at `now`, collecting what it delivers.
fn arrive(
    frames: impl IntoIterator<Item = Out>,
    to: &mut Endpoint,
    now: Duration,
    got: &mut Vec<u8>,
) {
    for o in frames {
        to.on_frame(o.vnet, &o.frame, now)
            .expect("no RST in memory");
    }
    to.flush_ack();
    while let Some(e) = to.poll_event() {
        if let Event::Data(d) = e {
            got.extend(d);
        }
    }
}

/// Sends `payload` in 64 KiB skbs from one endpoint to the other over `rates`, until both
/// FINs are acknowledged or ten simulated minutes pass. `lose` drops a sender's frame before
/// the wire when it says so.
fn transfer(
    payload: &[u8],
    gso: bool,
    rates: Rates,
    seed: u64,
    mut lose: impl FnMut(&Out) -> bool,
) -> Run {
    let len = payload.len() as u64;
    let chunks = (1..=len.div_ceil(65_536))
        .map(|i| Chunk {
            end: (i * 65_536).min(len),
            psh: true,
        })
        .collect();
    let mut a = Endpoint::new(config(ends(), gso, true), payload.to_vec(), chunks, ISS);
    let mut b = Endpoint::new(config(kernel_ends(), gso, false), vec![], vec![], IRS);
    let (mut ab, mut ba) = (Wire::to_kernel(rates, seed), Wire::to_runner(rates, seed));
    let (mut received, mut nothing) = (Vec::new(), Vec::new());
    let mut now = Duration::ZERO;
    a.start(now);
    b.listen();
    while !(a.done() && b.done()) && now < Duration::from_secs(600) {
        let (to_b, to_a) = (a.take_out(), b.take_out());
        if to_b.is_empty() && to_a.is_empty() {
            // The wire is quiet: frames held back for reordering arrive now, else time passes.
            let held = (ab.flush(), ba.flush());
            if held.0.is_none() && held.1.is_none() {
                let next = [a.deadline(), b.deadline()].into_iter().flatten().min();
                now = next.unwrap_or(now + MS).max(now + MS);
            }
            arrive(held.0, &mut b, now, &mut received);
            arrive(held.1, &mut a, now, &mut nothing);
        } else {
            now += MS / 10;
            arrive(
                to_b.into_iter()
                    .filter(|o| !lose(o))
                    .flat_map(|o| ab.pass(o)),
                &mut b,
                now,
                &mut received,
            );
            arrive(
                to_a.into_iter().flat_map(|o| ba.pass(o)),
                &mut a,
                now,
                &mut nothing,
            );
        }
        a.poll(now);
        b.poll(now);
    }
    assert!(
        a.done() && b.done(),
        "the transfer did not finish in 600 simulated seconds: {} of {len} bytes received",
        received.len()
    );
    Run {
        received,
        faults: [ab.tally, ba.tally],
        sender: a,
    }
}

fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 7 % 251) as u8).collect()
}

#[test]
fn a_clean_wire_carries_the_stream_without_a_resend() {
    for gso in [false, true] {
        let data = payload(300_000);
        let run = transfer(&data, gso, Rates::default(), 1, |_| false);
        assert!(run.received == data, "gso {gso}: the stream arrived intact");
        assert_eq!(run.sender.stats().retransmitted_segments, 0, "gso {gso}");
    }
}

/// The documented rates (docs/tap.md): 10 % drop, 5 % reordering and 2 % corruption each
/// way, plain and GSO, several seeds: every run loses frames, recovers them and delivers the
/// stream intact.
#[test]
fn loss_reordering_and_corruption_are_recovered_in_memory() {
    let rates = Rates {
        drop: 0.1,
        reorder: 0.05,
        corrupt: 0.02,
    };
    let data = payload(300_000);
    for gso in [false, true] {
        for seed in 1..=4 {
            let run = transfer(&data, gso, rates, seed, |_| false);
            let s = run.sender.stats();
            let what = format!("gso {gso}, seed {seed}: {s:?}, faults {:?}", run.faults);
            assert!(run.received == data, "{what}: the stream arrived intact");
            assert!(
                run.faults[0].dropped > 0 && run.faults[1].dropped > 0,
                "{what}"
            );
            assert!(s.retransmitted_segments > 0, "{what}: lost data was resent");
            assert!(
                s.fast_retransmits + s.rack_lost > 0,
                "{what}: loss found without a timeout too"
            );
        }
    }
}

/// RACK finds what the SACK rule cannot: a lost retransmission. The 31st data segment (in
/// the first 64 KiB skb) is dropped twice, first sent and first resent. The SACK rule marks
/// a hole lost once (RFC 6675 never marks a range resent since as lost again), so only RACK,
/// by time, or the timeout can find the lost resend. On the simulated clock RACK's reordering
/// window ends long before the 30 ms timeout, so RACK finds it, and the stream arrives intact.
#[test]
fn rack_finds_a_lost_retransmission_that_the_sack_rule_cannot() {
    use skblab_core::consts::wire::{advmss, TCPOLEN_TSTAMP_ALIGNED};
    let data = payload(300_000);
    // The sender's ISS is 1000; each segment carries the MSS less the timestamp option.
    let seq = 1001 + 30 * (advmss(1500) - TCPOLEN_TSTAMP_ALIGNED);
    let mut drops = 0;
    let run = transfer(&data, false, Rates::default(), 1, |o| {
        let hit = matches!(
            crate::net::wire::parse(&o.frame),
            crate::net::wire::Frame::Tcp(t) if t.seq == seq && !t.payload.is_empty()
        );
        let lost = hit && drops < 2;
        drops += u32::from(lost);
        lost
    });
    let s = run.sender.stats();
    assert!(run.received == data, "the stream arrived intact: {s:?}");
    assert_eq!(drops, 2, "both sends of the segment were dropped: {s:?}");
    assert_eq!(
        (s.rack_lost_resends, s.timeouts),
        (1, 0),
        "RACK found the lost resend, before any timeout: {s:?}"
    );
}
