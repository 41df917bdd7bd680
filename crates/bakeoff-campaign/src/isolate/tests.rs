//! The planner over the engines' real words: each class's probes, and each conclusion.
#![allow(clippy::unwrap_used)]

use bakeoff_artifact::campaign::IsolationStatus;
use bakeoff_artifact::{EngineKind, FailureClass as C};

use super::plan::{Decision, Failed, Probe, Seen, decide};
use super::table::{self, ProbeKind};
use crate::variant::Change;

fn failed(class: C, text: &str, args: &str) -> Failed {
    Failed {
        class,
        text: text.into(),
        args: args.split_whitespace().map(String::from).collect(),
        memory_limit: None,
    }
}

fn next(f: &Failed, engine: EngineKind, seen: &[(Probe, Seen)]) -> Decision {
    decide(f, &table::levers(engine), 0.95, seen)
}

fn probe_of(d: Decision) -> Probe {
    match d {
        Decision::Probe { probe, .. } => probe,
        Decision::Conclude(k) => panic!("expected a probe, got {k:?}"),
    }
}

fn conclusion(d: Decision) -> super::plan::Conclusion {
    match d {
        Decision::Conclude(k) => k,
        Decision::Probe { probe, .. } => panic!("expected a conclusion, got {probe:?}"),
    }
}

fn wedge() -> Seen {
    Seen::Failed {
        class: C::InitWedge,
        text: String::new(),
    }
}

#[test]
fn a_refused_flag_is_left_out_and_chained() {
    let f = failed(
        C::BadArgument,
        "error: invalid argument: --no-such-flag",
        "-m /m --no-such-flag --also-bad -c 4096",
    );
    let p1 = probe_of(next(&f, EngineKind::LlamaCpp, &[]));
    assert_eq!(p1.changes, [Change::Remove("--no-such-flag".into())]);
    // The engine then refuses another flag: both are left out.
    let s1 = Seen::Failed {
        class: C::BadArgument,
        text: "error: invalid argument: --also-bad".into(),
    };
    let p2 = probe_of(next(&f, EngineKind::LlamaCpp, &[(p1.clone(), s1.clone())]));
    assert_eq!(
        p2.changes,
        [
            Change::Remove("--no-such-flag".into()),
            Change::Remove("--also-bad".into())
        ]
    );
    let k = conclusion(next(
        &f,
        EngineKind::LlamaCpp,
        &[(p1, s1), (p2, Seen::Ready)],
    ));
    assert_eq!(k.status, IsolationStatus::Isolated);
    assert_eq!(
        k.factor.as_deref(),
        Some("the flags `--no-such-flag` and `--also-bad` are the cause")
    );
    assert_eq!((k.passed, k.failed), (Some(1), Some(0)));
}

#[test]
fn a_window_above_the_derived_one_probes_the_derived_one() {
    let f = failed(
        C::ContextTooLong,
        "User-specified max_model_len (999999) is greater than the derived max_model_len (max_position_embeddings=8192 or model_max_length=None in model's config.json).",
        "--model /m --max-model-len 999999",
    );
    let p = probe_of(next(&f, EngineKind::Vllm, &[]));
    assert_eq!(
        p.changes,
        [Change::Set("--max-model-len".into(), "8192".into())]
    );
    let k = conclusion(next(&f, EngineKind::Vllm, &[(p, Seen::Ready)]));
    assert_eq!(k.status, IsolationStatus::Isolated);
    assert!(
        k.factor
            .unwrap()
            .contains("999999 is above the checkpoint's 8192")
    );
}

