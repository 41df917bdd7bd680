//! An export written as one file per seat (`seat export --kubernetes --out DIR`), all or none:
//! every file is rendered and checked before the first is written, and none is ever
//! overwritten (bakeoff never overwrites what it wrote; a file already there stops it before
//! anything is written).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::{Export, KubeError};

impl Export {
    /// Write `DIR/<seat>.yaml` for every seat; the paths written, in order.
    pub fn write_new(&self, dir: &Path) -> Result<Vec<PathBuf>, KubeError> {
        let files = self
            .seats
            .iter()
            .map(|m| Ok((dir.join(format!("{}.yaml", m.seat)), m.yaml()?)))
            .collect::<Result<Vec<_>, KubeError>>()?;
        if let Some((p, _)) = files.iter().find(|(p, _)| p.exists()) {
            return Err(KubeError::Exists(p.clone()));
        }
        std::fs::create_dir_all(dir).map_err(|source| KubeError::Io {
            what: "create",
            path: dir.to_path_buf(),
            source,
        })?;
        for (p, text) in &files {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(p)
                .and_then(|mut f| f.write_all(text.as_bytes()))
                .map_err(|source| KubeError::Io {
                    what: "write",
                    path: p.clone(),
                    source,
                })?;
        }
        Ok(files.into_iter().map(|(p, _)| p).collect())
    }
}
