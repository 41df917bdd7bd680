//! The evidence registry: every artifact under a directory, with the verdicts and retractions
//! stored beside them. Reading never changes a file.
//!
//! A `.json` file that is not an artifact is skipped with a note; an artifact of a schema
//! version this build does not know is refused with the reason (and listed, so the reader
//! knows evidence was left out rather than missing).
//!
//! A campaign's directory also holds `campaign.json` (the campaign record, read into
//! [`Registry::campaign`]) and `campaign.journal.jsonl`: neither is ever taken for a run
//! artifact.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bakeoff_artifact::campaign::CampaignRecord;
use bakeoff_artifact::{Artifact, ArtifactKind, RunStatus, StoreError, SuiteStatus};

use crate::evidence::{
    RetractionRecord, VerdictRecord, read_retraction, read_verdict, retraction_path, sha256_file,
};

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("{0} is not a directory (give the --out directory of `bakeoff eval run`)")]
    NotADir(PathBuf),
    #[error("cannot list {path}: {source}")]
    List {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A verdict named a candidate the directory holds no artifact of (the operator's input).
#[derive(Debug, thiserror::Error)]
#[error(
    "no artifact for candidate {slug:?} under {} ({}); give the slug of an artifact there, or --out DIR",
    dir.display(),
    held(candidates)
)]
pub struct NoArtifactFor {
    pub slug: String,
    pub dir: PathBuf,
    /// The slugs the directory does hold, for the operator to pick from.
    pub candidates: Vec<String>,
}

/// The slugs an artifact's directory holds, said in words; slugs come from artifacts' files,
/// so they are escaped.
fn held(candidates: &[String]) -> String {
    if candidates.is_empty() {
        "it holds none".to_string()
    } else {
        format!(
            "candidates there: {}",
            crate::escape::for_terminal(&candidates.join(", "), 500)
        )
    }
}

/// One artifact file and what the registry knows about it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub path: PathBuf,
    /// Path relative to the registry directory, `/`-separated: how reports name the file.
    pub name: String,
    pub artifact: Artifact,
    pub retraction: Option<RetractionRecord>,
    /// The artifact's bytes changed after it was retracted (its sha256 differs).
    pub changed_since_retraction: bool,
    /// The parts of the artifact that do not read as their suite's shape, left out of every
    /// table ([`crate::read::of_artifact`]).
    pub unread: Vec<crate::read::Unread>,
}

impl Entry {
    pub fn is_retracted(&self) -> bool {
        self.retraction.is_some()
    }

    /// A failure artifact, an incomplete run, or a run with a suite that measured nothing.
    pub fn is_negative(&self) -> bool {
        self.artifact.kind == ArtifactKind::Failure
            || self.artifact.status == RunStatus::Incomplete
            || self
                .artifact
                .suites
                .values()
                .any(|s| s.status == SuiteStatus::Failed)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Registry {
    pub dir: PathBuf,
    /// Sorted by slug, then creation time, then name.
    pub entries: Vec<Entry>,
    pub verdicts: BTreeMap<String, VerdictRecord>,
    /// Files skipped or refused, each with the reason.
    pub notes: Vec<String>,
    /// `DIR/campaign.json`, when the directory is a campaign's and its record could be read
    /// (an unreadable one is a note).
    pub campaign: Option<CampaignRecord>,
    /// Seat monitor series under the directory (`bakeoff seat monitor`), with their summaries.
    pub monitors: Vec<crate::monitor::MonitorRun>,
}

impl Registry {
    /// Entries that count: every artifact that is not retracted.
    pub fn counted(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|e| !e.is_retracted())
    }

    pub fn retracted(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter().filter(|e| e.is_retracted())
    }

    /// What the report left out, in words: each part of an artifact that did not read as its
    /// suite's shape, named by its file (untrusted text: escape it where shown).
    pub fn unread(&self) -> Vec<String> {
        self.entries
            .iter()
            .flat_map(|e| e.unread.iter().map(move |u| format!("{}: {u}", e.name)))
            .collect()
    }

    /// Slugs with at least one artifact (retracted or not), in order.
    pub fn slugs(&self) -> Vec<String> {
        let mut s: Vec<String> = self
            .entries
            .iter()
            .map(|e| e.artifact.candidate.slug.clone())
            .collect();
        s.dedup();
        s
    }

    pub fn entries_of<'a>(&'a self, slug: &str) -> impl Iterator<Item = &'a Entry> + 'a {
        let slug = slug.to_string();
        self.entries
            .iter()
            .filter(move |e| e.artifact.candidate.slug == slug)
    }

    /// What a verdict on `slug` is scoped by: its newest counted artifact (else its newest,
    /// when every one is retracted) and the names of the counted ones.
    pub fn verdict_basis(&self, slug: &str) -> Result<(&Entry, Vec<String>), NoArtifactFor> {
        let entries: Vec<&Entry> = self.entries_of(slug).collect();
        let newest = entries
            .iter()
            .rev()
            .find(|e| !e.is_retracted())
            .or(entries.last())
            .ok_or_else(|| NoArtifactFor {
                slug: slug.to_string(),
                dir: self.dir.clone(),
                candidates: self.slugs(),
            })?;
        let counted = entries
            .iter()
            .filter(|e| !e.is_retracted())
            .map(|e| e.name.clone())
            .collect();
        Ok((newest, counted))
    }
}

