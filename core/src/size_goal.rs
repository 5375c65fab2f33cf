//! How big one unsent skb may grow: `tcp_xmit_size_goal` and `tcp_bound_to_half_wnd`.

use crate::consts::{Era, KernelConsts};

/// TCP_MSS_DEFAULT (536): below this max_window, half-window bounding uses the whole window.
pub(crate) const TCP_MSS_DEFAULT: u32 = 536;

/// The socket facts `tcp_xmit_size_goal` reads.
#[derive(Clone, Copy, Debug)]
pub struct GoalInput {
    /// mss_now (tcp_current_mss).
    pub mss: u32,
    /// The route's device does GSO/TSO (and SG): what sk_can_gso saw before GSO became
    /// TCP's own (see [`gso_follows_device`]).
    pub gso: bool,
    /// The device's GSO limit (sk_gso_max_size before any adjustment).
    pub gso_max_size: u32,
    /// tp->max_window: the largest window the peer ever advertised (0 = unknown).
    pub max_window: u32,
    /// icsk_af_ops->net_header_len (20 for IPv4).
    pub net_header_len: u32,
    /// tp->tcp_header_len (20, or 32 with timestamps).
    pub tcp_header_len: u32,
}

/// `tcp_bound_to_half_wnd`. In 2.6.33: bound to max_window/2 when max_window is known; later
/// kernels (4.18+) use the whole window when it is at most TCP_MSS_DEFAULT. Never below
/// `68 - tcp_header_len`.
pub fn bound_to_half_wnd(era: Era, pktsize: u32, max_window: u32, tcp_header_len: u32) -> u32 {
    let cutoff = if era == Era::V2_6_33 || max_window > TCP_MSS_DEFAULT {
        max_window >> 1
    } else {
        max_window
    };
    if cutoff != 0 && pktsize > cutoff {
        cutoff.max(68u32.saturating_sub(tcp_header_len))
    } else {
        pktsize
    }
}

/// Whether `tcp_xmit_size_goal` asks the device about GSO. In 2.6.33 it tests
/// `sk_can_gso(sk)`, so a device with GSO and TSO off (ethtool) gets an MSS-sized goal.
/// "tcp: switch to GSO being always on" (0a6b2a1dc2a2, v4.17) gave every TCP socket GSO
/// (sk_setup_caps) and dropped the test: 5.10's tcp_xmit_size_goal checks only
/// `large_allowed`, so the goal is large on every device; one without TSO gets software GSO.
pub(crate) fn gso_follows_device(era: Era) -> bool {
    matches!(era, Era::V2_6_33 | Era::V3_5 | Era::V3_6)
}

/// `tcp_xmit_size_goal`: the MSS without GSO; with GSO a whole number of MSS under the GSO
/// limit less headers (2.6.33: `gso_max_size - 1 - net_header_len - tcp_header_len`; 5.x and
/// later: `gso_max_size - 1 - MAX_TCP_HEADER`), bounded by half the peer's window, never below
/// one MSS.
pub fn tcp_xmit_size_goal(era: Era, k: &KernelConsts, g: &GoalInput) -> u32 {
    let gso = g.gso || !gso_follows_device(era);
    if !gso || g.mss == 0 {
        return g.mss;
    }
    let reserve = if era == Era::V2_6_33 {
        g.net_header_len + g.tcp_header_len
    } else {
        k.max_tcp_header
    };
    let goal = g.gso_max_size.saturating_sub(1 + reserve);
    let goal = bound_to_half_wnd(era, goal, g.max_window, g.tcp_header_len);
    (goal / g.mss * g.mss).max(g.mss)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(mss: u32, max_window: u32) -> GoalInput {
        GoalInput {
            mss,
            gso: true,
            gso_max_size: 65536,
            max_window,
            net_header_len: 20,
            tcp_header_len: 32,
        }
    }

    #[test]
    fn mss_1448_gives_45_segments_in_every_era() {
        for era in [Era::V2_6_33, Era::V5_10, Era::V6_12] {
            assert_eq!(
                tcp_xmit_size_goal(era, &era.consts(), &input(1448, 0)),
                65_160,
                "{era:?}"
            );
        }
    }

    #[test]
    fn half_window_bounds_goal() {
        let e = Era::V6_12;
        // max_window 20000 -> cutoff 10000 -> 6 x 1448 = 8688.
        assert_eq!(
            tcp_xmit_size_goal(e, &e.consts(), &input(1448, 20_000)),
            8_688
        );
        // Never below one MSS.
        assert_eq!(
            tcp_xmit_size_goal(e, &e.consts(), &input(1448, 1_000)),
            1_448
        );
    }

    /// A device without GSO: one MSS in 2.6.33; since v4.17 TCP does GSO itself, so 5.10
    /// and 6.12 keep the 45 x 1448 = 65160 goal.
    #[test]
    fn no_gso_device() {
        let g = GoalInput {
            gso: false,
            ..input(1448, 0)
        };
        for (era, goal) in [
            (Era::V2_6_33, 1448),
            (Era::V5_10, 65_160),
            (Era::V6_12, 65_160),
        ] {
            assert_eq!(tcp_xmit_size_goal(era, &era.consts(), &g), goal, "{era:?}");
        }
    }
}
