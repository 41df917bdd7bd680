//! A Docker seat's `HOST:CONTAINER[:ro]` mounts as pod volumes: an absolute host path becomes a
//! `hostPath` volume (the pod must then land on a node that has those files), a Docker named
//! volume a `persistentVolumeClaim` of that name (which the operator creates).

use k8s_openapi::api::core::v1::{
    HostPathVolumeSource, PersistentVolumeClaimVolumeSource, Volume, VolumeMount,
};

use crate::error::KubeError;

pub(crate) struct Mounts {
    pub volumes: Vec<Volume>,
    pub mounts: Vec<VolumeMount>,
    /// One comment line per volume that needs the operator's attention.
    pub notes: Vec<String>,
}

pub(crate) fn from_docker(seat: &str, binds: &[String]) -> Result<Mounts, KubeError> {
    let mut out = Mounts {
        volumes: Vec::new(),
        mounts: Vec::new(),
        notes: Vec::new(),
    };
    for (i, bind) in binds.iter().enumerate() {
        let parts: Vec<&str> = bind.split(':').collect();
        let (source, target, opts) = match parts.as_slice() {
            [s, t] => (*s, *t, ""),
            [s, t, o] => (*s, *t, *o),
            _ => {
                return Err(KubeError::Seat {
                    seat: seat.to_string(),
                    message: format!(
                        "mount {bind:?} is not HOST:CONTAINER[:ro]: fix it in the fleet file"
                    ),
                });
            }
        };
        if source.is_empty() || !target.starts_with('/') {
            return Err(KubeError::Seat {
                seat: seat.to_string(),
                message: format!(
                    "mount {bind:?} is not HOST:CONTAINER[:ro] with an absolute CONTAINER path: fix it in the fleet file"
                ),
            });
        }
        let name = format!("mount-{i}");
        let read_only = opts.split(',').any(|o| o == "ro");
        let mut volume = Volume {
            name: name.clone(),
            ..Default::default()
        };
        if source.starts_with('/') {
            volume.host_path = Some(HostPathVolumeSource {
                path: source.to_string(),
                ..Default::default()
            });
            out.notes.push(format!(
                "volume {name}: hostPath {source} pins the pod to nodes that have it (add a nodeSelector), or replace it with a PVC (ReadOnlyMany for shared weights)"
            ));
        } else {
            volume.persistent_volume_claim = Some(PersistentVolumeClaimVolumeSource {
                claim_name: source.to_string(),
                read_only: read_only.then_some(true),
            });
            out.notes.push(format!(
                "volume {name}: the Docker volume {source} becomes PersistentVolumeClaim {source}: create the claim first"
            ));
        }
        out.volumes.push(volume);
        out.mounts.push(VolumeMount {
            name,
            mount_path: target.to_string(),
            read_only: read_only.then_some(true),
            ..Default::default()
        });
    }
    Ok(out)
}
