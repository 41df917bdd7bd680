//! What the checks accept becomes a typed configuration with the library's types.

use bakeoff_flags::cli::{BenchCommand, Command, EvalCommand};
use bakeoff_load::Mode;

use crate::{check, parse};

#[test]
fn a_sweep_of_levels_becomes_a_load_plan() {
    let Command::Bench(BenchCommand::Run(args)) = parse(&[
        "bench",
        "run",
        "--endpoint",
        "http://127.0.0.1:1",
        "--concurrency",
        "1,2,4",
        "--requests",
        "8",
    ]) else {
        panic!("not bench run")
    };
    let cfg = match args.validate() {
        Ok(cfg) => cfg,
        Err(e) => panic!("{e}"),
    };
    match &cfg.plan.mode {
        Mode::Closed { concurrency } => assert_eq!(concurrency, &vec![1, 2, 4]),
        other => panic!("{other:?}"),
    }
    assert_eq!(cfg.plan.bound.requests, Some(8));
    assert!(
        cfg.calibrate,
        "the harness ceiling is measured unless --no-calibrate"
    );
    assert!(cfg.versus.is_none());
}

#[test]
fn no_endpoint_means_the_embedded_default_with_its_sizes() {
    let Command::Eval(EvalCommand::Run(args)) = parse(&[
        "eval",
        "run",
        "--local-ctx",
        "4096",
        "--local-parallel",
        "2",
    ]) else {
        panic!("not eval run")
    };
    let cfg = match args.validate() {
        Ok(cfg) => cfg,
        Err(e) => panic!("{e}"),
    };
    assert_eq!((cfg.local.ctx, cfg.local.parallel), (4096, 2));
    assert!(check(&["eval", "run", "--endpoint", "https://example.invalid:8443"]).is_ok());
}
