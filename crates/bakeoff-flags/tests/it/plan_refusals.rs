//! `plan` and `kv`: zero, negative and NaN values of every numeric flag are refused in one
//! line that names the flag and the fix — never "0 tokens", never a silent `--tp 1`. The
//! files the command lines name are never read for these: the flags are checked first.

use crate::{check, refused};

#[test]
fn numeric_flags_refuse_zero_negative_and_nan() {
    let cfg = "config.json";
    let gguf = "model.gguf";
    let fleet = "fleet.toml";
    let cases: Vec<(&str, Vec<&str>)> = vec![
        (
            "--max-model-len",
            vec!["kv", cfg, "--budget-gib", "20", "--max-model-len", "0"],
        ),
        (
            "--max-model-len",
            vec!["kv", cfg, "--max-model-len", "-4096"],
        ),
        ("--tp", vec!["kv", cfg, "--budget-gib", "20", "--tp", "0"]),
        ("--tp", vec!["kv", cfg, "--tp", "-2"]),
        ("--budget-gib", vec!["kv", cfg, "--budget-gib", "0"]),
        ("--budget-gib", vec!["kv", cfg, "--budget-gib", "-1"]),
        ("--budget-gib", vec!["kv", cfg, "--budget-gib", "NaN"]),
        ("--budget-gib", vec!["kv", cfg, "--budget-gib", "inf"]),
        ("--ctx", vec!["kv", gguf, "--ctx", "0"]),
        ("--parallel", vec!["kv", gguf, "--parallel", "0"]),
        ("--parallel", vec!["kv", gguf, "--parallel", "-8"]),
        (
            "--gpu-memory-gib",
            vec!["plan", "--fleet", fleet, "--gpu-memory-gib", "0"],
        ),
        (
            "--gpu-memory-gib",
            vec!["plan", "--fleet", fleet, "--gpu-memory-gib", "NaN"],
        ),
        (
            "--gpu-memory-gib",
            vec!["plan", "--fleet", fleet, "--gpu-memory-gib", "-94.97"],
        ),
        ("--margin", vec!["plan", "--fleet", fleet, "--margin", "-1"]),
        (
            "--margin",
            vec!["plan", "--fleet", fleet, "--margin", "NaN"],
        ),
        (
            "--cuda-context-gib",
            vec!["plan", "--fleet", fleet, "--cuda-context-gib", "0"],
        ),
        (
            "--cuda-graphs-gib",
            vec!["plan", "--fleet", fleet, "--cuda-graphs-gib", "-1"],
        ),
        (
            "--gpu",
            vec![
                "plan",
                "--fleet",
                fleet,
                "--coexist",
                "gen,char-rp",
                "--gpu",
                "-1",
            ],
        ),
    ];
    for (flag, args) in cases {
        let line = refused(&args);
        assert_eq!(line.trim_end().lines().count(), 1, "{args:?}: {line}");
        assert!(
            line.starts_with(&format!("error: {flag} ")) && line.contains("; fix: "),
            "{args:?}: {line}"
        );
    }
    // 0 is a margin ("no margin"), and GPU 0 is a GPU.
    assert!(check(&["plan", "--fleet", fleet, "--margin", "0"]).is_ok());
    assert!(
        check(&[
            "plan",
            "--fleet",
            fleet,
            "--coexist",
            "gen,char-rp",
            "--gpu",
            "0"
        ])
        .is_ok()
    );
}
