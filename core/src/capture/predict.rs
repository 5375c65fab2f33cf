//! The model's prediction for a capture: the sendmsg scenario the model would run for the
//! writes one of the program's TCP sockets made ([`Capture::prediction`]), in today's variant
//! ([`Variant::TODAY`], v6.12's `tcp_sendmsg_locked`), built from what the capture saw (each
//! write's size, the MSS, the TCP header) and saying what it could not see and assumed.
//! Its [`Prediction::text`] is a scenario as a learner writes one, read back by
//! [`Scenario::parse`] into [`Prediction::scenario`].

use super::{Capture, Moment, Skb, Socket, Source};
use crate::consts::wire::{ETH_HLEN, IPV4_HLEN, IP_MAX_MTU};
use crate::limits::{MAX_OP_BYTES, MAX_TOTAL_BYTES};
use crate::mechanism::Mechanism;
use crate::send::{SendScenario, SocketParams, Variant, MAX_SNDBUF, MIN_MSS};
use crate::{Error, Scenario};

/// At most this many writes become the scenario's ops (the scenario's own cap on ops).
pub const MAX_PREDICTED_WRITES: usize = crate::limits::MAX_OPS;

/// The tracepoint a data skb's layout was read at.
const AT_DEVICE: &str = "net:net_dev_start_xmit";
/// The tracepoint that gives tcp_sendmsg_locked's size goal (v6.16 on).
const AT_SENDMSG: &str = "tcp:tcp_sendmsg_locked";

/// What the capture cannot tell the model, and what the scenario assumes instead.
pub const UNKNOWN: [&str; 5] = [
    "cwnd and the peer's window: not traced; the scenario leaves max_window unbounded \
     (tcp_bound_to_half_wnd does not cut the size goal), and every skb may go out",
    "when the kernel pushed (autocork, TCP_NODELAY, TCP_CORK, Nagle): not traced; the \
     scenario hands each write's skbs to the device at its end (device.drain), so the next \
     write starts a new skb",
    "the peer's acknowledgements: a free is seen, not the ack that caused it; the scenario \
     acks everything sent only before a write whose first frag the kernel put at offset 0 of \
     the page it was filling (skb_page_frag_refill rewinds a page no skb holds any more, so \
     every earlier skb had been freed by then), and elsewhere nothing",
    "SO_SNDBUF: not traced (the kernel autotunes it); the scenario takes the largest the \
     model allows, so no write waits for an ack",
    "the kernel's release: the capture ran on its own, the model is v6.12's \
     tcp_sendmsg_locked with a 32 KiB page frag",
];

/// A fact the scenario was built from, and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact {
    /// `mss`, `tcp_header_len`.
    pub field: &'static str,
    pub value: u32,
    pub source: Source,
}

/// The model's scenario for one socket's writes ([`Capture::prediction`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    /// The socket predicted (an index into [`Capture::sockets`]).
    pub socket: u32,
    /// Every write the socket made, in order (`sock:sock_send_length`).
    pub writes: Vec<u64>,
    /// How many of them became ops: the rest are past the scenario's caps
    /// ([`MAX_PREDICTED_WRITES`], [`MAX_OP_BYTES`], [`MAX_TOTAL_BYTES`]).
    pub ops: usize,
    /// The writes (by index, ascending) before which the scenario acks everything sent:
    /// where the kernel's page frag began again at the start of its page
    /// ([`Capture::page_rewinds`]).
    pub acks: Vec<usize>,
    /// The MSS and the TCP header the scenario uses, each with where it came from.
    pub facts: Vec<Fact>,
    /// The scenario as text (TOML with its facts and assumptions as comments).
    pub text: String,
    /// [`Prediction::text`] read back.
    pub scenario: Scenario,
}

impl Prediction {
    /// The model's step (an index into its run's steps) of write `n` made an op: after the
    /// acks before it, each a step of its own.
    pub fn write_step(&self, n: usize) -> usize {
        n + self.acks.iter().filter(|&&k| k <= n).count()
    }
}

