//! [`RxMachine`]: one NIC, one flow, one socket, two CPUs, and running an rx scenario on it.
//!
//! The machine owns every stage and lends each only what it touches: a frame goes
//! [`driver`](super::driver) (with the BH CPU's [`FragCache`] and [`Mem`]) ->
//! [`gro`](super::gro) -> [`socket`](super::socket) (with [`Mem`] and the
//! [`DeferLists`]); nothing calls back up.

use super::counters::RxCounters;
use super::defer::DeferLists;
use super::driver;
use super::frag_cache::{FragCache, FragCache1k, RefillKnobs};
use super::gro::Gro;
use super::kernel::{skbs_in, Mem};
use super::scenario::{DriverStyle, Proto, RxOp, RxParams, RxScenario, BH_CPU, MAX_FRAMES};
use super::socket::{ReadLimit, Socket};
use crate::events::{Cpu, Event, Events};
use crate::limits::{check_range, MAX_OP_BYTES};
use crate::mechanism::{variant_and_ops, Mechanism, RunOptions};
use crate::replay::{Live, Log};
use crate::trace::{self, queue, Counters, Machine, State, Trace};
use crate::{Error, NR_CPUS};

/// The receive path's state machine.
#[derive(Clone, Debug)]
pub struct RxMachine {
    /// Every queue, page and cursor: the stages read it and change it only by events.
    live: Live,
    stages: Stages,
}

/// What the stages keep beyond the state.
#[derive(Clone, Debug)]
struct Stages {
    p: RxParams,
    mem: Mem,
    /// Each CPU's receive frag cache.
    caches: [FragCache; NR_CPUS],
    /// Each CPU's 1 KiB small-head cache (v6.12; used when the heads are that small).
    small: [FragCache1k; NR_CPUS],
    /// Each CPU's GRO.
    gro: [Gro; NR_CPUS],
    sock: Socket,
    defer: DeferLists,
    /// The next frame's first payload byte.
    next_seq: u32,
    napi: NapiTally,
}

/// What NAPI saw.
#[derive(Clone, Copy, Debug, Default)]
struct NapiTally {
    polls: u64,
    frames: u64,
    bytes: u64,
}

impl RxMachine {
    pub fn new(p: RxParams) -> RxMachine {
        let knobs = RefillKnobs {
            high_order_fails: p.nic.high_order_fails,
            pfmemalloc: p.nic.pfmemalloc,
        };
        let s = Stages {
            p,
            mem: Mem::default(),
            caches: std::array::from_fn(|c| {
                FragCache::new(c as Cpu, p.variant.alloc, knobs, &p.consts)
            }),
            small: std::array::from_fn(|c| FragCache1k::new(c as Cpu, p.consts.page_size)),
            gro: std::array::from_fn(|c| Gro::new(c as Cpu)),
            sock: Socket::default(),
            defer: DeferLists::default(),
            next_seq: 0,
            napi: NapiTally::default(),
        };
        let mut queues: Vec<String> = (0..NR_CPUS)
            .map(|c| queue::gro(c as Cpu).into_owned())
            .collect();
        queues.extend(
            [
                queue::SK_RECEIVE_QUEUE,
                queue::SK_BACKLOG,
                queue::SK_RX_SKB_CACHE,
            ]
            .map(String::from),
        );
        queues.extend(s.defer.names().iter().map(|n| n.to_string()));
        let mut cursors: Vec<String> = s.caches.iter().map(FragCache::cursor_name).collect();
        // The small-head caches after them, when this scenario's heads come from there.
        if driver::scenario_head_source(&p) == driver::HeadSource::Frag1k {
            cursors.extend(s.small.iter().map(FragCache1k::cursor_name));
        }
        RxMachine {
            live: Live::new(queues, cursors),
            stages: s,
        }
    }

    pub fn params(&self) -> &RxParams {
        &self.stages.p
    }

    /// The frames one interrupt brought (their lengths on the wire; the TAP runner's entry
    /// point, one call per batch the TAP delivered at once): NAPI polls them
    /// `budget` at a time on the BH CPU. GRO keeps its packet across a poll that used its
    /// whole budget (the NAPI is polled again) and flushes when a poll finishes under budget
    /// (napi_complete_done), so the frames always end with such a poll. tun's napi-frags
    /// path has no poll: each frame's `writev` ends in `napi_complete`, so GRO never holds a
    /// packet past its frame.
    pub fn arrive(&mut self, lens: &[u32], ev: &mut Events) -> Result<(), Error> {
        self.stages.p.check_lens("frames", lens)?;
        let budget = self.stages.p.nic.budget as usize;
        let mut chunks = lens.chunks(budget);
        let log = &mut self.live.log(ev);
        loop {
            let chunk = chunks.next().unwrap_or(&[]);
            self.stages.poll(chunk, log);
            if chunk.len() < budget {
                return Ok(());
            }
        }
    }

