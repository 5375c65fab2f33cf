//! The capture's probes: one bpftrace script, written from the parts the kernel has.
//!
//! `$1` is the runner (its end probe), `$2` the root of the traced tree (0: none yet), `$3`
//! the event cap, `$4` the runner's thread that forks the command (0: none): its child is
//! the root.
//! Attribution never asks which task is current in softirq: a process is the tree's when
//! `sched_process_fork` saw its parent in it; a socket is the program's when one of the
//! tree's processes got it from socket(2) or accept(2) (its `struct sock` read through the
//! task's file table at `sys_exit_*`); an skb is the program's when `skb->sk` is one of
//! those sockets (an MPTCP subflow's when its `mptcp_subflow_context->conn` is), or, before
//! demux, when its IPv4 destination port is a port one of them sent from (or, for UDP, was
//! bound to: bind(2) or connect(2), whose descriptor is read as socket(2)'s), in the same network
//! namespace. A socket freed (`kmem:kmem_cache_free` of its `struct sock`) is forgotten,
//! with its port: its memory and its port may be another program's next. That free can go
//! unseen (the kernel skips a probe while another BPF program runs on its CPU), so a socket
//! is also known by its inode number ([`ours`]). Every line starts with its kind and
//! `nsecs` (lines reach bpftrace per CPU, out of order).

use super::parts::has;
use crate::kernel::probe::END_PROBE;
use skblab_core::capture::Part;

/// The most frags read of one skb: MAX_SKB_FRAGS's default (include/linux/skbuff.h,
/// CONFIG_MAX_SKB_FRAGS = 17); more are counted, not read.
pub const MAX_FRAGS_READ: usize = 17;
/// IFF_LOOPBACK (include/uapi/linux/if.h): the device's `flags` on loopback.
const IFF_LOOPBACK: u32 = 0x8;
/// __GFP_MOVABLE (include/linux/gfp_types.h): the user pages a task faults in carry it,
/// skb and slab pages do not.
const GFP_MOVABLE: u32 = 0x08;

/// The frames of a kernel stack kept: enough to reach from a tracepoint in the device or
/// a free up to the socket call or softirq that led there.
pub const STACK_DEPTH: u32 = 24;

/// Sets `$k` to the id of the kernel stack at this probe. Each distinct stack is printed
/// once, when first seen (`stack NS ID`, its frames on the lines after it), so a line names
/// its stack by number and a capture's text does not grow by a stack an event.
fn stack() -> String {
    let k = format!("kstack({STACK_DEPTH})");
    // Ids count per CPU (a probe runs on one CPU at a time), so two CPUs never hand out
    // one id; two that see a new stack at once both print it, under their own ids.
    format!(
        "if (@sid[{k}] == 0) {{ @nst[cpu]++; @sid[{k}] = (uint64)cpu << 32 | @nst[cpu]; \
         printf(\"stack %llu %llu%s\\n\", nsecs, @sid[{k}], {k}); }}\n  \
         $k = @sid[{k}];"
    )
}

/// A printf that counts against the cap (`$3`): past it, only `@over` counts.
fn emit(format: &str, args: &str) -> String {
    format!("if (@n < $3) {{ @n++; printf(\"{format}\\n\", {args}); }} else {{ @over++; }}")
}

