//! What each part of a capture needs of the running kernel, and whether it has it: the
//! tracepoints in tracefs (`events/GROUP/NAME`) and the struct fields in its BTF (each read
//! by a probe that bpftrace compiles against `/sys/kernel/btf/vmlinux` and runs at once).
//! A part that lacks any is refused by name; the parts every capture stands on refuse the
//! whole run.

use skblab_core::capture::Part;
use std::path::Path;
use std::process::{Command, Stdio};

/// One part: its name, its tracepoints (`group/name`), the BTF fields it reads
/// (`struct S`, `field.path`), and whether a capture can go without it.
pub struct Need {
    pub name: &'static str,
    pub tracepoints: &'static [&'static str],
    pub fields: &'static [(&'static str, &'static str)],
    pub optional: bool,
}

/// The parts, in the order the script is written. Their names are the report's
/// (`capture.parts[].name`) and docs/trace.md's.
pub const NEEDS: &[Need] = &[
    Need {
        name: "process tree",
        tracepoints: &[
            "sched/sched_process_fork",
            "sched/sched_process_exec",
            "sched/sched_process_exit",
            "syscalls/sys_exit_socket",
            "syscalls/sys_exit_accept",
            "syscalls/sys_exit_accept4",
            "syscalls/sys_enter_getsid",
            "kmem/kmem_cache_free",
            "syscalls/sys_enter_getpgid",
            "syscalls/sys_enter_getppid",
        ],
        fields: &[
            ("task_struct", "files"),
            ("files_struct", "fdt"),
            ("fdtable", "fd"),
            ("file", "private_data"),
            ("socket", "sk"),
            ("sock", "sk_protocol"),
            ("sock", "sk_socket"),
            ("socket_alloc", "vfs_inode.i_ino"),
        ],
        optional: false,
    },
    Need {
        name: "send",
        tracepoints: &["net/net_dev_start_xmit"],
        fields: &[
            ("sk_buff", "sk"),
            ("sk_buff", "len"),
            ("sk_buff", "data_len"),
            ("sk_buff", "truesize"),
            ("sk_buff", "head"),
            ("sk_buff", "data"),
            ("sk_buff", "end"),
            ("sk_buff", "transport_header"),
            ("sk_buff", "network_header"),
            ("sk_buff", "fclone"),
            ("skb_shared_info", "nr_frags"),
            ("skb_shared_info", "gso_size"),
            ("skb_shared_info", "gso_segs"),
            ("skb_shared_info", "frags[0].netmem"),
            ("skb_shared_info", "frags[0].offset"),
            ("skb_shared_info", "frags[0].len"),
            ("page", "compound_head"),
            ("page", "_refcount.counter"),
            ("folio", "_flags_1"),
            ("sock", "__sk_common.skc_num"),
            ("sock", "__sk_common.skc_dport"),
            ("sock", "__sk_common.skc_state"),
            ("sock", "__sk_common.skc_listener"),
            ("sock", "__sk_common.skc_net.net"),
            ("net", "ns.inum"),
        ],
        optional: false,
    },
    Need {
        name: "syscall bytes",
        tracepoints: &["sock/sock_send_length", "sock/sock_recv_length"],
        fields: &[("sock", "sk_protocol")],
        optional: true,
    },
    Need {
        name: "size goal",
        tracepoints: &["tcp/tcp_sendmsg_locked"],
        fields: &[],
        optional: true,
    },
    Need {
        name: "mptcp mappings",
        tracepoints: &["mptcp/mptcp_sendmsg_frag"],
        fields: &[
            ("tcp_sock", "is_mptcp"),
            ("inet_connection_sock", "icsk_ulp_data"),
            ("mptcp_subflow_context", "conn"),
        ],
        optional: true,
    },
    Need {
        name: "receive",
        tracepoints: &[
            "net/netif_receive_skb",
            "net/napi_gro_receive_entry",
            "net/napi_gro_frags_entry",
            "skb/skb_copy_datagram_iovec",
            "syscalls/sys_enter_bind",
            "syscalls/sys_exit_bind",
            "syscalls/sys_enter_connect",
            "syscalls/sys_exit_connect",
        ],
        fields: &[
            ("sk_buff", "alloc_cpu"),
            ("sk_buff", "dev"),
            ("net_device", "nd_net.net"),
            ("net_device", "flags"),
            ("sock", "sk_protocol"),
            ("sock", "__sk_common.skc_num"),
            ("sock", "__sk_common.skc_net.net"),
            ("net", "ns.inum"),
        ],
        optional: true,
    },
    Need {
        name: "frees",
        tracepoints: &[
            "skb/consume_skb",
            "skb/kfree_skb",
            "kmem/kmem_cache_alloc",
            "kmem/kfree",
        ],
        fields: &[],
        optional: true,
    },
    Need {
        name: "pages",
        tracepoints: &["kmem/mm_page_alloc", "kmem/mm_page_free"],
        fields: &[],
        optional: true,
    },
];

