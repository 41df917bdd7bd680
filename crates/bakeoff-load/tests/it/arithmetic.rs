//! Metric arithmetic against hand-computed values (docs/metrics.md), and seeded schedule
//! statistics (computed, never timed).

use std::time::Duration;

use bakeoff_client::{ChunkStamp, Exchange, Reply, RequestError};
use bakeoff_load::Slo;
use bakeoff_load::measure::{StepAccumulator, measure, tpot};
use bakeoff_load::schedule::{self, Arrival};
use bakeoff_wire::{Timings, Usage};

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

fn stamp(at: u64, content: u32, reasoning: u32) -> ChunkStamp {
    ChunkStamp {
        at: ms(at),
        content_chars: content,
        reasoning_chars: reasoning,
        tool_chars: 0,
    }
}

/// A reply: reasoning at 100 ms, content at 150, 170, 230 ms; ends at 250 ms; the server says
/// 5 completion tokens (one chunk carried two), prompt 40 ms, decode 200 ms at 20 tok/s.
fn reply() -> Exchange {
    Exchange {
        reply: Reply {
            status: Some(200),
            content: "abc".into(),
            reasoning: "r".into(),
            finish_reason: Some("length".into()),
            usage: Some(Usage {
                prompt_tokens: Some(12),
                completion_tokens: Some(5),
                total_tokens: Some(17),
                completion_tokens_details: None,
                prompt_tokens_details: None,
            }),
            timings: Some(Timings {
                prompt_ms: Some(40.0),
                predicted_ms: Some(200.0),
                predicted_per_second: Some(20.0),
                cache_n: Some(3),
                ..Timings::default()
            }),
            first_byte: Some(ms(90)),
            ttft: Some(ms(100)),
            ttfot: Some(ms(150)),
            e2e: ms(250),
            chunks: vec![
                stamp(100, 0, 1),
                stamp(150, 1, 0),
                stamp(170, 2, 0),
                stamp(230, 1, 0),
            ],
            events: 6,
            saw_done: true,
            ..Reply::default()
        },
        error: None,
    }
}

#[test]
fn tpot_itl_ttft_by_hand() {
    let m = measure(7, ms(10), ms(12), 5, &reply());
    // TPOT = (250 − 100) / (5 − 1) = 37.5 ms.
    assert_eq!(m.tpot, Some(Duration::from_micros(37_500)));
    assert_eq!(m.record.tpot_ms, Some(37.5));
    // ITL: 150−100, 170−150, 230−170.
    assert_eq!(m.itl, vec![ms(50), ms(20), ms(60)]);
    assert_eq!(m.record.ttft_ms, Some(100.0));
    assert_eq!(m.record.ttfot_ms, Some(150.0));
    assert_eq!(m.record.output_tokens, Some(5));
    assert_eq!(m.record.token_source, "usage");
    assert_eq!(m.lateness, ms(2));
    // Client decode = 1 / 37.5 ms = 26.67 tok/s against the server's 20.
    assert!((m.client_decode_tps.unwrap() - 1000.0 / 37.5).abs() < 1e-9);
    assert_eq!(tpot(ms(100), ms(100), 1), None, "one token has no TPOT");
}

#[test]
fn client_count_is_a_labelled_fallback() {
    let mut ex = reply();
    ex.reply.usage = None;
    let m = measure(0, ms(0), ms(0), 5, &ex);
    assert_eq!(m.record.output_tokens, Some(4));
    assert_eq!(m.record.token_source, "client-chunks");
}