/// The script for the parts the kernel has.
pub fn script(parts: &[Part]) -> String {
    let mut s = String::from("BEGIN { if ($2 != 0) { @pids[$2] = 1; } }\n");
    s += &tree();
    let frees = has(parts, "frees");
    if frees {
        // Before the transmit probe, which reads what it records.
        s += "tracepoint:kmem:kmem_cache_alloc /@pids[pid]/ { @acpu[(uint64)args->ptr] = cpu + 1; \
              @asite[(uint64)args->ptr] = (uint64)args->call_site; }\n";
    }
    s += &send(frees);
    if has(parts, "syscall bytes") {
        s += &syscall_bytes();
    }
    if has(parts, "size goal") {
        s += &format!(
            "tracepoint:tcp:tcp_sendmsg_locked /@pids[pid]/ {{ {} }}\n",
            emit("goal %llu %d %d", "nsecs, tid, args->size_goal")
        );
    }
    if has(parts, "mptcp mappings") {
        s += &format!(
            "tracepoint:mptcp:mptcp_sendmsg_frag /@pids[pid] && args->data_len > 0/ {{ {} }}\n",
            emit("map %llu %d %u", "nsecs, tid, args->data_len")
        );
    }
    if has(parts, "receive") {
        s += &receive();
    }
    if frees {
        s += &free_probes();
    }
    if has(parts, "pages") {
        s += &pages();
    }
    s += "END { printf(\"over %d\\n\", @over); clear(@over); clear(@n); clear(@pids); \
          clear(@socks); clear(@bfd); clear(@ports); clear(@sport); clear(@ours); clear(@pair); \
          clear(@acpu); clear(@asite); clear(@head); clear(@pg); \
          clear(@sid); clear(@nst); }\n";
    s + END_PROBE
}

/// Sets `$sk` to the `struct sock` behind descriptor `fd` of the current task (its file
/// table, `file->private_data` a `struct socket`).
fn sock_of_fd(fd: &str) -> String {
    format!(
        "$f = (struct file *)*(uint64 *)((uint64)curtask->files->fdt->fd + 8 * (uint64)({fd}));\n  \
         $sk = ((struct socket *)$f->private_data)->sk;"
    )
}

/// Whether `sk` (a `struct sock` address) is one of the tree's sockets: its address in
/// `@socks` with the inode number its `struct socket` had at socket(2) or accept(2). The
/// number is unique per socket, so an address whose free went unseen and that the cache
/// gave to another program's socket is not taken for ours; an orphaned socket (closed,
/// still sending: no `struct socket`) is known by its address alone.
fn ours(sk: &str) -> String {
    format!(
        "(@socks[{sk}] != 0 && (((struct sock *){sk})->sk_socket == 0 || @socks[{sk}] == \
         ((struct socket_alloc *)((struct sock *){sk})->sk_socket)->vfs_inode.i_ino))"
    )
}

/// Sets `$own` to the tree's socket that `sk` is or serves, 0 if none: a request socket
/// (TCP_NEW_SYN_RECV, 12: its SYN-ACK) serves its listener (`skc_listener`), an MPTCP subflow its
/// `mptcp_subflow_context->conn`. A request or time-wait (6) socket is a `sock_common`
/// only: `sk_protocol` and `is_mptcp` are read of full sockets.
fn owner(sk: &str) -> String {
    let (conn, listener) = (ours("$conn"), ours("$l"));
    format!(
        "$own = {ours} ? {sk} : (uint64)0;\n  \
         $s = (struct sock *){sk};\n  \
         if ($own == 0 && $s != 0) {{\n    \
         $st = $s->__sk_common.skc_state;\n    \
         if ($st == 12) {{\n      \
         $l = (uint64)$s->__sk_common.skc_listener;\n      \
         if ({listener}) {{ $own = $l; }}\n    \
         }} else if ($st != 6 && $s->sk_protocol == 6 && ((struct tcp_sock *)$s)->is_mptcp) {{\n      \
         $conn = (uint64)((struct mptcp_subflow_context *)((struct inet_connection_sock *)$s)->icsk_ulp_data)->conn;\n      \
         if ({conn}) {{ $own = $conn; }}\n    \
         }}\n  }}",
        ours = ours(sk)
    )
}

/// The key under which a port of the tree's is known before demux: the network namespace
/// (its inode number), the protocol and the port, so a program elsewhere on the same port
/// is not taken for ours.
fn port_key(netns: &str, proto: &str, port: &str) -> String {
    format!("((uint64){netns}->ns.inum << 32 | (uint64){proto} << 16 | (uint64){port})")
}