    /// Bytes of the receive queue's first skb that recvmsg has already copied.
    pub fn copied_bytes(&self) -> u64 {
        self.stages.sock.copied().into()
    }

    /// Skbs alive anywhere (GRO lists, socket, defer lists).
    pub fn skbs_live(&self) -> usize {
        let queues = self.live.state().queues.iter();
        queues.flat_map(|q| &q.skbs).map(skbs_in).sum()
    }

    /// The recvmsg op's limit, checked and named after `ops[at]`.
    fn read_limit(bytes: Option<u64>, skbs: Option<u64>, at: usize) -> Result<ReadLimit, Error> {
        Ok(match (bytes, skbs) {
            (Some(b), None) => ReadLimit::Bytes(check_range(
                &format!("ops[{at}].bytes"),
                b,
                1,
                MAX_OP_BYTES,
            )?),
            (None, Some(n)) => {
                ReadLimit::Skbs(check_range(|| format!("ops[{at}].skbs"), n, 1, MAX_FRAMES)?)
            }
            (None, None) => ReadLimit::All,
            (Some(_), Some(_)) => {
                return Err(Error::invalid(
                    format!("ops[{at}]"),
                    "recvmsg takes `bytes` or `skbs`, not both",
                ))
            }
        })
    }
}

impl Stages {
    /// One NAPI poll of at most `nic.budget` checked frames.
    fn poll(&mut self, lens: &[u32], log: &mut Log) {
        let (p, mem) = (&self.p, &mut self.mem);
        // net_rx_action frees the CPU's defer list before it polls; tun's napi-frags path
        // runs napi_gro_frags from the writer's syscall, with no net_rx_action.
        if p.nic.driver != DriverStyle::NapiFrags {
            self.defer.flush(BH_CPU, mem, log);
        }
        let budget = p.nic.budget;
        log.note(|| Event::NapiPoll {
            cpu: BH_CPU,
            frames: lens.len() as u32,
            budget,
        });
        self.napi.polls += 1;
        let merge = p.gro_merges();
        let bh = BH_CPU as usize;
        for &len in lens {
            let (cache, small) = (&mut self.caches[bh], &mut self.small[bh]);
            let gro = merge.then(|| self.gro[bh].list());
            let skb = driver::rx_frame(p, cache, small, mem, gro, len, self.next_seq, log);
            let skb_len = super::kernel::skb(log.state(), skb).len;
            self.next_seq = self.next_seq.wrapping_add(skb_len);
            self.napi.frames += 1;
            self.napi.bytes += u64::from(skb_len);
            let mut up = if merge {
                self.gro[bh].receive(skb, p, mem, log)
            } else {
                vec![skb]
            };
            if p.nic.driver == DriverStyle::NapiFrags {
                // tun_get_user calls napi_complete after each napi_gro_frags (drivers/net/tun.c,
                // v6.12): napi_complete_done with work_done 0 flushes every held packet.
                up.extend(self.gro[bh].flush(log));
            }
            for skb in up {
                self.sock.rcv(skb, p.rcv_cpu(), p, mem, log);
            }
        }
        if lens.len() < budget as usize {
            for skb in self.gro[bh].flush(log) {
                self.sock.rcv(skb, p.rcv_cpu(), p, mem, log);
            }
        }
        if p.app.prompt && !self.sock.owned && !self.sock.closed {
            self.recvmsg(ReadLimit::All, log)
                .expect("model bug: a prompt read on an open, unowned socket failed");
        }
    }

    /// One recvmsg call on the application's CPU.
    fn recvmsg(&mut self, limit: ReadLimit, log: &mut Log) -> Result<(), String> {
        self.sock
            .recvmsg(limit, &self.p, &mut self.mem, &mut self.defer, log)
    }

