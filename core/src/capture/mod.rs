//! The `skblab trace` capture: a program's own skbs, read off the running kernel at its
//! tracepoints. [`Capture`] is the format, written by the runner (`native-runner/src/trace/`,
//! `--out`) and read back here by the same types ([`Capture::parse`] refuses, naming the
//! field, what the runner would not write); `summary` (its [`sockets`] and [`lessons`]) is what the terminal shows of it,
//! computed here so every host says the same. docs/trace.md says where each fact comes from.
//!
//! Every fact carries its [`Source`]: **seen** at a named tracepoint (or read through BTF at
//! one), or **inferred**, with what it was inferred from.

use crate::field_path::{self, Path};
use crate::Error;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

mod beside;
mod compare;
mod lane;
mod pair;
mod predict;
mod stack;
mod summary;

pub use compare::{Compared, SkbCompared, WriteCompared};
pub use lane::{MECHANISM, VARIANT};
pub use pair::Partner;
pub use predict::{Fact, Prediction, MAX_PREDICTED_WRITES, UNKNOWN};
pub use stack::Stack;
pub use summary::{lessons, sockets, Direction, Lesson, SocketSummary};

/// The format's version: a reader refuses any other.
pub const FORMAT: u32 = 1;
/// At most this many skbs in a capture (`--max-skbs` is capped here): the rest are counted
/// in [`Lost::skbs`].
pub const MAX_SKBS: usize = 100_000;
/// At most this many [`Moment`]s: an skb has at most five (alloc, xmit, rx, free and its
/// copies, which a read's syscall moment bounds), and syscalls are capped with events.
pub const MAX_MOMENTS: usize = 8 * MAX_SKBS;
/// At most this much capture text: some 600 bytes an skb, pretty-printed.
pub(crate) const MAX_CAPTURE_TEXT: usize = 64 << 20;

/// What one `skblab trace` run saw.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capture {
    /// [`FORMAT`].
    pub format: u32,
    /// The running kernel's release (uname -r).
    pub kernel: String,
    /// The command run (empty when attached with `--pid`).
    pub command: Vec<String>,
    /// The root of the traced process tree.
    pub pid: u32,
    /// How the command ended (none: it outlived the capture, `--pid` or `--duration`).
    pub exit: Option<Exit>,
    /// What each part of the capture needs of the kernel and whether it had it.
    pub parts: Vec<Part>,
    pub processes: Vec<Process>,
    pub sockets: Vec<Socket>,
    pub skbs: Vec<Skb>,
    /// The pages the program's frags sat on, numbered in order of first sighting (kernel
    /// addresses are not written: a report may be shared).
    pub pages: Vec<Page>,
    /// Pages allocated and freed in the program's own tasks, by order.
    pub page_orders: Vec<PageOrder>,
    pub lost: Lost,
    /// What happened, in time order: the program's syscalls on its sockets and each skb's
    /// facts above, as they came. The playground steps a capture by it. Empty in captures
    /// written before it was kept (they open at their end).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<Moment>,
    /// The kernel stacks the facts were seen at (bpftrace's `kstack`, symbolized: function
    /// names, the tracepoint's own function first), each once; a fact names its stack by
    /// index. A function inlined into its caller is not on a stack.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stacks: Vec<Vec<String>>,
}

/// One moment of [`Capture::timeline`]: `ns` is the time since the capture's first probe
/// line (bpftrace's `nsecs`), `socket` and `skb` index [`Capture::sockets`] and
/// [`Capture::skbs`]. The fact itself (its CPU, its function, seen or inferred) is the
/// skb's: a moment only says when.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "what", rename_all = "snake_case", deny_unknown_fields)]
pub enum Moment {
    /// A sendmsg/write returned `bytes` on `socket` (`sock:sock_send_length`).
    Write { ns: u64, socket: u32, bytes: u64 },
    /// A recvmsg/read returned `bytes` on `socket` (`sock:sock_recv_length`).
    Read { ns: u64, socket: u32, bytes: u64 },
    /// [`Skb::alloc`].
    Alloc { ns: u64, skb: u32 },
    /// [`Skb::xmit`] (its first transmission).
    Xmit { ns: u64, skb: u32 },
    /// [`Skb::rx`].
    Rx { ns: u64, skb: u32 },
    /// One copy of [`Skb::copied`]: `bytes` of it copied out to the program.
    Copy { ns: u64, skb: u32, bytes: u64 },
    /// [`Skb::free`].
    Free { ns: u64, skb: u32 },
}

