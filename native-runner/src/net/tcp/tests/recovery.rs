//! Fast recovery (`recovery.rs`, with `sack.rs`'s scoreboard, RFC 6675): three duplicate
//! ACKs, or more than DupThresh - 1 segments SACKed above a hole, resend it at once, each
//! lost hole once within the halved window; one SACKed segment is reordering.

use super::*;

#[test]
fn three_duplicate_acks_resend_the_first_unacked_segment() {
    let mut ep = endpoint(20_000, &[20_000], false);
    establish(&mut ep);
    // A new ACK (it also opens the window), then three duplicates of it.
    for _ in 0..4 {
        from_kernel(&mut ep, 1448, 64, &[], 0);
    }
    let out = ep.take_out();
    assert!(data(&out).contains(&(1448, 1448, 0)), "{:?}", data(&out));
    assert_eq!(ep.stats.fast_retransmits, 1);
    assert!(ep.stats.retransmitted_segments >= 1);
}

#[test]
fn one_sacked_segment_is_reordering_not_loss() {
    let mut ep = ten_out();
    // Segment 2 arrived before segment 1: one SACKed segment above snd_una.
    sack_ack(&mut ep, SEG, &[(2 * SEG, 3 * SEG)]);
    let d = data(&ep.take_out());
    assert!(
        d.iter().all(|&(off, ..)| u64::from(off) >= 10 * SEG),
        "{d:?}"
    );
    assert_eq!(ep.stats.fast_retransmits, 0);
    assert_eq!(ep.stats.retransmitted_segments, 0);
}

#[test]
fn three_sacked_segments_resend_the_hole_at_once_and_nothing_sacked() {
    let mut ep = ten_out();
    // Segment 1 lost; 2, 3 and 4 SACKed: over DupThresh - 1 segments above the hole.
    sack_ack(&mut ep, SEG, &[(2 * SEG, 5 * SEG)]);
    let d = data(&ep.take_out());
    assert_eq!(d[0], (SEG as u32, SEG as usize, 0), "the hole first: {d:?}");
    let resent: Vec<_> = d
        .iter()
        .filter(|&&(off, ..)| u64::from(off) < 10 * SEG)
        .collect();
    assert_eq!(resent.len(), 1, "only the hole: {d:?}");
    assert_eq!(ep.stats.fast_retransmits, 1);
    assert_eq!(ep.stats.retransmitted_segments, 1);
    assert_eq!(ep.rec.ca, Ca::Recovery);
    // More SACKs for the same hole resend nothing more of it.
    sack_ack(&mut ep, SEG, &[(2 * SEG, 7 * SEG)]);
    let d = data(&ep.take_out());
    assert!(
        d.iter().all(|&(off, ..)| u64::from(off) >= 10 * SEG),
        "{d:?}"
    );
    // The resent hole fills the gap: all ten segments acknowledged, recovery over, and
    // nothing else was resent.
    sack_ack(&mut ep, 10 * SEG, &[(11 * SEG, 12 * SEG)]);
    assert_eq!(ep.rec.ca, Ca::Open);
    assert_eq!(ep.stats.retransmitted_segments, 1);
}

#[test]
fn every_lost_hole_is_resent_once_within_the_halved_window() {
    let mut ep = ten_out();
    // Segments 1, 3 and 5 lost; 0 acknowledged; 2, 4 and 6..9 SACKed. ssthresh = cwnd =
    // the flight (nine segments, 13,032 bytes) / 2 = 6,516; the pipe holds no unSACKed
    // segment that is not lost, so four segments fit.
    sack_ack(
        &mut ep,
        SEG,
        &[(2 * SEG, 3 * SEG), (4 * SEG, 5 * SEG), (6 * SEG, 10 * SEG)],
    );
    let d = data(&ep.take_out());
    let s = |n: u64| ((n * SEG) as u32, SEG as usize, 0);
    // The three holes, then one new segment (a second would pass cwnd).
    assert_eq!(d, [s(1), s(3), s(5), s(10)]);
    assert_eq!(ep.stats.fast_retransmits, 1);
    assert_eq!(ep.stats.retransmitted_segments, 3);
    // All acknowledged up to the recovery point, the ACK echoing the resends (sent at
    // 3 ms, so the recovery was needed): it ends at ssthresh. The ACK delivers segments
    // 1, 3 and 5, under a window's worth: congestion avoidance adds nothing yet.
    ack_echoing(&mut ep, 10 * SEG, 3_000, &[]);
    assert_eq!(ep.rec.ca, Ca::Open);
    assert_eq!((ep.cc.cwnd, ep.cc.cwnd_cnt), (6_516, 3 * SEG));
}
