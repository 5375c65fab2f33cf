//! The probes' lines ([`super::script`]) read into the core's [`Capture`]: processes,
//! sockets, skbs from first sighting to free, pages. Lines are put in time order first
//! (bpftrace prints them per CPU).

use skblab_core::capture::{
    At, Capture, Copied, Frag, Lost, Moment, Page, PageOrder, Process, Proto, Rx, Skb, Socket,
    Source, Xmit,
};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// One line: its kind, its time, and the rest.
struct Line<'a> {
    kind: &'a str,
    ns: u64,
    rest: Vec<&'a str>,
}

fn split(l: &str) -> Option<Line<'_>> {
    let mut w = l.split(' ');
    let kind = w.next()?;
    let ns = w.next()?.parse().ok()?;
    Some(Line {
        kind,
        ns,
        rest: w.collect(),
    })
}

/// What the lines build, before it is a [`Capture`].
#[derive(Default)]
struct Builder {
    processes: Vec<Process>,
    sockets: Vec<Socket>,
    socket_of: HashMap<u64, u32>,
    skbs: Vec<Skb>,
    /// The skb each address names until it is freed.
    live: HashMap<u64, usize>,
    /// An allocation seen for an address (and when), waiting for its transmit line.
    alloc: HashMap<u64, (u64, At)>,
    pages: Vec<Page>,
    page_of: HashMap<u64, u32>,
    orders: BTreeMap<u32, PageOrder>,
    /// skbs a thread's recvmsg copied from with no `skb->sk`, until its byte count names the
    /// socket.
    copies: HashMap<u64, Vec<usize>>,
    /// Datagrams handed up to each UDP socket (by id) and not yet read, oldest first, with
    /// the CPU that allocated each.
    queued: HashMap<u32, VecDeque<(usize, u32)>>,
    /// TCP segments handed up with no receiver yet: the skb, its destination and source port.
    segments: Vec<(usize, u16, u16)>,
    /// Size goals and mappings a thread's sendmsg made, until its byte count names the socket.
    pending: HashMap<u64, (Vec<u64>, Vec<u64>)>,
    lost: Lost,
    max_skbs: usize,
    /// Each stack the probes printed, by the id they gave it.
    printed: HashMap<u64, Vec<String>>,
    /// The stacks facts name, each once, in order of first use (the capture's table).
    stacks: Vec<Vec<String>>,
    stack_index: HashMap<Vec<String>, u32>,
    /// The time of the line being read, since the first line.
    now: u64,
    timeline: Vec<Moment>,
}

/// IPPROTO_TCP and IPPROTO_UDP (include/uapi/linux/in.h).
const IPPROTO_TCP: u64 = 6;
const IPPROTO_UDP: u64 = 17;

/// The error for a line that is not what the script prints.
fn bad(l: &str) -> String {
    format!("probe line {l:?}: not what the capture's script prints")
}

/// Reads the lines (the script's `printf`s) into the capture's tables; `max_skbs` skbs at
/// most, the rest counted as lost. `capture` gives the other fields.
pub fn read(lines: &[String], max_skbs: usize, capture: Capture) -> Result<Capture, String> {
    let mut b = Builder {
        max_skbs,
        ..Builder::default()
    };
    let mut over = 0;
    let mut parsed = Vec::new();
    for l in lines {
        // `stack NS ID`, then its frames, one a line, in one printf.
        if let Some(rest) = l.strip_prefix("stack ") {
            let mut lines = rest.split('\n');
            let id = (lines.next().and_then(|h| h.split(' ').nth(1)))
                .and_then(num)
                .ok_or_else(|| bad(l))?;
            b.printed.insert(id, lines.filter_map(frame).collect());
            continue;
        }
        if l.starts_with("mark ") {
            continue;
        }
        if let Some(n) = l.strip_prefix("over ") {
            over += n.trim().parse::<u64>().map_err(|_| bad(l))?;
            continue;
        }
        parsed.push((split(l).ok_or_else(|| bad(l))?, l));
    }
    parsed.sort_by_key(|(p, _)| p.ns);
    let start = parsed.first().map_or(0, |(p, _)| p.ns);
    for (p, l) in &parsed {
        b.now = p.ns - start;
        b.line(p).ok_or_else(|| bad(l))?;
    }
    b.tcp_receivers();
    // An allocation is written when its skb is first seen, after it.
    b.timeline.sort_by_key(Moment::ns);
    b.lost.events += over;
    // Threads fork too: a process is one that executed a file or whose last thread exited.
    b.processes.retain(|p| !p.exec.is_empty() || p.exited);
    Ok(Capture {
        processes: b.processes,
        sockets: b.sockets,
        skbs: b.skbs,
        pages: b.pages,
        page_orders: b.orders.into_values().collect(),
        timeline: b.timeline,
        stacks: b.stacks,
        lost: Lost {
            events: b.lost.events + capture.lost.events,
            skbs: b.lost.skbs,
            missed: capture.lost.missed,
        },
        ..capture
    })
}

