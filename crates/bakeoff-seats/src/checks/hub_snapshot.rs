//! A seat's hub id resolved the way its engine will resolve it, before the start.
//!
//! huggingface_hub (vLLM, SGLang) looks in the seat's hub cache first: `models--ORG--NAME/`
//! under `HF_HUB_CACHE` / `HF_HOME/hub` / the default under `HOME` ([`super::cache_mounts`]),
//! `refs/REVISION` holding the commit, `snapshots/COMMIT/` holding the files (huggingface_hub
//! `file_download.py` `hf_hub_download` / `try_to_load_from_cache`, the cache layout of
//! docs huggingface.co/docs/huggingface_hub/guides/manage-cache). `--revision` picks the
//! revision (`main` when none is given); a 40-hex commit names its snapshot directly.
//! llama.cpp's `-hf ORG/NAME[:QUANT]` keeps its GGUF there too in builds that use the hub
//! layout, or as `ORG_NAME_FILE.gguf` in its own cache in older ones.
//!
//! A Docker seat's cache is read through the mount that holds it; a cache on no mount is the
//! container's own and starts empty. The checks that read a seat's model — the engine's
//! registry, the checkpoint audit, the page cache — all read the one snapshot resolved here.
//! Only the engine-support check goes further: for a hub id not cached, it fetches the one
//! `config.json` from the hub ([`fetch_config`]), and only when the host reaches the hub.

use std::path::{Path, PathBuf};
use std::time::Duration;

use bakeoff_model::args::flag_value;

use super::cache_mounts::{EngineEnv, TOKEN_VARS, hf_hub_cache, llama_cache};
use super::hub_model::{Pull, args_of, pull_of};
use super::mounts::host_path;
use crate::fleet::launch::Launch;
use crate::fleet::types::{Seat, substitute};

/// How long the one `config.json` request may take, connection included.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(15);

/// A hub id found in the seat's cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cached {
    pub repo: String,
    pub revision: String,
    pub commit: String,
    /// The snapshot directory on this host (for `-hf`, the GGUF file in it).
    pub path: PathBuf,
}

impl Cached {
    /// `Qwen/Qwen3-8B@main (commit 0123abcd…, /path)`.
    pub fn label(&self) -> String {
        format!(
            "{}@{} (cached snapshot {}, {})",
            self.repo,
            self.revision,
            self.commit.chars().take(12).collect::<String>(),
            self.path.display()
        )
    }
}

/// Why a hub id is not in the seat's cache.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotCached {
    #[error("the seat runs on host {0}, whose hub cache this machine cannot read")]
    OtherHost(String),
    #[error(
        "the container's hub cache {} is on no mount: it starts empty and the engine downloads {repo}",
        .cache.display()
    )]
    Unmounted { repo: String, cache: PathBuf },
    #[error("{repo}@{revision} is not in the seat's hub cache {} ({why})", .cache.display())]
    Missing {
        repo: String,
        revision: String,
        cache: PathBuf,
        why: String,
    },
}

/// The hub repository, revision and (for `-hf`) the quant tag or file the seat asks for.
struct Wanted {
    repo: String,
    revision: String,
    /// llama.cpp `-hf ORG/NAME:QUANT` (QUANT) or `--hf-file FILE`.
    file_hint: Option<String>,
    gguf: bool,
}

fn wanted(seat: &Seat) -> Option<Wanted> {
    let args = args_of(seat);
    match pull_of(seat)? {
        Pull::HubId(repo) => Some(Wanted {
            repo,
            revision: flag_value(args, &["--revision"])
                .unwrap_or("main")
                .to_string(),
            file_hint: None,
            gguf: false,
        }),
        Pull::LlamaHf(spec) => {
            let (repo, tag) = match spec.split_once(':') {
                Some((r, t)) => (r.to_string(), Some(t.to_string())),
                None => (spec.clone(), None),
            };
            let file = flag_value(args, &["-hff", "--hf-file"]).map(str::to_string);
            Some(Wanted {
                repo,
                revision: "main".into(),
                file_hint: file.or(tag),
                gguf: true,
            })
        }
        Pull::LlamaUrl(_) => None,
    }
}

