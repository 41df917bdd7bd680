//! Runs a measurement and writes its artifact: `eval run`'s suites ([`evaluate`]), `bench
//! run`'s sweep ([`bench`]), the damage of a quantization ([`damage`]) and an adapter's effect
//! ([`adapter`]), each from a typed request that names its output the one way ([`Output`]), and
//! the harness ceiling their load steps are checked against ([`ceiling`]).
//!
//! The suites themselves are `bakeoff_suites`'; this crate drives them. It never prints: each
//! driver reports progress as events ([`describe`] has their words) and whoever draws decides
//! what a person sees.

pub mod adapter;
pub mod bench;
pub mod ceiling;
pub mod damage;
pub mod describe;
pub mod evaluate;
pub mod output;

pub use output::{Naming, Output};