fn num(s: &str) -> Option<u64> {
    s.parse().ok()
}

/// A stack frame's function: `tcp_sendmsg_locked+1234` read as `tcp_sendmsg_locked`.
fn frame(l: &str) -> Option<String> {
    let f = l.trim();
    let name = f.split('+').next()?.trim();
    (!name.is_empty()).then(|| name.to_string())
}

impl Builder {
    /// Applies one line; `None` if it is malformed.
    fn line(&mut self, l: &Line) -> Option<()> {
        let n = |i: usize| l.rest.get(i).copied().and_then(num);
        let text = |i: usize| l.rest.get(i..).map(|w| w.join(" "));
        match l.kind {
            "fork" => self.fork(n(0)? as u32, n(1)? as u32),
            "exec" => self.process(n(0)? as u32).exec.push(text(1)?),
            "exit" => self.process(n(0)? as u32).exited = true,
            "sock" => self.socket(n(0)? as u32, n(1)?, n(2)? as u32),
            "dev" => {
                let r: Vec<u64> = (0..14).map(n).collect::<Option<_>>()?;
                self.xmit(&r);
            }
            "alloc" => {
                let at = At {
                    cpu: n(1)? as u32,
                    function: text(2)?,
                    source: Source::seen("kmem:kmem_cache_alloc"),
                    stack: None,
                };
                self.alloc.insert(n(0)?, (self.now, at));
            }
            "frag" => {
                let r: Vec<u64> = (0..5).map(n).collect::<Option<_>>()?;
                let count = l.rest.get(5)?.parse().ok()?;
                self.frag(&r, count);
            }
            "goal" | "map" => {
                let e = self.pending.entry(n(0)?).or_default();
                if l.kind == "goal" { &mut e.0 } else { &mut e.1 }.push(n(1)?);
            }
            "sent" | "read" => {
                let r: Vec<u64> = (0..4).map(n).collect::<Option<_>>()?;
                self.bytes(l.kind == "sent", &r);
            }
            "bind" => self.bind(n(0)?, n(1)? as u16, n(2)? as u16),
            "up" => self.rx(&(0..9).map(n).collect::<Option<Vec<_>>>()?, text(9)?),
            "copy" => self.copy(&(0..7).map(n).collect::<Option<Vec<_>>>()?),
            "free" | "pairfree" => {
                let stack = self.stack(n(2)?);
                self.free(l, n(0)? as u32, n(1)?, stack)?
            }
            // A packet's bytes, for `--pcap` (super::pcap): not the capture's.
            "pkt" => {}
            "stale" => {
                self.live.remove(&n(0)?);
            }
            "palloc" | "pfree" => {
                let order = n(1)? as u32;
                let o = (self.orders.entry(order)).or_insert(PageOrder {
                    order,
                    allocs: 0,
                    frees: 0,
                });
                *if l.kind == "palloc" {
                    &mut o.allocs
                } else {
                    &mut o.frees
                } += 1;
            }
            _ => return None,
        }
        Some(())
    }

    fn process(&mut self, pid: u32) -> &mut Process {
        let i = match self.processes.iter().position(|p| p.pid == pid) {
            Some(i) => i,
            None => {
                self.processes.push(Process {
                    pid,
                    parent: None,
                    exec: Vec::new(),
                    exited: false,
                });
                self.processes.len() - 1
            }
        };
        &mut self.processes[i]
    }

    fn fork(&mut self, parent: u32, child: u32) {
        self.process(child).parent = Some(parent);
    }

    fn socket(&mut self, pid: u32, sk: u64, protocol: u32) {
        let id = self.sockets.len() as u32;
        self.socket_of.insert(sk, id);
        self.sockets.push(Socket {
            id,
            proto: Proto::of(protocol),
            pid,
            local_port: None,
            remote_port: None,
            written: 0,
            writes: 0,
            read: 0,
            reads: 0,
            size_goals: Vec::new(),
            mappings: Vec::new(),
        });
    }

