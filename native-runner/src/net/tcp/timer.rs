//! Every timer of the endpoint in one table, and the RTT estimate that sets the
//! retransmission timeout (RFC 6298).

use std::time::Duration;

pub const RTO_INITIAL: Duration = Duration::from_millis(200);
pub const RTO_MIN: Duration = Duration::from_millis(30);
const RTO_MAX: Duration = Duration::from_secs(1);

/// What a timer does when it fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// The retransmission timeout; before the handshake the ARP and SYN retries, and with a
    /// closed peer window the zero-window probe.
    Rto,
    /// RACK's reordering window has passed for a range: look for losses again
    /// (the kernel's `ICSK_TIME_REO_TIMEOUT`).
    Reo,
    /// Tail loss probe (`ICSK_TIME_LOSS_PROBE`).
    Probe,
}

/// When each [`Timer`] fires, if armed. `Reo` and `Probe` share one slot, as the kernel's
/// `icsk_pending` does: arming one stops the other.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timers([Option<Duration>; 3]);

impl Timers {
    pub fn set(&mut self, t: Timer, at: Duration) {
        match t {
            Timer::Reo => self.stop(Timer::Probe),
            Timer::Probe => self.stop(Timer::Reo),
            Timer::Rto => {}
        }
        self.0[t as usize] = Some(at);
    }

    pub fn stop(&mut self, t: Timer) {
        self.0[t as usize] = None;
    }

    pub fn get(&self, t: Timer) -> Option<Duration> {
        self.0[t as usize]
    }

    pub fn expired(&self, t: Timer, now: Duration) -> bool {
        self.get(t).is_some_and(|at| now >= at)
    }

    /// The reordering timer or the loss probe, whichever is armed.
    pub fn early(&self) -> Option<(Duration, Timer)> {
        [Timer::Reo, Timer::Probe]
            .into_iter()
            .find_map(|t| self.get(t).map(|at| (at, t)))
    }

    /// The first timer to fire.
    pub fn next(&self) -> Option<Duration> {
        self.0.iter().flatten().min().copied()
    }
}

/// The smoothed RTT and its variation, and the retransmission timeout they give.
#[derive(Clone, Copy, Debug)]
pub struct Rtt {
    srtt: Option<(f64, f64)>,
    rto: Duration,
}

impl Default for Rtt {
    fn default() -> Rtt {
        Rtt {
            srtt: None,
            rto: RTO_INITIAL,
        }
    }
}

impl Rtt {
    pub fn rto(&self) -> Duration {
        self.rto
    }

    /// The smoothed RTT in seconds, once sampled.
    pub fn srtt(&self) -> Option<f64> {
        self.srtt.map(|(s, _)| s)
    }

    /// RFC 6298 5.5: the timeout doubles on each expiry, until a sample sets it afresh.
    pub fn backoff(&mut self) -> Duration {
        self.rto = (self.rto * 2).min(RTO_MAX);
        self.rto
    }

    /// RFC 6298 2: a round trip of `r` seconds.
    pub fn sample(&mut self, r: f64) {
        let (srtt, var) = match self.srtt {
            None => (r, r / 2.0),
            Some((s, v)) => (0.875 * s + 0.125 * r, 0.75 * v + 0.25 * (s - r).abs()),
        };
        self.srtt = Some((srtt, var));
        self.rto = Duration::from_secs_f64(srtt + 4.0 * var).clamp(RTO_MIN, RTO_MAX);
    }
}