/// docs/field-cases.md B1: a wedge at 131k with graphs; graphs off at 131k starts, 64k with graphs
/// wedges: graph capture. Graphs off wedging and 64k starting: the window, then bisected.
#[test]
fn an_init_wedge_splits_graphs_from_the_window() {
    let f = failed(C::InitWedge, "", "--model /m --max-model-len 131072");
    let g = probe_of(next(&f, EngineKind::Vllm, &[]));
    assert_eq!(g.kind, ProbeKind::GraphsOff);
    assert_eq!(g.changes, [Change::Add("--enforce-eager".into())]);
    let h = probe_of(next(&f, EngineKind::Vllm, &[(g.clone(), Seen::Ready)]));
    assert_eq!(
        h.changes,
        [Change::Set("--max-model-len".into(), "65536".into())]
    );
    // Graphs off starts, 64k with graphs wedges: graph capture.
    let k = conclusion(next(
        &f,
        EngineKind::Vllm,
        &[(g.clone(), Seen::Ready), (h.clone(), wedge())],
    ));
    assert_eq!(k.factor.as_deref(), Some("graph capture"));
    // Both start: the two together.
    let k = conclusion(next(
        &f,
        EngineKind::Vllm,
        &[(g.clone(), Seen::Ready), (h.clone(), Seen::Ready)],
    ));
    assert_eq!(
        k.factor.as_deref(),
        Some("graph capture at the window 131072")
    );
    // Graphs off wedges, 64k starts: the window, bisected to one step (8192).
    let mut seen = vec![(g, wedge()), (h, Seen::Ready)];
    // The threshold sits at 100000 tokens.
    for _ in 0..8 {
        match next(&f, EngineKind::Vllm, &seen) {
            Decision::Probe { probe, .. } => {
                let w: u64 = match &probe.changes[0] {
                    Change::Set(_, v) => v.parse().unwrap(),
                    other => panic!("{other:?}"),
                };
                let s = if w <= 100_000 { Seen::Ready } else { wedge() };
                seen.push((probe, s));
            }
            Decision::Conclude(k) => {
                let factor = k.factor.unwrap();
                assert!(factor.starts_with("the window: "), "{factor}");
                let nums: Vec<u64> = factor
                    .split(|c: char| !c.is_ascii_digit())
                    .filter_map(|s| s.parse().ok())
                    .collect();
                assert!(nums[0] <= 100_000 && nums[1] > 100_000, "{factor}");
                assert!(nums[1] - nums[0] <= 8192, "{factor}");
                assert!(seen.len() <= 6, "{} probes", seen.len());
                return;
            }
        }
    }
    panic!("the bisection did not end");
}

#[test]
fn a_stated_kv_budget_predicts_the_window_and_checks_one_step_above() {
    let f = failed(
        C::KvCacheBudget,
        "(20.0 GiB KV cache is needed, which is larger than the available KV cache memory (5.0 GiB). Based on the available memory, the estimated maximum model length is 32752.",
        "--model /m --max-model-len 131072",
    );
    let p = probe_of(next(&f, EngineKind::Vllm, &[]));
    assert_eq!(
        p.changes,
        [Change::Set("--max-model-len".into(), "32512".into())]
    );
    let q = probe_of(next(&f, EngineKind::Vllm, &[(p.clone(), Seen::Ready)]));
    assert_eq!(
        q.changes,
        [Change::Set("--max-model-len".into(), "40704".into())]
    );
    let k = conclusion(next(
        &f,
        EngineKind::Vllm,
        &[
            (p, Seen::Ready),
            (
                q,
                Seen::Failed {
                    class: C::KvCacheBudget,
                    text: String::new(),
                },
            ),
        ],
    ));
    assert_eq!(
        k.factor.as_deref(),
        Some("the window: the largest that fits is 32512 (40704 fails)")
    );
}

/// docs/field-cases.md B4: a negative KV budget that no allowed fraction can cure is proven
/// unfit without a start.
#[test]
fn a_negative_budget_beyond_the_headroom_is_proven_unfit_without_a_start() {
    let f = failed(
        C::KvCacheBudget,
        "Memory profiling takes 12.3 seconds. total_gpu_memory (79.19GiB) x gpu_memory_utilization (0.90) = 71.27GiB\nAvailable KV cache memory: -6.50 GiB",
        "--model /m --gpu-memory-utilization 0.9",
    );
    let k = conclusion(next(&f, EngineKind::Vllm, &[]));
    assert_eq!(k.status, IsolationStatus::ProvenUnfit);
    assert!(
        k.summary.contains("nothing more was started"),
        "{}",
        k.summary
    );
    // A small deficit the headroom covers is probed.
    let f = failed(
        C::KvCacheBudget,
        "total_gpu_memory (79.19GiB)\nAvailable KV cache memory: -0.66 GiB",
        "--model /m --gpu-memory-utilization 0.9",
    );
    let p = probe_of(next(&f, EngineKind::Vllm, &[]));
    assert_eq!(
        p.changes,
        [Change::Set(
            "--gpu-memory-utilization".into(),
            "0.95".into()
        )]
    );
}

