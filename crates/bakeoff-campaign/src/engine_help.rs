//! The engine's own word on its flags: a variant that sets a flag the engine does not have is
//! found before anything starts, by asking the engine binary for its `--help` (a local process
//! seat: llama.cpp b11434 `llama-server --help` lists every flag as `-ctk, --cache-type-k TYPE`;
//! argparse engines list theirs as `--max-model-len MAX_MODEL_LEN`). The help text is read once
//! per binary and kept for the process. Where the help cannot be asked (a Docker seat, a binary
//! that does not answer within [`HELP_TIMEOUT`], a text that lists no flags) nothing is said:
//! the engine's own refusal at start stays the evidence (`bad-argument`).

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use bakeoff_seats::fleet::Launch;
use bakeoff_seats::{Fleet, process::substitute};

use crate::variant::Variant;

/// How long a binary may take to print its help (llama-server b11434 takes ~50 ms).
pub const HELP_TIMEOUT: Duration = Duration::from_secs(10);

/// Fewer flags than this and the text is not a flag list (an error, a banner).
const MIN_FLAGS: usize = 5;

/// The flags each binary's `--help` listed (`None`: it could not be asked), per resolved path.
fn cache() -> &'static Mutex<HashMap<PathBuf, Option<BTreeSet<String>>>> {
    static C: OnceLock<Mutex<HashMap<PathBuf, Option<BTreeSet<String>>>>> = OnceLock::new();
    C.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Every `-x` / `--long-flag` a help text lists.
pub fn flags_in_help(help: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for token in help.split(|c: char| {
        c.is_whitespace() || matches!(c, ',' | '[' | ']' | '|' | '(' | ')' | '{' | '}')
    }) {
        let token = token.split('=').next().unwrap_or_default();
        let name = token.trim_start_matches('-');
        let dashes = token.len() - name.len();
        if (1..=2).contains(&dashes)
            && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            out.insert(token.trim_end_matches('.').to_string());
        }
    }
    out
}

/// The flags `bin --help` lists, read once per binary.
async fn help_flags(bin: &str) -> Option<BTreeSet<String>> {
    let key = std::fs::canonicalize(bin).unwrap_or_else(|_| PathBuf::from(bin));
    if let Ok(c) = cache().lock()
        && let Some(known) = c.get(&key)
    {
        return known.clone();
    }
    let mut cmd = tokio::process::Command::new(&key);
    cmd.arg("--help")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let known = match tokio::time::timeout(HELP_TIMEOUT, cmd.output()).await {
        Ok(Ok(out)) => {
            let text = format!(
                "{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            Some(flags_in_help(&text)).filter(|f| f.len() >= MIN_FLAGS)
        }
        _ => None,
    };
    if let Ok(mut c) = cache().lock() {
        c.insert(key, known.clone());
    }
    known
}

/// The flags `v` sets that its base seat does not, and that the engine's `--help` does not
/// list, as one sentence; `None` when every flag is known or the help cannot be asked.
pub async fn unknown_flags(fleet: &Fleet, v: &Variant) -> Option<String> {
    let Launch::Process(p) = &v.seat.launch else {
        return None;
    };
    let base: Vec<String> = match fleet.seat(&v.base_seat).map(|s| &s.launch) {
        Some(Launch::Process(b)) => b.args.clone(),
        _ => Vec::new(),
    };
    let flag_of = |a: &str| a.split('=').next().unwrap_or_default().to_string();
    let candidates: Vec<String> = p
        .args
        .iter()
        .filter(|a| {
            a.starts_with('-') && a.len() > 1 && !a[1..].starts_with(|c: char| c.is_ascii_digit())
        })
        .map(|a| flag_of(a))
        .filter(|f| !base.iter().any(|b| flag_of(b) == *f))
        .collect();
    if candidates.is_empty() {
        return None;
    }
    let bin = substitute(&p.command, &v.seat);
    // `python -m vllm.entrypoints…` (or `python3 launch_server.py`): the interpreter's own
    // `--help` lists the interpreter's flags, not the engine's; ask nothing rather than refuse
    // every engine flag as unknown.
    let file = std::path::Path::new(&bin)
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_default();
    if file.starts_with("python") {
        return None;
    }
    let known = help_flags(&bin).await?;
    let mut unknown: Vec<String> = candidates
        .into_iter()
        .filter(|f| !known.contains(f))
        .collect();
    unknown.dedup();
    if unknown.is_empty() {
        return None;
    }
    Some(format!(
        "{} {} not a flag of {bin} (its --help does not list {}): fix the ladder or set_args/add_args; flags differ between engine versions",
        unknown.join(", "),
        if unknown.len() == 1 { "is" } else { "are" },
        if unknown.len() == 1 { "it" } else { "them" },
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_read_from_llama_cpp_and_argparse_help() {
        let llama = "-ctk,  --cache-type-k TYPE              KV cache data type for K\n-c,    --ctx-size N                     size of the prompt context\n--no-warmup                             skip warming up\n-h,    --help, --usage                  print usage and exit\n--port PORT                             port to listen (default: 8080)";
        let f = flags_in_help(llama);
        for want in [
            "-ctk",
            "--cache-type-k",
            "-c",
            "--ctx-size",
            "--no-warmup",
            "--help",
            "--usage",
            "--port",
        ] {
            assert!(f.contains(want), "{want} not in {f:?}");
        }
        assert!(!f.contains("-1"));
        let argparse = "usage: vllm serve [-h] [--max-model-len MAX_MODEL_LEN]\n  --enforce-eager, --no-enforce-eager\n  --kv-cache-dtype {auto,fp8}";
        let f = flags_in_help(argparse);
        for want in [
            "-h",
            "--max-model-len",
            "--enforce-eager",
            "--no-enforce-eager",
            "--kv-cache-dtype",
        ] {
            assert!(f.contains(want), "{want} not in {f:?}");
        }
    }
}
