//! A container path mapped back to the host through a seat's bind mounts: the one mapping
//! (`seat up`'s checks, the watch's disk readings and `plan` all use it).

use std::path::{Path, PathBuf};

/// `host:container[:opts]` mounts, longest container prefix first: the one mapping of a
/// container path back to the host (`seat up`'s audit and `plan` both use it). Without mounts the path is
/// taken as a host path; a hub id (`org/name`) is not a local path and is not audited.
pub fn host_path(model: &Path, mounts: &[String]) -> Option<PathBuf> {
    if !model.is_absolute() && !model.starts_with(".") {
        return None;
    }
    if mounts.is_empty() {
        return Some(model.to_path_buf());
    }
    let mut best: Option<(usize, PathBuf)> = None;
    for m in mounts {
        let mut parts = m.splitn(3, ':');
        let (Some(host), Some(container)) = (parts.next(), parts.next()) else {
            continue;
        };
        if let Ok(rest) = model.strip_prefix(container) {
            let len = container.len();
            if best.as_ref().is_none_or(|(l, _)| len > *l) {
                best = Some((len, Path::new(host).join(rest)));
            }
        }
    }
    best.map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_paths_map_back_through_mounts() {
        let mounts = vec![
            "/srv/models:/models:ro".to_string(),
            "/srv/models/big:/models/big".to_string(),
        ];
        assert_eq!(
            host_path(Path::new("/models/a"), &mounts),
            Some(PathBuf::from("/srv/models/a"))
        );
        assert_eq!(
            host_path(Path::new("/models/big/x"), &mounts),
            Some(PathBuf::from("/srv/models/big/x"))
        );
        assert_eq!(host_path(Path::new("/elsewhere/x"), &mounts), None);
        assert_eq!(host_path(Path::new("Qwen/Qwen3-8B"), &[]), None);
    }
}
