//! `bakeoff seat export --kubernetes`: the fleet's Docker seats as Kubernetes manifests
//! (docs/scale-out.md), rendered by `bakeoff_kube`. It starts nothing, so a production seat
//! needs no `--confirm`; the notes say which seats are production. Exit 0: written; 2: a bad
//! fleet file, seat name or namespace (a named process seat among them); 3: a file could not be
//! written, or `--out` already holds one of the files (never overwritten).
//!
//! stdout carries only YAML (or nothing, with `--out`); the notes go to stderr, through the
//! fleet's redactor although they name keys only, never values.

use std::io::Write;
use std::path::{Path, PathBuf};

use bakeoff_kube::{ExportOptions, KubeError};
use bakeoff_seats::Fleet;
use bakeoff_seats::redact::Redactor;

use crate::cli::SeatExportArgs;
use crate::exit::{Error, Exit};

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
            let files = export
                .seats
                .iter()
                .map(|m| Ok((dir.join(format!("{}.yaml", m.seat)), m.yaml()?)))
                .collect::<Result<Vec<_>, KubeError>>()
                .map_err(|e| kube_error(&redactor, e))?;
            write_new(dir, &files)?;
            for (p, _) in &files {
                eprintln!("wrote {}", p.display());
            }
        }
    }
    for n in &export.notes {
        eprintln!("note: {}", redactor.text(n));
    }
    Ok(Exit::Ok)
}

/// Write every file or none: each is checked absent first (the refusal names it), then created
/// with `create_new`, so one that appears in between is still never overwritten.
fn write_new(dir: &Path, files: &[(PathBuf, String)]) -> Result<(), Error> {
    if let Some((p, _)) = files.iter().find(|(p, _)| p.exists()) {
        return Err(Error::Output(format!(
            "{} already exists: bakeoff never overwrites a file; move it away or give another --out",
            p.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        what: "create",
        path: dir.to_path_buf(),
        source,
    })?;
    for (p, text) in files {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(p)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|source| Error::Io {
                what: "write",
                path: p.clone(),
                source,
            })?;
    }
    Ok(())
}

/// The error through the fleet's redactor; `Error::exit_code` classifies it by its variant.
fn kube_error(redactor: &Redactor, e: KubeError) -> Error {
    Error::Kube {
        message: redactor.text(&e.to_string()),
        source: Box::new(e),
    }
}
