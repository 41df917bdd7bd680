//! Plan arithmetic (the fleet field cases' (docs/field-cases.md) numbers) and the behaviour
//! without NVML. nvidia-smi CSV parsing and PID → container mapping through a fake /proc are
//! bakeoff-host's, tested there.

use std::collections::BTreeMap;
use std::path::PathBuf;

use bakeoff_host::procinfo::ProcFacts;
use bakeoff_host::units::{GIB, MIB, gib_to_bytes};
use bakeoff_host::{GpuProcess, GpuReading, ReadingSource, Readings};
use bakeoff_plan::fleet::{Engine, LaunchSpec, SeatSpec, StrOrList, cuda_visible_devices};
use bakeoff_plan::report::coexist_question;
use bakeoff_plan::{
    Answer, Coexistence, FleetView, Footprint, GpuPlan, PlanOptions, Term, build_plan, coexist,
    cpu_seats, vllm_graphs_inside_budget,
};

fn vllm_seat(name: &str, util: f64, port: u16, version: &str) -> SeatSpec {
    SeatSpec {
        name: name.into(),
        host: Some("ana-ml2".into()),
        engine: Engine::Vllm,
        port: Some(port),
        gpu_memory_utilization: Some(util),
        docker: Some(LaunchSpec {
            image: Some(format!("vllm/vllm-openai:v{version}")),
            command: Some(StrOrList::Many(vec!["--model".into(), "/models/x".into()])),
            ..LaunchSpec::default()
        }),
        ..SeatSpec::default()
    }
}

fn view(seats: &[SeatSpec], total_gib: f64) -> FleetView {
    FleetView {
        seats: seats.iter().map(|s| s.to_plan_seat("ana-ml2")).collect(),
        gpu_memory: BTreeMap::from([(("ana-ml2".to_owned(), 0), total_gib)]),
        local_hosts: vec!["ana-ml2".into()],
    }
}

fn no_gpu() -> Readings {
    Readings {
        source: ReadingSource::Nvml,
        gpus: vec![],
        unavailable: Some("NVML did not initialize".into()),
    }
}

/// The plan with no GPU readings, no process facts and no container names.
fn plan_without_gpu(v: &FleetView) -> Vec<GpuPlan> {
    build_plan(
        v,
        &no_gpu(),
        &|_| ProcFacts::default(),
        &BTreeMap::new(),
        &PlanOptions::default(),
    )
}

/// `plan --coexist A B --gpu N` with no GPU readings.
fn coexist_without_gpu(v: &FleetView, a: &str, b: &str, gpu: u32) -> Coexistence {
    coexist_question(
        v,
        &no_gpu(),
        &|_| ProcFacts::default(),
        &BTreeMap::new(),
        &PlanOptions::default(),
        a,
        b,
        gpu,
    )
    .unwrap()
}

/// A footprint of known terms only.
fn known_footprint(seat: &str, basis: &str, terms: Vec<Term>) -> Footprint {
    Footprint {
        seat: seat.into(),
        basis: basis.into(),
        terms,
        unpriced: vec![],
        notes: vec![],
    }
}

const CARD: f64 = 94.97;

#[test]
fn version_rule_for_cuda_graphs() {
    assert_eq!(vllm_graphs_inside_budget(Some("0.21.0")), Some(true));
    assert_eq!(vllm_graphs_inside_budget(Some("v0.26.0")), Some(true));
    assert_eq!(vllm_graphs_inside_budget(Some("0.10.1rc1")), Some(false));
    assert_eq!(vllm_graphs_inside_budget(None), None);
}

#[test]
fn claims_follow_the_version_rule() {
    let new = vllm_seat("a", 0.43, 8010, "0.26.0");
    let old = vllm_seat("b", 0.43, 8011, "0.10.1");
    let plans = plan_without_gpu(&view(&[new, old], CARD));
    let g = &plans[0];
    let (a, b) = (&g.seats[0].claim, &g.seats[1].claim);
    // 0.43 × 94.97 GiB = 40.8371 GiB for both budgets.
    let budget = (CARD * GIB * 0.43).round() as u64;
    assert_eq!(
        (a.budget_bytes, b.budget_bytes),
        (Some(budget), Some(budget))
    );
    // ≥ 0.21: budget + CUDA context (0.5 GiB est.); < 0.21: + CUDA graphs (1 GiB est.).
    assert_eq!(a.expected_bytes, Some(budget + 512 * MIB));
    assert_eq!(b.expected_bytes, Some(budget + 512 * MIB + 1024 * MIB));
    assert!(
        a.rule.contains("since v0.21") && b.rule.contains("before v0.21"),
        "{} / {}",
        a.rule,
        b.rule
    );
    assert!(
        a.parts
            .iter()
            .any(|p| p.estimated && p.what.contains("CUDA context") && !p.inside_budget)
    );
}

