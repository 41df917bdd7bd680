//! What the watchdog's readiness probes saw, and what it means for a seat that never became
//! ready. A silent log is a wedge only when the seat's port answered: a probe that was only
//! ever refused says nothing listens there (`not-listening`), a log line naming another port
//! says the engine serves elsewhere (`wrong-port`), and a server listing other model ids says
//! the seat's `served_model_names` are wrong (`model-name-mismatch`). The class follows from
//! the observation, and the observation is kept as evidence ([`SeatReadiness`]).

use std::sync::OnceLock;

use bakeoff_artifact::{FailureClass, SeatReadiness};
use bakeoff_client::preflight::{PreflightOutcome, http_statuses};

use crate::classify::remediation;
use regex::Regex;

/// The port a log line says the server listens on, for the API servers whose lines are known:
/// - llama.cpp `main: server is listening on http://127.0.0.1:8080 - starting the main loop`
///   (tools/server/server.cpp), older builds' JSON `"msg":"HTTP server listening", …,
///   "port":"8080"`;
/// - uvicorn (vLLM, SGLang, LiteLLM) `Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to
///   quit)`, SGLang's multi-worker `Uvicorn running on 0.0.0.0:30000 with N SO_REUSEPORT
///   workers`; vLLM 0.19 `Starting vLLM server on http://0.0.0.0:8000` (earlier `Starting vLLM
///   API server [N ]on …`; recent vLLM hands uvicorn a bound socket, so no uvicorn line);
/// - Ollama `Listening on 127.0.0.1:11434 (version …)`; llama-swap and Go servers
///   `listening on :8080`.
///
/// Internal sockets (NCCL, torch's c10d store) never match: their lines say `bind` or
/// `listen on [::]:29500` in other words, and NCCL/c10d lines are excluded outright.
pub fn listen_port(line: &str) -> Option<u16> {
    static RES: OnceLock<Vec<Regex>> = OnceLock::new();
    let res = RES.get_or_init(|| {
        [
            r"(?i)\b(?:listening on|listening at|running on|serving on|server(?: \d+)? on)\s+(?:https?://)?(?:\[[0-9a-f:.]*\]|[a-z0-9_.-]*)?:(\d{1,5})\b",
            r#"(?i)server listening.{0,200}?"port"\s*:\s*"?(\d{1,5})\b"#,
        ]
        .iter()
        .filter_map(|p| Regex::new(p).ok())
        .collect()
    });
    if line.contains("NCCL") || line.contains("c10d") || line.contains("TCPStore") {
        return None;
    }
    res.iter()
        .find_map(|re| re.captures(line))
        .and_then(|c| c.get(1))
        .and_then(|m| m.as_str().parse::<u16>().ok())
        .filter(|p| *p != 0)
}

/// The running tally of a watch's readiness probes.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub record: SeatReadiness,
    /// A probe was refused after the log named a listening port: the seat's own port is dead
    /// while the engine says it serves.
    refused_after_listen: bool,
    /// The server listed ids, none of them the requested one.
    mismatch: bool,
    /// A completion answered 401/403: the engine requires a key the probes did not have (or
    /// refused the one they sent). No wait fixes that.
    refused_key: bool,
    /// A probe's TLS handshake failed (rustls' words): the seat answers, but not with a TLS
    /// bakeoff accepts (an untrusted certificate, or plain HTTP where `https://` was asked).
    /// No wait fixes that either.
    tls_refused: Option<String>,
    /// The seat's `api_key_env` and whether the probes carried its key, for the remedy.
    key_env: Option<String>,
    key_sent: bool,
}

impl Tally {
    pub fn new(requested_model: Option<String>, expected_listen_port: Option<u16>) -> Self {
        Self {
            record: SeatReadiness {
                requested_model,
                expected_listen_port,
                ..SeatReadiness::default()
            },
            ..Self::default()
        }
    }

    /// A log line: remember the first one that names a listening port.
    pub fn observe_line(&mut self, line: &str) {
        if self.record.log_listen_port.is_none()
            && let Some(p) = listen_port(line)
        {
            self.record.log_listen_port = Some(p);
            self.record.log_listen_line = Some(line.trim().chars().take(300).collect());
        }
    }