impl Moment {
    pub fn ns(&self) -> u64 {
        match *self {
            Moment::Write { ns, .. }
            | Moment::Read { ns, .. }
            | Moment::Alloc { ns, .. }
            | Moment::Xmit { ns, .. }
            | Moment::Rx { ns, .. }
            | Moment::Copy { ns, .. }
            | Moment::Free { ns, .. } => ns,
        }
    }

    /// The skb it is a fact of, or the socket a syscall used.
    pub fn skb(&self) -> Option<u32> {
        match *self {
            Moment::Write { .. } | Moment::Read { .. } => None,
            Moment::Alloc { skb, .. }
            | Moment::Xmit { skb, .. }
            | Moment::Rx { skb, .. }
            | Moment::Copy { skb, .. }
            | Moment::Free { skb, .. } => Some(skb),
        }
    }

    fn socket(&self) -> Option<u32> {
        match *self {
            Moment::Write { socket, .. } | Moment::Read { socket, .. } => Some(socket),
            _ => None,
        }
    }
}

/// Where a fact comes from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Source {
    /// Seen at this tracepoint (`group:name`), possibly read through BTF there.
    Seen(String),
    /// Inferred, from what is said.
    Inferred(String),
}

impl Source {
    pub fn seen(tracepoint: &str) -> Source {
        Source::Seen(tracepoint.to_string())
    }

    /// `seen at X` or `inferred: why`.
    pub fn mark(&self) -> String {
        match self {
            Source::Seen(t) => format!("seen at {t}"),
            Source::Inferred(why) => format!("inferred: {why}"),
        }
    }
}

/// How the command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Exit {
    Code(i32),
    Signal(i32),
}

/// A part of the capture (the process tree, send, receive, frees, pages, ...): the
/// tracepoints and BTF fields it needs, and those the running kernel lacks. A part that
/// lacks any was refused: nothing of it is in the capture.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part {
    pub name: String,
    pub needs: Vec<String>,
    pub missing: Vec<String>,
}

impl Part {
    pub fn captured(&self) -> bool {
        self.missing.is_empty()
    }
}

/// A process of the traced tree (`sched:sched_process_fork/exec/exit`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Process {
    pub pid: u32,
    pub parent: Option<u32>,
    /// The files it executed, in order.
    pub exec: Vec<String>,
    pub exited: bool,
}

/// The transport of a socket (`sk->sk_protocol`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Proto {
    Tcp,
    Udp,
    Mptcp,
    Other,
}

impl Proto {
    /// From `sk->sk_protocol` (IPPROTO_TCP 6, IPPROTO_UDP 17, IPPROTO_MPTCP 262:
    /// include/uapi/linux/in.h).
    pub fn of(protocol: u32) -> Proto {
        match protocol {
            6 => Proto::Tcp,
            17 => Proto::Udp,
            262 => Proto::Mptcp,
            _ => Proto::Other,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Proto::Tcp => "tcp",
            Proto::Udp => "udp",
            Proto::Mptcp => "mptcp",
            Proto::Other => "other",
        }
    }
}

/// A socket the program created or accepted (`syscalls:sys_exit_socket`,
/// `sys_exit_accept4`: its `struct sock` read through the task's file table).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Socket {
    pub id: u32,
    pub proto: Proto,
    /// The process that opened it.
    pub pid: u32,
    /// Its local and remote ports, once an skb showed them (`sk->__sk_common`).
    pub local_port: Option<u16>,
    pub remote_port: Option<u16>,
    /// Bytes the program's sendmsg/write calls on it returned, and how many calls
    /// (`sock:sock_send_length`).
    pub written: u64,
    pub writes: u64,
    /// The same for reads (`sock:sock_recv_length`).
    pub read: u64,
    pub reads: u64,
    /// Every size goal `tcp:tcp_sendmsg_locked` gave on it, in order of first use.
    pub size_goals: Vec<u64>,
    /// MPTCP: the DSS mappings `mptcp:mptcp_sendmsg_frag` made in its sendmsg calls.
    pub mappings: Vec<u64>,
}

