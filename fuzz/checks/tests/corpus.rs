//! Every committed fuzz input, replayed through its target's checks on stable: the seed
//! corpus (`fuzz/corpus/TARGET/`) and each crash the fuzzers found, minimized
//! (`fuzz/regressions/TARGET/`, named after the bug). Runs in seconds.

use std::path::Path;

/// Replays every file under `fuzz/<kind>/<target>/`, returning how many there were.
fn replay(kind: &str, target: &str, check: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(kind)
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return 0;
    };
    let mut files: Vec<_> = entries
        .map(|e| e.expect("a readable corpus entry").path())
        .collect();
    files.sort();
    for f in &files {
        let data = std::fs::read(f).expect("a readable corpus file");
        let name = f.display().to_string();
        if let Err(e) = std::panic::catch_unwind(|| check(&data)) {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()));
            panic!("{name}: {}", msg.unwrap_or_default());
        }
    }
    files.len()
}

#[test]
fn every_target_replays_its_corpus() {
    for (target, check) in skblab_fuzz::TARGETS {
        let seeds = replay("corpus", target, *check);
        let crashes = replay("regressions", target, *check);
        eprintln!("{target}: {seeds} corpus inputs, {crashes} regressions");
        assert!(seeds > 0, "{target}: no corpus in fuzz/corpus/{target}");
    }
}