const EVENTS: &str = "/sys/kernel/tracing/events";

/// Every part with what this kernel lacks of it (tracefs must be mounted). Fails, naming
/// the part and what it lacks, when a part no capture goes without is missing something.
pub fn check() -> Result<Vec<Part>, String> {
    let parts: Vec<Part> = NEEDS.iter().map(check_one).collect();
    for (need, part) in NEEDS.iter().zip(&parts) {
        if !need.optional && !part.captured() {
            return Err(format!(
                "skblab trace needs its part `{}`, and this kernel lacks {}; nothing was run",
                part.name,
                part.missing.join(", ")
            ));
        }
    }
    Ok(parts)
}

fn check_one(need: &Need) -> Part {
    let mut missing: Vec<String> = (need.tracepoints.iter())
        .filter(|t| !Path::new(EVENTS).join(t).exists())
        .map(|t| format!("tracepoint {}", t.replace('/', ":")))
        .collect();
    missing.extend(missing_fields(need.fields));
    Part {
        name: need.name.to_string(),
        needs: (need.tracepoints.iter().map(|t| t.replace('/', ":")))
            .chain(need.fields.iter().map(|(s, f)| format!("struct {s}.{f}")))
            .collect(),
        missing,
    }
}

/// The fields bpftrace cannot resolve in this kernel's BTF: all of them are compiled in one
/// probe; only if that fails is each tried alone, to name the ones missing.
fn missing_fields(fields: &[(&str, &str)]) -> Vec<String> {
    if fields.is_empty() || compiles(fields) {
        return Vec::new();
    }
    (fields.iter())
        .filter(|f| !compiles(std::slice::from_ref(f)))
        .map(|(s, f)| format!("BTF field struct {s}.{f}"))
        .collect()
}

/// Whether a BEGIN probe reading `fields` (at address 0: nothing is dereferenced that
/// matters) compiles and runs.
fn compiles(fields: &[(&str, &str)]) -> bool {
    let reads: String = (fields.iter().enumerate())
        .map(|(i, (s, f))| format!("$f{i} = ((struct {s} *)0)->{f}; "))
        .collect();
    let script = format!("BEGIN {{ {reads}exit(); }}");
    Command::new("bpftrace")
        .args(["-e", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Whether the part named `name` was captured.
pub fn has(parts: &[Part], name: &str) -> bool {
    parts.iter().any(|p| p.name == name && p.captured())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every tracepoint a part needs is named once, and the report's names are unique.
    #[test]
    fn parts_are_named_once() {
        let mut names: Vec<_> = NEEDS.iter().map(|n| n.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), NEEDS.len());
        let mut tps: Vec<_> = NEEDS.iter().flat_map(|n| n.tracepoints).collect();
        let all = tps.len();
        tps.sort();
        tps.dedup();
        assert_eq!(tps.len(), all);
    }
}
