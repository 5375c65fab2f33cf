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
//! bound to: bind(2), whose descriptor is read as socket(2)'s). A socket freed
//! (`kmem:kmem_cache_free` of its `struct sock`) is forgotten, with its port: its memory
//! and its port may be another program's next. Every line starts
//! with its kind and `nsecs` (lines reach bpftrace per CPU, out of order).

use super::parts::has;
use crate::kernel::probe::END_PROBE;
use skblab_core::capture::Part;

/// The most frags read of one skb: MAX_SKB_FRAGS's default (include/linux/skbuff.h,
/// CONFIG_MAX_SKB_FRAGS = 17); more are counted, not read.
pub const MAX_FRAGS_READ: usize = 17;
/// __GFP_MOVABLE (include/linux/gfp_types.h): the user pages a task faults in carry it,
/// skb and slab pages do not.
const GFP_MOVABLE: u32 = 0x08;

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
          clear(@socks); clear(@bfd); clear(@msk); clear(@ports); clear(@sport); clear(@ours); clear(@pair); \
          clear(@acpu); clear(@asite); clear(@head); clear(@pg); }\n";
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
  if ($sk != 0) {{ @socks[(uint64)$sk] = 1; {sock} }}
}}
tracepoint:kmem:kmem_cache_free /@socks[(uint64)args->ptr]/ {{
  $sk = (uint64)args->ptr;
  delete(@socks[$sk]); delete(@ports[@sport[$sk]]); delete(@sport[$sk]);
}}
tracepoint:kmem:kmem_cache_free /@msk[(uint64)args->ptr]/ {{ delete(@msk[(uint64)args->ptr]); }}
"#
    )
}

