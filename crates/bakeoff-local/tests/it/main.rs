//! `bakeoff-local`'s public API without downloading anything: where the provisioned parts
//! live and when a cache counts as provisioned, a provisioned cache left as it is, and a local
//! server's process — started on loopback with the flags it is given, its output in its log,
//! healthy only when `/health` says so, stopped on request — with stand-in programs in place of
//! llama-server (the real one is started by every engine test, through the testkit).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod provision;
mod server;
