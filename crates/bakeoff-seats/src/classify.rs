//! A seat's failure class from its log: the rows of the ONE failure table
//! (`bakeoff_artifact::failure_table`, re-exported here) are data; this module compiles their
//! log signatures and picks the root cause. Backends and the watchdog never decide a class with
//! an `if` of their own.
//!
//! The root cause is the **first causal line**: wrappers such as vLLM's `Engine core
//! initialization failed. See root cause above.` are never chosen, and a `secondary` signature
//! (a missing optional module, often logged as a warning) is chosen only when no primary one
//! matched anywhere in the tail.

use std::sync::OnceLock;

use bakeoff_artifact::FailureClass;
pub use bakeoff_artifact::failure_table::{
    NEAR_LINES, Row, Scope, SignatureKind, TABLE, WRAPPERS, exited_remediation, markdown_table,
    remediation, watchdog_row,
};
use regex::Regex;

/// The first causal line of a log tail.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    pub class: FailureClass,
    pub line_index: usize,
    pub line: String,
    pub source: &'static str,
    pub remediation: &'static str,
}

struct Compiled {
    rows: Vec<(Regex, &'static Row)>,
    wrappers: Vec<Regex>,
}

fn compiled() -> &'static Compiled {
    static C: OnceLock<Compiled> = OnceLock::new();
    C.get_or_init(|| Compiled {
        rows: TABLE
            .iter()
            .filter_map(|r| match r.signature {
                // The patterns are constants checked by a unit test; a bad one is skipped, not
                // a panic in an operator's terminal.
                SignatureKind::Log(p) => Regex::new(p).ok().map(|re| (re, r)),
                SignatureKind::Watchdog(_) | SignatureKind::Endpoint(_) => None,
            })
            .collect(),
        wrappers: WRAPPERS
            .iter()
            .filter_map(|(p, _)| Regex::new(p).ok())
            .collect(),
    })
}

/// The first causal error in `lines` (oldest first), or `None` when no signature matches.
pub fn root_cause(lines: &[String]) -> Option<Cause> {
    root_cause_for(lines, None)
}

/// How far above a generic bind failure the API server's own bind frames are looked for.
const BIND_CONTEXT_LINES: usize = 20;

/// Frames of an API server binding its port, as they stand in the traceback above its bind
/// failure: vLLM `create_server_socket` / `sock.bind(addr)`, uvicorn.
const API_BIND_MARKERS: &[&str] = &["create_server_socket", "sock.bind(addr)", "uvicorn"];

/// Internal sockets, never the API port: NCCL, torch's c10d store and its rendezvous, vLLM's
/// `get_open_port` probe for its own internal ports, ZMQ.
const INTERNAL_SOCKET_MARKERS: &[&str] = &[
    "NCCL",
    "c10d",
    "TCPStore",
    "_create_c10d_store",
    "rendezvous",
    "init_process_group",
    "stateless_init",
    "get_open_port",
    "gloo",
    "zmq",
    "ZMQ",
    "The server socket has failed",
];

/// Does a generic bind failure at `lines[i]` belong to the API server on `api_port`? It does
/// when the line names that port, or when the nearest frames above it are the API server's
/// bind and not an internal socket's.
fn is_api_bind(lines: &[String], i: usize, api_port: Option<u16>) -> bool {
    let line = &lines[i];
    let internal = |l: &str| INTERNAL_SOCKET_MARKERS.iter().any(|m| l.contains(m));
    if internal(line) {
        return false;
    }
    if let Some(p) = api_port
        && mentions_port(line, p)
    {
        return true;
    }
    let context = &lines[i.saturating_sub(BIND_CONTEXT_LINES)..i];
    if context.iter().any(|l| internal(l)) {
        return false;
    }
    context
        .iter()
        .any(|l| API_BIND_MARKERS.iter().any(|m| l.contains(m)))
}

/// `line` names port `p` as a port (`:8000`, `, 8000)`, `port 8000`, `port: 8000`), not as a
/// digit run inside another number.
fn mentions_port(line: &str, p: u16) -> bool {
    let p = p.to_string();
    line.match_indices(&p).any(|(at, _)| {
        let head = &line[..at];
        let tail = &line[at + p.len()..];
        if head.ends_with(|c: char| c.is_ascii_digit())
            || tail.starts_with(|c: char| c.is_ascii_digit())
        {
            return false;
        }
        let head = head
            .trim_end_matches([' ', '\'', '"', '='])
            .to_ascii_lowercase();
        head.ends_with([':', ',', '(']) || head.ends_with("port")
    })
}

/// The first causal error in `lines`, knowing the port the seat's API server binds (so a
/// generic `Address already in use` is claimed only when it is that server's).
///
/// Log lines are matched one by one and also joined with the next line, with and without a
/// space: terminals and issue threads hard-wrap long engine messages (`…KV cach` / `e is
/// needed…`), and a signature split across the wrap is still the cause, at its first line.
///
/// The first causal line is the first in time: a log pasted newest line first (issue threads,
/// `tac`, some log viewers) is read in time order before the rules apply, so the consequence
/// logged after the cause (a wrapper's re-raise, a shutdown line) never wins by standing on
/// top. Which way a log runs is read from the log itself ([`newest_first`]); the table's row
/// order only decides between rows matching the same line.
pub fn root_cause_for(lines: &[String], api_port: Option<u16>) -> Option<Cause> {
    if newest_first(lines) {
        let n = lines.len();
        let in_time_order: Vec<String> = lines.iter().rev().cloned().collect();
        return first_cause(&in_time_order, api_port).map(|mut c| {
            c.line_index = n - 1 - c.line_index;
            c
        });
    }
    first_cause(lines, api_port)
}