impl Capture {
    /// The model's scenario for the writes of the first of the program's TCP sockets that
    /// wrote, or an error naming why there is none to predict.
    pub fn prediction(&self) -> Result<Prediction, Error> {
        let s = (self.sockets.iter())
            .find(|s| s.proto == super::Proto::Tcp && s.writes > 0)
            .ok_or_else(|| {
                Error::invalid(
                    "capture.sockets",
                    "no TCP socket of the program's wrote: the model predicts the skbs \
                     tcp_sendmsg builds for a TCP socket's writes",
                )
            })?;
        let writes = self.writes(s.id);
        if writes.is_empty() {
            return Err(Error::invalid(
                "capture.timeline",
                format!(
                    "no write of tcp socket {} in it (a capture written before the \
                     timeline was kept): the writes' sizes are not known",
                    s.id
                ),
            ));
        }
        let data = self.data_skbs(s.id);
        let tcp_header_len = tcp_header_len(&data);
        let mss = mss(s, &data, tcp_header_len.value);
        let mut ops = capped(&writes);
        let mut acks = self.page_rewinds(&data, &writes[..ops]);
        while ops + acks.len() > MAX_PREDICTED_WRITES {
            ops -= 1;
            acks.retain(|&k| k < ops);
        }
        if ops == 0 {
            return Err(Error::Range {
                field: format!("tcp socket {}'s first write", s.id),
                value: format!("{} bytes", writes[0]),
                allowed: format!("at most {MAX_OP_BYTES}, as a scenario's write"),
            });
        }
        let text = scenario_text(
            self,
            s,
            &writes[..ops],
            &acks,
            &[mss.clone(), tcp_header_len.clone()],
        );
        let scenario = Scenario::parse(&text)?;
        Ok(Prediction {
            socket: s.id,
            ops,
            acks,
            writes,
            facts: vec![mss, tcp_header_len],
            text,
            scenario,
        })
    }

    /// The bytes each write on `socket` returned, in order.
    fn writes(&self, socket: u32) -> Vec<u64> {
        (self.timeline.iter())
            .filter_map(|m| match *m {
                Moment::Write {
                    socket: s, bytes, ..
                } if s == socket => Some(bytes),
                _ => None,
            })
            .collect()
    }

    /// The writes (by index) whose first byte the kernel put at offset 0 of the page that
    /// held the write before's last byte: `skb_page_frag_refill` (v6.12) rewinds a page only
    /// when its count is 1, no skb holding it, so every earlier skb had been freed by then.
    /// `data` are the socket's data skbs, each write's bytes after the last's.
    fn page_rewinds(&self, data: &[&Skb], writes: &[u64]) -> Vec<usize> {
        let stream = stream(data);
        // The skb holding stream byte `offset`, and where it starts.
        let at = |offset: u64| {
            let i = stream
                .partition_point(|&(o, _)| o <= offset)
                .checked_sub(1)?;
            let (start, s) = stream[i];
            (offset < start + payload(s)).then_some((start, s.xmit.as_ref()?))
        };
        let mut rewinds = Vec::new();
        let mut start = 0u64;
        for (k, &w) in writes.iter().enumerate() {
            let (before, first) = (start.checked_sub(1).and_then(at), at(start));
            let (Some((_, b)), Some((s, f))) = (before, first) else {
                start += w;
                continue;
            };
            let (last, head) = (b.frags.last(), f.frags.first());
            if s == start
                && head.is_some_and(|h| h.offset == 0 && Some(h.page) == last.map(|l| l.page))
            {
                rewinds.push(k);
            }
            start += w;
        }
        rewinds
    }

    /// The skbs `socket` sent with payload, in order of first sighting.
    pub(super) fn data_skbs(&self, socket: u32) -> Vec<&Skb> {
        (self.skbs.iter())
            .filter(|s| s.tx_socket == Some(socket) && payload(s) > 0)
            .collect()
    }
}