#[test]
fn step_summary_by_hand() {
    let slo = Slo {
        ttft: Some(ms(120)),
        tpot: Some(ms(40)),
        e2e: None,
    };
    let mut acc = StepAccumulator::new(Some(slo), true).unwrap();
    // Request 0: as above, sent 2 ms late. Request 1: ttft 300 ms (misses the SLO).
    acc.add(measure(0, ms(0), ms(2), 5, &reply()));
    let mut slow = reply();
    slow.reply.ttft = Some(ms(300));
    slow.reply.e2e = ms(400);
    acc.add(measure(1, ms(100), ms(100), 5, &slow));
    // Request 2: dropped mid-stream.
    let mut bad = reply();
    bad.error = Some(RequestError::Stream {
        message: "reset".into(),
    });
    acc.add(measure(2, ms(200), ms(201), 5, &bad));
    let s = acc.finish("c=1".into(), Duration::from_secs(2));
    assert_eq!((s.sent, s.ok), (3, 2));
    assert_eq!(s.errors.get("stream"), Some(&1));
    assert_eq!(s.output_tokens, 10);
    assert_eq!(s.output_tokens_per_second, Some(5.0));
    assert_eq!(s.requests_per_second, Some(1.0));
    // 3 sends, first intended at 0, last sent at 201 ms: (3 − 1) / 0.201 s.
    assert!((s.achieved_rate.unwrap() - 2.0 / 0.201).abs() < 1e-6);
    // 10 tokens over 8 text chunks.
    assert_eq!(s.tokens_per_chunk, Some(1.25));
    let g = s.goodput.unwrap();
    assert_eq!((g.met, g.of), (1, 3));
    assert_eq!(s.latency.ttft.count, 2);
    // Corrected TTFT adds lateness: 100 + 2 and 300 + 0.
    assert!((s.latency.ttft_corrected.min_ms.unwrap() - 102.0).abs() < 0.2);
    let rec = s.reconciliation.unwrap();
    assert_eq!(rec.requests_with_timings, 2);
    assert_eq!(rec.cache_n_total, 6);
    // TTFT / prompt_ms: 100/40 = 2.5 and 300/40 = 7.5 → median 5.
    assert_eq!(rec.ttft_ratio_p50, Some(5.0));
    // E2E − (40 + 200): 10 and 160 → 85.
    assert_eq!(rec.unaccounted_ms_p50, Some(85.0));
    assert_eq!(s.requests.len(), 3);
    assert_eq!(s.requests[2].error.as_deref(), Some("stream"));
}

#[test]
fn poisson_schedule_statistics() {
    let rate = 2000.0;
    let offs = schedule::offsets(Arrival::Poisson, rate, Some(200_000), None, 42);
    assert_eq!(offs.len(), 200_000);
    let (mean, cv) = schedule::gap_stats(&offs).unwrap();
    // Mean gap 1/λ = 0.5 ms; with 200k samples the standard error is 0.22 %, so 1 % is > 4σ.
    assert!(
        (mean - 1.0 / rate).abs() / (1.0 / rate) < 0.01,
        "mean gap {mean}"
    );
    // An exponential has CV 1.
    assert!((cv - 1.0).abs() < 0.02, "cv {cv}");
    // Same seed, same schedule; another seed, another one.
    assert_eq!(
        offs[..100],
        schedule::offsets(Arrival::Poisson, rate, Some(100), None, 42)[..]
    );
    assert_ne!(
        offs[..100],
        schedule::offsets(Arrival::Poisson, rate, Some(100), None, 43)[..]
    );
}

