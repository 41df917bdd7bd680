//! One Docker seat → a Deployment and a Service (docs/scale-out.md "From seats to a cluster").

use std::collections::BTreeMap;

use bakeoff_seats::fleet::DockerLaunch;
use bakeoff_seats::{Fleet, Role, Seat};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, PodSpec, PodTemplateSpec, ResourceRequirements, Service, ServicePort,
    ServiceSpec,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::names::object_name;
use crate::{KubeError, SeatManifests, probe, secrets, volumes};

/// The extended resource the NVIDIA device plugin advertises.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";

pub(crate) fn seat_manifests(
    fleet: &Fleet,
    seat: &Seat,
    d: &DockerLaunch,
    namespace: Option<&str>,
) -> Result<SeatManifests, KubeError> {
    let name = object_name(&seat.name)?;
    let bad = |message: String| KubeError::Seat {
        seat: seat.name.clone(),
        message,
    };
    let container_port = d.container_port.unwrap_or(seat.port);
    let split = secrets::split(seat, d);
    let startup = probe::startup_budget(fleet, seat);
    let command = probe::completion_command(seat, container_port, split.api_key_var.as_deref());
    let mounts = volumes::from_docker(&seat.name, &d.mounts)?;

    let mut limits = BTreeMap::new();
    if !d.gpus.is_empty() {
        limits.insert(GPU_RESOURCE.to_string(), Quantity(d.gpus.len().to_string()));
    }
    if let Some(bytes) = d.memory_bytes().map_err(bad)? {
        limits.insert("memory".to_string(), Quantity(bytes_quantity(bytes)));
    }

    let labels = labels(seat, &name);
    let selector = BTreeMap::from([("bakeoff.seat".to_string(), name.clone())]);
    let mut annotations = BTreeMap::from([
        ("bakeoff.fleet".to_string(), fleet.name.clone()),
        ("bakeoff.host".to_string(), seat.host.clone()),
        ("bakeoff.startup-budget".to_string(), startup.source.clone()),
    ]);
    if let Some(r) = &d.restart {
        annotations.insert("bakeoff.docker-restart".to_string(), r.clone());
    }
    // The fleet's Docker labels (`homepage.group = "AI - Bench"`) are rarely valid label
    // values (spaces): they travel as annotations of the pod.
    let pod_annotations: BTreeMap<String, String> = d.labels.clone();

    let container = Container {
        name: name.clone(),
        image: Some(d.image.clone()),
        args: (!split.args.is_empty()).then_some(split.args),
        env: (!split.env.is_empty()).then_some(split.env),
        ports: Some(vec![ContainerPort {
            name: Some("http".to_string()),
            container_port: i32::from(container_port),
            protocol: Some("TCP".to_string()),
            ..Default::default()
        }]),
        readiness_probe: Some(probe::readiness(command.clone())),
        startup_probe: Some(probe::startup(command, &startup)),
        resources: (!limits.is_empty()).then(|| ResourceRequirements {
            limits: Some(limits),
            ..Default::default()
        }),
        volume_mounts: (!mounts.mounts.is_empty()).then_some(mounts.mounts),
        ..Default::default()
    };

    let meta =
        |labels: BTreeMap<String, String>, annotations: BTreeMap<String, String>| ObjectMeta {
            name: Some(name.clone()),
            namespace: namespace.map(str::to_string),
            labels: Some(labels),
            annotations: (!annotations.is_empty()).then_some(annotations),
            ..Default::default()
        };

    let deployment = Deployment {
        metadata: meta(labels.clone(), annotations),
        spec: Some(DeploymentSpec {
            // A dormant seat is kept created but stopped: a Deployment at zero replicas.
            replicas: Some(if seat.role == Role::Dormant { 0 } else { 1 }),
            selector: LabelSelector {
                match_labels: Some(selector.clone()),
                ..Default::default()
            },
            // A rolling update would start the new pod before stopping the old one: two
            // engines on one GPU budget, which the fleet never allows (docs/field-cases.md F8: weights that
            // cannot coexist). Recreate stops first, as `seat restart` does.
            strategy: Some(DeploymentStrategy {
                type_: Some("Recreate".to_string()),
                ..Default::default()
            }),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels.clone()),
                    annotations: (!pod_annotations.is_empty()).then_some(pod_annotations),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    // The only policy a Deployment allows: a crash restarts with back-off and
                    // shows as CrashLoopBackOff, the watchdog's crash-loop class.
                    restart_policy: Some("Always".to_string()),
                    termination_grace_period_seconds: Some(
                        i64::try_from(seat.stop_grace()).unwrap_or(i64::MAX),
                    ),
                    volumes: (!mounts.volumes.is_empty()).then_some(mounts.volumes),
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        ..Default::default()
    };

    let service = Service {
        metadata: meta(labels, BTreeMap::new()),
        spec: Some(ServiceSpec {
            selector: Some(selector),
            ports: Some(vec![ServicePort {
                name: Some("http".to_string()),
                port: i32::from(seat.port),
                target_port: Some(IntOrString::Int(i32::from(container_port))),
                protocol: Some("TCP".to_string()),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    };

    let mut comments = vec![format!(
        "seat {} ({}, {} on host {}), from {} by `bakeoff seat export --kubernetes`",
        seat.name,
        seat.role.as_str(),
        seat.engine,
        seat.host,
        fleet.path.display()
    )];
    comments.push(format!(
        "readiness and startup: a real one-token completion by curl inside the container (the image must carry curl); startup allows {} s ({})",
        startup.seconds, startup.source
    ));
    if !d.gpus.is_empty() {
        comments.push(format!(
            "{GPU_RESOURCE}: {} (the host's GPU ids {} do not carry over: the device plugin picks the GPUs)",
            d.gpus.len(),
            d.gpus.join(",")
        ));
    }
    if d.restart
        .as_deref()
        .is_some_and(|r| r != "always" && r != "unless-stopped")
    {
        comments.push(format!(
            "Docker restart {:?} becomes restartPolicy Always (a Deployment allows no other): a crash now restarts with back-off (CrashLoopBackOff)",
            d.restart.as_deref().unwrap_or_default()
        ));
    }
    if seat.role == Role::Dormant {
        comments.push("dormant: replicas 0 (created, not started)".to_string());
    }
    if let Some(secret) = (!split.keys.is_empty()).then(|| secrets::secret_name(&seat.name)) {
        comments.push(format!(
            "secret values come from Secret {secret} (keys: {}); create it before applying",
            split
                .keys
                .iter()
                .map(|k| k.key.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    comments.extend(mounts.notes);

    Ok(SeatManifests {
        seat: seat.name.clone(),
        role: seat.role,
        deployment,
        service,
        secret_name: (!split.keys.is_empty()).then(|| secrets::secret_name(&seat.name)),
        secret_keys: split.keys,
        startup,
        comments,
    })
}

/// `app.kubernetes.io/name` plus the labels bakeoff puts on a seat's container (`bakeoff.seat`,
/// `bakeoff.role`).
fn labels(seat: &Seat, name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_string(), name.to_string()),
        ("bakeoff.seat".to_string(), name.to_string()),
        ("bakeoff.role".to_string(), seat.role.as_str().to_string()),
    ])
}

/// Bytes in the largest binary unit that divides them (`2g` → `2Gi`).
fn bytes_quantity(b: i64) -> String {
    for (unit, size) in [("Gi", 1i64 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)] {
        if b % size == 0 {
            return format!("{}{unit}", b / size);
        }
    }
    b.to_string()
}
