//! Scripted servers through `bakeoff_client`, as the tests that use them meet them.

use std::sync::Arc;
use std::time::Duration;

use bakeoff_client::{Client, ClientOptions, EndpointUrl, RequestError, Timeouts};
use bakeoff_testkit::scripted::{self, Scripted};
use bakeoff_wire::{ChatRequest, Message};

fn client(s: &Scripted) -> Client {
    client_with(s, ClientOptions::default())
}

fn client_with(s: &Scripted, opts: ClientOptions) -> Client {
    Client::new(EndpointUrl::parse(&s.url()).unwrap(), opts)
}

fn hello() -> ChatRequest {
    ChatRequest::new("m", vec![Message::user("Say hello.")], 8, true)
}

async fn get(c: &Client, path: &str) -> (u16, serde_json::Value) {
    let (status, body) = c
        .get_text(c.url().root_path(path), Duration::from_secs(30))
        .await
        .unwrap();
    (status, serde_json::from_str(&body).unwrap())
}

#[tokio::test]
async fn the_vllm_like_server_serves_its_window_and_a_streamed_reply() {
    let s = scripted::serve(scripted::vllm_like(4096)).await;
    let c = client(&s);
    let (status, models) = get(&c, "v1/models").await;
    assert_eq!(status, 200);
    assert_eq!(models["data"][0]["max_model_len"], 4096);
    let (_, version) = get(&c, "version").await;
    assert_eq!(version["version"], "0.11.0");
    let ex = c.chat_stream(&hello()).await;
    assert!(ex.error.is_none(), "{:?}", ex.error);
    assert_eq!(ex.reply.content, "Hello there");
    assert_eq!(ex.reply.finish_reason.as_deref(), Some("stop"));
    assert_eq!(ex.reply.usage.as_ref().unwrap().completion_tokens, Some(2));
    assert!(ex.reply.saw_done);
}

#[tokio::test]
async fn the_reasoning_model_answers_in_reasoning_alone() {
    let s = scripted::serve(scripted::reasoning_only()).await;
    let ex = client(&s).chat_stream(&hello()).await;
    assert!(ex.error.is_none(), "{:?}", ex.error);
    assert_eq!(ex.reply.content, "");
    assert_eq!(ex.reply.reasoning, "Let me think about this greeting.");
    assert_eq!(ex.reply.usage.unwrap().reasoning_tokens(), Some(8));
}

/// The first requests are answered, the next ones held without a byte: the count says how
/// many arrived, and the client's own first-byte limit ends the held one.
#[tokio::test]
async fn answers_then_holds_counts_and_holds() {
    let (count, mut seen) = tokio::sync::watch::channel(0);
    let s = scripted::serve(scripted::answers_then_holds(1, Arc::new(count))).await;
    let c = client_with(
        &s,
        ClientOptions {
            timeouts: Timeouts {
                connect: Duration::from_secs(10),
                first_byte: Duration::from_millis(500),
                idle: Duration::from_secs(10),
                total: Duration::from_secs(30),
            },
            ..Default::default()
        },
    );
    let ex = c.chat_stream(&hello()).await;
    assert!(ex.error.is_none(), "{:?}", ex.error);
    assert_eq!(ex.reply.content, "Hello");
    let ex = c.chat_stream(&hello()).await;
    assert!(
        matches!(ex.error, Some(RequestError::FirstByteTimeout { .. })),
        "{:?}",
        ex.error
    );
    seen.wait_for(|n| *n == 2).await.unwrap();
}

#[tokio::test]
async fn failing_servers_answer_with_the_engines_statuses() {
    let s = scripted::serve(scripted::all_500()).await;
    let (status, body) = get(&client(&s), "any/path").await;
    assert_eq!(status, 500);
    assert_eq!(body["error"]["code"], 500);

    let s = scripted::serve(scripted::unauthorized()).await;
    let c = client(&s);
    assert_eq!(
        get(&c, "v1/models").await.0,
        200,
        "the models list stays public"
    );
    let ex = c.chat_stream(&hello()).await;
    assert_eq!(ex.reply.status, Some(401), "{:?}", ex.error);
    assert!(ex.error.is_some());
}

#[test]
fn word_pieces_rebuild_their_text() {
    for text in [
        "Hello there, world",
        "  leading and trailing  ",
        "one\nline\tafter another",
        "",
        "single",
    ] {
        let pieces = scripted::word_pieces(text);
        assert_eq!(pieces.concat(), text);
        // Each piece but a trailing run of whitespace ends in a word.
        for p in &pieces[..pieces.len().saturating_sub(1)] {
            assert!(!p.ends_with(char::is_whitespace), "{p:?} of {text:?}");
        }
    }
    assert_eq!(scripted::word_pieces("a bb  ccc"), ["a", " bb", "  ccc"]);
}
