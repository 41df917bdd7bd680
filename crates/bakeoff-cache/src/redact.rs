//! Masks credentials in a process command line before it is printed or written: a download
//! loop is often started with its token on the command line (`hf download --token hf_…`), and
//! the audit names that command. A tiny local masker, because this crate must not depend on
//! bakeoff-seats (which owns the full redaction rules).

/// What a secret is replaced with (the same word bakeoff-seats uses).
pub const REDACTED: &str = "<redacted>";

/// Hugging Face tokens: `hf_` then at least this many letters and digits.
const HF_MIN: usize = 8;

/// Flags whose next argument is a credential.
const SECRET_FLAGS: [&str; 2] = ["--token", "--hf-token"];

/// The command line of `pid` (read by `bakeoff_host::proc`), arguments joined with spaces,
/// secrets masked. Empty when the process is gone or its command line cannot be read (a
/// kernel thread, another user's process under hidepid).
pub fn cmdline_of(pid: u32) -> String {
    bakeoff_host::ProcRoot::system()
        .cmdline_args(pid)
        .map(|args| redact_args(&args).join(" "))
        .unwrap_or_default()
}

/// Redacts an argument vector: the argument after `--token`/`--hf-token`, the value of
/// `--token=X`/`--hf-token=X`, and any `hf_…` token anywhere.
pub fn redact_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut next_is_secret = false;
    for arg in args {
        if next_is_secret {
            next_is_secret = false;
            out.push(REDACTED.to_string());
            continue;
        }
        if SECRET_FLAGS.contains(&arg.as_str()) {
            next_is_secret = true;
            out.push(arg.clone());
            continue;
        }
        if let Some((flag, _)) = arg.split_once('=')
            && SECRET_FLAGS.contains(&flag)
        {
            out.push(format!("{flag}={REDACTED}"));
            continue;
        }
        out.push(mask_hf_tokens(arg));
    }
    out
}

/// Replaces every `hf_` followed by at least [`HF_MIN`] ASCII letters or digits.
pub fn mask_hf_tokens(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("hf_") {
        let tail = &rest[at + 3..];
        let run = tail
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric())
            .count();
        // A token starts a word: `xhf_abc…` in a path is not one, but `=hf_…` or `:hf_…` is.
        let starts_word = rest[..at]
            .bytes()
            .last()
            .is_none_or(|b| !b.is_ascii_alphanumeric());
        if run >= HF_MIN && starts_word {
            out.push_str(&rest[..at]);
            out.push_str(REDACTED);
            rest = &tail[run..];
        } else {
            out.push_str(&rest[..at + 3]);
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn token_flags_and_hf_tokens_are_masked() {
        let got = redact_args(&args(&[
            "hf",
            "download",
            "--token",
            "abc",
            "--hf-token=secret",
            "HF_TOKEN=hf_ABCDEFGH1234",
            "org/model",
        ]));
        assert_eq!(
            got,
            args(&[
                "hf",
                "download",
                "--token",
                REDACTED,
                "--hf-token=<redacted>",
                "HF_TOKEN=<redacted>",
                "org/model",
            ])
        );
    }

    #[test]
    fn short_or_embedded_hf_words_are_kept() {
        assert_eq!(mask_hf_tokens("hf_short"), "hf_short");
        assert_eq!(mask_hf_tokens("/x/shf_ABCDEFGHIJ"), "/x/shf_ABCDEFGHIJ");
    }
}
