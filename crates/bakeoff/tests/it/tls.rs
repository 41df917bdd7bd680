//! HTTPS through a real TLS-terminating proxy: Debian's nginx (scripts/install-test-deps.sh) in
//! front of the real llama-server, with a test CA and a server certificate the test makes with
//! the openssl CLI. Through it: `eval preflight`, `eval run` and `bench run` (the streamed hot
//! path over rustls) with `--ca-cert`; the same endpoint without the CA refused with the fix
//! named; `--insecure` recorded in the artifact.

use crate::util::Bounded;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::{self, bakeoff_async, code, free_port, serial_tempdir, text, valid_artifact};

/// `openssl ARGS…`, which must succeed.
fn openssl(dir: &Path, args: &[&str]) {
    let o = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output_bounded()
        .expect("openssl");
    assert!(
        o.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A test CA, and a certificate it signs for 127.0.0.1 and localhost: `(ca.pem, server.pem,
/// server.key)` in `dir`.
pub(crate) fn test_pki(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/O=Bakeoff Test/CN=Bakeoff Test CA",
        ],
    );
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/O=Bakeoff Test/CN=bakeoff-test-gateway",
        ],
    );
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.pem",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        ],
    );
    (
        dir.join("ca.pem"),
        dir.join("server.pem"),
        dir.join("server.key"),
    )
}

