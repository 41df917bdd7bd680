//! Where a seat's model is on this host, and the quantization it is told to load, read from its
//! launch arguments. The checkpoint audit ([`crate::hooks`]), the checks before a start, the page
//! cache and the disk the watch samples all read the model the same way.

use std::path::{Path, PathBuf};

use bakeoff_model::args::flag_value;

pub use super::mounts::host_path;
use crate::fleet::launch::Launch;
use crate::fleet::types::{Seat, substitute};

/// The seat's model path on this host and its `--quantization` flag, read from the launch
/// arguments with their placeholders filled in (`{cache}` in every shipped example fleet):
/// `--model`, then `serve MODEL` as vLLM takes it, then llama.cpp's `-m` — the first that names
/// a local path, so `python -m vllm.entrypoints.openai.api_server --model DIR` is the directory,
/// not the module. A Docker seat's container path is mapped back to the host through its mounts.
/// A hub id (`--model ORG/NAME`, llama.cpp `-hf`) is its snapshot in the seat's hub cache, when
/// the cache holds it.
pub(crate) fn model_and_quantization(seat: &Seat) -> Option<(PathBuf, Option<String>)> {
    let (args, mounts) = args_and_mounts(seat);
    let args: Vec<String> = args.iter().map(|a| substitute(a, seat)).collect();
    let served = args
        .iter()
        .position(|a| a == "serve")
        .and_then(|i| args.get(i + 1))
        .filter(|m| !m.starts_with('-'))
        .map(String::as_str);
    let path = [
        flag_value(&args, &["--model"]),
        served,
        flag_value(&args, &["-m"]),
    ]
    .into_iter()
    .flatten()
    .find_map(|m| host_path(Path::new(m), mounts));
    // A hub id the seat's cache holds: the snapshot the engine will load
    // ([`super::hub_snapshot`]), read by every check that reads the model.
    let path = match path {
        Some(p) => p,
        None => super::hub_snapshot::cached(seat)?.ok()?.path,
    };
    Some((path, quantization_flag(seat)))
}

/// The seat's `--quantization` (`-q`) flag, whatever its model is (a hub id, a container path
/// outside the mounts, no `-m` at all).
pub(crate) fn quantization_flag(seat: &Seat) -> Option<String> {
    flag_value(args_and_mounts(seat).0, &["--quantization", "-q"]).map(str::to_string)
}

/// The engine's arguments and (for a Docker seat) its `host:container` mounts.
fn args_and_mounts(seat: &Seat) -> (&[String], &[String]) {
    match &seat.launch {
        Launch::Process(p) => (&p.args, &[]),
        Launch::Docker(d) => (&d.command, &d.mounts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_in_both_forms() {
        let args: Vec<String> = ["serve", "/m", "--quantization=compressed-tensors"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            flag_value(&args, &["--quantization"]),
            Some("compressed-tensors")
        );
    }
}
