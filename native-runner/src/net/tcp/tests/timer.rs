//! The retransmission timeout (`timer.rs`, RFC 6298): what it resends and how it backs off.

use super::*;

#[test]
fn a_timeout_resends_the_unsacked_flight_only_and_backs_off() {
    let mut ep = ten_out();
    // Two SACKed segments: RACK finds 0 and 1 lost once its reordering window passes and
    // recovery resends them; then silence until the timeout.
    sack_ack(&mut ep, 0, &[(2 * SEG, 4 * SEG)]);
    let first = until_the_timeout(&mut ep);
    ep.poll(first);
    assert_eq!(data(&ep.take_out()), [(0, SEG as usize, 0)]);
    assert_eq!(ep.rec.ca, Ca::Loss);
    // The next timeout waits twice as long (RFC 6298 5.5).
    let second = ep.deadline().expect("re-armed");
    ep.poll(second);
    ep.take_out();
    let third = ep.deadline().expect("re-armed");
    assert_eq!(third - second, 2 * (second - first));
    // The first segment's ACK, echoing the latest resend (so not undone): slow start
    // resends segment 1, skips 2 and 3, resends 4.
    ack_echoing(
        &mut ep,
        SEG,
        second.as_micros() as u32,
        &[(2 * SEG, 4 * SEG)],
    );
    let d = data(&ep.take_out());
    let offs: Vec<u32> = d.iter().map(|&(off, ..)| off / SEG as u32).collect();
    assert_eq!(offs, [1, 4], "{d:?}");
}

#[test]
fn a_timeout_goes_back_to_snd_una() {
    let mut ep = endpoint(20_000, &[20_000], false);
    establish(&mut ep);
    let at = until_the_timeout(&mut ep);
    // The loss probe went first, with new data.
    assert_eq!(ep.stats.loss_probes, 1);
    ep.poll(at);
    assert_eq!(data(&ep.take_out()), [(0, 1448, 0)]);
    assert_eq!(ep.stats.timeouts, 1);
}
