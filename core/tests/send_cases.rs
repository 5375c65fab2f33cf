//! Exact layouts derived by hand from the kernel code, one row per case.
//!
//! A layout lists the write queue's skbs after the writes, each as its linear bytes followed
//! by `+size` per frag: "1448" is 1448 linear bytes and no frag, "0+4096+756" no linear
//! bytes and two frags. Constants: 2.6.33 MAX_TCP_HEADER 304, SKB_DATA_ALIGN to 64,
//! sizeof(skb_shared_info) 496 (so a head of `end` bytes kmallocs `end + 496`), pgbreak
//! 3280, 4 KiB pages, MAX_SKB_FRAGS 18; v6.12 heads 640 bytes from the small-head cache,
//! 32 KiB socket page frags.

use skblab_core::{run_text, RunOptions, Scenario};

struct Case {
    name: &'static str,
    variant: &'static str,
    /// `[socket]`, `[device]` and `[consts]` TOML lines.
    setup: &'static str,
    /// Payload of each sendmsg (queue held: device.drain = false unless `setup` says so).
    writes: &'static [u64],
    /// Every write carries MSG_EOR.
    eor: bool,
    /// The write queue after the writes.
    layout: &'static str,
    /// Counters after the writes, a transmit, an ack of everything and close.
    counters: &'static [(&'static str, u64)],
}

const SG_NOGSO: &str = "[device]\nsg = true\ngso = false\n";
const SG_GSO: &str = "[device]\nsg = true\ngso = true\n";
const NOSG: &str = "[device]\nsg = false\ngso = false\n";
const JUMBO_SG_NOGSO: &str = "[socket]\nmss = 8948\n[device]\nsg = true\ngso = false\nmtu = 9000\n";

