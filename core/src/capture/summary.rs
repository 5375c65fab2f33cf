//! What a capture says, per socket and per patch: the numbers the terminal prints (and a
//! playground would), each with its [`Source`]. Everything here is counted off the capture;
//! nothing is looked up in the model.

use super::{Capture, Proto, Skb, Source};
use crate::patches::PATCHES;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One direction of a socket's traffic.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Direction {
    pub skbs: u64,
    /// Bytes: skb->len summed at the device (sent), or bytes recvmsg copied (received).
    pub bytes: u64,
    /// Payload bytes in the linear area (sent: `linear - headers`).
    pub linear_payload: u64,
    /// skbs by their number of frags.
    pub frags: BTreeMap<u64, u64>,
    /// Distinct pages the frags sat on, by order.
    pub pages: BTreeMap<u32, u64>,
    /// skbs freed, by the CPU that freed them; and those whose free was not seen.
    pub freed_on: BTreeMap<u32, u64>,
    /// Of those, frees inferred (a clone's, from its fclone pair's).
    pub frees_inferred: u64,
    pub free_not_seen: u64,
    /// Received skbs freed without recvmsg copying from them: their bytes went into another
    /// skb (TCP's receive-queue coalescing, or GRO) (inferred).
    pub merged: u64,
}

/// One socket's summary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SocketSummary {
    pub id: u32,
    pub proto: Proto,
    pub written: u64,
    pub read: u64,
    pub sent: Direction,
    pub received: Direction,
}

/// What one of the four patches means for this traffic, read off the capture.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Lesson {
    pub seed: &'static str,
    pub subject: &'static str,
    pub fact: String,
    pub source: Source,
}

/// Every socket's summary, in id order.
pub fn sockets(c: &Capture) -> Vec<SocketSummary> {
    let by = c.by_socket();
    (c.sockets.iter())
        .map(|s| {
            let (tx, rx) = &by[&s.id];
            SocketSummary {
                id: s.id,
                proto: s.proto,
                written: s.written,
                read: s.read,
                sent: direction(c, tx, true),
                received: direction(c, rx, false),
            }
        })
        .collect()
}

fn direction(c: &Capture, skbs: &[&Skb], sent: bool) -> Direction {
    let mut d = Direction::default();
    let mut pages = BTreeSet::new();
    for skb in skbs {
        d.skbs += 1;
        match (sent, &skb.xmit, &skb.copied) {
            (true, Some(x), _) => d.bytes += x.len,
            (false, _, Some(cp)) => d.bytes += cp.bytes,
            _ => {}
        }
        if let Some(x) = &skb.xmit {
            d.linear_payload += x.linear.saturating_sub(x.headers);
            *d.frags
                .entry(x.frags.len() as u64 + x.frags_not_read)
                .or_default() += 1;
            pages.extend(x.frags.iter().map(|f| f.page));
        }
        match &skb.free {
            Some(f) => {
                *d.freed_on.entry(f.cpu).or_default() += 1;
                d.frees_inferred += u64::from(matches!(f.source, Source::Inferred(_)));
            }
            None => d.free_not_seen += 1,
        }
        let payload = skb.rx.as_ref().is_some_and(|r| r.len > 0);
        if !sent && skb.copied.is_none() && skb.free.is_some() && payload {
            d.merged += 1;
        }
    }
    for p in pages {
        *d.pages.entry(c.pages[p as usize].order).or_default() += 1;
    }
    d
}

/// The four patches, each read off the capture (docs/trace.md says how).
pub fn lessons(c: &Capture) -> Vec<Lesson> {
    let subject = |seed: &str| (PATCHES.iter().find(|p| p.seed == seed)).map_or("", |p| p.subject);
    let lesson = |seed: &'static str, fact: String, source: Source| Lesson {
        seed,
        subject: subject(seed),
        fact,
        source,
    };
    vec![
        lesson("000", no_linear_payload(c), Source::seen(XMIT)),
        page_reuse(c, &lesson),
        freed_where_allocated(c, &lesson),
        mptcp_mappings(c, &lesson),
    ]
}

const XMIT: &str = "net:net_dev_start_xmit";

/// Seed 000: whether sent TCP skbs carry payload in their linear area.
fn no_linear_payload(c: &Capture) -> String {
    let tcp = |s: &&Skb| {
        s.tx_socket
            .is_some_and(|id| matches!(c.sockets[id as usize].proto, Proto::Tcp | Proto::Mptcp))
    };
    let data: Vec<_> = (c.skbs.iter().filter(tcp))
        .filter_map(|s| s.xmit.as_ref())
        .filter(|x| x.len > x.headers)
        .collect();
    let none = data.iter().filter(|x| x.linear <= x.headers).count();
    if data.is_empty() {
        return "no TCP skb with payload was sent".into();
    }
    format!(
        "{none} of {} TCP skbs with payload carried none of it in the linear area (headers \
         only, the payload in page frags): today's tcp_sendmsg_locked, the opposite of what \
         seed 000 proposed for fast devices",
        data.len()
    )
}

