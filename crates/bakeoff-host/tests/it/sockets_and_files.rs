//! Sockets and open files: a listener this test opens on port 0, a file it holds open and
//! locks, found through `/proc` as any other process's would be.

use std::os::unix::fs::MetadataExt;

use bakeoff_host::ProcRoot;
use bakeoff_host::proc::FileLock;

#[test]
fn a_listening_socket_is_found_with_its_holder() {
    let proc = ProcRoot::system();
    let me = std::process::id();
    let v4 = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = v4.local_addr().unwrap().port();
    let inodes = proc.listening_inodes(port);
    assert_eq!(inodes.len(), 1, "{inodes:?}");
    assert_eq!(proc.socket_holders(&inodes), [me]);
    // A connection to it is not a listener: its own port is not listed.
    let client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let client_port = client.local_addr().unwrap().port();
    assert!(proc.listening_inodes(client_port).is_empty());
    assert_eq!(proc.listening_inodes(port), inodes);
    assert!(proc.socket_holders(&[]).is_empty());

    // IPv6, where this host has it.
    if let Ok(v6) = std::net::TcpListener::bind("[::1]:0") {
        let port = v6.local_addr().unwrap().port();
        let inodes = proc.listening_inodes(port);
        assert_eq!(inodes.len(), 1, "{inodes:?}");
        assert_eq!(proc.socket_holders(&inodes), [me]);
    }
}

#[test]
fn an_open_locked_file_names_this_process() {
    let proc = ProcRoot::system();
    let me = std::process::id();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("blob.lock");
    let file = std::fs::File::create(&path).unwrap();
    let meta = file.metadata().unwrap();
    assert_eq!(proc.pids_with_open(meta.dev(), meta.ino()), [me]);

    rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
    let want = FileLock {
        kind: "FLOCK".into(),
        pid: Some(me),
        major: rustix::fs::major(meta.dev()),
        minor: rustix::fs::minor(meta.dev()),
        inode: meta.ino(),
    };
    let locks = proc.locks();
    assert!(locks.contains(&want), "{want:?} not in {locks:?}");
    drop(file);
    assert!(!proc.locks().contains(&want));
    assert!(proc.pids_with_open(meta.dev(), meta.ino()).is_empty());
}