/// docs/field-cases.md B4: a multimodal checkpoint whose stated budget is negative. The language model
/// alone is one start before the fraction; when it too leaves a negative budget, the fraction is
/// priced, and no allowed one cures it: proven unfit after that single start.
#[test]
fn a_negative_budget_on_a_multimodal_checkpoint_tries_the_language_model_alone_first() {
    let text = "total_gpu_memory (79.19GiB) x gpu_memory_utilization (0.94)\nEncoder cache will be initialized with a budget of 8192 tokens, and profiled with 1 image items of the maximum feature size.\nAvailable KV cache memory: -2.61 GiB";
    let f = failed(
        C::KvCacheBudget,
        text,
        "--model /m --max-model-len 32768 --gpu-memory-utilization 0.94",
    );
    let p = probe_of(next(&f, EngineKind::Vllm, &[]));
    assert_eq!(p.kind, ProbeKind::LanguageModelOnly);
    assert_eq!(p.changes, [Change::Add("--language-model-only".into())]);
    assert!(p.hypothesis.contains("8192 tokens"), "{}", p.hypothesis);

    // It starts: the encoder's reservation is the factor.
    let k = conclusion(next(&f, EngineKind::Vllm, &[(p.clone(), Seen::Ready)]));
    assert_eq!(k.status, IsolationStatus::Isolated);
    assert_eq!(
        k.factor.as_deref(),
        Some("the multimodal encoder's reservation: --language-model-only starts")
    );
    assert_eq!(k.passed, Some(0));

    // It fails with the budget still negative: the fraction is priced, and 0.95 of 79.19 GiB
    // cannot cover 2.61 GiB from 0.94: proven unfit, the text-only budget said.
    let still = Seen::Failed {
        class: C::KvCacheBudget,
        text: "Available KV cache memory: -3.21 GiB".into(),
    };
    let k = conclusion(next(&f, EngineKind::Vllm, &[(p, still)]));
    assert_eq!(k.status, IsolationStatus::ProvenUnfit, "{k:?}");
    assert!(
        k.summary.starts_with(
            "--language-model-only did not keep the KV cache's memory (-3.21 GiB without the encoder, -2.61 GiB with it); "
        ),
        "{}",
        k.summary
    );

    // A text-only checkpoint (no encoder profiled), or the switch already given: the fraction.
    for (text, args) in [
        (
            "total_gpu_memory (79.19GiB)\nAvailable KV cache memory: -0.66 GiB",
            "--model /m --gpu-memory-utilization 0.9",
        ),
        (
            "total_gpu_memory (79.19GiB)\nEncoder cache will be initialized with a budget of 8192 tokens\nAvailable KV cache memory: -0.66 GiB",
            "--model /m --gpu-memory-utilization 0.9 --language-model-only",
        ),
    ] {
        let f = failed(C::KvCacheBudget, text, args);
        let p = probe_of(next(&f, EngineKind::Vllm, &[]));
        assert_eq!(p.kind, ProbeKind::MoreGpuMemory, "{args}");
    }
    // SGLang has no such switch: straight to its fraction.
    let f = failed(C::KvCacheBudget, text, "--model-path /m");
    let d = next(&f, EngineKind::Sglang, &[]);
    assert!(
        !matches!(&d, Decision::Probe { probe, .. } if probe.kind == ProbeKind::LanguageModelOnly),
        "{d:?}"
    );
}

#[test]
fn out_of_memory_shrinks_the_window_by_the_loads_own_buffers() {
    let mut f = failed(
        C::HostOom,
        "load_tensors: CPU_Mapped model buffer size = 241.05 MiB\nllama_context: n_ctx = 32768\nllama_kv_cache: CPU KV buffer size = 384.00 MiB",
        "-m /m -c 32768",
    );
    f.memory_limit = Some(512 * 1024 * 1024);
    let p = probe_of(next(&f, EngineKind::LlamaCpp, &[]));
    // (512 × 0.9 − 241.05) MiB / (384 MiB / 32768) = 18,751 tokens → 18,688.
    assert_eq!(p.changes, [Change::Set("-c".into(), "18688".into())]);
    let q = probe_of(next(&f, EngineKind::LlamaCpp, &[(p.clone(), Seen::Ready)]));
    assert_eq!(q.changes, [Change::Set("-c".into(), "20736".into())]);
    let k = conclusion(next(
        &f,
        EngineKind::LlamaCpp,
        &[
            (p, Seen::Ready),
            (
                q,
                Seen::Failed {
                    class: C::HostOom,
                    text: String::new(),
                },
            ),
        ],
    ));
    assert_eq!(
        k.factor.as_deref(),
        Some("the window: the largest that fits is 18688 (20736 fails)")
    );
}

#[test]
fn no_stated_cause_is_tried_again_first() {
    let f = failed(C::Exited, "", "-m /m");
    let p = probe_of(next(&f, EngineKind::LlamaCpp, &[]));
    assert_eq!(p.kind, ProbeKind::Again);
    assert!(p.changes.is_empty());
    let k = conclusion(next(&f, EngineKind::LlamaCpp, &[(p, Seen::Ready)]));
    assert_eq!(k.status, IsolationStatus::NotIsolated);
    assert!(k.summary.starts_with("not reproduced"));
}

