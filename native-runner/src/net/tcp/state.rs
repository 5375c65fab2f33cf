//! The connection's states (RFC 9293 3.3.2), with ARP resolution before the SYN, and the
//! moves between them that a FIN or its acknowledgment makes.

/// Our FIN takes the sequence number after the data (stream offset `tx.len()`), so `snd_nxt`
/// passes the data by one once the FIN is out, as the kernel's `tcp_send_fin` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum St {
    Arp,
    SynSent,
    /// Waiting for the peer's SYN: a passive open, which only the in-memory tests' second
    /// endpoint makes (the kernel's socket listens on the TAP).
    #[cfg_attr(not(test), allow(dead_code))]
    Listen,
    /// The peer's SYN answered with our SYN-ACK, not acknowledged yet.
    SynRcvd,
    Established,
    /// Our FIN sent, not acknowledged; no FIN from the peer yet.
    FinWait1,
    /// Our FIN acknowledged; waiting for the peer's.
    FinWait2,
    /// Both FINs sent, ours not acknowledged yet (simultaneous close).
    Closing,
    /// Both FINs sent and acknowledged, we closed first. The runner does not wait 2 MSL: the
    /// namespace vanishes with the process.
    TimeWait,
    /// The peer's FIN received; ours not sent yet.
    CloseWait,
    /// The peer's FIN received, ours sent and not acknowledged.
    LastAck,
    /// Both FINs sent and acknowledged, the peer closed first.
    Closed,
}

impl St {
    /// Our FIN has its sequence number: it went out at least once.
    #[cfg(feature = "fuzzing")]
    pub fn fin_queued(self) -> bool {
        use St::*;
        matches!(
            self,
            FinWait1 | FinWait2 | Closing | TimeWait | LastAck | Closed
        )
    }

    /// The peer's FIN arrived in order.
    pub fn peer_closed(self) -> bool {
        use St::*;
        matches!(self, CloseWait | Closing | LastAck | TimeWait | Closed)
    }

    /// Both FINs went out: the peer's arrived in order, and ours followed.
    pub fn both_fins_out(self) -> bool {
        self.peer_closed() && self != St::CloseWait
    }

    /// The handshake is done: data and FINs flow.
    pub fn synchronized(self) -> bool {
        !matches!(self, St::Arp | St::SynSent | St::Listen | St::SynRcvd)
    }

    /// Both FINs sent and acknowledged.
    pub fn done(self) -> bool {
        matches!(self, St::TimeWait | St::Closed)
    }

    /// Our FIN is due once the data is out: at once if we close first, else after the peer's.
    pub fn fin_due(self, close_first: bool) -> bool {
        match self {
            St::Established => close_first,
            St::CloseWait => true,
            _ => false,
        }
    }

    /// Our FIN went out.
    pub fn fin_sent(self) -> St {
        match self {
            St::Established => St::FinWait1,
            _ => St::LastAck,
        }
    }

    /// The peer acknowledged our FIN.
    pub fn fin_acked(self) -> St {
        match self {
            St::FinWait1 => St::FinWait2,
            St::Closing => St::TimeWait,
            St::LastAck => St::Closed,
            st => st,
        }
    }

    /// The peer's FIN arrived in order.
    pub fn peer_fin(self) -> St {
        match self {
            St::Established => St::CloseWait,
            St::FinWait1 => St::Closing,
            St::FinWait2 => St::TimeWait,
            st => st,
        }
    }
}
