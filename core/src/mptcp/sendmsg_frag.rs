//! mptcp_sendmsg_frag (net/mptcp/protocol.c, net-next November 2020 / v5.11): pushes part of
//! one dfrag onto one subflow, collapsing onto the subflow's tail skb when the DSS mapping
//! allows it, and keeps the mapping right. Seed 003 changed what it passes to tcp_build_frag
//! when collapsing, and made it clear PSH on the skb it collapses into.

use super::subflow::Subflow;
use super::tx::Tx;
use super::variant::Fix;
use crate::events::{Event, Events};
use crate::skb::{Mapping, Skb};

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
    ev: &mut Events,
) -> u32 {
    let size_goal = sf.size_goal as i64;
    let mut avail_size = size_goal;
    let mut size_bias = 0;
    let mut can_collapse = false;
    let tail = sf.write_queue_tail();
    if let Some(t) = tail {
        let skb = &mut sf.skbs[t];
        can_collapse = size_goal - skb.len as i64 > 0 && can_collapse_to(data_seq, skb);
        if can_collapse {
            size_bias = fix.size_bias(skb.len);
            avail_size = size_goal - skb.len as i64;
        } else {
            skb.eor = true;
            tx.stats.eor_marks += 1;
            let id = skb.id;
            ev.emit(|| Event::MarkEor { skb: id });
        }
    }
    let tail_id = tail.map(|t| sf.skbs[t].id);
    let tail_len = tail.map(|t| sf.skbs[t].len);
    let goal = avail_size + size_bias;
    let subflow = sf.id;
    ev.emit(|| Event::SendmsgFrag {
        subflow,
        data_seq,
        size_goal: size_goal as u32,
        tail_len,
        can_collapse,
        goal: goal as u32,
    });

    let (i, ret) = sf.tcp_build_frag(goal, page, offset, size, tx, ev);
    let skb = &mut sf.skbs[i];
    let id = skb.id;
    if tail_id == Some(id) {
        // The tail is still the same skb: collapsing really happened.
        if fix.clears_psh() && skb.psh {
            skb.psh = false;
            ev.emit(|| Event::ClearPsh { skb: id });
        }
        let m = skb
            .mapping
            .as_mut()
            .expect("model bug: collapsed into an skb without mapping");
        m.data_len += ret;
        let data_len = m.data_len;
        tx.stats.collapses += 1;
        ev.emit(|| Event::ExtendMapping { skb: id, data_len });
    } else {
        // A new skb: its own DSS mapping, starting at the subflow's rel_write_seq.
        let m = Mapping {
            data_seq,
            subflow_seq: skb.seq,
            data_len: ret,
            frozen: false,
        };
        skb.mapping = Some(m);
        tx.stats.dss_mappings += 1;
        ev.emit(|| Event::NewMapping {
            skb: id,
            data_seq,
            subflow_seq: m.subflow_seq,
            data_len: ret,
        });
    }
    tx.stats.bytes_mapped += ret as u64;
    ret
}