    /// Applies `op`, the scenario's `ops[at]`.
    fn apply(&mut self, op: &RxOp, at: usize, log: &mut Log) -> Result<(), Error> {
        let app = self.p.app.cpu;
        let fail = |m: String| Error::invalid(format!("ops[{at}]"), m);
        match op {
            RxOp::Arrive { .. } => unreachable!("arrive is the machine's"),
            RxOp::Recvmsg { bytes, skbs } => {
                let limit = RxMachine::read_limit(*bytes, *skbs, at)?;
                self.recvmsg(limit, log).map_err(fail)?;
            }
            RxOp::Lock => {
                if self.sock.owned || self.sock.closed {
                    return Err(fail(
                        "lock needs an open socket the user does not own yet".into(),
                    ));
                }
                self.sock.owned = true;
            }
            RxOp::Release => {
                if !self.sock.owned {
                    return Err(fail(
                        "release needs a socket the user owns (`lock` first)".into(),
                    ));
                }
                self.sock.release(app, Some((&self.p, &mut self.mem)), log);
            }
            RxOp::Softirq { cpu } => {
                check_range(
                    &format!("ops[{at}].cpu"),
                    (*cpu).into(),
                    0,
                    NR_CPUS as u64 - 1,
                )?;
                self.defer.flush(*cpu, &mut self.mem, log);
            }
            RxOp::Disconnect => {
                if self.sock.closed || self.sock.owned {
                    return Err(fail(
                        "disconnect needs an open socket the user does not own".into(),
                    ));
                }
                self.sock.disconnect(app, &mut self.mem, log);
            }
            RxOp::Close => {
                if self.sock.closed {
                    return Err(fail("the socket is already closed".into()));
                }
                self.sock.close(app, &mut self.mem, log);
            }
        }
        Ok(())
    }
}

impl Machine for RxMachine {
    type Op = RxOp;

    fn apply(&mut self, op: &RxOp, at: usize, ev: &mut Events) -> Result<(), Error> {
        if let RxOp::Arrive { .. } = op {
            let lens = self.stages.p.frame_lens(op, at)?;
            return self.arrive(&lens, ev);
        }
        self.stages.apply(op, at, &mut self.live.log(ev))
    }

    fn name(op: &RxOp) -> &'static str {
        op.name()
    }

    fn describe(&self, op: &RxOp) -> String {
        match op {
            RxOp::Arrive { frames, len, lens } => match (frames, lens) {
                (Some(n), _) => {
                    let len = len.unwrap_or(self.stages.p.frame_len().into());
                    arrive(*n, &format!(" of {len} bytes"))
                }
                (_, Some(l)) => arrive(l.len() as u64, ""),
                _ => "frames arrive".into(),
            },
            RxOp::Recvmsg { bytes: Some(b), .. } => format!("recvmsg {b} bytes"),
            RxOp::Recvmsg { skbs: Some(1), .. } => "recvmsg 1 skb".into(),
            RxOp::Recvmsg { skbs: Some(n), .. } => format!("recvmsg {n} skbs"),
            RxOp::Recvmsg { .. } => "recvmsg".into(),
            RxOp::Lock => "lock_sock (the user owns the socket)".into(),
            RxOp::Release => "release_sock".into(),
            RxOp::Softirq { cpu } => format!("softirq on cpu{cpu}"),
            RxOp::Disconnect => "disconnect".into(),
            RxOp::Close => "close".into(),
        }
    }

    fn state(&self) -> State {
        self.live.state().clone()
    }

    fn counters(&self) -> Counters {
        let s = &self.stages;
        let (m, ps, sk) = (&s.mem.tally, &s.mem.pages.stats, &s.sock.tally);
        let frags: u64 = s.caches.iter().map(|c| c.frags).sum::<u64>()
            + s.small.iter().map(|c| c.frags).sum::<u64>();
        let pages: u64 = s.caches.iter().map(|c| c.pages).sum::<u64>()
            + s.small.iter().map(|c| c.pages).sum::<u64>();
        RxCounters {
            frames_arrived: s.napi.frames,
            bytes_arrived: s.napi.bytes,
            napi_polls: s.napi.polls,
            skbs_allocated: m.skbs_allocated,
            gro_merged: s.gro.iter().map(|g| g.merged).sum(),
            skbs_delivered: sk.delivered,
            backlog_deliveries: sk.backlog_deliveries,
            rcv_coalesced: sk.coalesced,
            frags_allocated: frags,
            frag_cache_pages: pages,
            frags_per_page: (frags + pages / 2).checked_div(pages).unwrap_or(0),
            page_allocs: ps.allocated,
            page_reuses: ps.reused,
            page_frees: ps.freed,
            page_frees_cpu0: ps.freed_on[0],
            page_frees_cpu1: ps.freed_on[1],
            put_page_cpu0: ps.put_page[0],
            put_page_cpu1: ps.put_page[1],
            remote_put_page: m.remote_put_page,
            skb_frees_cpu0: m.skb_frees[0],
            skb_frees_cpu1: m.skb_frees[1],
            remote_skb_frees: m.remote_skb_frees,
            rx_cache_parked: sk.rx_cache_parked,
            rx_cache_freed: sk.rx_cache_freed,
            skbs_deferred: s.defer.deferred,
            recvmsg_calls: sk.recvmsg_calls,
            recvmsg_skbs_freed: sk.recvmsg_skbs_freed,
            recvmsg_put_page: sk.recvmsg_put_page,
            recvmsg_page_frees: sk.recvmsg_page_frees,
            bytes_read: sk.bytes_read,
            bytes_purged: sk.bytes_purged,
            skbs_live: self.skbs_live() as u64,
            pages_live: self.live.state().pages.len() as u64,
        }
        .to_counters()
    }
}

