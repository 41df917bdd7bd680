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
    let mode = bakeoff_suites::ThinkingMode::parse(&a.endpoint.thinking).map_err(usage)?;
    let mut out = run_preflight(&client, &opts).await;
    // The thinking-mode check: off must give no reasoning and non-empty content, on must give
    // reasoning; otherwise a flag says so (the endpoint stays fit: the numbers need care).
    if out.unfit.is_none() {
        let model = out.report.model.clone().unwrap_or_else(|| "default".into());
        let (check, flag) =
            bakeoff_suites::thinking::verify(&client, &model, out.discovered.facts.engine, mode)
                .await;
        out.report.thinking_mode = Some(check);
        out.report.flags.extend(flag);
    }
    if a.json {
        let v = serde_json::json!({
            "endpoint": client.url().redacted(),
            "preflight": out.report,
            "facts": out.discovered.facts,
            "failure_class": out.unfit.as_ref().map(|u| u.class),
            "remediation": out.unfit.as_ref().and_then(|u| u.remediation.clone()),
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
