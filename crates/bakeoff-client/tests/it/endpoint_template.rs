//! `audit template URL`: an endpoint's chat template from llama.cpp's `/props`, and the refusal
//! where there is none (the real llama-server's case is the binary's `plan_audit` test).

use axum::Router;
use axum::routing::get;
use bakeoff_client::discovery::template::{EndpointTemplateError, endpoint_template};

/// A llama.cpp-shaped `/props` (llama-server b11434 serves `chat_template` there), with or
/// without a template.
async fn props(template: Option<&'static str>) -> String {
    let body = match template {
        Some(t) => {
            serde_json::json!({"chat_template": t, "default_generation_settings": {"n_ctx": 512}})
        }
        None => serde_json::json!({"default_generation_settings": {"n_ctx": 512}}),
    };
    let app = Router::new().route("/props", get(move || async move { axum::Json(body) }));
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(l, app).await;
    });
    url
}

#[tokio::test]
async fn the_template_at_props_is_labelled_by_the_endpoint() {
    let url = props(Some("{{ messages }}")).await;
    let t = endpoint_template(&url, None).await.unwrap();
    assert_eq!(t.label, url);
    assert_eq!(t.text, "{{ messages }}");
    assert_eq!(t.source, "endpoint /props chat_template");
}

#[tokio::test]
async fn an_endpoint_without_a_template_is_refused_with_the_fix() {
    let url = props(None).await;
    let e = endpoint_template(&url, None).await.unwrap_err();
    assert!(
        matches!(e, EndpointTemplateError::NoTemplate { .. }),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!(
            "{url}: the endpoint exposes no chat template (llama.cpp /props has none, or it is not llama.cpp); fix: audit the model directory instead"
        )
    );
    let bad = endpoint_template("ftp://x", None).await.unwrap_err();
    assert!(matches!(bad, EndpointTemplateError::Url(_)), "{bad:?}");
}

/// Nothing listens: the endpoint cannot be reached, said as such with the fix, never "exposes
/// no chat template".
#[tokio::test]
async fn an_endpoint_that_does_not_answer_is_unreachable_not_templateless() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", l.local_addr().unwrap());
    drop(l);
    let e = endpoint_template(&url, None).await.unwrap_err();
    assert!(
        matches!(e, EndpointTemplateError::Unreachable { .. }),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(
        text.starts_with(&format!("{url}: cannot reach the endpoint (")),
        "{text}"
    );
    assert!(
        text.ends_with("; fix: start the server, or check the URL and port"),
        "{text}"
    );
}