impl Mechanism for RxScenario {
    const NAME: &'static str = "rx";
    const VARIANTS: &'static [&'static str] = super::variant::VARIANTS;
    /// v6.12's page_frag_cache and skb_attempt_defer_free.
    const TODAY: &'static str = "modern+defer-free";

    variant_and_ops!();

    fn run(&self, opts: &RunOptions) -> Result<Trace, Error> {
        let p = self.params(opts.variant.as_deref())?;
        self.check_caps(&p)?;
        let mut m = RxMachine::new(p);
        let (steps, counters) = trace::drive(&mut m, &self.ops, !opts.counters_only)?;
        Ok(Trace {
            mechanism: Self::NAME.into(),
            variant: p.variant.name(),
            era: p.variant.era(),
            udp: p.socket.proto == Proto::Udp,
            napi_frags: p.nic.driver == DriverStyle::NapiFrags,
            consts: p.consts,
            steps,
            counters,
        })
    }

    fn about_variant(variant: &str) -> Option<String> {
        variant
            .parse::<super::variant::Variant>()
            .ok()
            .map(|v| v.about())
    }
}

/// `n frames{of} arrive`, or `1 frame{of} arrives`: a step's title.
fn arrive(n: u64, of: &str) -> String {
    match n {
        1 => format!("1 frame{of} arrives"),
        n => format!("{n} frames{of} arrive"),
    }
}

#[cfg(test)]
mod tests {
    use crate::Scenario;

    /// tun's napi-frags path flushes GRO after every frame (napi_complete in tun_get_user):
    /// ten segments in one arrive reach the socket as ten skbs, GRO on, where a NIC
    /// driver's poll merges them into one. Nor does that path run net_rx_action: CPU 0's
    /// defer list waits for a softirq.
    #[test]
    fn tun_flushes_gro_after_every_frame_and_runs_no_net_rx_action() {
        let run = |driver: &str| {
            let text = format!(
                "mechanism = \"rx\"\nvariant = \"modern+defer-free\"\n[nic]\ndriver = \"{driver}\"\n\
                 gro = true\n[[ops]]\nop = \"arrive\"\nframes = 10\n[[ops]]\nop = \"recvmsg\"\n\
                 [[ops]]\nop = \"arrive\"\nframes = 1\n"
            );
            let t = Scenario::parse(&text)
                .unwrap()
                .run(&Default::default())
                .unwrap();
            let c = |n: &str| t.counters.get(n).unwrap();
            (c("gro_merged"), c("skbs_delivered"), c("skbs_live"))
        };
        // The read skb still waits on CPU 0's defer list beside the new one.
        assert_eq!(run("napi-frags"), (0, 11, 2));
        // The second poll's net_rx_action freed it.
        assert_eq!(run("full-frame"), (9, 2, 1));
    }

    /// A step's title counts in the singular for one: "1 frame arrives", not "1 frames".
    #[test]
    fn one_frame_or_skb_is_said_in_the_singular() {
        let text = "mechanism = \"rx\"\nops = [\
            { op = \"arrive\", frames = 1 }, { op = \"arrive\", lens = [1000] }, \
            { op = \"recvmsg\", skbs = 1 }, { op = \"arrive\", frames = 2 }, \
            { op = \"recvmsg\", skbs = 2 }]\n";
        let t = crate::Scenario::parse(text)
            .unwrap()
            .run(&Default::default())
            .unwrap();
        let ops: Vec<&str> = t.steps.iter().map(|s| s.op.as_str()).collect();
        assert_eq!(
            ops,
            [
                "1 frame of 1514 bytes arrives",
                "1 frame arrives",
                "recvmsg 1 skb",
                "2 frames of 1514 bytes arrive",
                "recvmsg 2 skbs"
            ]
        );
    }
}
