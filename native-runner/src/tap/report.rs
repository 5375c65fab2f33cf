//! What `skblab tap` reports: the model's counters on the real traffic, the kernel's GSO
//! super-packets beside the model's size goal, as text or JSON.

use super::plan;
use super::session::{self, Dir, Outcome};
use std::collections::BTreeMap;

/// The kernel's GSO super-packets beside the model's size goal for the same MSS and limit.
#[derive(Debug, serde::Serialize)]
pub struct GsoCheck {
    pub mss: u64,
    pub gso_max_size: u32,
    pub model_size_goal: u32,
    pub kernel_largest: u32,
    /// The kernel's largest equals the model's size goal.
    pub agree: bool,
    /// The kernel built a packet above the model's size goal: a fidelity bug in the model.
    /// (Below it is no contradiction: under loss the congestion window keeps packets small.)
    pub kernel_exceeds_model: bool,
}

/// The model's counters on the real traffic.
#[derive(Debug, serde::Serialize)]
pub(super) struct Model {
    pub(super) mechanism: &'static str,
    pub(super) variant: String,
    pub(super) counters: skblab_core::trace::Counters,
}

#[derive(Debug, serde::Serialize)]
pub(super) struct Report {
    pub(super) command: &'static str,
    pub(super) model: Model,
    #[serde(flatten)]
    pub(super) outcome: Outcome,
    /// The skbs the runner sent, by payload size -> how many (send).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(super) skbs: BTreeMap<u64, u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) gso_check: Option<GsoCheck>,
    /// What the run could not do, said plainly.
    pub(super) notes: Vec<String>,
}

/// The kernel's largest super-packet against `tcp_xmit_size_goal` for the same MSS, the
/// default GSO limit and the window the runner advertised.
pub(super) fn gso_check(o: &Outcome) -> Option<GsoCheck> {
    let largest = *o.kernel_super_packets.keys().last()?;
    let goal = plan::size_goal(o.mss as u32, 8 << 20);
    Some(GsoCheck {
        mss: o.mss,
        gso_max_size: plan::today().1.gso_max_size,
        model_size_goal: goal,
        kernel_largest: largest,
        agree: largest == goal,
        kernel_exceeds_model: largest > goal,
    })
}

pub(super) fn finish(r: Report, json: bool) -> Result<(), String> {
    if json {
        let text = serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?;
        session::print(&format!("{text}\n"))?;
    } else {
        session::print(&render(&r))?;
    }
    if !r.outcome.intact {
        return Err(format!(
            "the bytes differ: sent sha256 {}, received {}",
            r.outcome.sha256_sent, r.outcome.sha256_received
        ));
    }
    if let Some(g) = r.gso_check.as_ref().filter(|g| g.kernel_exceeds_model) {
        return Err(format!(
            "fidelity bug: the kernel's largest GSO super-packet is {} bytes but the model's \
             size_goal is {} (mss {}, GSO limit {})",
            g.kernel_largest, g.model_size_goal, g.mss, g.gso_max_size
        ));
    }
    Ok(())
}

/// 1234567 -> "1,234,567".
pub(super) fn thousands(n: u64) -> String {
    let s = n.to_string();
    let groups: Vec<&str> = s
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|g| std::str::from_utf8(g).expect("ASCII digits"))
        .collect();
    groups.join(",")
}

/// `  label      a, b, c` wrapped under itself at 100 columns.
fn wrapped(label: &str, items: &[String]) -> String {
    let indent = " ".repeat(29);
    let mut out = format!("  {label:<26} ");
    let mut col = out.len();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            if col + 2 + item.len() > 100 {
                out.push_str(",\n");
                out.push_str(&indent);
                col = indent.len();
            } else {
                out.push_str(", ");
                col += 2;
            }
        }
        out.push_str(item);
        col += item.len();
    }
    out.push('\n');
    out
}