/// One skb of the program's, from its first sighting to its free (an address names one skb
/// until it is freed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Skb {
    pub id: u32,
    /// The socket that sent it (`skb->sk` at the device), and the one that received it
    /// (`skb->sk` when recvmsg copied it, or the destination port before demux; for a UDP
    /// datagram, the socket bound to its destination port, whose read took it).
    pub tx_socket: Option<u32>,
    pub rx_socket: Option<u32>,
    pub alloc: Option<At>,
    pub xmit: Option<Xmit>,
    /// How many more times it went to a device (a retransmission, a second hop).
    pub more_xmits: u32,
    pub rx: Option<Rx>,
    pub copied: Option<Copied>,
    pub free: Option<At>,
}

/// Where something happened to an skb: the CPU and the kernel function (the call site or
/// `location` the tracepoint gives).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct At {
    pub cpu: u32,
    pub function: String,
    pub source: Source,
    /// The kernel stack it was seen at (an index into [`Capture::stacks`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<u32>,
}

/// An skb at the device (`net:net_dev_start_xmit`, its `struct sk_buff` and
/// `skb_shared_info` read through BTF).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Xmit {
    pub cpu: u32,
    /// skb->len.
    pub len: u64,
    /// skb_headlen(skb): the linear area's bytes.
    pub linear: u64,
    /// The headers' bytes from skb->data (MAC, network, transport): the payload in the
    /// linear area is `linear - headers`.
    pub headers: u64,
    pub truesize: u64,
    pub gso_size: u64,
    pub gso_segs: u64,
    pub frags: Vec<Frag>,
    /// `nr_frags` beyond the frags read (at most 17).
    pub frags_not_read: u64,
    /// TCP: the first payload byte's sequence number (`th->seq`): a retransmission repeats
    /// one. 0 for UDP.
    pub seq: u64,
    pub source: Source,
    /// The kernel stack at the device (an index into [`Capture::stacks`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<u32>,
}

/// One frag: its page (an index into [`Capture::pages`]), offset and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Frag {
    pub page: u32,
    pub offset: u64,
    pub size: u64,
    /// The page's `_refcount` when it was read (a snapshot through BTF).
    pub count: i64,
}

/// A page frags sat on: its order (the compound head's, read through BTF).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Page {
    pub id: u32,
    pub order: u32,
}

/// An skb handed up the stack.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rx {
    pub cpu: u32,
    pub len: u64,
    /// Handed up by the loopback device (`IFF_LOOPBACK`): sent on this machine, by the
    /// program or another, never built by a driver.
    #[serde(default)]
    pub loopback: bool,
    pub source: Source,
    /// The kernel stack it was handed up at (an index into [`Capture::stacks`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<u32>,
}

/// What recvmsg copied out of an skb (`skb:skb_copy_datagram_iovec`; a linear UDP
/// datagram's copy fires none, and is inferred from its socket's read), and the CPU that
/// allocated it (`skb->alloc_cpu` through BTF).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Copied {
    pub bytes: u64,
    pub copies: u32,
    pub cpu: u32,
    pub alloc_cpu: u32,
    pub source: Source,
    /// The kernel stack of its first copy (an index into [`Capture::stacks`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack: Option<u32>,
}

/// Pages of one order allocated and freed in the program's own tasks
/// (`kmem:mm_page_alloc`, `kmem:mm_page_free`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageOrder {
    pub order: u32,
    pub allocs: u64,
    pub frees: u64,
}

/// What the capture could not keep.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lost {
    /// Events bpftrace dropped (its buffers overflowed) or the event cap refused.
    pub events: u64,
    /// skbs past the skb cap.
    pub skbs: u64,
    /// Tracepoints the kernel fired without running the capture's probe, because another BPF
    /// program was running on that CPU (`trace_call_bpf`, kernel/trace/bpf_trace.c, v6.12,
    /// counts them in the program's `recursion_misses`). They count every firing skipped,
    /// the program's or not; only those of a tracepoint with misses are listed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missed: Vec<Missed>,
}

