//! Sockets and open files: which sockets listen on a port (`/proc/net/tcp` and `tcp6`, in the
//! reader's network namespace), which processes hold a socket or a file (`/proc/<pid>/fd`).
//! Other users' processes cannot be read without privileges: they are missing from the
//! answers, never guessed.

use std::os::unix::fs::MetadataExt;

use procfs::net::{TcpNetEntry, TcpState};
use procfs::prelude::*;
use procfs::process::FDTarget;

use super::ProcRoot;

/// The inodes of the sockets in `table` listening on `port` (state LISTEN; inode 0, a socket
/// being torn down, left out).
pub fn listening_in(table: &[TcpNetEntry], port: u16) -> Vec<u64> {
    table
        .iter()
        .filter(|e| e.state == TcpState::Listen && e.local_address.port() == port && e.inode != 0)
        .map(|e| e.inode)
        .collect()
}

impl ProcRoot {
    /// The inodes of the sockets listening on `port`, IPv4 and IPv6.
    pub fn listening_inodes(&self, port: u16) -> Vec<u64> {
        let mut out = Vec::new();
        for file in ["tcp", "tcp6"] {
            let path = self.root.join("net").join(file);
            if let Ok(procfs::net::TcpNetEntries(table)) =
                procfs::net::TcpNetEntries::from_file(path, procfs::current_system_info())
            {
                out.extend(listening_in(&table, port));
            }
        }
        out
    }

    /// The processes holding any of the socket `inodes` (a `socket:[N]` descriptor).
    pub fn socket_holders(&self, inodes: &[u64]) -> Vec<u32> {
        if inodes.is_empty() {
            return Vec::new();
        }
        self.holders(|_, fd| matches!(fd.target, FDTarget::Socket(i) if inodes.contains(&i)))
    }

    /// The live processes with a descriptor open on the file whose device and inode are given
    /// (`stat` through the descriptor's link: a deleted or renamed file still matches).
    pub fn pids_with_open(&self, dev: u64, ino: u64) -> Vec<u32> {
        let holders = self.holders(|pid, fd| {
            let link = self
                .root
                .join(pid.to_string())
                .join("fd")
                .join(fd.fd.to_string());
            std::fs::metadata(link).is_ok_and(|m| m.dev() == dev && m.ino() == ino)
        });
        holders.into_iter().filter(|p| self.is_alive(*p)).collect()
    }

    /// The pids with a descriptor for which `holds(pid, fd)` is true.
    fn holders(&self, holds: impl Fn(u32, &procfs::process::FDInfo) -> bool) -> Vec<u32> {
        self.processes()
            .filter_map(|(pid, p)| {
                let mut fds = p.fd().ok()?;
                fds.any(|fd| fd.is_ok_and(|fd| holds(pid, &fd)))
                    .then_some(pid)
            })
            .collect()
    }
}
