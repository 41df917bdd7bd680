//! What the load tests share: a client with explicit timeouts and a closed-loop plan.

use std::time::Duration;

use bakeoff_client::{Client, ClientOptions, EndpointUrl, Timeouts};
use bakeoff_load::{LengthSpec, LoadPlan, Mode, StepBound};

/// A client on `url`: 5 s to connect, then `first_byte`, `idle` and `total` as given.
pub fn client(url: &str, first_byte: Duration, idle: Duration, total: Duration) -> Client {
    Client::new(
        EndpointUrl::parse(url).unwrap(),
        ClientOptions {
            timeouts: Timeouts {
                connect: Duration::from_secs(5),
                first_byte,
                idle,
                total,
            },
            api_key: None,
            ..Default::default()
        },
    )
}

/// A closed-loop sweep of `model` over `levels`, `requests` per step after one warm-up request,
/// with fixed prompt and output lengths.
pub fn closed_plan(
    model: &str,
    levels: Vec<u32>,
    requests: u64,
    prompt_tokens: u32,
    output_tokens: u32,
) -> LoadPlan {
    let mut p = LoadPlan::new(model);
    p.mode = Mode::Closed {
        concurrency: levels,
    };
    p.bound = StepBound {
        requests: Some(requests),
        duration: None,
        completed: None,
    };
    p.warmup_requests = 1;
    p.prompt_tokens = LengthSpec::Fixed(prompt_tokens);
    p.output_tokens = LengthSpec::Fixed(output_tokens);
    p
}
