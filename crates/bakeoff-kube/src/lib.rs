//! Kubernetes on paper (docs/scale-out.md): a fleet's Docker seats rendered as manifests — one
//! Deployment and one Service per seat — built from `k8s-openapi`'s typed API structs, so each
//! manifest is valid by construction, and read back through the same structs
//! ([`parse_documents`]). It owns the mapping: GPU limits, a readiness probe that is a real
//! one-token completion (never `/health`: docs/field-cases.md B1), a startup probe sized from the seat's
//! last start record, volumes from mounts, and secret references.
//!
//! It must never talk to a cluster or start anything, and never write a secret: an environment
//! value or argument that `bakeoff_seats::redact` calls secret becomes a `secretKeyRef` to a
//! Secret named after the seat, which the operator creates; its value is never read out.

pub use k8s_openapi;

mod error;
mod files;
mod manifest;
mod names;
mod probe;
mod secrets;
mod volumes;
mod yaml;

use std::collections::BTreeSet;

use bakeoff_seats::fleet::Launch;
use bakeoff_seats::{Fleet, Role};

pub use error::KubeError;
pub use manifest::SeatManifests;
pub use probe::{DEFAULT_STARTUP_BUDGET_S, MIN_STARTUP_BUDGET_S, PROBE_PERIOD_S, StartupBudget};
pub use secrets::SecretKey;
pub use yaml::{Manifest, parse_documents};

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// Seats by name; empty: every Docker seat of the fleet (process seats skipped with a note).
    pub seats: Vec<String>,
    /// Written into every manifest's `metadata.namespace`; `None`: kubectl's current one.
    pub namespace: Option<String>,
}

/// The manifests of a fleet, and what the operator must know about them.
#[derive(Debug, Clone)]
pub struct Export {
    pub seats: Vec<SeatManifests>,
    /// One line each: seats skipped, production seats, Secrets to create, how each startup
    /// probe was sized. Never a secret value.
    pub notes: Vec<String>,
}

impl Export {
    /// Every seat's documents, one multi-document YAML stream.
    pub fn yaml(&self) -> Result<String, KubeError> {
        let mut s = String::new();
        for m in &self.seats {
            s.push_str(&m.yaml()?);
        }
        Ok(s)
    }
}

/// Render the manifests of `opts.seats` (or every Docker seat) of `fleet`.
pub fn export(fleet: &Fleet, opts: &ExportOptions) -> Result<Export, KubeError> {
    if let Some(ns) = &opts.namespace {
        names::check_namespace(ns)?;
    }
    let named = !opts.seats.is_empty();
    let mut chosen = Vec::new();
    if named {
        let mut seen = BTreeSet::new();
        for n in &opts.seats {
            let seat = fleet.require(n)?;
            // Named on purpose: a process seat cannot be exported, and saying so beats a
            // manifest with a made-up image.
            if matches!(seat.launch, Launch::Process(_)) {
                return Err(KubeError::ProcessSeat(seat.name.clone()));
            }
            if seen.insert(seat.name.as_str()) {
                chosen.push(seat);
            }
        }
    } else {
        chosen.extend(fleet.seats.iter());
    }

    let mut notes = Vec::new();
    let mut seats = Vec::new();
    for seat in chosen {
        match &seat.launch {
            Launch::Process(_) => notes.push(format!(
                "{}: skipped: a process seat has no image (give it a [seat.docker] launch to export it)",
                seat.name
            )),
            Launch::Docker(d) => {
                seats.push(manifest::seat_manifests(
                    fleet,
                    seat,
                    d,
                    opts.namespace.as_deref(),
                )?);
            }
        }
    }
    if seats.is_empty() {
        return Err(KubeError::NothingToExport);
    }
    notes.extend(seat_notes(&seats, opts.namespace.as_deref()));
    Ok(Export { seats, notes })
}

fn seat_notes(seats: &[SeatManifests], ns: Option<&str>) -> Vec<String> {
    let mut notes = Vec::new();
    let production: Vec<&str> = seats
        .iter()
        .filter(|m| m.role == Role::Production)
        .map(|m| m.seat.as_str())
        .collect();
    if !production.is_empty() {
        notes.push(format!(
            "production seats: {} (nothing was started; applying these manifests is the operator's act)",
            production.join(", ")
        ));
    }
    let ns_flag = ns.map(|n| format!(" -n {n}")).unwrap_or_default();
    for m in seats {
        if let Some(secret) = &m.secret_name {
            let keys: Vec<String> = m
                .secret_keys
                .iter()
                .map(|k| format!("{} ({})", k.key, k.holds))
                .collect();
            let from: Vec<String> = m
                .secret_keys
                .iter()
                .map(|k| format!("--from-literal={}=…", k.key))
                .collect();
            notes.push(format!(
                "{}: secret values are not written; they come from Secret {secret}, keys {}: create it with `kubectl create secret generic {secret}{ns_flag} {}`",
                m.seat,
                keys.join(", "),
                from.join(" ")
            ));
        }
        notes.push(format!(
            "{}: startup probe allows {} s ({})",
            m.seat, m.startup.seconds, m.startup.source
        ));
    }
    notes
}
