//! A capture as a [`Trace`]: the playground steps it and draws it as it draws the model's.
//! One step per read or write the program made on a traced socket, each holding the skb
//! facts that came before it ([`Capture::timeline`]); its events are the capture's own
//! kinds (`seen_skb`, `seen_xmit`, `seen_frag`, `seen_rx`, `seen_copy`, `seen_free`), each
//! saying where its fact was seen or what it was inferred from, and `State::apply` replays
//! them as it replays the model's.

use super::{At, Capture, Moment, Skb, Socket, Source};
use crate::consts::Era;
use crate::events::{Cpu, Event};
use crate::limits::MAX_TRACE_OBJECTS;
use crate::trace::{Counters, Queue, State, Step, Trace};
use crate::Error;

/// A capture's trace's `mechanism`: no model mechanism, the running kernel's own skbs.
pub const MECHANISM: &str = "capture";
/// Its `variant`.
pub const VARIANT: &str = "captured";
/// The queue of an skb tied to no socket of the program's.
const NO_SOCKET: &str = "no socket known";

impl Capture {
    /// The capture as a trace (its size capped as a model run's is), or the first event
    /// that does not fit the skbs before it, named.
    pub fn trace(&self) -> Result<Trace, Error> {
        let era = Era::V6_12;
        let mut b = Build {
            c: self,
            page_size: era.consts().page_size,
            state: State {
                queues: self.queues(),
                ..State::default()
            },
            seen: vec![false; self.skbs.len()],
            events: Vec::new(),
            steps: Vec::new(),
            size: 0,
        };
        if self.timeline.is_empty() {
            for s in &self.skbs {
                b.skb_facts(s)?;
            }
            b.step("the capture (written without a timeline: every skb, in the order first seen)")?;
        }
        for m in &self.timeline {
            match *m {
                Moment::Write { socket, bytes, .. } => {
                    b.step(&self.call("write", socket, bytes))?
                }
                Moment::Read { socket, bytes, .. } => b.step(&self.call("read", socket, bytes))?,
                _ => b.moment(m)?,
            }
        }
        if !b.events.is_empty() {
            b.step("after the program's last read or write")?;
        }
        Ok(Trace {
            mechanism: MECHANISM.into(),
            variant: VARIANT.into(),
            era,
            udp: false,
            napi_frags: false,
            consts: era.consts(),
            steps: b.steps,
            counters: Counters::default(),
        })
    }

    /// What the capture is, in a line: the command, the kernel, and how its facts are marked.
    pub fn caption(&self) -> String {
        let what = match self.command.as_slice() {
            [] => format!("process {}", self.pid),
            words => format!("`{}`", words.join(" ")),
        };
        format!(
            "{what} on Linux {}: its own skbs, read at the kernel's tracepoints by skblab \
             trace; each event says the tracepoint its fact was seen at, or what it was \
             inferred from",
            self.kernel
        )
    }

    /// Two queues a socket: what it sent, what it received.
    fn queues(&self) -> Vec<Queue> {
        let names = self.sockets.iter().flat_map(|s| [sent(s), received(s)]);
        let needs_none = (self.skbs.iter()).any(|s| s.tx_socket.is_none() && s.rx_socket.is_none());
        (names.chain(needs_none.then(|| NO_SOCKET.to_string())))
            .map(|name| Queue {
                name,
                skbs: Default::default(),
            })
            .collect()
    }

    /// `write 14480 B on tcp socket 1 (pid 7)`.
    fn call(&self, what: &str, socket: u32, bytes: u64) -> String {
        let s = &self.sockets[socket as usize];
        format!("{what} {bytes} B on {} (pid {})", name(s), s.pid)
    }

    /// The queue skb `s` is drawn on until it is handed up.
    fn home(&self, s: &Skb) -> String {
        match (s.tx_socket, s.rx_socket) {
            (Some(id), _) => sent(&self.sockets[id as usize]),
            (None, Some(id)) => received(&self.sockets[id as usize]),
            (None, None) => NO_SOCKET.into(),
        }
    }
}

fn name(s: &Socket) -> String {
    format!("{} socket {}", s.proto.name(), s.id)
}

fn sent(s: &Socket) -> String {
    format!("{} · sent", name(s))
}

fn received(s: &Socket) -> String {
    format!("{} · received", name(s))
}

/// `function · seen at group:name`.
fn site(at: &At) -> String {
    format!("{} · {}", at.function, at.source.mark())
}

fn cpu(n: u32) -> Cpu {
    Cpu::try_from(n).unwrap_or(Cpu::MAX)
}

