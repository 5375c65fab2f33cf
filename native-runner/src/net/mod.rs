//! The network layer that `skblab tap` and `skblab kernel` share: [`netns`] (the private
//! namespace, the TAP, addresses), [`link`] (frames in and out of the TAP), [`wire`] (Ethernet, ARP, IPv4 and TCP frames), [`vnet`]
//! (the virtio-net header), [`tcp`] (the runner's sans-IO TCP endpoint), [`faults`] (seeded
//! drop, reordering and corruption), [`pcap`] (the capture), [`sockopt`] (socket options).

pub(crate) mod faults;
pub(crate) mod link;
pub(crate) mod netns;
pub(crate) mod pcap;
pub(crate) mod sockopt;
pub(crate) mod tcp;
pub(crate) mod vnet;
pub(crate) mod wire;

/// The frame parser and the TCP endpoint, for the fuzz targets (`fuzz/`): the only way in
/// from outside the runner, and only with the `fuzzing` feature.
#[cfg(feature = "fuzzing")]
pub mod fuzzing {
    pub use super::netns::runner_ends;
    pub use super::tcp::{Chunk, Config, Endpoint, Out};
    pub use super::vnet::VnetHdr;
    pub use super::wire::{complete_tcp_checksum, parse, tcp_checksum_ok, Ends, Frame, ETH_LEN};
}
