//! Safetensors headers (single and sharded, written here), checkpoint inspection over the
//! fixture directories, and the `--quantization` flag check of docs/field-cases.md F7.

use std::path::{Path, PathBuf};

use bakeoff_model::quant::COMPRESSED_TENSORS_CRASH;
use bakeoff_model::{
    ModelError, Severity, check_serving_flag, inspect_checkpoint, read_safetensors_header,
    read_safetensors_index,
};

use crate::util::{fixtures, real_model};

/// Writes a safetensors file with the given (name, dtype, shape) tensors, zero data.
fn write_safetensors(path: &Path, tensors: &[(&str, &str, &[u64])]) {
    let mut header = serde_json::Map::new();
    header.insert("__metadata__".into(), serde_json::json!({"format": "pt"}));
    let mut offset = 0u64;
    for (name, dtype, shape) in tensors {
        let size: u64 = match *dtype {
            "BF16" | "F16" => 2,
            "F32" => 4,
            _ => 1,
        };
        let bytes = shape.iter().product::<u64>() * size;
        header.insert(
            (*name).into(),
            serde_json::json!({"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + bytes]}),
        );
        offset += bytes;
    }
    let json = serde_json::to_vec(&header).unwrap();
    let mut out = (json.len() as u64).to_le_bytes().to_vec();
    out.extend(json);
    out.extend(std::iter::repeat_n(0u8, offset as usize));
    std::fs::write(path, out).unwrap();
}

fn fixture(name: &str) -> PathBuf {
    fixtures().join("checkpoints").join(name)
}

/// A temporary copy of a fixture checkpoint, so tests can add weights to it.
fn copy_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture(name)).unwrap() {
        let p = entry.unwrap().path();
        std::fs::copy(&p, dir.path().join(p.file_name().unwrap())).unwrap();
    }
    dir
}

#[test]
fn single_file_dtype_census() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("model.safetensors");
    // 1000×64 BF16 = 128,000 B; 64 F32 = 256 B; 1000×64 F8_E4M3 = 64,000 B.
    write_safetensors(
        &p,
        &[
            ("embed.weight", "BF16", &[1000, 64]),
            ("norm.weight", "F32", &[64]),
            ("proj.weight", "F8_E4M3", &[1000, 64]),
        ],
    );
    let s = read_safetensors_header(&p).unwrap();
    assert_eq!(s.tensor_count, 3);
    assert_eq!(s.total_bytes, 128_000 + 256 + 64_000);
    let names: Vec<_> = s
        .dtypes
        .iter()
        .map(|d| (d.dtype.as_str(), d.bytes))
        .collect();
    assert_eq!(
        names,
        [("BF16", 128_000), ("F8_E4M3", 64_000), ("F32", 256)]
    );
}

#[test]
fn sharded_through_the_index() {
    let dir = tempfile::tempdir().unwrap();
    write_safetensors(
        &dir.path().join("model-00001-of-00002.safetensors"),
        &[("a", "BF16", &[10, 10]), ("b", "BF16", &[10])],
    );
    write_safetensors(
        &dir.path().join("model-00002-of-00002.safetensors"),
        &[("c", "F32", &[5])],
    );
    let index = serde_json::json!({
        "metadata": {"total_size": 240},
        "weight_map": {
            "a": "model-00001-of-00002.safetensors",
            "b": "model-00001-of-00002.safetensors",
            "c": "model-00002-of-00002.safetensors"
        }
    });
    let ip = dir.path().join("model.safetensors.index.json");
    std::fs::write(&ip, index.to_string()).unwrap();
    let s = read_safetensors_index(&ip).unwrap();
    // 100×2 + 10×2 + 5×4 = 240 B over two files.
    assert_eq!((s.total_bytes, s.tensor_count, s.files.len()), (240, 3, 2));

    // A missing shard is an error that says to finish the download.
    std::fs::remove_file(dir.path().join("model-00002-of-00002.safetensors")).unwrap();
    let msg = read_safetensors_index(&ip).unwrap_err().to_string();
    assert!(
        msg.contains("model-00002-of-00002.safetensors") && msg.contains("fix:"),
        "{msg}"
    );
}

