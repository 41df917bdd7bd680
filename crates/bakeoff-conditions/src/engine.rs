//! The engine under test, when it runs on this host: the process listening on the endpoint's
//! port (`/proc/net/tcp` and `tcp6` give the listening socket's inode; `/proc/[pid]/fd/*`
//! links name `socket:[inode]`).

use std::path::Path;

/// Whether `host` names this machine (only then can the engine's process be looked for).
pub fn is_local(host: &str) -> bool {
    let h = host.trim_matches(['[', ']']);
    matches!(h, "127.0.0.1" | "localhost" | "::1" | "0.0.0.0")
}

/// The inodes of sockets listening on `port` in a `/proc/net/tcp{,6}` table (state `0A`).
pub fn listening_inodes(table: &str, port: u16) -> Vec<u64> {
    table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
            let local = f.get(1)?;
            let p = u16::from_str_radix(local.rsplit(':').next()?, 16).ok()?;
            (p == port && *f.get(3)? == "0A").then(|| f.get(9)?.parse().ok())?
        })
        .collect()
}

/// The pid listening on `port`, and in words what was found.
pub fn find_listener(proc_root: &Path, port: u16) -> (Option<u32>, String) {
    let mut inodes = Vec::new();
    for t in ["net/tcp", "net/tcp6"] {
        if let Ok(text) = std::fs::read_to_string(proc_root.join(t)) {
            inodes.extend(listening_inodes(&text, port));
        }
    }
    if inodes.is_empty() {
        return (None, format!("no socket listens on port {port} here"));
    }
    let wanted: Vec<String> = inodes.iter().map(|i| format!("socket:[{i}]")).collect();
    let Ok(dir) = std::fs::read_dir(proc_root) else {
        return (None, format!("cannot list {}", proc_root.display()));
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(e.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(link) = std::fs::read_link(fd.path())
                && wanted.iter().any(|w| link.as_os_str() == w.as_str())
            {
                return (Some(pid), format!("pid {pid} listens on port {port}"));
            }
        }
    }
    (
        None,
        format!("a socket listens on port {port}, but no readable process holds it"),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn listening_sockets_are_found_by_port_and_state() {
        let tcp = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 123456 1 0000000000000000 100 0 0 10 0\n   1: 0100007F:1F90 0100007F:C350 01 00000000:00000000 00:00000000 00000000     0        0 999 1 0000000000000000 20 4 30 10 -1\n";
        assert_eq!(listening_inodes(tcp, 8080), [123456]);
        assert!(listening_inodes(tcp, 8081).is_empty());
        assert!(is_local("127.0.0.1") && is_local("[::1]") && !is_local("gpu2"));
    }

    #[test]
    fn a_real_listener_here_is_found() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let (pid, said) = find_listener(Path::new("/proc"), port);
        assert_eq!(pid, Some(std::process::id()), "{said}");
    }
}
