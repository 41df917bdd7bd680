//! `bakeoff eval preflight`.

use bakeoff_suites::run_preflight;

use super::{client_for, preflight_options};
use crate::cli::PreflightArgs;
use crate::exit::{CliError, Exit, usage};

pub async fn run(a: PreflightArgs) -> Result<Exit, CliError> {
    let Some(endpoint) = a.endpoint.endpoint.clone() else {
        return Err(usage(
            "eval preflight needs --endpoint URL (e.g. http://127.0.0.1:8080)",
        ));
    };
    let client = client_for(&endpoint, &a.endpoint)?;
    let opts = preflight_options(&a.endpoint)?;
    let out = run_preflight(&client, &opts).await;
    if a.json {
        let v = serde_json::json!({
            "endpoint": client.url().redacted(),
            "preflight": out.report,
            "facts": out.discovered.facts,
            "failure_class": out.unfit.as_ref().map(|u| u.class),
        });
        println!("{}", serde_json::to_string_pretty(&v).map_err(usage)?);
    } else {
        println!(
            "{}",
            bakeoff_report::terminal::preflight(
                &out.report,
                &out.discovered.facts,
                &client.url().redacted()
            )
        );
    }
    Ok(if out.report.fit {
        Exit::Ok
    } else {
        Exit::Failed
    })
}