/// The process tree and its sockets.
fn tree() -> String {
    let fork = emit("fork %llu %d %d", "nsecs, pid, args->child_pid");
    let exec = emit("exec %llu %d %s", "nsecs, pid, str(args->filename)");
    let exit = emit("exit %llu %d", "nsecs, pid");
    let sock = emit(
        "sock %llu %d %llu %u",
        "nsecs, pid, (uint64)$sk, $sk->sk_protocol",
    );
    let sk = sock_of_fd("args->ret");
    format!(
        r#"tracepoint:sched:sched_process_fork /@pids[pid] || tid == $4/ {{ @pids[args->child_pid] = 1; {fork} }}
tracepoint:syscalls:sys_enter_getsid /pid == $1/ {{ printf("mark %d\n", cpu); }}
tracepoint:sched:sched_process_exec /@pids[pid]/ {{ {exec} }}
tracepoint:sched:sched_process_exit /@pids[pid] && args->group_dead/ {{ {exit} }}
tracepoint:syscalls:sys_exit_socket,tracepoint:syscalls:sys_exit_accept,tracepoint:syscalls:sys_exit_accept4 /@pids[pid] && args->ret >= 0/ {{
  {sk}
  if ($sk != 0) {{
    @socks[(uint64)$sk] = ((struct socket_alloc *)$f->private_data)->vfs_inode.i_ino;
    {sock}
  }}
}}
tracepoint:kmem:kmem_cache_free /@socks[(uint64)args->ptr]/ {{
  $sk = (uint64)args->ptr;
  delete(@socks[$sk]); delete(@ports[@sport[$sk]]); delete(@sport[$sk]);
}}
"#
    )
}

/// Each skb at the device, by its socket; its frags one line each; with `allocs`, the
/// allocation the tree's tasks made of it.
fn send(allocs: bool) -> String {
    let xmit = emit(
        "dev %llu %u %llu %llu %u %u %u %u %u %u %u %u %u %u %llu",
        "nsecs, cpu, (uint64)$skb, $own, $skb->len, $skb->data_len, $hdrs, $skb->truesize, \
         $sh->gso_size, $sh->gso_segs, $sh->nr_frags, $skb->sk->__sk_common.skc_num, $dport, \
         $seq, $k",
    );
    let alloc = if allocs {
        let line = emit(
            "alloc %llu %llu %u %s",
            "nsecs, (uint64)$skb, @acpu[$a] - 1, ksym(@asite[$a])",
        );
        // A UDP datagram's head, whose free ends it (see `free_probes`).
        format!(
            "if (@acpu[$a]) {{ {line} }}\n    if ($udp) {{ @head[(uint64)$skb->head] = (uint64)$skb; }}"
        )
    } else {
        String::new()
    };
    let owner = owner("$sk");
    let stack = stack();
    let key = port_key(
        "$skb->sk->__sk_common.skc_net.net",
        "($udp ? 17 : 6)",
        "$port",
    );
    let mut frags = String::new();
    for i in 0..MAX_FRAGS_READ {
        let line = emit(
            "frag %llu %llu %llu %u %u %u %d",
            &format!(
                "nsecs, (uint64)$skb, $p{i}, $sh->frags[{i}].offset, $sh->frags[{i}].len, \
                 $o{i}, ((struct page *)$p{i})->_refcount.counter"
            ),
        );
        frags += &format!(
            "  if ($sh->nr_frags > {i}) {{\n    $p{i} = (uint64)$sh->frags[{i}].netmem;\n    \
             $o{i} = ((struct page *)($p{i} + sizeof(struct page)))->compound_head == ($p{i} | 1) \
             ? (((struct folio *)$p{i})->_flags_1 & 0xff) : 0;\n    {line}\n  }}\n"
        );
    }
    format!(
        r#"tracepoint:net:net_dev_start_xmit {{
  $skb = (struct sk_buff *)args->skbaddr;
  $sk = (uint64)$skb->sk;
  {owner}
  if ($own != 0) {{
    @ours[(uint64)$skb] = 1;
    $sh = (struct skb_shared_info *)($skb->head + $skb->end);
    $th = $skb->head + $skb->transport_header;
    // A request socket's SYN-ACK: the listener's, to no connected port of its own.
    $req = $skb->sk->__sk_common.skc_state == 12;
    $udp = !$req && $skb->sk->sk_protocol == 17;
    $thl = $udp ? 8 : (((*(uint8 *)($th + 12)) >> 4) * 4);
    $seq = (uint64)*(uint8 *)($th + 4) << 24 | (uint64)*(uint8 *)($th + 5) << 16 |
           (uint64)*(uint8 *)($th + 6) << 8 | (uint64)*(uint8 *)($th + 7);
    $seq = $udp ? 0 : $seq;
    $hdrs = $skb->transport_header - ((uint64)$skb->data - (uint64)$skb->head) + $thl;
    $port = $skb->sk->__sk_common.skc_num;
    $key = {key};
    @ports[$key] = 1;
    @sport[$own] = $key;
    $dp = $skb->sk->__sk_common.skc_dport;
    $dport = $req ? 0 : (($dp & 0xff) << 8) | ($dp >> 8);
    $a = $skb->fclone == 2 ? (uint64)$skb - sizeof(struct sk_buff) : (uint64)$skb;
    if ($skb->fclone == 2) {{ @pair[$a] = (uint64)$skb; }}
    {stack}
    {alloc}
    {xmit}
{frags}  }}
}}
"#
    )
}