const CASES: &[Case] = &[
    // select_size: SG without GSO and mss 1448 < pgbreak -> 1448 linear bytes per skb;
    // sk_stream_alloc_skb(1448): SKB_DATA_ALIGN(1448 + 304) = 1792, kmalloc 1792 + 496.
    Case {
        name: "pre-2010 sg-nogso: MSS-sized linear skbs",
        variant: "pre-2010",
        setup: SG_NOGSO,
        eor: false,
        writes: &[4096],
        layout: "1448 1448 1200",
        counters: &[
            ("skbs_allocated", 3),
            ("skb_head_bytes", 3 * 2288),
            ("linear_bytes", 4096),
            ("frag_bytes", 0),
            ("pages_allocated", 0),
            ("wire_segments", 3),
        ],
    },
    // After the patch: size 0 -> head SKB_DATA_ALIGN(304) = 320, kmalloc 816; every byte
    // goes to TCP_PAGE, one 4 KiB page shared by the three skbs (exactly full).
    Case {
        name: "kumar-2010 sg-nogso: frag-only skbs",
        variant: "kumar-2010",
        setup: SG_NOGSO,
        eor: false,
        writes: &[4096],
        layout: "0+1448 0+1448 0+1200",
        counters: &[
            ("skbs_allocated", 3),
            ("skb_head_bytes", 3 * 816),
            ("linear_bytes", 0),
            ("frag_bytes", 4096),
            ("pages_allocated", 1),
            ("pages_freed", 1),
        ],
    },
    // With GSO select_size already gave 0: one 65160-byte goal skb; each fresh page is
    // filled to its end, so the socket never keeps it (off + copy == PAGE_SIZE).
    Case {
        name: "pre-2010 sg-gso: already frag-only",
        variant: "pre-2010",
        setup: SG_GSO,
        eor: false,
        writes: &[16384],
        layout: "0+4096+4096+4096+4096",
        counters: &[
            ("skb_head_bytes", 816),
            ("pages_allocated", 4),
            ("frags", 4),
            ("wire_segments", 12),
            ("psh_segments", 1),
        ],
    },
    Case {
        name: "kumar-2010 sg-gso: unchanged",
        variant: "kumar-2010",
        setup: SG_GSO,
        eor: false,
        writes: &[16384],
        layout: "0+4096+4096+4096+4096",
        counters: &[
            ("skb_head_bytes", 816),
            ("pages_allocated", 4),
            ("frags", 4),
        ],
    },
    // Today: one 32 KiB page frag; 65536 bytes fill page 0 (one frag), then page 1 up to the
    // 65160 goal, and 376 bytes start the next skb on page 1. After close page 1 is still
    // the task frag's (current->task_frag outlives the socket): one page freed, one live.
    Case {
        name: "modern sg-gso: 32 KiB page frags",
        variant: "modern",
        setup: SG_GSO,
        eor: false,
        writes: &[65536],
        layout: "0+32768+32392 0+376",
        counters: &[
            ("skb_head_bytes", 2 * 640),
            ("pages_allocated", 2),
            ("frags", 3),
            ("wire_segments", 46),
            ("pages_freed", 1),
            ("pages_live", 1),
            ("page_refs", 1),
        ],
    },
    // Jumbo: 8948 lies in [3280, 3280 + 17 * 4096] -> select_size gives pgbreak 3280; head
    // SKB_DATA_ALIGN(3280 + 304) = 3584, kmalloc 4080 (fits a page). skb 0: 3280 linear,
    // a fresh page filled (4096, the socket does not keep it), 1572 on the next page (kept);
    // skb 1: 3280 linear, 2524 to the end of that page, 1632 on a third page.
    Case {
        name: "pre-2010 jumbo: pgbreak",
        variant: "pre-2010",
        setup: JUMBO_SG_NOGSO,
        eor: false,
        writes: &[16384],
        layout: "3280+4096+1572 3280+2524+1632",
        counters: &[
            ("skb_head_bytes", 2 * 4080),
            ("linear_bytes", 6560),
            ("frag_bytes", 9824),
            ("pages_allocated", 3),
        ],
    },
    Case {
        name: "kumar-2010 jumbo: no linear part",
        variant: "kumar-2010",
        setup: JUMBO_SG_NOGSO,
        eor: false,
        writes: &[16384],
        layout: "0+4096+4096+756 0+3340+4096",
        counters: &[
            ("skb_head_bytes", 2 * 816),
            ("linear_bytes", 0),
            ("pages_allocated", 4),
        ],
    },
    // Non-SG: select_size gives the MSS; no frags, nothing for the driver to do.
    Case {
        name: "pre-2010 nosg: linear, no linearize",
        variant: "pre-2010",
        setup: NOSG,
        eor: false,
        writes: &[4096],
        layout: "1448 1448 1200",
        counters: &[
            ("linear_bytes", 4096),
            ("linearize_copies", 0),
            ("pages_allocated", 0),
        ],
    },
    // Non-SG after the patch: frags anyway; skb_linearize per skb: pskb_expand_head(0, eat +
    // 128) of a 320-byte head: SKB_DATA_ALIGN(320 + 1448 + 128) = 1920 (+ 496), twice, and
    // SKB_DATA_ALIGN(320 + 1200 + 128) = 1664 (+ 496): 2 * 2416 + 2160.
    Case {
        name: "kumar-2010 nosg: the copy moves to skb_linearize",
        variant: "kumar-2010",
        setup: NOSG,
        eor: false,
        writes: &[4096],
        layout: "0+1448 0+1448 0+1200",
        counters: &[
            ("sendmsg_copy_bytes", 4096),
            ("linearize_copies", 3),
            ("linearize_copy_bytes", 4096),
            ("linearize_head_bytes", 2 * 2416 + 2160),
        ],
    },
    // Today TCP always has GSO: size_goal 65160 even without SG, so one 4096-byte skb;
    // software GSO (skb_segment) copies each segment into a new linear skb: heads of
    // SKB_DATA_ALIGN(320 + 1448) + 320 = 2112 (twice) and SKB_DATA_ALIGN(320 + 1200) + 320.
    Case {
        name: "modern nosg: software GSO copies each segment",
        variant: "modern",
        setup: NOSG,
        eor: false,
        writes: &[4096],
        layout: "0+4096",
        counters: &[
            ("skbs_allocated", 1),
            ("linearize_copies", 3),
            ("linearize_copy_bytes", 4096),
            ("linearize_head_bytes", 2 * 2112 + 1856),
            ("wire_segments", 3),
        ],
    },
    // A write of one MSS or less stays a non-GSO skb: plain skb_linearize,
    // SKB_DATA_ALIGN(320 + 1000 + 128) + 320 = 1472 + 320.
    Case {
        name: "modern nosg: skb_linearize for a small skb",
        variant: "modern",
        setup: NOSG,
        eor: false,
        writes: &[1000],
        layout: "0+1000",
        counters: &[("linearize_copies", 1), ("linearize_head_bytes", 1792)],
    },
    // The second call appends to the held tail and clears its PSH; tcp_push sets it again.
    // GSO cuts the 2000-byte skb into 1448 + 552, PSH only on the last.
    Case {
        name: "pre-2010 held writes share an skb, one PSH",
        variant: "pre-2010",
        setup: SG_GSO,
        eor: false,
        writes: &[1000, 1000],
        layout: "0+2000",
        counters: &[
            ("skbs_allocated", 1),
            ("frags", 1),
            ("wire_segments", 2),
            ("psh_segments", 1),
        ],
    },
    // MAX_SKB_FRAGS = 2: the third frag would not fit; tcp_mark_push and a new skb.
    Case {
        name: "kumar-2010 MAX_SKB_FRAGS reached",
        variant: "kumar-2010",
        setup: "[device]\nsg = true\ngso = true\n[consts]\nmax_skb_frags = 2\n",
        eor: false,
        writes: &[16384],
        layout: "0+4096+4096 0+4096+4096",
        counters: &[("max_frags_per_skb", 2), ("psh_segments", 2)],
    },
    // max_window 20000: size_goal bound to half (10000) -> 6 * 1448 = 8688. forced_push
    // once write_seq passes pushed_seq + 10000: at 17376, 34752, 52128; tcp_push at the end.
    Case {
        name: "pre-2010 forced_push with a small peer window",
        variant: "pre-2010",
        setup: "[socket]\nmax_window = 20000\n[device]\nsg = true\ngso = true\n",
        eor: false,
        writes: &[65536],
        layout: "0+4096+4096+496 0+3600+4096+992 0+3104+4096+1488 0+2608+4096+1984 \
                 0+2112+4096+2480 0+1616+4096+2976 0+1120+4096+3472 0+624+4096",
        counters: &[("psh_segments", 4), ("skbs_allocated", 8)],
    },
    // MSG_EOR (today only): the tail may not be appended to, so each write starts an skb.
    Case {
        name: "modern MSG_EOR: no collapse",
        variant: "modern",
        setup: SG_GSO,
        eor: true,
        writes: &[1000, 1000],
        layout: "0+1000 0+1000",
        counters: &[("skbs_allocated", 2), ("frags", 2), ("psh_segments", 2)],
    },
    // 2.6.33 has no MSG_EOR for TCP: the second write joins the first skb.
    Case {
        name: "kumar-2010 ignores MSG_EOR",
        variant: "kumar-2010",
        setup: SG_GSO,
        eor: true,
        writes: &[1000, 1000],
        layout: "0+2000",
        counters: &[("skbs_allocated", 1)],
    },
    // A draining device: tcp_push at the end of each call sends the tail, so the next
    // write cannot join it (sent skbs wait for their ack on the queue).
    Case {
        name: "pre-2010 draining device: one skb per write",
        variant: "pre-2010",
        setup: "[device]\nsg = true\ngso = true\ndrain = true\n",
        eor: false,
        writes: &[1000, 1000],
        layout: "0+1000 0+1000",
        counters: &[("skbs_allocated", 2), ("psh_segments", 2)],
    },
    // net.core.high_order_alloc_disable: order-0 socket pages; each refill finds fewer than
    // 32 bytes left and the page shared with a frag, so it moves on: one page per 4 KiB.
    Case {
        name: "modern order-0 page frags",
        variant: "modern",
        setup: "[device]\nsg = true\ngso = true\nhigh_order_alloc_disable = true\n",
        eor: false,
        writes: &[16384],
        layout: "0+4096+4096+4096+4096",
        counters: &[("pages_allocated", 4), ("frags", 4)],
    },
];

