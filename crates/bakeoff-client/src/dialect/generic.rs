//! Any other OpenAI-compatible server (a LiteLLM gateway, a hosted API): only `/v1/models` and
//! `/v1/chat/completions` are assumed. `max_model_len` is read from `/v1/models` when present.
