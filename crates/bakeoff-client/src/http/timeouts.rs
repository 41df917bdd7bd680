//! How long each network wait of a request may take.

use std::time::Duration;

/// Every network wait is bounded. The first-byte budget must cover prompt processing: a long
/// prompt on CPU can take minutes before the first token, so it is generous by default.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timeouts {
    pub connect: Duration,
    /// Request sent → first body byte (headers and prefill included).
    pub first_byte: Duration,
    /// Longest silence between two body chunks once the body has started.
    pub idle: Duration,
    /// The whole request, start to last byte.
    pub total: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(10),
            first_byte: Duration::from_secs(300),
            idle: Duration::from_secs(60),
            total: Duration::from_secs(900),
        }
    }
}