/// docs/field-cases.md F1: gen (0.43) held 45.6 GiB after three days; char-rp (0.51) next to it on a
/// 94.97 GiB card: 0.43 + 0.51 = 0.94 of the card, and ~0.6 GiB of real headroom
/// (94.97 − 45.6 − 48.43 = 0.94 GiB before char-rp's own CUDA context).
#[test]
fn field_cases_f1_f8_pair_leaves_under_a_gib_and_warns() {
    let seats = [
        vllm_seat("gen", 0.43, 8010, "0.26.0"),
        vllm_seat("char-rp", 0.51, 8016, "0.26.0"),
    ];
    let reading = Readings {
        source: ReadingSource::Nvml,
        gpus: vec![GpuReading {
            index: 0,
            uuid: "GPU-x".into(),
            name: "NVIDIA H100 NVL".into(),
            total_bytes: gib_to_bytes(CARD),
            used_bytes: gib_to_bytes(45.6),
            free_bytes: gib_to_bytes(CARD - 45.6),
            processes: vec![GpuProcess {
                pid: 4242,
                used_bytes: Some(gib_to_bytes(45.6)),
                name: Some("python3".into()),
            }],
            source: ReadingSource::Nvml,
        }],
        unavailable: None,
    };
    let facts = |pid: u32| ProcFacts {
        ports: if pid == 4242 { vec![8010] } else { vec![] },
        uptime_s: Some(3 * 86_400 + 600),
        ..ProcFacts::default()
    };
    let plans = build_plan(
        &view(&seats, CARD),
        &reading,
        &facts,
        &BTreeMap::new(),
        &PlanOptions::default(),
    );
    let g = &plans[0];
    assert!((g.utilization_sum - 0.94).abs() < 1e-9);
    let gen_seat = &g.seats[0];
    assert_eq!(gen_seat.measured.as_ref().unwrap().pids, vec![4242]);
    assert_eq!(gen_seat.measured.as_ref().unwrap().matched_by, "port 8010");
    let planned = g.headroom_planned_bytes.unwrap() as f64 / GIB;
    // 94.97 − 45.6 − 48.4347 − 0.5 (char-rp's CUDA context, est.) = 0.435 GiB.
    assert!((planned - 0.435).abs() < 0.01, "{planned}");
    let by_claims = g.headroom_by_claims_bytes.unwrap() as f64 / GIB;
    assert!((by_claims - 4.70).abs() < 0.01, "{by_claims}");
    let w = g.warnings.join("\n");
    assert!(w.contains("under the 2.00 GiB margin"), "{w}");
    assert!(
        w.contains("seat gen holds 45.60 GiB measured against 41.34 GiB claimed"),
        "{w}"
    );
    let n = g.notes.join("\n");
    assert!(
        n.contains("seat gen has been up 3d 0h") && n.contains("freshly started"),
        "{n}"
    );
}

