//! The fleet file: the checked-in example parses, gateway aliases resolve to seats (from
//! `[[route]]` and from a LiteLLM config), and bad files fail with one line naming the fix.

use std::path::{Path, PathBuf};

use bakeoff_seats::fleet::{Engine, Launch};
use bakeoff_seats::{Fleet, Role};

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/fleet.toml")
}

/// The aliases that route to `seat`.
fn aliases<'a>(f: &'a Fleet, seat: &str) -> Vec<&'a str> {
    f.aliases_of(seat)
        .iter()
        .map(|r| r.alias.as_str())
        .collect()
}

#[test]
fn the_example_fleet_parses() {
    let f = Fleet::load(&example()).unwrap();
    assert_eq!(f.name, "example");
    let proc_ = f.seat("gemma-proc").unwrap();
    assert_eq!(proc_.engine, Engine::LlamaCpp);
    assert!(matches!(proc_.launch, Launch::Process(_)));
    let dock = f.seat("gemma-docker").unwrap();
    assert!(matches!(dock.launch, Launch::Docker(_)));
    assert_eq!(proc_.port, dock.port, "the swap pair shares a port");
    assert_eq!(
        f.port_siblings(proc_)
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["gemma-docker"]
    );
    let prod = f.seat("char-rp").unwrap();
    assert_eq!(prod.role, Role::Production);
    assert_eq!(prod.gpu_memory_utilization, Some(0.47));
    assert_eq!(f.hosts["gpu-box"].gpus, 2);
    assert_eq!(f.seat("meromero-charrp").unwrap().role, Role::Dormant);
    // Two aliases, one seat (docs/field-cases.md F2): the api_base one resolves past the dormant seat
    // on the same port to the serving one.
    assert_eq!(aliases(&f, "char-rp"), ["char-rp", "char-rp-reasoning"]);
    // Secrets never reach an artifact.
    let cfg = prod.redacted_config();
    assert_eq!(cfg["launch"]["docker"]["env"]["HF_TOKEN"], "<redacted>");
}

#[test]
fn litellm_config_aliases_resolve_to_seats() {
    let dir = tempfile::tempdir().unwrap();
    // The LiteLLM proxy config shape from docs.litellm.ai/docs/proxy/configs, with
    // docs/field-cases.md F2's two routes onto one seat.
    std::fs::write(
        dir.path().join("config.yaml"),
        r#"
model_list:
  - model_name: char-rp
    litellm_params:
      model: hosted_vllm/char-rp
      api_base: http://localhost:8016/v1
  - model_name: char-rp-reasoning
    litellm_params:
      model: hosted_vllm/char-rp-thinking
      api_base: http://127.0.0.1:8016/v1
  - model_name: elsewhere
    litellm_params:
      model: openai/gpt-x
"#,
    )
    .unwrap();
    let toml = r#"
[gateway]
litellm_config = "config.yaml"

[[seat]]
name = "char-rp"
engine = "vllm"
role = "production"
port = 8016
[seat.docker]
image = "vllm/vllm-openai:v0.26.0"
"#;
    let p = dir.path().join("fleet.toml");
    std::fs::write(&p, toml).unwrap();
    let f = Fleet::load(&p).unwrap();
    assert_eq!(aliases(&f, "char-rp"), ["char-rp", "char-rp-reasoning"]);
    let other = f.routes.iter().find(|r| r.alias == "elsewhere").unwrap();
    assert_eq!(other.seat, None);
    assert_eq!(other.from, "config.yaml");
}