#[test]
fn hostile_safetensors_headers_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.safetensors");
    let cases: Vec<Vec<u8>> = vec![
        vec![],
        vec![1, 2, 3],
        u64::MAX.to_le_bytes().to_vec(),
        // Header length beyond the file.
        [1000u64.to_le_bytes().to_vec(), b"{}".to_vec()].concat(),
        // Offsets past the data section.
        {
            let h = br#"{"t":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}"#;
            [
                (h.len() as u64).to_le_bytes().to_vec(),
                h.to_vec(),
                vec![0; 8],
            ]
            .concat()
        },
        // Shape × dtype disagrees with the span.
        {
            let h = br#"{"t":{"dtype":"F32","shape":[3],"data_offsets":[0,16]}}"#;
            [
                (h.len() as u64).to_le_bytes().to_vec(),
                h.to_vec(),
                vec![0; 16],
            ]
            .concat()
        },
        // Not JSON.
        [4u64.to_le_bytes().to_vec(), b"{{{{".to_vec()].concat(),
    ];
    for bytes in cases {
        std::fs::write(&p, &bytes).unwrap();
        let err = read_safetensors_header(&p).unwrap_err();
        assert!(err.to_string().contains("bad.safetensors"), "{err}");
    }
    // The cap: a 200 MB header length is refused without reading it.
    std::fs::write(&p, 200_000_000u64.to_le_bytes()).unwrap();
    assert!(matches!(
        read_safetensors_header(&p),
        Err(ModelError::Malformed { .. })
    ));
}

#[test]
fn compressed_tensors_flag_on_bf16_weights_is_the_seed_crash() {
    let dir = copy_fixture("gemma-3-27b-it-bf16");
    write_safetensors(
        &dir.path().join("model.safetensors"),
        &[(
            "language_model.model.embed_tokens.weight",
            "BF16",
            &[512, 64],
        )],
    );
    let report = inspect_checkpoint(dir.path()).unwrap();
    assert_eq!(report.architectures, ["Gemma3ForConditionalGeneration"]);
    assert_eq!(report.model_type.as_deref(), Some("gemma3"));
    assert_eq!(report.text_model_type.as_deref(), Some("gemma3_text"));
    assert_eq!(report.quantization, None);
    assert_eq!(report.weights.as_ref().unwrap().bytes, 512 * 64 * 2);
    assert_eq!(
        report.kv_geometry.as_ref().unwrap().sliding_window,
        Some(1024)
    );

    let findings = check_serving_flag(&report, Some("compressed-tensors"));
    assert_eq!(findings.len(), 1);
    let f = &findings[0];
    assert_eq!(
        (f.code.as_str(), f.severity),
        ("quantization-mismatch", Severity::Error)
    );
    assert!(
        f.message.contains(COMPRESSED_TENSORS_CRASH),
        "{}",
        f.message
    );
    assert!(COMPRESSED_TENSORS_CRASH.contains("'target_scheme_map', 'ignore', 'quant_format'"));
    let fix = f.fix.as_deref().unwrap();
    assert!(fix.contains("drop the --quantization flag") && fix.contains("quantized"));

    // No flag on an unquantized checkpoint: nothing to say.
    assert!(check_serving_flag(&report, None).is_empty());
    // An online-quantizing flag is fine, and noted.
    let fp8 = check_serving_flag(&report, Some("fp8"));
    assert_eq!(fp8[0].severity, Severity::Note);
    // A method that needs a quantized checkpoint is a mismatch too.
    assert_eq!(
        check_serving_flag(&report, Some("awq_marlin"))[0].code,
        "quantization-mismatch"
    );
}