/// sendmsg and recvmsg's byte counts, by socket.
fn syscall_bytes() -> String {
    let bytes = |kind: &str| {
        emit(
            &format!("{kind} %llu %d %llu %d %u"),
            "nsecs, tid, (uint64)args->sk, args->ret, cpu",
        )
    };
    let (sent, read) = (bytes("sent"), bytes("read"));
    let ours = ours("(uint64)args->sk");
    // A read of 0 bytes is a UDP datagram of none (TCP's end of stream is left out): each
    // UDP read takes one datagram.
    format!(
        "tracepoint:sock:sock_send_length /{ours} && args->ret > 0/ {{ {sent} }}\n\
         tracepoint:sock:sock_recv_length /{ours} && (args->flags & 2) == 0 && \
         (args->ret > 0 || (args->ret == 0 && ((struct sock *)args->sk)->sk_protocol == 17))/ {{ {read} }}\n"
    )
}

/// Each skb handed up (ours already, or by its IPv4 destination port before demux), with
/// its IPv4 transport ports (a UDP datagram's destination port names the socket bound there,
/// which reads it; a TCP segment's two name the connection, whose socket receives it even
/// when its bytes are coalesced into another skb and it is never copied); and each copy recvmsg makes (by `skb->sk`; UDP
/// leaves it unset on its receive queue, so an skb already the program's that one of its
/// tasks copies counts too, its socket named by that thread's next `sock_recv_length`).
/// UDP copies a linear datagram with `copy_linear_skb`, which fires no tracepoint: those
/// copies are inferred from the reads ([`super::lines`]).
fn receive() -> String {
    let rx = emit(
        "up %llu %u %llu %u %u %u %u %u %u %llu %s",
        "nsecs, cpu, (uint64)$skb, $skb->len, $skb->alloc_cpu, $proto, $dport, $sport, $lo, $k, \
         probe",
    );
    let copy = emit(
        "copy %llu %u %llu %llu %d %u %d %llu",
        "nsecs, cpu, (uint64)$skb, $own, args->len, $skb->alloc_cpu, tid, $k",
    );
    let bound = emit(
        "bind %llu %llu %u %u",
        "nsecs, (uint64)$sk, $sk->__sk_common.skc_num, \
         ($sk->__sk_common.skc_dport & 0xff) << 8 | $sk->__sk_common.skc_dport >> 8",
    );
    let sk = sock_of_fd("@bfd[tid] - 1");
    let bound_key = port_key(
        "$sk->__sk_common.skc_net.net",
        "17",
        "$sk->__sk_common.skc_num",
    );
    let rx_key = port_key("$skb->dev->nd_net.net", "$p", "$dport");
    let stack = stack();
    let ours = ours("(uint64)$sk");
    let owner = owner("$sk");
    format!(
        r#"tracepoint:syscalls:sys_enter_bind,tracepoint:syscalls:sys_enter_connect /@pids[pid]/ {{ @bfd[tid] = (uint64)args->fd + 1; }}
tracepoint:syscalls:sys_exit_bind,tracepoint:syscalls:sys_exit_connect /@bfd[tid]/ {{
  {sk}
  delete(@bfd[tid]);
  if (args->ret == 0 && {ours} && $sk->sk_protocol == 17) {{
    $key = {bound_key};
    @ports[$key] = 1;
    @sport[(uint64)$sk] = $key;
    {bound}
  }}
}}
tracepoint:net:netif_receive_skb,tracepoint:net:napi_gro_receive_entry {{
  $skb = (struct sk_buff *)args->skbaddr;
  $ours = @ours[(uint64)$skb];
  $proto = (uint64)0;
  $dport = (uint64)0;
  $sport = (uint64)0;
  $lo = ($skb->dev->flags & {IFF_LOOPBACK}) != 0;
  $ip = $skb->data;
  $v = *(uint8 *)$ip;
  if (($v >> 4) == 4) {{
    $p = *(uint8 *)($ip + 9);
    $proto = (uint64)$p;
    $th = $ip + ($v & 0xf) * 4;
    $dport = (uint64)*(uint8 *)($th + 2) << 8 | (uint64)*(uint8 *)($th + 3);
    $sport = (uint64)*(uint8 *)$th << 8 | (uint64)*(uint8 *)($th + 1);
    if (!$ours && ($p == 6 || $p == 17) && @ports[{rx_key}]) {{ @ours[(uint64)$skb] = 1; $ours = 1; }}
  }}
  if ($ours) {{ {stack} {rx} }}
}}
tracepoint:net:napi_gro_frags_entry /@ours[(uint64)args->skbaddr]/ {{
  $skb = (struct sk_buff *)args->skbaddr;
  $proto = (uint64)0;
  $dport = (uint64)0;
  $sport = (uint64)0;
  $lo = 0;
  {stack}
  {rx}
}}
tracepoint:skb:skb_copy_datagram_iovec {{
  $skb = (struct sk_buff *)args->skbaddr;
  $sk = (uint64)$skb->sk;
  {owner}
  if ($own != 0 || (@pids[pid] && @ours[(uint64)$skb])) {{ @ours[(uint64)$skb] = 1; {stack} {copy} }}
}}
"#
    )
}

