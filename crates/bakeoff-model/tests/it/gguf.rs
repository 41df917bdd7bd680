//! The GGUF reader against the real test model (when provisioned) and against synthetic files
//! truncated at every byte (an error each time) and mutated byte by byte (Ok or a refusal
//! naming the file and the fix, never a panic).

use std::io::{Cursor, Read};
use std::path::Path;

use bakeoff_model::gguf::{GgufValue, WeightsBytesSource};
use bakeoff_model::{
    GgufKvGeometry, LlamaCppKvParams, ModelError, llamacpp_ctx_for_budget, llamacpp_kv_buffers,
    llamacpp_slot_context, parse_engine_log, read_gguf, read_gguf_file,
};

use crate::util::real_model;

#[test]
fn real_gemma_3_270m_metadata() {
    let path = real_model();
    let g = read_gguf_file(&path).unwrap();
    assert_eq!(g.version, 3);
    assert_eq!(g.tensor_count, 236);
    assert_eq!(g.metadata.len(), 33);
    assert_eq!(g.architecture(), Some("gemma3"));
    assert_eq!(g.name(), Some("Gemma 3 270m"));
    assert_eq!(g.context_length(), Some(32_768));
    // KV geometry as read from this file: 18 blocks, 4 query heads, 1 KV head, K and V
    // head dims 256, hidden 640, sliding window 512.
    assert_eq!(g.block_count(), Some(18));
    assert_eq!(g.head_count(), Some(4));
    assert_eq!(g.head_count_kv(), Some(1));
    assert_eq!(g.embedding_length(), Some(640));
    assert_eq!((g.key_length(), g.value_length()), (Some(256), Some(256)));
    assert_eq!(g.sliding_window(), Some(512));
    // The base model carries no chat template.
    assert_eq!(g.chat_template(), None);
    assert_eq!(g.file_type(), Some(15));
    assert_eq!(g.file_type_name(), Some("MOSTLY_Q4_K_M"));

    // The 262,144-entry token list was sought past: type and length only.
    let tokens = g.get("tokenizer.ggml.tokens").unwrap().as_array().unwrap();
    assert_eq!((tokens.len, tokens.values.is_none()), (262_144, true));
    // Small arrays are kept.
    let tags = g.get("general.tags").unwrap().as_array().unwrap();
    assert_eq!(
        tags.values.as_ref().unwrap()[0],
        GgufValue::String("gemma3".into())
    );

    // Tensor infos end at 6,525,112; aligned to 32 → data at 6,525,120. The tensors sum to
    // 246,587,904 B, exactly file size − data offset (no trailing padding in this file):
    // Q8_0 179,824,640 (token embeddings) + Q5_0 43,591,680 + Q4_K 13,271,040
    // + Q6_K 9,676,800 + F32 223,744.
    assert_eq!(g.data_offset, 6_525_120);
    assert_eq!(g.weights_bytes_source, WeightsBytesSource::TensorInfos);
    assert_eq!(g.weights_bytes, 246_587_904);
    assert_eq!(g.weights_bytes, g.file_size - g.data_offset);
    let q8 = g
        .tensor_types
        .iter()
        .find(|t| t.ggml_type == "Q8_0")
        .unwrap();
    assert_eq!(q8.bytes, Some(179_824_640));
}

