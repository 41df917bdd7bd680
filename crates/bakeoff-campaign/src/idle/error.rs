//! Why a seat's load could not be read: how each endpoint asked missed, and the one line that
//! names them with their likely fix.

use std::fmt;

use bakeoff_artifact::EngineKind;
use bakeoff_client::tls::TlsError;
use bakeoff_client::{ClientBuildError, RequestError, UrlError};

/// Why a seat's load could not be read: one line naming what was tried and the fix.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{}: {source}", label(*.engine))]
    Url {
        engine: EngineKind,
        source: UrlError,
    },
    #[error("{}: {source}", label(*.engine))]
    Tls {
        engine: EngineKind,
        source: TlsError,
    },
    #[error("{}: {source}", label(*.engine))]
    Client {
        engine: EngineKind,
        source: ClientBuildError,
    },
    /// Every endpoint asked missed; `fix` is empty or a parenthesis with a space before it.
    #[error("{} at {url}: {tried}: cannot tell whether it is idle{fix}", label(*.engine))]
    Unreadable {
        engine: EngineKind,
        /// The seat's URL, redacted.
        url: String,
        tried: Box<Tried>,
        fix: &'static str,
    },
}

/// The endpoints asked for a load, and how each missed.
#[derive(Debug)]
pub struct Tried {
    first: Attempt,
    second: Option<Attempt>,
}

#[derive(Debug)]
struct Attempt {
    path: &'static str,
    miss: Miss,
    hint: Hint,
}

impl Tried {
    pub(super) fn one(path: &'static str, miss: Miss, hint: Hint) -> Self {
        Tried {
            first: Attempt { path, miss, hint },
            second: None,
        }
    }

    pub(super) fn two(a: (&'static str, Miss, Hint), b: (&'static str, Miss, Hint)) -> Self {
        Tried {
            first: Attempt {
                path: a.0,
                miss: a.1,
                hint: a.2,
            },
            second: Some(Attempt {
                path: b.0,
                miss: b.1,
                hint: b.2,
            }),
        }
    }
}

/// Two endpoints' misses in one clause; the same failure of both (nothing listening, no answer
/// in time) is said once.
impl fmt::Display for Tried {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = &self.first;
        let Some(b) = &self.second else {
            return f.write_str(&a.miss.describe(a.path, a.hint));
        };
        if let (Miss::Request(x), Miss::Request(y)) = (&a.miss, &b.miss)
            && x.to_string() == y.to_string()
        {
            return f.write_str(
                &a.miss
                    .describe(&format!("{} and {}", a.path, b.path), a.hint),
            );
        }
        write!(
            f,
            "{} and {}",
            a.miss.describe(a.path, a.hint),
            b.miss.describe(b.path, b.hint)
        )
    }
}

pub(super) fn label(engine: EngineKind) -> &'static str {
    match engine {
        EngineKind::LlamaCpp => "llama.cpp",
        EngineKind::Vllm => "vLLM",
        EngineKind::Sglang => "SGLang",
        EngineKind::Generic => "the server",
    }
}

/// The likely cause and fix of a miss, per endpoint and engine.
pub(super) type Hint = fn(&Miss) -> Option<&'static str>;

/// Why one endpoint gave no load.
#[derive(Debug)]
pub(super) enum Miss {
    /// It answered with another status than 200.
    Status(u16),
    /// No answer: refused, timed out, cut.
    Request(RequestError),
    /// 200, but not a list of slots.
    NotSlots(String),
    /// 200, but without this metric.
    Absent(&'static str),
}

impl Miss {
    fn describe(&self, path: &str, hint: Hint) -> String {
        let what = match self {
            Miss::Status(s) => format!("{path} answered {s}"),
            Miss::Request(e) => format!("{path}: {e}"),
            Miss::NotSlots(why) => format!("{path} answered 200 but {why}"),
            Miss::Absent(name) => format!("{path} has no {name}"),
        };
        match hint(self) {
            Some(h) => format!("{what} ({h})"),
            None => what,
        }
    }
}
