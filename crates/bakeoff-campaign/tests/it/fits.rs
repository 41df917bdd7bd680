//! The memory check before a variant starts (`fits::check`), on fleet files parsed by
//! bakeoff-seats. The GPU seats live on a Docker host that is not this machine, so no reading
//! applies and the card is the campaign's `gpu_memory_gib`, whatever GPU the test runs beside;
//! the nvidia-smi binary does not exist.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use bakeoff_artifact::campaign::FitCheck;
use bakeoff_campaign::fits::check;
use bakeoff_campaign::fleet_view::ViewOptions;
use bakeoff_seats::Fleet;
use bakeoff_testkit::fleet::seat_header;

const NO_SMI: &str = "/nonexistent/nvidia-smi";

/// A host `gpu1` (not this machine) with `gpus` GPUs.
fn remote_host(gpus: u32) -> String {
    format!(
        "[hosts.gpu1]\ndocker = \"tcp://10.0.0.5:2375\"\naddress = \"10.0.0.5\"\ngpus = {gpus}\n"
    )
}

/// A vLLM v0.26 Docker seat on `gpu1`, GPU `gpu`, at `--gpu-memory-utilization util`.
fn vllm_seat(name: &str, port: u16, util: f64, gpu: u32) -> String {
    format!(
        "{}host = \"gpu1\"\ngpu_memory_utilization = {util}\n[seat.docker]\nimage = \"vllm/vllm-openai:v0.26.0\"\ncommand = [\"--model\", \"/models/{name}\", \"--gpu-memory-utilization\", \"{util}\"]\ngpus = [\"{gpu}\"]\n",
        seat_header(name, "vllm", "bench", port, name)
    )
}

fn fleet(text: &str) -> Fleet {
    Fleet::parse(text, Path::new("/nonexistent/fleet.toml")).unwrap()
}

fn card(gib: f64) -> ViewOptions {
    ViewOptions {
        gpu_memory_gib: Some(gib),
        ..ViewOptions::default()
    }
}