/// A container (or process) path of the seat's, on this host: substituted, `~` expanded, and
/// for a Docker seat mapped through its mounts (`None`: on no mount).
fn on_host(seat: &Seat, path: &Path) -> Option<PathBuf> {
    let p = substitute(&path.to_string_lossy(), seat);
    match &seat.launch {
        Launch::Docker(d) => host_path(Path::new(&p), &d.mounts).filter(|_| !d.mounts.is_empty()),
        Launch::Process(_) => Some(match p.strip_prefix("~/") {
            Some(rest) => std::env::var_os("HOME")
                .map(|h| Path::new(&h).join(rest))
                .unwrap_or_else(|| PathBuf::from(&p)),
            None => PathBuf::from(p),
        }),
    }
}

/// The seat's hub id in its cache: `None` when it pulls nothing from the hub (a local path,
/// a `-mu` URL).
pub fn cached(seat: &Seat) -> Option<Result<Cached, NotCached>> {
    let w = wanted(seat)?;
    if seat.host != "local" {
        return Some(Err(NotCached::OtherHost(seat.host.clone())));
    }
    let env = EngineEnv::of(seat);
    let hub = hf_hub_cache(&env).path;
    let Some(hub_here) = on_host(seat, &hub) else {
        // A llama.cpp seat may still find its file in its own cache.
        if w.gguf
            && let Some(found) = llama_own_cache(seat, &env, &w)
        {
            return Some(Ok(found));
        }
        return Some(Err(NotCached::Unmounted {
            repo: w.repo,
            cache: hub,
        }));
    };
    let found = in_hub_cache(&hub_here, &w);
    Some(match found {
        Ok(c) => Ok(c),
        Err(why) => {
            if w.gguf
                && let Some(c) = llama_own_cache(seat, &env, &w)
            {
                return Some(Ok(c));
            }
            Err(NotCached::Missing {
                repo: w.repo,
                revision: w.revision,
                cache: hub_here,
                why,
            })
        }
    })
}

/// `models--ORG--NAME/refs/REV` → `snapshots/COMMIT/config.json` (or the GGUF asked for).
fn in_hub_cache(hub: &Path, w: &Wanted) -> Result<Cached, String> {
    let repo_dir = hub.join(format!("models--{}", w.repo.replace('/', "--")));
    if !repo_dir.is_dir() {
        return Err(format!("no {}", repo_dir.display()));
    }
    let is_commit = w.revision.len() == 40 && w.revision.chars().all(|c| c.is_ascii_hexdigit());
    let commit = if is_commit {
        w.revision.clone()
    } else {
        let r = repo_dir.join("refs").join(&w.revision);
        std::fs::read_to_string(&r)
            .map_err(|e| format!("{}: {e}", r.display()))?
            .trim()
            .to_string()
    };
    let snap = repo_dir.join("snapshots").join(&commit);
    let path = if w.gguf {
        pick_gguf(&snap, w.file_hint.as_deref())
            .ok_or_else(|| format!("no GGUF file in {}", snap.display()))?
    } else {
        if !snap.join("config.json").is_file() {
            return Err(format!("no config.json in {}", snap.display()));
        }
        snap
    };
    Ok(Cached {
        repo: w.repo.clone(),
        revision: w.revision.clone(),
        commit,
        path,
    })
}

/// The GGUF of a snapshot the seat asks for: `--hf-file` by name, the `:QUANT` tag by a
/// case-blind match, else the one GGUF that is not a projector (`mmproj`).
fn pick_gguf(dir: &Path, hint: Option<&str>) -> Option<PathBuf> {
    let mut ggufs: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|x| x == "gguf")
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().to_lowercase().contains("mmproj"))
        })
        .collect();
    ggufs.sort();
    match hint {
        Some(h) => {
            let h = h.to_lowercase();
            ggufs.into_iter().find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().to_lowercase().contains(&h))
            })
        }
        None if ggufs.len() == 1 => ggufs.pop(),
        None => None,
    }
}

