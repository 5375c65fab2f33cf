//! Opening: ARP answered only on the private link, and what the SYN-ACK's options settle
//! (the MSS, the window scale).

use super::*;
use std::net::Ipv4Addr;

#[test]
fn an_arp_request_from_outside_the_link_is_not_answered() {
    let mut ep = endpoint(0, &[], false);
    ep.start(Duration::ZERO);
    ep.take_out();
    for sender_ip in [Ipv4Addr::new(8, 8, 8, 8), ends().peer_ip] {
        let ask = Arp {
            reply: false,
            sender_mac: KMAC,
            sender_ip,
            target_mac: [0; 6],
            target_ip: ends().ip,
        };
        ep.on_frame(VnetHdr::default(), &ask.frame(), ms(1))
            .unwrap();
        let out = ep.take_out();
        let to: Vec<_> = out
            .iter()
            .filter_map(|o| match parse(&o.frame) {
                Frame::Arp(a) if a.reply => Some(a.target_ip),
                _ => None,
            })
            .collect();
        let want = if sender_ip == ends().peer_ip {
            vec![sender_ip]
        } else {
            vec![]
        };
        assert_eq!(to, want, "ARP request from {sender_ip}");
    }
}

/// ARP answered, then the kernel's SYN-ACK with window `wnd` and options `opts`.
fn syn_ack(ep: &mut Endpoint, wnd: u16, opts: Vec<Opt>) {
    ep.start(Duration::ZERO);
    ep.take_out();
    answer_arp(ep);
    ep.take_out();
    let t = TcpOut {
        seq: IRS,
        ack: Some(ISS + 1),
        syn: true,
        wnd,
        opts,
        ..TcpOut::default()
    };
    let f = wire::tcp_frame(&kernel_ends(), &t).unwrap();
    ep.on_frame(VnetHdr::default(), &f, ms(2)).unwrap();
}

#[test]
fn a_peer_mss_smaller_than_the_timestamps_leaves_one_byte() {
    for peer_mss in [0, 11, 12, 13] {
        let mut ep = endpoint(100, &[100], true);
        syn_ack(
            &mut ep,
            65_535,
            vec![Opt::MaximumSegmentSize(peer_mss), Opt::Timestamp(77, 1)],
        );
        assert_eq!(ep.mss(), u64::from(peer_mss).saturating_sub(12).max(1));
        ep.take_out();
    }
}

#[test]
fn window_scales_above_14_count_as_14() {
    let mut cfg = endpoint(0, &[], false).cfg;
    cfg.wscale = 40;
    let chunks = vec![Chunk {
        end: 100,
        psh: false,
    }];
    let mut ep = Endpoint::new(cfg, vec![7; 100], chunks, ISS);
    syn_ack(&mut ep, 1, vec![Opt::WindowScale(255)]);
    let acks: Vec<u16> = ep
        .take_out()
        .iter()
        .filter_map(|o| match parse(&o.frame) {
            Frame::Tcp(t) => Some(t.wnd),
            _ => None,
        })
        .collect();
    // Our 1 MiB window, shifted by 14: 64.
    assert_eq!(acks.first(), Some(&64));
    from_kernel(&mut ep, 0, 1, &[], 0);
    assert_eq!(ep.snd.wnd, 1 << 14, "the peer's scale 255 is taken as 14");
}
