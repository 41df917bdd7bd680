//! `bakeoff-conditions`' public API as a measurement uses it: a `Sampler` started around a
//! step with whom to leave out, and the `Conditions` it captures — real processes on this
//! host, read where the sampler reads them. The tests wait for what they need (a process's own
//! CPU ticks), never for time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod endpoint;
mod sampler;

use std::time::{Duration, Instant};

/// A process's CPU ticks (utime + stime), read as the sampler reads them (the host crate).
pub fn ticks(pid: u32) -> u64 {
    bakeoff_host::proc::ProcRoot::system()
        .entry(pid)
        .unwrap()
        .cpu_ticks
}

/// Polls `cond` (every 20 ms) until it holds; the limit only ends a hang.
pub fn until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while !cond() {
        assert!(Instant::now() < deadline, "{what} never happened");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A busy loop, killed when dropped.
pub struct Hog(pub std::process::Child);

impl Hog {
    pub fn start() -> Self {
        Self(
            std::process::Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .unwrap(),
        )
    }

    pub fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Until it has had `n` ticks of CPU more than `since`.
    pub fn until_ran(&self, since: u64, n: u64) {
        let pid = self.pid();
        until(&format!("{n} ticks of CPU for pid {pid}"), || {
            ticks(pid) >= since + n
        });
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