fn scenario(c: &Case, held_ops_only: bool) -> String {
    let mut s = format!(
        "mechanism = \"sendmsg\"\nvariant = \"{}\"\n{}",
        c.variant, c.setup
    );
    for w in c.writes {
        s += &format!("[[ops]]\nop = \"sendmsg\"\nbytes = {w}\neor = {}\n", c.eor);
    }
    if !held_ops_only {
        s += "[[ops]]\nop = \"transmit\"\n[[ops]]\nop = \"ack\"\n[[ops]]\nop = \"close\"\n";
    }
    s
}

fn layout(text: &str) -> String {
    let t = run_text(text, &RunOptions::default()).expect("case runs");
    let q = &t.steps.last().expect("a step").state.queues[0];
    let skbs: Vec<String> = q
        .skbs
        .iter()
        .map(|s| {
            let frags: String = s.frags.iter().map(|f| format!("+{}", f.size)).collect();
            format!("{}{frags}", s.linear_len)
        })
        .collect();
    skbs.join(" ")
}

#[test]
fn hand_derived_layouts() {
    for c in CASES {
        let want: Vec<&str> = c.layout.split_whitespace().collect();
        assert_eq!(layout(&scenario(c, true)), want.join(" "), "{}", c.name);
    }
}

#[test]
fn hand_derived_counters() {
    for c in CASES {
        let s = Scenario::parse(&scenario(c, false)).expect("parses");
        let t = s.run(&RunOptions::counters(None)).expect("runs");
        for (name, want) in c.counters {
            assert_eq!(t.counters.get(name), Some(*want), "{}: {name}", c.name);
        }
    }
}

/// One write of 1,000 iovecs of 40 bytes on a held queue. tcp_sendmsg_locked (v6.12) copies
/// from the iov_iter as one stream: the first pass fills the 32 KiB page frag to its end
/// (32,768 bytes), the refill (`skb_page_frag_refill(32, ...)`) finds no room and takes a
/// new page for the other 7,232. A loop per iovec, as 2.6.33 and 2.6.34 had, copies 40
/// bytes a pass and refills before each: at offset 32,760 fewer than 32 bytes are left, so
/// the first page would hold 32,760 and the second 7,240. In 2.6.33 (4 KiB TCP_PAGE, a
/// pass cut at the page's end, no minimum room) the iovec loop fills every page whole:
/// nine pages and 3,136 bytes.
#[test]
fn iovecs_are_one_stream_in_v6_12_and_one_at_a_time_in_2_6_33() {
    let iov = vec!["40"; 1000].join(", ");
    let text = |variant: &str| {
        format!(
            "mechanism = \"sendmsg\"\nvariant = \"{variant}\"\n\
             [[ops]]\nop = \"sendmsg\"\niov = [{iov}]\n"
        )
    };
    assert_eq!(layout(&text("modern")), "0+32768+7232");
    let pages = format!("0{}+3136", "+4096".repeat(9));
    assert_eq!(layout(&text("kumar-2010")), pages);
}
