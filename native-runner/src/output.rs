//! Where the runner's results go: stdout, stderr, and files it creates (`kernel --out`,
//! `tap --pcap`).
//!
//! Output that cannot be written is an error (exit 2), except a reader that went away
//! (`skblab run big.toml | head`): that ends the run quietly and successfully. Nothing panics
//! on a failed write, stderr included (`2>/dev/full`). A file the runner creates never
//! replaces an existing one unless asked, never through a symlink, and appears only whole:
//! it is written unnamed and named when complete, so an interrupted run (an error, Ctrl-C,
//! SIGKILL) leaves nothing that the next run would refuse without `--force`.

use skblab_core::error::escape_controls;
use std::ffi::CString;
use std::fs::File;
use std::io::{self, ErrorKind, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Writes `text` to stdout and flushes it. A closed pipe is success; any other failure (a full
/// disk, a closed descriptor) is an error naming stdout.
pub fn stdout(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != ErrorKind::BrokenPipe => Err(format!("writing to stdout: {e}")),
        _ => Ok(()),
    }
}

/// Writes `text` to stderr, and says whether it got there. Callers that have nowhere else to
/// say it ignore the answer (the exit code still tells); `eprintln!` would panic instead.
pub fn stderr(text: &str) -> bool {
    let mut err = std::io::stderr().lock();
    err.write_all(text.as_bytes())
        .and_then(|()| err.flush())
        .is_ok()
}

/// Prints an error on one line of stderr; what a stranger wrote in it (a path, a field name)
/// cannot drive the terminal. The caller exits 2, whether stderr took the line or not.
pub fn error(e: &dyn std::fmt::Display) {
    stderr(&format!(
        "skblab: error: {}\n",
        escape_controls(&e.to_string())
    ));
}

/// A file being created for `--out` or `--pcap`: written without a name in its folder
/// (`O_TMPFILE`) and named by [`Output::commit`]. Dropped uncommitted (an error), or lost
/// with the process (a signal), it leaves nothing behind. Where the filesystem has no unnamed
/// files it is written under a hidden temporary name instead, removed when dropped (only a
/// SIGKILL leaves that one). The folder is held open and every name is made relative to it:
/// `kernel` moves to a mount namespace of its own before it commits, where the folder's path
/// is another mount, and a link across mounts fails (EXDEV).
pub struct Output {
    file: File,
    /// The folder, opened when the output was.
    dir: File,
    /// The name in `dir`.
    name: CString,
    /// The hidden temporary name in `dir`, and whether the file has it.
    temp: CString,
    named: bool,
    /// The path as given, for messages.
    path: PathBuf,
    force: bool,
    flag: &'static str,
}

impl Output {
    /// Starts `path` for writing. Without `force` an existing file is refused; with it, it is
    /// replaced when the output is committed. A symlink at `path` is refused either way, so
    /// output never lands somewhere the name does not say, and so is anything but a regular
    /// file: a FIFO would wait for a reader (past any `--timeout`), a device is no file to keep.
    pub fn create(path: &Path, force: bool, flag: &'static str) -> Result<Output, String> {
        check(path, force, flag)?;
        match Output::start(path, force, flag, true) {
            // No O_TMPFILE on this filesystem (EOPNOTSUPP; EISDIR before Linux 3.11).
            Err(e) if matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EISDIR)) => {
                Output::start(path, force, flag, false)
            }
            started => started,
        }
        .map_err(|e| format!("{flag} {}: {e}", path.display()))
    }

    /// Opens the file: unnamed in `path`'s folder, or under a hidden temporary name there.
    fn start(path: &Path, force: bool, flag: &'static str, unnamed: bool) -> io::Result<Self> {
        let folder = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let dir = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_DIRECTORY)
            .open(folder)?;
        let name = path.file_name().ok_or(io::ErrorKind::InvalidInput)?;
        let temp = c_name(format!(
            ".{}.{}.skblab-tmp",
            name.to_string_lossy(),
            std::process::id()
        ))?;
        let (opened, flags) = if unnamed {
            (c_name(".".into())?, libc::O_TMPFILE)
        } else {
            let excl = libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
            (temp.clone(), excl)
        };
        let flags = flags | libc::O_WRONLY | libc::O_CLOEXEC;
        // SAFETY: `opened` is NUL-terminated and outlives the call.
        let fd = unsafe { libc::openat(dir.as_raw_fd(), opened.as_ptr(), flags, 0o644) };
        let file = ok(fd).map(|()| {
            // SAFETY: a descriptor openat just returned, owned by nothing else.
            unsafe { File::from_raw_fd(fd) }
        })?;
        Ok(Output {
            file,
            dir,
            name: CString::new(name.as_bytes())?,
            temp,
            named: !unnamed,
            path: path.to_path_buf(),
            force,
            flag,
        })
    }

    /// Gives the complete file its name (after `fsync`, so a crash leaves old or new, never
    /// half). Without `force`, a file that appeared at the name meanwhile is kept and this is
    /// refused.
    pub fn commit(mut self) -> Result<(), String> {
        let fail = |e: io::Error| {
            let why = match e.kind() {
                io::ErrorKind::AlreadyExists => EXISTS.to_string(),
                _ => e.to_string(),
            };
            format!("{} {}: {why}", self.flag, self.path.display())
        };
        self.file.sync_all().map_err(fail)?;
        if !self.named {
            if !self.force {
                return self.link_unnamed(&self.name).map_err(fail);
            }
            // Replacing takes a name to rename from.
            self.link_unnamed(&self.temp).map_err(fail)?;
            self.named = true;
        }
        let (dir, temp, name) = (self.dir.as_raw_fd(), &self.temp, &self.name);
        // SAFETY (both): the names are NUL-terminated and outlive the call.
        ok(if self.force {
            unsafe { libc::renameat(dir, temp.as_ptr(), dir, name.as_ptr()) }
        } else {
            unsafe { libc::linkat(dir, temp.as_ptr(), dir, name.as_ptr(), 0) }
        })
        .map_err(fail)
    }

    /// Links the unnamed (`O_TMPFILE`) file at `name`; fails if `name` exists. The link goes
    /// through /proc/self/fd: linking the descriptor itself (`AT_EMPTY_PATH`) needs
    /// CAP_DAC_READ_SEARCH.
    fn link_unnamed(&self, name: &CString) -> io::Result<()> {
        let from = c_name(format!("/proc/self/fd/{}", self.file.as_raw_fd()))?;
        let (cwd, dir) = (libc::AT_FDCWD, self.dir.as_raw_fd());
        // SAFETY: both names are NUL-terminated and outlive the call.
        ok(unsafe {
            libc::linkat(
                cwd,
                from.as_ptr(),
                dir,
                name.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        })
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if self.named {
            // SAFETY: `temp` is NUL-terminated and outlives the call. Gone already (renamed
            // into place) is fine.
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), self.temp.as_ptr(), 0) };
        }
    }
}

