//! Seed 000: tcp_sendmsg and the linear area (Krishna Kumar, 2010), plus today's form.
//!
//! Layers, each using only those above it: [`variant`] (what differs, as data) and
//! [`counters`] -> [`params`] -> [`sock`] (the copy loop, acks, close) -> [`frag`] (the
//! page a frag is copied into, and the copy), [`xmit`] (the transmit path), [`matrix`] (the seed's benchmark matrix, counters only)
//! and [`scenario`] (the format for `mechanism = "sendmsg"` and its checks) -> [`machine`]
//! (the run).

pub(crate) mod counters;
mod frag;
pub(crate) mod machine;
pub(crate) mod matrix;
pub(crate) mod params;
pub(crate) mod scenario;
pub(crate) mod sock;
pub(crate) mod variant;
mod xmit;

pub use counters::SendCounters;
pub use matrix::{
    matrix_config, run_cell, run_matrix, MATRIX_SOCKETS, MATRIX_TOTAL, MATRIX_WINDOW, MATRIX_WRITES,
};
pub use params::{DeviceParams, SocketParams};
pub use scenario::{iov_lengths, SendOp, SendScenario, MAX_SNDBUF, MIN_MSS};
pub use sock::SendSock;
pub use variant::{Variant, VARIANTS};
