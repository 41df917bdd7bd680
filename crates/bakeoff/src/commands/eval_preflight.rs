//! `bakeoff eval preflight`.

use bakeoff_suites::run_preflight;

use crate::exit::{Error, Exit};
use bakeoff_flags::config::PreflightConfig;

pub async fn run(cfg: PreflightConfig) -> Result<Exit, Error> {
    let client = cfg.endpoint.client_for(cfg.url.clone())?;
    // One short request offering a tool: whether tool calling is configured is a fact of the
    // endpoint an operator asks preflight for (the `tool` suite depends on it).
    let opts = bakeoff_suites::PreflightOptions {
        probe_tools: true,
        ..cfg.endpoint.preflight.clone()
    };
    let mode = cfg.endpoint.thinking;
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
    if cfg.json {
        let v = serde_json::json!({
            "endpoint": client.url().redacted(),
            "preflight": out.report,
            "facts": out.discovered.facts,
            "failure_class": out.unfit.as_ref().map(|u| u.class),
            "remediation": out.unfit.as_ref().and_then(|u| u.remediation.clone()),
        });
        stdoutln!("{}", serde_json::to_string_pretty(&v).map_err(Error::json)?);
    } else {
        stdoutln!(
            "{}",
            super::screen(&bakeoff_report::terminal::preflight(
                &out.report,
                &out.discovered.facts,
                &client.url().redacted(),
                out.unfit
                    .as_ref()
                    .map(|u| bakeoff_report::terminal::UnfitView {
                        class: u.class,
                        remediation: u.remediation.as_deref(),
                    })
            ))
        );
    }
    Ok(Exit::from_ok(out.report.fit))
}
