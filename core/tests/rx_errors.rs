//! Bad rx input gets a clear error naming the field and the allowed range; variant strings
//! name either axis.

use skblab_core::{RunOptions, Scenario};

fn run(text: &str, variant: Option<&str>) -> Result<skblab_core::Trace, skblab_core::Error> {
    Scenario::parse(text)?.run(&RunOptions::counters(variant))
}

const HEAD: &str = "mechanism = \"rx\"\n";

#[test]
fn bad_input_names_the_field() {
    // (scenario body after `mechanism = "rx"`, text the error must contain)
    let table = [
        ("[[ops]]\nop = \"arrive\"\nframes = 0\n", "`ops[0].frames` = 0 is out of range: allowed 1..=100000"),
        ("[[ops]]\nop = \"arrive\"\nframes = 2\nlen = 1515\n", "`ops[0].len` = 1515 is out of range: allowed 67..=1514"),
        ("[[ops]]\nop = \"arrive\"\nlens = [100, 20]\n", "`ops[0].lens[1]` = 20 is out of range: allowed 67..=1514"),
        ("[[ops]]\nop = \"arrive\"\nframes = 100000\n", "`ops[0].frames` = 100000 (x 1514 bytes = 151400000 bytes) is out of range: allowed at most 16777216 bytes in one arrive (MAX_OP_BYTES): 11081 frames of 1514 bytes"),
        ("[[ops]]\nop = \"arrive\"\n", "`ops[0]`: arrive takes `frames`"),
        ("[[ops]]\nop = \"recvmsg\"\nbytes = 1\nskbs = 1\n", "`ops[0]`: recvmsg takes `bytes` or `skbs`"),
        ("[[ops]]\nop = \"recvmsg\"\nbytes = 0\n", "`ops[0].bytes` = 0 is out of range"),
        ("[[ops]]\nop = \"release\"\n", "`ops[0]`: release needs a socket the user owns"),
        ("[[ops]]\nop = \"lock\"\n[[ops]]\nop = \"recvmsg\"\n", "`ops[1]`: the socket is owned by the user"),
        ("[[ops]]\nop = \"close\"\n[[ops]]\nop = \"recvmsg\"\n", "`ops[1]`: the socket is closed"),
        ("[[ops]]\nop = \"softirq\"\ncpu = 2\n", "`ops[0].cpu` = 2 is out of range: allowed 0..=1"),
        ("[[ops]]\nop = \"fly\"\n", "parse error at `ops[0].op`: unknown variant `fly`"),
        ("[[ops]]\nop = \"arrive\"\nframes = 1\nsize = 3\n", "parse error at `ops[0].size`: unknown field `size`"),
        ("[[ops]]\nop = \"arrive\"\nframes = 1\nlen = -5\n", "parse error at `ops[0].len`: invalid value: integer `-5`"),
        ("[[ops]]\nop = \"softirq\"\ncpu = \"one\"\n", "parse error at `ops[0].cpu`: invalid type: string"),
        ("[[ops]]\nop = \"arrive\"\nlen = 100\n", "`ops[0]`: arrive takes `frames`"),
        ("[[ops]]\nop = \"lock\"\ncpu = 0\n", "parse error at `ops[0].cpu`: unknown field `cpu`: `lock` takes no fields"),
        ("ops = []\n", "`ops` = 0 is out of range: allowed 1..=10000"),
        ("[socket]\nmss = 0\n[[ops]]\nop = \"close\"\n", "`socket.mss` = 0 is out of range: allowed 1..=9000"),
        ("[nic]\nbudget = 0\n[[ops]]\nop = \"close\"\n", "`nic.budget` = 0 is out of range: allowed 1..=1024"),
        ("[nic]\nhdr_size = 10\n[[ops]]\nop = \"close\"\n", "`nic.hdr_size` = 10 is out of range: allowed 66..=2048"),
        ("[nic]\ndriver = \"magic\"\n[[ops]]\nop = \"close\"\n", "parse error at `nic.driver`"),
        ("[app]\ncpu = 2\n[[ops]]\nop = \"close\"\n", "`app.cpu` = 2 is out of range: allowed 0..=1"),
        ("variant = \"duyck-2013\"\n[[ops]]\nop = \"close\"\n", "unknown variant `duyck-2013`: expected one of pre-2012, duyck-2012, duyck-3.6, modern, none, dumazet-2019, defer-free, or ALLOCATOR+CACHE"),
        ("cache = \"modern\"\n[[ops]]\nop = \"close\"\n", "unknown cache `modern`: expected one of none, dumazet-2019, defer-free"),
    ];
    for (body, want) in table {
        let err = run(&format!("{HEAD}{body}"), None)
            .expect_err(body)
            .to_string();
        assert!(err.contains(want), "{body:?}\n got: {err}\nwant: {want}");
    }
}