/// Every free of an skb of ours, with its CPU and call site; allocations in the tree's
/// tasks, kept until the skb they made shows whose it is. A UDP datagram read on the CPU
/// that allocated it goes into that CPU's skb cache (`skb_consume_udp` →
/// `skb_attempt_defer_free` → `kfree_skb_napi_cache`, v6.18), which fires no skb
/// tracepoint: its end is the free of its head (`skb_release_data`), at `kmem:kfree` or
/// `kmem:kmem_cache_free`. After it the cache may hand its address to another's skb.
fn free_probes() -> String {
    let free = |how: &str, site: &str| {
        emit(
            &format!("free %llu %u %llu %llu {how} %s"),
            &format!("nsecs, cpu, (uint64)$p, $k, ksym({site})"),
        )
    };
    let consume = free("consume_skb", "args->location");
    let kfree = free("kfree_skb", "args->location");
    let cache = free("kmem_cache_free", "args->call_site");
    let pair = emit(
        "pairfree %llu %u %llu %llu %s",
        "nsecs, cpu, $c, $k, ksym(args->call_site)",
    );
    let stale = emit("stale %llu %llu", "nsecs, (uint64)args->ptr");
    let stack = stack();
    let heads: String = ["kfree", "kmem_cache_free"]
        .iter()
        .map(|how| {
            let line = free(how, "args->call_site");
            format!(
                "tracepoint:kmem:{how} /@head[(uint64)args->ptr]/ {{\n  $p = @head[(uint64)args->ptr];\n  \
                 if (@ours[$p]) {{ {stack} {line} delete(@ours[$p]); }}\n  delete(@head[(uint64)args->ptr]);\n}}\n"
            )
        })
        .collect();
    format!(
        r#"tracepoint:skb:consume_skb /@ours[(uint64)args->skbaddr]/ {{ $p = (uint64)args->skbaddr; {stack} {consume} delete(@ours[$p]); }}
tracepoint:skb:kfree_skb /@ours[(uint64)args->skbaddr]/ {{ $p = (uint64)args->skbaddr; {stack} {kfree} delete(@ours[$p]); }}
tracepoint:kmem:kmem_cache_free /@ours[(uint64)args->ptr]/ {{ $p = (uint64)args->ptr; {stack} {cache} delete(@ours[$p]); }}
tracepoint:kmem:kmem_cache_free /@pair[(uint64)args->ptr]/ {{
  $c = @pair[(uint64)args->ptr];
  if (@ours[$c]) {{ {stack} {pair} delete(@ours[$c]); }}
  delete(@pair[(uint64)args->ptr]);
}}
tracepoint:kmem:kmem_cache_free /@acpu[(uint64)args->ptr]/ {{ delete(@acpu[(uint64)args->ptr]); delete(@asite[(uint64)args->ptr]); }}
tracepoint:kmem:kmem_cache_alloc /@ours[(uint64)args->ptr]/ {{ {stale} delete(@ours[(uint64)args->ptr]); }}
{heads}"#
    )
}

