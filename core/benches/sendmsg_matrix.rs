//! The seed's matrix on the model: for each variant, 1..256 sockets x writes of 256 B,
//! 4 KiB, 16 KiB, 64 KiB, 1 GiB per cell, counters only; prints modelled GiB/s per cell and
//! the total time. Then times a 10,000-step traced run.
//!
//! `cargo bench -p skblab-core --bench sendmsg_matrix` (add `-- --quick` for 64 MiB cells).

use skblab_core::send::{
    matrix_config, run_cell, SendOp, SendScenario, Variant, MATRIX_SOCKETS, MATRIX_TOTAL,
    MATRIX_WRITES,
};
use skblab_core::{RunOptions, Scenario};
use std::time::Instant;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let total = if quick {
        MATRIX_TOTAL / 16
    } else {
        MATRIX_TOTAL
    };
    for &v in Variant::ALL {
        matrix(v, total);
    }
    traced_10k();
}

fn matrix(v: Variant, total: u64) {
    let cfg = matrix_config(v);
    println!(
        "\n{} ({} MiB per cell), modelled GiB/s:",
        v.name(),
        total >> 20
    );
    print!("{:>8}", "sockets");
    for w in MATRIX_WRITES {
        print!("{:>10}", size(w));
    }
    println!();
    let start = Instant::now();
    for n in MATRIX_SOCKETS {
        print!("{n:>8}");
        for w in MATRIX_WRITES {
            let t = Instant::now();
            let cell = run_cell(&cfg, n, w, total);
            let secs = t.elapsed().as_secs_f64();
            assert_eq!(
                cell.counters.wire_bytes, cell.bytes,
                "every byte reaches the wire"
            );
            print!("{:>10.1}", cell.bytes as f64 / (1u64 << 30) as f64 / secs);
        }
        println!();
    }
    println!("matrix total: {:.3} s", start.elapsed().as_secs_f64());
}

fn traced_10k() {
    let ops: Vec<SendOp> = (0..10_000)
        .map(|i| match i % 4 {
            0 | 1 => SendOp::Sendmsg {
                bytes: Some(3000),
                iov: None,
                eor: false,
                count: 1,
            },
            2 => SendOp::Transmit,
            _ => SendOp::Ack { bytes: None },
        })
        .collect();
    let s = Scenario::Sendmsg(SendScenario {
        title: None,
        variant: None,
        consts: Default::default(),
        socket: Default::default(),
        device: Default::default(),
        ops,
    });
    for v in Variant::ALL {
        let opts = RunOptions::traced(Some(v.name()));
        let t = Instant::now();
        let trace = s.run(&opts).expect("valid scenario");
        println!(
            "10,000-step traced run, {}: {:.1} ms ({} steps)",
            v.name(),
            t.elapsed().as_secs_f64() * 1e3,
            trace.steps.len()
        );
    }
}

fn size(w: u32) -> String {
    if w >= 1024 {
        format!("{}K", w >> 10)
    } else {
        format!("{w}")
    }
}
