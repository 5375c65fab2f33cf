//! Congestion control behind a small trait, as the kernel's `tcp_congestion_ops` and
//! quinn-proto's `Controller` keep it apart from loss detection: the endpoint says what
//! happened (bytes delivered, a recovery, a timeout), the controller says how much may be in
//! flight. The one controller is Reno with the kernel's congestion window validation.

/// What the sender asks of a congestion controller (sizes in bytes).
pub trait Controller {
    /// How many bytes may be in flight (`snd_cwnd`).
    fn window(&self) -> u64;
    /// The connection is established: RFC 6928's initial window of ten segments.
    fn on_established(&mut self, mss: u64);
    /// An ACK delivered `bytes` outside recovery (`tcp_cong_avoid`).
    fn on_ack(&mut self, bytes: u64, mss: u64);
    /// A round of sending ended with `flight` bytes out; `limited`: the window was full.
    fn on_sent(&mut self, limited: bool, flight: u64, snd_una: u64, snd_nxt: u64);
    /// Fast recovery begins with `flight` bytes out (`tcp_enter_recovery`).
    fn on_recovery(&mut self, flight: u64, mss: u64);
    /// Fast recovery ended and was not undone (`tcp_end_cwnd_reduction`).
    fn on_recovery_end(&mut self);
    /// A retransmission timeout (`tcp_enter_loss`); `new_episode`: none was under way.
    fn on_timeout(&mut self, flight: u64, mss: u64, new_episode: bool);
    /// The window and slow-start threshold an undo puts back (`tcp_init_undo`).
    fn undo_point(&self) -> (u64, u64);
    /// Puts back what [`Controller::undo_point`] kept (`tcp_undo_cwnd_reduction`).
    fn restore(&mut self, cwnd: u64, ssthresh: u64);
    fn ssthresh(&self) -> u64;
}

/// Reno as the kernel runs it (net/ipv4/tcp_cong.c, v6.12), in bytes.
#[derive(Clone, Debug)]
pub struct Reno {
    pub cwnd: u64,
    pub ssthresh: u64,
    /// Bytes delivered towards the next segment of congestion avoidance (`snd_cwnd_cnt`).
    pub cwnd_cnt: u64,
    /// Congestion window validation (the kernel's `tcp_cwnd_validate`): whether this window
    /// of data filled cwnd, the largest flight in it, and where it ends.
    cwnd_limited: bool,
    max_flight: u64,
    cwnd_usage_seq: u64,
}

impl Default for Reno {
    fn default() -> Reno {
        Reno {
            cwnd: 0,
            ssthresh: u64::MAX,
            cwnd_cnt: 0,
            cwnd_limited: false,
            max_flight: 0,
            cwnd_usage_seq: 0,
        }
    }
}

impl Reno {
    /// `tcp_is_cwnd_limited`: cwnd grows only while the sender uses it, filled this window,
    /// or, in slow start, while cwnd is under twice the largest recent flight.
    fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited || (self.cwnd < self.ssthresh && self.cwnd < 2 * self.max_flight)
    }

    /// `tcp_reno_ssthresh` on the flight (RFC 6675's FlightSize): half, at least two segments.
    fn halve(&mut self, flight: u64, mss: u64) {
        self.ssthresh = (flight / 2).max(2 * mss);
    }
}

impl Controller for Reno {
    fn window(&self) -> u64 {
        self.cwnd
    }

    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    fn on_established(&mut self, mss: u64) {
        self.cwnd = 10 * mss;
    }

    /// `tcp_reno_cong_avoid`, `tcp_slow_start`, `tcp_cong_avoid_ai`: a stretch ACK counts
    /// for everything it delivered, as that many ACKs would. Slow start grows by the bytes
    /// delivered up to ssthresh; what is left, and everything past it, grows cwnd by one
    /// segment per cwnd of bytes delivered.
    fn on_ack(&mut self, bytes: u64, mss: u64) {
        if !self.is_cwnd_limited() {
            return;
        }
        let mut left = bytes;
        if self.cwnd < self.ssthresh {
            let grown = (self.cwnd + left).min(self.ssthresh);
            left -= grown - self.cwnd;
            self.cwnd = grown;
        }
        self.cwnd_cnt += left;
        if self.cwnd_cnt >= self.cwnd {
            let n = self.cwnd_cnt / self.cwnd;
            self.cwnd_cnt -= n * self.cwnd;
            self.cwnd += n * mss;
        }
    }

    /// `tcp_cwnd_validate`, after each round of sending: remembers for the current window of
    /// data whether cwnd was full, or else the largest flight.
    fn on_sent(&mut self, limited: bool, flight: u64, snd_una: u64, snd_nxt: u64) {
        if snd_una >= self.cwnd_usage_seq
            || limited
            || (!self.cwnd_limited && flight > self.max_flight)
        {
            self.cwnd_limited = limited;
            self.max_flight = flight;
            self.cwnd_usage_seq = snd_nxt;
        }
    }

    /// RFC 6675 5 step 4.2: halve at once.
    fn on_recovery(&mut self, flight: u64, mss: u64) {
        self.halve(flight, mss);
        self.cwnd = self.ssthresh;
    }

    fn on_recovery_end(&mut self) {
        self.cwnd = self.ssthresh;
    }

    /// RFC 5681 3.1: one segment of window; ssthresh halves once per episode.
    fn on_timeout(&mut self, flight: u64, mss: u64, new_episode: bool) {
        if new_episode {
            self.halve(flight, mss);
        }
        self.cwnd = mss;
    }

    /// `tcp_current_ssthresh` outside a reduction: at least three quarters of cwnd.
    fn undo_point(&self) -> (u64, u64) {
        (self.cwnd, self.ssthresh.max(self.cwnd / 2 + self.cwnd / 4))
    }

    fn restore(&mut self, cwnd: u64, ssthresh: u64) {
        (self.cwnd, self.ssthresh) = (cwnd, ssthresh);
    }
}
