//! What went over the wire, counted for the summary (kept apart from the connection, as
//! quinn-proto keeps its `ConnectionStats`).

/// What went over the wire, for the summary.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Stats {
    pub frames_out: u64,
    /// Wire segments sent (a super-packet counts its MSS-sized pieces).
    pub segments_out: u64,
    pub super_packets_out: u64,
    pub bytes_out: u64,
    pub retransmitted_segments: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    /// Segments RACK found lost (RFC 8985), and how many of them were retransmissions.
    pub rack_lost: u64,
    pub rack_lost_resends: u64,
    /// Tail loss probes sent (RFC 8985 7).
    pub loss_probes: u64,
    /// Reductions undone, after a timeout (the kernel's `TCPLossUndo`) and after a fast
    /// recovery (`TCPFullUndo`).
    pub loss_undos: u64,
    pub recovery_undos: u64,
    /// D-SACK blocks (RFC 2883) received and sent.
    pub dsacks_in: u64,
    pub dsacks_out: u64,
    /// Of those sent, the ones sent once both FINs were out: the peer may be in TIME_WAIT
    /// by then, where the kernel's `tcp_timewait_state_process` reads no SACK, or gone.
    pub dsacks_out_closing: u64,
    pub zero_window_probes: u64,
    /// The peer's FIN received again once we had it: its retransmission, because our ACK
    /// came late. Each copy is acknowledged (RFC 9293's TIME-WAIT, as the kernel's
    /// `tcp_timewait_state_process` does); when an earlier ACK has already closed the
    /// peer's socket, the kernel answers the next with a RST (`tcp_v4_send_reset`, counted
    /// in its `Tcp.OutRsts`).
    pub peer_fins_again: u64,
    pub frames_in: u64,
    pub segments_in: u64,
    pub super_packets_in: u64,
    pub bytes_in: u64,
    pub bad_checksums_in: u64,
    pub dup_acks_in: u64,
}
