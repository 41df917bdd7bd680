//! How each engine is asked for a greedy reply with its distribution at every position, and for
//! its next-token distribution along another reply (teacher forcing). The routes, and why each
//! was chosen, are in docs/suites.md ("Damage along the reply"):
//!
//! - **vLLM**: the chat is rendered to token ids by `POST /tokenize` with `messages` (the
//!   template the chat route applies); the greedy reply is `POST /v1/completions` on those ids
//!   with `logprobs: K` and `return_tokens_as_token_ids`; the distributions along a path are
//!   one `POST /v1/completions` on prompt + path with `prompt_logprobs: K` and `max_tokens: 1`
//!   (vLLM 0.32 `CompletionRequest.prompt_logprobs`, `choices[0].prompt_logprobs`: one map per
//!   prompt token, id → logprob, rank, decoded token). Both sides of a comparison are read this
//!   way, so a prefill's arithmetic is compared with a prefill's.
//! - **llama.cpp** (b11434 has no prompt logprobs: its `/v1/completions` refuses `echo`): the
//!   chat is rendered by `POST /apply-template` and `POST /tokenize`; the greedy reply is
//!   `POST /completion` on the ids with `n_probs: K` and `post_sampling_probs: false` (the
//!   model's own softmax, before any sampler); along another reply, the positions where the
//!   endpoint's own greedy reply still agrees are its own distributions (same prefix, same
//!   arithmetic), and each later position is one `POST /completion` of prompt + path[..i] with
//!   `n_predict: 1` and `cache_prompt: true`, so the server evaluates one new token over its
//!   cached prefix, as it does when it decodes.
//! - **SGLang and gateways**: no route here (SGLang's `/generate` with `return_logprob` and
//!   `logprob_start_len` would be one, but no SGLang runs in this project's tests to check it
//!   against): greedy agreement is read from chat completions, and the artifact says why the
//!   teacher-forced figures are absent.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bakeoff_artifact::EngineKind;
use bakeoff_client::{Client, Method, RequestError, dialect};
use bakeoff_wire::{ChatRequest, Message};
use serde_json::{Value, json};

use crate::damage::first_token::{TokenProb, TopK, e_line};

/// One position of a greedy reply: the token chosen and the distribution it was chosen from.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The token's identity: its id (`#123`) where the route gives ids, else its bytes.
    pub key: Vec<u8>,
    /// The token as text (untrusted model output).
    pub text: String,
    /// The top-K at this position (empty where the route gave none).
    pub top: TopK,
    /// The token id, where the route gives ids.
    pub id: Option<u32>,
}

/// A greedy reply: its positions, and its text as the server decoded it.
#[derive(Debug, Clone, PartialEq)]
pub struct Greedy {
    pub steps: Vec<Step>,
    pub text: String,
}

/// Which way an endpoint is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Vllm,
    LlamaCpp,
    /// Greedy replies from chat completions only; no teacher forcing.
    ChatOnly,
}

impl Route {
    pub fn of(engine: EngineKind) -> Route {
        match engine {
            EngineKind::Vllm => Route::Vllm,
            EngineKind::LlamaCpp => Route::LlamaCpp,
            EngineKind::Sglang | EngineKind::Generic => Route::ChatOnly,
        }
    }

    /// The route in words, for the artifact.
    pub fn describe(self) -> &'static str {
        match self {
            Route::Vllm => {
                "vLLM: /tokenize (messages) → /v1/completions greedy with logprobs; along a path, /v1/completions with prompt_logprobs"
            }
            Route::LlamaCpp => {
                "llama.cpp: /apply-template + /tokenize → /completion greedy with n_probs (post_sampling_probs false); along a path, the endpoint's own distributions up to where its reply parts, then /completion of prompt + path[..i] with n_predict 1 over the cached prefix"
            }
            Route::ChatOnly => "chat completions with logprobs (greedy agreement only)",
        }
    }

    /// Whether a position past a parting is read another way than a reply's own distributions
    /// (llama.cpp: one token over a cached prefix, where the reply came from its decode), so
    /// the route check has something to measure.
    pub fn forcing_differs_from_decode(self) -> bool {
        self == Route::LlamaCpp
    }

    /// Why this route has no teacher forcing, when it has none.
    pub fn no_forcing(self, engine: EngineKind) -> Option<String> {
        match self {
            Route::ChatOnly => Some(format!(
                "{engine} has no route here for the next-token distribution along another reply (vLLM's prompt_logprobs, llama.cpp's token-id prompts are the ones bakeoff uses): greedy agreement and first-token KL only"
            )),
            _ => None,
        }
    }
}

