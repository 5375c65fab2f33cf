//! A send scenario's connection: the socket's side and the route's device.

use crate::consts::wire::{IPV4_HLEN, TCP_TS_HLEN};
use serde::{Deserialize, Serialize};

/// The socket's side of the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SocketParams {
    /// mss_now (tcp_current_mss), bytes of payload per segment.
    pub mss: u32,
    /// tp->max_window, the largest window the peer advertised; 0 = not bounded.
    pub max_window: u32,
    /// tp->tcp_header_len: 20, or 32 with timestamps.
    pub tcp_header_len: u32,
    /// net_header_len: 20 for IPv4.
    pub net_header_len: u32,
    /// sk_sndbuf: a new skb is allocated only while the queued truesize (sk_wmem_queued) is
    /// below it (sk_stream_memory_free); default 4 MiB, tcp_wmem[2], as if autotuned to the
    /// maximum.
    pub sndbuf: u32,
}

impl SocketParams {
    /// Every segment carries the timestamp option (`tcp_header_len` is 32).
    pub fn timestamps(&self) -> bool {
        self.tcp_header_len == TCP_TS_HLEN
    }
}

impl Default for SocketParams {
    fn default() -> Self {
        SocketParams {
            mss: 1448,
            max_window: 0,
            tcp_header_len: TCP_TS_HLEN,
            net_header_len: IPV4_HLEN,
            sndbuf: 4 << 20,
        }
    }
}

/// The route's device features (sk_route_caps).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DeviceParams {
    /// NETIF_F_SG: can send page frags.
    pub sg: bool,
    /// NETIF_F_TSO / GSO: accepts super-packets (needs SG and checksum offload).
    pub gso: bool,
    /// Checksum offload (NETIF_F_IP_CSUM / HW_CSUM).
    pub csum: bool,
    /// MTU in bytes.
    pub mtu: u32,
    /// Whether the write queue drains to the device after every operation (`true`), or is
    /// held (device busy / window closed) until an explicit `transmit`.
    pub drain: bool,
    /// net.core.high_order_alloc_disable (modern): the socket page frag falls back to order 0.
    pub high_order_alloc_disable: bool,
}

impl Default for DeviceParams {
    fn default() -> Self {
        DeviceParams {
            sg: true,
            gso: true,
            csum: true,
            mtu: 1500,
            drain: false,
            high_order_alloc_disable: false,
        }
    }
}
