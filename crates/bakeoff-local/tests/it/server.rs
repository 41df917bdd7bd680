//! A local server's process, with stand-ins for llama-server: a script that prints the command
//! line it was given and exits, and a small Python server that answers `/health` on the port
//! it is given.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use bakeoff_local::{LlamaServer, LlamaServerSpec, LocalError};

/// An executable script `name` in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn spec(bin: PathBuf, dir: &Path) -> LlamaServerSpec {
    LlamaServerSpec {
        bin,
        model: dir.join("model.gguf"),
        ctx: 4096,
        parallel: 2,
        alias: Some("served-name".into()),
        extra_args: vec!["--cache-type-k".into(), "q8_0".into()],
        log: dir.join("logs").join("server.log"),
    }
}

/// A server that exits at once is an error that quotes its log, where its command line shows
/// it was started on loopback, on its own port, with the flags of its spec.
#[tokio::test]
async fn the_command_line_binds_loopback_and_carries_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let bin = script(
        dir.path(),
        "fake-server",
        "#!/bin/sh\necho \"args: $*\"\nexit 3\n",
    );
    let mut s = LlamaServer::start(&spec(bin, dir.path())).await.unwrap();
    assert!(s.url().starts_with("http://127.0.0.1:"), "{}", s.url());
    let port = s.port();
    let e = s.wait_healthy(Duration::from_secs(60)).await.unwrap_err();
    let LocalError::Exited { status, tail } = &e else {
        panic!("{e}")
    };
    assert!(status.contains('3'), "{status}");
    let want = format!(
        "args: -m {} -c 4096 -np 2 --host 127.0.0.1 --port {port} --metrics --alias served-name --cache-type-k q8_0",
        dir.path().join("model.gguf").display()
    );
    assert_eq!(tail, &want);
    // The log directory was made, and the tail is the log's.
    assert_eq!(s.log_tail(1), want);
    assert!(e.to_string().contains("before it was healthy"), "{e}");
}

#[tokio::test]
async fn a_program_that_is_not_there_or_an_unwritable_log_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let e = LlamaServer::start(&spec(dir.path().join("no-such-server"), dir.path()))
        .await
        .err()
        .unwrap();
    assert!(matches!(e, LocalError::Spawn { .. }), "{e}");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let mut bad = spec(PathBuf::from("/bin/true"), dir.path());
    bad.log = file.join("server.log");
    let e = LlamaServer::start(&bad).await.err().unwrap();
    assert!(matches!(e, LocalError::Log { .. }), "{e}");
}

/// Answers 200 on `/health` at the `--port` it is given, and logs each request.
const HEALTHY: &str = r#"#!/usr/bin/env python3
import http.server, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        print("GET", self.path, flush=True)
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
        self.wfile.write(b'{"status":"ok"}')
    def log_message(self, *a):
        pass
print("listening", flush=True)
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"#;

#[tokio::test]
async fn healthy_when_health_answers_and_gone_once_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let bin = script(dir.path(), "healthy-server", HEALTHY);
    let mut s = LlamaServer::start(&spec(bin, dir.path())).await.unwrap();
    let pid = s.pid().unwrap();
    s.wait_healthy(Duration::from_secs(120)).await.unwrap();
    assert!(s.log_tail(5).contains("GET /health"), "{}", s.log_tail(5));
    let port = s.port();
    s.stop().await;
    // The process is gone (its /proc entry with it) and its port is free again.
    assert!(!Path::new(&format!("/proc/{pid}")).exists());
    assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_ok());
}
