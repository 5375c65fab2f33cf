//! The private network namespace and the TAP device inside it.
//!
//! Everything happens in a namespace this process creates with `unshare(CLONE_NEWNET)` before
//! any thread exists (a namespace change moves only the calling thread; threads started later
//! inherit it). The namespace, its TAP and its addresses vanish when the process exits: nothing
//! ever touches the host's network. Addresses come from 192.0.2.0/24 (TEST-NET-1, RFC 5737).

use super::wire::Ends;
use std::ffi::CString;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The kernel side of the TAP (the address the kernel's sockets use).
pub const KERNEL_IP: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
/// The runner's userspace TCP endpoint.
pub const RUNNER_IP: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 2);
/// A locally administered MAC for the runner.
pub const RUNNER_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x02];
/// The runner's end of a connection from `port` to the kernel's `kernel_port` (the kernel's
/// MAC is learnt by ARP).
pub const fn runner_ends(port: u16, kernel_port: u16) -> Ends {
    Ends {
        mac: RUNNER_MAC,
        peer_mac: [0; 6],
        ip: RUNNER_IP,
        peer_ip: KERNEL_IP,
        port,
        peer_port: kernel_port,
    }
}

/// The TAP's name inside the namespace.
pub const TAP_NAME: &str = "skbtap0";

/// TUN_F_CSUM | TUN_F_TSO4: the "device" takes partial checksums and TCPv4 super-packets.
const TUN_F_CSUM_TSO4: libc::c_uint = libc::TUN_F_CSUM | libc::TUN_F_TSO4;

/// `struct ifreq`: a name and a 24-byte union (sockaddr, flags, ...).
#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    data: [u8; 24],
}

impl IfReq {
    fn new(name: &str) -> IfReq {
        let mut r = IfReq {
            name: [0; libc::IFNAMSIZ],
            data: [0; 24],
        };
        r.name[..name.len()].copy_from_slice(name.as_bytes());
        r
    }

    fn set_flags(&mut self, flags: libc::c_short) {
        self.data[..2].copy_from_slice(&flags.to_ne_bytes());
    }

    fn flags(&self) -> libc::c_short {
        libc::c_short::from_ne_bytes([self.data[0], self.data[1]])
    }

    fn set_addr(&mut self, ip: Ipv4Addr) {
        let sin = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: 0,
            sin_addr: libc::in_addr {
                s_addr: u32::from(ip).to_be(),
            },
            sin_zero: [0; 8],
        };
        // SAFETY: sockaddr_in is 16 plain bytes and fits the 24-byte union.
        let bytes: [u8; 16] = unsafe { std::mem::transmute(sin) };
        self.data[..16].copy_from_slice(&bytes);
    }
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", io::Error::last_os_error())
}

/// Says exactly what this machine lacks for a TAP run, if anything.
pub fn preflight() -> Result<(), String> {
    let mut missing = Vec::new();
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        missing.push("root (CAP_SYS_ADMIN for unshare(CLONE_NEWNET), CAP_NET_ADMIN for the TAP)");
    }
    let tun = CString::new("/dev/net/tun").expect("no NUL");
    // SAFETY: a valid C string.
    if unsafe { libc::access(tun.as_ptr(), libc::R_OK | libc::W_OK) } != 0 {
        missing.push("/dev/net/tun (read-write): the tun module or the device node");
    }
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "a TAP run needs {}; nothing was run",
            missing.join(" and ")
        ))
    }
}

/// Threads in this process, from /proc/self/status.
fn thread_count() -> Option<u32> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Moves the process into a new, private network namespace. Must run before any thread
/// starts: a thread started earlier would stay in the host's namespace.
pub fn enter_private_netns() -> Result<(), String> {
    if let Some(n) = thread_count().filter(|&n| n != 1) {
        return Err(format!(
            "model bug: the TAP runner must unshare before any thread starts ({n} threads running)"
        ));
    }
    // SAFETY: unshare has no memory preconditions.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(os_err("unshare(CLONE_NEWNET)"));
    }
    Ok(())
}

/// An AF_INET datagram socket, the handle interface ioctls go through.
fn ctl_socket() -> Result<OwnedFd, String> {
    // SAFETY: plain socket(2).
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(os_err("socket(AF_INET)"));
    }
    // SAFETY: fd is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn ioctl(fd: &OwnedFd, req: libc::c_ulong, r: &mut IfReq, what: &str) -> Result<(), String> {
    // SAFETY: r is a valid ifreq for these requests.
    if unsafe { libc::ioctl(fd.as_raw_fd(), req as _, r as *mut IfReq) } != 0 {
        return Err(os_err(what));
    }
    Ok(())
}

