//! What an export can fail on.

#[derive(Debug, thiserror::Error)]
pub enum KubeError {
    #[error(transparent)]
    UnknownSeat(#[from] bakeoff_seats::fleet::UnknownSeat),
    #[error("seat {0}: a process seat has no image; give it a [seat.docker] launch to export it")]
    ProcessSeat(String),
    #[error("seat {seat}: {message}")]
    Seat { seat: String, message: String },
    #[error("{0}")]
    Namespace(String),
    #[error(
        "the fleet has no Docker seat to export (process seats have no image): give a seat a [seat.docker] launch"
    )]
    NothingToExport,
    #[error("cannot render a manifest as YAML: {0}")]
    Yaml(String),
    #[error("document {index}: {message}")]
    Parse { index: usize, message: String },
    /// A manifest file is already where the export would write it.
    #[error(
        "{} already exists: bakeoff never overwrites a file; move it away or give another --out",
        .0.display()
    )]
    Exists(std::path::PathBuf),
    /// The output directory or a manifest file could not be made.
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}