/// llama.cpp's own cache before the hub layout: `ORG_NAME_FILE.gguf` (common/arg.cpp of
/// builds before b5000-ish: the repo's `/` made `_`).
fn llama_own_cache(seat: &Seat, env: &EngineEnv, w: &Wanted) -> Option<Cached> {
    let dir = on_host(seat, &llama_cache(env).path)?;
    let prefix = format!("{}_", w.repo.replace('/', "_"));
    let hint = w.file_hint.as_deref().map(str::to_lowercase);
    let mut hits: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            let n = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            n.starts_with(&prefix)
                && n.ends_with(".gguf")
                && hint.as_deref().is_none_or(|h| n.to_lowercase().contains(h))
        })
        .collect();
    hits.sort();
    (hits.len() == 1).then(|| Cached {
        repo: w.repo.clone(),
        revision: w.revision.clone(),
        commit: "llama.cpp cache".into(),
        path: hits.remove(0),
    })
}

/// Why the one `config.json` was not fetched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotFetched {
    #[error("the seat is offline ({0}=1), as its engine will be")]
    OfflineByEnv(&'static str),
    #[error("this host cannot reach the hub at {endpoint} ({why})")]
    Unreachable { endpoint: String, why: String },
    #[error("the hub answered HTTP {status} for {url}{hint}")]
    Status {
        status: u16,
        url: String,
        hint: &'static str,
    },
    #[error("the hub's config.json at {0} is not JSON")]
    NotJson(String),
}

/// The one `config.json` of the seat's hub id at its revision, fetched from the hub with the
/// seat's token (`GET {HF_ENDPOINT}/{repo}/resolve/{revision}/config.json`, as huggingface_hub's
/// `hf_hub_url` builds it), nothing else, within [`FETCH_TIMEOUT`]. `None` when the seat has no
/// hub id (or pulls a GGUF, whose header the hub API does not serve alone).
pub fn fetch_config(seat: &Seat) -> Option<Result<(String, Vec<u8>), NotFetched>> {
    let w = wanted(seat)?;
    if w.gguf {
        return None;
    }
    let env = EngineEnv::of(seat);
    let get = |k: &str| env.vars.get(k).map(|v| v.trim()).filter(|v| !v.is_empty());
    for var in ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"] {
        if get(var).is_some_and(|v| !matches!(v, "0" | "false" | "False" | "no")) {
            return Some(Err(NotFetched::OfflineByEnv(var)));
        }
    }
    let endpoint = get("HF_ENDPOINT")
        .unwrap_or("https://huggingface.co")
        .trim_end_matches('/')
        .to_string();
    let token = TOKEN_VARS
        .iter()
        .find_map(|v| get(v).map(str::to_string))
        .or_else(|| flag_value(args_of(seat), &["-hft", "--hf-token"]).map(str::to_string));
    let url = format!("{endpoint}/{}/resolve/{}/config.json", w.repo, w.revision);
    Some(get_json(&endpoint, &url, token))
}