/// Turns NETIF_F_GRO on or off for `name`, as `ethtool -K NAME gro on|off` does
/// (SIOCETHTOOL, ETHTOOL_SGRO: `ethtool_set_one_feature`, net/ethtool/ioctl.c).
pub fn set_gro(name: &str, on: bool) -> Result<(), String> {
    /// ETHTOOL_SGRO (include/uapi/linux/ethtool.h).
    const ETHTOOL_SGRO: u32 = 0x2c;
    let mut value = [ETHTOOL_SGRO, u32::from(on)];
    let mut r = IfReq::new(name);
    r.data[..8].copy_from_slice(&(value.as_mut_ptr() as u64).to_ne_bytes());
    ioctl(
        &ctl_socket()?,
        libc::SIOCETHTOOL,
        &mut r,
        &format!("ETHTOOL_SGRO {name}"),
    )
}

/// Brings an interface up (IFF_UP | IFF_RUNNING kept from its flags).
pub fn link_up(name: &str) -> Result<(), String> {
    let s = ctl_socket()?;
    let mut r = IfReq::new(name);
    ioctl(&s, libc::SIOCGIFFLAGS, &mut r, "SIOCGIFFLAGS")?;
    r.set_flags(r.flags() | libc::IFF_UP as libc::c_short);
    ioctl(
        &s,
        libc::SIOCSIFFLAGS,
        &mut r,
        &format!("SIOCSIFFLAGS {name} up"),
    )
}

/// The largest MTU the kernel lets a TAP have: `tun_net_initialize` (drivers/net/tun.c, v4.10
/// on, 6.18 here) sets `max_mtu = MAX_MTU - hard_header_len`, 65535 less the Ethernet header
/// `ether_setup` gives it. Above it SIOCSIFMTU fails with EINVAL.
pub const TAP_MAX_MTU: u32 = 65_535 - skblab_core::consts::wire::ETH_HLEN;
/// The smallest MTU the runner uses (the kernel's `MIN_MTU` is 68): 576, the IPv4 minimum
/// datagram every host accepts (RFC 791), so the SYN's options and a useful MSS fit.
pub const TAP_MIN_MTU: u32 = 576;

/// Sets an interface's MTU.
pub fn set_mtu(name: &str, mtu: u32) -> Result<(), String> {
    let s = ctl_socket()?;
    let mut r = IfReq::new(name);
    r.data[..4].copy_from_slice(&(mtu as libc::c_int).to_ne_bytes());
    ioctl(
        &s,
        libc::SIOCSIFMTU,
        &mut r,
        &format!("SIOCSIFMTU {name} {mtu}"),
    )
}

/// Gives an interface an IPv4 address and netmask.
pub fn set_addr_mask(name: &str, ip: Ipv4Addr, mask: Ipv4Addr) -> Result<(), String> {
    let s = ctl_socket()?;
    let mut r = IfReq::new(name);
    r.set_addr(ip);
    ioctl(
        &s,
        libc::SIOCSIFADDR,
        &mut r,
        &format!("SIOCSIFADDR {name}"),
    )?;
    let mut r = IfReq::new(name);
    r.set_addr(mask);
    ioctl(
        &s,
        libc::SIOCSIFNETMASK,
        &mut r,
        &format!("SIOCSIFNETMASK {name}"),
    )
}

/// A TAP device with a 12-byte virtio-net header on every frame.
pub struct Tap {
    fd: OwnedFd,
}

impl Tap {
    /// Opens the TAP (IFF_TAP | IFF_NO_PI | IFF_VNET_HDR), addresses it and brings it and
    /// `lo` up. Offloads start off.
    pub fn open() -> Result<Tap, String> {
        Tap::open_as(TAP_NAME, 0)
    }

    /// The same on tun's NAPI frags path (IFF_NAPI | IFF_NAPI_FRAGS, CAP_NET_ADMIN): each
    /// frame written goes through `tun_napi_alloc_frags` and `napi_gro_frags` (its first
    /// iovec the head, each later one a frag), as a NIC driver's would.
    pub fn open_napi_frags(name: &str) -> Result<Tap, String> {
        Tap::open_as(
            name,
            (libc::IFF_NAPI | libc::IFF_NAPI_FRAGS) as libc::c_short,
        )
    }