/// docs/field-cases.md F8: 48.07 GiB of BF16 weights next to gen's 45.6 GiB does not fit on the 94.97 GiB
/// card before a byte of KV cache.
#[test]
fn field_case_f8_bf16_does_not_coexist_with_gen() {
    let gen_fp = known_footprint(
        "gen",
        "measured",
        vec![Term::new("held", gib_to_bytes(45.6))],
    );
    let bf16 = known_footprint(
        "trainee-bf16",
        "minimum",
        vec![
            Term::new("weights", gib_to_bytes(48.07)),
            Term::new("KV for one 32768-token sequence", gib_to_bytes(1.0)).kv(),
            Term::new("CUDA context", 512 * MIB).estimate(),
        ],
    );
    let c = coexist(0, gib_to_bytes(CARD), 2 << 30, vec![gen_fp.clone(), bf16]);
    assert!(!c.fits);
    // 94.97 − 45.6 − 48.07 − 1.0 − 0.5 = −0.2 GiB.
    assert!((c.left_bytes as f64 / GIB + 0.2).abs() < 0.01);
    let verdict = c.lines.iter().find(|l| l.starts_with("NO")).unwrap();
    assert!(verdict.contains("before a byte of KV cache"), "{verdict}");
    assert!(c.lines.iter().any(|l| l.contains("48.07 GiB weights")));

    // A small seat fits: yes, with the arithmetic.
    let small = known_footprint("small", "claimed", vec![Term::new("weights", 10 << 30)]);
    let c = coexist(
        0,
        gib_to_bytes(CARD),
        2 << 30,
        vec![gen_fp.clone(), small.clone()],
    );
    assert!(c.fits);
    assert_eq!(c.answer, Answer::Yes);
    assert!(
        c.lines.iter().any(|l| l.starts_with("YES")),
        "{:?}",
        c.lines
    );

    // The same small seat with a term nobody priced: the known terms fit, but that is not a
    // YES (docs/failure-classes.md: unknown weights never make a YES).
    let unpriced = Footprint {
        unpriced: vec!["weights: model `/srv/models/x` is not a local path here".into()],
        ..small
    };
    let c = coexist(
        0,
        gib_to_bytes(CARD),
        2 << 30,
        vec![gen_fp.clone(), unpriced.clone()],
    );
    assert_eq!(c.answer, Answer::Unknown);
    assert!(!c.fits);
    let verdict = c.lines.iter().find(|l| l.starts_with("UNKNOWN")).unwrap();
    assert!(
        verdict.contains("small's weights are not priced"),
        "{verdict}"
    );
    assert!(
        !c.lines.iter().any(|l| l.starts_with("YES")),
        "{:?}",
        c.lines
    );
    // Known terms that already do not fit are a NO whatever the unpriced ones hold.
    let big = Footprint {
        terms: vec![Term::new("budget", gib_to_bytes(60.0))],
        ..unpriced
    };
    let c = coexist(0, gib_to_bytes(CARD), 2 << 30, vec![gen_fp, big]);
    assert_eq!(c.answer, Answer::No);
    assert!(
        c.lines
            .iter()
            .any(|l| l.starts_with("NO") && l.contains("at most")),
        "{:?}",
        c.lines
    );
}

#[test]
fn llamacpp_seat_claims_weights_and_kv_from_the_real_gguf() {
    let model = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap()
        .join(".cache/bakeoff/models/gemma-3-270m-q4_k_m.gguf");
    assert!(
        model.is_file(),
        "{} is not provisioned: run scripts/provision.sh",
        model.display()
    );
    let seat = SeatSpec {
        name: "bench".into(),
        engine: Engine::LlamaCpp,
        port: Some(8080),
        process: Some(LaunchSpec {
            command: Some(StrOrList::One("llama-server".into())),
            args: ["-m", model.to_str().unwrap(), "-c", "32768", "-np", "8"]
                .map(String::from)
                .to_vec(),
            ..LaunchSpec::default()
        }),
        ..SeatSpec::default()
    };
    let plans = plan_without_gpu(&view(
        &[SeatSpec {
            host: Some("ana-ml2".into()),
            ..seat
        }],
        CARD,
    ));
    let c = &plans[0].seats[0].claim;
    // Weights 246,587,904 B (GGUF tensor infos); KV 96 MiB + 120 MiB (matches the real log,
    // see bakeoff-model tests/it/gguf.rs); + 256 MiB compute + 512 MiB context (estimates).
    let weights = c
        .parts
        .iter()
        .find(|p| p.what.starts_with("weights"))
        .unwrap();
    assert_eq!(weights.bytes, 246_587_904);
    let kv = c.parts.iter().find(|p| p.what.starts_with("KV")).unwrap();
    assert_eq!(kv.bytes, 226_492_416);
    assert_eq!(
        c.expected_bytes,
        Some(246_587_904 + 226_492_416 + 256 * MIB + 512 * MIB)
    );
    assert!(
        plans[0]
            .notes
            .iter()
            .any(|n| n.contains("measured usage unavailable"))
    );
}

fn no_flag_vllm(name: &str, port: u16, version: &str, gpu: &str) -> SeatSpec {
    SeatSpec {
        name: name.into(),
        host: Some("gpu-box".into()),
        engine: Engine::Vllm,
        port: Some(port),
        host_gpus: Some(2),
        docker: Some(LaunchSpec {
            image: Some(format!("vllm/vllm-openai:v{version}")),
            command: Some(StrOrList::Many(vec![
                "--model".into(),
                "/srv/models/meromero".into(),
            ])),
            gpus: Some(vec![gpu.parse().unwrap()]),
            ..LaunchSpec::default()
        }),
        ..SeatSpec::default()
    }
}