/// Pages the tree's tasks allocate (less the user pages they fault in), and their frees.
fn pages() -> String {
    let alloc = emit("palloc %llu %u %u", "nsecs, cpu, args->order");
    let free = emit("pfree %llu %u %u", "nsecs, cpu, args->order");
    format!(
        "tracepoint:kmem:mm_page_alloc /@pids[pid] && (args->gfp_flags & {GFP_MOVABLE}) == 0/ {{ @pg[args->pfn] = 1; {alloc} }}\n\
         tracepoint:kmem:mm_page_free /@pg[args->pfn]/ {{ delete(@pg[args->pfn]); {free} }}\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::skipped::tracepoints_in;

    /// Every probe of the script starts its line, so its skips are named by the right
    /// attach point: the first the tree's, the last the end probe's.
    /// A socket is taken for the tree's by its inode number too, never by its address
    /// alone: `@socks` is read only through [`ours`], but where it is set and forgotten.
    #[test]
    fn sockets_are_known_by_inode_not_by_address_alone() {
        let every: Vec<Part> = (super::super::parts::NEEDS.iter())
            .map(|n| Part {
                name: n.name.into(),
                needs: Vec::new(),
                missing: Vec::new(),
            })
            .collect();
        let mut all = script(&every);
        for sk in ["$sk", "$conn", "$l", "(uint64)$sk", "(uint64)args->sk"] {
            assert!(all.contains(&ours(sk)), "{sk}");
            all = all.replace(&ours(sk), "");
        }
        let kept: Vec<&str> = all.lines().filter(|l| l.contains("@socks[")).collect();
        assert_eq!(kept.len(), 3, "{kept:#?}");
        assert!(
            kept[0].trim().starts_with("@socks[(uint64)$sk] = "),
            "{}",
            kept[0]
        );
        assert!(kept[1].starts_with("tracepoint:kmem:kmem_cache_free /@socks[(uint64)args->ptr]/"));
        assert!(
            kept[2].trim().starts_with("delete(@socks[$sk]);"),
            "{}",
            kept[2]
        );
    }

    /// Planted on the running kernel: this process's sockets recorded with an inode number
    /// one past their own, as a socket looks whose free went unseen once the cache gave its
    /// address to another; its sends are not counted. Recorded with their own, they are.
    /// Unix datagram sockets named in the abstract namespace: nothing leaves the process
    /// or touches a file. Root and bpftrace, as the runner's kernel tests; the test runs
    /// again in a child with a mount namespace of its own, where tracefs is mounted (a
    /// process with threads cannot unshare one).
    #[test]
    fn a_socket_at_an_address_another_took_is_not_ours() {
        use crate::kernel::probe::{preflight, Tracer};
        use std::os::linux::net::SocketAddrExt;
        use std::os::unix::net::{SocketAddr, UnixDatagram};
        const NAME: &str = "trace::script::tests::a_socket_at_an_address_another_took_is_not_ours";
        if let Err(why) = preflight() {
            assert!(
                std::env::var("SKBLAB_ALLOW_NO_TAP").as_deref() == Ok("1"),
                "{why}; or set SKBLAB_ALLOW_NO_TAP=1 to skip"
            );
            return eprintln!("SKIPPED: {why} (SKBLAB_ALLOW_NO_TAP=1)");
        }
        if std::env::var_os("SKBLAB_TRACEFS_MOUNTED").is_none() {
            let o = std::process::Command::new("unshare")
                .args(["--mount", "--", "sh", "-c"])
                .arg(
                    "mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs \
                     /sys/kernel/tracing && exec \"$0\" --exact \"$1\" --nocapture",
                )
                .arg(std::env::current_exe().unwrap())
                .arg(NAME)
                .env("SKBLAB_TRACEFS_MOUNTED", "1")
                .output()
                .unwrap();
            let out = String::from_utf8_lossy(&o.stdout);
            assert!(
                o.status.success() && out.contains("1 passed"),
                "{out}{}",
                String::from_utf8_lossy(&o.stderr)
            );
            return;
        }
        for plant in [0, 1] {
            let script = format!(
                "tracepoint:syscalls:sys_exit_socket /pid == $1 && args->ret >= 0/ {{\n  {}\n  \
                 @socks[(uint64)$sk] = ((struct socket_alloc *)$f->private_data)->vfs_inode.i_ino + {plant};\n}}\n\
                 tracepoint:sock:sock_send_length /{}/ {{ printf(\"sent %d\\n\", args->ret); }}\n\
                 END {{ clear(@socks); }}\n{END_PROBE}",
                sock_of_fd("args->ret"),
                ours("(uint64)args->sk")
            );
            let tracer = Tracer::start(&script).unwrap();
            let name = format!("skblab-ours-{}-{plant}", std::process::id());
            let at = SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
            let (rx, tx) = (
                UnixDatagram::bind_addr(&at).unwrap(),
                UnixDatagram::unbound().unwrap(),
            );
            for _ in 0..3 {
                tx.send_to_addr(&[0; 4099], &at).unwrap();
                rx.recv(&mut [0; 4099]).unwrap();
            }
            let lines = tracer.finish_lossy().unwrap().0;
            let sent = lines.iter().filter(|l| *l == "sent 4099").count();
            if plant == 0 {
                assert!(sent > 0, "its own number: {lines:?}");
            } else {
                assert_eq!(sent, 0, "another's number: {lines:?}");
            }
        }
    }

    #[test]
    fn the_scripts_attach_points_are_read_in_order() {
        let all = script(&[]);
        let points = tracepoints_in(&all);
        assert_eq!(points[0], "sched:sched_process_fork");
        assert_eq!(points.last().unwrap(), "syscalls:sys_enter_getppid");
    }
}