fn n32(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The trace as it is built: the state the events so far made, the step being filled.
struct Build<'c> {
    c: &'c Capture,
    page_size: u32,
    state: State,
    /// Whether each skb is drawn yet (its `seen_skb` given).
    seen: Vec<bool>,
    events: Vec<Event>,
    steps: Vec<Step>,
    /// Objects in the steps so far (what [`MAX_TRACE_OBJECTS`] counts).
    size: usize,
}

impl Build<'_> {
    /// Ends a step: `op` and the events since the last.
    fn step(&mut self, op: &str) -> Result<(), Error> {
        let step = Step {
            op: op.into(),
            events: std::mem::take(&mut self.events),
            state: self.state.clone(),
            counters: Counters::default(),
        };
        self.size += step.size();
        if self.size > MAX_TRACE_OBJECTS {
            return Err(Error::Range {
                field: "capture".into(),
                value: format!(
                    "over {MAX_TRACE_OBJECTS} events, skbs, frags and pages by its step {}",
                    self.steps.len() + 1
                ),
                allowed: format!(
                    "at most {MAX_TRACE_OBJECTS} drawn: trace a shorter run (--duration, \
                     --max-skbs)"
                ),
            });
        }
        self.steps.push(step);
        Ok(())
    }

    fn emit(&mut self, e: Event) -> Result<(), Error> {
        self.state.apply(&e)?;
        self.events.push(e);
        Ok(())
    }

    /// Every fact of skb `s`, in the order they happen to an skb (a capture without a
    /// timeline).
    fn skb_facts(&mut self, s: &Skb) -> Result<(), Error> {
        let skb = s.id;
        let copied = s.copied.as_ref().map_or(0, |c| c.bytes);
        let facts = [
            s.alloc.is_some().then_some(Moment::Alloc { ns: 0, skb }),
            s.xmit.is_some().then_some(Moment::Xmit { ns: 0, skb }),
            s.rx.is_some().then_some(Moment::Rx { ns: 0, skb }),
            (copied > 0).then_some(Moment::Copy {
                ns: 0,
                skb,
                bytes: copied,
            }),
            s.free.is_some().then_some(Moment::Free { ns: 0, skb }),
        ];
        for m in facts.iter().flatten() {
            self.moment(m)?;
        }
        Ok(())
    }

    /// The events of one skb fact of the timeline.
    fn moment(&mut self, m: &Moment) -> Result<(), Error> {
        let Some(id) = m.skb() else { return Ok(()) };
        let s = &self.c.skbs[id as usize];
        match *m {
            Moment::Alloc { .. } => {
                if let Some(at) = &s.alloc {
                    let at_text = self.stacked(site(at), at.stack);
                    self.first_seen(s, at.cpu, at_text)?;
                }
            }
            Moment::Xmit { .. } => {
                if let Some(x) = &s.xmit {
                    self.first_seen(s, x.cpu, format!("first seen at the device, its allocation not seen (made in softirq, or before the capture) · {}", x.source.mark()))?;
                    self.emit(Event::SeenXmit {
                        skb: id,
                        cpu: cpu(x.cpu),
                        len: n32(x.len),
                        linear: n32(x.linear),
                        truesize: n32(x.truesize),
                        gso_segs: n32(x.gso_segs),
                        seq: x.seq as u32,
                        at: self.stacked(format!("xmit_one · {}", x.source.mark()), x.stack),
                    })?;
                    for (idx, f) in x.frags.iter().enumerate() {
                        let order = self.c.pages.get(f.page as usize).map_or(0, |p| p.order);
                        self.emit(Event::SeenFrag {
                            skb: id,
                            idx: idx as u32,
                            page: f.page,
                            order,
                            page_size: self.page_size << order,
                            offset: n32(f.offset),
                            size: n32(f.size),
                            count: n32(f.count.max(0) as u64),
                            at: format!("{} (the page's count read through BTF)", x.source.mark()),
                        })?;
                    }
                }
            }
            Moment::Rx { .. } => {
                if let Some(r) = &s.rx {
                    let by = if r.loopback {
                        "the loopback device"
                    } else {
                        "a driver"
                    };
                    let queue = match s.rx_socket {
                        Some(id) => received(&self.c.sockets[id as usize]),
                        None => self.c.home(s),
                    };
                    let first = format!(
                        "first seen handed up by {by}, sent by no socket traced · {}",
                        r.source.mark()
                    );
                    self.first_seen(s, r.cpu, first)?;
                    self.emit(Event::SeenRx {
                        skb: id,
                        cpu: cpu(r.cpu),
                        len: n32(r.len),
                        queue,
                        at: self
                            .stacked(format!("handed up by {by} · {}", r.source.mark()), r.stack),
                    })?;
                }
            }
            Moment::Copy { bytes, .. } => {
                if let Some(c) = &s.copied {
                    self.first_seen(
                        s,
                        c.cpu,
                        format!("first seen as the program read it · {}", c.source.mark()),
                    )?;
                    self.emit(Event::SeenCopy {
                        skb: id,
                        cpu: cpu(c.cpu),
                        bytes: n32(bytes),
                        at: match &c.source {
                            Source::Seen(_) => self.stacked(
                                format!("skb_copy_datagram_iter · {}", c.source.mark()),
                                c.stack,
                            ),
                            Source::Inferred(_) => c.source.mark(),
                        },
                    })?;
                }
            }
            Moment::Free { .. } => {
                if let Some(at) = s.free.as_ref().filter(|_| self.seen[id as usize]) {
                    let at_text = self.stacked(site(at), at.stack);
                    self.emit(Event::SeenFree {
                        skb: id,
                        cpu: cpu(at.cpu),
                        at: at_text,
                    })?;
                }
            }
            Moment::Write { .. } | Moment::Read { .. } => {}
        }
        Ok(())
    }

    /// `text`, and the kernel stack the fact was seen at, where one was kept.
    fn stacked(&self, text: String, stack: Option<u32>) -> String {
        match self.c.path(stack) {
            path if path.is_empty() => text,
            path => format!("{text} · stack {path}"),
        }
    }

    /// Draws skb `s` the first time a fact shows it, saying how it was first seen: on the CPU
    /// that allocated it where the capture read that (its allocation seen, or `skb->alloc_cpu`
    /// read when handed up), else on `on`, where it was seen.
    fn first_seen(&mut self, s: &Skb, on: u32, at: String) -> Result<(), Error> {
        if std::mem::replace(&mut self.seen[s.id as usize], true) {
            return Ok(());
        }
        let alloc_cpu =
            (s.alloc.as_ref().map(|a| a.cpu)).or(s.copied.as_ref().map(|c| c.alloc_cpu));
        self.emit(Event::SeenSkb {
            skb: s.id,
            cpu: cpu(alloc_cpu.unwrap_or(on)),
            allocated: alloc_cpu.is_some(),
            queue: self.c.home(s),
            at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `skblab trace -- skbpeer tcp 7000 14480 3` on Linux 6.18 (tests/fixtures).
    fn fixture() -> Capture {
        Capture::parse(include_str!("../../../tests/fixtures/capture-tcp.json")).unwrap()
    }

    /// Each step's state is what its events make of the state before it.
    fn replays(t: &Trace) {
        let mut state = State {
            queues: t.steps[0]
                .state
                .queues
                .iter()
                .map(|q| Queue {
                    name: q.name.clone(),
                    skbs: Default::default(),
                })
                .collect(),
            ..State::default()
        };
        for (i, step) in t.steps.iter().enumerate() {
            for e in &step.events {
                state.apply(e).unwrap();
            }
            assert_eq!(state, step.state, "step {}", i + 1);
            assert_eq!(t.state_at(i, step.events.len()).as_ref(), Ok(&step.state));
        }
    }

    fn skbs_on<'s>(s: &'s State, queue: &str) -> Vec<&'s crate::skb::Skb> {
        s.skbs_on(queue).iter().collect()
    }

    /// The fixture steps by the program's three writes and two reads, and draws the skbs
    /// and pages as the kernel held them: the first write's skb handed up to the reader with
    /// its 14480 bytes in one frag on an order-3 page the sender's page frag owns too; the
    /// second write's bytes coalesced into it (one read copies 28960 B out of skb 3).
    #[test]
    fn a_capture_steps_by_the_programs_reads_and_writes() {
        let c = fixture();
        let t = c.trace().unwrap();
        assert_eq!(
            (t.mechanism.as_str(), t.variant.as_str()),
            (MECHANISM, VARIANT)
        );
        let ops: Vec<&str> = t.steps.iter().map(|s| s.op.as_str()).collect();
        let write = "write 14480 B on tcp socket 1 (pid 21210)";
        assert_eq!(
            ops,
            [
                write,
                write,
                "read 28960 B on tcp socket 2 (pid 21210)",
                write,
                "read 14480 B on tcp socket 2 (pid 21210)",
                "after the program's last read or write",
            ]
        );
        replays(&t);
        let after = |step: usize| &t.steps[step - 1].state;
        let held = skbs_on(after(1), "tcp socket 2 · received");
        let [skb] = held[..] else { panic!("{held:?}") };
        assert_eq!(
            (skb.id, skb.len, skb.linear_len, skb.data_len, skb.sent),
            (3, 14532, 52, 14480, true)
        );
        assert_eq!(
            skb.frags,
            [crate::skb::Frag {
                page: 0,
                offset: 0,
                size: 14480
            }]
        );
        let page = &after(1).pages[0];
        assert_eq!(
            (page.order, page.size, page.count, page.used),
            (3, 32768, 2, 14480)
        );
        // The third write's skb fills page 0 and starts page 1.
        let pages: Vec<_> = after(4)
            .pages
            .iter()
            .map(|p| (p.id, p.count, p.used))
            .collect();
        assert_eq!(pages, [(0, 3, 32768), (1, 2, 10672)]);
        // Every byte the reader read was copied out of a drawn skb, and at the end every
        // skb and page drawn is gone.
        let copied: u32 = (t.steps.iter().flat_map(|s| &s.events))
            .map(|e| match e {
                Event::SeenCopy { bytes, .. } => *bytes,
                _ => 0,
            })
            .sum();
        assert_eq!(u64::from(copied), c.sockets[2].read);
        let end = after(6);
        assert!(end.queues.iter().all(|q| q.skbs.is_empty()) && end.pages.is_empty());
        // Each event says where its fact came from.
        for e in t.steps.iter().flat_map(|s| &s.events) {
            let text = e.to_string();
            assert!(
                text.contains("seen at") || text.contains("inferred"),
                "{text}"
            );
        }
    }

    /// An skb's CPU is the one that allocated it where the capture read that (its allocation
    /// seen, or `skb->alloc_cpu` when handed up), else the one it was first seen on, and says
    /// which; a page's allocating CPU is never read, and none is shown.
    #[test]
    fn a_captured_cpu_says_what_was_read() {
        let mut c = fixture();
        // Skb 0 without its allocation is first seen at the device; skb 3 without its own
        // still has the allocating CPU read when it was handed up.
        (c.skbs[0].alloc, c.skbs[3].alloc) = (None, None);
        (
            c.skbs[0].xmit.as_mut().unwrap().cpu,
            c.skbs[3].copied.as_mut().unwrap().alloc_cpu,
        ) = (0, 0);
        let t = c.trace().unwrap();
        // Every state an event leaves, so that an skb freed within a step is seen too.
        let states: Vec<State> = (t.steps.iter().enumerate())
            .flat_map(|(i, s)| (1..=s.events.len()).map(move |k| (i, k)))
            .map(|(i, k)| t.state_at(i, k).unwrap())
            .collect();
        let all = |id| {
            let skbs = states
                .iter()
                .flat_map(|s| s.queues.iter().flat_map(|q| &q.skbs));
            skbs.filter(|s| s.id == id).map(|s| s.cpu_fact()).next()
        };
        assert_eq!(all(0).as_deref(), Some("first seen on cpu 0"));
        assert_eq!(all(3).as_deref(), Some("alloc cpu 0"));
        assert_eq!(all(1).as_deref(), Some("alloc cpu 1"));
        let pages = states.iter().flat_map(|s| &s.pages);
        assert!(pages.clone().count() > 0 && pages.into_iter().all(|p| p.cpu_fact().is_none()));
    }

    /// A capture written before the timeline opens as one step with every skb's facts.
    #[test]
    fn a_capture_without_a_timeline_opens_at_its_end() {
        let mut c = fixture();
        c.timeline.clear();
        let t = c.trace().unwrap();
        assert_eq!(t.steps.len(), 1);
        replays(&t);
        let frees = t.steps[0]
            .events
            .iter()
            .filter(|e| matches!(e, Event::SeenFree { .. }))
            .count();
        assert_eq!(frees, c.skbs.iter().filter(|s| s.free.is_some()).count());
    }

    /// A capture too large to draw is refused by name, as a model run over the cap is.
    #[test]
    fn a_capture_past_the_trace_cap_is_refused_by_name() {
        let mut c = fixture();
        // Skb 3 (17 frags now) never freed, and a write after it many times over.
        let x = c.skbs[3].xmit.as_mut().unwrap();
        x.frags = vec![x.frags[0]; 17];
        c.skbs[3].free = None;
        let ns = c.timeline.last().unwrap().ns();
        let write = Moment::Write {
            ns,
            socket: 1,
            bytes: 1,
        };
        c.timeline
            .extend(std::iter::repeat_n(write, MAX_TRACE_OBJECTS / 18 + 1));
        let e = c.trace().unwrap_err().to_string();
        assert!(e.contains("capture") && e.contains("--duration"), "{e}");
    }
}