fn remote_view(seats: &[SeatSpec]) -> FleetView {
    FleetView {
        seats: seats.iter().map(|s| s.to_plan_seat("gpu-box")).collect(),
        gpu_memory: BTreeMap::from([
            (("gpu-box".to_owned(), 0), CARD),
            (("gpu-box".to_owned(), 1), CARD),
        ]),
        local_hosts: vec!["local".into()],
    }
}

/// (docs/failure-classes.md) a vLLM seat without `gpu_memory_utilization` is priced at vLLM's default
/// 0.92 of the card — in the per-GPU section and in the coexistence answer alike — and two
/// seats whose known terms exceed the card are a NO, not "YES … 47.33 GiB to spare".
#[test]
fn a_vllm_seat_without_the_flag_claims_the_default_budget_everywhere() {
    let with_flag = SeatSpec {
        name: "char-rp".into(),
        gpu_memory_utilization: Some(0.47),
        ..no_flag_vllm("char-rp", 8016, "0.26.0", "1")
    };
    let without = no_flag_vllm("meromero-charrp", 8017, "0.24.0", "1");
    let v = remote_view(&[with_flag, without]);
    let plans = plan_without_gpu(&v);
    let g = plans.iter().find(|g| g.index == 1).unwrap();
    let claim = |n: &str| {
        g.seats
            .iter()
            .find(|s| s.claim.seat == n)
            .unwrap()
            .claim
            .clone()
    };
    let m = claim("meromero-charrp");
    assert_eq!(m.gpu_memory_utilization, Some(0.92));
    assert!(m.utilization_is_default);
    // 0.92 × 94.97 GiB = 87.37 GiB + 0.5 GiB CUDA context (est.) = 87.87 GiB; the weights are
    // not sized (not a local path) but lie inside the budget: nothing is unpriced.
    let budget = (CARD * GIB * 0.92).round() as u64;
    assert_eq!(m.expected_bytes, Some(budget + 512 * MIB));
    assert!(m.unpriced.is_empty(), "{:?}", m.unpriced);
    let c = claim("char-rp");
    // Per-GPU headroom: 94.97 − 45.14 − 87.87 = −38.04 GiB.
    let h = g.headroom_by_claims_bytes.unwrap() as f64 / GIB;
    assert!((h + 38.04).abs() < 0.01, "{h}");
    assert!((g.utilization_sum - 1.39).abs() < 1e-9);

    let co = coexist_without_gpu(&v, "char-rp", "meromero-charrp", 1);
    assert_eq!(co.answer, Answer::No);
    assert!(!co.fits);
    // The coexistence footprints are the per-GPU claims, term for term.
    let fp = |n: &str| co.seats.iter().find(|f| f.seat == n).unwrap().total();
    assert_eq!(Some(fp("meromero-charrp")), m.expected_bytes);
    assert_eq!(Some(fp("char-rp")), c.expected_bytes);
    assert_eq!(co.left_bytes, g.headroom_by_claims_bytes.unwrap());
    assert!(
        !co.lines.iter().any(|l| l.starts_with("YES")),
        "{:?}",
        co.lines
    );
}

/// SGLang without `--mem-fraction-static` derives its fraction at start: not priced, so the
/// answer is UNKNOWN — and the per-GPU section says the headroom is an upper bound.
#[test]
fn sglang_without_its_fraction_is_unknown_not_yes() {
    let sglang = SeatSpec {
        name: "sg".into(),
        engine: Engine::Sglang,
        ..no_flag_vllm("sg", 30000, "0.5.0", "0")
    };
    let small = SeatSpec {
        name: "small".into(),
        gpu_memory_utilization: Some(0.2),
        ..no_flag_vllm("small", 8000, "0.26.0", "0")
    };
    let v = remote_view(&[sglang, small]);
    let plans = plan_without_gpu(&v);
    let g = plans.iter().find(|g| g.index == 0).unwrap();
    assert!(g.headroom_is_upper_bound);
    let sg = &g.seats.iter().find(|s| s.claim.seat == "sg").unwrap().claim;
    assert!(
        sg.unpriced
            .iter()
            .any(|u| u.starts_with("budget:") && u.contains("mem-fraction-static")),
        "{:?}",
        sg.unpriced
    );
    let co = coexist_without_gpu(&v, "sg", "small", 0);
    assert_eq!(co.answer, Answer::Unknown, "{:?}", co.lines);
}

