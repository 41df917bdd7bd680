//! `bakeoff seat export --kubernetes` through the real binary: stdout is a YAML stream that
//! Kubernetes' typed structs read back as a Deployment and a Service per Docker seat, no secret
//! value of the fleet reaches stdout or stderr, a named process seat is refused with its reason,
//! and `--out` writes one file per seat and never overwrites one.

use bakeoff_kube::Manifest;

use crate::util::{bakeoff, code, root, stdout, text};

/// The example fleet copied into a temporary directory (an empty state directory), plus a
/// secret in an argument and one by shape in an environment value.
fn example_fleet(dir: &std::path::Path) -> String {
    let example = std::fs::read_to_string(root().join("examples/fleet.toml")).unwrap();
    let with_secrets = example
        .replace(
            "\"--gpu-memory-utilization\", \"0.47\"]",
            "\"--gpu-memory-utilization\", \"0.47\", \"--api-key\", \"sk-export-test-0123456789abcdef\"]",
        )
        .replace(
            "env = { HF_TOKEN = \"set-me\" }",
            "env = { HF_TOKEN = \"hf_exporttestabcdefghijklmnop\", NO_PROXY = \"localhost\" }",
        );
    assert_ne!(
        example, with_secrets,
        "the example fleet changed: update this test"
    );
    let p = dir.join("fleet.toml");
    std::fs::write(&p, with_secrets).unwrap();
    p.display().to_string()
}

const SECRETS: [&str; 2] = [
    "sk-export-test-0123456789abcdef",
    "hf_exporttestabcdefghijklmnop",
];

#[test]
fn stdout_is_deployments_and_services_without_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = example_fleet(dir.path());
    let o = bakeoff(&["seat", "export", "--kubernetes", "--fleet", &fleet]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let out = stdout(&o);
    let docs = bakeoff_kube::parse_documents(&out).unwrap();
    let mut deployments = Vec::new();
    let mut services = Vec::new();
    for d in &docs {
        match d {
            Manifest::Deployment(d) => deployments.push(d.metadata.name.clone().unwrap()),
            Manifest::Service(s) => services.push(s.metadata.name.clone().unwrap()),
        }
    }
    let want = ["gemma-docker", "char-rp", "meromero-charrp"];
    assert_eq!(deployments, want, "{out}");
    assert_eq!(services, want, "{out}");
    let all = text(&o);
    for s in SECRETS {
        assert!(!all.contains(s), "{s} in the output:\n{all}");
    }
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("gemma-proc: skipped: a process seat has no image"),
        "{stderr}"
    );
    assert!(stderr.contains("production seats: char-rp"), "{stderr}");
    assert!(
        stderr.contains("kubectl create secret generic char-rp-secrets"),
        "{stderr}"
    );
}

#[test]
fn a_named_process_seat_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = example_fleet(dir.path());
    let o = bakeoff(&[
        "seat",
        "export",
        "--kubernetes",
        "--fleet",
        &fleet,
        "gemma-proc",
    ]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(o.stdout.is_empty(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(
            "seat gemma-proc: a process seat has no image; give it a [seat.docker] launch to export it"
        ),
        "{}",
        text(&o)
    );
}

#[test]
fn out_writes_one_file_per_seat_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = example_fleet(dir.path());
    let out = dir.path().join("k8s");
    let out_s = out.display().to_string();
    let args = [
        "seat",
        "export",
        "--kubernetes",
        "--fleet",
        &fleet,
        "char-rp",
        "gemma-docker",
        "--namespace",
        "llm",
        "--out",
        &out_s,
    ];
    let o = bakeoff(&args);
    assert_eq!(code(&o), 0, "{}", text(&o));
    assert!(o.stdout.is_empty(), "{}", text(&o));
    let rp = std::fs::read_to_string(out.join("char-rp.yaml")).unwrap();
    let docs = bakeoff_kube::parse_documents(&rp).unwrap();
    assert_eq!(docs.len(), 2);
    assert!(
        matches!(&docs[0], Manifest::Deployment(d) if d.metadata.namespace.as_deref() == Some("llm"))
    );
    assert!(out.join("gemma-docker.yaml").is_file());
    for s in SECRETS {
        assert!(!rp.contains(s), "{s} in\n{rp}");
    }

    // Again: the files exist, nothing is overwritten and the refusal names one.
    std::fs::write(out.join("gemma-docker.yaml"), "kept\n").unwrap();
    let o = bakeoff(&args);
    assert_eq!(code(&o), 3, "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("already exists"),
        "{}",
        text(&o)
    );
    assert_eq!(
        std::fs::read_to_string(out.join("gemma-docker.yaml")).unwrap(),
        "kept\n"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("char-rp.yaml")).unwrap(),
        rp
    );
}
