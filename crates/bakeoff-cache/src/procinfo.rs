//! What `/proc` says about a process: is it alive, and its command line (redacted).

use std::path::Path;

use crate::redact::redact_args;

/// Is `pid` a live process (its `/proc/PID` exists and it is not a zombie)?
pub fn alive(pid: u32) -> bool {
    // A zombie keeps its /proc entry but holds no files: its locks are gone.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// The command line of `pid`, arguments joined with spaces, secrets masked. Empty when the
/// process is gone or its command line cannot be read (a kernel thread, another user's
/// process under hidepid).
pub fn cmdline(pid: u32) -> String {
    let Ok(raw) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
        return String::new();
    };
    let args: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    redact_args(&args).join(" ")
}

/// Every live pid with an open file descriptor on the file whose device and inode are given:
/// the processes that share a lock after the one named in `/proc/locks` is gone (a child that
/// inherited the descriptor survives a partial kill and keeps the lock).
pub fn pids_with_open(dev: u64, ino: u64) -> Vec<u32> {
    use std::os::unix::fs::MetadataExt;
    let mut pids = Vec::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for entry in procs.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(Path::new("/proc").join(pid.to_string()).join("fd")) else {
            continue;
        };
        let holds = fds
            .flatten()
            .any(|fd| std::fs::metadata(fd.path()).is_ok_and(|m| m.dev() == dev && m.ino() == ino));
        if holds && alive(pid) {
            pids.push(pid);
        }
    }
    pids
}
