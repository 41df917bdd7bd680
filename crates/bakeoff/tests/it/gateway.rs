//! The real LiteLLM proxy in front of a real llama-server seat (docs/scale-out.md): `gateway export`
//! output loaded by the proxy, a completion through it for each of the seat's two aliases,
//! `eval preflight` through it, and — the seat stopped — `seat status --probe` reporting ONE
//! outage with both aliases under the seat (docs/field-cases.md F2), while the proxy's completions fail.

use crate::util::Bounded;
use std::path::Path;
use std::time::Duration;

use bakeoff_client::{ApiKey, Client, ClientOptions, EndpointUrl, Exchange, Timeouts};
use bakeoff_testkit::litellm::Proxy;
use bakeoff_wire::chat::{ChatRequest, Message};
use serde_json::Value;

use crate::util::{self, code, free_port, stdout, text};

/// The environment variable the fleet names for the gateway's key (`[gateway] api_key_env`).
const KEY_ENV: &str = "BAKEOFF_TEST_GATEWAY_KEY";

fn fleet_text(port: u16) -> String {
    let e = bakeoff_testkit::engine();
    let header =
        bakeoff_testkit::fleet::seat_header("gw", "llama.cpp", "bench", port, "gemma-3-270m");
    format!(
        r#"{header}[seat.process]
command = "{bin}"
args = ["-m", "{model}", "--host", "127.0.0.1", "--port", "{{port}}", "-c", "1024", "-np", "1", "--alias", "gemma-3-270m"]

[[route]]
alias = "chat-a"
seat = "gw"

[[route]]
alias = "chat-b"
api_base = "http://127.0.0.1:{port}/v1"
"#,
        bin = e.llama_server.display(),
        model = e.model.display()
    )
}

/// `bakeoff ARGS…` with the gateway's key in the environment the fleet names.
fn bakeoff_keyed(args: &[&str], key: &str) -> std::process::Output {
    util::bakeoff_cmd()
        .env(KEY_ENV, key)
        .args(args)
        .output_bounded()
        .unwrap()
}

async fn complete(proxy: &Proxy, model: &str) -> Exchange {
    let c = Client::new(
        EndpointUrl::parse(&proxy.url).unwrap(),
        ClientOptions {
            timeouts: Timeouts {
                connect: Duration::from_secs(3),
                first_byte: Duration::from_secs(60),
                idle: Duration::from_secs(10),
                total: Duration::from_secs(60),
            },
            api_key: ApiKey::new(proxy.key.clone()),
            ..Default::default()
        },
    );
    c.chat(&ChatRequest::new(
        model,
        vec![Message::user("Say OK.")],
        1,
        false,
    ))
    .await
}