#[test]
fn real_gemma_3_270m_kv_buffer_matches_llama_server_log() {
    let path = real_model();
    let g = read_gguf_file(&path).unwrap();
    let geo = GgufKvGeometry::from_gguf(&g, &path).unwrap();
    // llama.cpp's gemma3 pattern 6: layers 5, 11, 17 full; 15 sliding.
    assert_eq!(geo.swa_layers.iter().filter(|s| !**s).count(), 3);

    // llama-server -c 32768 -np 8 (engine README): 4096 cells per stream, 8 streams.
    // Non-SWA cache: 4096 cells × 8 streams × 3 layers × (256 × 1 head) × 2 B (f16)
    //   = 50,331,648 B = 48 MiB for K, the same for V, 96 MiB in all.
    // SWA cache: pad256(min(4096, 512 × 1 + 512)) = 1024 cells; × 8 × 15 layers × 256 × 2 B
    //   = 62,914,560 B = 60 MiB each for K and V, 120 MiB in all.
    let est =
        llamacpp_kv_buffers(&geo, &LlamaCppKvParams::from_server_flags(32_768, 8, false)).unwrap();
    let (base, swa) = (&est.caches[0], &est.caches[1]);
    assert_eq!((base.cells, base.layers, base.n_stream), (4096, 3, 8));
    assert_eq!(base.k_bytes, 50_331_648);
    assert_eq!(
        (swa.cells, swa.layers, swa.size_bytes),
        (1024, 15, 125_829_120)
    );

    // The real log line (the brief; llama.cpp b11434 on this model).
    let log = parse_engine_log(
        "llama_kv_cache: size =   96.00 MiB (  4096 cells,   3 layers,  8/8 seqs), K (f16): 48.00 MiB, V (f16): 48.00 MiB",
    );
    assert!(base.matches_log(&log.llamacpp_kv_caches[0]));
    assert!(!swa.matches_log(&log.llamacpp_kv_caches[0]));

    // With -kvu (one stream, all 8 sequences share 32768 cells) the SWA cache grows to
    // pad256(512 × 8 + 512) = 4608 cells, and the base cache is the same 96 MiB.
    let unified =
        llamacpp_kv_buffers(&geo, &LlamaCppKvParams::from_server_flags(32_768, 8, true)).unwrap();
    assert_eq!(unified.caches[0].size_bytes, 100_663_296);
    assert_eq!(unified.caches[1].cells, 4608);
}

/// A real llama-server log: build b11434 (CPU, 2 cores), `-m gemma-3-270m-q4_k_m.gguf -c 32768
/// -np 8 -lv 4`, started, asked for /health, stopped with SIGINT (tests/fixtures/logs/).
const REAL_LOG: &str =
    include_str!("../fixtures/logs/llama-server-b11434-gemma-3-270m-c32768-np8.log");

#[test]
fn real_llama_server_log_lines() {
    let f = parse_engine_log(REAL_LOG);
    assert_eq!(f.llamacpp_kv_caches.len(), 2);
    let (base, swa) = (&f.llamacpp_kv_caches[0], &f.llamacpp_kv_caches[1]);
    assert_eq!(
        (base.swa, base.cells, base.layers, base.size_mib),
        (Some(false), 4096, 3, 96.0)
    );
    assert_eq!(
        (swa.swa, swa.cells, swa.layers, swa.size_mib),
        (Some(true), 1024, 15, 120.0)
    );
    assert_eq!((swa.k_mib, swa.v_mib, swa.n_stream), (60.0, 60.0, Some(8)));
    // The table printed at exit (the earlier one, from parameter fitting, is replaced):
    // Host 474 = 235 model + 216 context (96 + 120 MiB of KV) + 23 compute.
    let host = &f.llamacpp_memory_breakdown[0];
    assert_eq!(
        (
            host.device.as_str(),
            host.self_mib,
            host.model_mib,
            host.context_mib,
            host.compute_mib
        ),
        ("Host", 474, 235, 216, 23)
    );
    assert_eq!(f.llamacpp_memory_breakdown.len(), 2);
}

#[test]
fn real_gguf_predicts_both_real_kv_lines() {
    let path = real_model();
    let g = read_gguf_file(&path).unwrap();
    let geo = GgufKvGeometry::from_gguf(&g, &path).unwrap();
    let est =
        llamacpp_kv_buffers(&geo, &LlamaCppKvParams::from_server_flags(32_768, 8, false)).unwrap();
    let log = parse_engine_log(REAL_LOG);
    assert!(est.caches[0].matches_log(&log.llamacpp_kv_caches[0]));
    assert!(est.caches[1].matches_log(&log.llamacpp_kv_caches[1]));
    // 96 + 120 MiB = the 216 MiB "context" of the memory breakdown.
    assert_eq!(est.total_bytes, 216 << 20);
}

