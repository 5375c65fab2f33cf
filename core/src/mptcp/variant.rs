//! What differs between the two MPTCP variants of seed 003, as data: what mptcp_sendmsg_frag
//! does when it collapses onto a subflow's tail skb.

use crate::names::names;

/// The variant as a strategy: what mptcp_sendmsg_frag does when it collapses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fix {
    /// Before seed 003.
    #[default]
    Pre2020,
    /// Seed 003.
    Abeni2020,
}

names!(Fix, "variant", {
    Pre2020 => "pre-2020",
    Abeni2020 => "abeni-2020",
});

/// `pre-2020` (the room left passed as the goal; PSH kept), `abeni-2020` (size_bias added
/// back; PSH cleared when collapsing).
pub const VARIANTS: &[&str] = Fix::NAMES;

impl Fix {
    /// size_bias: what is added back to the room left before it goes to tcp_build_frag.
    pub fn size_bias(self, tail_len: u32) -> i64 {
        match self {
            Fix::Pre2020 => 0,
            Fix::Abeni2020 => tail_len as i64,
        }
    }

    /// Whether collapsing clears TCPHDR_PSH on the tail.
    pub fn clears_psh(self) -> bool {
        self == Fix::Abeni2020
    }
}