fn write(path: &Path, text: &str) -> String {
    std::fs::write(path, text).unwrap();
    path.display().to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_real_litellm_proxy_in_front_of_a_seat_reports_one_outage() {
    let (_serial, dir) = util::serial_tempdir().await;
    let _seats = bakeoff_testkit::fleet::SeatProcessGuard {
        state: dir.path().join(".bakeoff-seats"),
    };
    let port = free_port();
    let base = fleet_text(port);
    let f = write(&dir.path().join("fleet.toml"), &base);
    let cfg = dir.path().join("litellm.yaml");
    let cfg_s = cfg.display().to_string();

    // Export: written once; a second export without --force keeps the file (exit 2).
    let o = util::bakeoff(&["gateway", "export", "--fleet", &f, "--out", &cfg_s]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let yaml = std::fs::read_to_string(&cfg).unwrap();
    for want in [
        "model_name: chat-a",
        "model_name: chat-b",
        "openai/gemma-3-270m",
    ] {
        assert!(yaml.contains(want), "{want}: {yaml}");
    }
    let o = util::bakeoff(&["gateway", "export", "--fleet", &f, "--out", &cfg_s]);
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(text(&o).contains("--force"), "{}", text(&o));

    // The export round-trips through the fleet's own import: its aliases land on the seat.
    let imported = write(
        &dir.path().join("imported.toml"),
        &format!(
            "{}\n[gateway]\nlitellm_config = \"litellm.yaml\"\n",
            base.split("[[route]]").next().unwrap()
        ),
    );
    let o = util::bakeoff(&["seat", "status", "--fleet", &imported, "--json"]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    let aliases = v["seats"][0]["aliases"].to_string();
    assert!(
        aliases.contains("chat-a") && aliases.contains("chat-b"),
        "{aliases}"
    );

    let o = util::bakeoff(&["seat", "up", "--fleet", &f, "gw", "--silence-timeout", "60"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let proxy = Proxy::start(&cfg, dir.path()).await;

    // A completion through the proxy for each alias, served by the real seat.
    for alias in ["chat-a", "chat-b"] {
        let ex = complete(&proxy, alias).await;
        assert!(ex.ok(), "{alias}: {:?}\n{}", ex.error, proxy.log_tail());
        assert_eq!(ex.reply.completion_tokens(), Some(1), "{alias}");
    }

    // eval preflight through the proxy, its key from the environment like any endpoint's.
    let o = util::bakeoff_cmd()
        .env("BAKEOFF_API_KEY", &proxy.key)
        .args([
            "eval",
            "preflight",
            "--endpoint",
            &proxy.url,
            "--model",
            "chat-a",
        ])
        .output_bounded()
        .unwrap();
    assert_eq!(code(&o), 0, "{}\n{}", text(&o), proxy.log_tail());

    // The same gateway behind HTTPS (docs/measuring.md "Gateways and seats over HTTPS"): nginx terminating TLS with a
    // test CA in front of the proxy; preflight with --ca-cert, and a fleet whose gateway is
    // `https://…` with `ca_cert`, probed through it.
    let (ca, cert, key) = crate::tls::test_pki(dir.path());
    let nginx = crate::tls::Nginx::start(dir.path(), &cert, &key, &proxy.url);
    let o = util::bakeoff_cmd()
        .env("BAKEOFF_API_KEY", &proxy.key)
        .args([
            "eval",
            "preflight",
            "--endpoint",
            &nginx.url(),
            "--model",
            "chat-a",
            "--ca-cert",
            ca.to_str().unwrap(),
            "--json",
        ])
        .output_bounded()
        .unwrap();
    assert_eq!(code(&o), 0, "{}\n{}", text(&o), proxy.log_tail());
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["facts"]["tls"]["verification"], "ca-cert", "{v:#}");
    let f_tls = write(
        &dir.path().join("fleet-tls.toml"),
        &format!(
            "{base}\n[gateway]\nurl = \"{}\"\napi_key_env = \"{KEY_ENV}\"\nca_cert = \"ca.pem\"\n",
            nginx.url()
        ),
    );
    let o = bakeoff_keyed(
        &["seat", "status", "--fleet", &f_tls, "--probe", "--json"],
        &proxy.key,
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["gateway"]["source"], "/model/info", "{v:#}");
    assert_eq!(
        v["gateway"]["groups"][0]["failing"],
        serde_json::json!([]),
        "{v:#}"
    );
    drop(nginx);

    // The fleet names its gateway: status reads the gateway's own view and probes through it.
    let f = write(
        &dir.path().join("fleet.toml"),
        &format!(
            "{base}\n[gateway]\nurl = \"{}\"\napi_key_env = \"{KEY_ENV}\"\n",
            proxy.url
        ),
    );
    let o = bakeoff_keyed(
        &["seat", "status", "--fleet", &f, "--probe", "--json"],
        &proxy.key,
    );
    assert_eq!(code(&o), 0, "{}", text(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["gateway"]["source"], "/model/info", "{v:#}");
    let groups = v["gateway"]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{v:#}");
    assert_eq!(groups[0]["seat"], "gw");
    assert_eq!(groups[0]["failing"], serde_json::json!([]), "{v:#}");
    // The key never reaches the output.
    assert!(!text(&o).contains(&proxy.key));

    // The seat stopped: one outage, both aliases under it; the proxy's completions fail.
    let o = util::bakeoff(&["seat", "down", "--fleet", &f, "gw"]);
    assert_eq!(code(&o), 0, "{}", text(&o));
    let o = bakeoff_keyed(
        &["seat", "status", "--fleet", &f, "--probe", "--json"],
        &proxy.key,
    );
    assert_eq!(
        code(&o),
        1,
        "a failed probe is not a healthy fleet: {}",
        text(&o)
    );
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["seats"][0]["state"], "down", "{v:#}");
    let groups = v["gateway"]["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "one seat, one outage: {v:#}");
    assert_eq!(groups[0]["seat"], "gw");
    assert_eq!(groups[0]["outage"], true);
    let failing = groups[0]["failing"].to_string();
    assert!(
        failing.contains("chat-a") && failing.contains("chat-b"),
        "{failing}"
    );
    let o = bakeoff_keyed(&["seat", "status", "--fleet", &f, "--probe"], &proxy.key);
    let out = stdout(&o);
    let outage: Vec<&str> = out.lines().filter(|l| l.contains("OUTAGE")).collect();
    assert_eq!(outage.len(), 1, "{out}");
    assert!(
        outage[0].contains("seat gw")
            && outage[0].contains("chat-a")
            && outage[0].contains("chat-b"),
        "{out}"
    );
    for alias in ["chat-a", "chat-b"] {
        let ex = complete(&proxy, alias).await;
        assert!(!ex.ok(), "{alias} still answered with the seat down");
    }
}
