//! Manifests for every Docker seat of a fleet: GPU limits, a readiness probe that is a real
//! one-token completion (never `/health`: docs/field-cases.md B1), a startup probe covering the load, no
//! secret value anywhere, and the YAML read back by the typed structs equal to what was
//! rendered.

use bakeoff_kube::k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use bakeoff_kube::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use bakeoff_kube::{DEFAULT_STARTUP_BUDGET_S, ExportOptions, KubeError, PROBE_PERIOD_S, export};
use bakeoff_seats::Role;

use crate::common::*;

/// The readiness command asks for a one-token chat completion of `model`, on `port` inside the
/// container, and nothing about it is a health endpoint.
fn assert_completion_probe(cmd: &[String], model: &str, port: u16) {
    let all = cmd.join(" ");
    assert!(all.contains("curl"), "{all}");
    assert!(
        all.contains(&format!("http://127.0.0.1:{port}/v1/chat/completions")),
        "{all}"
    );
    assert!(all.contains("\"max_tokens\":1"), "{all}");
    assert!(all.contains(&format!("\"model\":\"{model}\"")), "{all}");
    assert!(
        !all.contains("/health") && !all.contains("/v1/models"),
        "{all}"
    );
}

#[test]
fn the_example_fleet_exports_every_docker_seat() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = fleet_in(dir.path(), &example_text());
    let e = export(&fleet, &ExportOptions::default()).unwrap();

    let names: Vec<&str> = e.seats.iter().map(|m| m.seat.as_str()).collect();
    assert_eq!(names, ["gemma-docker", "char-rp", "meromero-charrp"]);
    assert!(
        e.notes
            .iter()
            .any(|n| n.starts_with("gemma-proc: skipped: a process seat has no image")),
        "{:?}",
        e.notes
    );
    assert!(
        e.notes
            .iter()
            .any(|n| n.starts_with("production seats: char-rp ")),
        "{:?}",
        e.notes
    );

    // The production vLLM seat: one GPU, its port, its first served name probed.
    let rp = seat(&e, "char-rp");
    assert_eq!(rp.role, Role::Production);
    let c = container(rp);
    assert_eq!(c.image.as_deref(), Some("vllm/vllm-openai:v0.26.0"));
    let limits = c.resources.as_ref().unwrap().limits.as_ref().unwrap();
    assert_eq!(limits.get("nvidia.com/gpu"), Some(&Quantity("1".into())));
    assert_completion_probe(&exec(c.readiness_probe.as_ref().unwrap()), "char-rp", 8016);
    let startup = c.startup_probe.as_ref().unwrap();
    assert_completion_probe(&exec(startup), "char-rp", 8016);
    // No start recorded: the documented default, covered by whole periods.
    assert_eq!(rp.startup.seconds, DEFAULT_STARTUP_BUDGET_S);
    let covered =
        i64::from(startup.failure_threshold.unwrap()) * i64::from(startup.period_seconds.unwrap());
    assert!(covered >= DEFAULT_STARTUP_BUDGET_S as i64, "{covered}");
    assert_eq!(startup.period_seconds, Some(PROBE_PERIOD_S as i32));
    let pod = rp.deployment.spec.as_ref().unwrap();
    assert_eq!(pod.replicas, Some(1));
    assert_eq!(
        pod.strategy.as_ref().unwrap().type_.as_deref(),
        Some("Recreate")
    );
    let spec = pod.template.spec.as_ref().unwrap();
    assert_eq!(spec.restart_policy.as_deref(), Some("Always"));
    let volumes = spec.volumes.as_ref().unwrap();
    assert_eq!(
        volumes[0].host_path.as_ref().unwrap().path,
        "/srv/models",
        "{volumes:?}"
    );
    let mount = &c.volume_mounts.as_ref().unwrap()[0];
    assert_eq!(
        (mount.mount_path.as_str(), mount.read_only),
        ("/models", Some(true))
    );
    let labels = rp.deployment.metadata.labels.as_ref().unwrap();
    assert_eq!(labels["app.kubernetes.io/name"], "char-rp");
    assert_eq!(labels["bakeoff.seat"], "char-rp");
    assert_eq!(labels["bakeoff.role"], "production");
    // HF_TOKEN is a secret by name: a reference, never the value.
    let hf = c
        .env
        .as_ref()
        .unwrap()
        .iter()
        .find(|v| v.name == "HF_TOKEN")
        .unwrap();
    assert_eq!(hf.value, None);
    let r = hf
        .value_from
        .as_ref()
        .unwrap()
        .secret_key_ref
        .as_ref()
        .unwrap();
    assert_eq!(
        (r.name.as_str(), r.key.as_str()),
        ("char-rp-secrets", "HF_TOKEN")
    );
    let svc = rp.service.spec.as_ref().unwrap();
    let port = &svc.ports.as_ref().unwrap()[0];
    assert_eq!(
        (port.port, port.target_port.clone()),
        (8016, Some(IntOrString::Int(8016)))
    );
    assert_eq!(svc.selector.as_ref().unwrap()["bakeoff.seat"], "char-rp");

    // The bench llama.cpp seat: no GPU, its memory limit, the container's own port.
    let gd = seat(&e, "gemma-docker");
    let c = container(gd);
    let limits = c.resources.as_ref().unwrap().limits.as_ref().unwrap();
    assert_eq!(limits.get("memory"), Some(&Quantity("2Gi".into())));
    assert!(!limits.contains_key("nvidia.com/gpu"));
    assert_completion_probe(
        &exec(c.readiness_probe.as_ref().unwrap()),
        "gemma-3-270m",
        8080,
    );
    let port = &gd.service.spec.as_ref().unwrap().ports.as_ref().unwrap()[0];
    assert_eq!(
        (port.port, port.target_port.clone()),
        (8181, Some(IntOrString::Int(8080)))
    );
    assert!(
        gd.comments
            .iter()
            .any(|l| l.contains("restart \"no\" becomes restartPolicy Always")),
        "{:?}",
        gd.comments
    );

    // The dormant rollback target: created, not started.
    let dormant = seat(&e, "meromero-charrp");
    assert_eq!(dormant.deployment.spec.as_ref().unwrap().replicas, Some(0));

    let text = e.yaml().unwrap();
    assert!(!text.contains("set-me"), "{text}");
    assert!(!e.notes.join("\n").contains("set-me"));
    assert_round_trip(&e);
}

