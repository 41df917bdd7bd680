//! Opening a file a seat or a user names — a model, a template, a shard — for reading, only when
//! it is a regular file.
//!
//! A FIFO given as the model path (docs/field-cases.md B4: the engine blocks opening it and goes
//! silent) blocks `open(2)` until a writer comes, which may be never; a character device such as
//! `/dev/zero` never ends. Every read of such a path here would hang the check that made it, so
//! the file is opened with `O_NONBLOCK` (which changes nothing for a regular file's reads on
//! Linux, open(2)) and refused unless it is a regular file.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Opens `path` (symlinks followed) for reading; an error of kind `InvalidInput` naming what
/// the path is when it is not a regular file.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let kind = f.metadata()?.file_type();
    if kind.is_file() {
        return Ok(f);
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "is {}, not a regular file: point it at the file itself",
            describe(&kind)
        ),
    ))
}

fn describe(kind: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a file"
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("model.fifo");
        let st = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(st.success());
        let e = open_regular(&fifo).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("a FIFO"), "{e}");
    }

    #[test]
    fn a_device_and_a_directory_are_refused_and_a_file_opens() {
        let e = open_regular(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("a device"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let e = open_regular(dir.path()).unwrap_err();
        assert!(e.to_string().contains("a directory"), "{e}");
        let file = dir.path().join("m.gguf");
        std::fs::write(&file, b"GGUF").unwrap();
        use std::io::Read;
        let mut s = String::new();
        open_regular(&file).unwrap().read_to_string(&mut s).unwrap();
        assert_eq!(s, "GGUF");
    }
}
