//! `bakeoff audit template` and `bakeoff audit checkpoint`.

use std::path::Path;
use std::time::Duration;

use bakeoff_client::discovery::{DiscoveryOptions, discover};
use bakeoff_client::{Client, ClientOptions, EndpointUrl, Timeouts};
use bakeoff_gpu::units::gib;
use bakeoff_model::{Severity, blocks_start, check_serving_flag, inspect_checkpoint};
use bakeoff_report::escape::for_terminal;
use bakeoff_report::template_audit;
use bakeoff_text::{ExtractedTemplate, extract_templates, fixed_conversation, template_table};

use crate::cli::{AuditCheckpointArgs, AuditCommand, AuditTemplateArgs};
use crate::exit::{Error, Exit};

pub async fn run(c: AuditCommand) -> Result<Exit, Error> {
    match c {
        AuditCommand::Template(a) => template(a).await,
        AuditCommand::Checkpoint(a) => checkpoint(a),
        AuditCommand::Cache(a) => super::audit_cache::run(a),
        AuditCommand::Seat(a) => super::audit_seat::run(a),
    }
}

/// Templates of a path, or of a running endpoint (llama.cpp `/props` through discovery).
async fn templates_of(p: &str) -> Result<Vec<ExtractedTemplate>, Error> {
    if p.starts_with("http://") || p.starts_with("https://") {
        let url = EndpointUrl::parse(p)?;
        let client = Client::new(
            url,
            ClientOptions {
                timeouts: Timeouts::default(),
                api_key: std::env::var("BAKEOFF_API_KEY")
                    .ok()
                    .and_then(bakeoff_client::ApiKey::new),
                ..Default::default()
            },
        );
        let d = discover(
            &client,
            &DiscoveryOptions {
                probe_timeout: Duration::from_secs(10),
                ..DiscoveryOptions::default()
            },
        )
        .await;
        let text = d.chat_template.ok_or_else(|| {
            Error::usage(format!(
                "{p}: the endpoint exposes no chat template (llama.cpp /props has none, or it is not llama.cpp); fix: audit the model directory instead"
            ))
        })?;
        return Ok(vec![ExtractedTemplate {
            label: p.to_owned(),
            source: "endpoint /props chat_template".into(),
            text,
            bos_token: None,
            eos_token: None,
        }]);
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
        println!("{}", serde_json::to_string_pretty(&v).map_err(Error::json)?);
    } else {
        print!("{}", template_audit::terminal(refrow.as_ref(), &rows));
    }
    Ok(Exit::from_ok(!any_mismatch))
}

fn checkpoint(a: AuditCheckpointArgs) -> Result<Exit, Error> {
    let report = inspect_checkpoint(&a.path)?;
    let findings = check_serving_flag(&report, a.quantization.as_deref());
    if a.json {
        let v = serde_json::json!({"checkpoint": report, "quantization_flag": a.quantization, "findings": findings});
        println!("{}", serde_json::to_string_pretty(&v).map_err(Error::json)?);
    } else {
        // Every string below comes from the checkpoint's files (or the command line): escaped
        // so a hostile config.json cannot drive the terminal.
        let t = |s: &str| for_terminal(s, 300);
        println!("checkpoint {}", t(&report.path));
        println!("  architectures: {}", t(&report.architectures.join(", ")));
        println!(
            "  model type: {}{}",
            t(report.model_type.as_deref().unwrap_or("—")),
            report
                .text_model_type
                .as_deref()
                .map(|m| format!(" (text: {})", t(m)))
                .unwrap_or_default()
        );
        println!("  dtype: {}", t(report.dtype.as_deref().unwrap_or("—")));
        match &report.weights {
            Some(w) => println!(
                "  weights: {} ({} bytes, from {}, {} files)",
                gib(w.bytes),
                w.bytes,
                t(&w.source),
                w.files.len()
            ),
            None => println!("  weights: none found"),
        }
        match &report.quantization {
            Some(q) => println!(
                "  quantization_config: {} (from {}){}",
                t(&q.method),
                t(&q.source),
                q.format
                    .as_deref()
                    .map(|f| format!(", format {}", t(f)))
                    .unwrap_or_default()
            ),
            None => println!("  quantization_config: none (unquantized)"),
        }
        println!(
            "  serving flag: --quantization {}",
            t(a.quantization.as_deref().unwrap_or("(none)"))
        );
        for n in &report.notes {
            println!("  note: {}", t(n));
        }
        for f in &findings {
            let sev = match f.severity {
                Severity::Error => "ERROR",
                Severity::Warning => "warning",
                Severity::Note => "note",
            };
            println!(
                "  {sev} [{}]: {}",
                t(&f.code),
                for_terminal(&f.message, 600)
            );
            if let Some(fix) = &f.fix {
                println!("    fix: {}", for_terminal(fix, 600));
            }
        }
        if findings.is_empty() {
            println!("  ok: the flag agrees with the checkpoint");
        }
    }
    Ok(Exit::from_ok(!blocks_start(&findings)))
}
