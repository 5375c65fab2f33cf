//! One transfer across the TAP: the runner's endpoint, the kernel's socket, the wire with its
//! faults, the capture and the progress bar, driven until both FINs are acknowledged.

use super::socket::{self, SlowReader};
use crate::net::faults::{Rates, Tally, Wire};
use crate::net::link::{self, Link};
use crate::net::netns::{self, Tap};
use crate::net::pcap::Pcap;
use crate::net::tcp::{self, Chunk, Config, Endpoint, Event, Out, Stats};
use crate::net::wire;
use crate::output::Output;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{BufWriter, IsTerminal};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Which way the payload flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dir {
    /// Runner (the model's skbs) -> kernel socket.
    Send,
    /// Kernel socket -> runner (the model's receive path).
    Recv,
}

pub struct Transfer {
    pub dir: Dir,
    /// Offloads on: the TAP carries GSO super-packets both ways.
    pub gso: bool,
    pub payload: Arc<Vec<u8>>,
    /// Where the runner's skbs end (send); ignored on receive.
    pub chunks: Vec<Chunk>,
    pub rates: Rates,
    pub seed: u64,
    pub slow_reader: Option<SlowReader>,
    pub port: u16,
    pub timeout: Duration,
    pub progress: bool,
    /// The model's MSS: no segment is cut larger, whatever the connection allows.
    pub seg_cap: u64,
    /// The TAP's MTU (the scenario's device); the runner offers the MSS it gives
    /// (`ipv4_default_advmss`: MTU - 40).
    pub mtu: u32,
    /// Send data frames with `NEEDS_CSUM` (see [`Config::csum_offload`]).
    pub csum_offload: bool,
}

/// What happened.
#[derive(Debug, serde::Serialize)]
pub struct Outcome {
    pub dir: Dir,
    pub gso: bool,
    pub bytes: u64,
    /// Payload bytes per wire segment, as negotiated.
    pub mss: u64,
    pub seconds: f64,
    pub gbit_per_s: f64,
    pub sha256_sent: String,
    pub sha256_received: String,
    pub intact: bool,
    pub runner: Stats,
    pub faults_to_kernel: Tally,
    pub faults_to_runner: Tally,
    /// Growth of the namespace's TCP counters during the transfer.
    pub kernel_counters: BTreeMap<String, u64>,
    /// Payload bytes of each GSO super-packet the kernel handed the TAP -> how many.
    pub kernel_super_packets: BTreeMap<u32, u64>,
    /// The data frames that reached the runner, one batch per read of the TAP (an
    /// "interrupt"), for the receive model.
    #[serde(skip)]
    pub arrivals: Vec<Vec<tcp::Arrival>>,
}

fn hex(h: &[u8]) -> String {
    h.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads everything waiting on the TAP.
fn read_all(tap: &Tap, link: &mut Link) -> Result<Vec<Out>, String> {
    let mut got = Vec::new();
    while let Some(o) = link.read(tap)? {
        got.push(o);
    }
    Ok(got)
}

/// What the endpoint handed out: the stream's hash and length, and each data frame.
#[derive(Default)]
struct Received {
    hash: Sha256,
    len: u64,
    arrivals: Vec<tcp::Arrival>,
}

impl Received {
    fn take(&mut self, ep: &mut Endpoint) {
        while let Some(e) = ep.poll_event() {
            match e {
                Event::Arrival(a) => self.arrivals.push(a),
                Event::Data(d) => {
                    self.len += d.len() as u64;
                    self.hash.update(&d);
                }
            }
        }
    }
}

struct Progress {
    on: bool,
    start: Instant,
    last: Instant,
    total: u64,
}

impl Progress {
    fn show(&mut self, done: u64) {
        if !self.on || self.start.elapsed() < Duration::from_secs(1) {
            return;
        }
        if self.last.elapsed() < Duration::from_millis(100) {
            return;
        }
        self.last = Instant::now();
        let frac = done as f64 / self.total.max(1) as f64;
        let w = 30;
        let filled = (frac * w as f64) as usize;
        let rate = done as f64 * 8.0 / self.start.elapsed().as_secs_f64() / 1e9;
        crate::output::stderr(&format!(
            "\r[{}{}] {:5.1}% {:.2} Gbit/s ",
            "#".repeat(filled),
            " ".repeat(w - filled.min(w)),
            frac * 100.0,
            rate
        ));
    }

    fn end(&self) {
        if self.on && self.start.elapsed() >= Duration::from_secs(1) {
            crate::output::stderr("\n");
        }
    }
}

/// The TAP's writing side and the capture: every frame on the wire is recorded as it arrives.
struct Capture<'a> {
    tap: &'a Tap,
    link: Link,
    pcap: Option<&'a mut Pcap<BufWriter<Output>>>,
}