/// nginx terminating TLS on a free port and proxying to `upstream` (streamed: no buffering);
/// stopped on drop.
pub(crate) struct Nginx {
    child: Child,
    pub port: u16,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Nginx {
    pub(crate) fn start(dir: &Path, cert: &Path, key: &Path, upstream: &str) -> Self {
        let bin = ["/usr/sbin/nginx", "/usr/bin/nginx"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
            .expect(
                "nginx is not installed: run scripts/install-test-deps.sh (Debian's nginx-light)",
            );
        let port = free_port();
        let prefix = dir.join("nginx");
        std::fs::create_dir_all(prefix.join("tmp")).unwrap();
        let conf = prefix.join("nginx.conf");
        let p = prefix.display();
        // `user root`: the workers run as the user that starts it (the tests run as root on CI);
        // `daemon off`: nginx stays this test's child.
        std::fs::write(
            &conf,
            format!(
                r#"daemon off;
user root;
worker_processes 1;
pid {p}/nginx.pid;
error_log {p}/error.log warn;
events {{ worker_connections 256; }}
http {{
  access_log off;
  client_body_temp_path {p}/tmp/body;
  proxy_temp_path {p}/tmp/proxy;
  fastcgi_temp_path {p}/tmp/fastcgi;
  uwsgi_temp_path {p}/tmp/uwsgi;
  scgi_temp_path {p}/tmp/scgi;
  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    location / {{
      proxy_pass {upstream};
      proxy_http_version 1.1;
      proxy_buffering off;
      proxy_read_timeout 300s;
    }}
  }}
}}
"#,
                cert = cert.display(),
                key = key.display(),
            ),
        )
        .unwrap();
        let child = Command::new(bin)
            .arg("-p")
            .arg(&prefix)
            .arg("-c")
            .arg(&conf)
            .arg("-e")
            .arg(prefix.join("error.log"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "nginx did not listen: {}",
                std::fs::read_to_string(prefix.join("error.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, port }
    }

    pub(crate) fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }
}

fn tls_fact(v: &Value) -> &Value {
    &v["endpoint"]["facts"]["tls"]
}

#[tokio::test]
async fn through_nginx_tls_preflight_eval_and_bench_run_and_an_untrusted_certificate_is_refused() {
    let (_g, dir) = serial_tempdir().await;
    let server = util::logged_llama(dir.path(), "llama", &["--metrics"]).await;
    let (ca, cert, key) = test_pki(dir.path());
    let nginx = Nginx::start(dir.path(), &cert, &key, &server.url());
    let url = nginx.url();
    let ca_s = ca.to_str().unwrap().to_string();

    // 1. Preflight through TLS with the test CA: fit, the certificate in the facts.
    let o = bakeoff_async(&[
        "eval",
        "preflight",
        "--endpoint",
        &url,
        "--ca-cert",
        &ca_s,
        "--json",
    ])
    .await;
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let tls = &v["facts"]["tls"];
    assert_eq!(tls["verification"], "ca-cert", "{tls}");
    assert_eq!(tls["ca_cert"], ca_s.as_str());
    let c = &tls["certificate"];
    assert_eq!(
        c["subject"], "O=Bakeoff Test,CN=bakeoff-test-gateway",
        "{c}"
    );
    assert_eq!(c["issuer"], "O=Bakeoff Test,CN=Bakeoff Test CA", "{c}");
    assert_eq!(c["names"], serde_json::json!(["127.0.0.1", "localhost"]));
    let expires: chrono::DateTime<chrono::Utc> = c["not_after"].as_str().unwrap().parse().unwrap();
    let left = expires - chrono::Utc::now();
    assert!(
        left > chrono::Duration::hours(47) && left <= chrono::Duration::hours(48),
        "{c}"
    );
    assert_eq!(
        v["facts"]["engine"], "llama.cpp",
        "discovery through the proxy: {v}"
    );
    // The table says it too.
    let o = bakeoff_async(&["eval", "preflight", "--endpoint", &url, "--ca-cert", &ca_s]).await;
    assert!(
        util::stdout(&o).contains("O=Bakeoff Test,CN=bakeoff-test-gateway, expires"),
        "{}",
        text(&o)
    );

    // 2. eval run through TLS: every smoke item answered, the TLS fact in the artifact.
    let out = dir.path().join("eval");
    let o = util::eval_run_async(&url, &out, &["--ca-cert", &ca_s, "--suite", "smoke"]).await;
    assert!(matches!(code(&o), 0 | 1), "{}", text(&o));
    let v = valid_artifact(&out, ".bakeoff.json");
    assert_eq!(tls_fact(&v)["verification"], "ca-cert");
    let items = v["suites"]["smoke"]["items"].as_array().unwrap();
    assert!(!items.is_empty());
    for i in items {
        assert_ne!(i["outcome"], "connection-error", "{i}");
        assert_ne!(i["outcome"], "timeout", "{i}");
    }

    // 3. bench run through TLS: the streamed hot path over rustls, every request ok.
    let out = dir.path().join("bench");
    let o = {
        let (url, out, ca_s) = (url.clone(), out.clone(), ca_s.clone());
        tokio::task::spawn_blocking(move || {
            // Calibrated: an https:// endpoint's harness ceiling is measured over TLS.
            util::bakeoff(&[
                "bench",
                "run",
                "--endpoint",
                &url,
                "--ca-cert",
                &ca_s,
                "--concurrency",
                "1,2",
                "--requests",
                "4",
                "--prompt-tokens",
                "32",
                "--output-tokens",
                "16",
                "--warmup",
                "0",
                "--out",
                out.to_str().unwrap(),
            ])
        })
        .await
        .unwrap()
    };
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v = valid_artifact(&out, "-bench.bakeoff.json");
    assert_eq!(tls_fact(&v)["verification"], "ca-cert");
    let ceiling = &v["load"]["throughput"]["ceiling"];
    assert!(
        ceiling["source"].as_str().unwrap().contains("over TLS"),
        "{ceiling}"
    );
    eprintln!("TLS harness ceiling: {ceiling}");
    let steps = v["load"]["throughput"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    for s in steps {
        assert_eq!(s["ok"], 4, "{s}");
        assert!(
            s["latency"]["ttft"]["p50_ms"].as_f64().unwrap() > 0.0,
            "{s}"
        );
    }

    // 4. Without the CA: refused, one line naming the fix, no request measured.
    let out = dir.path().join("refused");
    let o = util::eval_run_async(&url, &out, &["--suite", "smoke"]).await;
    assert_eq!(code(&o), 1, "{}", text(&o));
    let all = text(&o);
    let line = all
        .lines()
        .find(|l| l.contains("not trusted"))
        .unwrap_or_else(|| panic!("no refusal line: {all}"));
    assert!(
        line.contains("--ca-cert FILE") && line.contains("--insecure"),
        "{line}"
    );
    let v = valid_artifact(&out, ".failure.json");
    assert_eq!(v["failure"]["class"], "unreachable", "{}", v["failure"]);
    assert!(
        v["failure"]["message"]
            .as_str()
            .unwrap()
            .contains("UnknownIssuer"),
        "{}",
        v["failure"]
    );
    assert!(
        tls_fact(&v)["error"]
            .as_str()
            .unwrap()
            .contains("--ca-cert FILE")
    );
    let o = bakeoff_async(&["eval", "preflight", "--endpoint", &url]).await;
    assert_eq!(code(&o), 1, "{}", text(&o));
    assert!(text(&o).contains("--ca-cert FILE"), "{}", text(&o));

    // 5. --insecure: the same endpoint measured, the choice recorded.
    let out = dir.path().join("insecure");
    let o = util::eval_run_async(&url, &out, &["--insecure", "--suite", "smoke"]).await;
    assert!(matches!(code(&o), 0 | 1), "{}", text(&o));
    let v = valid_artifact(&out, ".bakeoff.json");
    let tls = tls_fact(&v);
    assert_eq!(tls["verification"], "insecure", "{tls}");
    assert_eq!(
        tls["certificate"]["subject"],
        "O=Bakeoff Test,CN=bakeoff-test-gateway"
    );
    eprintln!("tls fact: {tls}");
}
