//! The kernel stack a captured event was seen at, for a host to show beside the event as it
//! shows a model event's call path: where it was taken and on which CPU, its frames
//! innermost first, each linked to its function at the running kernel's release on Elixir.

use super::{Capture, Source};
use crate::events::Event;
use crate::kernel_fn::elixir_url;

/// What a captured event's text says in place of its stack, which [`Capture::stack`] gives.
pub(super) const MARK: &str = "stack kept";

/// A captured event's kernel stack ([`Capture::stack`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stack<'c> {
    /// The tracepoint it was seen at, or what the fact was inferred from.
    pub source: &'c Source,
    pub cpu: u32,
    /// The tracepoint's own function first, then its callers (bpftrace's `kstack`).
    pub frames: &'c [String],
    /// The running kernel's release as an Elixir tag, where it names one.
    tag: Option<String>,
}

impl Capture {
    /// The kernel stack event `e` of this capture's lane ([`Capture::trace`]) was seen at,
    /// where the capture kept one: an skb first seen (its allocation's), at the device, handed
    /// up, copied (its first copy's) or freed.
    pub fn stack(&self, e: &Event) -> Option<Stack<'_>> {
        let s = self.skbs.get(e.skb()? as usize)?;
        let (source, cpu, stack) = match e {
            Event::SeenSkb { .. } => s.alloc.as_ref().map(|a| (&a.source, a.cpu, a.stack)),
            Event::SeenXmit { .. } => s.xmit.as_ref().map(|x| (&x.source, x.cpu, x.stack)),
            Event::SeenRx { .. } => s.rx.as_ref().map(|r| (&r.source, r.cpu, r.stack)),
            Event::SeenCopy { .. } => s.copied.as_ref().map(|c| (&c.source, c.cpu, c.stack)),
            Event::SeenFree { .. } => s.free.as_ref().map(|f| (&f.source, f.cpu, f.stack)),
            _ => None,
        }?;
        Some(Stack {
            source,
            cpu,
            frames: self.stacks.get(stack? as usize)?,
            tag: elixir_tag(&self.kernel),
        })
    }
}

impl Stack<'_> {
    /// `Stack at net:net_dev_start_xmit, seen on cpu 1`, or where an inferred fact's came from.
    pub fn head(&self) -> String {
        match self.source {
            Source::Seen(t) => format!("Stack at {t}, seen on cpu {}", self.cpu),
            Source::Inferred(why) => format!("Stack inferred ({why}), on cpu {}", self.cpu),
        }
    }

    /// Frame `k`'s function and what follows it as the stack gave it (an offset, `+0x1a`).
    pub fn frame(&self, k: usize) -> (&str, &str) {
        let f = self.frames.get(k).map_or("", String::as_str);
        f.split_at(f.find('+').unwrap_or(f.len()))
    }

    /// Frame `k`'s function on Elixir at the running kernel's release, where the capture's
    /// release names one.
    pub fn url(&self, k: usize) -> Option<String> {
        Some(elixir_url(self.tag.as_deref()?, self.frame(k).0))
    }
}

/// The Elixir tag of a release as `uname -r` gives it: `6.18.44-fc` is `v6.18.44`, `6.18.0` is
/// `v6.18`, `6.19.0-rc2` is `v6.19-rc2` (Elixir names mainline releases without `.0`);
/// none when it starts with no version.
fn elixir_tag(release: &str) -> Option<String> {
    let end = (release.find(|c: char| !c.is_ascii_digit() && c != '.')).unwrap_or(release.len());
    let (version, rest) = release.split_at(end);
    let nums: Vec<&str> = version.split('.').collect();
    if nums.iter().any(|n| n.is_empty()) {
        return None;
    }
    let rc = (rest.strip_prefix("-rc"))
        .map(|r| &r[..r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len())])
        .filter(|n| !n.is_empty());
    match (nums.as_slice(), rc) {
        ([a, b], None) | ([a, b, "0"], None) => Some(format!("v{a}.{b}")),
        ([a, b] | [a, b, "0"], Some(rc)) => Some(format!("v{a}.{b}-rc{rc}")),
        ([a, b, c], _) => Some(format!("v{a}.{b}.{c}")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::predict::tests::fixture;

    /// The fixture keeps no stacks: its skb 3 (write 1's bytes) is given the transmit path
    /// docs/trace.md shows, at the device, and skb 0's free one.
    fn stacked() -> Capture {
        let mut c = fixture();
        let xmit = "dev_hard_start_xmit __dev_queue_xmit+0x9a ip_finish_output2 ip_output \
                    __ip_queue_xmit __tcp_transmit_skb tcp_write_xmit";
        c.stacks = vec![
            xmit.split(' ').map(String::from).collect(),
            vec!["kfree".into()],
        ];
        c.skbs[3].xmit.as_mut().unwrap().stack = Some(0);
        c.skbs[0].free.as_mut().unwrap().stack = Some(1);
        c
    }

    /// The captured event's stack: where and on which CPU, innermost first, each function
    /// linked at the running kernel's release and its offset kept apart; the event's own
    /// text only says a stack was kept.
    #[test]
    fn a_captured_events_stack_is_told_beside_it() {
        let c = stacked();
        let t = c.trace().unwrap();
        let step = &t.steps[0].events;
        let at = |kind: &str, skb| {
            (step.iter())
                .find(|e| e.kind().name() == kind && e.skb() == Some(skb))
                .unwrap()
        };
        let s = c.stack(at("seen_xmit", 3)).unwrap();
        assert_eq!(s.head(), "Stack at net:net_dev_start_xmit, seen on cpu 1");
        assert_eq!(
            (s.frames.len(), s.frame(0)),
            (7, ("dev_hard_start_xmit", ""))
        );
        assert_eq!(s.frame(1), ("__dev_queue_xmit", "+0x9a"));
        assert_eq!(
            s.url(1).as_deref(),
            Some("https://elixir.bootlin.com/linux/v6.18.44/C/ident/__dev_queue_xmit")
        );
        let text = at("seen_xmit", 3).to_string();
        assert!(
            text.ends_with("net:net_dev_start_xmit · stack kept\""),
            "{text}"
        );
        assert!(!text.contains("dev_hard_start_xmit"), "{text}");
        // Each fact has its own: skb 0's free has one, its rx and skb 3's allocation none.
        let free = c.stack(at("seen_free", 0)).unwrap();
        assert_eq!(free.head(), "Stack at skb:consume_skb, seen on cpu 1");
        assert!(c.stack(at("seen_rx", 0)).is_none() && c.stack(at("seen_skb", 3)).is_none());
        assert!(!at("seen_rx", 0).to_string().contains(MARK));
        // A release that names no version links nothing.
        let mut custom = c.clone();
        custom.kernel = "custom".into();
        assert_eq!(custom.stack(at("seen_xmit", 3)).unwrap().url(0), None);
    }

    #[test]
    fn a_release_is_read_as_elixir_names_it() {
        let cases = [
            ("6.18.44-fc-v1300", Some("v6.18.44")),
            ("6.18.0", Some("v6.18")),
            ("6.12", Some("v6.12")),
            ("6.10", Some("v6.10")),
            ("6.10.0", Some("v6.10")),
            ("6.19.0-rc2+", Some("v6.19-rc2")),
            ("5.15.0-91-generic", Some("v5.15")),
            ("6.1.10-rc1", Some("v6.1.10")),
            ("custom", None),
            ("6", None),
            ("6..1", None),
        ];
        for (release, tag) in cases {
            assert_eq!(elixir_tag(release).as_deref(), tag, "{release}");
        }
    }
}
