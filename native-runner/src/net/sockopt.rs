//! Socket options on the kernel's sockets (the TAP runs' listener, the oracle's writers and
//! readers).

use std::os::fd::AsRawFd;

/// Sets an int option (`setsockopt(2)`).
pub fn setsockopt(
    sock: &impl AsRawFd,
    level: i32,
    name: i32,
    v: i32,
) -> Result<(), std::io::Error> {
    // SAFETY: an int option on our own socket.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            level,
            name,
            (&v as *const i32).cast(),
            std::mem::size_of::<i32>() as libc::socklen_t,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
