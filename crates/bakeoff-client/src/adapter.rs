//! Which requests reach a LoRA adapter and which its base model, on this endpoint
//! (`bakeoff eval adapter`). How an engine serves adapters is its dialect's
//! ([`dialect::adapter_serving`]); this module asks the endpoint what it serves — `/v1/models`,
//! and llama.cpp's `GET /lora-adapters` — and records the answer as an [`AdapterRoute`], which
//! [`select`] then applies to each request.

use std::time::Duration;

use bakeoff_artifact::{AdapterRoute, AdapterRouteKind, EngineKind, LoraListing};
use bakeoff_wire::ChatRequest;
use serde_json::{Map, Value};

use crate::dialect::{self, AdapterServing, llamacpp};
use crate::{Client, Method};

/// Why the adapter (or its base) could not be found on the endpoint. Each message names what
/// the endpoint does serve and how to name it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AdapterError {
    #[error("cannot read GET {path} from the endpoint: {message}")]
    Listing { path: String, message: String },
    #[error(
        "adapter {adapter:?} is not served here: /v1/models lists {listed}; name one of them with \
         --adapter (vLLM serves `--lora-modules NAME=PATH` as the id NAME)"
    )]
    NotListed { adapter: String, listed: String },
    #[error("--base {base:?} is not served here: /v1/models lists {listed}")]
    BaseNotListed { base: String, listed: String },
    #[error(
        "--base and --adapter both name {0:?}: the check compares the adapter's id with its \
         base's; give the base model's id to --base"
    )]
    SameId(String),
    #[error(
        "llama-server has no LoRA adapter loaded (GET /lora-adapters lists none): start it with \
         --lora FILE (or --lora-scaled FILE:SCALE)"
    )]
    NoLoraLoaded,
    #[error(
        "adapter {adapter:?} is not loaded: GET /lora-adapters lists {listed}; name one by its \
         id, its path or its file name"
    )]
    LoraNotListed { adapter: String, listed: String },
    #[error("adapter {adapter:?} could name {listed}: name one by its id")]
    LoraAmbiguous { adapter: String, listed: String },
}

/// A model `/v1/models` lists, with the fields vLLM gives an adapter
/// (vllm/entrypoints/openai/serving_models.py `show_available_models`: an adapter's card has
/// `root` = its path and `parent` = its base's id; a base's `parent` is null).
#[derive(Debug, Clone, PartialEq)]
struct Listed {
    id: String,
    parent: Option<String>,
    root: Option<String>,
}