    /// The stack the probes printed as `id`, as an index into the capture's table (each
    /// stack there once); none for 0 or an id never printed.
    fn stack(&mut self, id: u64) -> Option<u32> {
        let frames = self.printed.get(&id)?;
        let next = self.stacks.len() as u32;
        let i = *self.stack_index.entry(frames.clone()).or_insert(next);
        if i == next {
            self.stacks.push(frames.clone());
        }
        Some(i)
    }

    /// The skb `addr` names now: the live one, or a new one (within the cap).
    fn skb(&mut self, addr: u64) -> Option<&mut Skb> {
        if let Some(&i) = self.live.get(&addr) {
            return Some(&mut self.skbs[i]);
        }
        if self.skbs.len() >= self.max_skbs {
            self.lost.skbs += 1;
            return None;
        }
        let id = self.skbs.len() as u32;
        let alloc = self.alloc.remove(&addr).map(|(ns, at)| {
            self.timeline.push(Moment::Alloc { ns, skb: id });
            at
        });
        self.skbs.push(Skb {
            id,
            tx_socket: None,
            rx_socket: None,
            alloc,
            xmit: None,
            more_xmits: 0,
            rx: None,
            copied: None,
            free: None,
        });
        self.live.insert(addr, id as usize);
        self.skbs.last_mut()
    }

    /// `dev cpu skb own len data_len hdrs truesize gso_size gso_segs nr_frags lport dport
    /// seq`.
    fn xmit(&mut self, r: &[u64]) {
        let (addr, own) = (r[1], r[2]);
        // An skb seen on its way up since it was sent is not sent again: its address names a
        // new skb (the old one's free was not seen).
        if let Some(&i) = self.live.get(&addr) {
            let s = &self.skbs[i];
            if s.rx.is_some() || s.copied.is_some() || s.xmit.is_none() {
                self.live.remove(&addr);
            }
        }
        let socket = self.socket_of.get(&own).copied();
        let stack = self.stack(r[13]);
        if let Some(s) = socket.map(|id| &mut self.sockets[id as usize]) {
            s.local_port = Some(r[10] as u16);
            s.remote_port = Some(r[11] as u16);
        }
        let Some(skb) = self.skb(addr) else { return };
        if skb.xmit.is_some() {
            skb.more_xmits += 1;
            return;
        }
        skb.tx_socket = socket;
        let id = skb.id;
        skb.xmit = Some(Xmit {
            cpu: r[0] as u32,
            len: r[3],
            linear: r[3] - r[4],
            headers: r[5],
            truesize: r[6],
            gso_size: r[7],
            gso_segs: r[8],
            frags: Vec::new(),
            frags_not_read: r[9],
            seq: r[12],
            source: Source::seen("net:net_dev_start_xmit"),
            stack,
        });
        self.timeline.push(Moment::Xmit {
            ns: self.now,
            skb: id,
        });
    }

    /// `frag skb page offset size order count`: one more frag of the skb just sent.
    fn frag(&mut self, r: &[u64], count: i64) {
        let next = self.pages.len() as u32;
        let page = *self.page_of.entry(r[1]).or_insert(next);
        if page == next {
            self.pages.push(Page {
                id: page,
                order: r[4] as u32,
            });
        }
        let Some(&i) = self.live.get(&r[0]) else {
            return;
        };
        let skb = &mut self.skbs[i];
        let Some(x) = skb.xmit.as_mut().filter(|_| skb.more_xmits == 0) else {
            return;
        };
        if x.frags_not_read > 0 {
            x.frags_not_read -= 1;
            x.frags.push(Frag {
                page,
                offset: r[2],
                size: r[3],
                count,
            });
        }
    }

