//! The model's side of a TAP run: where the send model cut the stream into skbs, and the
//! receive model fed with the frames that really arrived. The runner computes no layout: it
//! reads the core's trace and counters.

use crate::net::tcp::{Arrival, Chunk};
use skblab_core::consts::wire::{IPV4_HLEN, TCP_TS_HLEN};
use skblab_core::consts::{Era, KernelConsts};
use skblab_core::rx::{AppParams, Packet, RxScenario, SocketParams};
use skblab_core::send::{self, SendScenario};
use skblab_core::size_goal::{tcp_xmit_size_goal, GoalInput};
use skblab_core::trace::Counters;
use std::collections::BTreeMap;

/// The kernel the runner talks to is today's: the era and constants of the send model's
/// variant of today.
pub fn today() -> (Era, KernelConsts) {
    let era = send::Variant::TODAY.era();
    (era, era.consts())
}

/// The core's size goal for an MSS on a GSO device, under today's constants and the default
/// GSO limit.
pub fn size_goal(mss: u32, max_window: u32) -> u32 {
    let (era, k) = today();
    tcp_xmit_size_goal(
        era,
        &k,
        &GoalInput {
            mss,
            gso: true,
            gso_max_size: k.gso_max_size,
            max_window,
            net_header_len: IPV4_HLEN,
            tcp_header_len: TCP_TS_HLEN,
        },
    )
}

/// What the send model handed to the device.
#[derive(Debug)]
pub struct SendPlan {
    pub variant: String,
    /// One chunk per skb, PSH where its last wire segment carries it.
    pub chunks: Vec<Chunk>,
    /// Skb payload sizes -> how many.
    pub skbs: BTreeMap<u64, u64>,
    pub counters: Counters,
}

/// Runs a sendmsg scenario through the model and takes the skbs it transmitted.
pub fn send_plan(sc: &SendScenario, variant: Option<&str>) -> Result<SendPlan, String> {
    let sent = sc.transmitted(variant).map_err(|e| e.to_string())?;
    let chunks: Vec<Chunk> = sent
        .skbs
        .iter()
        .map(|x| Chunk {
            end: x.offset + u64::from(x.len),
            psh: x.psh,
        })
        .collect();
    let at = chunks.last().map_or(0, |c| c.end);
    let written = sent.counters.get("bytes_written").unwrap_or(0);
    if at == 0 || at != written {
        return Err(format!(
            "the scenario hands {at} of its {written} written bytes to the device: end it with a \
             `transmit` op (or set device.drain = true) so every byte goes on the wire"
        ));
    }
    let mut skbs = BTreeMap::new();
    for x in &sent.skbs {
        *skbs.entry(u64::from(x.len)).or_insert(0) += 1;
    }
    Ok(SendPlan {
        variant: sent.variant.to_string(),
        chunks,
        skbs,
        counters: sent.counters,
    })
}

/// Feeds the receive model the frames that reached the runner, one NAPI interrupt per batch
/// the TAP delivered at once, a kernel super-packet as the wire frames it would have been on
/// a real wire (the core cuts it). Returns the variant's name and the model's counters.
pub fn receive(
    variant: Option<&str>,
    mss: u64,
    batches: &[Vec<Arrival>],
) -> Result<(String, Counters), String> {
    let sc = RxScenario {
        socket: SocketParams {
            mss: mss as u32,
            ..SocketParams::default()
        },
        app: AppParams {
            prompt: true,
            ..AppParams::default()
        },
        ..RxScenario::default()
    };
    let packets: Vec<Vec<Packet>> = batches
        .iter()
        .map(|b| {
            b.iter()
                .map(|a| Packet {
                    len: a.len,
                    gso_size: a.gso_size.into(),
                })
                .collect()
        })
        .collect();
    let (v, counters) = sc.receive(variant, &packets).map_err(|e| e.to_string())?;
    Ok((v.name(), counters))
}

/// The receive model's variant `variant` names (its default when none), checked before a
/// transfer.
pub fn rx_variant(variant: Option<&str>) -> Result<String, String> {
    let v = RxScenario::default().pick_variant(variant);
    v.map(|v| v.name()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str, variant: &str) -> Result<SendPlan, String> {
        let Ok(skblab_core::Scenario::Sendmsg(s)) = skblab_core::Scenario::parse(text) else {
            panic!("not a sendmsg scenario: {text}");
        };
        send_plan(&s, Some(variant))
    }

    #[test]
    fn the_model_cuts_a_big_write_into_size_goal_skbs_in_every_variant() {
        let text = "mechanism = \"sendmsg\"\nops = [{ op = \"sendmsg\", bytes = 140000 }, \
                    { op = \"transmit\" }]";
        for v in skblab_core::send::VARIANTS {
            let p = plan(text, v).unwrap();
            let ends: Vec<(u64, bool)> = p.chunks.iter().map(|c| (c.end, c.psh)).collect();
            assert_eq!(
                ends,
                [(65_160, false), (130_320, false), (140_000, true)],
                "{v}"
            );
            assert_eq!(p.counters.get("wire_segments"), Some(97), "{v}");
        }
    }

    #[test]
    fn a_scenario_that_never_transmits_is_refused() {
        let text = "mechanism = \"sendmsg\"\nops = [{ op = \"sendmsg\", bytes = 1000 }]";
        let e = plan(text, "modern").unwrap_err();
        assert!(e.contains("`transmit`"), "{e}");
    }

    #[test]
    fn the_receive_model_counts_the_real_frames() {
        let batches = vec![
            vec![Arrival {
                len: 65_160,
                gso_size: 1448,
            }],
            vec![Arrival {
                len: 1448,
                gso_size: 0,
            }],
        ];
        let (name, c) = receive(Some("duyck-2012+dumazet-2019"), 1448, &batches).unwrap();
        assert_eq!(name, "duyck-2012+dumazet-2019");
        assert_eq!(c.get("frames_arrived"), Some(46));
        assert_eq!(rx_variant(None).unwrap(), "pre-2012+none");
        assert!(rx_variant(Some("nope"))
            .unwrap_err()
            .contains("unknown variant"));
    }
}
