//! Seeded fault injection on the wire: drop, reorder and corrupt TCP frames, each at a rate.
//! ARP is left alone (a lost ARP only adds the kernel's one-second re-probe to a run).

use super::tcp::Out;
use super::wire;

/// splitmix64: a tiny, well-known seeded generator; runs are repeatable per seed (timing
/// aside).
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// Fills `buf` with the generator's bytes (the runner's deterministic payloads).
    pub fn fill(&mut self, buf: &mut [u8]) {
        for c in buf.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            c.copy_from_slice(&v[..c.len()]);
        }
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// True with probability `p`.
    fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
}

/// Fault rates, each in 0..=1.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rates {
    pub drop: f64,
    pub reorder: f64,
    pub corrupt: f64,
}

impl Rates {
    /// Rates must leave a transfer able to finish: each at most 0.5.
    pub fn check(&self) -> Result<(), String> {
        for (name, v) in [
            ("--drop", self.drop),
            ("--reorder", self.reorder),
            ("--corrupt", self.corrupt),
        ] {
            if !(0.0..=0.5).contains(&v) {
                return Err(format!("`{name}` = {v} is out of range: allowed 0..=0.5"));
            }
        }
        Ok(())
    }
}

/// What faults did, for the summary.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct Tally {
    pub dropped: u64,
    pub reordered: u64,
    pub corrupted: u64,
}

/// One direction of the wire.
#[derive(Debug)]
pub struct Wire {
    rates: Rates,
    rng: Rng,
    /// A frame held back to be delivered after the next one.
    held: Option<Out>,
    pub tally: Tally,
}

impl Wire {
    pub fn new(rates: Rates, seed: u64) -> Wire {
        Wire {
            rates,
            rng: Rng(seed),
            held: None,
            tally: Tally::default(),
        }
    }

    /// The runner's direction, and the kernel's below: each draws its own stream from the
    /// one seed.
    pub fn to_kernel(rates: Rates, seed: u64) -> Wire {
        Wire::new(rates, seed ^ 0x5eed_0001)
    }

    pub fn to_runner(rates: Rates, seed: u64) -> Wire {
        Wire::new(rates, seed ^ 0x5eed_0002)
    }

    /// Passes `frame` over the wire: returns the frames that arrive now, in order.
    pub fn pass(&mut self, mut pkt: Out) -> Vec<Out> {
        let Some(seg) = wire::tcp_segment(&pkt.frame) else {
            return vec![pkt];
        };
        if self.rng.chance(self.rates.drop) {
            self.tally.dropped += 1;
            return self.held.take().into_iter().collect();
        }
        if self.rng.chance(self.rates.corrupt) {
            let at = seg.start + (self.rng.next() % seg.len() as u64) as usize;
            pkt.frame[at] ^= 1 << (self.rng.next() % 8);
            self.tally.corrupted += 1;
        }
        if self.held.is_none() && self.rng.chance(self.rates.reorder) {
            self.tally.reordered += 1;
            self.held = Some(pkt);
            return Vec::new();
        }
        let mut out = vec![pkt];
        out.extend(self.held.take());
        out
    }

    /// Releases a held frame (when the wire goes quiet).
    pub fn flush(&mut self) -> Option<Out> {
        self.held.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::wire::{tcp_checksum_ok, tcp_frame, Ends, TcpOut};

    fn frame(seq: u32) -> Out {
        let e = Ends {
            peer_mac: [2, 0, 0, 0, 0, 1],
            ..crate::net::netns::runner_ends(1, 2)
        };
        let frame = tcp_frame(
            &e,
            &TcpOut {
                seq,
                payload: &[1, 2, 3],
                ..TcpOut::default()
            },
        )
        .unwrap();
        Out {
            vnet: Default::default(),
            frame,
        }
    }

    #[test]
    fn no_faults_is_a_clean_wire() {
        let mut w = Wire::new(Rates::default(), 1);
        for s in 0..100 {
            let got = w.pass(frame(s));
            assert_eq!(got.len(), 1);
            assert_eq!(got[0].frame, frame(s).frame);
        }
    }

    /// tests/tap.rs counts on it: corruption comes early, so even a short GSO transfer of
    /// about 35 frames has some whatever the timing.
    #[test]
    fn the_tap_tests_corruption_seed_hits_the_4th_13th_25th_and_33rd_frames() {
        let rates = Rates {
            corrupt: 0.03,
            ..Rates::default()
        };
        let mut w = Wire::to_kernel(rates, 192);
        let hit: Vec<u32> = (0..35)
            .filter(|&s| !tcp_checksum_ok(&w.pass(frame(s))[0].frame))
            .collect();
        assert_eq!(hit, [3, 12, 24, 32]);
    }

    #[test]
    fn rates_are_roughly_honoured_and_every_frame_is_accounted_for() {
        let rates = Rates {
            drop: 0.1,
            reorder: 0.1,
            corrupt: 0.1,
        };
        let mut w = Wire::new(rates, 42);
        let mut got = Vec::new();
        for s in 0..10_000 {
            got.extend(w.pass(frame(s)));
        }
        got.extend(w.flush());
        let t = w.tally;
        assert_eq!(got.len() as u64 + t.dropped, 10_000);
        for n in [t.dropped, t.reordered, t.corrupted] {
            assert!((700..1300).contains(&n), "{t:?}");
        }
        let bad = got.iter().filter(|p| !tcp_checksum_ok(&p.frame)).count() as u64;
        assert!(
            bad <= t.corrupted && bad > t.corrupted * 9 / 10,
            "{bad} {t:?}"
        );
    }
}