    /// `sent|read tid sk bytes cpu`: one syscall's bytes on a socket; a send's pending size
    /// goals and mappings are its, a UDP read's datagram is the oldest queued on its socket.
    fn bytes(&mut self, sent: bool, r: &[u64]) {
        let (tid, sk, n) = (r[0], r[1], r[2]);
        let (goals, maps) = self.pending.remove(&tid).unwrap_or_default();
        let copies = self.copies.remove(&tid).unwrap_or_default();
        let Some(&id) = self.socket_of.get(&sk) else {
            return;
        };
        for i in copies {
            self.skbs[i].rx_socket = self.skbs[i].rx_socket.or(Some(id));
        }
        if !sent && self.sockets[id as usize].proto == Proto::Udp {
            self.datagram_read(id, n, r[3] as u32);
        }
        let ns = self.now;
        self.timeline.push(if sent {
            Moment::Write {
                ns,
                socket: id,
                bytes: n,
            }
        } else {
            Moment::Read {
                ns,
                socket: id,
                bytes: n,
            }
        });
        let s = &mut self.sockets[id as usize];
        if sent {
            s.written += n;
            s.writes += 1;
            for g in goals {
                if !s.size_goals.contains(&g) {
                    s.size_goals.push(g);
                }
            }
            s.mappings.extend(maps);
        } else {
            s.read += n;
            s.reads += 1;
        }
    }

    /// A UDP recvmsg on socket `id` returned `n` bytes on `cpu`: it took the oldest datagram
    /// on the socket's queue (`__skb_recv_udp`, which dequeues in arrival order; one datagram
    /// a call) and copied them out of it. A datagram freed as dropped (`kfree_skb`) before
    /// was never read. Seen when the copy fired `skb_copy_datagram_iovec`; a linear one's
    /// (`copy_linear_skb`, include/net/udp.h, v4.16 and v6.12) fires nothing, and is inferred.
    fn datagram_read(&mut self, id: u32, n: u64, cpu: u32) {
        let queue = self.queued.entry(id).or_default();
        let dropped = |s: &Skb| {
            s.free
                .as_ref()
                .is_some_and(|f| f.source == Source::seen("skb:kfree_skb"))
        };
        while let Some((i, alloc_cpu)) = queue.pop_front() {
            let skb = &mut self.skbs[i];
            if dropped(skb) {
                continue;
            }
            skb.rx_socket = Some(id);
            if skb.copied.is_none() {
                self.copy_before_free(i as u32, n);
            }
            let skb = &mut self.skbs[i];
            skb.copied.get_or_insert(Copied {
                bytes: n,
                copies: 1,
                cpu,
                alloc_cpu,
                source: Source::Inferred(
                    "a UDP read takes the oldest datagram queued on its socket; a linear \
                     one's copy (copy_linear_skb) fires no tracepoint"
                        .into(),
                ),
                stack: None,
            });
            return;
        }
    }

    /// An inferred copy of `bytes` out of skb `skb`, at the read that returned them or, when
    /// the datagram's free came first (its head is freed inside the read, before the read
    /// returns), just before that free.
    fn copy_before_free(&mut self, skb: u32, bytes: u64) {
        let free = (self.timeline.iter()).rposition(|m| *m == Moment::Free { ns: m.ns(), skb });
        let (at, ns) = free.map_or((self.timeline.len(), self.now), |i| {
            (i, self.timeline[i].ns())
        });
        self.timeline.insert(at, Moment::Copy { ns, skb, bytes });
    }

    /// `bind sk port dport`: a UDP socket of the program's bound to `port` (by bind(2), or
    /// by connect(2), which binds an unbound socket to a port of the kernel's choosing and
    /// connects it to `dport`; 0: not connected).
    fn bind(&mut self, sk: u64, port: u16, dport: u16) {
        if let Some(&id) = self.socket_of.get(&sk) {
            let s = &mut self.sockets[id as usize];
            s.local_port = Some(port);
            s.remote_port = (dport != 0).then_some(dport).or(s.remote_port);
        }
    }

    /// `up cpu skb len alloc_cpu proto dport sport lo stack probe`: handed up (`lo`: by the
    /// loopback device); the first sighting counts. A UDP datagram's socket is the one bound to `dport`, which reads it; a TCP
    /// segment's, the connection's whose ports are `dport` and `sport`, known once it has
    /// sent ([`Builder::tcp_receivers`]), until recvmsg says otherwise.
    fn rx(&mut self, r: &[u64], probe: String) {
        let (cpu, addr, len, alloc_cpu) = (r[0] as u32, r[1], r[2], r[3] as u32);
        let (udp, dport, sport) = (r[4] == IPPROTO_UDP, r[5] as u16, r[6] as u16);
        let by_port = (self.sockets.iter().rev())
            .find(|s| udp && dport != 0 && s.proto == Proto::Udp && s.local_port == Some(dport))
            .map(|s| s.id);
        let stack = self.stack(r[8]);
        let Some(skb) = self.skb(addr) else { return };
        skb.rx_socket = skb.rx_socket.or(by_port);
        if skb.rx.is_some() {
            return;
        }
        let tracepoint = probe.strip_prefix("tracepoint:").unwrap_or(&probe);
        skb.rx = Some(Rx {
            cpu,
            len,
            loopback: r[7] != 0,
            source: Source::seen(tracepoint),
            stack,
        });
        let i = skb.id as usize;
        self.timeline.push(Moment::Rx {
            ns: self.now,
            skb: i as u32,
        });
        if let Some(id) = by_port {
            self.queued.entry(id).or_default().push_back((i, alloc_cpu));
        }
        if r[4] == IPPROTO_TCP && dport != 0 {
            self.segments.push((i, dport, sport));
        }
    }