/// Each skb at the device, by its socket; its frags one line each; with `allocs`, the
/// allocation the tree's tasks made of it.
fn send(allocs: bool) -> String {
    let xmit = emit(
        "dev %llu %u %llu %llu %u %u %u %u %u %u %u %u %u %u",
        "nsecs, cpu, (uint64)$skb, $own, $skb->len, $skb->data_len, $hdrs, $skb->truesize, \
         $sh->gso_size, $sh->gso_segs, $sh->nr_frags, $skb->sk->__sk_common.skc_num, $dport, \
         $seq",
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
  $own = @socks[$sk] ? $sk : @msk[$sk];
  if ($own == 0 && $sk != 0 && $skb->sk->sk_protocol == 6) {{
    if (((struct tcp_sock *)$sk)->is_mptcp) {{
      $conn = (uint64)((struct mptcp_subflow_context *)((struct inet_connection_sock *)$sk)->icsk_ulp_data)->conn;
      if (@socks[$conn]) {{ @msk[$sk] = $conn; $own = $conn; }}
    }}
  }}
  if ($own != 0) {{
    @ours[(uint64)$skb] = 1;
    $sh = (struct skb_shared_info *)($skb->head + $skb->end);
    $th = $skb->head + $skb->transport_header;
    $udp = $skb->sk->sk_protocol == 17;
    $thl = $udp ? 8 : (((*(uint8 *)($th + 12)) >> 4) * 4);
    $seq = (uint64)*(uint8 *)($th + 4) << 24 | (uint64)*(uint8 *)($th + 5) << 16 |
           (uint64)*(uint8 *)($th + 6) << 8 | (uint64)*(uint8 *)($th + 7);
    $seq = $udp ? 0 : $seq;
    $hdrs = $skb->transport_header - ((uint64)$skb->data - (uint64)$skb->head) + $thl;
    $port = $skb->sk->__sk_common.skc_num;
    $key = ($udp ? 17 : 6) << 16 | $port;
    @ports[$key] = 1;
    @sport[$own] = $key;
    $dp = $skb->sk->__sk_common.skc_dport;
    $dport = (($dp & 0xff) << 8) | ($dp >> 8);
    $a = $skb->fclone == 2 ? (uint64)$skb - sizeof(struct sk_buff) : (uint64)$skb;
    if ($skb->fclone == 2) {{ @pair[$a] = (uint64)$skb; }}
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
    // A read of 0 bytes is a UDP datagram of none (TCP's end of stream is left out): each
    // UDP read takes one datagram.
    format!(
        "tracepoint:sock:sock_send_length /@socks[(uint64)args->sk] && args->ret > 0/ {{ {sent} }}\n\
         tracepoint:sock:sock_recv_length /@socks[(uint64)args->sk] && (args->flags & 2) == 0 && \
         (args->ret > 0 || (args->ret == 0 && ((struct sock *)args->sk)->sk_protocol == 17))/ {{ {read} }}\n"
    )
}

/// Each skb handed up (ours already, or by its IPv4 destination port before demux), with
/// its destination port when it is UDP (the socket bound there reads it: the UDP sockets'
/// ports are the program's from bind(2)); and each copy recvmsg makes (by `skb->sk`; UDP
/// leaves it unset on its receive queue, so an skb already the program's that one of its
/// tasks copies counts too, its socket named by that thread's next `sock_recv_length`).
/// UDP copies a linear datagram with `copy_linear_skb`, which fires no tracepoint: those
/// copies are inferred from the reads ([`super::lines`]).
fn receive() -> String {
    let rx = emit(
        "up %llu %u %llu %u %u %u %u %s",
        "nsecs, cpu, (uint64)$skb, $skb->len, $skb->alloc_cpu, $proto, $port, probe",
    );
    let copy = emit(
        "copy %llu %u %llu %llu %d %u %d",
        "nsecs, cpu, (uint64)$skb, $own, args->len, $skb->alloc_cpu, tid",
    );
    let bound = emit(
        "bind %llu %llu %u",
        "nsecs, (uint64)$sk, $sk->__sk_common.skc_num",
    );
    let sk = sock_of_fd("@bfd[tid] - 1");
    format!(
        r#"tracepoint:syscalls:sys_enter_bind /@pids[pid]/ {{ @bfd[tid] = (uint64)args->fd + 1; }}
tracepoint:syscalls:sys_exit_bind /@bfd[tid]/ {{
  {sk}
  delete(@bfd[tid]);
  if (args->ret == 0 && @socks[(uint64)$sk] && $sk->sk_protocol == 17) {{
    $key = 17 << 16 | $sk->__sk_common.skc_num;
    @ports[$key] = 1;
    @sport[(uint64)$sk] = $key;
    {bound}
  }}
}}
tracepoint:net:netif_receive_skb,tracepoint:net:napi_gro_receive_entry {{
  $skb = (struct sk_buff *)args->skbaddr;
  $ours = @ours[(uint64)$skb];
  $proto = (uint64)0;
  $port = (uint64)0;
  $ip = $skb->data;
  $v = *(uint8 *)$ip;
  if (($v >> 4) == 4) {{
    $p = *(uint8 *)($ip + 9);
    $proto = (uint64)$p;
    $dp = *(uint16 *)($ip + ($v & 0xf) * 4 + 2);
    $dport = (($dp & 0xff) << 8) | ($dp >> 8);
    if (!$ours && ($p == 6 || $p == 17) && @ports[$p << 16 | $dport]) {{ @ours[(uint64)$skb] = 1; $ours = 1; $port = $dport; }}
    if ($p == 17) {{ $port = $dport; }}
  }}
  if ($ours) {{ {rx} }}
}}
tracepoint:net:napi_gro_frags_entry /@ours[(uint64)args->skbaddr]/ {{
  $skb = (struct sk_buff *)args->skbaddr;
  $proto = (uint64)0;
  $port = (uint64)0;
  {rx}
}}
tracepoint:skb:skb_copy_datagram_iovec {{
  $skb = (struct sk_buff *)args->skbaddr;
  $sk = (uint64)$skb->sk;
  $own = @socks[$sk] ? $sk : @msk[$sk];
  if ($own != 0 || (@pids[pid] && @ours[(uint64)$skb])) {{ @ours[(uint64)$skb] = 1; {copy} }}
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
            &format!("free %llu %u %llu {how} %s"),
            &format!("nsecs, cpu, (uint64)$p, ksym({site})"),
        )
    };
    let consume = free("consume_skb", "args->location");
    let kfree = free("kfree_skb", "args->location");
    let cache = free("kmem_cache_free", "args->call_site");
    let pair = emit(
        "pairfree %llu %u %llu %s",
        "nsecs, cpu, $c, ksym(args->call_site)",
    );
    let stale = emit("stale %llu %llu", "nsecs, (uint64)args->ptr");
    let heads: String = ["kfree", "kmem_cache_free"]
        .iter()
        .map(|how| {
            let line = free(how, "args->call_site");
            format!(
                "tracepoint:kmem:{how} /@head[(uint64)args->ptr]/ {{\n  $p = @head[(uint64)args->ptr];\n  \
                 if (@ours[$p]) {{ {line} delete(@ours[$p]); }}\n  delete(@head[(uint64)args->ptr]);\n}}\n"
            )
        })
        .collect();
    format!(
        r#"tracepoint:skb:consume_skb /@ours[(uint64)args->skbaddr]/ {{ $p = (uint64)args->skbaddr; {consume} delete(@ours[$p]); }}
tracepoint:skb:kfree_skb /@ours[(uint64)args->skbaddr]/ {{ $p = (uint64)args->skbaddr; {kfree} delete(@ours[$p]); }}
tracepoint:kmem:kmem_cache_free /@ours[(uint64)args->ptr]/ {{ $p = (uint64)args->ptr; {cache} delete(@ours[$p]); }}
tracepoint:kmem:kmem_cache_free /@pair[(uint64)args->ptr]/ {{
  $c = @pair[(uint64)args->ptr];
  if (@ours[$c]) {{ {pair} delete(@ours[$c]); }}
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
    #[test]
    fn the_scripts_attach_points_are_read_in_order() {
        let all = script(&[]);
        let points = tracepoints_in(&all);
        assert_eq!(points[0], "sched:sched_process_fork");
        assert_eq!(points.last().unwrap(), "syscalls:sys_enter_getppid");
    }
}
