//! `bakeoff audit template` and `bakeoff audit checkpoint`.

use std::path::Path;

use bakeoff_client::ApiKey;
use bakeoff_client::discovery::template::endpoint_template;
use bakeoff_model::{blocks_start, check_serving_flag, inspect_checkpoint};
use bakeoff_report::{checkpoint_audit, template_audit};
use bakeoff_text::{ExtractedTemplate, extract_templates, fixed_conversation, template_table};

use crate::exit::{Error, Exit};
use bakeoff_flags::cli::{AuditCheckpointArgs, AuditCommand, AuditTemplateArgs};

pub async fn run(c: AuditCommand) -> Result<Exit, Error> {
    match c {
        AuditCommand::Template(a) => template(a).await,
        AuditCommand::Checkpoint(a) => checkpoint(a),
        AuditCommand::Cache(a) => super::audit_cache::run(a),
        AuditCommand::Seat(a) => super::audit_seat::run(a),
    }
}

/// Templates of a path, or of a running endpoint (llama.cpp `/props` through discovery). A URL
/// of another scheme (`ftp://…`) is the endpoint parser's to refuse, never a missing file.
async fn templates_of(p: &str) -> Result<Vec<ExtractedTemplate>, Error> {
    if p.contains("://") {
        let key = std::env::var("BAKEOFF_API_KEY").ok().and_then(ApiKey::new);
        return Ok(vec![endpoint_template(p, key).await?]);
    }
    Ok(extract_templates(Path::new(p))?)
}

async fn template(a: AuditTemplateArgs) -> Result<Exit, Error> {
    let mut all = Vec::new();
    for p in &a.paths {
        all.extend(templates_of(p).await?);
    }
    let reference = match &a.reference {
        Some(r) => Some(templates_of(r).await?.remove(0)),
        None => None,
    };
    let input = fixed_conversation();
    let (refrow, rows) = template_table(&all, reference.as_ref(), &input);
    let any_mismatch = rows.iter().any(|r| r.matches_reference == Some(false));
    if a.json {
        let v = template_audit::json(refrow.as_ref(), &rows);
        stdoutln!("{}", serde_json::to_string_pretty(&v).map_err(Error::json)?);
    } else {
        stdout!(
            "{}",
            super::screen(&template_audit::terminal(refrow.as_ref(), &rows))
        );
    }
    Ok(Exit::from_ok(!any_mismatch))
}

fn checkpoint(a: AuditCheckpointArgs) -> Result<Exit, Error> {
    let a = a.validate()?;
    let report = inspect_checkpoint(&a.path)?;
    let findings = check_serving_flag(&report, a.quantization.as_deref());
    let flag = a.quantization.as_deref();
    if a.json {
        let v = checkpoint_audit::json(&report, flag, &findings);
        stdoutln!("{}", serde_json::to_string_pretty(&v).map_err(Error::json)?);
    } else {
        stdout!(
            "{}",
            super::screen(&checkpoint_audit::terminal(&report, flag, &findings))
        );
    }
    Ok(Exit::from_ok(!blocks_start(&findings)))
}
