//! Closing (`state.rs`): the states a FIN and its acknowledgment move the connection
//! through, and a RST once both FINs are acknowledged.

use super::*;

#[test]
fn fins_both_ways_finish_the_connection() {
    let mut ep = endpoint(100, &[100], false);
    establish(&mut ep);
    // Data and our FIN went out; the kernel acknowledges both and sends its FIN.
    let t = TcpOut {
        seq: IRS + 1,
        ack: Some(ISS + 1 + 101),
        fin: true,
        wnd: 64,
        opts: vec![Opt::Noop, Opt::Noop, Opt::Timestamp(78, 1)],
        ..TcpOut::default()
    };
    let f = wire::tcp_frame(&kernel_ends(), &t).unwrap();
    ep.on_frame(VnetHdr::default(), &f, ms(5)).unwrap();
    assert!(ep.done());
    let out = ep.take_out();
    let Frame::Tcp(a) = parse(&out[0].frame) else {
        panic!("no ACK of the FIN")
    };
    assert_eq!(a.ack, Some(IRS + 2));
}

/// A bare segment from the kernel with flags: `ack` and `seq_off` as stream offsets.
fn kernel_fin(ep: &mut Endpoint, ack: u64, seq_off: u64, fin: bool) {
    let t = TcpOut {
        seq: IRS.wrapping_add(1).wrapping_add(seq_off as u32),
        ack: Some(ISS.wrapping_add(1).wrapping_add(ack as u32)),
        fin,
        wnd: 64,
        opts: vec![Opt::Noop, Opt::Noop, Opt::Timestamp(78, 1)],
        ..TcpOut::default()
    };
    let f = wire::tcp_frame(&kernel_ends(), &t).unwrap();
    ep.on_frame(VnetHdr::default(), &f, ep.now + ms(1)).unwrap();
}

fn fins(out: &[Out]) -> Vec<u32> {
    out.iter()
        .filter_map(|o| match parse(&o.frame) {
            Frame::Tcp(t) if t.fin => Some(t.seq.wrapping_sub(ISS + 1)),
            _ => None,
        })
        .collect()
}

#[test]
fn the_passive_closer_sends_its_fin_after_the_peers_and_ends_on_its_ack() {
    let mut ep = endpoint(0, &[], false);
    ep.cfg.close_first = false;
    assert!(
        fins(&establish(&mut ep)).is_empty(),
        "no FIN before the peer's"
    );
    assert_eq!(ep.st, St::Established);
    kernel_fin(&mut ep, 0, 0, true);
    assert_eq!(ep.st, St::LastAck, "the peer's FIN, then ours at once");
    assert_eq!(fins(&ep.take_out()), [0]);
    kernel_fin(&mut ep, 1, 1, false);
    assert_eq!(ep.st, St::Closed);
    assert!(ep.done());
}

#[test]
fn a_lost_fin_goes_out_again_and_its_ack_then_the_peers_fin_end_the_connection() {
    let mut ep = endpoint(100, &[100], false);
    assert_eq!(fins(&establish(&mut ep)), [100]);
    assert_eq!(ep.st, St::FinWait1);
    // The data is acknowledged, the FIN is not: the timeout sends the FIN alone.
    kernel_fin(&mut ep, 100, 0, false);
    ep.take_out();
    let at = ep.deadline().expect("armed for the FIN");
    ep.poll(at);
    let out = ep.take_out();
    assert_eq!((fins(&out), data(&out)), (vec![100], vec![]));
    kernel_fin(&mut ep, 101, 0, false);
    assert_eq!(ep.st, St::FinWait2);
    assert_eq!(ep.deadline(), None, "nothing left to time");
    kernel_fin(&mut ep, 101, 0, true);
    assert_eq!(ep.st, St::TimeWait);
    assert!(ep.done());
}

/// Under load our ACK of the kernel's FIN may come after its timeout sent the FIN
/// again: both copies are acknowledged, the first ACK closes the kernel's socket, and it
/// answers the second with a RST, which ends nothing (reproduced on the TAP by delaying
/// the runner's reads 300 ms: the kernel counted it in `Tcp.OutRsts`). Before both FINs
/// are acknowledged a RST is an error.
#[test]
fn a_fin_sent_again_is_acknowledged_again_and_a_reset_after_the_close_ends_nothing() {
    let mut ep = endpoint(100, &[100], false);
    establish(&mut ep);
    let rst = TcpOut {
        seq: IRS + 1,
        rst: true,
        ..TcpOut::default()
    };
    let rst = wire::tcp_frame(&kernel_ends(), &rst).unwrap();
    assert!(ep.on_frame(VnetHdr::default(), &rst, ms(4)).is_err());
    kernel_fin(&mut ep, 101, 0, true);
    kernel_fin(&mut ep, 101, 0, true);
    assert!(ep.done());
    let acks: Vec<Option<u32>> = ep
        .take_out()
        .iter()
        .map(|o| match parse(&o.frame) {
            Frame::Tcp(t) => t.ack,
            _ => None,
        })
        .collect();
    assert_eq!(
        acks,
        [Some(IRS + 2); 2],
        "each copy of the FIN acknowledged"
    );
    assert_eq!(ep.stats.peer_fins_again, 1);
    assert_eq!(ep.on_frame(VnetHdr::default(), &rst, ms(9)), Ok(()));
}

#[test]
fn fins_that_cross_go_through_closing() {
    let mut ep = endpoint(0, &[], false);
    assert_eq!(fins(&establish(&mut ep)), [0]);
    // The peer's FIN does not acknowledge ours.
    kernel_fin(&mut ep, 0, 0, true);
    assert_eq!(ep.st, St::Closing);
    assert!(!ep.done());
    kernel_fin(&mut ep, 1, 1, false);
    assert_eq!(ep.st, St::TimeWait);
    assert!(ep.done());
}
