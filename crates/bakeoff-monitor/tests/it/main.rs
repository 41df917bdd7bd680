//! `bakeoff-monitor`'s public API on a scripted series: samples of a seat that grows and then
//! stops answering, folded into findings, turned into gauges and exported in Prometheus' text
//! format — read back with the project's own parser of that format, and scraped over HTTP from
//! the exporter.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod export;
