//! Congestion control (`cc.rs`): how much an ACK grows the window.

use super::*;

/// A stretch ACK counts for every segment it delivers (`tcp_slow_start` and
/// `tcp_cong_avoid_ai` take the delivered count): one ACK of the initial ten segments
/// doubles cwnd to 20, where one segment per ACK would have made it 11 (and RFC 3465's
/// L = 2, 12). Past ssthresh, one ACK of a whole window of 20 segments adds one.
#[test]
fn a_stretch_ack_counts_every_segment_it_delivers() {
    let mut ep = endpoint(100_000, &[100_000], false);
    establish(&mut ep);
    sack_ack(&mut ep, 10 * SEG, &[]);
    assert_eq!(ep.cc.cwnd, 20 * SEG);
    assert_eq!(
        data(&ep.take_out()).len(),
        20,
        "the doubled window goes out"
    );
    ep.cc.ssthresh = ep.cc.cwnd;
    sack_ack(&mut ep, 20 * SEG, &[]);
    assert_eq!(
        (ep.cc.cwnd, ep.cc.cwnd_cnt),
        (20 * SEG, 10 * SEG),
        "half a window"
    );
    sack_ack(&mut ep, 30 * SEG, &[]);
    assert_eq!((ep.cc.cwnd, ep.cc.cwnd_cnt), (21 * SEG, 0));
}

/// A sender that does not fill its window keeps it (`tcp_is_cwnd_limited`): three
/// segments out under a cwnd of ten, all acknowledged, leave cwnd at ten, not 13, as ten
/// is not under twice the flight.
#[test]
fn a_window_the_sender_does_not_fill_does_not_grow() {
    let mut ep = endpoint(3 * SEG as usize, &[3 * SEG], false);
    assert_eq!(data(&establish(&mut ep)).len(), 3);
    sack_ack(&mut ep, 3 * SEG, &[]);
    assert_eq!(ep.cc.cwnd, 10 * SEG);
}