    /// One finished readiness probe.
    pub fn observe_probe(&mut self, out: &PreflightOutcome) {
        let r = &mut self.record;
        r.attempts += 1;
        let facts = &out.discovered.facts;
        let kinds: Vec<&str> = out
            .report
            .ready
            .errors
            .iter()
            .map(|e| e.kind.as_str())
            .collect();
        let statuses = http_statuses(&out.discovered, &out.report.ready);
        for s in &statuses {
            *r.http_statuses.entry(*s).or_default() += 1;
        }
        let answered = !statuses.is_empty();
        if let Some(bakeoff_client::RequestError::Tls { message, .. }) = &out.discovered.unreachable
        {
            self.tls_refused = Some(message.clone());
        }
        if out.discovered.unreachable.is_some() && !answered {
            r.refused += 1;
            if r.log_listen_port.is_some() {
                self.refused_after_listen = true;
            }
        } else if !kinds.is_empty() && kinds.iter().all(|k| k.starts_with("timeout")) {
            r.timed_out += 1;
        }
        if !facts.models.is_empty() {
            r.served_model_ids = facts.models.iter().map(|m| m.id.clone()).collect();
        }
        if let Some(u) = &out.unfit {
            r.last_error = Some(u.message.clone());
            self.mismatch = u.class == FailureClass::ModelNotServed;
            self.refused_key = u.class == FailureClass::AuthFailed;
        }
    }

    /// What the probes send: the seat's `api_key_env` and whether its key was set.
    pub fn set_key(&mut self, env: Option<String>, sent: bool) {
        self.key_env = env;
        self.key_sent = sent;
    }

    /// The engine refused the probes' credentials (HTTP 401/403).
    pub fn refused_key(&self) -> bool {
        self.refused_key
    }

    /// The seat answered, but its TLS handshake failed.
    pub fn tls_refused(&self) -> bool {
        self.tls_refused.is_some()
    }

    /// The seat serves, but under other ids: no wait will fix that.
    pub fn model_mismatch(&self) -> bool {
        self.mismatch
    }

    /// The engine's log names a port other than the one probed, and the probed port refused
    /// after that line: no wait will fix that either.
    pub fn serves_elsewhere(&self) -> bool {
        self.refused_after_listen && self.wrong_port().is_some()
    }

    fn wrong_port(&self) -> Option<(u16, u16)> {
        match (
            self.record.log_listen_port,
            self.record.expected_listen_port,
        ) {
            (Some(log), Some(expected)) if log != expected => Some((log, expected)),
            _ => None,
        }
    }