#[test]
fn frames_are_capped_over_the_whole_scenario() {
    let ops = "[[ops]]\nop = \"arrive\"\nframes = 100000\nlen = 67\n".repeat(10);
    // Refused before anything runs (the run at the cap is in the runner's engines test).
    let past = format!("{HEAD}{ops}[[ops]]\nop = \"arrive\"\nframes = 1\n");
    let err = run(&past, None).expect_err("past the cap").to_string();
    assert_eq!(
        err,
        "`ops[10].frames` = 1000001 (running total) is out of range: allowed a scenario total \
         of at most 1000000 frames"
    );
}

#[test]
fn an_arrive_past_the_byte_cap_names_its_frames_and_the_cap() {
    let lens = vec!["1514"; 11082].join(", ");
    let err = run(
        &format!("{HEAD}[[ops]]\nop = \"arrive\"\nlens = [{lens}]\n"),
        None,
    )
    .expect_err("past the cap")
    .to_string();
    assert_eq!(
        err,
        "`ops[0].lens` = 11082 frames of 16778148 bytes in all is out of range: allowed at most \
         16777216 bytes in one arrive (MAX_OP_BYTES)"
    );
}

#[test]
fn variant_strings_name_either_axis() {
    let text = format!(
        "{HEAD}variant = \"duyck-2012\"\ncache = \"dumazet-2019\"\n[[ops]]\nop = \"close\"\n"
    );
    // (override, trace variant, era)
    let table = [
        (None, "duyck-2012+dumazet-2019", "v3.5"),
        (Some("none"), "duyck-2012+none", "v3.5"),
        (Some("modern"), "modern+dumazet-2019", "v6.12"),
        (Some("pre-2012+defer-free"), "pre-2012+defer-free", "v3.5"),
        (Some("duyck-3.6"), "duyck-3.6+dumazet-2019", "v3.6"),
    ];
    for (over, name, era) in table {
        let t = run(&text, over).unwrap();
        assert_eq!(t.variant, name);
        assert_eq!(serde_json::to_value(t.era).unwrap(), era);
    }
    // `A+B` is an allocator then a cache, each named once: `modern+modern+modern` ran
    // modern+dumazet-2019 (the last allocator named, the scenario's cache).
    let refused = [
        ("modern+modern+modern", "`variant`: `modern+modern+modern` joins 3 names: name one axis (one of pre-2012, duyck-2012, duyck-3.6, modern, none, dumazet-2019, defer-free), or both as ALLOCATOR+CACHE"),
        ("none+none", "unknown allocator `none`: expected one of pre-2012, duyck-2012, duyck-3.6, modern"),
        ("modern+modern", "unknown cache `modern`: expected one of none, dumazet-2019, defer-free"),
        ("dumazet-2019+modern", "unknown allocator `dumazet-2019`"),
    ];
    for (over, want) in refused {
        let e = run(&text, Some(over)).unwrap_err().to_string();
        assert!(e.contains(want), "{over}: {e}");
    }
    let t = run(&format!("{HEAD}[[ops]]\nop = \"close\"\n"), None).unwrap();
    assert_eq!(
        t.variant, "pre-2012+none",
        "the default is the first of each axis"
    );
}

/// v6.12's tcp_eat_recv_skb hands every read skb to skb_attempt_defer_free: a TCP flow on
/// `modern` that names no rx cache defers the read to the allocating CPU; naming `none` is
/// v6.12 with net.core.skb_defer_max = 0; a UDP read (skb_consume_udp) is never deferred;
/// the older allocators free in recvmsg.
#[test]
fn today_s_tcp_defers_a_read_skb_unless_told_not_to() {
    let ops = "[[ops]]\nop = \"arrive\"\nframes = 3\n[[ops]]\nop = \"recvmsg\"\n";
    // (variant line, override, trace variant, skbs deferred)
    let table = [
        ("variant = \"modern\"\n", None, "modern+defer-free", 1),
        ("variant = \"modern\"\n", Some("none"), "modern+none", 0),
        ("variant = \"modern+none\"\n", None, "modern+none", 0),
        ("", Some("modern"), "modern+defer-free", 1),
        ("variant = \"duyck-3.6\"\n", None, "duyck-3.6+none", 0),
        (
            "variant = \"modern\"\n[socket]\nproto = \"udp\"\n",
            None,
            "modern+none",
            0,
        ),
    ];
    for (line, over, name, deferred) in table {
        let t = run(&format!("{HEAD}{line}{ops}"), over).unwrap();
        assert_eq!(t.variant, name, "{line} {over:?}");
        assert_eq!(
            t.counters.get("skbs_deferred"),
            Some(deferred),
            "{line} {over:?}"
        );
    }
}

#[test]
fn every_variant_pair_within_an_axis_compares() {
    let s = Scenario::parse(include_str!("../../scenarios/rx-skb-cache.toml")).unwrap();
    let names = s.variants();
    assert_eq!(names.len(), 7);
    for axis in [&names[..4], &names[4..]] {
        for a in axis {
            for b in axis {
                let ta = run(&s_text(), Some(a)).unwrap();
                let tb = run(&s_text(), Some(b)).unwrap();
                assert_eq!(ta.variant == tb.variant, a == b, "{a} vs {b}");
            }
        }
    }
    fn s_text() -> String {
        include_str!("../../scenarios/rx-skb-cache.toml").to_string()
    }
}