/// (docs/failure-classes.md) two seats on one host and port are alternatives (never up together): the
/// GPU's claim counts the larger, not the sum, and the plan says so.
#[test]
fn a_swap_pair_counts_once_on_its_gpu() {
    let a = SeatSpec {
        name: "char-rp".into(),
        gpu_memory_utilization: Some(0.47),
        ..no_flag_vllm("char-rp", 8016, "0.26.0", "1")
    };
    let b = no_flag_vllm("meromero-charrp", 8016, "0.24.0", "1");
    let v = remote_view(&[a, b]);
    let plans = plan_without_gpu(&v);
    let g = plans.iter().find(|g| g.index == 1).unwrap();
    let larger = (CARD * GIB * 0.92).round() as u64 + 512 * MIB;
    assert_eq!(g.claimed_bytes, Some(larger));
    // 94.97 − 87.87 = 7.10 GiB.
    let h = g.headroom_by_claims_bytes.unwrap() as f64 / GIB;
    assert!((h - 7.10).abs() < 0.01, "{h}");
    assert!((g.utilization_sum - 0.92).abs() < 1e-9);
    assert_eq!(
        g.alternatives,
        vec![vec!["char-rp".to_owned(), "meromero-charrp".to_owned()]]
    );
    let n = g.notes.join("\n");
    assert!(
        n.contains("share port 8016 on gpu-box: alternatives, never up together")
            && n.contains("counts the larger, meromero-charrp 87.87 GiB, not the sum (133.01 GiB)"),
        "{n}"
    );
    assert!(g.warnings.is_empty(), "{:?}", g.warnings);
}

/// (docs/failure-classes.md) a seat on a host that declares `gpus = 0`, or whose launch hides every
/// GPU, runs on the CPU: it claims no GPU memory (no "GPU 0", no CUDA context) and is listed
/// as a CPU seat.
#[test]
fn seats_on_a_cpu_only_host_claim_no_gpu_memory() {
    let proc_seat = SeatSpec {
        name: "gemma-proc".into(),
        host: Some("local".into()),
        engine: Engine::LlamaCpp,
        port: Some(8181),
        host_gpus: Some(0),
        process: Some(LaunchSpec {
            command: Some(StrOrList::One("llama-server".into())),
            args: ["-m", "/nonexistent/m.gguf", "-c", "2048"]
                .map(String::from)
                .to_vec(),
            ..LaunchSpec::default()
        }),
        ..SeatSpec::default()
    };
    let hidden = SeatSpec {
        name: "hidden".into(),
        host_gpus: Some(1),
        process: Some(LaunchSpec {
            command: Some(StrOrList::One("llama-server".into())),
            gpus: cuda_visible_devices(""),
            ..LaunchSpec::default()
        }),
        ..proc_seat.clone()
    };
    let v = FleetView {
        seats: vec![
            proc_seat.to_plan_seat("local"),
            hidden.to_plan_seat("local"),
        ],
        gpu_memory: BTreeMap::new(),
        local_hosts: vec!["local".into()],
    };
    assert!(v.seats.iter().all(|s| s.gpus.is_empty()));
    let plans = plan_without_gpu(&v);
    assert!(plans.is_empty(), "{plans:?}");
    let cpu = cpu_seats(&v);
    assert_eq!(cpu.len(), 2);
    assert_eq!(cpu[0].why, "host local declares gpus = 0");
    assert!(
        cpu[1].why.contains("CUDA_VISIBLE_DEVICES"),
        "{}",
        cpu[1].why
    );
    // CUDA stops at the first invalid entry; UUIDs map to no index here.
    assert_eq!(cuda_visible_devices("-1"), Some(vec![]));
    assert_eq!(cuda_visible_devices("1,0"), Some(vec![1, 0]));
    assert_eq!(cuda_visible_devices("GPU-8f0c"), None);
    // Without an assignment on a host with GPUs, CUDA's first device.
    let on_gpu_host = SeatSpec {
        host_gpus: Some(2),
        ..proc_seat
    };
    assert_eq!(on_gpu_host.to_plan_seat("local").gpus, vec![0]);
}
