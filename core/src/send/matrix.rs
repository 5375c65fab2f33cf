//! The seed's test matrix, run on the model: 1 to 256 sockets, each writing 256 B, 4 KiB,
//! 16 KiB or 64 KiB per sendmsg, round-robin, 1 GiB in total per cell, counters only.
//!
//! The core reads no clock: a host (the `sendmsg_matrix` bench, the browser) times each
//! [`run_cell`] call itself and reports modelled GiB/s. The seed's own figures are iperf
//! bandwidth on a 10 Gbit/s NIC; the model explains mechanism, it does not predict Mbit/s.

use super::counters::SendCounters;
use super::params::{DeviceParams, SocketParams};
use super::sock::{SendConfig, SendSock};
use super::variant::Variant;
use crate::events::Events;

/// Socket counts of the seed's table (`#Process`).
pub const MATRIX_SOCKETS: [u32; 9] = [1, 4, 8, 16, 32, 64, 128, 192, 256];
/// Write sizes of the seed's table (`I/O Size`).
pub const MATRIX_WRITES: [u32; 4] = [256, 4 << 10, 16 << 10, 64 << 10];
/// Bytes written per cell, over all sockets.
pub const MATRIX_TOTAL: u64 = 1 << 30;
/// A socket's unacknowledged bytes before it transmits and the peer acks everything
/// (keeps memory bounded and the queue realistic: writes coalesce while data is in flight).
pub const MATRIX_WINDOW: u64 = 256 << 10;

/// One cell of the matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub sockets: u32,
    pub write: u32,
    /// Bytes actually written (`total` rounded down to whole writes per socket).
    pub bytes: u64,
    /// The sockets' counters, summed.
    pub counters: SendCounters,
}

/// The configuration the matrix runs: the seed's NIC (SG, TSO, checksum offload, MTU 1500).
pub fn matrix_config(variant: Variant) -> SendConfig {
    SendConfig {
        variant,
        k: variant.era().consts(),
        socket: SocketParams::default(),
        device: DeviceParams::default(),
    }
}

/// Runs one cell: `sockets` sockets write `write` bytes each in turn until `total` bytes are
/// written; each socket transmits and is acknowledged whenever [`MATRIX_WINDOW`] bytes are
/// outstanding; at the end every socket transmits, is acked and closes. Each socket stands
/// for one of the seed's processes, so each has its own task frag, which outlives the close.
pub fn run_cell(cfg: &SendConfig, sockets: u32, write: u32, total: u64) -> Cell {
    let mut socks: Vec<SendSock> = (0..sockets).map(|_| SendSock::new(*cfg)).collect();
    let mut ev = Events::off();
    let rounds = total / (sockets as u64 * write as u64);
    let iov = [write];
    for _ in 0..rounds {
        for s in &mut socks {
            s.sendmsg(&iov, false, &mut ev)
                .expect("model bug: the matrix window is far below sndbuf");
            if s.unacked() >= MATRIX_WINDOW {
                s.transmit(&mut ev);
                s.ack_all(&mut ev);
            }
        }
    }
    let mut counters = SendCounters::default();
    for s in &mut socks {
        s.transmit(&mut ev);
        s.ack_all(&mut ev);
        s.close(&mut ev);
        counters.add(&s.send_counters());
    }
    Cell {
        sockets,
        write,
        bytes: rounds * sockets as u64 * write as u64,
        counters,
    }
}

/// Every cell of the matrix, in the seed's order (sockets, then write size).
pub fn run_matrix(variant: Variant, total: u64) -> Vec<Cell> {
    let cfg = matrix_config(variant);
    MATRIX_SOCKETS
        .iter()
        .flat_map(|&n| MATRIX_WRITES.iter().map(move |&w| (n, w)))
        .map(|(n, w)| run_cell(&cfg, n, w, total))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_cell_accounts_every_byte_and_page() {
        for &v in Variant::ALL {
            let c = run_cell(&matrix_config(v), 4, 4096, 1 << 20);
            assert_eq!(c.bytes, 1 << 20);
            let n = c.counters;
            assert_eq!(n.bytes_written, c.bytes, "{v:?}");
            assert_eq!(n.wire_bytes, c.bytes, "{v:?}");
            assert_eq!(n.bytes_acked, c.bytes, "{v:?}");
            // Each process keeps its task frag's page after close (until it exits).
            let task_pages = if v == Variant::Modern { 4 } else { 0 };
            assert_eq!(n.pages_live, task_pages, "{v:?}");
            assert_eq!(n.pages_allocated, n.pages_freed + task_pages, "{v:?}");
            assert_eq!(n.skbs_allocated, n.skbs_freed, "{v:?}");
        }
    }
}
