//! Running a sendmsg scenario: [`SendSock`] driven by its operations, and what a run handed
//! to the device ([`SendScenario::transmitted`]).

use super::scenario::{iov_lengths, SendOp, SendScenario};
use super::sock::{SendSock, Xmitted};
use super::variant::{Variant, VARIANTS};
use crate::events::Events;
use crate::limits::check_range;
use crate::mechanism::{pick_variant, variant_and_ops, Mechanism, RunOptions};
use crate::trace::{drive, Counters, Machine, State, Trace};
use crate::Error;

impl Mechanism for SendScenario {
    const NAME: &'static str = "sendmsg";
    const VARIANTS: &'static [&'static str] = VARIANTS;
    const TODAY: &'static str = Variant::TODAY.name();

    variant_and_ops!();

    fn run(&self, opts: &RunOptions) -> Result<Trace, Error> {
        let mut m = self.machine(opts.variant.as_deref())?;
        let (steps, counters) = drive(&mut m, &self.ops, !opts.counters_only)?;
        let cfg = *m.sock.cfg();
        Ok(Trace {
            mechanism: Self::NAME.to_string(),
            variant: cfg.variant.name().to_string(),
            era: cfg.variant.era(),
            udp: false,
            napi_frags: false,
            consts: cfg.k,
            steps,
            counters,
        })
    }
}

/// What a run handed to the device ([`SendScenario::transmitted`]).
#[derive(Clone, Debug)]
pub struct Transmitted {
    pub variant: Variant,
    /// Every skb the device got, in stream order.
    pub skbs: Vec<Xmitted>,
    /// The final counters.
    pub counters: Counters,
}

impl SendScenario {
    /// The checked machine for the variant `over` names (else the scenario's own).
    fn machine(&self, over: Option<&str>) -> Result<SendMachine, Error> {
        let variant: Variant = pick_variant(over, self.variant.as_deref())?;
        let cfg = self.config(variant)?;
        self.check_ops()?;
        Ok(SendMachine {
            sock: SendSock::new(cfg),
        })
    }

    /// Runs the scenario (counters only) and gives the skbs it handed to the device: what
    /// a host replays on a real wire.
    pub fn transmitted(&self, over: Option<&str>) -> Result<Transmitted, Error> {
        let mut m = self.machine(over)?;
        m.sock.log_xmits();
        let (_, counters) = drive(&mut m, &self.ops, false)?;
        Ok(Transmitted {
            variant: m.sock.cfg().variant,
            skbs: m.sock.take_xmitted(),
            counters,
        })
    }
}

/// The error for a sendmsg that finds the write queue full (`sk_stream_memory_free` false):
/// the model does not sleep, so the scenario must ack first.
fn would_block(at: usize, (call, count): (u64, u64), queued: u64, sock: &SendSock) -> Error {
    let which = if count > 1 {
        format!(" (call {call} of {count})")
    } else {
        String::new()
    };
    Error::invalid(
        format!("ops[{at}]"),
        format!(
            "sendmsg{which} would block: the write queue holds {queued} bytes of truesize, \
             socket.sndbuf is {}; acknowledge data first (an `ack` op) or raise socket.sndbuf",
            sock.cfg().socket.sndbuf
        ),
    )
}

/// [`SendSock`] driven by scenario operations.
struct SendMachine {
    sock: SendSock,
}

impl Machine for SendMachine {
    type Op = SendOp;

    fn apply(&mut self, op: &SendOp, at: usize, ev: &mut Events) -> Result<(), Error> {
        let sock = &mut self.sock;
        // A closed socket takes only `socket`; an open one anything else.
        if sock.is_closed() != (*op == SendOp::Socket) {
            let why = if sock.is_closed() {
                "the socket is closed; only `socket` (the task's next socket) may follow"
            } else {
                "the socket is still open; `close` it before the task opens the next one"
            };
            return Err(Error::invalid(format!("ops[{at}]"), why));
        }
        match op {
            SendOp::Sendmsg {
                bytes,
                iov,
                eor,
                count,
            } => {
                let iov = iov_lengths(*bytes, iov.as_deref());
                for call in 1..=*count {
                    sock.sendmsg(&iov, *eor, ev)
                        .map_err(|queued| would_block(at, (call, *count), queued, sock))?;
                }
            }
            SendOp::Transmit => sock.transmit(ev),
            SendOp::Ack { bytes: None } => sock.ack_all(ev),
            SendOp::Ack { bytes: Some(b) } => {
                check_range(|| format!("ops[{at}].bytes"), *b, 0, sock.in_flight())?;
                sock.ack_to(sock.snd_una() + b, ev);
            }
            SendOp::Close => sock.close(ev),
            SendOp::Socket => sock.reopen(),
        }
        Ok(())
    }

    fn name(op: &SendOp) -> &'static str {
        op.name()
    }

    fn describe(&self, op: &SendOp) -> String {
        match op {
            SendOp::Sendmsg {
                bytes,
                iov,
                eor,
                count,
            } => {
                let what = match (bytes, iov) {
                    (Some(b), _) => format!("{b} bytes"),
                    (None, Some(iov)) => {
                        let parts: Vec<String> = iov.iter().map(u64::to_string).collect();
                        let total: u64 = iov.iter().sum();
                        format!(
                            "{} iovecs ({} = {total} bytes)",
                            iov.len(),
                            parts.join(" + ")
                        )
                    }
                    (None, None) => "0 bytes".to_string(),
                };
                let eor = if *eor { " (MSG_EOR)" } else { "" };
                let times = if *count > 1 {
                    format!(" x {count}")
                } else {
                    String::new()
                };
                format!("sendmsg {what}{eor}{times}")
            }
            SendOp::Transmit => "transmit".to_string(),
            SendOp::Ack { bytes: None } => "ack everything sent".to_string(),
            SendOp::Ack { bytes: Some(b) } => format!("ack {b} bytes"),
            SendOp::Close => "close".to_string(),
            SendOp::Socket => "socket: the task's next connection".to_string(),
        }
    }

    fn state(&self) -> State {
        self.sock.state()
    }

    fn counters(&self) -> Counters {
        self.sock.send_counters().to_counters()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Scenario;

    #[test]
    fn transmitted_gives_each_skb_and_its_psh() {
        let text = "mechanism = \"sendmsg\"\nops = [{ op = \"sendmsg\", bytes = 140000 }, \
                    { op = \"transmit\" }]";
        let Ok(Scenario::Sendmsg(s)) = Scenario::parse(text) else {
            panic!("a sendmsg scenario");
        };
        let sent = s.transmitted(Some("modern")).unwrap();
        let skbs: Vec<(u64, u32, bool)> =
            sent.skbs.iter().map(|x| (x.offset, x.len, x.psh)).collect();
        // size_goal 65160 (45 x 1448); PSH on the last skb, where the write ends.
        assert_eq!(
            skbs,
            [
                (0, 65_160, false),
                (65_160, 65_160, false),
                (130_320, 9_680, true)
            ]
        );
        assert_eq!(sent.variant, Variant::Modern);
        assert_eq!(sent.counters.get("xmit_skbs"), Some(3));
    }
}
