//! Threads pinned to one CPU (`sched_setaffinity`) that run commands one at a time, and
//! raising NET_RX on the calling thread's CPU: what a kernel run needs to put the softirq
//! and the reader where a scenario says.

use super::verdict::{too_slow, RunError};
use skblab_core::Cpu;
use std::net::UdpSocket;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// Pins the calling thread to `cpu`.
fn pin(cpu: Cpu) -> Result<(), String> {
    // SAFETY: a zeroed cpu_set_t with one CPU set, applied to this thread (pid 0).
    let r = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if r != 0 {
        return Err(format!(
            "sched_setaffinity to CPU {cpu} (the run needs CPUs 0 and 1): {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Raises NET_RX on this thread's CPU: a datagram over `lo` goes through `__netif_rx` to
/// this CPU's backlog, and the softirq runs when the send re-enables BHs; its
/// `net_rx_action` first frees the CPU's defer list.
pub fn raise_net_rx() -> Result<(), String> {
    let s = UdpSocket::bind("127.0.0.1:0").map_err(|e| format!("udp bind on lo: {e}"))?;
    s.send_to(b"x", "127.0.0.1:9")
        .map_err(|e| format!("udp send on lo: {e}"))?;
    Ok(())
}

/// A thread pinned to one CPU that runs commands one at a time and answers each.
pub struct Pinned<C> {
    tx: Option<Sender<C>>,
    done: Receiver<Result<(), String>>,
    handle: Option<JoinHandle<()>>,
}

impl<C: Send + 'static> Pinned<C> {
    pub fn spawn<S: Send + 'static>(
        name: &str,
        cpu: Cpu,
        mut state: S,
        run: fn(&mut S, C) -> Result<(), String>,
    ) -> Result<Pinned<C>, RunError> {
        let (tx, cmds) = mpsc::channel::<C>();
        let (answer, done) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let pinned = pin(cpu);
                let ok = pinned.is_ok();
                if answer.send(pinned).is_err() || !ok {
                    return;
                }
                for c in cmds {
                    if answer.send(run(&mut state, c)).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| format!("spawning {name}: {e}"))?;
        let p = Pinned {
            tx: Some(tx),
            done,
            handle: Some(handle),
        };
        p.answer()?;
        Ok(p)
    }

    fn answer(&self) -> Result<(), RunError> {
        self.done
            .recv_timeout(Duration::from_secs(30))
            .map_err(|e| too_slow(&format!("a pinned thread did not answer in 30 s: {e}")))?
            .map_err(RunError::from)
    }

    pub fn call(&self, c: C) -> Result<(), RunError> {
        self.tx
            .as_ref()
            .expect("open until dropped")
            .send(c)
            .map_err(|_| "a pinned thread ended early".to_string())?;
        self.answer()
    }
}

impl<C> Drop for Pinned<C> {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// Raises NET_RX on `cpu` from a short-lived thread pinned there.
pub fn softirq_on(cpu: Cpu) -> Result<(), RunError> {
    Pinned::spawn("skblab-net-rx", cpu, (), |_, ()| raise_net_rx())?.call(())
}