#[test]
fn real_gguf_budget_gives_the_largest_context_llama_cpp_can_allocate() {
    let path = real_model();
    let g = read_gguf_file(&path).unwrap();
    let geo = GgufKvGeometry::from_gguf(&g, &path).unwrap();
    let np8 = LlamaCppKvParams::from_server_flags(32_768, 8, false);
    // 216 MiB is exactly what -c 32768 -np 8 allocates (the real log: 96 + 120 MiB): the
    // non-SWA cache costs 3 layers × 256 × 2 B × 2 (K, V) = 3072 B per cell and the SWA cache
    // stays at 1024 cells per stream once -c/-np passes 1024.
    assert_eq!(llamacpp_ctx_for_budget(&geo, &np8, 216 << 20), Some(32_768));
    // One byte less drops a whole cell per stream: 8 cells of -c.
    assert_eq!(
        llamacpp_ctx_for_budget(&geo, &np8, (216 << 20) - 1),
        Some(32_760)
    );
    // q8_0 K and V: 8 blocks × 34 B = 272 B per 256-element row instead of 512.
    // SWA: 1024 × 8 × 15 × 272 × 2 = 66,846,720 B; per non-SWA cell 3 × 272 × 2 = 1632 B;
    // (226,492,416 − 66,846,720) / 1632 = 97,822.1 → 12,227 cells per stream → -c 97,816.
    let q8 = LlamaCppKvParams {
        cache_type_k: "q8_0".into(),
        cache_type_v: "q8_0".into(),
        ..np8.clone()
    };
    let fit = llamacpp_ctx_for_budget(&geo, &q8, 216 << 20).unwrap();
    assert_eq!(fit, 97_816);
    let at = llamacpp_kv_buffers(
        &geo,
        &LlamaCppKvParams {
            cells: fit / 8,
            ..q8.clone()
        },
    )
    .unwrap();
    assert!(at.total_bytes <= 216 << 20);
    // Nothing fits in a budget smaller than the SWA cache; unknown cache types are None.
    assert_eq!(llamacpp_ctx_for_budget(&geo, &np8, 1 << 20), Some(0));
    let bad = LlamaCppKvParams {
        cache_type_k: "q9_9".into(),
        ..np8
    };
    assert_eq!(llamacpp_ctx_for_budget(&geo, &bad, 216 << 20), None);
}

#[test]
fn truncated_real_header_is_an_error_never_a_panic() {
    let path = real_model();
    // The whole metadata and tensor-info section is the first 6,525,120 bytes.
    let mut head = Vec::new();
    std::fs::File::open(&path)
        .unwrap()
        .take(6_600_000)
        .read_to_end(&mut head)
        .unwrap();
    let mut offsets: Vec<usize> = (0..64).collect();
    offsets.extend((64..head.len()).step_by(33_331));
    offsets.extend([6_525_111, 6_525_112, 6_525_120, head.len()]);
    for off in offsets {
        let r = read_gguf(Cursor::new(&head[..off]), Path::new("cut.gguf"));
        // Every prefix lacks the tensor data, so every one is an error.
        assert!(r.is_err(), "prefix of {off} bytes parsed");
    }
}

