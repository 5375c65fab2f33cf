//! Firings the kernel skipped: it runs at most one BPF program per CPU at a time, and a
//! tracepoint that fires while another runs there runs none of its programs, counting the
//! skip in each one's `recursion_misses` (`trace_call_bpf`, kernel/trace/bpf_trace.c,
//! v6.12). bpftrace does not report them; they are read from its descriptors and named by
//! the script's attach points. A count is every firing skipped, the probe's own or not.

use super::verdict::Inconclusive;
use skblab_core::capture::{Missed, UNATTRIBUTED};

/// `prog_type` of a tracepoint program (BPF_PROG_TYPE_TRACEPOINT, include/uapi/linux/bpf.h).
const BPF_PROG_TYPE_TRACEPOINT: u64 = 5;

/// Each tracepoint program's `recursion_misses` held by process `pid`, in the order it
/// loaded them (by program id), which for bpftrace is the order of the script's attach
/// points. Read from its descriptors (`/proc/PID/fdinfo`), held while it is attached.
pub fn misses(pid: u32) -> Vec<u64> {
    let dir = format!("/proc/{pid}/fdinfo");
    let mut progs: Vec<(u64, u64)> = (std::fs::read_dir(dir).into_iter().flatten().flatten())
        .filter_map(|e| tracepoint_prog(&std::fs::read_to_string(e.path()).ok()?))
        .collect();
    progs.sort_unstable();
    progs.into_iter().map(|(_, misses)| misses).collect()
}

/// A BPF program's descriptor info: its id and `recursion_misses`, if it is a tracepoint
/// program.
fn tracepoint_prog(fdinfo: &str) -> Option<(u64, u64)> {
    let field = |name: &str| {
        (fdinfo.lines())
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    (field("prog_type")? == BPF_PROG_TYPE_TRACEPOINT).then_some(())?;
    Some((field("prog_id")?, field("recursion_misses")?))
}

/// The tracepoints `script` attaches to, in its order (a probe line starts with them, comma
/// separated): the order bpftrace loads their programs in.
pub fn tracepoints_in(script: &str) -> Vec<String> {
    (script.lines())
        .filter(|l| l.starts_with("tracepoint:"))
        .filter_map(|l| l.split([' ', '/', '{']).next())
        .flat_map(|head| head.split(','))
        .filter_map(|t| t.strip_prefix("tracepoint:"))
        .map(String::from)
        .collect()
}

/// Each tracepoint's firings skipped between two readings of its programs' counts
/// ([`misses`]), those with none left out; all under [`UNATTRIBUTED`] when the programs do
/// not match the attach points one to one.
pub fn since(points: &[String], before: &[u64], after: &[u64]) -> Vec<Missed> {
    let grown: Vec<u64> = (after.iter().enumerate())
        .map(|(i, n)| n.saturating_sub(before.get(i).copied().unwrap_or(0)))
        .collect();
    if points.len() != grown.len() || before.len() != grown.len() {
        let events = grown.iter().sum();
        return (events > 0)
            .then(|| Missed {
                tracepoint: UNATTRIBUTED.into(),
                events,
            })
            .into_iter()
            .collect();
    }
    let mut out: Vec<Missed> = Vec::new();
    for (t, &n) in points.iter().zip(&grown).filter(|(_, &n)| n > 0) {
        match out.iter_mut().find(|m| m.tracepoint == *t) {
            // A tracepoint with two probes: each program counts every skip.
            Some(m) => m.events = m.events.max(n),
            None => out.push(Missed {
                tracepoint: t.clone(),
                events: n,
            }),
        }
    }
    out
}

/// Why a trace whose probes the kernel skipped cannot be judged (an skb or a page they
/// never saw), or `None` when none was skipped.
pub fn untrusted(skipped: &[Missed]) -> Option<Inconclusive> {
    let each: Vec<String> = skipped.iter().map(Missed::to_string).collect();
    (!each.is_empty()).then(|| {
        Inconclusive(format!(
            "the kernel skipped firings of the probes while another BPF program ran on their \
             CPU ({}): the comparison could be incomplete",
            each.join(", ")
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tracepoint_programs_misses_are_read_from_its_fdinfo() {
        let info = "pos:\t0\nflags:\t02000002\nprog_type:\t5\nprog_jited:\t1\n\
                    prog_id:\t28476\nrun_cnt:\t0\nrecursion_misses:\t13\n";
        assert_eq!(tracepoint_prog(info), Some((28476, 13)));
        // A map's descriptor, and another kind of program.
        assert_eq!(tracepoint_prog("map_type:\t1\nmap_id:\t4\n"), None);
        let kprobe = info.replace("prog_type:\t5", "prog_type:\t2");
        assert_eq!(tracepoint_prog(&kprobe), None);
    }

    /// The attach points in the order bpftrace loads their programs: one per tracepoint of a
    /// comma list, BEGIN and END left out (they are no tracepoints).
    #[test]
    fn the_attach_points_are_read_in_script_order() {
        let s =
            "BEGIN { }\ntracepoint:a:b /x/ { }\ntracepoint:c:d,tracepoint:e:f {\n  $x = 1;\n}\n\
                 tracepoint:a:b { }\nEND { }\n";
        assert_eq!(tracepoints_in(s), ["a:b", "c:d", "e:f", "a:b"]);
    }

    fn points() -> Vec<String> {
        tracepoints_in("tracepoint:k:free /a/ { }\ntracepoint:n:xmit { }\ntracepoint:k:free { }\n")
    }

    /// Skips named by tracepoint, counted from the first reading, a tracepoint with two
    /// probes counted once, and all of them unattributed when the programs do not match the
    /// attach points.
    #[test]
    fn skips_are_named_by_tracepoint() {
        let m = since(&points(), &[0, 0, 0], &[7, 0, 7]);
        assert_eq!(
            m,
            [Missed {
                tracepoint: "k:free".into(),
                events: 7
            }]
        );
        assert!(since(&points(), &[0, 0, 0], &[0, 0, 0]).is_empty());
        let m = since(&points(), &[0, 0], &[7, 2]);
        assert_eq!((m[0].tracepoint.as_str(), m[0].events), (UNATTRIBUTED, 9));
    }

    /// Skips before the probes were live leave the trace trusted; one more skip after makes
    /// it untrusted, naming the tracepoint and how many.
    #[test]
    fn only_skips_after_the_probes_are_live_make_a_trace_untrusted() {
        let before = [4, 1, 4];
        assert_eq!(untrusted(&since(&points(), &before, &before)), None);
        let Some(Inconclusive(why)) = untrusted(&since(&points(), &before, &[4, 3, 4])) else {
            panic!("two skips at n:xmit left the trace trusted");
        };
        assert!(why.contains("n:xmit ×2"), "{why}");
        assert!(!why.contains("k:free"), "{why}");
    }
}