    /// Each TCP segment handed up with no receiver yet is its connection's: the socket whose
    /// local and remote ports are its destination and source (a socket's ports are known
    /// from what it sent, so this waits for the end). A segment coalesced into another skb
    /// (`tcp_try_coalesce`) is never copied, and counts as merged on its receiver.
    fn tcp_receivers(&mut self) {
        for &(i, dport, sport) in &self.segments {
            let ours = |s: &&Socket| {
                s.proto != Proto::Udp && s.local_port == Some(dport) && s.remote_port == Some(sport)
            };
            if self.skbs[i].rx_socket.is_none() {
                self.skbs[i].rx_socket = self.sockets.iter().find(ours).map(|s| s.id);
            }
        }
    }

    /// `copy cpu skb own len alloc_cpu tid stack`: recvmsg copied from it (`own` 0: its socket
    /// is the one thread `tid` reads next).
    fn copy(&mut self, r: &[u64]) {
        let socket = self.socket_of.get(&r[2]).copied();
        if socket.is_none() {
            if let Some(&i) = self.live.get(&r[1]) {
                self.copies.entry(r[5]).or_default().push(i);
            }
        }
        let stack = self.stack(r[6]);
        let Some(skb) = self.skb(r[1]) else { return };
        skb.rx_socket = socket.or(skb.rx_socket);
        let c = skb.copied.get_or_insert(Copied {
            bytes: 0,
            copies: 0,
            cpu: r[0] as u32,
            alloc_cpu: r[4] as u32,
            source: Source::seen("skb:skb_copy_datagram_iovec"),
            stack,
        });
        c.bytes += r[3];
        c.copies += 1;
        let skb = skb.id;
        self.timeline.push(Moment::Copy {
            ns: self.now,
            skb,
            bytes: r[3],
        });
    }