fn err(toml: &str) -> String {
    Fleet::parse(toml, Path::new("fleet.toml"))
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_fleet_files_name_the_fix() {
    let seat = |extra: &str| {
        format!(
            "[[seat]]\nname = \"s\"\nengine = \"llama.cpp\"\nrole = \"bench\"\nport = 8000\n{extra}"
        )
    };
    for (extra, says) in [
        ("", "has no launch"),
        (
            "[seat.process]\ncommand = \"x\"\n[seat.docker]\nimage = \"i\"\n",
            "pick one",
        ),
        (
            "[seat.docker]\nimage = \"i\"\nrestart = \"sometimes\"\n",
            "on-failure:N",
        ),
        ("[seat.docker]\nimage = \"i\"\nmemory = \"lots\"\n", "512m"),
        ("[seat.docker]\nimage = \"i\"\ngpus = [\"3\"]\n", "gpus = 0"),
        (
            "gpu_memory_utilization = 1.5\n[seat.process]\ncommand = \"x\"\n",
            "(0, 1]",
        ),
        (
            "host = \"nowhere\"\n[seat.process]\ncommand = \"x\"\n",
            "[hosts.nowhere]",
        ),
    ] {
        assert!(err(&seat(extra)).contains(says), "{extra:?}");
    }
    assert!(err("[[seat]]\nname = \"Bad Name\"\nengine = \"vllm\"\nrole = \"bench\"\nport = 1\n[seat.process]\ncommand = \"x\"\n").contains("lower-case"));
    assert!(err("[[route]]\nalias = \"a\"\nseat = \"ghost\"\n").contains("not declared"));
    assert!(err(&seat("role2 = 1\n")).contains("unknown field"));
    // A stop grace that would overflow a deadline (or the Docker API's int) is refused.
    let huge = err(&seat(
        "stop_timeout_s = 18446744073709551615\n[seat.process]\ncommand = \"x\"\n",
    ));
    assert!(
        huge.contains("stop_timeout_s") && huge.contains("0-3600"),
        "{huge}"
    );
    let twice = format!(
        "{}{}",
        seat("[seat.process]\ncommand = \"x\"\n"),
        seat("[seat.process]\ncommand = \"x\"\n")
    );
    assert!(err(&twice).contains("declared twice"));
}

/// An `api_base` alias follows its port: resolved at parse time to the first non-dormant seat,
/// it is listed under a same-port sibling when that one is up and its own seat is not (after a
/// swap). An alias named by seat stays with its seat.
#[test]
fn an_api_base_alias_follows_the_seat_up_on_its_port() {
    let seat = |name: &str| {
        format!(
            "[[seat]]\nname = \"{name}\"\nengine = \"llama.cpp\"\nrole = \"bench\"\nport = 8181\n[seat.process]\ncommand = \"x\"\n"
        )
    };
    let toml = format!(
        "{}{}[[route]]\nalias = \"by-address\"\napi_base = \"http://127.0.0.1:8181/v1\"\n\n[[route]]\nalias = \"by-name\"\nseat = \"a\"\n",
        seat("a"),
        seat("b")
    );
    let f = Fleet::parse(&toml, Path::new("fleet.toml")).unwrap();
    let by_address = &f.routes[0];
    let by_name = &f.routes[1];
    assert_eq!(by_address.seat.as_deref(), Some("a"));
    let now = |r, up: &[&str]| f.route_seat_now(r, |n| up.contains(&n));
    assert_eq!(now(by_address, &["a"]).as_deref(), Some("a"));
    assert_eq!(now(by_address, &["b"]).as_deref(), Some("b"));
    assert_eq!(now(by_address, &[]).as_deref(), Some("a"));
    assert_eq!(now(by_name, &["b"]).as_deref(), Some("a"));
}

/// A seat serves HTTPS when its engine's own arguments give it a certificate, or with
/// `[seat.tls]`; its URL is then `https://`, trusting the CA the table names (checked at parse).
#[test]
fn a_seat_that_serves_tls_is_probed_over_https() {
    let dir = bakeoff_testkit::tempdir();
    let fleet_path = dir.path().join("fleet.toml");
    let seat = |name: &str, args: &str, extra: &str| {
        format!(
            "[[seat]]\nname = \"{name}\"\nengine = \"vllm\"\nrole = \"bench\"\nport = 8000\n[seat.process]\ncommand = \"vllm\"\nargs = {args}\n{extra}"
        )
    };
    let text = [
        seat("plain", "[\"serve\", \"/m\"]", ""),
        seat(
            "flagged",
            "[\"serve\", \"/m\", \"--ssl-certfile=/c.pem\", \"--ssl-keyfile\", \"/k.pem\"]",
            "",
        ),
        seat(
            "insecure",
            "[\"serve\", \"/m\"]",
            "[seat.tls]\ninsecure = true\n",
        ),
    ]
    .concat();
    let f = Fleet::parse(&text, &fleet_path).unwrap();
    let url = |n: &str| f.seat_url(f.seat(n).unwrap());
    assert_eq!(url("plain"), "http://127.0.0.1:8000");
    assert_eq!(url("flagged"), "https://127.0.0.1:8000");
    assert_eq!(url("insecure"), "https://127.0.0.1:8000");
    assert!(f.seat("insecure").unwrap().tls_options().insecure);
    assert!(f.seat("plain").unwrap().tls.is_none());

    // A CA that is not there, or not a certificate, fails the parse with the key named.
    let missing = seat("s", "[]", "[seat.tls]\nca_cert = \"nope.pem\"\n");
    let e = Fleet::parse(&missing, &fleet_path).unwrap_err().to_string();
    assert!(
        e.contains("[seat.tls] ca_cert") && e.contains("nope.pem"),
        "{e}"
    );
    std::fs::write(dir.path().join("junk.pem"), "not a certificate").unwrap();
    let junk = seat("s", "[]", "[seat.tls]\nca_cert = \"junk.pem\"\n");
    let e = Fleet::parse(&junk, &fleet_path).unwrap_err().to_string();
    assert!(e.contains("[seat.tls] ca_cert"), "{e}");
    assert!(err(&seat("s", "[]", "[seat.tls]\nverify = false\n")).contains("unknown field"));
}

/// A value TOML's types refuse (a port past u16) is one line naming the file, the key and the
/// fix, not the parser's caret diagram squashed onto one line.
#[test]
fn a_toml_type_error_is_one_line_naming_the_key_and_the_fix() {
    let e = err(
        "[[seat]]\nname = \"s\"\nengine = \"llama.cpp\"\nrole = \"bench\"\nport = 70000\n[seat.process]\ncommand = \"x\"\n",
    );
    assert_eq!(
        e,
        "fleet.toml: line 5, [[seat]] port: invalid value: integer `70000`, expected u16; fix: a port from 1 to 65535, e.g. port = 8000"
    );
}

/// `served_model_names = []` names no model: refused with the fix (the key left out means the
/// engine's own name).
#[test]
fn an_empty_served_model_names_is_refused() {
    let seat = |names: &str| {
        format!(
            "[[seat]]\nname = \"s\"\nengine = \"vllm\"\nrole = \"bench\"\nport = 8000\n{names}[seat.process]\ncommand = \"x\"\n"
        )
    };
    for names in [
        "served_model_names = []\n",
        "served_model_names = [\" \"]\n",
    ] {
        let e = err(&seat(names));
        assert!(e.contains("served_model_names names no model"), "{e}");
        assert!(e.contains("leave the key out"), "{e}");
    }
    assert!(Fleet::parse(&seat(""), Path::new("fleet.toml")).is_ok());
}