/// `data` (a socket's data skbs) with each one's first payload byte in the stream, counted
/// from the first skb's sequence number (wrapping as TCP's does), in stream order.
pub(super) fn stream<'a>(data: &[&'a Skb]) -> Vec<(u64, &'a Skb)> {
    let Some(base) = data
        .iter()
        .find_map(|s| s.xmit.as_ref())
        .map(|x| x.seq as u32)
    else {
        return Vec::new();
    };
    let mut v: Vec<(u64, &Skb)> = (data.iter())
        .filter_map(|&s| Some(((s.xmit.as_ref()?.seq as u32).wrapping_sub(base).into(), s)))
        .collect();
    v.sort_by_key(|k| k.0);
    v
}

/// The payload an skb carried at the device: its length less the headers.
pub(super) fn payload(s: &Skb) -> u64 {
    s.xmit
        .as_ref()
        .map_or(0, |x| x.len.saturating_sub(x.headers))
}

/// The TCP header: a data skb's headers less Ethernet's and IPv4's (the capture reads
/// IPv4 before demux; an IPv6 socket's would be off by 20), else the scenario's default.
fn tcp_header_len(data: &[&Skb]) -> Fact {
    let default = SocketParams::default().tcp_header_len;
    let seen = (data.iter().filter_map(|s| s.xmit.as_ref()))
        .map(|x| x.headers.saturating_sub((ETH_HLEN + IPV4_HLEN).into()))
        .find(|&h| (20..=60).contains(&h) && h % 4 == 0);
    match seen {
        Some(h) => Fact {
            field: "tcp_header_len",
            value: h as u32,
            source: Source::Seen(format!(
                "{AT_DEVICE} (a data skb's headers less Ethernet's and IPv4's)"
            )),
        },
        None => Fact {
            field: "tcp_header_len",
            value: default,
            source: Source::Inferred("no data skb's headers read: the scenario's default".into()),
        },
    }
}

/// The MSS: a GSO skb's gso_size at the device; else the first size goal
/// `tcp:tcp_sendmsg_locked` reported (no skb was cut into segments, so the goal stood for
/// one); else the largest payload an skb carried; clamped to what a scenario takes.
fn mss(s: &Socket, data: &[&Skb], tcp_header_len: u32) -> Fact {
    let gso = (data.iter().filter_map(|s| s.xmit.as_ref())).find(|x| x.gso_size > 0);
    let largest = data.iter().map(|s| payload(s)).max();
    let (value, source) = if let Some(x) = gso {
        (
            x.gso_size,
            Source::Seen(format!("{AT_DEVICE} (a GSO skb's gso_size)")),
        )
    } else if let Some(&goal) = s.size_goals.first() {
        let why =
            "its first size goal: no skb was cut into segments, so the goal stood for one MSS";
        (goal, Source::Seen(format!("{AT_SENDMSG} ({why})")))
    } else if let Some(p) = largest {
        let why = "the largest payload an skb carried (no GSO skb, no size goal seen)";
        (p, Source::Inferred(why.into()))
    } else {
        let why = "nothing seen tells it: the scenario's default";
        (
            SocketParams::default().mss.into(),
            Source::Inferred(why.into()),
        )
    };
    let most = u64::from(IP_MAX_MTU - IPV4_HLEN - tcp_header_len);
    Fact {
        field: "mss",
        value: value.clamp(MIN_MSS, most) as u32,
        source,
    }
}

/// How many writes, from the first, fit the scenario's caps.
fn capped(writes: &[u64]) -> usize {
    let mut total = 0u64;
    (writes.iter().take(MAX_PREDICTED_WRITES))
        .take_while(|&&w| {
            total += w;
            w <= MAX_OP_BYTES && total <= MAX_TOTAL_BYTES
        })
        .count()
}