/// One tracepoint's skipped firings (see [`Lost::missed`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Missed {
    /// `group:name`, or `unattributed` when the probes could not be told apart.
    pub tracepoint: String,
    pub events: u64,
}

impl std::fmt::Display for Missed {
    /// `group:name ×N`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ×{}", self.tracepoint, self.events)
    }
}

impl Lost {
    /// Firings of `tracepoint` the capture's probe skipped.
    pub fn missed_at(&self, tracepoint: &str) -> u64 {
        (self.missed.iter())
            .filter(|m| m.tracepoint == tracepoint || m.tracepoint == UNATTRIBUTED)
            .map(|m| m.events)
            .sum()
    }
}

/// The name [`Missed`] gives skips it cannot put on one tracepoint.
pub const UNATTRIBUTED: &str = "unattributed";

impl Skb {
    /// Each fact's stack, by the fact's name.
    fn stacks(&self) -> [(&'static str, Option<u32>); 5] {
        [
            ("alloc", self.alloc.as_ref().and_then(|a| a.stack)),
            ("xmit", self.xmit.as_ref().and_then(|x| x.stack)),
            ("rx", self.rx.as_ref().and_then(|r| r.stack)),
            ("copied", self.copied.as_ref().and_then(|c| c.stack)),
            ("free", self.free.as_ref().and_then(|f| f.stack)),
        ]
    }
}

impl Capture {
    /// Whether a packet of IP protocol `ip_proto` from port `src` to port `dst` is one of
    /// the program's sockets': a socket's local port at one end and, where the socket has
    /// one, its remote port at the other (a listener's is 0: any). MPTCP's subflows are TCP on the wire. (`--pcap`
    /// keeps these; ports are all a capture records of an address.)
    pub fn owns_packet(&self, ip_proto: u8, src: u16, dst: u16) -> bool {
        let wire = |p: Proto| match p {
            Proto::Tcp | Proto::Mptcp => 6,
            Proto::Udp => 17,
            Proto::Other => 0,
        };
        let ends = |s: &Socket, here: u16, there: u16| {
            s.local_port == Some(here) && s.remote_port.is_none_or(|r| r == 0 || r == there)
        };
        (self.sockets.iter())
            .filter(|s| wire(s.proto) == ip_proto && ip_proto != 0)
            .any(|s| ends(s, src, dst) || ends(s, dst, src))
    }

    /// The kernel stack `stack` names, as a path read from where the fact was seen up to
    /// what called it: `xmit_one ← dev_hard_start_xmit ← …`; empty when none was kept.
    pub fn path(&self, stack: Option<u32>) -> String {
        let frames = stack.and_then(|k| self.stacks.get(k as usize));
        frames.map_or(String::new(), |f| f.join(crate::call_path::FRAME_SEP))
    }

    /// Reads a capture as [`Capture`] writes it, naming the first field it refuses.
    pub fn parse(text: &str) -> Result<Capture, Error> {
        if text.len() > MAX_CAPTURE_TEXT {
            return Err(Error::Range {
                field: "capture".into(),
                value: format!("{} bytes", text.len()),
                allowed: format!("at most {MAX_CAPTURE_TEXT} bytes"),
            });
        }
        let c: Capture = field_path::from_str(text).map_err(|e| {
            if !e.error.is_data() {
                return Error::invalid(
                    "capture",
                    format!("not a skblab trace capture: {}", e.error),
                );
            }
            let path = Path(&e.path).to_string();
            let field = if path.is_empty() {
                "capture".to_string()
            } else {
                format!("capture.{path}")
            };
            Error::invalid(field, e.error.to_string())
        })?;
        c.check()?;
        Ok(c)
    }

