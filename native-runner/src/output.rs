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
/// somewhere the name does not say, and so is anything but a regular file: opening a FIFO
/// would wait for a reader (past any `--timeout`), a device is no file to keep.
pub fn create(path: &Path, force: bool, flag: &str) -> Result<File, String> {
    check(path, force, flag)?;
    let fail = |why: &str| format!("{flag} {}: {why}", path.display());
    let mut o = std::fs::OpenOptions::new();
    // O_NONBLOCK: a FIFO put there since the check fails at once (ENXIO) instead of waiting;
    // writes to a regular file never wait on it.
    o.write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .mode(0o644);
    if force {
        o.create(true).truncate(true);
    } else {
        o.create_new(true);
    }
    let file = o.open(path).map_err(|e| match e.kind() {
        ErrorKind::AlreadyExists => fail(EXISTS),
        // A symlink put there since the check: O_NOFOLLOW fails with ELOOP.
        _ if e.raw_os_error() == Some(libc::ELOOP) => fail(SYMLINK),
        _ if e.raw_os_error() == Some(libc::ENXIO) => fail(NOT_A_FILE),
        _ => fail(&e.to_string()),
    })?;
    match file.metadata() {
        Ok(m) if m.is_file() => Ok(file),
        _ => Err(fail(NOT_A_FILE)),
    }
}

const EXISTS: &str = "exists; give --force to overwrite it";
const SYMLINK: &str = "is a symlink; output is never written through one";
const NOT_A_FILE: &str = "is not a regular file (a FIFO, a device or a folder); name a file";

/// What [`create`] refuses, found without creating anything: for checking flags before a
/// command sets anything up.
pub fn check(path: &Path, force: bool, flag: &str) -> Result<(), String> {
    let why = match path.symlink_metadata() {
        Ok(m) if m.is_symlink() => SYMLINK,
        Ok(m) if !m.is_file() => NOT_A_FILE,
        Ok(_) if !force => EXISTS,
        _ => return Ok(()),
    };
    Err(format!("{flag} {}: {why}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_refuses_existing_files_and_symlinks() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let (file, link, new) = (dir.join("kept"), dir.join("link"), dir.join("new"));
        std::fs::write(&file, "precious").unwrap();
        std::os::unix::fs::symlink(&file, &link).unwrap();

        let err = create(&file, false, "--pcap").unwrap_err();
        assert!(err.contains("exists; give --force"), "{err}");
        for force in [false, true] {
            let err = create(&link, force, "--pcap").unwrap_err();
            assert!(err.contains("is a symlink"), "force {force}: {err}");
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious");

        let fifo = dir.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads a NUL-terminated path and touches no memory of ours.
        let made = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
        assert!(made == 0 || fifo.exists(), "mkfifo");
        for force in [false, true] {
            let err = create(&fifo, force, "--pcap").unwrap_err();
            assert!(
                err.contains("is not a regular file"),
                "force {force}: {err}"
            );
            let err = create(dir, force, "--pcap").unwrap_err();
            assert!(
                err.contains("is not a regular file"),
                "force {force}: {err}"
            );
        }

        create(&new, false, "--pcap").unwrap();
        create(&file, true, "--pcap").unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "",
            "--force truncates"
        );
    }
}
