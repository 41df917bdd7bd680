//! The YAML stream: each seat's Deployment then its Service, each document opened by `---`, the
//! seat's comment lines above its Deployment. And the way back: every document deserialized by
//! the typed structs themselves, so a test (or an operator's script) checks that what was
//! written is what Kubernetes' own types read.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use serde::Serialize;

use crate::error::KubeError;
use crate::manifest::SeatManifests;

/// One document of an exported stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Manifest {
    Deployment(Box<Deployment>),
    Service(Box<Service>),
}

pub(crate) fn seat_documents(m: &SeatManifests) -> Result<String, KubeError> {
    let mut s = String::from("---\n");
    for c in &m.comments {
        // A comment is one line whatever it quotes.
        s.push_str("# ");
        s.push_str(&c.replace(['\n', '\r'], " "));
        s.push('\n');
    }
    s.push_str(&to_yaml(&m.deployment)?);
    s.push_str("---\n");
    s.push_str(&to_yaml(&m.service)?);
    Ok(s)
}

fn to_yaml<T: Serialize>(v: &T) -> Result<String, KubeError> {
    let s = serde_yaml_ng::to_string(v).map_err(|e| KubeError::Yaml(e.to_string()))?;
    // Each document is opened by our own `---`.
    let s = s.strip_prefix("---\n").unwrap_or(&s);
    Ok(quote_yaml11_booleans(s))
}

/// Words YAML 1.1 reads as booleans. serde_yaml_ng writes YAML 1.2, where they are plain
/// strings, but kubectl reads YAML 1.1 (go-yaml): an argument `on` (llama.cpp's `-fa on`) or an
/// annotation `no` would reach the API server as a boolean and the apply would fail.
const YAML11_BOOLEANS: &[&str] = &[
    "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off",
    "OFF",
];

/// `text` (block-style YAML as serde_yaml_ng writes it) with every plain key or value that is a
/// [`YAML11_BOOLEANS`] word single-quoted. Only exact matches change, and the lines of a literal
/// block (`|`) are content, left alone.
fn quote_yaml11_booleans(text: &str) -> String {
    let q = |s: &str| {
        if YAML11_BOOLEANS.contains(&s) {
            format!("'{s}'")
        } else {
            s.to_string()
        }
    };
    let mut out = String::with_capacity(text.len() + 16);
    // The indentation of the line that opened a literal block: deeper lines are its content.
    let mut block: Option<usize> = None;
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        if let Some(b) = block {
            if line.trim().is_empty() || indent > b {
                out.push_str(line);
                out.push('\n');
                continue;
            }
            block = None;
        }
        let mut rest = &line[indent..];
        out.push_str(&line[..indent]);
        while let Some(r) = rest.strip_prefix("- ") {
            out.push_str("- ");
            rest = r;
        }
        let opens_block = ["|", "|-", "|+"]
            .iter()
            .any(|b| rest == *b || rest.ends_with(&format!(": {b}")));
        if opens_block {
            block = Some(indent);
            out.push_str(rest);
        } else if let Some((k, v)) = rest.split_once(": ") {
            out.push_str(&format!("{}: {}", q(k), q(v)));
        } else if let Some(k) = rest.strip_suffix(':') {
            out.push_str(&format!("{}:", q(k)));
        } else {
            out.push_str(&q(rest));
        }
        out.push('\n');
    }
    out
}

/// Every document of a multi-document stream (`---` lines between them), read by the typed
/// structs: a Deployment or a Service, by its `kind`. Documents holding only comments are
/// skipped; any other kind is an error naming the document.
pub fn parse_documents(text: &str) -> Result<Vec<Manifest>, KubeError> {
    let mut out = Vec::new();
    for (index, doc) in split_documents(text).into_iter().enumerate() {
        let err = |message: String| KubeError::Parse { index, message };
        // Before the first `---`, or comments only: nothing to read.
        if doc
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        {
            continue;
        }
        let value: serde_yaml_ng::Value =
            serde_yaml_ng::from_str(&doc).map_err(|e| err(e.to_string()))?;
        if value.is_null() {
            continue;
        }
        let kind = value.get("kind").and_then(|k| k.as_str()).unwrap_or("");
        out.push(match kind {
            "Deployment" => Manifest::Deployment(Box::new(
                serde_yaml_ng::from_str::<Deployment>(&doc).map_err(|e| err(e.to_string()))?,
            )),
            "Service" => Manifest::Service(Box::new(
                serde_yaml_ng::from_str::<Service>(&doc).map_err(|e| err(e.to_string()))?,
            )),
            other => {
                return Err(err(format!(
                    "kind {other:?} is not one bakeoff exports (Deployment, Service)"
                )));
            }
        });
    }
    Ok(out)
}

/// The text of each document: lines between `---` lines.
fn split_documents(text: &str) -> Vec<String> {
    let mut docs = vec![String::new()];
    for line in text.lines() {
        if line.trim_end() == "---" {
            docs.push(String::new());
        } else if let Some(d) = docs.last_mut() {
            d.push_str(line);
            d.push('\n');
        }
    }
    docs
}

impl SeatManifests {
    /// The seat's two documents, its comments first.
    pub fn yaml(&self) -> Result<String, KubeError> {
        seat_documents(self)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::collections::BTreeMap;

    use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    #[test]
    fn yaml11_booleans_are_quoted_and_read_back_as_written() {
        let args: Vec<String> = [
            "-fa", "on", "--x", "no", "yes", "y", "off", "one", "true", "a\nno\n",
        ]
        .map(String::from)
        .to_vec();
        let d = Deployment {
            metadata: ObjectMeta {
                annotations: Some(BTreeMap::from([("restart".to_string(), "no".to_string())])),
                ..Default::default()
            },
            spec: Some(k8s_openapi::api::apps::v1::DeploymentSpec {
                template: PodTemplateSpec {
                    spec: Some(PodSpec {
                        containers: vec![Container {
                            name: "c".into(),
                            args: Some(args),
                            ..Default::default()
                        }],
                        ..Default::default()
                    }),
                    ..Default::default()
                },
                ..Default::default()
            }),
            ..Default::default()
        };
        let text = to_yaml(&d).unwrap();
        for want in [
            "- 'on'",
            "- 'no'",
            "- 'yes'",
            "- 'y'",
            "- 'off'",
            "- one",
            "restart: 'no'",
        ] {
            assert!(text.contains(want), "{want} in\n{text}");
        }
        // Read back equal: the literal block's `no` line stayed content (quoted, it would not).
        assert_eq!(serde_yaml_ng::from_str::<Deployment>(&text).unwrap(), d);
    }
}