    /// Whether JSON text is a capture rather than another skblab JSON file (a kernel report):
    /// an object with a capture's own fields, which [`Capture::parse`] then judges. It reads
    /// the top level's names only as far as it must (their values skipped, no value built),
    /// and stops once it has a capture's: a capture's own ones come before its large tables,
    /// so the megabytes after them are left to [`Capture::parse`], which says what is wrong
    /// with them.
    pub fn is_one(text: &str) -> bool {
        let told = std::cell::Cell::new(false);
        let mut de = serde_json::Deserializer::from_str(text);
        let _ = serde::Deserializer::deserialize_map(&mut de, Tell(&told));
        told.get()
    }

    /// What the types cannot say: the version, the caps, and every index in range.
    fn check(&self) -> Result<(), Error> {
        if self.format != FORMAT {
            return Err(Error::Range {
                field: "capture.format".into(),
                value: self.format.to_string(),
                allowed: FORMAT.to_string(),
            });
        }
        if self.skbs.len() > MAX_SKBS {
            return Err(Error::Range {
                field: "capture.skbs".into(),
                value: format!("{} skbs", self.skbs.len()),
                allowed: format!("at most {MAX_SKBS}"),
            });
        }
        if self.timeline.len() > MAX_MOMENTS {
            return Err(Error::Range {
                field: "capture.timeline".into(),
                value: format!("{} moments", self.timeline.len()),
                allowed: format!("at most {MAX_MOMENTS}"),
            });
        }
        let sockets = self.sockets.len() as u32;
        let pages = self.pages.len() as u32;
        let skbs = self.skbs.len() as u32;
        let stacks = self.stacks.len() as u32;
        let mut last = 0;
        for (i, m) in self.timeline.iter().enumerate() {
            if m.ns() < last {
                return Err(Error::invalid(
                    format!("capture.timeline[{i}].ns"),
                    format!("{} is before the moment ahead of it ({last})", m.ns()),
                ));
            }
            last = m.ns();
            if m.skb().is_some_and(|id| id >= skbs) {
                return Err(out_of_range(format!("capture.timeline[{i}].skb"), skbs));
            }
            if m.socket().is_some_and(|id| id >= sockets) {
                return Err(out_of_range(
                    format!("capture.timeline[{i}].socket"),
                    sockets,
                ));
            }
        }
        for (i, s) in self.skbs.iter().enumerate() {
            for (name, id) in [("tx_socket", s.tx_socket), ("rx_socket", s.rx_socket)] {
                if id.is_some_and(|id| id >= sockets) {
                    return Err(out_of_range(format!("capture.skbs[{i}].{name}"), sockets));
                }
            }
            for (name, stack) in s.stacks() {
                if stack.is_some_and(|k| k >= stacks) {
                    return Err(out_of_range(
                        format!("capture.skbs[{i}].{name}.stack"),
                        stacks,
                    ));
                }
            }
            let frags = s.xmit.iter().flat_map(|x| x.frags.iter()).enumerate();
            for (j, f) in frags {
                if f.page >= pages {
                    return Err(out_of_range(
                        format!("capture.skbs[{i}].xmit.frags[{j}].page"),
                        pages,
                    ));
                }
            }
        }
        Ok(())
    }

    /// The skbs each socket sent and received, by socket id.
    pub fn by_socket(&self) -> BTreeMap<u32, (Vec<&Skb>, Vec<&Skb>)> {
        let mut m: BTreeMap<u32, (Vec<&Skb>, Vec<&Skb>)> = self
            .sockets
            .iter()
            .map(|s| (s.id, Default::default()))
            .collect();
        for skb in &self.skbs {
            if let Some(e) = skb.tx_socket.and_then(|id| m.get_mut(&id)) {
                e.0.push(skb);
            }
            if let Some(e) = skb.rx_socket.and_then(|id| m.get_mut(&id)) {
                e.1.push(skb);
            }
        }
        m
    }
}

/// Reads an object's names until they are a capture's, then stops (an error ends the read)
/// and says so in its cell.
struct Tell<'a>(&'a std::cell::Cell<bool>);

impl<'de> serde::de::Visitor<'de> for Tell<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let [mut format, mut command, mut table] = [false; 3];
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "format" => format = true,
                "command" => command = true,
                "timeline" | "skbs" => table = true,
                _ => {}
            }
            if format && command && table {
                self.0.set(true);
                return Err(serde::de::Error::custom("a capture"));
            }
            map.next_value::<serde::de::IgnoredAny>()?;
        }
        Ok(())
    }
}

