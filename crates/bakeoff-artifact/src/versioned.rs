//! The one reader of the versioned JSON files bakeoff writes (artifacts, verdict and
//! retraction records). Every such file is a JSON object with a `schema_version`; a reader
//! refuses a version it does not know rather than guess at its fields. The writers are
//! [`crate::write_atomic`] (a file bakeoff owns and may rewrite) and [`crate::write_new`]
//! (never over an existing file).

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::StoreError;

/// A file format bakeoff writes and reads back.
pub trait Versioned: Serialize + DeserializeOwned {
    /// What the file is, as errors name it: `artifact`, `verdict record`.
    const WHAT: &'static str;
    /// The `schema_version` this build writes and reads.
    const VERSION: u32;
}

impl Versioned for crate::Artifact {
    const WHAT: &'static str = "artifact";
    const VERSION: u32 = crate::SCHEMA_VERSION;
}

/// Read a versioned file: a file that is not JSON, or JSON without `schema_version` (found 0),
/// or of another version, is an error naming the file and what it should have been.
pub fn read_versioned<T: Versioned>(path: &Path) -> Result<T, StoreError> {
    let text = std::fs::read_to_string(path).map_err(|source| StoreError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let parse = |source| StoreError::Parse {
        path: path.to_path_buf(),
        what: T::WHAT,
        source,
    };
    let raw: serde_json::Value = serde_json::from_str(&text).map_err(parse)?;
    let found = raw
        .get("schema_version")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    if found != u64::from(T::VERSION) {
        return Err(StoreError::Version {
            path: path.to_path_buf(),
            what: T::WHAT,
            found,
            expected: T::VERSION,
        });
    }
    serde_json::from_value(raw).map_err(parse)
}
