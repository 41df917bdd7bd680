//! The seeded generator the load engine draws its schedules and lengths from: `bakeoff-stats`'
//! SplitMix64 (its reference values are tested there), under the path the engine's modules name.

pub use bakeoff_stats::SplitMix64;