/// `--arrival gamma --burstiness K`: gaps of mean 1/λ whatever K, and coefficient of variation
/// 1/√K (vLLM's `--burstiness`: K = 1 is Poisson, K < 1 burstier). With 200k gaps the sample
/// mean's relative standard error is CV/√n ≤ 0.45 %, and the sample CV's about
/// √((κ − 1)/n)/2 with the gamma's kurtosis κ = 3 + 6/K: 0.3 % at K = 4, 1.1 % at K = 0.25; the
/// tolerances (2 % for the mean, 2 % + 1 %/K for the CV) are more than 3σ.
#[test]
fn gamma_schedule_mean_and_cv_match_the_shape() {
    let rate = 50.0;
    for k in [0.25f64, 0.5, 1.0, 2.0, 4.0] {
        let arrival = Arrival::Gamma { burstiness: k };
        let offs = schedule::offsets(arrival, rate, Some(200_001), None, 7);
        let (mean, cv) = schedule::gap_stats(&offs).unwrap();
        let want_cv = 1.0 / k.sqrt();
        eprintln!(
            "gamma K={k}: mean gap {mean:.6} s (1/λ = {}), CV {cv:.4} (1/√K = {want_cv:.4})",
            1.0 / rate
        );
        assert!(
            (mean * rate - 1.0).abs() < 0.02,
            "K={k}: mean gap {mean}, want {}",
            1.0 / rate
        );
        assert!(
            (cv / want_cv - 1.0).abs() < 0.02 + 0.01 / k,
            "K={k}: CV {cv}, want {want_cv}"
        );
        // Seeded: the same seed replays it, another seed does not.
        assert_eq!(
            offs[..50],
            schedule::offsets(arrival, rate, Some(50), None, 7)[..]
        );
        assert_ne!(
            offs[..50],
            schedule::offsets(arrival, rate, Some(50), None, 8)[..]
        );
    }
    // K = 1 is a Poisson process in distribution (CV 1), though drawn by another method.
    let (_, cv) = schedule::gap_stats(&schedule::offsets(
        Arrival::Gamma { burstiness: 1.0 },
        rate,
        Some(100_000),
        None,
        3,
    ))
    .unwrap();
    assert!((cv - 1.0).abs() < 0.03, "{cv}");
    // The flag: gamma alone takes a shape, and a positive one.
    assert_eq!(
        Arrival::parse_with("gamma", Some(0.5)).unwrap(),
        Arrival::Gamma { burstiness: 0.5 }
    );
    assert!(Arrival::parse_with("gamma", Some(0.0)).is_err());
    assert!(Arrival::parse_with("poisson", Some(0.5)).is_err());
    assert_eq!(Arrival::Gamma { burstiness: 0.5 }.label(), "gamma k=0.5");
}

/// `--ramp-up R` in open loop: the rate climbs linearly from 0 to λ over R, so about λR/2
/// arrivals, all inside the ramp, and the share arrived by time t is (t/R)² — a quarter by the
/// ramp's middle. Closed loop: workers start evenly over the ramp.
#[test]
fn ramp_up_schedule_climbs_linearly() {
    let (rate, ramp) = (2000.0, Duration::from_secs(10));
    for arrival in [
        Arrival::Constant,
        Arrival::Poisson,
        Arrival::Gamma { burstiness: 0.5 },
    ] {
        let offs = schedule::ramp_offsets(arrival, rate, ramp, 11);
        let n = offs.len() as f64;
        assert!((n / 10_000.0 - 1.0).abs() < 0.03, "{arrival:?}: {n}");
        assert!(offs.windows(2).all(|w| w[0] <= w[1]) && offs.iter().all(|o| *o < ramp));
        let first_half = offs.iter().filter(|o| **o < ramp / 2).count() as f64;
        assert!(
            (first_half / n - 0.25).abs() < 0.02,
            "{arrival:?}: {first_half} of {n} in the first half"
        );
        assert_eq!(offs, schedule::ramp_offsets(arrival, rate, ramp, 11));
    }
    let starts = schedule::ramp_worker_starts(4, Duration::from_secs(8));
    assert_eq!(starts, [0, 2, 4, 6].map(Duration::from_secs).to_vec());
}

#[test]
fn constant_schedule_and_duration_bound() {
    let offs = schedule::offsets(
        Arrival::Constant,
        10.0,
        None,
        Some(Duration::from_secs(2)),
        1,
    );
    assert_eq!(offs.len(), 20);
    assert_eq!(offs[1], Duration::from_millis(100));
    let (_, cv) = schedule::gap_stats(&offs).unwrap();
    assert!(cv < 1e-6);
    assert!(schedule::offsets(Arrival::Poisson, 5.0, None, None, 1).is_empty());
    let capped = schedule::offsets(
        Arrival::Constant,
        10.0,
        Some(5),
        Some(Duration::from_secs(2)),
        1,
    );
    assert_eq!(capped.len(), 5);
}