fn out_of_range(field: String, n: u32) -> Error {
    Error::Range {
        field,
        value: "an index past the table".into(),
        allowed: format!("below {n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixture's sockets: a listener on 7000 (remote 0), the writer 41378 → 7000 and the
    /// reader 7000 → 41378. Its packets either way are the program's, by TCP only; a packet
    /// from another port to 7000 is the listener's (a new connection's SYN).
    #[test]
    fn a_packet_is_the_programs_by_its_sockets_ports() {
        let c = predict::tests::fixture();
        for (proto, src, dst, owned) in [
            (6, 41378, 7000, true),
            (6, 7000, 41378, true),
            (6, 5555, 7000, true),
            (17, 41378, 7000, false),
            (6, 41378, 7001, false),
            (6, 5555, 6666, false),
            (0, 7000, 7000, false),
        ] {
            assert_eq!(c.owns_packet(proto, src, dst), owned, "{proto} {src} {dst}");
        }
    }

    fn capture() -> Capture {
        let at = |cpu| At {
            cpu,
            function: "tcp_ack".into(),
            source: Source::seen("kmem:kmem_cache_free"),
            stack: None,
        };
        Capture {
            format: FORMAT,
            kernel: "6.18".into(),
            command: vec!["peer".into()],
            pid: 7,
            exit: Some(Exit::Code(0)),
            parts: vec![],
            processes: vec![],
            sockets: vec![Socket {
                id: 0,
                proto: Proto::Tcp,
                pid: 7,
                local_port: Some(1),
                remote_port: Some(2),
                written: 1448,
                writes: 1,
                read: 1448,
                reads: 1,
                size_goals: vec![],
                mappings: vec![],
            }],
            skbs: vec![Skb {
                id: 0,
                tx_socket: Some(0),
                rx_socket: Some(0),
                alloc: Some(at(0)),
                xmit: Some(Xmit {
                    cpu: 0,
                    len: 1514,
                    linear: 66,
                    headers: 66,
                    truesize: 2304,
                    gso_size: 0,
                    gso_segs: 1,
                    frags: vec![Frag {
                        page: 0,
                        offset: 0,
                        size: 1448,
                        count: 2,
                    }],
                    frags_not_read: 0,
                    seq: 1,
                    source: Source::seen("net:net_dev_start_xmit"),
                    stack: Some(0),
                }),
                more_xmits: 0,
                rx: None,
                copied: Some(Copied {
                    bytes: 1448,
                    copies: 1,
                    cpu: 1,
                    alloc_cpu: 0,
                    source: Source::seen("skb:skb_copy_datagram_iovec"),
                    stack: None,
                }),
                free: Some(at(0)),
            }],
            pages: vec![Page { id: 0, order: 3 }],
            page_orders: vec![],
            lost: Lost::default(),
            timeline: vec![
                Moment::Alloc { ns: 0, skb: 0 },
                Moment::Xmit { ns: 10, skb: 0 },
                Moment::Write {
                    ns: 12,
                    socket: 0,
                    bytes: 1448,
                },
                Moment::Copy {
                    ns: 30,
                    skb: 0,
                    bytes: 1448,
                },
                Moment::Read {
                    ns: 31,
                    socket: 0,
                    bytes: 1448,
                },
                Moment::Free { ns: 40, skb: 0 },
            ],
            stacks: vec![vec![
                "dev_hard_start_xmit".into(),
                "__dev_queue_xmit".into(),
            ]],
        }
    }

    /// What the runner writes reads back; another version, or a frag's page past the
    /// table, is refused by name.
    #[test]
    fn a_capture_reads_back_and_bad_ones_are_refused_by_name() {
        let c = capture();
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(Capture::parse(&text), Ok(c.clone()));
        assert!(Capture::is_one(&text) && !Capture::is_one(r#"{"format": 1}"#));
        let refused = |f: fn(&mut Capture)| {
            let mut bad = c.clone();
            f(&mut bad);
            Capture::parse(&serde_json::to_string(&bad).unwrap())
                .unwrap_err()
                .to_string()
        };
        assert!(refused(|c| c.format = 2).contains("capture.format"));
        let e = refused(|c| c.skbs[0].xmit.as_mut().unwrap().frags[0].page = 1);
        assert!(e.contains("capture.skbs[0].xmit.frags[0].page"), "{e}");
        assert!(refused(|c| c.skbs[0].tx_socket = Some(3)).contains("tx_socket"));
        let e = refused(|c| c.timeline[5] = Moment::Free { ns: 40, skb: 1 });
        assert!(e.contains("capture.timeline[5].skb"), "{e}");
        let e = refused(|c| {
            c.timeline[2] = Moment::Read {
                ns: 12,
                socket: 1,
                bytes: 1,
            }
        });
        assert!(e.contains("capture.timeline[2].socket"), "{e}");
        let e = refused(|c| c.skbs[0].xmit.as_mut().unwrap().stack = Some(1));
        assert!(e.contains("capture.skbs[0].xmit.stack"), "{e}");
        assert_eq!(c.path(Some(0)), "dev_hard_start_xmit ← __dev_queue_xmit");
        let e = refused(|c| c.timeline.swap(0, 1));
        assert!(e.contains("capture.timeline[1].ns"), "{e}");
        // A capture from before the timeline reads, with none.
        let mut old = c.clone();
        old.timeline.clear();
        let text = serde_json::to_string(&old).unwrap();
        assert!(!text.contains("timeline"));
        assert_eq!(Capture::parse(&text), Ok(old));
        let e = Capture::parse(&text.replace("\"kernel\"", "\"kernel2\"")).unwrap_err();
        assert!(e.to_string().contains("kernel2"), "{e}");
    }

    /// The per-socket numbers and the patches' facts are counted off the capture.
    #[test]
    fn the_summary_counts_off_the_capture() {
        let c = capture();
        let s = &sockets(&c)[0];
        assert_eq!(
            (s.sent.skbs, s.sent.bytes, s.sent.linear_payload),
            (1, 1514, 0)
        );
        assert_eq!(s.sent.pages, BTreeMap::from([(3, 1)]));
        assert_eq!(s.received.bytes, 1448);
        let l = lessons(&c);
        assert!(l[0].fact.starts_with("1 of 1 TCP skbs"), "{}", l[0].fact);
        assert!(l[2].fact.starts_with("1 of 1 read skbs"), "{}", l[2].fact);
        assert_eq!(l[3].fact, "no MPTCP socket in this traffic");
        assert!(matches!(l[2].source, Source::Seen(_)));
        // A copy inferred (a linear UDP datagram's) makes seed 002's fact inferred.
        let mut udp = c.clone();
        udp.skbs[0].copied.as_mut().unwrap().source = Source::Inferred("its read".into());
        assert!(matches!(lessons(&udp)[2].source, Source::Inferred(_)));
    }

    /// Seed 001's fact tells an skb another program sent over loopback from one a driver
    /// built: neither was sent by the program, only the second came off a device's frag cache.
    #[test]
    fn seed_001_tells_loopback_from_a_driver() {
        let mut c = capture();
        let mut theirs = c.skbs[0].clone();
        theirs.xmit = None;
        theirs.rx = Some(Rx {
            cpu: 1,
            len: 1500,
            loopback: true,
            source: Source::seen("net:netif_receive_skb"),
            stack: None,
        });
        c.skbs.push(theirs.clone());
        let fact = |c: &Capture| lessons(c)[1].clone();
        let l = fact(&c);
        assert!(
            l.fact.contains("; 1 skbs came over loopback from a program not traced")
                && l.fact.ends_with("no skb here came from a driver, so netdev_alloc_frag's cache is not on this traffic's path"),
            "{}",
            l.fact
        );
        assert!(matches!(l.source, Source::Seen(_)));
        theirs.rx.as_mut().unwrap().loopback = false;
        c.skbs[1] = theirs;
        let l = fact(&c);
        assert!(
            !l.fact.contains("loopback") && l.fact.contains("1 skbs came from a driver"),
            "{}",
            l.fact
        );
        assert!(matches!(l.source, Source::Inferred(_)));
    }
}