/// The campaign record of a campaign's directory.
pub const CAMPAIGN_FILE: &str = "campaign.json";

fn list_json(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), RegistryError> {
    let rd = std::fs::read_dir(dir).map_err(|source| RegistryError::List {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            list_json(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
    Ok(())
}

fn rel_name(dir: &Path, p: &Path) -> String {
    p.strip_prefix(dir)
        .unwrap_or(p)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// Read every artifact under `dir` (recursively), with its verdicts and retractions.
pub fn load(dir: &Path) -> Result<Registry, RegistryError> {
    if !dir.is_dir() {
        return Err(RegistryError::NotADir(dir.to_path_buf()));
    }
    let mut files = Vec::new();
    list_json(dir, &mut files)?;
    let mut reg = Registry {
        dir: dir.to_path_buf(),
        ..Registry::default()
    };
    let campaign = dir.join(CAMPAIGN_FILE);
    if campaign.is_file() {
        match bakeoff_artifact::read_versioned::<CampaignRecord>(&campaign) {
            Ok(c) => reg.campaign = Some(c),
            Err(e) => reg.notes.push(format!(
                "campaign record {CAMPAIGN_FILE} not read: {}",
                crate::campaign::store_reason(&e)
            )),
        }
    }
    for p in files {
        let name = rel_name(dir, &p);
        if name.ends_with(".retraction.json") {
            continue; // read with its artifact
        }
        if p.file_name().is_some_and(|f| f == CAMPAIGN_FILE) {
            // A campaign record, never a run artifact: the directory's own is read above.
            if name != CAMPAIGN_FILE {
                reg.notes.push(format!(
                    "skipped {name}: a campaign record, not a run artifact (report its directory to see its ladder)"
                ));
            }
            continue;
        }
        if crate::monitor::is_summary(&name) {
            continue; // a seat monitor's summary: read with its series below
        }
        if name.ends_with(".verdict.json") {
            match read_verdict(&p) {
                Ok(v) => {
                    reg.verdicts.insert(v.slug.clone(), v);
                }
                Err(e) => reg.notes.push(format!("verdict refused: {e}")),
            }
            continue;
        }
        match bakeoff_artifact::read_artifact(&p) {
            Ok(artifact) => {
                let rpath = retraction_path(&p);
                let mut retraction = None;
                if rpath.exists() {
                    match read_retraction(&rpath) {
                        Ok(r) => retraction = Some(r),
                        // An unreadable retraction still withdraws the result: when unsure,
                        // do not count it.
                        Err(e) => {
                            reg.notes.push(format!(
                                "retraction unreadable, {name} is not counted: {e}"
                            ));
                            retraction = Some(RetractionRecord {
                                schema_version: 0,
                                artifact: name.clone(),
                                slug: artifact.candidate.slug.clone(),
                                reason: format!("(unreadable retraction record: {e})"),
                                date: artifact.created_at,
                                artifact_sha256: String::new(),
                                claims: crate::evidence::claims_of(&artifact),
                            })
                        }
                    }
                }
                let changed_since_retraction = match &retraction {
                    Some(r) if !r.artifact_sha256.is_empty() => {
                        sha256_file(&p).map(|h| h != r.artifact_sha256).unwrap_or(true)
                    }
                    _ => false,
                };
                if changed_since_retraction {
                    reg.notes.push(format!(
                        "{name} changed after it was retracted (sha256 differs from its retraction record)"
                    ));
                }
                reg.entries.push(Entry {
                    path: p,
                    name,
                    unread: crate::read::of_artifact(&artifact),
                    artifact,
                    retraction,
                    changed_since_retraction,
                });
            }
            // No schema_version at all: some other JSON file, not an artifact.
            Err(StoreError::Version { found: 0, .. }) => reg.notes.push(format!(
                "skipped {name}: not a bakeoff artifact (no schema_version)"
            )),
            Err(StoreError::Version {
                found, expected, ..
            }) => reg.notes.push(format!(
                "refused {name}: schema_version {found}, this bakeoff reads version {expected} (upgrade bakeoff)"
            )),
            Err(StoreError::Parse { source, .. }) => {
                reg.notes
                    .push(format!("skipped {name}: not a bakeoff artifact ({source})"))
            }
            Err(e) => reg.notes.push(format!("skipped {name}: {e}")),
        }
    }
    reg.monitors = crate::monitor::load(dir, &mut reg.notes);
    reg.entries.sort_by(|a, b| {
        (&a.artifact.candidate.slug, a.artifact.created_at, &a.name).cmp(&(
            &b.artifact.candidate.slug,
            b.artifact.created_at,
            &b.name,
        ))
    });
    Ok(reg)
}
