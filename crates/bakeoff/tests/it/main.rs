//! The integration tests of `bakeoff` as one test binary, one module per subject and the helpers
//! they share in `util`. Run one module with its path as the filter: `cargo test -p bakeoff --test
//! it bench::`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod audit_cache;
mod audit_seat;
mod bench;
mod bench_shapes;
mod bench_telemetry;
mod bench_versus;
mod bench_workloads;
mod campaign;
mod cli_help;
mod conditions;
mod endpoint_failures;
mod engine_support;
mod errors_with_fixes;
mod eval_adapter;
mod eval_compare_contaminated;
mod eval_context;
mod eval_damage;
mod eval_damage_along;
mod eval_foundation;
mod eval_probing;
mod eval_progress;
mod eval_refusal;
mod eval_suites_compare;
mod exit_codes;
mod gateway;
mod kv;
mod placement;
mod plan_audit;
mod plan_remote;
mod report_browser;
mod report_real;
mod screen_width;
mod seat_api_key;
mod seat_cli;
mod seat_down;
mod seat_export;
mod seat_load_conditions;
mod seat_monitor;
mod seat_monitor_export;
mod seat_warm_cache;
mod tls;
mod util;
mod vllm_tier;