    fn open_as(name: &str, extra: libc::c_short) -> Result<Tap, String> {
        let path = CString::new("/dev/net/tun").expect("no NUL");
        // SAFETY: a valid C string.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(os_err("open /dev/net/tun"));
        }
        // SAFETY: fd is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut r = IfReq::new(name);
        r.set_flags(
            (libc::IFF_TAP | libc::IFF_NO_PI | libc::IFF_VNET_HDR) as libc::c_short | extra,
        );
        ioctl(&fd, libc::TUNSETIFF, &mut r, "TUNSETIFF")?;
        let hdr_len: libc::c_int = super::vnet::LEN as libc::c_int;
        // SAFETY: TUNSETVNETHDRSZ reads an int.
        if unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETVNETHDRSZ, &hdr_len) } != 0 {
            return Err(os_err("TUNSETVNETHDRSZ"));
        }
        // IPv6 would add router solicitations to the wire; the namespace is IPv4-only.
        let _ = std::fs::write(format!("/proc/sys/net/ipv6/conf/{name}/disable_ipv6"), "1");
        link_up("lo")?;
        set_addr_mask(name, KERNEL_IP, Ipv4Addr::new(255, 255, 255, 0))?;
        link_up(name)?;
        // SAFETY: F_SETFL on our own descriptor.
        unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) };
        let tap = Tap { fd };
        tap.set_offload(false)?;
        Ok(tap)
    }

    /// With `on` the kernel may hand the TAP partial checksums and TCPv4 GSO super-packets
    /// (TUN_F_CSUM | TUN_F_TSO4); off, it checksums and segments in software.
    pub fn set_offload(&self, on: bool) -> Result<(), String> {
        let off = if on { TUN_F_CSUM_TSO4 } else { 0 };
        // SAFETY: TUNSETOFFLOAD takes the flags by value.
        if unsafe {
            libc::ioctl(
                self.fd.as_raw_fd(),
                libc::TUNSETOFFLOAD,
                off as libc::c_ulong,
            )
        } != 0
        {
            return Err(os_err("TUNSETOFFLOAD"));
        }
        Ok(())
    }

    /// TUNSETSNDBUF: below INT_MAX, `tun_can_build_skb` says no, so every frame written gets
    /// a kmalloc'd head from `tun_alloc_skb` (linear part: the virtio-net `hdr_len`) instead
    /// of a head in the writer's page frag (`tun_build_skb`); drivers/net/tun.c, v6.x.
    pub fn set_sndbuf(&self, bytes: i32) -> Result<(), String> {
        // SAFETY: TUNSETSNDBUF reads an int.
        if unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::TUNSETSNDBUF, &bytes) } != 0 {
            return Err(os_err("TUNSETSNDBUF"));
        }
        Ok(())
    }

    /// Waits up to `timeout_ms` for a frame to read.
    pub fn wait(&self, timeout_ms: i32) -> Result<(), String> {
        let mut p = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        if unsafe { libc::poll(&mut p, 1, timeout_ms) } < 0 {
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(format!("poll on the TAP: {e}"));
            }
        }
        Ok(())
    }

    /// Reads one frame (virtio-net header first) into `buf`; `None` when none is waiting.
    pub fn read(&self, buf: &mut [u8]) -> Result<Option<usize>, String> {
        // SAFETY: buf is valid for buf.len() bytes.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(None),
                _ => Err(format!("read from the TAP: {e}")),
            };
        }
        Ok(Some(n as usize))
    }

    /// Writes one frame in `parts` (virtio-net header first), one iovec each: on tun's NAPI
    /// frags path the first becomes the skb's head, each later one a frag.
    pub fn writev(&self, parts: &[&[u8]]) -> Result<(), String> {
        let iov: Vec<libc::iovec> = (parts.iter())
            .map(|p| libc::iovec {
                iov_base: p.as_ptr() as *mut libc::c_void,
                iov_len: p.len(),
            })
            .collect();
        // SAFETY: each iovec covers a live buffer.
        let n = unsafe { libc::writev(self.fd.as_raw_fd(), iov.as_ptr(), iov.len() as _) };
        if n < 0 {
            return Err(format!("writev to the TAP: {}", io::Error::last_os_error()));
        }
        Ok(())
    }

    /// Writes one frame (virtio-net header first).
    pub fn write(&self, frame: &[u8]) -> Result<(), String> {
        // SAFETY: frame is valid for frame.len() bytes.
        let n = unsafe { libc::write(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len()) };
        if n < 0 {
            return Err(format!("write to the TAP: {}", io::Error::last_os_error()));
        }
        Ok(())
    }
}