/// The scenario as TOML: its facts and what it assumed as comments, then the fields.
fn scenario_text(
    c: &Capture,
    s: &Socket,
    writes: &[u64],
    acks: &[usize],
    facts: &[Fact],
) -> String {
    let what = match c.command.as_slice() {
        [] => format!("process {}", c.pid),
        words => words.join(" "),
    };
    let title = format!(
        "The model's prediction for {what}: tcp socket {} on Linux {}",
        s.id, c.kernel
    );
    let mut t = String::from("# Derived from a skblab trace capture: the same writes, in order.\n");
    for f in facts {
        t += &format!("# {} {}: {}\n", f.field, f.value, f.source.mark());
    }
    if writes.len() < c.writes(s.id).len() {
        t += &format!(
            "# only the first {} writes: the rest are past a scenario's caps\n",
            writes.len()
        );
    }
    t += "# Not in the capture, so assumed:\n";
    for u in UNKNOWN {
        t += &format!("# - {u}\n");
    }
    let (mss, hdr) = (facts[0].value, facts[1].value);
    t += &format!(
        "title = {}\nmechanism = \"{}\"\nvariant = \"{}\"\n\n",
        toml_string(&title),
        SendScenario::NAME,
        Variant::TODAY.name()
    );
    t += &format!(
        "[socket]\nmss = {mss}\ntcp_header_len = {hdr}\nsndbuf = {MAX_SNDBUF}\n\n\
         [device]\nmtu = {}\ndrain = true\n",
        mss + IPV4_HLEN + hdr
    );
    for (k, w) in writes.iter().enumerate() {
        if acks.binary_search(&k).is_ok() {
            t += "\n# The kernel began this write at the start of the page it was filling: \
                  every skb before was freed (inferred).\n[[ops]]\nop = \"ack\"\n";
        }
        t += &format!("\n[[ops]]\nop = \"sendmsg\"\nbytes = {w}\n");
    }
    t
}

