//! Why the engine ↔ checkpoint check could not run: the text of its `engine-support-not-checked`
//! finding (a note; the engine checks at its start). A leaf beside the check ([`super`]).

use std::path::PathBuf;

use super::command::CommandError;
use super::image::ImageError;

#[derive(Debug, thiserror::Error)]
pub enum NotChecked {
    #[error(
        "the image {image} is on host {host}'s Docker engine, which this check does not ask; the engine checks at its start"
    )]
    RemoteImage { image: String, host: String },
    #[error(transparent)]
    Image(#[from] ImageError),
    #[error(transparent)]
    Command(#[from] CommandError),
    #[error("{} cannot be read: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not JSON: {source}", path.display())]
    NotJson {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("a Docker seat's Python is its image's")]
    DockerPython,
    #[error("no python beside {} to ask vLLM's registry", .0.display())]
    NoPythonBeside(PathBuf),
    #[error(
        "the launch command {} is neither a Python interpreter nor vLLM's `vllm` script",
        .0.display()
    )]
    NotPython(PathBuf),
    #[error("the image {0} could not be asked")]
    ImageNotAsked(String),
    /// `last`: the last line it printed, at most 200 characters.
    #[error("{python} printed no registry: {last}")]
    NoRegistry { python: String, last: String },
    #[error("the registry answer is not JSON: {0}")]
    RegistryNotJson(#[source] serde_json::Error),
    #[error("the engine binary {} is not here", .0.display())]
    NoBinary(PathBuf),
    #[error(
        "neither the seat's command nor the entrypoint of {0} names the engine binary by its path"
    )]
    NoBinaryPath(String),
    #[error("{} is not a GGUF file", .0.display())]
    NotGguf(PathBuf),
    #[error("{} has no general.architecture in its first {mib} MiB", path.display())]
    NoArchitecture { path: PathBuf, mib: usize },
}
