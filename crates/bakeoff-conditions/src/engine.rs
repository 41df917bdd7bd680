//! The engine under test, when it runs on this host: the process listening on the endpoint's
//! port (the listening socket's inode from `/proc/net/tcp` and `tcp6`, its holder from the
//! processes' descriptors; both read by `bakeoff_host::proc`).

use bakeoff_host::ProcRoot;

/// Whether `host` names this machine (only then can the engine's process be looked for).
pub fn is_local(host: &str) -> bool {
    let h = host.trim_matches(['[', ']']);
    matches!(h, "127.0.0.1" | "localhost" | "::1" | "0.0.0.0")
}

/// The pid listening on `port`, and in words what was found.
pub fn find_listener(proc: &ProcRoot, port: u16) -> (Option<u32>, String) {
    let inodes = proc.listening_inodes(port);
    if inodes.is_empty() {
        return (None, format!("no socket listens on port {port} here"));
    }
    match proc.socket_holders(&inodes).first() {
        Some(pid) => (Some(*pid), format!("pid {pid} listens on port {port}")),
        None => (
            None,
            format!("a socket listens on port {port}, but no readable process holds it"),
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn only_this_host_is_local() {
        assert!(is_local("127.0.0.1") && is_local("[::1]") && !is_local("gpu2"));
    }

    #[test]
    fn a_real_listener_here_is_found() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let (pid, said) = find_listener(&ProcRoot::system(), port);
        assert_eq!(pid, Some(std::process::id()), "{said}");
    }
}
