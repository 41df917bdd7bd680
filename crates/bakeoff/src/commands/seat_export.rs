//! `bakeoff seat export --kubernetes`: the fleet's Docker seats as Kubernetes manifests
//! (docs/scale-out.md), rendered by `bakeoff_kube`. It starts nothing, so a production seat
//! needs no `--confirm`; the notes say which seats are production. Exit 0: written; 2: a bad
//! fleet file, seat name or namespace (a named process seat among them); 3: a file could not be
//! written, or `--out` already holds one of the files (never overwritten).
//!
//! stdout carries only YAML (or nothing, with `--out`); the notes go to stderr, through the
//! fleet's redactor although they name keys only, never values.

use std::io::Write;
use std::path::PathBuf;

use bakeoff_kube::{ExportOptions, KubeError};
use bakeoff_seats::Fleet;
use bakeoff_seats::redact::Redactor;

use crate::exit::{Error, Exit};
use bakeoff_flags::cli::SeatExportArgs;

pub fn run(a: SeatExportArgs) -> Result<Exit, Error> {
    let fleet = Fleet::load(&a.fleet.fleet)?;
    let redactor = Redactor::for_fleet(&fleet);
    let export = bakeoff_kube::export(
        &fleet,
        &ExportOptions {
            seats: a.seats,
            namespace: a.namespace,
        },
    )
    .map_err(|e| kube_error(&redactor, e))?;

    match &a.out {
        None => {
            let text = export.yaml().map_err(|e| kube_error(&redactor, e))?;
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(text.as_bytes())
                .and_then(|()| stdout.flush())
                .map_err(|source| Error::Io {
                    what: "write the manifests to",
                    path: PathBuf::from("stdout"),
                    source,
                })?;
        }
        Some(dir) => {
            for p in export
                .write_new(dir)
                .map_err(|e| kube_error(&redactor, e))?
            {
                stderrln!("wrote {}", p.display());
            }
        }
    }
    for n in &export.notes {
        stderrln!("note: {}", redactor.text(n));
    }
    Ok(Exit::Ok)
}

/// Write every file or none: each is checked absent first (the refusal names it), then created
/// with `create_new`, so one that appears in between is still never overwritten.
fn kube_error(redactor: &Redactor, e: KubeError) -> Error {
    Error::Kube {
        message: redactor.text(&e.to_string()),
        source: Box::new(e),
    }
}