#[test]
fn overhead_growth_from_server_histograms_when_no_timings() {
    // vLLM and SGLang send no per-request timings: the flag reads the client/server E2E ratio
    // from /metrics instead. Steps at 1.02×, 1.04× (within 5 % of the first) and 1.20×.
    let mut steps = Vec::new();
    for (label, ratio) in [("c=1", 1.02), ("c=2", 1.04), ("c=4", 1.20)] {
        let mut acc = StepAccumulator::new(None, false).unwrap();
        let mut ex = reply();
        ex.reply.timings = None;
        acc.add(measure(0, ms(0), ms(0), 5, &ex));
        let mut s = acc.finish(label.into(), Duration::from_secs(1));
        assert!(s.reconciliation.is_none(), "no per-request timings");
        s.metrics = Some(bakeoff_artifact::MetricsDelta {
            family: "vllm".into(),
            deltas: Default::default(),
            generation_tokens: None,
            client_server_token_ratio: None,
            spec_decode: None,
            server_ttft_mean_ms: None,
            server_e2e_mean_ms: Some(100.0),
            client_server_ttft_ratio: None,
            client_server_e2e_ratio: Some(ratio),
        });
        steps.push(s);
    }
    let flags = bakeoff_load::reconcile::flag_overhead_growth(&mut steps);
    assert_eq!(flags.len(), 1, "{flags:?}");
    assert!(flags[0].message.starts_with("step c=4"));
    assert!(
        steps[2]
            .flags
            .iter()
            .any(|f| f.code == "client-overhead-growing")
    );
    assert!(steps[1].flags.is_empty());
}

/// `--cancel-rate`: an aborted request is sent but neither ok nor an error, in no latency, its
/// received chunks counted; the server's generated tokens beyond the completed requests' are
/// what it counted for the cancelled ones, and the token ratio counts them on the client's
/// side instead of showing a mismatch.
#[test]
fn a_cancelled_request_is_counted_apart_and_reconciled() {
    let mut acc = StepAccumulator::new(None, true).unwrap();
    // Completed: 5 tokens. Drawn for cancellation but finished first: 5 more.
    acc.add(measure(0, ms(0), ms(0), 5, &reply()));
    acc.add(measure(1, ms(0), ms(0), 5, &reply()).with_abort(Some(4), false));
    let mut cut = reply();
    cut.reply.chunks.truncate(2);
    cut.reply.usage = None;
    cut.reply.saw_done = false;
    acc.add(measure(2, ms(0), ms(0), 5, &cut).with_abort(Some(2), true));
    let tally = acc.cancel_tally();
    let s = acc.finish("c=1".into(), Duration::from_secs(1));
    assert_eq!((s.sent, s.ok), (3, 2));
    assert!(s.errors.is_empty(), "{:?}", s.errors);
    assert_eq!(s.output_tokens, 10);
    assert_eq!(
        s.latency.ttft.count, 2,
        "the aborted request is in no latency"
    );
    assert_eq!(s.requests[2].cancelled_after, Some(2));
    assert_eq!(
        (tally.planned, tally.cancelled, tally.tokens_received),
        (2, 1, 2)
    );
    // The server generated 14: 10 for the completions, 4 for the aborted one (2 of them after
    // the client had gone).
    let mut m = bakeoff_artifact::MetricsDelta {
        family: "llamacpp".into(),
        deltas: Default::default(),
        generation_tokens: Some(14.0),
        client_server_token_ratio: Some(10.0 / 14.0),
        spec_decode: None,
        server_ttft_mean_ms: None,
        server_e2e_mean_ms: None,
        client_server_ttft_ratio: None,
        client_server_e2e_ratio: None,
    };
    let c = bakeoff_load::shapes::cancellations(0.5, tally, Some(&m), s.output_tokens);
    assert_eq!((c.cancelled, c.finished_first), (1, 1));
    assert_eq!(
        (c.server_tokens, c.server_extra_tokens),
        (Some(4.0), Some(2.0))
    );
    assert!(
        c.detail.contains("2 generated after the clients had gone"),
        "{}",
        c.detail
    );
    bakeoff_load::shapes::reconcile_tokens(&mut m, s.output_tokens, tally);
    assert_eq!(m.client_server_token_ratio, Some(12.0 / 14.0));
}