fn parse_listed(body: &Value) -> Vec<Listed> {
    let s = |m: &Value, k: &str| m.get(k).and_then(Value::as_str).map(str::to_string);
    body.get("data")
        .and_then(Value::as_array)
        .map(|arr| {
            arr.iter()
                .filter_map(|m| {
                    Some(Listed {
                        id: s(m, "id")?,
                        parent: s(m, "parent"),
                        root: s(m, "root"),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Find the adapter (and its base) on the endpoint, as `engine` serves adapters. `base` is
/// `--base` (default: the adapter's `parent` where listed, else the first other id listed).
pub async fn resolve(
    client: &Client,
    engine: EngineKind,
    base: Option<&str>,
    adapter: &str,
    limit: Duration,
) -> Result<AdapterRoute, AdapterError> {
    let models = get_json(client, client.url().v1_path("models"), "/v1/models", limit).await?;
    let listed = parse_listed(&models);
    match dialect::adapter_serving(engine) {
        AdapterServing::OwnModelId => own_model_id(&listed, base, adapter),
        AdapterServing::PerRequestLora => {
            let url = client.url().root_path(llamacpp::LORA_ADAPTERS_PATH);
            let path = format!("/{}", llamacpp::LORA_ADAPTERS_PATH);
            let body = get_json(client, url, &path, limit).await?;
            let adapters = llamacpp::parse_lora_adapters(&body).ok_or(AdapterError::Listing {
                path,
                message: "the reply is not a list of {id, path, scale}".into(),
            })?;
            per_request_lora(&listed, &adapters, base, adapter)
        }
    }
}

/// The request as the route's `side` asks: its `model`, and the fields that select the side.
pub fn select(route: &AdapterRoute, side: Side, req: &mut ChatRequest) {
    let (model, fields) = match side {
        Side::Base => (&route.base_model, &route.base_fields),
        Side::Adapter => (&route.adapter_model, &route.adapter_fields),
    };
    req.model.clone_from(model);
    for (k, v) in fields {
        req.extra.insert(k.clone(), v.clone());
    }
}

/// Which model a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Base,
    Adapter,
}

async fn get_json(
    client: &Client,
    url: url::Url,
    path: &str,
    limit: Duration,
) -> Result<Value, AdapterError> {
    let failed = |message: String| AdapterError::Listing {
        path: path.to_string(),
        message,
    };
    match client.control(Method::Get, url, None, limit).await {
        Ok((status, Some(v))) if (200..300).contains(&status) => Ok(v),
        Ok((status, _)) => Err(failed(format!("HTTP {status}"))),
        Err(e) => Err(failed(e.to_string())),
    }
}

fn id_list(listed: &[Listed]) -> String {
    if listed.is_empty() {
        return "nothing".into();
    }
    listed
        .iter()
        .map(|m| format!("{:?}", m.id))
        .collect::<Vec<_>>()
        .join(", ")
}

fn own_model_id(
    listed: &[Listed],
    base: Option<&str>,
    adapter: &str,
) -> Result<AdapterRoute, AdapterError> {
    let Some(card) = listed.iter().find(|m| m.id == adapter) else {
        return Err(AdapterError::NotListed {
            adapter: adapter.to_string(),
            listed: id_list(listed),
        });
    };
    let base_model = match base {
        Some(b) if !listed.iter().any(|m| m.id == b) => {
            return Err(AdapterError::BaseNotListed {
                base: b.to_string(),
                listed: id_list(listed),
            });
        }
        Some(b) => b.to_string(),
        None => card
            .parent
            .clone()
            .or_else(|| {
                listed
                    .iter()
                    .find(|m| m.id != adapter)
                    .map(|m| m.id.clone())
            })
            .ok_or_else(|| AdapterError::SameId(adapter.to_string()))?,
    };
    if base_model == adapter {
        return Err(AdapterError::SameId(adapter.to_string()));
    }
    Ok(AdapterRoute {
        kind: AdapterRouteKind::ModelId,
        adapter: adapter.to_string(),
        base_model,
        adapter_model: adapter.to_string(),
        parent: card.parent.clone(),
        root: card.root.clone(),
        lora: None,
        base_fields: Map::new(),
        adapter_fields: Map::new(),
    })
}

fn per_request_lora(
    listed: &[Listed],
    adapters: &[llamacpp::LoraAdapter],
    base: Option<&str>,
    adapter: &str,
) -> Result<AdapterRoute, AdapterError> {
    if adapters.is_empty() {
        return Err(AdapterError::NoLoraLoaded);
    }
    let names = || {
        adapters
            .iter()
            .map(|a| format!("{} ({:?}, scale {})", a.id, a.path, a.scale))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let found = llamacpp::find_lora(adapters, adapter);
    let lora = match found.as_slice() {
        [one] => *one,
        [] => {
            return Err(AdapterError::LoraNotListed {
                adapter: adapter.to_string(),
                listed: names(),
            });
        }
        many => {
            return Err(AdapterError::LoraAmbiguous {
                adapter: adapter.to_string(),
                listed: many
                    .iter()
                    .map(|a| format!("{} ({:?})", a.id, a.path))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    };
    // llama-server serves one model and ignores `model`: the listed id keeps the requests
    // honest about what they ask for.
    let model = base
        .map(str::to_string)
        .or_else(|| listed.first().map(|m| m.id.clone()))
        .unwrap_or_else(|| "default".into());
    let field = |scale: f64| {
        let mut m = Map::new();
        m.insert("lora".into(), llamacpp::lora_field(lora.id, scale));
        m
    };
    Ok(AdapterRoute {
        kind: AdapterRouteKind::LlamacppLora,
        adapter: adapter.to_string(),
        base_model: model.clone(),
        adapter_model: model,
        parent: None,
        root: None,
        lora: Some(LoraListing {
            id: lora.id,
            path: lora.path.clone(),
            scale: lora.scale,
        }),
        // Every adapter off, this one included: the base model alone.
        base_fields: field(0.0),
        // This adapter at the scale the server serves it, every other one off.
        adapter_fields: field(lora.scale),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `/v1/models` of vLLM with `--enable-lora --lora-modules sql=/loras/sql` (the shape of
    /// serving_models.py `show_available_models`).
    fn vllm_models() -> Vec<Listed> {
        parse_listed(&json!({"object": "list", "data": [
            {"id": "Qwen/Qwen3-8B", "object": "model", "root": "Qwen/Qwen3-8B", "parent": null, "max_model_len": 32768},
            {"id": "sql", "object": "model", "root": "/loras/sql", "parent": "Qwen/Qwen3-8B", "max_model_len": null}
        ]}))
    }

    #[test]
    fn vllm_adapter_is_its_own_model_id_with_parent_as_base() {
        let r = own_model_id(&vllm_models(), None, "sql").unwrap();
        assert_eq!(r.kind, AdapterRouteKind::ModelId);
        assert_eq!(r.base_model, "Qwen/Qwen3-8B");
        assert_eq!(r.adapter_model, "sql");
        assert_eq!(r.root.as_deref(), Some("/loras/sql"));
        assert!(r.base_fields.is_empty() && r.adapter_fields.is_empty());
        let mut req = ChatRequest::new("x", vec![], 4, false);
        select(&r, Side::Adapter, &mut req);
        assert_eq!(req.model, "sql");
        select(&r, Side::Base, &mut req);
        assert_eq!(req.model, "Qwen/Qwen3-8B");
    }

    #[test]
    fn unknown_ids_are_refused_with_what_is_served() {
        let e = own_model_id(&vllm_models(), None, "chat").unwrap_err();
        assert!(e.to_string().contains("\"sql\""), "{e}");
        let e = own_model_id(&vllm_models(), Some("nope"), "sql").unwrap_err();
        assert!(matches!(e, AdapterError::BaseNotListed { .. }), "{e}");
        let e = own_model_id(&vllm_models(), Some("sql"), "sql").unwrap_err();
        assert_eq!(e, AdapterError::SameId("sql".into()));
    }

    #[test]
    fn llamacpp_adapter_is_a_lora_field_at_its_served_scale() {
        let listed = parse_listed(&json!({"data": [{"id": "gemma"}]}));
        let adapters = vec![
            llamacpp::LoraAdapter {
                id: 0,
                path: "/m/a.gguf".into(),
                scale: 0.0,
            },
            llamacpp::LoraAdapter {
                id: 1,
                path: "/m/b.gguf".into(),
                scale: 1.0,
            },
        ];
        let r = per_request_lora(&listed, &adapters, None, "b.gguf").unwrap();
        assert_eq!(r.kind, AdapterRouteKind::LlamacppLora);
        assert_eq!(r.base_model, "gemma");
        assert_eq!(r.base_fields["lora"], json!([{"id": 1, "scale": 0.0}]));
        assert_eq!(r.adapter_fields["lora"], json!([{"id": 1, "scale": 1.0}]));
        let mut req = ChatRequest::new("x", vec![], 4, false);
        select(&r, Side::Adapter, &mut req);
        assert_eq!(req.extra["lora"], json!([{"id": 1, "scale": 1.0}]));
        assert!(matches!(
            per_request_lora(&listed, &adapters, None, "c").unwrap_err(),
            AdapterError::LoraNotListed { .. }
        ));
        assert_eq!(
            per_request_lora(&listed, &[], None, "0").unwrap_err(),
            AdapterError::NoLoraLoaded
        );
    }
}