/// A small valid GGUF v3 with every value type, a kept array, two sought-past arrays and two
/// tensors.
fn synthetic() -> Vec<u8> {
    fn s(out: &mut Vec<u8>, v: &str) {
        out.extend((v.len() as u64).to_le_bytes());
        out.extend(v.as_bytes());
    }
    fn key(out: &mut Vec<u8>, k: &str, ty: u32) {
        s(out, k);
        out.extend(ty.to_le_bytes());
    }
    let mut b = Vec::new();
    b.extend(b"GGUF");
    b.extend(3u32.to_le_bytes());
    b.extend(2u64.to_le_bytes()); // tensors
    b.extend(17u64.to_le_bytes()); // key-value pairs
    key(&mut b, "general.architecture", 8);
    s(&mut b, "llama");
    key(&mut b, "llama.block_count", 4);
    b.extend(2u32.to_le_bytes());
    key(&mut b, "llama.context_length", 10);
    b.extend(4096u64.to_le_bytes());
    key(&mut b, "llama.attention.head_count", 4);
    b.extend(4u32.to_le_bytes());
    key(&mut b, "llama.attention.head_count_kv", 9); // per-layer array form
    b.extend(4u32.to_le_bytes());
    b.extend(2u64.to_le_bytes());
    b.extend(2u32.to_le_bytes());
    b.extend(1u32.to_le_bytes());
    key(&mut b, "llama.embedding_length", 4);
    b.extend(64u32.to_le_bytes());
    key(&mut b, "t.u8", 0);
    b.push(7);
    key(&mut b, "t.i8", 1);
    b.push(0xff);
    key(&mut b, "t.u16", 2);
    b.extend(7u16.to_le_bytes());
    key(&mut b, "t.i16", 3);
    b.extend((-7i16).to_le_bytes());
    key(&mut b, "t.i32", 5);
    b.extend((-7i32).to_le_bytes());
    key(&mut b, "t.f32", 6);
    b.extend(1.5f32.to_le_bytes());
    key(&mut b, "t.bool", 7);
    b.push(1);
    key(&mut b, "t.i64", 11);
    b.extend((-7i64).to_le_bytes());
    key(&mut b, "t.f64", 12);
    b.extend(2.5f64.to_le_bytes());
    key(&mut b, "tokenizer.ggml.tokens", 9); // 300 strings: sought past
    b.extend(8u32.to_le_bytes());
    b.extend(300u64.to_le_bytes());
    for i in 0..300 {
        s(&mut b, &format!("tok{i}"));
    }
    key(&mut b, "tokenizer.ggml.scores", 9); // 1000 f32: sought past
    b.extend(6u32.to_le_bytes());
    b.extend(1000u64.to_le_bytes());
    b.extend(std::iter::repeat_n(0u8, 4000));
    // Tensor infos: a 64×2 F16 and a 256×1 Q4_K.
    for (name, dims, ty, off) in [("a", [64u64, 2], 1u32, 0u64), ("b", [256, 1], 12, 256)] {
        s(&mut b, name);
        b.extend(2u32.to_le_bytes());
        for d in dims {
            b.extend(d.to_le_bytes());
        }
        b.extend(ty.to_le_bytes());
        b.extend(off.to_le_bytes());
    }
    while b.len() % 32 != 0 {
        b.push(0);
    }
    b.extend(std::iter::repeat_n(0u8, 256 + 144));
    b
}

#[test]
fn synthetic_file_reads_every_type() {
    let bytes = synthetic();
    let g = read_gguf(Cursor::new(&bytes), Path::new("s.gguf")).unwrap();
    assert_eq!(g.get("t.i8"), Some(&GgufValue::I8(-1)));
    assert_eq!(g.get("t.f64"), Some(&GgufValue::F64(2.5)));
    assert_eq!(g.get("t.bool"), Some(&GgufValue::Bool(true)));
    let tokens = g.get("tokenizer.ggml.tokens").unwrap().as_array().unwrap();
    assert_eq!((tokens.len, tokens.values.is_none()), (300, true));
    assert_eq!(g.head_count_kv_per_layer(), Some(vec![2, 1]));
    // 64 × 2 × 2 B + 144 B (one Q4_K block) = 400 B.
    assert_eq!(g.weights_bytes, 400);
    assert_eq!(g.context_length(), Some(4096));
    // llama.cpp default head dim n_embd / n_head = 16 when key_length is absent.
    assert_eq!(g.key_length_or_default(), Some(16));
}

/// Every proper prefix of the synthetic file is an error, the whole file is not. The file
/// ends exactly where its tensor data ends (data offset + 256 B of F16 + 144 B of Q4_K, no
/// trailing padding), so even a cut inside the data section lacks bytes a tensor info claims
/// (the reader checks `data_offset + data_end <= file size`).
#[test]
fn synthetic_file_truncated_at_every_cut_is_an_error() {
    let bytes = synthetic();
    assert!(read_gguf(Cursor::new(&bytes), Path::new("s.gguf")).is_ok());
    for cut in 0..bytes.len() {
        match read_gguf(Cursor::new(&bytes[..cut]), Path::new("s.gguf")) {
            Err(ModelError::Truncated { path, .. }) => assert_eq!(path, Path::new("s.gguf")),
            other => panic!("prefix of {cut} of {} bytes: {other:?}", bytes.len()),
        }
    }
}

