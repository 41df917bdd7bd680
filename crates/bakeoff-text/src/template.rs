//! Normalized chat-template hashes.
//!
//! In docs/field-cases.md F4 a stale template across three derivative checkpoints was found only
//! by hashing every build by hand; the hash must ignore what editors and `git` change (CRLF,
//! trailing spaces, a final newline) and nothing else.

use sha2::{Digest, Sha256};

/// What identifies a chat template: the artifact vocabulary's type, computed here.
pub use bakeoff_artifact::TemplateFingerprint;

/// CRLF and lone CR become LF, trailing whitespace is cut from every line, trailing blank lines
/// are dropped. Leading whitespace is kept: Jinja whitespace control makes it meaningful.
pub fn normalize_template(text: &str) -> String {
    let unified = text.replace("\r\n", "\n").replace('\r', "\n");
    let mut lines: Vec<&str> = unified.lines().map(str::trim_end).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines.join("\n")
}

pub fn fingerprint(text: &str) -> TemplateFingerprint {
    let norm = normalize_template(text);
    let sha256 = hex::encode(Sha256::digest(norm.as_bytes()));
    TemplateFingerprint {
        short: sha256[..16].to_string(),
        sha256,
        lines: if norm.is_empty() {
            0
        } else {
            norm.lines().count()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_endings_and_trailing_space_do_not_change_the_hash() {
        let a = fingerprint("{% for m in messages %}\n  {{ m.content }}\n{% endfor %}\n");
        let b =
            fingerprint("{% for m in messages %}  \r\n  {{ m.content }}\r\n{% endfor %}\r\n\r\n");
        assert_eq!(a, b);
        assert_eq!(a.lines, 3);
        assert_eq!(a.short.len(), 16);
    }

    #[test]
    fn leading_whitespace_does_change_the_hash() {
        assert_ne!(fingerprint("a\n b"), fingerprint("a\nb"));
    }

    #[test]
    fn known_digest() {
        // sha256("abc"), FIPS 180-2 appendix B.1.
        assert_eq!(
            fingerprint("abc").sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