/// A timestamp as engines print it: vLLM `INFO 07-01 10:00:00`, SGLang `[2025-07-02 07:41:59`,
/// TGI and Go `2024-05-01T10:00:00.123Z`, Python logging `2025-07-02 07:41:59,123`.
fn timestamp_key(line: &str) -> Option<(u32, u32, u32, u32, u32, u64)> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    let re = RE
        .get_or_init(|| {
            Regex::new(
                r"(?:\b\d{4}-)?\b(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?",
            )
            .ok()
        })
        .as_ref()?;
    let c = re.captures(line)?;
    let n = |i: usize| c.get(i).and_then(|m| m.as_str().parse::<u32>().ok());
    let frac = c
        .get(6)
        .map(|m| format!("{:0<9}", m.as_str()))
        .and_then(|f| f.parse::<u64>().ok())
        .unwrap_or(0);
    Some((n(1)?, n(2)?, n(3)?, n(4)?, n(5)?, frac))
}

/// Does `lines` run newest line first? Read from the log: consecutive timestamps that fall
/// rather than rise, and Python tracebacks whose `File "…"` frames stand above their
/// `Traceback (most recent call last):` header rather than below it. A log with neither
/// evidence is taken as written (oldest first, as every engine writes it).
pub fn newest_first(lines: &[String]) -> bool {
    let (mut forward, mut backward) = (0usize, 0usize);
    let mut last: Option<(u32, u32, u32, u32, u32, u64)> = None;
    for l in lines {
        if let Some(k) = timestamp_key(l) {
            if let Some(p) = last {
                if k > p {
                    forward += 1;
                } else if k < p {
                    backward += 1;
                }
            }
            last = Some(k);
        }
    }
    let frame = |l: Option<&String>| l.is_some_and(|l| l.contains("File \""));
    for (i, l) in lines.iter().enumerate() {
        if l.contains("Traceback (most recent call last)") {
            let below = frame(lines.get(i + 1));
            let above = i > 0 && frame(lines.get(i - 1));
            if below {
                forward += 1;
            } else if above {
                backward += 1;
            }
        }
    }
    backward > forward
}

fn first_cause(lines: &[String], api_port: Option<u16>) -> Option<Cause> {
    let mut secondary: Option<Cause> = None;
    for i in 0..lines.len() {
        let Some((cause, is_secondary)) = cause_at(lines, i, api_port) else {
            continue;
        };
        if is_secondary {
            secondary.get_or_insert(cause);
            continue;
        }
        // A GPU allocation that fails while the KV cache is being allocated is the KV cache's
        // failure (llama.cpp logs `cudaMalloc failed: out of memory`, then `failed to allocate
        // buffer for kv cache`): the more specific class, a few lines on, wins.
        if cause.class == FailureClass::CudaOom
            && let Some(kv) = (i + 1..lines.len().min(i + 1 + KV_REFINE_LINES))
                .filter_map(|j| cause_at(lines, j, api_port))
                .map(|(c, _)| c)
                .find(|c| c.class == FailureClass::KvCacheBudget)
        {
            return Some(kv);
        }
        return Some(cause);
    }
    secondary
}

/// How far after a CUDA OOM a KV-cache line still claims it.
const KV_REFINE_LINES: usize = 8;

/// The cause line `i` shows, if any, and whether its row is secondary.
fn cause_at(lines: &[String], i: usize, api_port: Option<u16>) -> Option<(Cause, bool)> {
    let c = compiled();
    let is_wrapper = |l: &str| c.wrappers.iter().any(|w| w.is_match(l));
    let line = &lines[i];
    if is_wrapper(line) {
        return None;
    }
    let next = lines.get(i + 1).filter(|n| !is_wrapper(n));
    let joined: Vec<String> = next
        .map(|n| vec![format!("{line}{n}"), format!("{line} {n}")])
        .unwrap_or_default();
    for (re, row) in &c.rows {
        let text = if re.is_match(line) {
            line.clone()
        } else if let Some(j) = joined.iter().find(|j| re.is_match(j)) {
            // Only a match that needs the wrap: one wholly inside the next line is that line's
            // own, found on its turn.
            if next.is_some_and(|n| re.is_match(n)) {
                continue;
            }
            j.clone()
        } else {
            continue;
        };
        match row.scope {
            Scope::Any => {}
            Scope::ApiPort => {
                if !is_api_bind(lines, i, api_port) {
                    continue;
                }
            }
            Scope::Near(markers) => {
                let near =
                    &lines[i.saturating_sub(NEAR_LINES)..lines.len().min(i + 1 + NEAR_LINES)];
                if !near.iter().any(|l| markers.iter().any(|m| l.contains(m))) {
                    continue;
                }
            }
        }
        return Some((
            Cause {
                class: row.class,
                line_index: i,
                line: text,
                source: row.source,
                remediation: row.remediation,
            },
            row.secondary,
        ));
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_pattern_compiles() {
        for r in TABLE {
            if let SignatureKind::Log(p) = r.signature {
                Regex::new(p).unwrap();
            }
        }
        for (p, _) in WRAPPERS {
            Regex::new(p).unwrap();
        }
    }
}
