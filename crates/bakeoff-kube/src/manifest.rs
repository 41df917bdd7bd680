//! One Docker seat → a Deployment and a Service (docs/scale-out.md "From seats to a cluster").

use std::collections::BTreeMap;

use bakeoff_seats::fleet::DockerLaunch;
use bakeoff_seats::{Fleet, Role, Seat};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec, DeploymentStrategy};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, PodSpec, PodTemplateSpec, ResourceRequirements, Service, ServicePort,
    ServiceSpec, Volume,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::error::KubeError;
use crate::names::object_name;
use crate::probe::StartupBudget;
use crate::secrets::SecretKey;
use crate::{probe, secrets, volumes};

/// One seat's Deployment and Service.
#[derive(Debug, Clone)]
pub struct SeatManifests {
    pub seat: String,
    pub role: Role,
    pub deployment: Deployment,
    pub service: Service,
    /// The Secret the seat's secret values come from, when it has any.
    pub secret_name: Option<String>,
    /// The keys that Secret must hold (what each is for; never its value).
    pub secret_keys: Vec<SecretKey>,
    pub startup: StartupBudget,
    /// `#` comment lines written above the Deployment: what did not map one to one.
    pub comments: Vec<String>,
}

/// The extended resource the NVIDIA device plugin advertises.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";

pub(crate) fn seat_manifests(
    fleet: &Fleet,
    seat: &Seat,
    d: &DockerLaunch,
    namespace: Option<&str>,
) -> Result<SeatManifests, KubeError> {
    let name = object_name(&seat.name)?;
    let container_port = d.container_port.unwrap_or(seat.port);
    let split = secrets::split(seat, d);
    let startup = probe::startup_budget(fleet, seat);
    let command = probe::completion_command(seat, container_port, split.api_key_var.as_deref());
    let mounts = volumes::from_docker(&seat.name, &d.mounts)?;
    let limits = resource_limits(seat, d)?;

    let labels = labels(seat, &name);
    let selector = BTreeMap::from([("bakeoff.seat".to_string(), name.clone())]);
    let annotations = deployment_annotations(fleet, seat, d, &startup);
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
    let pod = PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels.clone()),
            annotations: (!pod_annotations.is_empty()).then_some(pod_annotations),
            ..Default::default()
        }),
        spec: Some(pod_spec(seat, container, mounts.volumes)),
    };
    let deployment = deployment(
        meta(labels.clone(), annotations),
        seat,
        selector.clone(),
        pod,
    );
    let service = service(
        meta(labels, BTreeMap::new()),
        seat,
        selector,
        container_port,
    );

    let mut comments = comments(fleet, seat, d, &startup, &split.keys);
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

/// The container's limits: the GPUs (a count: the device plugin picks them) and the memory.
fn resource_limits(seat: &Seat, d: &DockerLaunch) -> Result<BTreeMap<String, Quantity>, KubeError> {
    let mut limits = BTreeMap::new();
    if !d.gpus.is_empty() {
        limits.insert(GPU_RESOURCE.to_string(), Quantity(d.gpus.len().to_string()));
    }
    let memory = d.memory_bytes().map_err(|e| KubeError::Seat {
        seat: seat.name.clone(),
        message: e.to_string(),
    })?;
    if let Some(bytes) = memory {
        limits.insert("memory".to_string(), Quantity(bytes_quantity(bytes)));
    }
    Ok(limits)
}

/// Where the Deployment came from: the fleet, the host, the startup budget's source and the
/// Docker restart policy it replaces.
fn deployment_annotations(
    fleet: &Fleet,
    seat: &Seat,
    d: &DockerLaunch,
    startup: &StartupBudget,
) -> BTreeMap<String, String> {
    let mut annotations = BTreeMap::from([
        ("bakeoff.fleet".to_string(), fleet.name.clone()),
        ("bakeoff.host".to_string(), seat.host.clone()),
        ("bakeoff.startup-budget".to_string(), startup.source.clone()),
    ]);
    if let Some(r) = &d.restart {
        annotations.insert("bakeoff.docker-restart".to_string(), r.clone());
    }
    annotations
}

/// The pod: the one container, its volumes, and how it restarts and stops.
fn pod_spec(seat: &Seat, container: Container, volumes: Vec<Volume>) -> PodSpec {
    PodSpec {
        containers: vec![container],
        // The only policy a Deployment allows: a crash restarts with back-off and
        // shows as CrashLoopBackOff, the watchdog's crash-loop class.
        restart_policy: Some("Always".to_string()),
        termination_grace_period_seconds: Some(
            i64::try_from(seat.stop_grace()).unwrap_or(i64::MAX),
        ),
        volumes: (!volumes.is_empty()).then_some(volumes),
        ..Default::default()
    }
}

fn deployment(
    metadata: ObjectMeta,
    seat: &Seat,
    selector: BTreeMap<String, String>,
    template: PodTemplateSpec,
) -> Deployment {
    Deployment {
        metadata,
        spec: Some(DeploymentSpec {
            // A dormant seat is kept created but stopped: a Deployment at zero replicas.
            replicas: Some(if seat.role == Role::Dormant { 0 } else { 1 }),
            selector: LabelSelector {
                match_labels: Some(selector),
                ..Default::default()
            },
            // A rolling update would start the new pod before stopping the old one: two
            // engines on one GPU budget, which the fleet never allows (docs/field-cases.md F8: weights that
            // cannot coexist). Recreate stops first, as `seat restart` does.
            strategy: Some(DeploymentStrategy {
                type_: Some("Recreate".to_string()),
                ..Default::default()
            }),
            template,
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn service(
    metadata: ObjectMeta,
    seat: &Seat,
    selector: BTreeMap<String, String>,
    container_port: u16,
) -> Service {
    Service {
        metadata,
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
    }
}

/// The YAML's comments: where the seat came from and what did not carry over as written.
fn comments(
    fleet: &Fleet,
    seat: &Seat,
    d: &DockerLaunch,
    startup: &StartupBudget,
    keys: &[SecretKey],
) -> Vec<String> {
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
    if let Some(secret) = (!keys.is_empty()).then(|| secrets::secret_name(&seat.name)) {
        comments.push(format!(
            "secret values come from Secret {secret} (keys: {}); create it before applying",
            keys.iter()
                .map(|k| k.key.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    comments
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