/// A fleet with two GPUs, a host path and a named volume, and secrets in every place a fleet
/// can hold one: by name in env, by shape in a value (a proxy URL's password), and after
/// `--api-key` in the command.
const GPU_FLEET: &str = r#"
[fleet]
name = "gpu"

[hosts.box]
docker = "tcp://box.example.invalid:2375"
address = "box.example.invalid"
gpus = 4

[[seat]]
name = "big"
host = "box"
engine = "vllm"
role = "bench"
port = 8100
served_model_names = ["big-model", "big-alias"]
stop_timeout_s = 120
[seat.docker]
image = "vllm/vllm-openai:v0.26.0"
command = ["--model", "/models/big", "--port", "8000", "--tensor-parallel-size", "2",
           "--api-key", "key-in-args-4711", "--served-model-name", "big-model", "big-alias",
           "--chat-template-content-format=$(literal)"]
container_port = 8000
gpus = ["2", "3"]
mounts = ["/srv/models:/models:ro", "hf-cache:/root/.cache/huggingface"]
memory = "64g"
env = { HF_TOKEN = "hf_abcdefghijklmnopqrstuvwxyz", HTTPS_PROXY = "http://me:proxy-pass-99@proxy:3128", VLLM_LOGGING_LEVEL = "INFO" }
"#;

