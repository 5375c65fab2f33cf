//! RACK-TLP (`rack.rs`, and the tail loss probe in `send.rs`): a lost tail found by a
//! probe (the tail resent when the window is short of new data), a lost retransmission
//! found by time; neither waits for the timeout.

use super::*;

/// A lost tail, found by a probe, not a timeout. Ten segments and our FIN go at 2 ms;
/// the kernel acknowledges eight at 3 ms (RTT samples 1.999 and 2.999 ms, as the kernel
/// echoes TSval 1 µs: SRTT 2.124 ms; the RTO stays at its 30 ms floor). Two segments are
/// out: the probe is due a PTO later, 2 x 2.124 + 2 = 6.248 ms, at 9.248 ms, and resends
/// the last segment (no new data is left). Its SACK at 10.248 ms (RTT 1 ms, not under the minimum RTT of 1 ms, so not
/// ambiguous) makes segment 8, sent at 2 ms, 8.25 ms old: over RTT + reo_wnd = 2 ms, so
/// RACK finds it lost, and recovery resends it at once.
#[test]
fn a_lost_tail_is_recovered_by_a_probe() {
    let mut ep = endpoint(10 * SEG as usize, &[10 * SEG], false);
    assert_eq!(data(&establish(&mut ep)).len(), 10);
    from_kernel(&mut ep, 8 * SEG, 64, &[], 0);
    assert_eq!(ep.timers.early().map(|(_, e)| e), Some(Timer::Probe));
    let at = ep.deadline().expect("armed");
    assert_eq!(at, Duration::from_micros(9_248));
    assert!(at < ep.timers.get(Timer::Rto).expect("the RTO too"));
    ep.poll(at);
    assert_eq!(data(&ep.take_out()), [((9 * SEG) as u32, SEG as usize, 0)]);
    sack_ack(&mut ep, 8 * SEG, &[(9 * SEG, 10 * SEG)]);
    assert_eq!(data(&ep.take_out()), [((8 * SEG) as u32, SEG as usize, 0)]);
    let s = &ep.stats;
    assert_eq!((s.loss_probes, s.rack_lost, s.fast_retransmits), (1, 1, 1));
    assert_eq!(s.timeouts, 0);
}

/// A probe sends new data only when the peer's window holds a whole segment of it
/// (`tcp_snd_wnd_test`): with 176 bytes of window left it resends the last segment, as the
/// kernel does, rather than a 176-byte sliver the model never cut.
#[test]
fn a_probe_under_a_short_window_resends_the_tail() {
    let mut ep = endpoint(20 * SEG as usize, &[20 * SEG], false);
    assert_eq!(data(&establish(&mut ep)).len(), 10);
    // Eight acknowledged; the window (3 << 10 = 3,072) less the two out leaves 176.
    from_kernel(&mut ep, 8 * SEG, 3, &[], 0);
    assert_eq!(data(&ep.take_out()), [], "no silly window");
    assert_eq!(ep.timers.early().map(|(_, e)| e), Some(Timer::Probe));
    ep.poll(ep.deadline().expect("armed"));
    assert_eq!(data(&ep.take_out()), [((9 * SEG) as u32, SEG as usize, 0)]);
    assert_eq!((ep.snd.nxt, ep.stats.loss_probes), (10 * SEG, 1));
}

/// A lost retransmission, found by RACK's reordering timer, not a timeout. Ten segments
/// go at 2 ms. At 3 ms segment 0 is acknowledged and 2..5 SACKed: segment 1 is lost
/// (`IsLost`) and resent at 3 ms; cwnd = 6,516, and the pipe (the resend and segments
/// 5..9) is full. At 4 ms 2..10 are SACKed: three new segments go (10..12). At 5 ms they
/// are SACKed too, but the resend of 1 is not: sent 2 ms before, the RTT of the latest
/// delivery (1 ms) plus reo_wnd (1 ms) has not yet passed; the reordering timer is due
/// 1 µs later, and finds the resend lost.
#[test]
fn a_lost_retransmission_is_found_without_a_timeout() {
    let mut ep = ten_out();
    sack_ack(&mut ep, SEG, &[(2 * SEG, 5 * SEG)]);
    let s1 = (SEG as u32, SEG as usize, 0);
    assert_eq!(data(&ep.take_out()), [s1]);
    sack_ack(&mut ep, SEG, &[(2 * SEG, 10 * SEG)]);
    let new: Vec<u32> = data(&ep.take_out())
        .iter()
        .map(|d| d.0 / SEG as u32)
        .collect();
    assert_eq!(new, [10, 11, 12]);
    sack_ack(&mut ep, SEG, &[(2 * SEG, 13 * SEG)]);
    let at = ms(5) + Duration::from_micros(1);
    assert_eq!(ep.timers.early(), Some((at, Timer::Reo)));
    ep.take_out();
    ep.poll(at);
    assert_eq!(data(&ep.take_out())[0], s1, "the resend, resent");
    let s = &ep.stats;
    assert_eq!(
        (s.rack_lost_resends, s.timeouts, s.fast_retransmits),
        (1, 0, 1)
    );
}