/// docs/campaign.md embeds the table the planner reads.
#[test]
fn the_docs_show_the_table_the_code_reads() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/campaign.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_default();
    let begin = "<!-- decision table: generated -->\n";
    let end = "<!-- end of decision table -->";
    let generated = table::markdown();
    if std::env::var_os("BAKEOFF_UPDATE_DOCS").is_some()
        && let (Some(a), Some(b)) = (doc.find(begin), doc.find(end))
    {
        let updated = format!("{}{begin}{generated}{}", &doc[..a], &doc[b..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    assert!(
        doc.contains(&format!("{begin}{generated}{end}")),
        "docs/campaign.md's decision table is out of date; regenerate with BAKEOFF_UPDATE_DOCS=1 cargo test -p bakeoff-campaign --lib isolate"
    );
}

#[test]
fn alternative_builds_conclude_by_what_their_registries_say() {
    use super::alternatives::conclude;
    use bakeoff_artifact::campaign::{AlternativeCheck, AlternativeVerdict as V};
    let check = |build: &str, verdict| AlternativeCheck {
        build: build.into(),
        verdict,
        words: "…".into(),
    };
    // One build knows it: the engine build is the factor.
    let k = conclude(
        "vllm/vllm-openai:v0.8.0",
        &[check("a:1", V::Refuses), check("b:2", V::Supports)],
    );
    assert_eq!(k.status, IsolationStatus::Isolated);
    assert_eq!(
        k.factor.as_deref(),
        Some("the engine build: `b:2` knows the checkpoint, `vllm/vllm-openai:v0.8.0` does not")
    );
    // Every build refuses: proven unfit with these builds, nothing started.
    let k = conclude("x", &[check("a:1", V::Refuses), check("b:2", V::Refuses)]);
    assert_eq!(k.status, IsolationStatus::ProvenUnfit);
    assert!(k.summary.contains("`a:1`, `b:2`"), "{}", k.summary);
    // A build that could not be asked: no claim.
    let k = conclude(
        "x",
        &[check("a:1", V::Refuses), check("b:2", V::NotChecked)],
    );
    assert_eq!(k.status, IsolationStatus::NotIsolated);
    assert!(k.factor.is_none());
    assert!(k.summary.contains("`b:2`: …"), "{}", k.summary);
}

/// After the window is isolated on vLLM, an 8-bit KV cache at the asked window is priced by the
/// stated budget: started where half the bytes hold the window, listed as priced out where not.
#[test]
fn a_compact_kv_cache_is_priced_before_it_is_started() {
    let stated = "(0.19 GiB KV cache is needed, which is larger than the available KV cache memory (0.09 GiB). Based on the available memory, the estimated maximum model length is 4096.";
    let f = failed(C::KvCacheBudget, stated, "--model /m --max-model-len 8192");
    let fail = || Seen::Failed {
        class: C::KvCacheBudget,
        text: String::new(),
    };
    let p = probe_of(next(&f, EngineKind::Vllm, &[]));
    let q = probe_of(next(&f, EngineKind::Vllm, &[(p.clone(), Seen::Ready)]));
    let r = probe_of(next(
        &f,
        EngineKind::Vllm,
        &[(p.clone(), Seen::Ready), (q.clone(), fail())],
    ));
    assert_eq!(r.kind, ProbeKind::CompactKvCache);
    assert_eq!(
        r.changes,
        [Change::Set("--kv-cache-dtype".into(), "fp8".into())]
    );
    let k = conclusion(next(
        &f,
        EngineKind::Vllm,
        &[
            (p.clone(), Seen::Ready),
            (q.clone(), fail()),
            (r, Seen::Ready),
        ],
    ));
    assert_eq!(
        k.factor.as_deref(),
        Some("the window: the largest that fits is 4096 (4608 fails)")
    );
    assert!(k.summary.contains("a lever that keeps it"), "{}", k.summary);
    // Asked far above what 8 bits hold: priced out, not started.
    let far = failed(C::KvCacheBudget, stated, "--model /m --max-model-len 32768");
    let p = probe_of(next(&far, EngineKind::Vllm, &[]));
    let q = probe_of(next(&far, EngineKind::Vllm, &[(p.clone(), Seen::Ready)]));
    let k = conclusion(next(
        &far,
        EngineKind::Vllm,
        &[(p, Seen::Ready), (q, fail())],
    ));
    assert!(
        k.not_attempted
            .iter()
            .any(|n| n.contains("priced out") && n.contains("8192")),
        "{:?}",
        k.not_attempted
    );
    // An engine already on a chosen dtype: nothing to price.
    let set = failed(
        C::KvCacheBudget,
        stated,
        "--model /m --max-model-len 8192 --kv-cache-dtype fp8",
    );
    let p = probe_of(next(&set, EngineKind::Vllm, &[]));
    let q = probe_of(next(&set, EngineKind::Vllm, &[(p.clone(), Seen::Ready)]));
    let k = conclusion(next(
        &set,
        EngineKind::Vllm,
        &[(p, Seen::Ready), (q, fail())],
    ));
    assert!(k.not_attempted.is_empty(), "{:?}", k.not_attempted);
}