#[test]
fn gpus_mounts_and_secrets_map_onto_the_pod() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = fleet_in(dir.path(), GPU_FLEET);
    let e = export(
        &fleet,
        &ExportOptions {
            seats: vec!["big".into()],
            namespace: Some("llm".into()),
        },
    )
    .unwrap();
    let m = seat(&e, "big");
    let c = container(m);
    let limits = c.resources.as_ref().unwrap().limits.as_ref().unwrap();
    assert_eq!(limits["nvidia.com/gpu"], Quantity("2".into()));
    assert_eq!(limits["memory"], Quantity("64Gi".into()));
    assert_eq!(m.deployment.metadata.namespace.as_deref(), Some("llm"));
    assert_eq!(m.service.metadata.namespace.as_deref(), Some("llm"));
    let spec = m
        .deployment
        .spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .as_ref()
        .unwrap();
    assert_eq!(spec.termination_grace_period_seconds, Some(120));
    let volumes = spec.volumes.as_ref().unwrap();
    assert_eq!(volumes[0].host_path.as_ref().unwrap().path, "/srv/models");
    assert_eq!(
        volumes[1]
            .persistent_volume_claim
            .as_ref()
            .unwrap()
            .claim_name,
        "hf-cache"
    );
    let mounts = c.volume_mounts.as_ref().unwrap();
    assert_eq!(mounts[0].read_only, Some(true));
    assert_eq!(mounts[1].mount_path, "/root/.cache/huggingface");
    assert_eq!(mounts[1].read_only, None);

    // Secrets: references only, and the key after --api-key reaches the engine through the
    // kubelet's $(VAR) expansion; a literal `$(` elsewhere is escaped.
    let args = c.args.as_ref().unwrap();
    let i = args.iter().position(|a| a == "--api-key").unwrap();
    assert_eq!(args[i + 1], format!("$(BAKEOFF_SECRET_ARG_{})", i + 1));
    assert!(
        args.contains(&"--chat-template-content-format=$$(literal)".to_string()),
        "{args:?}"
    );
    let env = c.env.as_ref().unwrap();
    let by_name = |n: &str| env.iter().find(|v| v.name == n).unwrap();
    let arg_var = format!("BAKEOFF_SECRET_ARG_{}", i + 1);
    let arg_key = format!("arg-{}", i + 1);
    for secret in ["HF_TOKEN", "HTTPS_PROXY", arg_var.as_str()] {
        let v = by_name(secret);
        assert_eq!(v.value, None, "{secret}");
        assert_eq!(
            v.value_from
                .as_ref()
                .unwrap()
                .secret_key_ref
                .as_ref()
                .unwrap()
                .name,
            "big-secrets"
        );
    }
    assert_eq!(by_name("VLLM_LOGGING_LEVEL").value.as_deref(), Some("INFO"));
    assert_eq!(m.secret_name.as_deref(), Some("big-secrets"));
    let keys: Vec<&str> = m.secret_keys.iter().map(|k| k.key.as_str()).collect();
    assert_eq!(keys, ["HF_TOKEN", "HTTPS_PROXY", arg_key.as_str()]);

    // The engine wants its key: the probe sends it from the environment, never written.
    let probe = exec(c.readiness_probe.as_ref().unwrap());
    assert_eq!(probe[..2], ["sh", "-c"]);
    assert!(
        probe[2].contains(&format!(
            "Authorization: Bearer ${{BAKEOFF_SECRET_ARG_{}}}",
            i + 1
        )),
        "{probe:?}"
    );
    assert_completion_probe(&probe, "big-model", 8000);

    let text = e.yaml().unwrap();
    let notes = e.notes.join("\n");
    for secret in [
        "hf_abcdefghijklmnopqrstuvwxyz",
        "proxy-pass-99",
        "key-in-args-4711",
    ] {
        assert!(!text.contains(secret), "{secret} in\n{text}");
        assert!(!notes.contains(secret), "{secret} in\n{notes}");
    }
    assert!(
        notes.contains("kubectl create secret generic big-secrets -n llm"),
        "{notes}"
    );
    assert!(text.contains("# secret values come from Secret big-secrets"));
    assert_round_trip(&e);
}

#[test]
fn a_named_process_seat_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = fleet_in(dir.path(), &example_text());
    let err = export(
        &fleet,
        &ExportOptions {
            seats: vec!["gemma-proc".into()],
            namespace: None,
        },
    )
    .unwrap_err();
    assert!(matches!(err, KubeError::ProcessSeat(_)), "{err}");
    assert_eq!(
        err.to_string(),
        "seat gemma-proc: a process seat has no image; give it a [seat.docker] launch to export it"
    );

    let err = export(
        &fleet,
        &ExportOptions {
            seats: vec!["nope".into()],
            namespace: None,
        },
    )
    .unwrap_err();
    let e = err.to_string();
    assert!(
        e.contains("seat \"nope\" is not in ")
            && e.contains("; name one it declares: gemma-proc, "),
        "{e}"
    );

    let err = export(
        &fleet,
        &ExportOptions {
            seats: vec![],
            namespace: Some("Bad_NS".into()),
        },
    )
    .unwrap_err();
    assert!(
        err.to_string().starts_with("--namespace \"Bad_NS\" is not"),
        "{err}"
    );
}