/// Why a route call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RouteError {
    #[error(transparent)]
    Request(#[from] RequestError),
    #[error("{what} returned HTTP {status}: {body}")]
    Status {
        what: &'static str,
        status: u16,
        body: String,
    },
    #[error("{what} answered in an unexpected shape: {detail}")]
    Shape { what: &'static str, detail: String },
}

/// Everything a call needs: the endpoint, its engine's route, the model, K, the time limit.
pub struct Asker<'a> {
    pub client: &'a Client,
    pub route: Route,
    pub engine: EngineKind,
    pub model: &'a str,
    pub top_k: u32,
    pub limit: Duration,
    /// Requests sent so far (the artifact's per-phase timing).
    pub sent: AtomicU64,
}

impl Asker<'_> {
    /// Requests sent so far.
    pub fn requests(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    async fn post(
        &self,
        what: &'static str,
        path: &str,
        body: &Value,
    ) -> Result<Value, RouteError> {
        self.sent.fetch_add(1, Ordering::Relaxed);
        let url = match path.strip_prefix("v1/") {
            Some(rest) => self.client.url().v1_path(rest),
            None => self.client.url().root_path(path),
        };
        let (status, v) = self
            .client
            .control(Method::Post, url, Some(body), self.limit)
            .await?;
        match v {
            Some(v) if (200..300).contains(&status) => Ok(v),
            other => Err(RouteError::Status {
                what,
                status,
                body: e_line(&other.map(|v| v.to_string()).unwrap_or_default()),
            }),
        }
    }

    /// The chat rendered to the token ids the engine would generate from; `None` on a route
    /// without ids.
    pub async fn render(&self, messages: &[Message]) -> Result<Option<Vec<u32>>, RouteError> {
        let ids = match self.route {
            Route::ChatOnly => return Ok(None),
            Route::Vllm => {
                let v = self
                    .post(
                        "vLLM /tokenize",
                        "tokenize",
                        &json!({"model": self.model, "messages": messages, "add_generation_prompt": true}),
                    )
                    .await?;
                dialect::parse_tokens(&v)
            }
            Route::LlamaCpp => {
                let v = self
                    .post(
                        "llama.cpp /apply-template",
                        "apply-template",
                        &json!({"messages": messages}),
                    )
                    .await?;
                let prompt = v
                    .get("prompt")
                    .and_then(Value::as_str)
                    .ok_or(RouteError::Shape {
                        what: "llama.cpp /apply-template",
                        detail: "no prompt".into(),
                    })?;
                let t = self
                    .post(
                        "llama.cpp /tokenize",
                        "tokenize",
                        &json!({"content": prompt, "add_special": true, "parse_special": true}),
                    )
                    .await?;
                dialect::parse_tokens(&t)
            }
        };
        ids.map(Some).ok_or(RouteError::Shape {
            what: "tokenize",
            detail: "no token ids".into(),
        })
    }

    /// A greedy reply of at most `tokens` tokens, with the top-K at every position. `prompt`
    /// is the rendered chat (id routes) and `messages` the chat itself (the chat route).
    pub async fn greedy(
        &self,
        prompt: Option<&[u32]>,
        messages: &[Message],
        tokens: u32,
        salt: &str,
    ) -> Result<Greedy, RouteError> {
        match (self.route, prompt) {
            (Route::Vllm, Some(ids)) => {
                let mut body = json!({
                    "model": self.model, "prompt": ids, "max_tokens": tokens, "temperature": 0.0,
                    "logprobs": self.top_k, "return_tokens_as_token_ids": true, "stream": false,
                });
                merge(
                    &mut body,
                    dialect::no_prompt_cache_extras(self.engine, salt),
                );
                let v = self
                    .post("vLLM /v1/completions", "v1/completions", &body)
                    .await?;
                Ok(Greedy {
                    steps: vllm_steps(&v)?,
                    text: v["choices"][0]["text"].as_str().unwrap_or("").to_string(),
                })
            }
            (Route::LlamaCpp, Some(ids)) => {
                let body = json!({
                    "prompt": ids, "n_predict": tokens, "temperature": 0.0, "n_probs": self.top_k,
                    "post_sampling_probs": false, "cache_prompt": false, "stream": false,
                });
                let v = self
                    .post("llama.cpp /completion", "completion", &body)
                    .await?;
                Ok(Greedy {
                    steps: llamacpp_steps(&v)?,
                    text: v["content"].as_str().unwrap_or("").to_string(),
                })
            }
            _ => {
                let mut req = ChatRequest::new(self.model, messages.to_vec(), tokens, false);
                req.logprobs = Some(true);
                req.top_logprobs = Some(self.top_k);
                req.extra = dialect::no_prompt_cache_extras(self.engine, salt);
                self.sent.fetch_add(1, Ordering::Relaxed);
                let ex = self.client.chat(&req).await;
                if let Some(e) = ex.error {
                    return Err(RouteError::Request(e));
                }
                let steps = ex
                    .reply
                    .logprobs
                    .iter()
                    .map(|t| {
                        let token = TokenProb {
                            token: t.token.clone(),
                            logprob: t.logprob,
                            bytes: t.bytes.clone(),
                        };
                        Step {
                            key: token.key(),
                            text: t.token.clone(),
                            top: TopK {
                                tokens: t
                                    .top_logprobs
                                    .iter()
                                    .map(|x| TokenProb {
                                        token: x.token.clone(),
                                        logprob: x.logprob,
                                        bytes: x.bytes.clone(),
                                    })
                                    .collect(),
                            },
                            id: None,
                        }
                    })
                    .collect();
                Ok(Greedy {
                    steps,
                    text: ex.reply.content.clone(),
                })
            }
        }
    }

    /// The endpoint's next-token distribution at every position of `path` after `prompt`.
    /// `own` is the endpoint's own greedy reply to the same prompt: where it still agrees with
    /// `path`, its distributions are the answer already (llama.cpp).
    pub async fn along(
        &self,
        prompt: &[u32],
        path: &[u32],
        own: &[Step],
        salt: &str,
    ) -> Result<Vec<TopK>, RouteError> {
        match self.route {
            Route::Vllm => {
                let mut full = prompt.to_vec();
                full.extend_from_slice(path);
                let mut body = json!({
                    "model": self.model, "prompt": full, "max_tokens": 1, "temperature": 0.0,
                    "prompt_logprobs": self.top_k, "stream": false,
                });
                merge(
                    &mut body,
                    dialect::no_prompt_cache_extras(self.engine, salt),
                );
                let v = self
                    .post("vLLM /v1/completions", "v1/completions", &body)
                    .await?;
                vllm_prompt_logprobs(&v, prompt.len(), path.len())
            }
            Route::LlamaCpp => {
                let agree = own
                    .iter()
                    .zip(path)
                    .take_while(|(s, p)| s.id == Some(**p))
                    .count();
                let mut out: Vec<TopK> = own[..agree].iter().map(|s| s.top.clone()).collect();
                // One position at a time, in order: each request finds all but its last token
                // in the slot's cache. Spreading the positions over the slots was measured
                // slower on llama.cpp (docs/performance.md, "Damage along the reply").
                for i in agree..path.len() {
                    out.push(self.forced_llamacpp(prompt, &path[..i]).await?);
                }
                Ok(out)
            }
            Route::ChatOnly => Err(RouteError::Shape {
                what: "chat completions",
                detail: "no teacher-forcing route".into(),
            }),
        }
    }

    /// llama.cpp's next-token distribution after `prompt` + `path`: one token over the cached
    /// prefix.
    async fn forced_llamacpp(&self, prompt: &[u32], path: &[u32]) -> Result<TopK, RouteError> {
        let mut ids = prompt.to_vec();
        ids.extend_from_slice(path);
        let body = json!({
            "prompt": ids, "n_predict": 1, "temperature": 0.0, "n_probs": self.top_k,
            "post_sampling_probs": false, "cache_prompt": true, "stream": false,
        });
        let v = self
            .post("llama.cpp /completion", "completion", &body)
            .await?;
        let first = llamacpp_steps(&v)?
            .into_iter()
            .next()
            .ok_or(RouteError::Shape {
                what: "llama.cpp /completion",
                detail: "no token generated".into(),
            })?;
        Ok(first.top)
    }
}