#[test]
fn compressed_tensors_checkpoint_with_and_without_flag() {
    let report = inspect_checkpoint(&fixture("gemma-3-27b-it-fp8-dynamic")).unwrap();
    let q = report.quantization.as_ref().unwrap();
    assert_eq!(q.method, "compressed-tensors");
    assert_eq!(q.format.as_deref(), Some("float-quantized"));
    assert!(!q.legacy_layout);
    // No weights in the fixture: reported, not an error.
    assert!(report.weights.is_none());
    assert!(report.notes.iter().any(|n| n.contains("no weight files")));

    // The flag agrees: redundant, not wrong.
    let f = check_serving_flag(&report, Some("compressed-tensors"));
    assert!(f.iter().all(|f| f.severity == Severity::Note), "{f:?}");
    // No flag on a quantized checkpoint: fine, vLLM auto-detects, but noted.
    let f = check_serving_flag(&report, None);
    assert_eq!(
        (f[0].code.as_str(), f[0].severity),
        ("quantization-auto-detected", Severity::Note)
    );
    // A different method: mismatch.
    let f = check_serving_flag(&report, Some("gptq"));
    assert_eq!(
        (f[0].code.as_str(), f[0].severity),
        ("quantization-mismatch", Severity::Error)
    );
    assert!(f[0].message.contains("compressed-tensors"));
}

#[test]
fn awq_accepts_its_marlin_kernel_but_not_fp8() {
    let report = inspect_checkpoint(&fixture("llama-3.1-8b-instruct-awq")).unwrap();
    let q = report.quantization.as_ref().unwrap();
    assert_eq!(
        (q.method.as_str(), q.bits, q.group_size),
        ("awq", Some(4), Some(128))
    );
    assert_eq!(q.format.as_deref(), Some("gemm"));
    assert!(
        check_serving_flag(&report, Some("awq_marlin"))
            .iter()
            .all(|f| f.severity == Severity::Note)
    );
    assert_eq!(
        check_serving_flag(&report, Some("fp8"))[0].code,
        "quantization-mismatch"
    );
}

#[test]
fn modelopt_quantization_from_hf_quant_config() {
    let report = inspect_checkpoint(&fixture("llama-3.1-8b-instruct-modelopt-fp8")).unwrap();
    let q = report.quantization.as_ref().unwrap();
    assert_eq!(
        (
            q.method.as_str(),
            q.source.as_str(),
            q.quant_algo.as_deref()
        ),
        ("modelopt", "hf_quant_config.json", Some("FP8"))
    );
    assert!(
        check_serving_flag(&report, Some("modelopt"))
            .iter()
            .all(|f| f.severity == Severity::Note)
    );
    assert_eq!(
        check_serving_flag(&report, Some("compressed-tensors"))[0].code,
        "quantization-mismatch"
    );
}

#[test]
fn gguf_file_as_a_checkpoint() {
    let path = real_model();
    let report = inspect_checkpoint(&path).unwrap();
    assert_eq!(report.architectures, ["gemma3"]);
    assert_eq!(report.context_length, Some(32_768));
    let q = report.quantization.as_ref().unwrap();
    assert_eq!(
        (q.method.as_str(), q.format.as_deref()),
        ("gguf", Some("MOSTLY_Q4_K_M"))
    );
    assert_eq!(report.weights.as_ref().unwrap().bytes, 246_587_904);
    assert_eq!(
        check_serving_flag(&report, Some("compressed-tensors"))[0].code,
        "quantization-mismatch"
    );
}

#[test]
fn not_a_checkpoint_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let msg = inspect_checkpoint(dir.path()).unwrap_err().to_string();
    assert!(
        msg.contains("no config.json") && msg.contains("fix:"),
        "{msg}"
    );
}

#[test]
fn seat_up_audit_refuses_compressed_tensors_on_bf16() {
    use bakeoff_model::{audit_seat_checkpoint, blocks_start};
    let bf16 = fixture("gemma-3-27b-it-bf16");
    let f = audit_seat_checkpoint(&bf16, Some("compressed-tensors"));
    assert_eq!(f[0].code, "quantization-mismatch");
    assert!(blocks_start(&f));
    assert!(!blocks_start(&audit_seat_checkpoint(&bf16, None)));
    // A Hub id is not a local path: nothing to audit, nothing blocked.
    assert!(
        audit_seat_checkpoint(
            Path::new("google/gemma-3-27b-it"),
            Some("compressed-tensors")
        )
        .is_empty()
    );
    // An unreadable local path blocks with the reason.
    let empty = tempfile::tempdir().unwrap();
    let f = audit_seat_checkpoint(empty.path(), None);
    assert_eq!(f[0].code, "checkpoint-unreadable");
    assert!(blocks_start(&f));
}
