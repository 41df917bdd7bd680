use super::*;

#[test]
fn the_architecture_is_read_from_the_head_alone() {
    let mut h = b"GGUF\x03\0\0\0".to_vec();
    h.extend_from_slice(&20u64.to_le_bytes());
    h.extend_from_slice(b"general.architecture");
    h.extend_from_slice(&8u32.to_le_bytes());
    h.extend_from_slice(&6u64.to_le_bytes());
    h.extend_from_slice(b"gemma3");
    assert_eq!(architecture_in_head(&h).as_deref(), Some("gemma3"));
    assert_eq!(architecture_in_head(&h[..h.len() - 2]), None);
    assert_eq!(architecture_in_head(b"GGUF"), None);
}

#[test]
fn the_head_is_read_in_two_sizes_and_a_key_past_the_first_is_found() {
    let dir = tempfile::tempdir().unwrap();
    let arch_kv = |h: &mut Vec<u8>| {
        h.extend_from_slice(&20u64.to_le_bytes());
        h.extend_from_slice(b"general.architecture");
        h.extend_from_slice(&8u32.to_le_bytes());
        h.extend_from_slice(&6u64.to_le_bytes());
        h.extend_from_slice(b"gemma3");
    };
    let first = dir.path().join("first.gguf");
    let mut h = b"GGUF\x03\0\0\0".to_vec();
    arch_kv(&mut h);
    h.resize(1 << 20, 0);
    std::fs::write(&first, &h).unwrap();
    assert_eq!(gguf_architecture(&Build::Host, &first).unwrap(), "gemma3");
    // A writer that put other keys first: the key sits past the first 64 KiB.
    let late = dir.path().join("late.gguf");
    let mut h = b"GGUF\x03\0\0\0".to_vec();
    h.resize(GGUF_HEAD_FIRST + 4096, b'x');
    arch_kv(&mut h);
    std::fs::write(&late, &h).unwrap();
    assert_eq!(gguf_architecture(&Build::Host, &late).unwrap(), "gemma3");
    for (name, bytes, why) in [
        (
            "none.gguf",
            &b"GGUF\x03\0\0\0"[..],
            "no general.architecture",
        ),
        ("other.bin", &b"PK\x03\x04"[..], "not a GGUF file"),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        let err = gguf_architecture(&Build::Host, &p).unwrap_err().to_string();
        assert!(err.contains(why), "{name}: {err}");
    }
}

#[test]
fn c_strings_match_whole_names_only() {
    let table = b"\0llama\0gemma3\0gemma3n\0qwen3moe\0";
    assert!(has_c_string(table, "gemma3"));
    assert!(has_c_string(table, "gemma3n"));
    assert!(!has_c_string(table, "gemma"));
    assert!(!has_c_string(table, "frobnicator"));
}