    /// `free cpu skb stack how site` or `pairfree cpu skb stack site`, `stack` read.
    fn free(&mut self, l: &Line, cpu: u32, addr: u64, stack: Option<u32>) -> Option<()> {
        let (source, site) = match l.kind {
            "free" => {
                let how = l.rest.get(3)?;
                let group = if how.starts_with("kmem") || *how == "kfree" {
                    "kmem"
                } else {
                    "skb"
                };
                (Source::Seen(format!("{group}:{how}")), l.rest.get(4..)?)
            }
            _ => (
                Source::Inferred(
                    "kmem:kmem_cache_free of its fclone pair: a clone's own free fires \
                     no tracepoint, it is gone by then"
                        .into(),
                ),
                l.rest.get(3..)?,
            ),
        };
        if let Some(i) = self.live.remove(&addr) {
            self.skbs[i].free = Some(At {
                cpu,
                function: site.join(" "),
                source,
                stack,
            });
            self.timeline.push(Moment::Free {
                ns: self.now,
                skb: i as u32,
            });
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty() -> Capture {
        Capture {
            format: skblab_core::capture::FORMAT,
            kernel: "6.18".into(),
            command: vec!["x".into()],
            pid: 10,
            exit: None,
            parts: vec![],
            processes: vec![],
            sockets: vec![],
            skbs: vec![],
            pages: vec![],
            page_orders: vec![],
            lost: Lost::default(),
            timeline: vec![],
            stacks: vec![],
        }
    }

    fn read_lines(lines: &[&str], max: usize) -> Capture {
        let lines: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
        read(&lines, max, empty()).unwrap()
    }

    /// A TCP write on loopback: sent from socket 0 with one frag, handed up, copied by
    /// socket 1, freed through its fclone pair; lines out of time order. Each fact names the
    /// stack it was seen at: a stack printed twice (two CPUs saw it first at once) is one.
    #[test]
    fn an_skb_is_followed_from_alloc_to_free_by_address() {
        let c = read_lines(
            &[
                "sock 1 10 100 6",
                "sock 2 10 200 6",
                "copy 9 1 5000 200 1448 0 11 2",
                "stack 9 2\n        skb_copy_datagram_iter+95\n        tcp_recvmsg_locked+1234\n",
                "alloc 5 5000 0 __alloc_skb",
                "stack 6 4294967297\n        dev_hard_start_xmit+282\n        __dev_queue_xmit+2614",
                "dev 6 0 5000 100 1514 1448 66 2304 0 1 1 40000 7000 1 4294967297",
                "frag 7 5000 777 0 1448 3 2",
                "up 8 0 5000 1514 0 6 7000 40000 1 0 tracepoint:net:netif_receive_skb",
                "sent 7 10 100 1448 0",
                "read 10 11 200 1448 1",
                "stack 11 3\n        dev_hard_start_xmit+282\n        __dev_queue_xmit+2614",
                "pairfree 11 1 5000 3 tcp_clean_rtx_queue",
                "over 3",
            ],
            10,
        );
        assert_eq!(c.skbs.len(), 1);
        let s = &c.skbs[0];
        assert_eq!((s.tx_socket, s.rx_socket), (Some(0), Some(1)));
        let x = s.xmit.as_ref().unwrap();
        assert_eq!(
            (x.len, x.linear, x.headers, x.frags.len()),
            (1514, 66, 66, 1)
        );
        assert_eq!(c.pages, [Page { id: 0, order: 3 }]);
        assert_eq!(s.copied.as_ref().unwrap().bytes, 1448);
        assert_eq!(s.alloc.as_ref().unwrap().function, "__alloc_skb");
        assert!(matches!(
            s.free.as_ref().unwrap().source,
            Source::Inferred(_)
        ));
        assert_eq!((c.sockets[0].written, c.sockets[1].read), (1448, 1448));
        assert_eq!(c.sockets[0].local_port, Some(40000));
        assert_eq!(c.lost.events, 3);
        let stacks = [
            &s.alloc.as_ref().unwrap().stack,
            &x.stack,
            &s.copied.as_ref().unwrap().stack,
        ];
        assert_eq!(stacks, [&None, &Some(0), &Some(1)]);
        assert_eq!(s.free.as_ref().unwrap().stack, Some(0));
        assert_eq!(
            c.path(Some(1)),
            "skb_copy_datagram_iter ← tcp_recvmsg_locked"
        );
        assert_eq!(c.stacks.len(), 2);
        // The timeline puts each fact at its line's time, from the first line's.
        assert_eq!(
            c.timeline,
            [
                Moment::Alloc { ns: 4, skb: 0 },
                Moment::Xmit { ns: 5, skb: 0 },
                Moment::Write {
                    ns: 6,
                    socket: 0,
                    bytes: 1448
                },
                Moment::Rx { ns: 7, skb: 0 },
                Moment::Copy {
                    ns: 8,
                    skb: 0,
                    bytes: 1448
                },
                Moment::Read {
                    ns: 9,
                    socket: 1,
                    bytes: 1448
                },
                Moment::Free { ns: 10, skb: 0 },
            ]
        );
        assert_eq!(Capture::parse(&serde_json::to_string(&c).unwrap()), Ok(c));
    }

    /// Two segments over loopback, the second coalesced into the first on the receive queue
    /// (`tcp_try_coalesce`: never copied, its head freed by `kfree_skb_partial`): both are
    /// the connection's by their ports, which the receiver's own ACK makes known, and the
    /// second counts as merged.
    #[test]
    fn a_coalesced_segment_is_its_connections_and_merged() {
        let c = read_lines(
            &[
                "sock 1 10 100 6",
                "sock 2 10 200 6",
                "dev 3 0 5000 100 1514 1448 66 2304 0 1 1 40000 7000 1 0",
                "dev 4 0 6000 100 1514 1448 66 2304 0 1 1 40000 7000 1449 0",
                "up 5 0 5000 1514 0 6 7000 40000 1 0 tracepoint:net:netif_receive_skb",
                "up 6 0 6000 1514 0 6 7000 40000 1 0 tracepoint:net:netif_receive_skb",
                "free 7 0 6000 0 kmem_cache_free kfree_skb_partial",
                "dev 8 0 7000 200 66 0 66 768 0 1 0 7000 40000 1 0",
                "copy 9 1 5000 200 2896 0 11 0",
                "read 10 11 200 2896 1",
            ],
            10,
        );
        let rx: Vec<Option<u32>> = c.skbs.iter().map(|s| s.rx_socket).collect();
        assert_eq!(rx, [Some(1), Some(1), None]);
        let reader = &skblab_core::capture::sockets(&c)[1];
        assert_eq!((reader.received.skbs, reader.received.merged), (2, 1));
        assert_eq!(reader.received.bytes, 2896);
    }

    /// An address freed names a new skb; past the cap, skbs are counted as lost.
    #[test]
    fn a_freed_address_is_a_new_skb_and_the_cap_counts_the_rest() {
        let lines = [
            "sock 1 10 100 17",
            "dev 2 0 5000 100 100 0 42 800 0 1 0 1 2 0 0",
            "free 3 0 5000 0 consume_skb skb_consume_udp",
            "dev 4 0 5000 100 100 0 42 800 0 1 0 1 2 0 0",
            "dev 5 0 6000 100 100 0 42 800 0 1 0 1 2 0 0",
        ];
        let c = read_lines(&lines, 2);
        assert_eq!(c.skbs.len(), 2);
        assert_eq!(c.skbs[0].free.as_ref().unwrap().cpu, 0);
        assert_eq!(
            c.skbs[0].free.as_ref().unwrap().source,
            Source::seen("skb:consume_skb")
        );
        assert_eq!(c.lost.skbs, 1);
        assert!(read(&["nonsense".to_string()], 1, empty()).is_err());
    }

    /// Three datagrams from socket 0 to socket 1 (bound to 7000), the second dropped: each
    /// read takes the oldest still queued (freed in the read or not), its bytes inferred as
    /// copied from it.
    #[test]
    fn each_udp_read_takes_the_oldest_datagram_queued_on_its_socket() {
        let mut lines = vec![
            "sock 1 10 100 17".to_string(),
            "sock 2 10 200 17".to_string(),
            "bind 3 200 7000 0".to_string(),
        ];
        for (t, skb) in [(10, 5000), (20, 6000), (30, 7000)] {
            lines.push(format!(
                "dev {t} 0 {skb} 100 29 0 28 800 0 1 0 40000 7000 0 0"
            ));
            lines.push(format!(
                "up {} 0 {skb} 29 0 17 7000 40000 1 0 tracepoint:net:netif_receive_skb",
                t + 1
            ));
        }
        lines.push("free 22 0 6000 0 kfree_skb __udp_enqueue_schedule_skb".into());
        // The first read's datagram ends as its head is freed in the read.
        lines.push("free 39 1 5000 0 kfree skb_release_data".into());
        lines.push("read 40 12 200 1 1".into());
        lines.push("read 41 12 200 1 1".into());
        let c = read(&lines, 10, empty()).unwrap();
        let read_by = |i: usize| (c.skbs[i].rx_socket, c.skbs[i].copied.as_ref());
        let (socket, copied) = read_by(0);
        let copied = copied.unwrap();
        assert_eq!((socket, copied.bytes, copied.cpu), (Some(1), 1, 1));
        assert!(matches!(copied.source, Source::Inferred(_)));
        assert!(read_by(1).1.is_none(), "a dropped datagram was read");
        assert_eq!(read_by(2).0, Some(1));
        assert_eq!(read_by(2).1.map(|c| c.bytes), Some(1));
        assert_eq!(c.sockets[1].local_port, Some(7000));
        let free = c.skbs[0].free.as_ref().unwrap();
        assert_eq!((free.cpu, &free.source), (1, &Source::seen("kmem:kfree")));
        // An inferred copy is just before its datagram's free, if that came first, else
        // at the read.
        let late: Vec<_> = c.timeline.iter().filter(|m| m.ns() >= 38).collect();
        assert_eq!(
            late,
            [
                &Moment::Copy {
                    ns: 38,
                    skb: 0,
                    bytes: 1
                },
                &Moment::Free { ns: 38, skb: 0 },
                &Moment::Read {
                    ns: 39,
                    socket: 1,
                    bytes: 1
                },
                &Moment::Copy {
                    ns: 40,
                    skb: 2,
                    bytes: 1
                },
                &Moment::Read {
                    ns: 40,
                    socket: 1,
                    bytes: 1
                },
            ]
        );
    }
}
