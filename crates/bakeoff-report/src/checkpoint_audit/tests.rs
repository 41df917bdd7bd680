use bakeoff_model::checkpoint::{WeightsFormat, WeightsSummary};
use bakeoff_model::{CheckpointReport, Finding, QuantizationInfo, Severity};

use super::{json, terminal};

/// A quantized checkpoint whose config.json names its architecture with an escape sequence (a
/// hostile file: shown escaped, never sent to the terminal), served without the flag.
fn hostile() -> (CheckpointReport, Vec<Finding>) {
    let report = CheckpointReport {
        path: "/models/qwen-fp8".into(),
        architectures: vec!["Qwen2ForCausalLM\u{1b}[2J".into()],
        model_type: Some("qwen2".into()),
        text_model_type: None,
        dtype: Some("bfloat16".into()),
        context_length: Some(32768),
        quantization: Some(QuantizationInfo {
            method: "fp8".into(),
            source: "config.json quantization_config".into(),
            bits: Some(8),
            group_size: None,
            format: Some("float-quantized".into()),
            quant_algo: None,
            legacy_layout: false,
        }),
        weights: Some(WeightsSummary {
            format: WeightsFormat::Safetensors,
            bytes: 8_589_934_592,
            source: "safetensors headers".into(),
            files: vec![
                "model-00001-of-00002.safetensors".into(),
                "model-00002-of-00002.safetensors".into(),
            ],
            dtypes: Vec::new(),
        }),
        kv_geometry: None,
        notes: vec!["kv geometry: no num_key_value_heads".into()],
    };
    let findings = vec![Finding {
        code: "quantization-flag-missing".into(),
        severity: Severity::Warning,
        message: "the checkpoint is fp8-quantized but no --quantization is given".into(),
        fix: Some("pass --quantization fp8, or leave it to the engine's detection".into()),
    }];
    (report, findings)
}

#[test]
fn report_escapes_the_checkpoints_strings() {
    let (report, findings) = hostile();
    let text = terminal(&report, None, &findings);
    assert!(!text.contains('\u{1b}'), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn no_finding_says_the_flag_agrees() {
    let (mut report, _) = hostile();
    report.weights = None;
    report.quantization = None;
    report.notes.clear();
    let text = terminal(&report, Some("fp8"), &[]);
    assert!(text.contains("  weights: none found\n"), "{text}");
    assert!(
        text.contains("  quantization_config: none (unquantized)\n"),
        "{text}"
    );
    assert!(
        text.contains("  serving flag: --quantization fp8\n"),
        "{text}"
    );
    assert!(
        text.ends_with("  ok: the flag agrees with the checkpoint\n"),
        "{text}"
    );
}

#[test]
fn json_names_the_flag_and_the_findings() {
    let (report, findings) = hostile();
    let v = json(&report, Some("fp8"), &findings);
    assert_eq!(v["quantization_flag"], "fp8");
    assert_eq!(v["findings"][0]["code"], "quantization-flag-missing");
    assert_eq!(v["checkpoint"]["path"], "/models/qwen-fp8");
}
