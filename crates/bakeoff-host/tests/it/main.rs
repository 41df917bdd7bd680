//! bakeoff-host's public readings against this machine as it is: the GPU readings on a host
//! without an NVIDIA driver (unavailable, each with why), and `/proc` read for real — this test
//! process itself, children it starts, a socket it listens on, a file it opens and locks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod gpu;
mod processes;
mod sockets_and_files;
mod system;
