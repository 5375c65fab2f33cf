//! Undo (`undo.rs`): a timeout the peer's timestamps or D-SACK prove needless is undone;
//! one its ACK answers stands.

use super::*;

/// A timeout with the kernel's ACK merely late. Ten segments go at 2 ms (SRTT 1.999 ms,
/// RTO at its 30 ms floor); the probe goes at 2 + 2 x 1.999 + 2 = 7.998 ms with new
/// segment 10 and re-arms the timer, which fires at 37.998 ms: ssthresh = 11 segments / 2
/// = 7,964 bytes, cwnd one segment, segment 0 resent (our TSval 37,998 µs). At 38.998 ms
/// the kernel acknowledges segments 0..5. Slow start makes cwnd 7,964.
fn timed_out_then_acked(ecr: u32, sacks: &[(u64, u64)]) -> Endpoint {
    let mut ep = ten_out();
    let at = until_the_timeout(&mut ep);
    assert_eq!(at, Duration::from_micros(37_998));
    ep.poll(at);
    assert_eq!(data(&ep.take_out()), [(0, SEG as usize, 0)]);
    assert_eq!(
        (ep.rec.ca, ep.cc.cwnd, ep.cc.ssthresh),
        (Ca::Loss, SEG, 7_964)
    );
    ack_echoing(&mut ep, 5 * SEG, ecr, sacks);
    ep
}

/// Undone: cwnd back to its ten segments and ssthresh to its old (infinite) value, then
/// slow start adds the five delivered: 15. Nothing is presumed lost, so with the pipe at
/// segments 5..11 nine new segments go, not a resend of 5..11. (The resend of 0 came
/// back in 1 ms, under the handshake's 1.999 ms minimum RTT: RACK takes it for the
/// original's delivery and finds nothing lost.)
fn assert_undone(mut ep: Endpoint) {
    assert_eq!(
        (ep.rec.ca, ep.cc.cwnd, ep.cc.ssthresh),
        (Ca::Open, 15 * SEG, u64::MAX)
    );
    assert_eq!(ep.stats.loss_undos, 1);
    let offs: Vec<u32> = data(&ep.take_out())
        .iter()
        .map(|d| d.0 / SEG as u32)
        .collect();
    assert_eq!(offs, (11..20).collect::<Vec<_>>());
}

#[test]
fn a_timeout_is_undone_when_the_ack_echoes_an_original() {
    // The kernel echoes TSval 1 µs, from before the resend (RFC 7323's Eifel test).
    assert_undone(timed_out_then_acked(1, &[]));
}

#[test]
fn a_timeout_is_undone_when_a_dsack_reports_the_resend_duplicate() {
    // The ACK echoes the resend, but a D-SACK (below the ACK) reports segment 0 twice.
    let ep = timed_out_then_acked(37_998, &[(0, SEG)]);
    assert_eq!(ep.stats.dsacks_in, 1);
    assert_undone(ep);
}

#[test]
fn a_timeout_stands_when_the_ack_answers_the_resend() {
    let mut ep = timed_out_then_acked(37_998, &[]);
    assert_eq!((ep.rec.ca, ep.cc.cwnd), (Ca::Loss, 7_964));
    assert_eq!(ep.stats.loss_undos, 0);
    // Segments 5..10 were presumed lost: five fit in 7,964 bytes, resent.
    let offs: Vec<u32> = data(&ep.take_out())
        .iter()
        .map(|d| d.0 / SEG as u32)
        .collect();
    assert_eq!(offs, [5, 6, 7, 8, 9]);
}