impl Capture<'_> {
    fn record(&mut self, f: &[u8]) -> Result<(), String> {
        match self.pcap.as_deref_mut() {
            Some(p) => p.frame(f).map_err(|e| format!("writing the pcap: {e}")),
            None => Ok(()),
        }
    }

    fn send(&mut self, o: &Out) -> Result<(), String> {
        if o.vnet.needs_csum() && self.pcap.is_some() {
            let mut full = o.frame.clone();
            wire::complete_tcp_checksum(&mut full);
            self.record(&full)?;
        } else {
            self.record(&o.frame)?;
        }
        self.link.write(self.tap, o)
    }
}

/// Runs one transfer on `tap`, capturing to `pcap` if given.
pub fn run(
    tap: &Tap,
    t: Transfer,
    pcap: Option<&mut Pcap<BufWriter<Output>>>,
) -> Result<Outcome, String> {
    tap.set_offload(t.gso)?;
    netns::set_mtu(netns::TAP_NAME, t.mtu)?;
    let listener = socket::listen(t.port, t.slow_reader)?;
    let before = socket::counters();
    let handle = match t.dir {
        Dir::Send => socket::spawn_reader(listener, t.slow_reader),
        Dir::Recv => socket::spawn_writer(listener, t.payload.clone()),
    };
    let cfg = Config {
        ends: netns::runner_ends(40_000 + t.port % 20_000, t.port),
        mss: skblab_core::consts::wire::advmss(t.mtu) as u16,
        wscale: link::WSCALE,
        rcv_wnd: link::RCV_WND,
        gso: t.gso,
        close_first: t.dir == Dir::Send,
        csum_offload: t.csum_offload && t.rates.corrupt == 0.0,
        seg_cap: t.seg_cap,
        timestamps: true,
        sack: true,
    };
    // Complete the kernel's partial checksums only when someone looks at them: the capture,
    // or corruption that the runner must catch. Otherwise trust offload, as virtio-net does.
    let finish_csum = pcap.is_some() || t.rates.corrupt > 0.0;
    let tx = match t.dir {
        Dir::Send => t.payload.to_vec(),
        Dir::Recv => Vec::new(),
    };
    let iss = (t.seed as u32).wrapping_mul(2_654_435_761);
    let mut ep = Endpoint::new(cfg, tx, t.chunks, iss);
    let mut to_kernel = Wire::to_kernel(t.rates, t.seed);
    let mut to_runner = Wire::to_runner(t.rates, t.seed);
    let start = Instant::now();
    let mut progress = Progress {
        on: t.progress && std::io::stderr().is_terminal(),
        start,
        last: start,
        total: t.payload.len() as u64,
    };
    let mut cap = Capture {
        tap,
        link: Link::default(),
        pcap,
    };
    let mut batches = Vec::new();
    let mut rx = Received::default();
    ep.start(Duration::ZERO);
    loop {
        let now = start.elapsed();
        if now > t.timeout {
            progress.end();
            let (done, what) = match t.dir {
                Dir::Send => (ep.acked(), "acknowledged by the kernel"),
                Dir::Recv => (rx.len, "received from the kernel"),
            };
            return Err(format!(
                "transfer did not finish in {:?}: {done} of {} bytes {what}",
                t.timeout,
                t.payload.len(),
            ));
        }
        for out in ep.take_out() {
            for o in to_kernel.pass(out) {
                cap.send(&o)?;
            }
        }
        if ep.done() && handle.is_finished() {
            break;
        }
        let got = read_all(tap, &mut cap.link)?;
        if got.is_empty() {
            // The wire is quiet: frames held back for reordering arrive now.
            let (k, r) = (to_kernel.flush(), to_runner.flush());
            if let Some(o) = &k {
                cap.send(o)?;
            }
            if let Some(o) = &r {
                cap.record(&o.frame)?;
                ep.on_frame(o.vnet, &o.frame, start.elapsed())?;
                ep.flush_ack();
                rx.take(&mut ep);
            }
            if k.is_none() && r.is_none() {
                let wait = ep
                    .deadline()
                    .map_or(Duration::from_millis(20), |d| d.saturating_sub(now))
                    .min(Duration::from_millis(20));
                tap.wait(wait.as_millis().max(1) as i32)?;
            }
        }
        let before = rx.arrivals.len();
        for mut o in got {
            if o.vnet.needs_csum() && finish_csum {
                // The "device" finishes the checksum before the wire, as a NIC would.
                wire::complete_tcp_checksum(&mut o.frame);
                o.vnet.flags = 0;
            } else if !o.vnet.needs_csum() {
                wire::canonical_zero_checksum(&mut o.frame);
            }
            for a in to_runner.pass(o) {
                cap.record(&a.frame)?;
                ep.on_frame(a.vnet, &a.frame, start.elapsed())?;
            }
        }
        rx.take(&mut ep);
        if rx.arrivals.len() > before {
            batches.push(rx.arrivals.len());
        }
        ep.flush_ack();
        ep.poll(start.elapsed());
        progress.show(match t.dir {
            Dir::Send => ep.acked(),
            Dir::Recv => rx.len,
        });
    }
    progress.end();
    let seconds = start.elapsed().as_secs_f64();
    let read_by_kernel = handle
        .join()
        .map_err(|_| "the kernel socket's thread panicked".to_string())??;
    let after = socket::counters();
    let sent: [u8; 32] = Sha256::digest(&*t.payload).into();
    rx.take(&mut ep);
    let received = read_by_kernel.unwrap_or_else(|| rx.hash.finalize().into());
    let mut supers = BTreeMap::new();
    for a in rx.arrivals.iter().filter(|a| a.gso_size > 0) {
        *supers.entry(a.len).or_insert(0) += 1;
    }
    let bytes = t.payload.len() as u64;
    if batches.last() != Some(&rx.arrivals.len()) {
        batches.push(rx.arrivals.len());
    }
    let mut arrivals = Vec::with_capacity(batches.len());
    let mut from = 0;
    for to in batches {
        arrivals.push(rx.arrivals[from..to].to_vec());
        from = to;
    }
    Ok(Outcome {
        dir: t.dir,
        gso: t.gso,
        bytes,
        mss: ep.mss(),
        seconds,
        gbit_per_s: bytes as f64 * 8.0 / seconds / 1e9,
        sha256_sent: hex(&sent),
        sha256_received: hex(&received),
        intact: sent == received,
        runner: ep.stats().clone(),
        faults_to_kernel: to_kernel.tally,
        faults_to_runner: to_runner.tally,
        kernel_counters: socket::delta(&before, &after),
        kernel_super_packets: supers,
        arrivals,
    })
}

/// Writes `text` to stdout: a closed pipe is fine, a failed write an error.
pub fn print(text: &str) -> Result<(), String> {
    crate::output::stdout(text)
}