type MakeLesson<'a> = &'a dyn Fn(&'static str, String, Source) -> Lesson;

/// Seed 001: how many frags share a page (a page frag cache reusing its page).
fn page_reuse(c: &Capture, lesson: MakeLesson) -> Lesson {
    let frags: Vec<_> = (c.skbs.iter())
        .filter_map(|s| s.xmit.as_ref())
        .flat_map(|x| x.frags.iter())
        .collect();
    let pages: BTreeSet<u32> = frags.iter().map(|f| f.page).collect();
    let elsewhere = |lo: bool| {
        (c.skbs.iter())
            .filter(|s| s.xmit.is_none() && s.rx.as_ref().is_some_and(|r| r.loopback == lo))
            .count()
    };
    let (from_device, from_local) = (elsewhere(false), elsewhere(true));
    let mut fact = format!(
        "{} frags sent sat on {} pages: the sender's page frag (sk_page_frag) fills a page \
         before it takes another, as seed 001 made netdev_alloc_frag do for receive",
        frags.len(),
        pages.len()
    );
    if from_local > 0 {
        fact += &format!(
            "; {from_local} skbs came over loopback from a program not traced, built by its \
             sendmsg, not by a driver"
        );
    }
    if from_device == 0 {
        fact += "; no skb here came from a driver, so netdev_alloc_frag's cache is not on \
                 this traffic's path";
        return lesson("001", fact, Source::seen(XMIT));
    }
    fact += &format!("; {from_device} skbs came from a driver, whose frag pages are not read yet");
    lesson(
        "001",
        fact,
        Source::Inferred("received skbs without a transmit on this machine".into()),
    )
}

/// Seed 002's successor: read skbs freed on the CPU that allocated them.
fn freed_where_allocated(c: &Capture, lesson: MakeLesson) -> Lesson {
    let read: Vec<_> = c.skbs.iter().filter(|s| s.copied.is_some()).collect();
    let freed: Vec<_> = read
        .iter()
        .filter_map(|s| Some((s.copied.as_ref()?, s.free.as_ref()?)))
        .collect();
    let home = freed.iter().filter(|(cp, f)| cp.alloc_cpu == f.cpu).count();
    let away = freed
        .iter()
        .filter(|(cp, _)| cp.cpu != cp.alloc_cpu)
        .count();
    let fact = format!(
        "{home} of {} read skbs whose free was seen were freed on the CPU that allocated them \
         ({away} were read on another CPU; {} frees not seen): skb_attempt_defer_free hands \
         a read skb back to its allocating CPU",
        freed.len(),
        read.len() - freed.len()
    );
    let seen = |s: &&Skb| {
        matches!(
            s.copied.as_ref().map(|cp| &cp.source),
            Some(Source::Seen(_))
        )
    };
    let source = if read.iter().all(seen) {
        Source::Seen(
            "skb:skb_copy_datagram_iovec (skb->alloc_cpu) and the free's tracepoint".into(),
        )
    } else {
        Source::Inferred(
            "the datagram each UDP read took (a linear one's copy fires no tracepoint), its \
             skb->alloc_cpu where it was handed up, and the free's tracepoint"
                .into(),
        )
    };
    lesson("002", fact, source)
}

/// Seed 003: MPTCP mapping sizes beside the largest skb its subflows sent.
fn mptcp_mappings(c: &Capture, lesson: MakeLesson) -> Lesson {
    let maps: Vec<u64> = (c.sockets.iter())
        .filter(|s| s.proto == Proto::Mptcp)
        .flat_map(|s| s.mappings.iter().copied())
        .collect();
    if !c.sockets.iter().any(|s| s.proto == Proto::Mptcp) {
        return lesson(
            "003",
            "no MPTCP socket in this traffic".into(),
            Source::Seen("syscalls:sys_exit_socket".into()),
        );
    }
    let biggest = (c.skbs.iter())
        .filter(|s| {
            s.tx_socket
                .is_some_and(|id| c.sockets[id as usize].proto == Proto::Mptcp)
        })
        .filter_map(|s| s.xmit.as_ref())
        .map(|x| x.len - x.headers.min(x.len))
        .max()
        .unwrap_or(0);
    let fact = format!(
        "{} DSS mappings of {} to {} bytes; the largest payload an MPTCP subflow skb carried \
         was {biggest} (the size goal is at no tracepoint: taken as that largest skb)",
        maps.len(),
        maps.iter().min().unwrap_or(&0),
        maps.iter().max().unwrap_or(&0),
    );
    lesson(
        "003",
        fact,
        Source::Inferred("mptcp:mptcp_sendmsg_frag mappings and net:net_dev_start_xmit".into()),
    )
}