fn staying(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

fn text(c: &FitCheck) -> String {
    c.lines.join("\n")
}

/// prod (0.5) stays up on GPU 0; the variant asks for 0.6 of the same 80 GiB card.
#[tokio::test]
async fn a_variant_over_the_card_beside_a_staying_seat_does_not_fit() {
    let f = fleet(&format!(
        "{}{}{}",
        remote_host(1),
        vllm_seat("prod", 8000, 0.5, 0),
        vllm_seat("cand", 8001, 0.6, 0)
    ));
    let c = check(&f, "cand", &staying(&["prod"]), &card(80.0), 2.0, NO_SMI).await;
    let t = text(&c);
    assert_eq!(c.answer, "no", "{t}");
    // Each term: vLLM ≥ 0.21 holds its budget (util × 80 GiB) plus the CUDA context outside it
    // (0.5 GiB, an estimate); graphs are inside the budget. 48.5 + 40.5 = 89 GiB of 80.
    assert!(t.contains("GPU 0: 80.00 GiB total"), "{t}");
    assert!(
        t.contains("cand [claimed]: 48.00 GiB budget util × total + 0.50 GiB CUDA context + non-torch (est.) = 48.50 GiB"),
        "{t}"
    );
    assert!(
        t.contains("prod [claimed]: 40.00 GiB budget util × total + 0.50 GiB CUDA context + non-torch (est.) = 40.50 GiB"),
        "{t}"
    );
    assert!(
        t.contains("sum 89.00 GiB of 80.00 GiB: -9.00 GiB left, margin 2.00 GiB"),
        "{t}"
    );
    // The verdict is the last line.
    let last = c.lines.last().map(String::as_str).unwrap_or_default();
    assert!(last.starts_with("NO: cand and prod"), "{t}");
}

/// The same seat beside a variant at 0.3: YES. Every term is priced — the budgets come from
/// the utilization flags and the 80 GiB card, the CUDA context is a labelled estimate, and the
/// weights (`/models/…` is not a local path here) lie inside vLLM's budget, so they leave no
/// term unpriced: 24.5 + 40.5 = 65 GiB, 15 GiB left, over the 2 GiB margin.
#[tokio::test]
async fn a_variant_within_the_card_fits() {
    let f = fleet(&format!(
        "{}{}{}",
        remote_host(1),
        vllm_seat("prod", 8000, 0.5, 0),
        vllm_seat("cand", 8001, 0.3, 0)
    ));
    let c = check(&f, "cand", &staying(&["prod"]), &card(80.0), 2.0, NO_SMI).await;
    let t = text(&c);
    assert_eq!(c.answer, "yes", "{t}");
    assert!(
        t.contains("sum 65.00 GiB of 80.00 GiB: 15.00 GiB left"),
        "{t}"
    );
    let last = c.lines.last().map(String::as_str).unwrap_or_default();
    assert!(
        last.starts_with("YES: cand and prod coexist on GPU 0"),
        "{t}"
    );
    assert_eq!(t.matches("YES: ").count(), 1, "{t}");
}

/// Every staying seat on the GPU counts, not just one: three at 0.3 fit (73.5 GiB), a variant
/// at 0.4 beside two at 0.3 does not (81.5 GiB).
#[tokio::test]
async fn every_staying_seat_on_the_gpu_counts() {
    let fleet_with = |util: f64| {
        fleet(&format!(
            "{}{}{}{}",
            remote_host(1),
            vllm_seat("prod", 8000, 0.3, 0),
            vllm_seat("neighbour", 8002, 0.3, 0),
            vllm_seat("cand", 8001, util, 0)
        ))
    };
    let both = staying(&["prod", "neighbour"]);
    let c = check(&fleet_with(0.3), "cand", &both, &card(80.0), 2.0, NO_SMI).await;
    assert_eq!(c.answer, "yes", "{}", text(&c));
    assert!(
        text(&c).contains("sum 73.50 GiB of 80.00 GiB"),
        "{}",
        text(&c)
    );
    let c = check(&fleet_with(0.4), "cand", &both, &card(80.0), 2.0, NO_SMI).await;
    assert_eq!(c.answer, "no", "{}", text(&c));
    assert!(
        text(&c).contains("sum 81.50 GiB of 80.00 GiB"),
        "{}",
        text(&c)
    );
    // A seat that is not staying (displaced by the window) is not counted.
    let c = check(
        &fleet_with(0.4),
        "cand",
        &staying(&["prod"]),
        &card(80.0),
        2.0,
        NO_SMI,
    )
    .await;
    assert_eq!(c.answer, "yes", "{}", text(&c));
    assert!(!text(&c).contains("neighbour"), "{}", text(&c));
}

/// A seat on the variant's host and port is an alternative (never up beside it), and a seat
/// on another GPU holds nothing on the variant's: neither counts.
#[tokio::test]
async fn alternatives_and_other_gpus_are_not_counted() {
    let f = fleet(&format!(
        "{}{}{}{}",
        remote_host(2),
        vllm_seat("prod", 8000, 0.5, 0),
        vllm_seat("elsewhere", 8002, 0.9, 1),
        vllm_seat("cand", 8000, 0.6, 0)
    ));
    let c = check(
        &f,
        "cand",
        &staying(&["prod", "elsewhere"]),
        &card(80.0),
        2.0,
        NO_SMI,
    )
    .await;
    let t = text(&c);
    assert_eq!(c.answer, "yes", "{t}");
    assert!(
        t.contains("not counted: prod shares port 8000 on gpu1 with cand"),
        "{t}"
    );
    assert!(t.contains("sum 48.50 GiB of 80.00 GiB"), "{t}");
    assert!(!t.contains("elsewhere"), "{t}");
}

/// A variant on a host with `gpus = 0` runs on the CPU: nothing to check.
#[tokio::test]
async fn a_cpu_variant_is_not_checked() {
    let f = fleet(&format!(
        "{}host = \"local\"\n[seat.process]\ncommand = \"llama-server -m /models/x.gguf --port {{port}}\"\n",
        seat_header("cpu", "llama.cpp", "bench", 8100, "x")
    ));
    let c = check(&f, "cpu", &[], &card(80.0), 2.0, NO_SMI).await;
    assert_eq!(c.answer, "not-checked");
    assert_eq!(c.lines.len(), 1, "{}", text(&c));
    assert!(
        c.lines[0].starts_with("runs on the CPU: holds no GPU memory"),
        "{}",
        text(&c)
    );
    assert!(c.lines[0].contains("gpus = 0"), "{}", text(&c));
}

/// No reading of the card and no `gpu_memory_gib`: not checked, naming the GPU and the fix.
#[tokio::test]
async fn an_unknown_card_is_not_checked_and_names_the_fix() {
    let f = fleet(&format!(
        "{}{}{}",
        remote_host(1),
        vllm_seat("prod", 8000, 0.5, 0),
        vllm_seat("cand", 8001, 0.6, 0)
    ));
    let c = check(
        &f,
        "cand",
        &staying(&["prod"]),
        &ViewOptions::default(),
        2.0,
        NO_SMI,
    )
    .await;
    let t = text(&c);
    assert_eq!(c.answer, "not-checked", "{t}");
    assert!(t.contains("GPU 0 on gpu1: total memory unknown"), "{t}");
    assert!(
        t.contains("fix: set gpu_memory_gib in the campaign file, or run on the host that has it"),
        "{t}"
    );
}

/// A tensor-parallel variant on GPUs 0 and 1: each GPU is added up with the seats that stay up
/// on it, and the worst decides — GPU 0 fits, GPU 1 does not, so NO, with GPU 1's verdict last.
#[tokio::test]
async fn the_worst_gpu_decides() {
    let tp2 = format!(
        "{}host = \"gpu1\"\n[seat.docker]\nimage = \"vllm/vllm-openai:v0.26.0\"\ncommand = [\"--model\", \"/models/tp\", \"--gpu-memory-utilization\", \"0.5\", \"--tensor-parallel-size\", \"2\"]\ngpus = [\"0\", \"1\"]\n",
        seat_header("cand", "vllm", "bench", 8001, "tp")
    );
    let f = fleet(&format!(
        "{}{}{}{tp2}",
        remote_host(2),
        vllm_seat("small", 8000, 0.3, 0),
        vllm_seat("big", 8002, 0.5, 1),
    ));
    let c = check(
        &f,
        "cand",
        &staying(&["small", "big"]),
        &card(80.0),
        2.0,
        NO_SMI,
    )
    .await;
    let t = text(&c);
    assert_eq!(c.answer, "no", "{t}");
    // 40 GiB budget + 0.5 context + 0.25 NCCL (est.) on each GPU, beside 24.5 or 40.5 GiB.
    assert!(t.contains("sum 65.25 GiB of 80.00 GiB"), "{t}");
    assert!(t.contains("YES: cand and small coexist on GPU 0"), "{t}");
    assert!(t.contains("sum 81.25 GiB of 80.00 GiB"), "{t}");
    let last = c.lines.last().map(String::as_str).unwrap_or_default();
    assert!(last.starts_with("NO: cand and big"), "{t}");
}