/// `s` as a TOML basic string: JSON's escapes are TOML's, and control characters (which
/// JSON leaves in, such as DEL) are dropped.
fn toml_string(s: &str) -> String {
    let plain: String = s.chars().filter(|c| !c.is_control()).collect();
    serde_json::Value::String(plain).to_string()
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::capture::Proto;

    /// `skblab trace -- skbpeer tcp 7000 14480 3` on Linux 6.18 (tests/fixtures).
    pub(in crate::capture) fn fixture() -> Capture {
        Capture::parse(include_str!("../../../tests/fixtures/capture-tcp.json")).unwrap()
    }

    /// Socket 1 wrote 14480 bytes three times; no skb was a GSO skb (each fit one MSS), so
    /// the MSS is the first size goal tcp_sendmsg_locked reported; the headers, 66 bytes,
    /// are Ethernet's 14, IPv4's 20 and TCP's 32 (timestamps). The text is a scenario of
    /// today's variant that reads back as itself.
    #[test]
    fn the_fixtures_writes_become_todays_scenario() {
        let p = fixture().prediction().unwrap();
        assert_eq!(
            (p.socket, p.writes.as_slice(), p.ops),
            (1, &[14480; 3][..], 3)
        );
        let facts: Vec<_> = p.facts.iter().map(|f| (f.field, f.value)).collect();
        assert_eq!(facts, [("mss", 32741), ("tcp_header_len", 32)]);
        assert!(
            matches!(&p.facts[0].source, Source::Seen(s) if s.starts_with(AT_SENDMSG)),
            "{:?}",
            p.facts[0].source
        );
        let Scenario::Sendmsg(sc) = &p.scenario else {
            panic!("a sendmsg scenario");
        };
        assert_eq!(sc.variant.as_deref(), Some(p.scenario.today()));
        assert_eq!(
            (sc.socket.mss, sc.device.drain, sc.ops.len()),
            (32741, true, 3)
        );
        assert_eq!(
            Scenario::parse(&p.scenario.to_json()),
            Ok(p.scenario.clone())
        );
        for u in UNKNOWN {
            assert!(p.text.contains(u), "{u}");
        }
    }

    /// A GSO skb's gso_size is the MSS, before any size goal.
    /// Had the kernel put write 3 at offset 0 of the page writes 1 and 2 filled (as it does
    /// when their skbs were acked and freed before it: skb_page_frag_refill finds the count
    /// at 1), the scenario acks everything sent before write 3, and the model, freeing skbs
    /// 1 and 2 and their page references, rewinds the page too: every skb is alike, and
    /// write 3 is the model's fourth step.
    #[test]
    fn a_page_rewound_means_an_ack_before_the_write() {
        let mut c = fixture();
        assert_eq!(c.prediction().unwrap().acks, Vec::<usize>::new());
        let page = c.skbs[5].xmit.as_ref().unwrap().frags[0].page;
        c.skbs[7].xmit.as_mut().unwrap().frags = vec![super::super::Frag {
            page,
            offset: 0,
            size: 14480,
            count: 2,
        }];
        let p = c.prediction().unwrap();
        assert_eq!((p.acks.clone(), p.ops, p.write_step(2)), (vec![2], 3, 3));
        let ack = "every skb before was freed (inferred).\n[[ops]]\nop = \"ack\"\n\n\
                   [[ops]]\nop = \"sendmsg\"\nbytes = 14480\n";
        assert!(p.text.ends_with(ack), "{}", p.text);
        let model = p.scenario.run(&crate::RunOptions::default()).unwrap();
        let got = p.compare(&c, &model);
        assert!(
            got.summary().starts_with("3 of 3 skbs alike"),
            "{}",
            got.summary()
        );
        // Beside the capture, the model's step for write 3 runs the ack's events first.
        let lane = p.lane(&c, &model).unwrap();
        let third = (lane.steps.iter())
            .find(|s| s.op.starts_with("ack everything sent, then sendmsg"))
            .unwrap();
        let own = &model.steps[3].events;
        assert_eq!(third.events.len(), model.steps[2].events.len() + own.len());
        assert_eq!(&third.events[third.events.len() - own.len()..], &own[..]);
    }

    #[test]
    fn a_gso_skb_gives_the_mss() {
        let mut c = fixture();
        c.skbs[3].xmit.as_mut().unwrap().gso_size = 1448;
        let p = c.prediction().unwrap();
        assert_eq!(p.facts[0].value, 1448);
        assert!(matches!(&p.facts[0].source, Source::Seen(s) if s.starts_with(AT_DEVICE)));
    }

    /// No TCP socket that wrote, or no write in the timeline: refused, saying why.
    #[test]
    fn nothing_to_predict_is_refused_by_name() {
        let mut c = fixture();
        c.sockets[1].proto = Proto::Udp;
        let e = c.prediction().unwrap_err().to_string();
        assert!(
            e.contains("capture.sockets") && e.contains("no TCP socket"),
            "{e}"
        );
        let mut c = fixture();
        c.timeline.clear();
        let e = c.prediction().unwrap_err().to_string();
        assert!(e.contains("capture.timeline"), "{e}");
    }

    /// Writes past a scenario's caps are left out, from the first that does not fit.
    #[test]
    fn writes_are_capped_as_scenarios_are() {
        assert_eq!(capped(&[1, MAX_OP_BYTES + 1, 1]), 1);
        assert_eq!(
            capped(&vec![1; MAX_PREDICTED_WRITES + 5]),
            MAX_PREDICTED_WRITES
        );
        let many = vec![MAX_OP_BYTES; (MAX_TOTAL_BYTES / MAX_OP_BYTES) as usize + 1];
        assert_eq!(capped(&many), many.len() - 1);
        let mut c = fixture();
        for m in &mut c.timeline {
            if let Moment::Write { bytes, .. } = m {
                *bytes = MAX_OP_BYTES + 1;
            }
        }
        let e = c.prediction().unwrap_err().to_string();
        assert!(
            e.contains("first write") && e.contains(&MAX_OP_BYTES.to_string()),
            "{e}"
        );
        let mut c = fixture();
        let last = (c.timeline.iter_mut().rev())
            .find_map(|m| match m {
                Moment::Write { bytes, .. } => Some(bytes),
                _ => None,
            })
            .unwrap();
        *last = MAX_OP_BYTES + 1;
        let p = c.prediction().unwrap();
        assert_eq!((p.ops, p.writes.len()), (2, 3));
        assert!(p.text.contains("only the first 2 writes"), "{}", p.text);
    }
}
