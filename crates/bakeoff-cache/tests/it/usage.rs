//! The two readings a seat watchdog takes of a mounted cache: `tree_bytes` and `held_locks`.

use std::io::Write;

use bakeoff_cache::{held_locks, tree_bytes};

use crate::common::Holder;

#[test]
fn tree_bytes_counts_allocated_bytes_and_grows_with_a_download() {
    let dir = tempfile::tempdir().unwrap();
    let blob = dir.path().join("blobs/abc.incomplete");
    std::fs::create_dir_all(blob.parent().unwrap()).unwrap();
    std::fs::write(&blob, vec![1u8; 64 * 1024]).unwrap();
    // A symlink is not followed: the blob counts once.
    std::os::unix::fs::symlink(&blob, dir.path().join("link")).unwrap();
    let first = tree_bytes(dir.path());
    assert!(first >= 64 * 1024, "{first}");
    assert!(first < 2 * 64 * 1024, "{first}");
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&blob)
        .unwrap();
    f.write_all(&vec![2u8; 256 * 1024]).unwrap();
    f.sync_all().unwrap();
    assert!(tree_bytes(dir.path()) >= first + 256 * 1024);
    assert_eq!(tree_bytes(&dir.path().join("missing")), 0);
}

#[test]
fn held_locks_names_the_live_holder_under_a_root() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("hub/.locks/models--org--m/abc.lock");
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    std::fs::write(&lock, b"").unwrap();
    std::fs::write(dir.path().join("hub/.locks/models--org--m/free.lock"), b"").unwrap();
    assert!(held_locks(dir.path()).is_empty());
    let mut holder = Holder::start(&lock);
    let held = held_locks(dir.path());
    assert_eq!(held.len(), 1, "{held:?}");
    assert_eq!(held[0].path, lock);
    assert_eq!(held[0].pid, holder.pid());
    assert!(held[0].cmdline.contains("sleep 30"), "{}", held[0].cmdline);
    holder.kill_all();
    assert!(held_locks(dir.path()).is_empty());
}
