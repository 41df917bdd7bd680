//! Benchmark: building a context-suite prompt for a 128k-token target after the filler has been
//! tokenized once (goal: ≤ 200 ms on the 2-core development machine, docs/performance.md "Context prompt sizing").
//!
//! It starts the real provisioned llama-server, tokenizes enough filler once through
//! `/tokenize` (with pieces), then times `TokenizedFiller::haystack` plus the message assembly
//! for a 131,072-token haystack at five depths, and prints one JSON object.
//!
//! Run: `cargo run --release -p bakeoff-testkit --example prompt-build`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use bakeoff_artifact::EngineKind;
use bakeoff_client::{Client, ClientOptions, EndpointUrl};
use bakeoff_text::{TokenizedFiller, build_filler};

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let server = bakeoff_testkit::real_llama(4096, 1, &[], dir.path()).await;
    let client = Client::new(
        EndpointUrl::parse(&server.url()).unwrap(),
        ClientOptions::default(),
    );
    let target = 131_072usize;

    let t0 = Instant::now();
    let (sample, _) = build_filler(100, 1);
    let per100 = client
        .tokenize_pieces(EngineKind::LlamaCpp, "", &sample)
        .await
        .unwrap()
        .ids
        .len();
    let sentences = (target + 4096) * 100 / per100 * 11 / 10;
    let (text, bounds) = build_filler(sentences, 1);
    let pieces = client
        .tokenize_pieces(EngineKind::LlamaCpp, "", &text)
        .await
        .unwrap();
    let tokenize_ms = t0.elapsed().as_secs_f64() * 1e3;
    let filler_tokens = pieces.ids.len();

    let t1 = Instant::now();
    let filler = TokenizedFiller::new(text, pieces.ends, &bounds).unwrap();
    let index_ms = t1.elapsed().as_secs_f64() * 1e3;

    let mut build_ms = Vec::new();
    for depth in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let t = Instant::now();
        let (hay, _) = filler
            .haystack(filler.sentence_tokens()[5], target, "The secret access code for the amber-123 archive is 0123abcd-0000-0000-0000-000000000000.", depth)
            .unwrap();
        let prompt = format!(
            "Document 0123456789abcdef. Read the text below.\n\n{hay}\n\nWhat is the code? Reply with the code only."
        );
        let msg = serde_json::json!([{"role": "user", "content": prompt}]);
        std::hint::black_box(&msg);
        build_ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let max = build_ms.iter().cloned().fold(0.0, f64::max);
    println!(
        "{}",
        serde_json::json!({
            "benchmark": "context-prompt-build",
            "target_tokens": target,
            "filler_tokens_tokenized_once": filler_tokens,
            "filler_tokens": filler.len_tokens(),
            "first_tokenization_ms": tokenize_ms,
            "index_ms": index_ms,
            "build_ms_per_depth": build_ms,
            "build_ms_max": max,
            "goal_ms": 200.0,
            "met": max <= 200.0,
        })
    );
    server.stop().await;
}
