//! The capture in the terminal: per socket what it sent and received, then what the four
//! patches mean for this traffic. The numbers are the core's ([`summary`]); each line says
//! whether its facts were seen (at which tracepoint) or inferred.

use skblab_core::capture::{self, Capture, Direction, Exit, Missed, SocketSummary};
use std::collections::BTreeMap;

/// `a×n` pairs: `1 frag ×3, 2 frags ×1`.
fn counts<K: std::fmt::Display>(m: &BTreeMap<K, u64>, unit: &str) -> String {
    if m.is_empty() {
        return "nothing".into();
    }
    let each: Vec<String> = m.iter().map(|(k, n)| format!("{unit}{k} ×{n}")).collect();
    each.join(", ")
}

fn direction(name: &str, d: &Direction, sent: bool) -> String {
    if d.skbs == 0 {
        return format!("  {name}: no skb\n");
    }
    let (bytes, at) = if sent {
        ("bytes at the device", "net:net_dev_start_xmit")
    } else {
        ("bytes copied to the program", "skb:skb_copy_datagram_iovec")
    };
    let mut o = format!(
        "  {name}: {} skbs, {} {bytes} [seen at {at}]\n",
        d.skbs, d.bytes
    );
    if sent {
        o += &format!(
            "    payload in the linear area {} B; frags per skb: {}; pages: {} [seen at {at}, \
             pages' order through BTF]\n",
            d.linear_payload,
            counts(&d.frags, "nr_frags "),
            counts(&d.pages, "order "),
        );
    }
    o += &format!(
        "    freed: {} [seen at skb:consume_skb, skb:kfree_skb, kmem:kmem_cache_free; {} of \
         them inferred from the fclone pair's free]; free not seen: {}\n",
        counts(&d.freed_on, "cpu"),
        d.frees_inferred,
        d.free_not_seen
    );
    if !sent {
        o += &format!(
            "    merged into another skb (coalesced or GRO): {} [inferred: handed up with \
             payload, freed, never copied]\n",
            d.merged
        );
    }
    o
}

fn socket(c: &Capture, s: &SocketSummary) -> String {
    let sock = &c.sockets[s.id as usize];
    let port = |p: Option<u16>| p.map_or("?".to_string(), |p| p.to_string());
    let mut o = format!(
        "socket {} {} (pid {}, port {} -> {}): wrote {} B in {} calls, read {} B in {} calls \
         [seen at sock:sock_send_length, sock:sock_recv_length]\n",
        s.id,
        s.proto.name(),
        sock.pid,
        port(sock.local_port),
        port(sock.remote_port),
        s.written,
        sock.writes,
        s.read,
        sock.reads
    );
    if !sock.size_goals.is_empty() {
        o += &format!(
            "  size goals: {:?} [seen at tcp:tcp_sendmsg_locked]\n",
            sock.size_goals
        );
    }
    o += &direction("sent", &s.sent, true);
    o += &direction("received", &s.received, false);
    o
}

/// The capture as text.
pub fn render(c: &Capture) -> String {
    let what = if c.command.is_empty() {
        format!("pid {}", c.pid)
    } else {
        format!("`{}` (pid {})", c.command.join(" "), c.pid)
    };
    let exit = match c.exit {
        Some(Exit::Code(n)) => format!("exited {n}"),
        Some(Exit::Signal(s)) => format!("killed by signal {s}"),
        None => "still running".into(),
    };
    let mut o = format!("skblab trace: {what} on Linux {}, {exit}\n", c.kernel);
    for p in c.parts.iter().filter(|p| !p.captured()) {
        o += &format!(
            "part `{}` refused: this kernel lacks {}\n",
            p.name,
            p.missing.join(", ")
        );
    }
    o += &format!(
        "processes: {} [seen at sched:sched_process_fork/exec/exit]\n",
        c.processes.len()
    );
    for s in capture::sockets(c) {
        o += &socket(c, &s);
    }
    o += &match c.prediction().and_then(|p| p.told(c)) {
        Ok(line) => format!("the model's prediction: {line}\n"),
        Err(e) => format!("the model's prediction: none ({e})\n"),
    };
    o += "what the four patches mean for this traffic:\n";
    for l in capture::lessons(c) {
        o += &format!("  seed {}: {} [{}]\n", l.seed, l.fact, l.source.mark());
    }
    o += &format!("lost: {} events, {} skbs\n", c.lost.events, c.lost.skbs);
    if !c.lost.missed.is_empty() {
        let each: Vec<String> = c.lost.missed.iter().map(Missed::to_string).collect();
        o += &format!(
            "skipped by the kernel (another BPF program was running on that CPU; any program's \
             events, not only this one's): {}\n",
            each.join(", ")
        );
    }
    o
}
