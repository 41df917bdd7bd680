#![allow(clippy::unwrap_used)]
use super::*;

#[test]
fn target_parsing() {
    assert_eq!(
        parse_targets("4k, 16K,window,8192").unwrap(),
        vec![
            TargetSpec::Tokens(4096),
            TargetSpec::Tokens(16384),
            TargetSpec::Window,
            TargetSpec::Tokens(8192)
        ]
    );
    assert!(parse_targets("4q").is_err());
    assert!(parse_targets("0").is_err());
    assert!(parse_targets("").is_err());
    assert_eq!(parse_depths("0,50,100%").unwrap(), vec![0.0, 0.5, 1.0]);
    assert!(parse_depths("120").is_err());
}

#[test]
fn clamping_and_skipping() {
    let p = plan_targets(
        &[
            TargetSpec::Tokens(4096),
            TargetSpec::Tokens(16384),
            TargetSpec::Window,
        ],
        8192,
    );
    assert_eq!(p[0].clamped, Some(4096));
    assert_eq!(
        p[1].clamped, None,
        "16k cannot fit an 8k window: skipped, never sent"
    );
    assert_eq!(p[2].clamped, Some(8192 - u64::from(OUTPUT_BUDGET)));
    // An explicit 8192 and `window` clamp to the same size: sent once.
    let p = plan_targets(&[TargetSpec::Tokens(8192), TargetSpec::Window], 8192);
    assert_eq!(p.len(), 1);
}

#[test]
fn default_targets_are_powers_of_two_up_to_the_window() {
    assert_eq!(
        default_targets(32768),
        vec![
            TargetSpec::Tokens(4096),
            TargetSpec::Tokens(8192),
            TargetSpec::Tokens(16384),
            TargetSpec::Window
        ]
    );
    assert_eq!(default_targets(4096), vec![TargetSpec::Window]);
    assert_eq!(
        default_targets(6000),
        vec![TargetSpec::Tokens(4096), TargetSpec::Window]
    );
}

#[test]
fn tolerance_rule() {
    assert_eq!(tolerance(1000), 16);
    assert_eq!(tolerance(3200), 16);
    assert_eq!(tolerance(32768), 164);
    assert_eq!(tolerance(131072), 656);
}

#[test]
fn needles_are_unique_and_uuid_shaped() {
    let mut r = SplitMix64::new(1);
    let (n1, c1) = needle(&mut r);
    let (_, c2) = needle(&mut r);
    assert_ne!(c1, c2);
    assert_eq!(c1.len(), 36);
    assert_eq!(c1.matches('-').count(), 4);
    assert!(!n1.is_empty());
}