fn render(r: &Report) -> String {
    use std::fmt::Write;
    let o = &r.outcome;
    let s = &o.runner;
    let mut t = String::new();
    let way = match o.dir {
        Dir::Send => "runner (model skbs) -> kernel socket",
        Dir::Recv => "kernel socket -> runner",
    };
    let mode = if o.gso {
        "GSO super-packets"
    } else {
        "plain frames"
    };
    let _ = writeln!(t, "{}: {way}, {mode}, MSS {}", r.command, o.mss);
    let verdict = if o.intact { "intact" } else { "CORRUPTED" };
    let _ = writeln!(
        t,
        "  {:<26} {verdict}, sha256 {}",
        "bytes",
        &o.sha256_received[..16]
    );
    let _ = writeln!(
        t,
        "  {:<26} {} in {:.3} s = {:.2} Gbit/s",
        "payload",
        thousands(o.bytes),
        o.seconds,
        o.gbit_per_s
    );
    let _ = writeln!(t, "  {:<26} {:>14} {:>14}", "", "to kernel", "to runner");
    let rows: [(&str, u64, u64); 6] = [
        ("frames", s.frames_out, s.frames_in),
        ("wire segments", s.segments_out, s.segments_in),
        ("GSO super-packets", s.super_packets_out, s.super_packets_in),
        ("payload bytes on the wire", s.bytes_out, s.bytes_in),
        (
            "dropped by --drop",
            o.faults_to_kernel.dropped,
            o.faults_to_runner.dropped,
        ),
        (
            "corrupted by --corrupt",
            o.faults_to_kernel.corrupted,
            o.faults_to_runner.corrupted,
        ),
    ];
    for (name, a, b) in rows {
        let _ = writeln!(t, "  {name:<26} {:>14} {:>14}", thousands(a), thousands(b));
    }
    let _ = writeln!(
        t,
        "  {:<26} {} segments ({} timeouts, {} fast recoveries, {} RACK-lost segments \
         ({} of them resends), {} loss probes, {} zero-window probes)",
        "runner retransmitted",
        s.retransmitted_segments,
        s.timeouts,
        s.fast_retransmits,
        s.rack_lost,
        s.rack_lost_resends,
        s.loss_probes,
        s.zero_window_probes
    );
    let _ = writeln!(
        t,
        "  {:<26} {} after timeouts, {} after fast recoveries; D-SACKs {} received, {} sent \
         ({} once both FINs were out)",
        "runner undid reductions",
        s.loss_undos,
        s.recovery_undos,
        s.dsacks_in,
        s.dsacks_out,
        s.dsacks_out_closing
    );
    if s.peer_fins_again > 0 {
        let _ = writeln!(
            t,
            "  {:<26} {}, each copy acknowledged (an ACK that finds the kernel's socket \
             closed is answered with a RST: Tcp.OutRsts)",
            "kernel's FIN sent again", s.peer_fins_again
        );
    }
    if !r.skbs.is_empty() {
        let list: Vec<String> = r
            .skbs
            .iter()
            .rev()
            .map(|(len, n)| format!("{n} x {}", thousands(*len)))
            .collect();
        let _ = writeln!(t, "  {:<26} {}", "skbs sent (bytes)", list.join(", "));
    }
    let mc: Vec<String> = r
        .model
        .counters
        .0
        .iter()
        .filter(|(_, v)| *v > 0)
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    let label = format!("{} ({})", r.model.mechanism, r.model.variant);
    t.push_str(&wrapped(
        "model on this traffic",
        &[vec![label], mc].concat(),
    ));
    let nz: Vec<String> = o
        .kernel_counters
        .iter()
        .filter(|(_, v)| **v > 0)
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    t.push_str(&wrapped("kernel counters", &nz));
    if let Some(g) = &r.gso_check {
        let sizes: Vec<String> = o
            .kernel_super_packets
            .iter()
            .rev()
            .take(4)
            .map(|(len, n)| format!("{n} x {}", thousands(u64::from(*len))))
            .collect();
        let _ = writeln!(
            t,
            "  {:<26} {} ...",
            "kernel GSO super-packets",
            sizes.join(", ")
        );
        let verdict = if g.agree {
            "agree"
        } else if g.kernel_exceeds_model {
            "DISAGREE: the kernel builds larger packets, a fidelity bug in the model"
        } else {
            "the kernel never reached the goal here (its congestion window kept packets smaller)"
        };
        let _ = writeln!(
            t,
            "  {:<26} kernel's largest {} = {} x {}; model tcp_xmit_size_goal {} (GSO limit {}): {verdict}",
            "size goal",
            thousands(u64::from(g.kernel_largest)),
            u64::from(g.kernel_largest) / g.mss.max(1),
            g.mss,
            thousands(u64::from(g.model_size_goal)),
            thousands(u64::from(g.gso_max_size)),
        );
    }
    for n in &r.notes {
        let _ = writeln!(t, "  note: {n}");
    }
    t
}
