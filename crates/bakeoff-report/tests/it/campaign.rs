//! A campaign's renderings on a hand-built record: two candidates, one whose `-c` ladder
//! separates passes from failures, one whose every variant failed its KV budget (with one
//! skipped and one interrupted) while it displaced the production seat `gen`. The artifacts the
//! record names are written to a temporary directory, so Model and Engine come from files; one
//! is missing on purpose. A failure message carries `<script>` and a log line an ANSI escape.

use std::path::Path;

use bakeoff_artifact::campaign::{
    Axis, AxisValue, CampaignRecord, CandidatePlan, Displacement, FitCheck, LadderMode, Outcome,
    OutcomeKind, SuiteScore, Timings, VariantRow,
};
use bakeoff_artifact::evidence::{Scope, VerdictEntry, VerdictKind};
use bakeoff_artifact::{
    Artifact, ArtifactKind, Candidate, EndpointRecord, EngineKind, Failure, FailureClass, Score,
    write_atomic,
};
use bakeoff_report::campaign::{self, CauseClass};
use bakeoff_report::{evidence, html, registry, terminal};
use chrono::{DateTime, Utc};

fn at(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

fn row(candidate: &str, variant: &str, index: u32, axes: &[(&str, &str)]) -> VariantRow {
    VariantRow {
        candidate: candidate.into(),
        variant: variant.into(),
        index,
        axes: axes
            .iter()
            .map(|(f, v)| AxisValue {
                flag: f.to_string(),
                value: v.to_string(),
            })
            .collect(),
        delta: Vec::new(),
        launch: String::new(),
        outcome: Outcome::pending(),
        outcome_label: "pending".into(),
        suggested_verdict: None,
        suites: Vec::new(),
        artifacts: Vec::new(),
        log: None,
        log_lines: Vec::new(),
        displaced: Vec::new(),
        fit: None,
        timings: Timings::default(),
        attempts: 1,
        started_at: None,
        finished_at: None,
        notes: Vec::new(),
        conditions: None,
        probe: None,
        trial: None,
    }
}

fn smoke(passed: u64) -> SuiteScore {
    SuiteScore {
        suite: "smoke".into(),
        status: bakeoff_artifact::SuiteStatus::Complete,
        score: Some(Score {
            successes: passed,
            n: 5,
            estimate: passed as f64 / 5.0,
            low: 0.5,
            high: 1.0,
        }),
        flags: Vec::new(),
        valid: true,
    }
}

fn gen_down(ms: u64) -> Displacement {
    Displacement {
        seat: "gen".into(),
        was_up: true,
        idle_wait_ms: 1200,
        restored: Some(true),
        down_ms: Some(ms),
        notes: Vec::new(),
    }
}

const WEDGE: &str = "no log line for 300 s \u{1b}[2Jwhile not ready <script>alert(1)</script>";

pub(crate) fn record() -> CampaignRecord {
    let q = "qwen-small";
    let mut v1 = row(
        q,
        "qwen-small-c-8192-flash-attn-on",
        1,
        &[("-c", "8192"), ("--flash-attn", "on")],
    );
    v1.delta = vec!["-c 8192 (was 4096)".into(), "+ --flash-attn on".into()];
    v1.launch =
        "llama-server -m /models/qwen3-0.6b-q4_k_m.gguf -c 8192 --port 8081 --flash-attn on".into();
    v1.set_outcome(Outcome::failed(FailureClass::InitWedge, WEDGE));
    v1.artifacts = vec!["qwen-small-c-8192-flash-attn-on.failure.json".into()];
    v1.log = Some("qwen-small-c-8192-flash-attn-on.log".into());
    v1.log_lines = vec![
        "llama_kv_cache: size = 1024.00 MiB (8192 cells)".into(),
        "\u{1b}[31mggml_cuda_init: found 1 CUDA devices\u{1b}[0m".into(),
        "load_tensors: offloaded 29/29 layers to GPU".into(),
        "llama_context: flash_attn = 1".into(),
        "graph_reserve: reserving a graph for ubatch with n_tokens = 512".into(),
        "(silence)".into(),
    ];
    v1.timings.start_ms = Some(300_000);
    v1.timings.total_ms = 301_000;

    let mut v2 = row(
        q,
        "qwen-small-c-8192-flash-attn-off",
        2,
        &[("-c", "8192"), ("--flash-attn", "off")],
    );
    v2.delta = vec!["-c 8192 (was 4096)".into(), "+ --flash-attn off".into()];
    v2.set_outcome(Outcome::failed(
        FailureClass::Exited,
        "exited with code 139 before ready",
    ));
    v2.artifacts = vec![
        "qwen-small-c-8192-flash-attn-off.failure.json".into(),
        "qwen-small-c-8192-flash-attn-off.20260710T101500Z.failure.json".into(),
    ];
    v2.log_lines = vec!["Segmentation fault (core dumped)".into()];
    v2.timings.start_ms = Some(2_400);
    v2.attempts = 2;

    let mut v3 = row(
        q,
        "qwen-small-c-4096-flash-attn-on",
        3,
        &[("-c", "4096"), ("--flash-attn", "on")],
    );
    v3.delta = vec!["+ --flash-attn on".into()];
    v3.set_outcome(Outcome::of(OutcomeKind::Completed, ""));
    v3.suites = vec![smoke(5)];
    v3.artifacts = vec!["qwen-small-c-4096-flash-attn-on.bakeoff.json".into()];
    v3.timings.start_ms = Some(4_200);

    let mut v4 = row(
        q,
        "qwen-small-c-4096-flash-attn-off",
        4,
        &[("-c", "4096"), ("--flash-attn", "off")],
    );
    v4.delta = vec!["+ --flash-attn off".into()];
    v4.set_outcome(Outcome::of(OutcomeKind::Completed, ""));
    v4.suites = vec![smoke(4)];
    v4.artifacts = vec!["qwen-small-c-4096-flash-attn-off.bakeoff.json".into()];
    v4.timings.start_ms = Some(3_900);

    let g = "gemma-big";
    let launch = |len: &str, gmu: &str| {
        format!(
            "container bench-gemma image vllm/vllm-openai:v0.19.0 vllm serve google/gemma-3-27b-it --max-model-len {len} --gpu-memory-utilization {gmu}"
        )
    };
    let mut v5 = row(
        g,
        "gemma-big-max-model-len-32768-gpu-memory-utilization-0-88",
        5,
        &[
            ("--max-model-len", "32768"),
            ("--gpu-memory-utilization", "0.88"),
        ],
    );
    v5.launch = launch("32768", "0.88");
    v5.set_outcome(Outcome::failed(
        FailureClass::KvCacheBudget,
        "No available memory for the cache blocks (available KV -2.61 GiB)",
    ));
    v5.artifacts =
        vec!["gemma-big-max-model-len-32768-gpu-memory-utilization-0-88.failure.json".into()];
    v5.log_lines = vec![
        "Available KV cache memory: -2.61 GiB".into(),
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization`".into(),
    ];
    v5.displaced = vec![gen_down(312_000)];
    v5.timings.start_ms = Some(184_000);
    v5.timings.production_down_ms = Some(312_000);

    let mut v6 = row(
        g,
        "gemma-big-max-model-len-32768-gpu-memory-utilization-0-94",
        6,
        &[
            ("--max-model-len", "32768"),
            ("--gpu-memory-utilization", "0.94"),
        ],
    );
    v6.launch = launch("32768", "0.94");
    v6.delta = vec!["--gpu-memory-utilization 0.94 (was 0.88)".into()];
    v6.set_outcome(Outcome::failed(
        FailureClass::KvCacheBudget,
        "No available memory for the cache blocks (available KV -0.66 GiB)",
    ));
    v6.artifacts =
        vec!["gemma-big-max-model-len-32768-gpu-memory-utilization-0-94.failure.json".into()];
    v6.displaced = vec![gen_down(298_500)];
    v6.fit = Some(FitCheck {
        answer: "yes".into(),
        lines: vec!["weights 54.0 GiB + KV 8.0 GiB <= 75.2 GiB free".into()],
    });
    v6.timings.start_ms = Some(176_500);

    let mut v7 = row(
        g,
        "gemma-big-max-model-len-16384-gpu-memory-utilization-0-88",
        7,
        &[
            ("--max-model-len", "16384"),
            ("--gpu-memory-utilization", "0.88"),
        ],
    );
    v7.launch = launch("16384", "0.88");
    v7.delta = vec!["--max-model-len 16384 (was 32768)".into()];
    v7.set_outcome(Outcome::of(
        OutcomeKind::Interrupted,
        "the campaign was stopped (SIGINT) while the seat loaded weights",
    ));
    v7.displaced = vec![Displacement {
        restored: None,
        down_ms: None,
        ..gen_down(0)
    }];
    v7.timings.start_ms = Some(95_000);

    let mut v8 = row(
        g,
        "gemma-big-max-model-len-16384-gpu-memory-utilization-0-94",
        8,
        &[
            ("--max-model-len", "16384"),
            ("--gpu-memory-utilization", "0.94"),
        ],
    );
    v8.launch = launch("16384", "0.94");
    v8.set_outcome(Outcome::skipped(
        "ladder-stopped",
        "the operator stopped the ladder after the interrupted variant",
    ));

    CampaignRecord {
        schema_version: 1,
        name: "july bakeoff".into(),
        file: "campaigns/july.toml".into(),
        fleet: "fleet.toml".into(),
        suites: vec!["smoke".into()],
        limit: None,
        started_at: at("2026-07-10T09:00:00Z"),
        updated_at: at("2026-07-10T11:42:00Z"),
        finished: false,
        candidates: vec![
            CandidatePlan {
                name: q.into(),
                seat: "qwen".into(),
                engine: EngineKind::LlamaCpp,
                base: "llama-server -m /models/qwen3-0.6b-q4_k_m.gguf -c 4096 --port 8081".into(),
                note: None,
                axes: vec![
                    Axis {
                        flag: "-c".into(),
                        values: vec!["8192".into(), "4096".into()],
                    },
                    Axis {
                        flag: "--flash-attn".into(),
                        values: vec!["on".into(), "off".into()],
                    },
                ],
                ladder_mode: LadderMode::All,
                displaces: Vec::new(),
            },
            CandidatePlan {
                name: g.into(),
                seat: "gemma-vllm".into(),
                engine: EngineKind::Vllm,
                base: launch("32768", "0.88"),
                note: Some("bf16 on the 80 GB card".into()),
                axes: vec![
                    Axis {
                        flag: "--max-model-len".into(),
                        values: vec!["32768".into(), "16384".into()],
                    },
                    Axis {
                        flag: "--gpu-memory-utilization".into(),
                        values: vec!["0.88".into(), "0.94".into()],
                    },
                ],
                ladder_mode: LadderMode::FirstSuccess,
                displaces: vec!["gen".into()],
            },
        ],
        variants: vec![v1, v2, v3, v4, v5, v6, v7, v8],
        notes: vec!["resumed once after SIGINT".into()],
        allow_contaminated: false,
        isolations: Vec::new(),
        tunings: Vec::new(),
    }
}

pub(crate) fn artifact(
    slug: &str,
    model: &str,
    engine: EngineKind,
    version: &str,
    failure: Option<(FailureClass, &str)>,
) -> Artifact {
    let mut c = Candidate::new(slug, model, engine);
    c.engine_version = Some(version.into());
    c.quantization = Some(
        if engine == EngineKind::Vllm {
            "bf16"
        } else {
            "q4_k_m"
        }
        .into(),
    );
    let kind = if failure.is_some() {
        ArtifactKind::Failure
    } else {
        ArtifactKind::Bakeoff
    };
    let mut a = Artifact::new(
        kind,
        c,
        EndpointRecord {
            url: "http://127.0.0.1:8081".into(),
            facts: None,
        },
    );
    a.created_at = at("2026-07-10T10:00:00Z");
    a.failure = failure.map(|(class, message)| Failure {
        class,
        message: message.into(),
        evidence: Vec::new(),
        elapsed_ms: 1000,
        remediation: None,
    });
    a
}

/// Every artifact the record names but one (`…20260710T101500Z.failure.json` stays missing),
/// an operator verdict on the first gemma variant, and the campaign's own files.
pub(crate) fn write_dir(dir: &Path, rec: &CampaignRecord) {
    for r in &rec.variants {
        for name in &r.artifacts {
            if name.contains("20260710T101500Z") {
                continue;
            }
            let a = if r.candidate == "qwen-small" {
                artifact(
                    &r.variant,
                    "/models/qwen3-0.6b-q4_k_m.gguf",
                    EngineKind::LlamaCpp,
                    "b6500 (1d2c3f4)",
                    r.outcome.class.map(|c| (c, r.outcome.message.as_str())),
                )
            } else {
                artifact(
                    &r.variant,
                    "google/gemma-3-27b-it",
                    EngineKind::Vllm,
                    "0.19.0",
                    r.outcome.class.map(|c| (c, r.outcome.message.as_str())),
                )
            };
            write_atomic(&dir.join(name), &a).unwrap();
        }
    }
    let slug = "gemma-big-max-model-len-32768-gpu-memory-utilization-0-88";
    evidence::set_verdict(
        dir,
        slug,
        VerdictEntry {
            verdict: VerdictKind::RejectUnderTestedConfiguration,
            reason: "KV budget negative at 32k on the 80 GB card".into(),
            date: at("2026-07-10T12:00:00Z"),
            scope: Scope {
                model: "google/gemma-3-27b-it".into(),
                engine: EngineKind::Vllm,
                engine_version: Some("0.19.0".into()),
                quantization: Some("bf16".into()),
                window_tokens: Some(32768),
                hardware: None,
                artifacts: vec![format!("{slug}.failure.json")],
            },
            not_attempted: vec!["an fp8 KV cache".into(), "the NGC 26.04 image".into()],
            production_impact: Some("inside the planned window for gen".into()),
        },
    )
    .unwrap();
    write_atomic(&dir.join("campaign.json"), rec).unwrap();
    std::fs::write(
        dir.join("campaign.journal.jsonl"),
        "{\"event\":\"started\"}\n",
    )
    .unwrap();
}

/// Contamination withholds only what contention can cause. A busy host cannot
/// produce the engine's own `bad-argument` or `context-too-long`: their verdicts stand, the
/// believed cause is drawn from them and the (contaminated) completions, and the ladder says
/// why; the completion's figures and verdict are still withheld.
#[test]
fn an_engine_stated_failure_on_a_contaminated_host_keeps_its_verdict_and_the_cause() {
    use bakeoff_artifact::campaign::{ConditionFinding, VariantConditions};
    let busy = VariantConditions {
        clean: false,
        sampled: vec!["seat load".into()],
        findings: vec![ConditionFinding {
            during: "seat load".into(),
            code: "host-contended".into(),
            message: "other processes used 1.9 of 2 cores".into(),
        }],
    };
    let mut rec = record();
    for r in rec
        .variants
        .iter_mut()
        .filter(|r| r.candidate == "qwen-small")
    {
        if r.index == 1 {
            r.set_outcome(Outcome::failed(
                FailureClass::BadArgument,
                "error: invalid argument: --flash-attn",
            ));
        }
        if r.index == 2 {
            r.set_outcome(Outcome::failed(
                FailureClass::ContextTooLong,
                "max_model_len 8192 is greater than the derived max_model_len 4096",
            ));
        }
        r.conditions = Some(busy.clone());
    }
    for allow in [false, true] {
        rec.allow_contaminated = allow;
        let text = campaign::ladder_table_at(&rec, Some(200));
        assert!(
            text.contains(
                "believed cause config-specific: `-c` separated pass (4096) from fail (8192)"
            ),
            "{text}"
        );
        assert!(!text.contains("believed cause withheld"), "{text}");
        assert!(
            text.contains("its failure (bad-argument) is the engine's own statement, which contention cannot cause: its verdict stands"),
            "{text}"
        );
        let dir = tempfile::tempdir().unwrap();
        write_dir(dir.path(), &rec);
        let md = campaign::negative_results(&rec, dir.path(), "2026-07-10 12:30 UTC");
        assert!(
            md.contains("**Believed cause class:** config-specific"),
            "{md}"
        );
        assert!(
            md.contains("reject under tested configuration for `qwen-small-c-8192-flash-attn-on`"),
            "{md}"
        );
        if !allow {
            // The completions' verdicts rest on their figures: withheld.
            assert!(
                md.contains("withheld for `qwen-small-c-4096-flash-attn-on`"),
                "{md}"
            );
        }
    }
}

/// (docs/metrics.md "Conditions") a verdict that rests on a contaminated variant (here a seat load whose page
/// cache was dropped) is withheld in the ladder, negative-results.md and the HTML report,
/// naming the variant and why; `allow_contaminated` (`--allow contaminated`) gives it, still
/// marked.
#[test]
fn a_verdict_resting_on_a_contaminated_variant_is_withheld_unless_allowed() {
    use bakeoff_artifact::campaign::{ConditionFinding, VariantConditions};
    let dir = tempfile::tempdir().unwrap();
    let mut rec = record();
    let r = rec
        .variants
        .iter_mut()
        .find(|r| r.candidate == "qwen-small" && r.outcome.kind == OutcomeKind::Completed)
        .unwrap();
    r.conditions = Some(VariantConditions {
        clean: false,
        sampled: vec!["seat load".into(), "smoke".into()],
        findings: vec![ConditionFinding {
            during: "seat load".into(),
            code: "page-cache-dropped".into(),
            message: "page cache fell from 9000 MiB to 4000 MiB during the step".into(),
        }],
    });
    let v = r.variant.clone();
    let conditions = r.conditions.clone();
    // The cause is withheld for a failure contention could cause (init-wedge, a
    // timing judgment), not for the completion (contention never makes a variant complete).
    let wedge = rec
        .variants
        .iter_mut()
        .find(|r| r.outcome.class == Some(FailureClass::InitWedge))
        .unwrap();
    wedge.conditions = conditions;
    let w = wedge.variant.clone();
    write_dir(dir.path(), &rec);

    let text = campaign::ladder_table_at(&rec, Some(200));
    assert!(
        text.contains(&format!(
            "contaminated: {v} (page-cache-dropped during seat load)"
        )) && text.contains("suggested verdict is WITHHELD"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "believed cause withheld: it rests on contaminated variant(s) `{w}` (page-cache-dropped during seat load)"
        )),
        "{text}"
    );
    assert!(!text.contains(&format!("`{v}` (page-cache")), "{text}");
    let md = campaign::negative_results(&rec, dir.path(), "2026-07-10 12:30 UTC");
    assert!(
        md.contains("**Believed cause class:** withheld: it rests on contaminated variant(s)"),
        "{md}"
    );
    assert!(
        md.contains(&format!(
            "withheld for `{w}` (page-cache-dropped during seat load), `{v}` (page-cache-dropped during seat load)"
        )),
        "{md}"
    );
    assert!(md.contains("| completed | CONTAMINATED: "), "{md}");
    let page = campaign::html_section(&rec);
    assert!(page.contains("<strong>CONTAMINATED</strong>"), "{page}");
    assert!(page.contains("Believed cause class: withheld"), "{page}");

    rec.allow_contaminated = true;
    let text = campaign::ladder_table_at(&rec, Some(200));
    assert!(
        text.contains("suggested verdict watch, given under --allow contaminated"),
        "{text}"
    );
    assert!(!text.contains("believed cause withheld"), "{text}");
    let md = campaign::negative_results(&rec, dir.path(), "2026-07-10 12:30 UTC");
    assert!(
        md.contains("**Believed cause class:** config-specific"),
        "{md}"
    );
    assert!(!md.contains("withheld for"), "{md}");
    let page = campaign::html_section(&rec);
    assert!(page.contains("<strong>CONTAMINATED</strong>"), "{page}");
    assert!(!page.contains("withheld"), "{page}");
}

fn no_raw_markup(s: &str) {
    assert!(!s.contains('\u{1b}'), "an ANSI escape got through:\n{s}");
    assert!(!s.contains("<script>"), "a tag got through:\n{s}");
}

#[test]
fn ladder_table() {
    let text = campaign::ladder_table_at(&record(), Some(200));
    // A terminal shows a tag as text; an escape sequence would act, so it is made visible.
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(text.contains("\\u{1b}[2J"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn negative_results() {
    let dir = tempfile::tempdir().unwrap();
    let rec = record();
    write_dir(dir.path(), &rec);
    let md = campaign::negative_results(&rec, dir.path(), "2026-07-10 12:30 UTC")
        .replace(env!("CARGO_PKG_VERSION"), "[version]");
    assert!(!md.contains('\u{1b}'), "{md}");
    // The message is markdown text: its tag is entity-escaped.
    assert!(md.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{md}");
    assert!(!md.contains("<script>"), "{md}");
    insta::assert_snapshot!(md);
}

#[test]
fn html_section() {
    let text = campaign::html_section(&record());
    no_raw_markup(&text);
    assert!(text.contains("&lt;script&gt;"), "{text}");
    // One line as rendered; broken after rows and paragraphs for the snapshot's reader.
    let readable = text.replace("</tr>", "</tr>\n").replace("</p>", "</p>\n");
    insta::assert_snapshot!(readable);
}

#[test]
fn believed_causes_of_the_two_candidates() {
    let rec = record();
    let of = |c: &str| {
        let rows: Vec<&VariantRow> = rec.variants.iter().filter(|r| r.candidate == c).collect();
        campaign::believed_cause(&rows)
    };
    let q = of("qwen-small");
    assert_eq!(q.class, CauseClass::ConfigSpecific);
    assert_eq!(
        q.text,
        "config-specific: `-c` separated pass (4096) from fail (8192)"
    );
    assert_eq!(of("gemma-big").class, CauseClass::Resources);
}

#[test]
fn a_campaign_with_every_variant_completed_has_no_entry() {
    let mut rec = record();
    rec.variants
        .retain(|r| r.outcome.kind == OutcomeKind::Completed);
    rec.candidates.truncate(1);
    let dir = tempfile::tempdir().unwrap();
    let md = campaign::negative_results(&rec, dir.path(), "now");
    assert!(!md.contains("## 1."), "{md}");
    assert!(
        md.contains("No failed or incomplete runs: every variant of every candidate completed."),
        "{md}"
    );
}

#[test]
fn missing_and_hostile_artifact_paths_are_noted_never_followed() {
    let mut rec = record();
    rec.variants[0].artifacts = vec!["../outside.failure.json".into(), "/etc/passwd".into()];
    let dir = tempfile::tempdir().unwrap();
    let md = campaign::negative_results(&rec, dir.path(), "now");
    assert!(
        md.contains("`../outside.failure.json` (not read: its path leaves the campaign directory)"),
        "{md}"
    );
    assert!(
        md.contains("`/etc/passwd` (not read: its path leaves"),
        "{md}"
    );
    assert!(
        md.contains("unknown: no artifact of this candidate could be read (see Evidence)"),
        "{md}"
    );
}

#[test]
fn the_registry_reads_the_campaign_and_never_takes_its_files_for_artifacts() {
    let dir = tempfile::tempdir().unwrap();
    let rec = record();
    write_dir(dir.path(), &rec);
    let reg = registry::load(dir.path()).unwrap();
    assert_eq!(reg.campaign.as_ref(), Some(&rec));
    assert!(reg.entries.iter().all(|e| !e.name.starts_with("campaign")));
    assert_eq!(reg.entries.len(), 6, "{:?}", reg.notes);
    assert!(reg.notes.is_empty(), "{:?}", reg.notes);
    let text = terminal::report(&reg);
    let ladder = campaign::ladder_table(&rec);
    assert!(text.ends_with(&ladder), "{text}");
    let page = html::report(&reg, "now");
    assert!(page.contains(&campaign::html_section(&rec)));
    assert!(!page.contains("<script>"));
}

#[test]
fn an_unreadable_campaign_record_is_a_note() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("campaign.json"), "{\"schema_version\": 9}").unwrap();
    std::fs::create_dir(dir.path().join("old")).unwrap();
    write_atomic(&dir.path().join("old/campaign.json"), &record()).unwrap();
    let reg = registry::load(dir.path()).unwrap();
    assert!(reg.campaign.is_none());
    assert_eq!(
        reg.notes,
        vec![
            "campaign record campaign.json not read: schema_version 9; this bakeoff reads campaign record version 1 (upgrade bakeoff)".to_string(),
            "skipped old/campaign.json: a campaign record, not a run artifact (report its directory to see its ladder)".to_string(),
        ]
    );
    assert!(reg.entries.is_empty());
}

#[test]
fn without_a_campaign_the_report_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let a = artifact("m-generic", "m", EngineKind::Generic, "1", None);
    write_atomic(&dir.path().join("m-generic.bakeoff.json"), &a).unwrap();
    let reg = registry::load(dir.path()).unwrap();
    assert!(reg.campaign.is_none());
    assert!(!terminal::report(&reg).contains("campaign"));
    assert!(!html::report(&reg, "now").contains("id=\"campaign\""));
}

/// (docs/metrics.md "Conditions") a variant whose suite carries a condition flag is named under its ladder, with
/// what contaminated it; a clean record has no such line.
#[test]
fn a_contaminated_variant_is_named_under_its_ladder() {
    let clean = campaign::ladder_table_at(&record(), Some(200));
    assert!(!clean.contains("contaminated:"), "{clean}");
    let mut rec = record();
    let r = rec
        .variants
        .iter_mut()
        .find(|r| !r.suites.is_empty())
        .unwrap();
    r.suites[0].flags.push("warning:host-contended".into());
    let (variant, suite) = (r.variant.clone(), r.suites[0].suite.clone());
    let text = campaign::ladder_table_at(&rec, Some(200));
    assert!(
        text.contains(&format!(
            "contaminated: {variant} ({suite}: host-contended): its figures are not comparable with a clean variant's"
        )),
        "{text}"
    );
}