fn merge(body: &mut Value, extra: serde_json::Map<String, Value>) {
    if let Some(o) = body.as_object_mut() {
        o.extend(extra);
    }
}

fn id_key(id: u32) -> Vec<u8> {
    format!("#{id}").into_bytes()
}

fn shape(what: &'static str, detail: impl Into<String>) -> RouteError {
    RouteError::Shape {
        what,
        detail: detail.into(),
    }
}

/// `token_id:123` (vLLM's `return_tokens_as_token_ids` form) → 123.
fn vllm_token_id(s: &str) -> Option<u32> {
    s.strip_prefix("token_id:")?.parse().ok()
}

/// The greedy reply of a vLLM `/v1/completions` answer with `logprobs` and token ids.
fn vllm_steps(v: &Value) -> Result<Vec<Step>, RouteError> {
    const W: &str = "vLLM /v1/completions";
    let lp = &v["choices"][0]["logprobs"];
    let tokens = lp["tokens"]
        .as_array()
        .ok_or_else(|| shape(W, "no logprobs.tokens"))?;
    let tops = lp["top_logprobs"]
        .as_array()
        .ok_or_else(|| shape(W, "no logprobs.top_logprobs"))?;
    tokens
        .iter()
        .zip(tops)
        .map(|(t, top)| {
            let t = t.as_str().unwrap_or("");
            let id = vllm_token_id(t)
                .ok_or_else(|| shape(W, format!("token {t:?} is not token_id:N")))?;
            let listed = top
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, lp)| {
                            Some(TokenProb {
                                token: k.clone(),
                                logprob: lp.as_f64()?,
                                bytes: Some(id_key(vllm_token_id(k)?)),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            Ok(Step {
                key: id_key(id),
                text: t.to_string(),
                top: TopK { tokens: listed },
                id: Some(id),
            })
        })
        .collect()
}

/// The distributions at the last `path_len` prompt positions of a vLLM answer with
/// `prompt_logprobs`: entry `j` is the distribution of prompt token `j` given those before it.
fn vllm_prompt_logprobs(
    v: &Value,
    prompt_len: usize,
    path_len: usize,
) -> Result<Vec<TopK>, RouteError> {
    const W: &str = "vLLM /v1/completions prompt_logprobs";
    let all = v["choices"][0]["prompt_logprobs"]
        .as_array()
        .ok_or_else(|| {
            shape(
                W,
                "no choices[0].prompt_logprobs (the server ignores prompt_logprobs)",
            )
        })?;
    if all.len() < prompt_len + path_len {
        return Err(shape(
            W,
            format!(
                "{} positions for a prompt of {}",
                all.len(),
                prompt_len + path_len
            ),
        ));
    }
    all[prompt_len..prompt_len + path_len]
        .iter()
        .map(|pos| {
            let m = pos
                .as_object()
                .ok_or_else(|| shape(W, "a position without a map"))?;
            // The map holds the top-K and the prompt's own token (K or K + 1 entries): keep the
            // K best by rank, as a top-K list from a generation would be.
            let mut listed: Vec<(u64, TokenProb)> = m
                .iter()
                .filter_map(|(k, e)| {
                    let id: u32 = k.parse().ok()?;
                    Some((
                        e["rank"].as_u64().unwrap_or(u64::MAX),
                        TokenProb {
                            token: e["decoded_token"].as_str().unwrap_or("").to_string(),
                            logprob: e["logprob"].as_f64()?,
                            bytes: Some(id_key(id)),
                        },
                    ))
                })
                .collect();
            listed.sort_by_key(|(r, _)| *r);
            Ok(TopK {
                tokens: listed.into_iter().map(|(_, t)| t).collect(),
            })
        })
        .collect()
}

/// The reply of a llama.cpp `/completion` answer with `n_probs`: `completion_probabilities`,
/// one entry per generated token, `{id, token, bytes, logprob, top_logprobs: [{id, token,
/// bytes, logprob}]}` (tools/server/server-task.cpp, b11434).
fn llamacpp_steps(v: &Value) -> Result<Vec<Step>, RouteError> {
    const W: &str = "llama.cpp /completion";
    let probs = v["completion_probabilities"]
        .as_array()
        .ok_or_else(|| shape(W, "no completion_probabilities (n_probs ignored)"))?;
    probs
        .iter()
        .map(|p| {
            let id = p["id"]
                .as_u64()
                .and_then(|x| u32::try_from(x).ok())
                .ok_or_else(|| shape(W, "a token without an id"))?;
            let listed = p["top_logprobs"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|t| {
                            let id = u32::try_from(t["id"].as_u64()?).ok()?;
                            Some(TokenProb {
                                token: t["token"].as_str().unwrap_or("").to_string(),
                                logprob: t["logprob"].as_f64()?,
                                bytes: Some(id_key(id)),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            Ok(Step {
                key: id_key(id),
                text: p["token"].as_str().unwrap_or("").to_string(),
                top: TopK { tokens: listed },
                id: Some(id),
            })
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn vllm_answers_are_read_by_token_id() {
        let v = json!({"choices": [{"logprobs": {
            "tokens": ["token_id:5", "token_id:9"],
            "top_logprobs": [{"token_id:5": -0.1, "token_id:7": -2.5}, {"token_id:9": -0.3}]
        }, "prompt_logprobs": [null, {"3": {"logprob": -1.0, "rank": 1, "decoded_token": "a"}},
            {"5": {"logprob": -0.1, "rank": 1, "decoded_token": "b"}, "7": {"logprob": -2.5, "rank": 2, "decoded_token": "c"}},
            {"9": {"logprob": -0.3, "rank": 1, "decoded_token": "d"}, "4": {"logprob": -9.0, "rank": 30, "decoded_token": "e"}}]}]});
        let s = vllm_steps(&v).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].id, s[0].key.as_slice()), (Some(5), b"#5".as_slice()));
        assert_eq!(s[0].top.tokens.len(), 2);
        let along = vllm_prompt_logprobs(&v, 2, 2).unwrap();
        assert_eq!(along.len(), 2);
        assert_eq!(along[0].top1().unwrap().key(), b"#5");
        // Ranked: the prompt's own token outside the top-K comes last.
        assert_eq!(along[1].tokens[1].key(), b"#4");
        assert!(vllm_prompt_logprobs(&v, 3, 2).is_err());
    }

    #[test]
    fn llamacpp_answers_are_read_by_token_id() {
        let v = json!({"completion_probabilities": [
            {"id": 12, "token": "Hi", "bytes": [72, 105], "logprob": -0.2,
             "top_logprobs": [{"id": 12, "token": "Hi", "bytes": [72, 105], "logprob": -0.2},
                              {"id": 40, "token": "Hey", "bytes": [72, 101, 121], "logprob": -1.9}]}]});
        let s = llamacpp_steps(&v).unwrap();
        assert_eq!(s[0].id, Some(12));
        assert_eq!(s[0].top.top1().unwrap().key(), b"#12");
        assert!(llamacpp_steps(&json!({"content": "x"})).is_err());
    }
}
