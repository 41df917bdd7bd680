//! What the measuring commands (`eval run`, `bench run`, `eval damage`, `eval adapter`) share:
//! the client of the endpoint to measure and the naming of the run.

use bakeoff_client::{Client, EndpointUrl};
use bakeoff_local::embedded;

use crate::exit::Error;
use bakeoff_flags::config::{EndpointConfig, RunNaming};

/// The client for the endpoint to measure: the one given, or the embedded default's.
pub(crate) fn client_for(endpoint: &EndpointConfig, local: Option<&str>) -> Result<Client, Error> {
    let url = match (&endpoint.url, local) {
        (_, Some(l)) => EndpointUrl::parse(l).map_err(Error::internal)?,
        (Some(u), None) => u.clone(),
        (None, None) => {
            return Err(Error::internal(
                "no endpoint and no embedded default was started",
            ));
        }
    };
    Ok(endpoint.client_for(url)?)
}

/// Where a run's artifacts go (`--out`, `--replace`) and what they are called.
pub(crate) fn output<'a>(
    n: &'a RunNaming,
    local: Option<&embedded::LocalServer>,
    slug_suffix: &'a str,
    run_record: bakeoff_artifact::RunRecord,
) -> bakeoff_measure::Output<'a> {
    bakeoff_measure::Output {
        naming: naming(n, local),
        slug_suffix,
        out: &n.out,
        replace: n.replace,
        run_record,
    }
}

/// The naming of a run: `--slug`, `--hardware` (else the embedded default's), `--note`s then
/// the embedded default's note.
fn naming(n: &RunNaming, local: Option<&embedded::LocalServer>) -> bakeoff_measure::Naming {
    let mut notes = n.notes.clone();
    if let Some(l) = local {
        notes.push(l.note.clone());
    }
    bakeoff_measure::Naming {
        slug: n.slug.clone(),
        hardware: n
            .hardware
            .clone()
            .or_else(|| local.map(|l| l.hardware.clone())),
        notes,
    }
}
