//! Opening a large `skblab trace` capture, as the playground does (docs/trace.md, "Not
//! yet"): the fixture (tests/fixtures/capture-tcp.json) repeated to 10,000 skbs, as
//! `cargo xtask bench-web`'s `bigCapture` repeats it, then read (`Capture::parse`) and made a
//! trace (`Capture::trace`), after the playground tells it from a kernel report
//! (`Capture::is_one`). Prints each part's time, the best of five.
//!
//! `cargo bench -p skblab-core --bench capture_open`

use skblab_core::capture::{Capture, Moment};

const SKBS: usize = 10_000;

/// The fixture repeated until it holds `skbs` skbs, each copy's skbs, pages and moments
/// renumbered and later in time.
fn big(skbs: usize) -> Capture {
    let c = Capture::parse(include_str!("../../tests/fixtures/capture-tcp.json")).unwrap();
    let (n, p) = (c.skbs.len() as u32, c.pages.len() as u32);
    let end = c.timeline.last().map_or(0, Moment::ns) + 1;
    let mut big = Capture {
        skbs: vec![],
        pages: vec![],
        timeline: vec![],
        ..c.clone()
    };
    for i in 0..skbs.div_ceil(n as usize) as u32 {
        for s in &c.skbs {
            let mut s = s.clone();
            s.id += i * n;
            for f in s.xmit.iter_mut().flat_map(|x| x.frags.iter_mut()) {
                f.page += i * p;
            }
            big.skbs.push(s);
        }
        for pg in &c.pages {
            big.pages.push(skblab_core::capture::Page {
                id: pg.id + i * p,
                ..*pg
            });
        }
        for m in &c.timeline {
            big.timeline.push(later(*m, u64::from(i) * end, i * n));
        }
    }
    big
}

/// `m`, `dt` later, its skb `dn` further on.
fn later(m: Moment, dt: u64, dn: u32) -> Moment {
    match m {
        Moment::Write { ns, socket, bytes } => Moment::Write {
            ns: ns + dt,
            socket,
            bytes,
        },
        Moment::Read { ns, socket, bytes } => Moment::Read {
            ns: ns + dt,
            socket,
            bytes,
        },
        Moment::Alloc { ns, skb } => Moment::Alloc {
            ns: ns + dt,
            skb: skb + dn,
        },
        Moment::Xmit { ns, skb } => Moment::Xmit {
            ns: ns + dt,
            skb: skb + dn,
        },
        Moment::Rx { ns, skb } => Moment::Rx {
            ns: ns + dt,
            skb: skb + dn,
        },
        Moment::Copy { ns, skb, bytes } => Moment::Copy {
            ns: ns + dt,
            skb: skb + dn,
            bytes,
        },
        Moment::Free { ns, skb } => Moment::Free {
            ns: ns + dt,
            skb: skb + dn,
        },
    }
}

/// The CPU time this thread has run, in ns (`/proc/thread-self/schedstat`'s first field):
/// on a shared machine the wall clock counts other programs' turns too.
fn cpu_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    stat.split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The best of five runs of `f`, in ms of this thread's CPU time.
fn best<T>(mut f: impl FnMut() -> T) -> (f64, T) {
    let mut out = None;
    let mut ms = f64::MAX;
    for _ in 0..5 {
        let t = cpu_ns();
        let r = f();
        ms = ms.min((cpu_ns() - t) as f64 / 1e6);
        out = Some(r);
    }
    (ms, out.unwrap())
}

fn main() {
    let c = big(SKBS);
    let text = serde_json::to_string(&c).unwrap();
    let (told, one) = best(|| Capture::is_one(&text));
    assert!(one);
    let (parse, read) = best(|| Capture::parse(&text).unwrap());
    assert_eq!(read, c);
    let (trace, t) = best(|| c.trace().unwrap());
    println!(
        "capture of {} skbs ({:.1} MB, {} steps), ms of CPU: told {told:.1}, parse {parse:.1}, \
         trace {trace:.1}",
        c.skbs.len(),
        text.len() as f64 / 1e6,
        t.steps.len()
    );
}