    /// What a watch that ended without a ready seat (silence or the ready timeout) observed:
    /// a class other than the timer's when the probes say so, with its message and remedy.
    pub fn refine(&self) -> Option<(FailureClass, String, String)> {
        let r = &self.record;
        if self.refused_key {
            let remedy = match (&self.key_env, self.key_sent) {
                (Some(env), true) => format!(
                    "the engine refused the key in {env} (the seat's api_key_env): export the key \
                     the engine was started with"
                ),
                (Some(env), false) => format!(
                    "the seat's api_key_env names {env}, which is not set in bakeoff's environment: \
                     export it with the key the engine was started with"
                ),
                (None, _) => "the engine requires an API key (`--api-key` of llama.cpp, vLLM or \
                     SGLang): name the variable that holds it with `api_key_env = \"NAME\"` on the seat and \
                     export it; bakeoff's probes send it in the header only"
                    .to_string(),
            };
            return Some((
                FailureClass::AuthFailed,
                "the seat is up, but its completions answered 401/403: the readiness probes' \
                 credentials were refused"
                    .into(),
                remedy,
            ));
        }
        if let Some(m) = &self.tls_refused {
            let remedy = if bakeoff_client::tls::is_certificate_problem(m) {
                "trust the seat's certificate: [seat.tls] ca_cert = \"CA.pem\" (the CA that \
                 signed it, relative to the fleet file), or insecure = true to skip verification \
                 (recorded in the seat's record); docs/fleet.md \"Seats behind TLS\""
            } else {
                "the seat does not answer with TLS on its port: it was probed over https:// \
                 because it has [seat.tls] or the engine's --ssl-certfile/--ssl-cert-file; give the \
                 engine its certificate and key (a llama-server needs a build with LLAMA_OPENSSL), or \
                 drop [seat.tls]"
            };
            return Some((
                FailureClass::Unreachable,
                format!("the seat answers, but its TLS handshake failed: {m}"),
                remedy.to_string(),
            ));
        }
        if self.mismatch {
            let asked = r.requested_model.as_deref().unwrap_or("(none)");
            let served = r.served_model_ids.join(", ");
            return Some((
                FailureClass::ModelNameMismatch,
                format!("the server is up but serves {served}, not {asked:?}"),
                format!(
                    "{} (it serves {served}; the seat asks for {asked:?})",
                    remediation(FailureClass::ModelNameMismatch)
                ),
            ));
        }
        if let Some((log, expected)) = self.wrong_port() {
            let line = r.log_listen_line.as_deref().unwrap_or("");
            return Some((
                FailureClass::WrongPort,
                format!(
                    "the engine says it listens on port {log} ({line}), but the seat is probed on \
                     port {expected}"
                ),
                format!(
                    "{}: the engine listens on {log}, the seat expects {expected}",
                    remediation(FailureClass::WrongPort)
                ),
            ));
        }
        if r.attempts > 0 && r.refused == r.attempts {
            let port = r
                .expected_listen_port
                .map(|p| format!("port {p}"))
                .unwrap_or_else(|| "the seat's port".into());
            return Some((
                FailureClass::NotListening,
                format!(
                    "every readiness probe ({}) was refused: nothing listened on {port}",
                    r.attempts
                ),
                format!(
                    "{} (the seat is probed on {port})",
                    remediation(FailureClass::NotListening)
                ),
            ));
        }
        None
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn listening_lines_of_the_real_servers() {
        for (line, port) in [
            (
                "main: server is listening on http://127.0.0.1:8080 - starting the main loop",
                8080,
            ),
            (
                "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
                8000,
            ),
            (
                "(APIServer pid=1) INFO 07-01 10:00:00 [api_server.py:1880] Starting vLLM API server 0 on http://0.0.0.0:8016",
                8016,
            ),
            ("INFO Starting vLLM API server on http://0.0.0.0:8000", 8000),
            (
                "(APIServer pid=7) INFO 11-20 09:00:00 [api_server.py:596] Starting vLLM server on http://0.0.0.0:8001",
                8001,
            ),
            (
                "srv          main: listening on http://127.0.0.1:8080",
                8080,
            ),
            ("[INFO] llama-swap listening on http://:8090", 8090),
            (
                "[2025-01-01 00:00:00] Uvicorn running on 0.0.0.0:30000 with 4 SO_REUSEPORT workers",
                30000,
            ),
            (
                "time=2025-01-01T00:00:00Z level=INFO source=routes.go:1200 msg=\"Listening on 127.0.0.1:11434 (version 0.5.7)\"",
                11434,
            ),
            ("listening on :8080", 8080),
            ("Listening on [::]:9000", 9000),
            (
                r#"{"tid":"1","timestamp":1,"level":"INFO","function":"main","line":1,"msg":"HTTP server listening","hostname":"127.0.0.1","port":"8081","n_threads_http":"3"}"#,
                8081,
            ),
        ] {
            assert_eq!(listen_port(line), Some(port), "{line}");
        }
    }

    #[test]
    fn internal_sockets_are_not_the_api_port() {
        for line in [
            "NCCL INFO RAS: listening on 10.0.0.1:28028",
            "[c10d] The server socket has started to listen on [::]:29500.",
            "[W socket.cpp:464] [c10d] The server socket has failed to listen on [::]:29500 (errno: 98 - Address already in use).",
            "Loading safetensors checkpoint shards: 100% Completed | 4/4 [00:10<00:00, 2.5s/it]",
            "srv  log_server_r: request: GET /health 127.0.0.1 200",
        ] {
            assert_eq!(listen_port(line), None, "{line}");
        }
    }
}