fn c_name(name: String) -> io::Result<CString> {
    CString::new(name).map_err(|_| io::ErrorKind::InvalidInput.into())
}

/// A system call's result: 0 or more is success, -1 the error in errno.
fn ok(r: libc::c_int) -> io::Result<()> {
    if r >= 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

const EXISTS: &str = "exists; give --force to overwrite it";
const SYMLINK: &str = "is a symlink; output is never written through one";
pub const NOT_A_FILE: &str = "is not a regular file (a FIFO, a device or a folder); name a file";

/// What [`Output::create`] refuses, found without creating anything: for checking flags
/// before a command sets anything up.
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

    /// The names in `dir`, sorted.
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn create_refuses_existing_files_and_symlinks() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let (file, link, new) = (dir.join("kept"), dir.join("link"), dir.join("new"));
        std::fs::write(&file, "precious").unwrap();
        std::os::unix::fs::symlink(&file, &link).unwrap();

        let err = Output::create(&file, false, "--pcap").err().unwrap();
        assert!(err.contains("exists; give --force"), "{err}");
        for force in [false, true] {
            let err = Output::create(&link, force, "--pcap").err().unwrap();
            assert!(err.contains("is a symlink"), "force {force}: {err}");
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious");

        let fifo = dir.join("fifo");
        let c = CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo reads a NUL-terminated path and touches no memory of ours.
        let made = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
        assert!(made == 0 || fifo.exists(), "mkfifo");
        for force in [false, true] {
            for path in [&fifo, &dir.to_path_buf()] {
                let err = Output::create(path, force, "--pcap").err().unwrap();
                assert!(
                    err.contains("is not a regular file"),
                    "force {force}: {err}"
                );
            }
        }

        Output::create(&new, false, "--pcap")
            .unwrap()
            .commit()
            .unwrap();
        assert_eq!(std::fs::read_to_string(&new).unwrap(), "");
        let mut o = Output::create(&file, true, "--pcap").unwrap();
        o.write_all(b"replaced").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "precious");
        o.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "replaced");
        assert_eq!(names(dir), ["fifo", "kept", "link", "new"]);
    }

    /// Unnamed and under a temporary name alike: an output dropped before its commit (a run
    /// that failed midway) leaves nothing, at its name or beside it; committed, it is whole.
    #[test]
    fn only_a_committed_output_appears() {
        for unnamed in [true, false] {
            let tmp = tempfile::tempdir().unwrap();
            let path = tmp.path().join("report.json");
            let big = vec![b'x'; 4 << 20];
            let mut o = Output::start(&path, false, "--out", unnamed).unwrap();
            o.write_all(&big).unwrap();
            assert!(!path.exists(), "unnamed {unnamed}: named before its commit");
            drop(o);
            assert!(names(tmp.path()).is_empty(), "unnamed {unnamed}");

            let mut o = Output::start(&path, false, "--out", unnamed).unwrap();
            o.write_all(&big).unwrap();
            o.commit().unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), big, "unnamed {unnamed}");
            assert_eq!(names(tmp.path()), ["report.json"], "unnamed {unnamed}");
        }
    }

    /// A file that appears at the name while the output is written is kept, and the commit
    /// refused, unless `force`; nothing of ours is left either way.
    #[test]
    fn a_file_that_appears_meanwhile_is_kept_without_force() {
        for unnamed in [true, false] {
            for force in [false, true] {
                let tmp = tempfile::tempdir().unwrap();
                let path = tmp.path().join("out.pcap");
                let mut o = Output::start(&path, force, "--pcap", unnamed).unwrap();
                o.write_all(b"ours").unwrap();
                std::fs::write(&path, "theirs").unwrap();
                let done = o.commit();
                let want = if force { "ours" } else { "theirs" };
                assert_eq!(std::fs::read_to_string(&path).unwrap(), want);
                assert_eq!(done.is_ok(), force, "{done:?}");
                if let Err(e) = done {
                    assert!(e.contains("exists; give --force"), "{e}");
                }
                assert_eq!(names(tmp.path()), ["out.pcap"], "{unnamed} {force}");
            }
        }
    }
}