/// Flipping bits of any header byte may still give a readable file (a value byte) or a
/// refusal, never a panic; a refusal names the file and the fix.
#[test]
fn synthetic_file_mutated_byte_by_byte_never_panics() {
    let bytes = synthetic();
    let mut mutated = bytes.clone();
    for i in 0..bytes.len() - 400 {
        for x in [0xffu8, 0x80, 0x01, 0x7f] {
            mutated[i] = bytes[i] ^ x;
            if let Err(e) = read_gguf(Cursor::new(&mutated), Path::new("s.gguf")) {
                let msg = e.to_string();
                assert!(
                    msg.starts_with("s.gguf: ") && msg.contains("fix:"),
                    "byte {i} ^ {x:#04x}: {msg}"
                );
            }
        }
        mutated[i] = bytes[i];
    }
}

#[test]
fn rejects_big_endian_and_unknown_versions_with_a_fix() {
    let mut bytes = synthetic();
    bytes[4..8].copy_from_slice(&3u32.to_be_bytes());
    let err = read_gguf(Cursor::new(&bytes), Path::new("be.gguf")).unwrap_err();
    assert!(matches!(err, ModelError::Malformed { .. }));
    let msg = err.to_string();
    assert!(
        msg.starts_with("be.gguf: big-endian GGUF") && msg.contains("fix:"),
        "{msg}"
    );

    bytes[4..8].copy_from_slice(&1u32.to_le_bytes());
    let msg = read_gguf(Cursor::new(&bytes), Path::new("v1.gguf"))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("GGUF version 1 is not supported"), "{msg}");

    let msg = read_gguf(Cursor::new(b"PK\x03\x04rest"), Path::new("x.zip"))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("not a GGUF file"), "{msg}");
}

#[test]
fn hostile_lengths_are_refused_before_allocating() {
    let mut b = Vec::new();
    b.extend(b"GGUF");
    b.extend(3u32.to_le_bytes());
    b.extend(0u64.to_le_bytes());
    b.extend(u64::MAX.to_le_bytes()); // kv count
    b.extend(u64::MAX.to_le_bytes()); // key length
    let err = read_gguf(Cursor::new(&b), Path::new("h.gguf")).unwrap_err();
    assert!(err.to_string().contains("h.gguf"), "{err}");

    // An array claiming 2^60 u64 elements in a tiny file.
    let mut b = Vec::new();
    b.extend(b"GGUF");
    b.extend(3u32.to_le_bytes());
    b.extend(0u64.to_le_bytes());
    b.extend(1u64.to_le_bytes());
    b.extend(1u64.to_le_bytes());
    b.push(b'k');
    b.extend(9u32.to_le_bytes());
    b.extend(10u32.to_le_bytes());
    b.extend((1u64 << 60).to_le_bytes());
    assert!(matches!(
        read_gguf(Cursor::new(&b), Path::new("h.gguf")),
        Err(ModelError::Truncated { .. })
    ));
}

/// llama-server gives each slot `n_ctx_seq` capped at the training context (b11434
/// server-context.cpp `n_ctx_slot()`): `-c 32768 -np 8` → 4096 per slot; `-c 1392981 -np 1`
/// (what 4 GiB of KV would buy on the test model) → capped at its 32,768.
#[test]
fn slot_context_is_capped_at_the_training_context() {
    let g = read_gguf_file(&real_model()).unwrap();
    let train = g.context_length();
    assert_eq!(train, Some(32_768));
    let p = |c, np, kvu| LlamaCppKvParams::from_server_flags(c, np, kvu);
    assert_eq!(llamacpp_slot_context(&p(32_768, 8, false), train), 4096);
    assert_eq!(
        llamacpp_slot_context(&p(1_392_981, 1, false), train),
        32_768
    );
    assert_eq!(llamacpp_slot_context(&p(262_144, 8, true), train), 32_768);
    assert_eq!(llamacpp_slot_context(&p(65_536, 1, false), None), 65_536);
}
