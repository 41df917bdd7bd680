//! `bakeoff gateway export`: the fleet as a LiteLLM proxy config (wiring of
//! `bakeoff_seats::gateway::export`). Exit 0: written; 2: a bad fleet file, flag, or an
//! existing --out without --force; 3: the file could not be written.

use bakeoff_seats::Fleet;
use bakeoff_seats::gateway::export::{self, ExportOptions};

use crate::exit::{Error, Exit};
use bakeoff_flags::cli::{GatewayCommand, GatewayExportArgs};

pub fn run(c: GatewayCommand) -> Result<Exit, Error> {
    match c {
        GatewayCommand::Export(a) => export_config(a),
    }
}

fn export_config(a: GatewayExportArgs) -> Result<Exit, Error> {
    let fleet = Fleet::load(&a.fleet.fleet)?;
    let opts = ExportOptions {
        api_key_env: a.api_key_env.clone(),
    };
    let e = export::export(&fleet, &opts)?;
    let text = export::render(&fleet, &e)?;
    match &a.out {
        None => stdout!("{text}"),
        Some(path) => {
            export::write(path, &text, a.force)?;
            for l in &e.left_out {
                stderrln!("[gateway] left out: {l}");
            }
            stdoutln!(
                "wrote {} ({} model_list entries)",
                path.display(),
                e.config.model_list.len()
            );
        }
    }
    Ok(Exit::Ok)
}