/// One GET on a thread of its own with its own runtime: callable from the blocking pool and
/// from a plain thread alike.
fn get_json(
    endpoint: &str,
    url: &str,
    token: Option<String>,
) -> Result<(String, Vec<u8>), NotFetched> {
    let unreachable = |why: String| NotFetched::Unreachable {
        endpoint: endpoint.to_string(),
        why,
    };
    let parsed = bakeoff_client::EndpointUrl::parse(url).map_err(|e| unreachable(e.to_string()))?;
    let target = url::Url::parse(url).map_err(|e| unreachable(e.to_string()))?;
    let opts = bakeoff_client::ClientOptions {
        api_key: token.and_then(bakeoff_client::ApiKey::new),
        ..Default::default()
    };
    let client =
        bakeoff_client::Client::try_new(parsed, opts).map_err(|e| unreachable(e.to_string()))?;
    let handle = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async {
            client
                .get_text(target, FETCH_TIMEOUT)
                .await
                .map_err(|e| e.to_string())
        })
    });
    let (status, body) = handle
        .join()
        .map_err(|_| unreachable("the request's thread failed".into()))?
        .map_err(unreachable)?;
    if !(200..300).contains(&status) {
        let hint = match status {
            401 | 403 => " (a gated or private repository: the seat's token has no access)",
            404 => " (no such repository, revision or file)",
            _ => "",
        };
        return Err(NotFetched::Status {
            status,
            url: url.to_string(),
            hint,
        });
    }
    if serde_json::from_str::<serde_json::Value>(&body).is_err() {
        return Err(NotFetched::NotJson(url.to_string()));
    }
    Ok((url.to_string(), body.into_bytes()))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::io::{Read, Write};

    use super::*;
    use crate::fleet::types::Fleet;

    const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

    /// `HUB/models--ORG--NAME` with `refs/main` → COMMIT and `files` in the snapshot.
    fn cache(hub: &Path, repo: &str, files: &[(&str, &str)]) -> PathBuf {
        let d = hub.join(format!("models--{}", repo.replace('/', "--")));
        std::fs::create_dir_all(d.join("refs")).unwrap();
        std::fs::write(d.join("refs/main"), format!("{COMMIT}\n")).unwrap();
        let snap = d.join("snapshots").join(COMMIT);
        std::fs::create_dir_all(&snap).unwrap();
        for (n, t) in files {
            std::fs::write(snap.join(n), t).unwrap();
        }
        snap
    }

    fn fleet(dir: &Path, text: &str) -> Fleet {
        Fleet::parse(text, &dir.join("fleet.toml")).unwrap()
    }

    #[test]
    fn a_cached_hub_id_is_its_snapshot_for_process_and_docker_seats() {
        let dir = tempfile::tempdir().unwrap();
        let hf = dir.path().join("hf");
        let snap = cache(&hf.join("hub"), "frob/smol", &[("config.json", "{}")]);
        let f = fleet(
            dir.path(),
            &format!(
                r#"
[[seat]]
name = "proc"
engine = "vllm"
role = "bench"
port = 18990
[seat.process]
command = "vllm"
args = ["serve", "frob/smol"]
env = {{ HF_HOME = "{hf}" }}

[[seat]]
name = "dock"
engine = "vllm"
role = "bench"
port = 18991
[seat.docker]
image = "vllm/vllm-openai:v0.11.0"
command = ["--model", "frob/smol"]
mounts = ["{hf}:/root/.cache/huggingface"]

[[seat]]
name = "unmounted"
engine = "vllm"
role = "bench"
port = 18992
[seat.docker]
image = "vllm/vllm-openai:v0.11.0"
command = ["--model", "frob/smol"]

[[seat]]
name = "rev"
engine = "vllm"
role = "bench"
port = 18993
[seat.process]
command = "vllm"
args = ["serve", "frob/smol", "--revision", "v2"]
env = {{ HF_HUB_CACHE = "{hub}" }}
"#,
                hf = hf.display(),
                hub = hf.join("hub").display()
            ),
        );
        for s in &f.seats[..2] {
            let c = cached(s).unwrap().unwrap();
            assert_eq!(c.path, snap, "{}", s.name);
            assert_eq!(c.commit, COMMIT);
            // Every check that reads the model reads this snapshot.
            assert_eq!(
                crate::checks::model_path::model_and_quantization(s)
                    .unwrap()
                    .0,
                snap
            );
        }
        let e = cached(&f.seats[2]).unwrap().unwrap_err();
        assert!(e.to_string().contains("is on no mount"), "{e}");
        let e = cached(&f.seats[3]).unwrap().unwrap_err();
        assert!(
            e.to_string()
                .contains("frob/smol@v2 is not in the seat's hub cache"),
            "{e}"
        );
    }

    #[test]
    fn llama_cpp_hf_picks_the_quant_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let hf = dir.path().join("hf");
        let snap = cache(
            &hf.join("hub"),
            "frob/smol-GGUF",
            &[
                ("smol-Q8_0.gguf", "GGUF"),
                ("smol-Q4_K_M.gguf", "GGUF"),
                ("mmproj-smol-f16.gguf", "GGUF"),
            ],
        );
        let f = fleet(
            dir.path(),
            &format!(
                r#"
[[seat]]
name = "l"
engine = "llama.cpp"
role = "bench"
port = 18994
[seat.docker]
image = "ghcr.io/ggml-org/llama.cpp:server"
command = ["-hf", "frob/smol-GGUF:q4_k_m"]
mounts = ["{hf}:/root/.cache/huggingface"]
"#,
                hf = hf.display()
            ),
        );
        assert_eq!(
            cached(&f.seats[0]).unwrap().unwrap().path,
            snap.join("smol-Q4_K_M.gguf")
        );
    }

    /// Offline and not cached: the engine-support check says exactly that, and asks nothing.
    #[test]
    fn offline_and_not_cached_is_not_checked_saying_so() {
        let dir = tempfile::tempdir().unwrap();
        let f = fleet(
            dir.path(),
            &format!(
                r#"
[[seat]]
name = "off"
engine = "vllm"
role = "bench"
port = 18995
[seat.process]
command = "vllm"
args = ["serve", "frob/absent"]
env = {{ HF_HOME = "{hf}", HF_HUB_OFFLINE = "1" }}
"#,
                hf = dir.path().join("hf").display()
            ),
        );
        let finding = crate::checks::engine_support::check(&f, &f.seats[0]).unwrap();
        assert_eq!(finding.code, crate::checks::engine_support::NOT_CHECKED);
        assert!(
            finding.message.contains("offline and not cached")
                && finding
                    .message
                    .contains("frob/absent@main is not in the seat's hub cache")
                && finding.message.contains("HF_HUB_OFFLINE=1"),
            "{}",
            finding.message
        );
    }

    /// Not cached and online: the one `config.json`, with the seat's token, from the hub the
    /// seat names (`HF_ENDPOINT`, here a one-shot listener); a hub that cannot be reached is
    /// "offline".
    #[test]
    fn the_one_config_is_fetched_with_the_seats_token() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let mut buf = vec![0u8; 4096];
            let n = s.read(&mut buf).unwrap();
            let body = r#"{"architectures":["FrobForCausalLM"],"model_type":"frob"}"#;
            write!(
                s,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
            String::from_utf8_lossy(&buf[..n]).to_string()
        });
        let dir = tempfile::tempdir().unwrap();
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let closed_port = closed.local_addr().unwrap().port();
        drop(closed);
        let f = fleet(
            dir.path(),
            &format!(
                r#"
[[seat]]
name = "on"
engine = "vllm"
role = "bench"
port = 18996
[seat.process]
command = "vllm"
args = ["serve", "frob/absent", "--revision", "v1"]
env = {{ HF_HOME = "{hf}", HF_ENDPOINT = "http://127.0.0.1:{port}", HF_TOKEN = "hf_seattoken" }}

[[seat]]
name = "down"
engine = "vllm"
role = "bench"
port = 18997
[seat.process]
command = "vllm"
args = ["serve", "frob/absent"]
env = {{ HF_HOME = "{hf}", HF_ENDPOINT = "http://127.0.0.1:{closed_port}" }}
"#,
                hf = dir.path().join("hf").display()
            ),
        );
        let (url, bytes) = fetch_config(&f.seats[0]).unwrap().unwrap();
        assert_eq!(
            url,
            format!("http://127.0.0.1:{port}/frob/absent/resolve/v1/config.json")
        );
        assert!(String::from_utf8_lossy(&bytes).contains("FrobForCausalLM"));
        let request = server.join().unwrap().to_lowercase();
        assert!(
            request.starts_with("get /frob/absent/resolve/v1/config.json "),
            "{request}"
        );
        assert!(
            request.contains("authorization: bearer hf_seattoken"),
            "{request}"
        );
        let e = fetch_config(&f.seats[1]).unwrap().unwrap_err();
        assert!(matches!(e, NotFetched::Unreachable { .. }), "{e}");
    }
}
