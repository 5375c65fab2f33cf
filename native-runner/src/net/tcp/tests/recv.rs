//! Receiving (`recv.rs`): reassembly, SACK and D-SACK blocks, and when our ACKs go.

use super::*;

/// The runner as receiver reports duplicates (RFC 2883, as `tcp_dsack_set`): a segment
/// below rcv_nxt, then one already held out of order, then one overlapping a held range,
/// each in the first SACK block of the next ACK, once.
#[test]
fn a_duplicate_received_is_reported_in_a_dsack_block() {
    let mut ep = endpoint(0, &[], false);
    establish(&mut ep);
    let kernel = |ep: &mut Endpoint, off: u64| {
        from_kernel(ep, 0, 64, &[9; 100], off);
        ep.flush_ack();
        let out = ep.take_out();
        let Some(Frame::Tcp(t)) = out.last().map(|o| parse(&o.frame)) else {
            panic!("no ACK")
        };
        let w = |x: u32| x.wrapping_sub(IRS + 1);
        (
            w(t.ack.unwrap()),
            t.sacks
                .iter()
                .map(|&(s, e)| (w(s), w(e)))
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(kernel(&mut ep, 0), (100, vec![]));
    assert_eq!(kernel(&mut ep, 0), (100, vec![(0, 100)]), "below the ACK");
    assert_eq!(kernel(&mut ep, 200), (100, vec![(200, 300)]));
    assert_eq!(
        kernel(&mut ep, 200),
        (100, vec![(200, 300), (200, 300)]),
        "within the SACK block after it"
    );
    // Overlapping the held range from above it: only the overlap is a duplicate.
    assert_eq!(
        kernel(&mut ep, 250),
        (100, vec![(250, 300), (200, 350)]),
        "the overlap, then the merged held range"
    );
    assert_eq!(ep.stats.dsacks_out, 3);
}

#[test]
fn out_of_order_data_is_sacked_at_once_and_delivered_when_the_hole_fills() {
    let mut ep = endpoint(0, &[], false);
    establish(&mut ep);
    from_kernel(&mut ep, 0, 64, &[2; 100], 100);
    let out = ep.take_out();
    let Frame::Tcp(a) = parse(&out[0].frame) else {
        panic!("no ACK")
    };
    assert_eq!(a.ack, Some(IRS + 1));
    assert_eq!(a.sacks, [(IRS + 101, IRS + 201)]);
    assert!(received(&mut ep).is_empty());
    from_kernel(&mut ep, 0, 64, &[1; 100], 0);
    assert!(
        ep.take_out().is_empty(),
        "in-order data waits for the batch's ACK"
    );
    ep.flush_ack();
    let out = ep.take_out();
    let Frame::Tcp(a) = parse(&out[0].frame) else {
        panic!("no ACK")
    };
    assert_eq!(a.ack, Some(IRS + 201));
    assert_eq!(received(&mut ep), [[1u8; 100], [2u8; 100]].concat());
}

#[test]
fn sack_blocks_put_the_latest_arrival_first() {
    let mut ep = endpoint(0, &[], false);
    establish(&mut ep);
    // Four holes' worth of ranges arrive, highest last, then one at the bottom.
    for at in [100, 300, 500, 700, 200] {
        from_kernel(&mut ep, 0, 64, &[1; 50], at);
    }
    let out = ep.take_out();
    let Some(Frame::Tcp(a)) = out.last().map(|o| parse(&o.frame)) else {
        panic!("no ACK")
    };
    let w = |off: u32| IRS + 1 + off;
    // 200 (latest), then 700 and 500 (the two before it); 100 and 300 left out.
    assert_eq!(
        a.sacks,
        [(w(200), w(250)), (w(700), w(750)), (w(500), w(550))]
    );
}
