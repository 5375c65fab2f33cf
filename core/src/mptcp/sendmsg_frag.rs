//! mptcp_sendmsg_frag (net/mptcp/protocol.c, net-next November 2020 / v5.11): pushes part of
//! one dfrag onto one subflow, collapsing onto the subflow's tail skb when the DSS mapping
//! allows it, and keeps the mapping right. Seed 003 changed what it passes to tcp_build_frag
//! when collapsing, and made it clear PSH on the skb it collapses into.

use super::subflow::{self, Subflow};
use super::tx::Tx;
use super::variant::Fix;
use crate::events::Event;
use crate::replay::Log;
use crate::skb::Skb;

/// mptcp_skb_can_collapse_to: the tail accepts more data only if TCP may still grow it (not
/// EOR: tcp_skb_can_collapse_to), it carries a mapping that is not frozen, and the new data
/// continues that mapping in data sequence.
fn can_collapse_to(data_seq: u64, skb: &Skb) -> bool {
    !skb.eor
        && skb
            .mapping
            .is_some_and(|m| !m.frozen && m.data_seq + m.data_len as u64 == data_seq)
}

/// Pushes up to `size` bytes at `data_seq`, found at `offset` in `page`, onto `sf`. Returns
/// the bytes the subflow took (tcp_build_frag may take fewer).
#[allow(clippy::too_many_arguments)]
pub fn mptcp_sendmsg_frag(
    fix: Fix,
    sf: &mut Subflow,
    data_seq: u64,
    page: crate::page::PageId,
    offset: u32,
    size: u32,
    tx: &mut Tx,
    log: &mut Log,
) -> u32 {
    let size_goal = sf.size_goal as i64;
    let mut avail_size = size_goal;
    let mut size_bias = 0;
    let mut can_collapse = false;
    let tail = sf.write_queue_tail(log.state());
    let (tail_id, tail_len) = (tail.map(|t| t.id), tail.map(|t| t.len));
    if let Some(skb) = tail {
        can_collapse = size_goal - skb.len as i64 > 0 && can_collapse_to(data_seq, skb);
        if can_collapse {
            size_bias = fix.size_bias(skb.len);
            avail_size = size_goal - skb.len as i64;
        } else {
            tx.stats.eor_marks += 1;
            let id = skb.id;
            log.emit(Event::MarkEor { skb: id });
        }
    }
    let goal = avail_size + size_bias;
    let subflow = sf.id;
    log.note(|| Event::SendmsgFrag {
        subflow,
        data_seq,
        size_goal: size_goal as u32,
        tail_len,
        can_collapse,
        goal: goal as u32,
    });

    // The skb tcp_build_frag filled is the subflow's tail.
    let (id, ret) = sf.tcp_build_frag(goal, page, offset, size, tx, log);
    let t = subflow::tail(log.state(), sf.id);
    debug_assert_eq!(t.id, id, "model bug: tcp_build_frag filled no tail");
    let (psh, seq, m) = (t.psh, t.seq, t.mapping);
    if tail_id == Some(id) {
        if fix.clears_psh() && psh {
            log.emit(Event::ClearPsh { skb: id });
        }
        let m = m.expect("model bug: collapsed into an skb without mapping");
        tx.stats.collapses += 1;
        log.emit(Event::ExtendMapping {
            skb: id,
            data_len: m.data_len + ret,
        });
    } else {
        tx.stats.dss_mappings += 1;
        log.emit(Event::NewMapping {
            skb: id,
            data_seq,
            subflow_seq: seq,
            data_len: ret,
        });
    }
    tx.stats.bytes_mapped += ret as u64;
    ret
}
