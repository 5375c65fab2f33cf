//! Sending (`send.rs`): the stream cut into MSS-sized frames or GSO super-packets within
//! the congestion window, and a peer's window too short for a segment waited out with a
//! probe.

use super::*;

#[test]
fn plain_frames_are_mss_sized_and_stop_at_the_initial_window() {
    let mut ep = endpoint(20_000, &[20_000], false);
    let out = establish(&mut ep);
    // The SYN-ACK's window (65,535, never scaled) allows all; the initial cwnd is 10.
    let d = data(&out);
    assert_eq!(d.len(), 10);
    assert!(d.iter().all(|&(_, len, gso)| len == 1448 && gso == 0));
}

#[test]
fn a_gso_device_sends_each_skb_as_one_super_packet() {
    let mut ep = endpoint(70_000, &[65_160, 70_000], true);
    // The initial window (10 segments) lets out a whole number of segments of the skb
    // (tso_fragment) ...
    assert_eq!(data(&establish(&mut ep)), [(0, 14_480, 1448)]);
    // ... and once the windows open, the rest of it and the next skb, one packet each.
    from_kernel(&mut ep, 0, 1024, &[], 0);
    ep.cc.cwnd = 1 << 20;
    ep.transmit();
    let d = data(&ep.take_out());
    assert_eq!(d, [(14_480, 50_680, 1448), (65_160, 4_840, 1448)]);
}

/// A window shorter than the next segment, with nothing out, is waited out with a probe,
/// not filled with a short segment (`tcp_snd_wnd_test`), so the segments stay the
/// model's. A kernel reader starved on a busy machine announced 1,024 bytes this way.
#[test]
fn a_window_shorter_than_a_segment_sends_nothing_and_is_probed() {
    let mut ep = endpoint(20 * SEG as usize, &[20 * SEG], false);
    assert_eq!(data(&establish(&mut ep)).len(), 10);
    // All ten acknowledged, 1 << 10 = 1,024 bytes of window.
    from_kernel(&mut ep, 10 * SEG, 1, &[], 0);
    assert_eq!(data(&ep.take_out()), [], "no 1,024-byte segment");
    ep.poll(ep.deadline().expect("the probe is armed"));
    assert_eq!(ep.stats.zero_window_probes, 1);
    from_kernel(&mut ep, 10 * SEG, 64, &[], 0);
    assert_eq!(
        data(&ep.take_out())[0],
        ((10 * SEG) as u32, SEG as usize, 0)
    );
}

#[test]
fn a_zero_window_is_probed_and_a_window_update_resumes_sending() {
    let mut ep = endpoint(20_000, &[20_000], false);
    establish(&mut ep);
    // Everything sent so far acknowledged, window closed.
    from_kernel(&mut ep, 14_480, 0, &[], 0);
    assert!(data(&ep.take_out()).is_empty());
    let at = ep.deadline().expect("persist timer");
    ep.poll(at);
    let probe = ep.take_out();
    let Frame::Tcp(p) = parse(&probe[0].frame) else {
        panic!("no probe")
    };
    assert_eq!(p.seq, ISS.wrapping_add(1).wrapping_add(14_480 - 1));
    assert_eq!(ep.stats.zero_window_probes, 1);
    from_kernel(&mut ep, 14_480, 64, &[], 0);
    assert_eq!(data(&ep.take_out())[0], (14_480, 1448, 0));
}
