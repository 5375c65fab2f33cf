//! Where the runner's results go: stdout, and files it creates (`tap --pcap`).
//!
//! Output that cannot be written is an error (exit non-zero), except a reader that went away
//! (`skblab run big.toml | head`): that ends the run quietly and successfully. A file the
//! runner creates never replaces an existing one unless asked, and never through a symlink.

use std::fs::File;
use std::io::{ErrorKind, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Writes `text` to stdout and flushes it. A closed pipe is success; any other failure (a full
/// disk, a closed descriptor) is an error naming stdout.
pub fn stdout(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != ErrorKind::BrokenPipe => Err(format!("writing to stdout: {e}")),
        _ => Ok(()),
    }
}

/// Creates `path` for writing. Without `force` an existing file is refused; with it, it is
/// truncated. A symlink at `path` is refused either way (`O_NOFOLLOW`), so output never lands
/// somewhere the name does not say.
pub fn create(path: &Path, force: bool, flag: &str) -> Result<File, String> {
    let fail = |why: &str| format!("{flag} {}: {why}", path.display());
    if path.symlink_metadata().is_ok_and(|m| m.is_symlink()) {
        return Err(fail("is a symlink; output is never written through one"));
    }
    let mut o = std::fs::OpenOptions::new();
    o.write(true).custom_flags(libc::O_NOFOLLOW).mode(0o644);
    if force {
        o.create(true).truncate(true);
    } else {
        o.create_new(true);
    }
    o.open(path).map_err(|e| match e.kind() {
        ErrorKind::AlreadyExists => fail("exists; give --force to overwrite it"),
        // A symlink put there since the check: O_NOFOLLOW fails with ELOOP.
        _ if e.raw_os_error() == Some(libc::ELOOP) => fail("is a symlink"),
        _ => fail(&e.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_refuses_existing_files_and_symlinks() {
        let dir = std::env::temp_dir().join(format!("skblab-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (file, link, new) = (dir.join("kept"), dir.join("link"), dir.join("new"));
        std::fs::write(&file, "precious").unwrap();
        let _ = std::fs::remove_file(&link);
        let _ = std::fs::remove_file(&new);
        std::os::unix::fs::symlink(&file, &link).unwrap();

        let err = create(&file, false, "--pcap").unwrap_err();
        assert!(err.contains("exists; give --force"), "{err}");
        for force in [false, true] {
            let err = create(&link, force, "--pcap").unwrap_err();
            assert!(err.contains("is a symlink"), "force {force}: {err}");
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious");

        create(&new, false, "--pcap").unwrap();
        create(&file, true, "--pcap").unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "",
            "--force truncates"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
