//! Seed 000: tcp_sendmsg and the linear area (Krishna Kumar, 2010), plus today's form.
//!
//! Scenario format for `mechanism = "sendmsg"`; the machine itself lives in the submodules.

use crate::consts::ConstOverrides;
use crate::scenario::RunOptions;
use crate::trace::Trace;
use crate::Error;
use serde::{Deserialize, Serialize};

/// `pre-2010` (select_size), `kumar-2010` (no linear data), `modern` (tcp_sendmsg_locked).
pub const VARIANTS: &[&str] = &["pre-2010", "kumar-2010", "modern"];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SendScenario {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    #[serde(default, skip_serializing_if = "ConstOverrides::is_empty")]
    pub consts: ConstOverrides,
    #[serde(default)]
    pub socket: SocketParams,
    #[serde(default)]
    pub device: DeviceParams,
    pub ops: Vec<SendOp>,
}

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
}

impl Default for SocketParams {
    fn default() -> Self {
        SocketParams {
            mss: 1448,
            max_window: 0,
            tcp_header_len: 32,
            net_header_len: 20,
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

/// One operation of a send scenario.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum SendOp {
    /// sendmsg of `bytes`, or of the iovecs `iov` (lengths), one call.
    Sendmsg {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        iov: Option<Vec<u64>>,
    },
    /// Hand every unsent skb to the device.
    Transmit,
    /// The peer acknowledges `bytes` (default: everything sent); fully acked skbs are freed.
    Ack {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<u64>,
    },
    /// close(): free the write queue and the socket's page.
    Close,
}

impl SendScenario {
    pub fn run(&self, opts: &RunOptions) -> Result<Trace, Error> {
        let _ = opts;
        Err(Error::invalid("mechanism", "sendmsg model is being built"))
    }
}
