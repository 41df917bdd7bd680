//! What the readiness probes saw decides the class of a seat that never became ready (docs/failure-classes.md,
//! "How a class is chosen"): a seat whose engine listens on another port is `wrong-port`, one whose port only ever
//! refused is `not-listening` — neither is an `init-wedge` with CUDA-graph advice — and one that
//! serves other model ids than its `served_model_names` is `model-name-mismatch`, with the ids
//! the server actually serves. The evidence (`seat.readiness`) records what was seen.

use crate::common::*;

fn class_name(r: &bakeoff_seats::WatchReport) -> String {
    r.class.map(|c| c.to_string()).unwrap_or_default()
}

/// The real llama-server told `--port OTHER` while the seat is probed on its own port: its log
/// says `main: server is listening on http://127.0.0.1:OTHER`, the seat's port refuses.
#[tokio::test]
async fn an_engine_listening_on_another_port_is_wrong_port_not_a_wedge() {
    let (_g, dir) = serial_tempdir().await;
    let (port, other) = (free_port(), free_port());
    let e = bakeoff_testkit::engine();
    let args: Vec<String> = [
        "-m",
        &model(),
        "--host",
        "127.0.0.1",
        "--port",
        &other.to_string(),
        "-c",
        "1024",
        "-np",
        "1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let toml = process_seat(
        "elsewhere",
        "llama.cpp",
        port,
        &e.llama_server.display().to_string(),
        &args,
        "gemma-3-270m",
    );
    let seats = fleet(dir.path(), &toml, quick_watch(60.0));
    let _stop = StopOnDrop::all(&seats);
    let out = seats.up("elsewhere", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert!(!out.ok());
    assert_eq!(class_name(r), "wrong-port", "{}", r.message);
    assert!(r.message.contains(&other.to_string()), "{}", r.message);
    // Decided as soon as the probe saw the seat's port refuse after the listening line, not
    // after the 60 s silence timeout.
    assert!(r.elapsed_ms < 55_000, "{} ms", r.elapsed_ms);
    let f = failure_of(&out);
    assert_eq!(f["failure"]["class"], "wrong-port");
    let rd = &f["seat"]["readiness"];
    assert_eq!(rd["log_listen_port"], other);
    assert_eq!(rd["expected_listen_port"], port);
    assert!(rd["refused"].as_u64().unwrap() >= 1, "{rd}");
    let remedy = f["failure"]["remediation"].as_str().unwrap();
    assert!(!remedy.contains("CUDA"), "{remedy}");
}

/// A process that logs a line, then never listens: silence with every probe refused is
/// `not-listening`, and the evidence says every probe was refused.
#[tokio::test]
async fn a_port_that_only_ever_refused_is_not_listening() {
    let (_g, dir) = serial_tempdir().await;
    let port = free_port();
    let args: Vec<String> = vec!["-c".into(), "echo loading model; exec sleep 30".into()];
    let seats = fleet(
        dir.path(),
        &process_seat("deaf", "vllm", port, "/bin/sh", &args, "m"),
        quick_watch(3.0),
    );
    let _stop = StopOnDrop::all(&seats);
    let out = seats.up("deaf", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert_eq!(class_name(r), "not-listening", "{}", r.message);
    let f = failure_of(&out);
    let rd = &f["seat"]["readiness"];
    assert!(rd["attempts"].as_u64().unwrap() >= 1, "{rd}");
    assert_eq!(rd["attempts"], rd["refused"], "{rd}");
    assert!(
        f["failure"]["message"]
            .as_str()
            .unwrap()
            .contains("was refused"),
        "{f}"
    );
}

/// vLLM answers a request for a model it does not serve with 404 `The model `m` does not
/// exist.` (vllm/entrypoints/openai/serving_engine.py `_check_model`, NotFoundError), and lists
/// only its `--served-model-name` in `/v1/models`. A seat whose `served_model_names` say `m`
/// while the server serves `fx-model` is misconfigured, not still starting.
const VLLM_LIKE: &str = r#"
import http.server, json, sys
port = int(sys.argv[1])
class H(http.server.BaseHTTPRequestHandler):
    def reply(self, code, body):
        b = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def do_GET(self):
        if self.path == "/v1/models":
            self.reply(200, {"object": "list", "data": [{"id": "fx-model", "object": "model", "max_model_len": 4096}]})
        elif self.path == "/version":
            self.reply(200, {"version": "0.11.0"})
        else:
            self.reply(404, {"detail": "Not Found"})
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        req = json.loads(self.rfile.read(n) or b"{}")
        self.reply(404, {"error": {"message": "The model `%s` does not exist." % req.get("model"), "type": "NotFoundError", "param": None, "code": 404}})
    def log_message(self, *a):
        pass
print("INFO:     Uvicorn running on http://127.0.0.1:%d (Press CTRL+C to quit)" % port, flush=True)
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"#;

#[tokio::test]
async fn served_names_that_do_not_match_are_model_name_mismatch() {
    let (_g, dir) = serial_tempdir().await;
    let port = free_port();
    let script = dir.path().join("vllm_like.py");
    std::fs::write(&script, VLLM_LIKE).unwrap();
    let args: Vec<String> = vec![script.display().to_string(), "{port}".into()];
    let seats = fleet(
        dir.path(),
        &process_seat("named", "vllm", port, "python3", &args, "m"),
        quick_watch(60.0),
    );
    let _stop = StopOnDrop::all(&seats);
    let out = seats.up("named", false, false).await.unwrap();
    let r = out.report.as_ref().unwrap();
    assert_eq!(class_name(r), "model-name-mismatch", "{}", r.message);
    assert!(r.message.contains("fx-model"), "{}", r.message);
    assert!(
        r.elapsed_ms < 55_000,
        "not decided at once: {} ms",
        r.elapsed_ms
    );
    let f = failure_of(&out);
    let rd = &f["seat"]["readiness"];
    assert_eq!(rd["served_model_ids"], serde_json::json!(["fx-model"]));
    assert_eq!(rd["requested_model"], "m");
    assert!(
        f["failure"]["remediation"]
            .as_str()
            .unwrap()
            .contains("served_model_names"),
        "{f}"
    );

    // The same seat failing again writes a second artifact beside the first, never over it.
    let again = seats.up("named", false, false).await.unwrap();
    let (p1, p2) = (
        out.failure_path.clone().unwrap(),
        again.failure_path.clone().unwrap(),
    );
    assert_ne!(p1, p2);
    assert!(p1.exists() && p2.exists());
    assert!(p1.ends_with("named.failure.json"), "{p1:?}");
}
