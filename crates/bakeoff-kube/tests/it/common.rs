//! What the tests share: a fleet written into a temporary directory (its state directory then
//! starts empty, whatever a README run left beside the example), and the manifests looked up by
//! seat.

use std::path::Path;

use bakeoff_kube::k8s_openapi::api::apps::v1::Deployment;
use bakeoff_kube::k8s_openapi::api::core::v1::{Container, Probe, Service};
use bakeoff_kube::{Export, Manifest, SeatManifests};
use bakeoff_seats::Fleet;

/// `text` as DIR/fleet.toml, loaded.
pub fn fleet_in(dir: &Path, text: &str) -> Fleet {
    let p = dir.join("fleet.toml");
    std::fs::write(&p, text).unwrap();
    Fleet::load(&p).unwrap()
}

/// The checked-in example fleet's text.
pub fn example_text() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/fleet.toml"))
        .unwrap()
}

pub fn seat<'a>(e: &'a Export, name: &str) -> &'a SeatManifests {
    e.seats
        .iter()
        .find(|m| m.seat == name)
        .unwrap_or_else(|| panic!("no manifests for {name}"))
}

pub fn container(m: &SeatManifests) -> &Container {
    &m.deployment
        .spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .as_ref()
        .unwrap()
        .containers[0]
}

pub fn exec(p: &Probe) -> Vec<String> {
    p.exec.as_ref().unwrap().command.clone().unwrap()
}

/// The stream's documents read back by the typed structs, equal to the structs rendered, in
/// order: each seat's Deployment then its Service.
pub fn assert_round_trip(e: &Export) {
    let text = e.yaml().unwrap();
    let back = bakeoff_kube::parse_documents(&text).unwrap();
    let rendered: Vec<Manifest> = e
        .seats
        .iter()
        .flat_map(|m| {
            [
                Manifest::Deployment(Box::new(m.deployment.clone())),
                Manifest::Service(Box::new(m.service.clone())),
            ]
        })
        .collect();
    assert_eq!(back.len(), rendered.len(), "{text}");
    for (b, r) in back.iter().zip(&rendered) {
        assert_eq!(b, r, "{text}");
    }
    // And each document alone, by the struct's own deserialization.
    let docs: Vec<&str> = text.split("\n---\n").collect();
    let deployments: Vec<Deployment> = docs
        .iter()
        .filter(|d| d.contains("kind: Deployment"))
        .map(|d| serde_yaml_ng::from_str::<Deployment>(d.trim_start_matches("---\n")).unwrap())
        .collect();
    let services: Vec<Service> = docs
        .iter()
        .filter(|d| d.contains("kind: Service"))
        .map(|d| serde_yaml_ng::from_str::<Service>(d).unwrap())
        .collect();
    let want_d: Vec<Deployment> = e.seats.iter().map(|m| m.deployment.clone()).collect();
    let want_s: Vec<Service> = e.seats.iter().map(|m| m.service.clone()).collect();
    assert_eq!(deployments, want_d);
    assert_eq!(services, want_s);
}
