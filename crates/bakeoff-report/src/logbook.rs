//! The operator logbook: dated markdown entries with an index, and an archival that moves
//! aged entries out of the index — except those whose text still carries open deferred work.
//!
//! Layout of a logbook directory (default `logbook/`):
//!
//! - `entries/<date>-<title-slug>.md` — one entry: heading `` # `[YYYY-MM-DD]` Title ``, the
//!   summary as a `>` quote, the body, and a `## Links` list of artifacts and commits.
//! - `INDEX.md` — one line per live entry: `` - `[date]` [Title](entries/…md) — summary ``.
//! - `ARCHIVE.md` — archived entries, appended whole, each under a dated marker comment.
//!
//! Archival rules (docs/reports.md): an entry older than `--age` days moves to `ARCHIVE.md`
//! unless its text contains an open-work marker (default "TODO", "retest", "follow-up",
//! "open question", and any unchecked `- [ ]` box; case-insensitive, substring — so a marker
//! in any form keeps the entry). When unsure — no readable date, unreadable file — keep.
//! The index's line count is reported against a target (default 250), never forced: nothing
//! is archived just to meet it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use chrono::NaiveDate;

pub const DEFAULT_MARKERS: &[&str] = &["TODO", "retest", "follow-up", "open question"];
pub const DEFAULT_TARGET_LINES: usize = 250;
pub const INDEX: &str = "INDEX.md";
pub const ARCHIVE: &str = "ARCHIVE.md";
pub const ENTRIES: &str = "entries";

#[derive(Debug, thiserror::Error)]
pub enum LogbookError {
    #[error("cannot read {path} ({source}): check the path and its permissions")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {path}: {source} (check the --dir permissions)")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} is empty: a logbook entry needs a title and a summary")]
    Empty(&'static str),
    #[error("{0} must be on one line (the index keeps one line per entry)")]
    MultiLine(&'static str),
    #[error(
        "--age {age} days before {today} is before the earliest date there is; fix: give a smaller --age"
    )]
    AgeTooLarge { age: u32, today: NaiveDate },
}

fn rerr(path: &Path) -> impl FnOnce(std::io::Error) -> LogbookError + '_ {
    move |source| LogbookError::Read {
        path: path.to_path_buf(),
        source,
    }
}

fn werr(path: &Path) -> impl FnOnce(std::io::Error) -> LogbookError + '_ {
    move |source| LogbookError::Write {
        path: path.to_path_buf(),
        source,
    }
}

/// A new entry as the operator gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewEntry {
    pub date: NaiveDate,
    pub title: String,
    pub summary: String,
    pub body: String,
    pub artifacts: Vec<String>,
    pub commits: Vec<String>,
}

/// An entry as read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Path relative to the logbook directory, e.g. `entries/2026-08-24-oom.md`.
    pub file: String,
    pub date: Option<NaiveDate>,
    pub title: String,
    pub summary: String,
    /// The whole file text.
    pub text: String,
}

fn title_slug(t: &str) -> String {
    let mut out = String::new();
    for c in t.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
        if out.len() >= 60 {
            break;
        }
    }
    let s = out.trim_matches('-').to_string();
    if s.is_empty() { "entry".into() } else { s }
}

/// Replace a file by writing beside it and renaming, so a reader never sees half of it (the
/// logbook's index and archive, and `bakeoff report`'s views).
pub fn write_replace(path: &Path, text: &str) -> Result<(), LogbookError> {
    let mut tmp = path.as_os_str().to_os_string();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text).map_err(werr(&tmp))?;
    std::fs::rename(&tmp, path).map_err(werr(path))
}

fn index_line(e: &Entry) -> String {
    format!(
        "- `[{}]` [{}]({}) — {}",
        e.date
            .map(|d| d.to_string())
            .unwrap_or_else(|| "undated".into()),
        e.title.replace(['[', ']'], ""),
        e.file,
        e.summary
    )
}

fn render(n: &NewEntry) -> String {
    let mut s = format!("# `[{}]` {}\n\n", n.date, n.title.trim());
    for line in n.summary.trim().lines() {
        let _ = writeln!(s, "> {line}");
    }
    s.push('\n');
    let body = n.body.trim();
    if !body.is_empty() {
        s.push_str(body);
        s.push_str("\n\n");
    }
    if !n.artifacts.is_empty() || !n.commits.is_empty() {
        s.push_str("## Links\n\n");
        for a in &n.artifacts {
            let _ = writeln!(s, "- artifact: [{a}]({a})");
        }
        for c in &n.commits {
            let _ = writeln!(s, "- commit: `{c}`");
        }
    }
    s
}

/// Read an entry file's heading date, title and summary. Anything unparseable stays `None`
/// or empty: the archival treats that as "unsure" and keeps the entry.
pub fn parse(file: &str, text: &str) -> Entry {
    let mut date = None;
    let mut title = String::new();
    let mut summary = Vec::new();
    let mut lines = text.lines();
    for line in lines.by_ref() {
        if let Some(h) = line.strip_prefix("# ") {
            let h = h.trim();
            if let Some(rest) = h.strip_prefix("`[")
                && let Some((d, t)) = rest.split_once("]`")
            {
                date = NaiveDate::parse_from_str(d.trim(), "%Y-%m-%d").ok();
                title = t.trim().to_string();
            } else {
                title = h.to_string();
            }
            break;
        }
    }
    // The summary is the first run of `>` lines after the heading (blank lines skipped).
    for line in lines.skip_while(|l| l.trim().is_empty()) {
        match line.strip_prefix('>') {
            Some(q) => summary.push(q.trim().to_string()),
            None => break,
        }
    }
    Entry {
        file: file.to_string(),
        date,
        title,
        summary: summary.join(" "),
        text: text.to_string(),
    }
}

/// Add an entry: write its file and append its line to the index.
pub fn add(dir: &Path, n: &NewEntry) -> Result<Entry, LogbookError> {
    if n.title.trim().is_empty() {
        return Err(LogbookError::Empty("--title"));
    }
    if n.summary.trim().is_empty() {
        return Err(LogbookError::Empty("--summary"));
    }
    if n.title.contains('\n') {
        return Err(LogbookError::MultiLine("--title"));
    }
    if n.summary.contains('\n') {
        return Err(LogbookError::MultiLine("--summary"));
    }
    let edir = dir.join(ENTRIES);
    std::fs::create_dir_all(&edir).map_err(werr(&edir))?;
    let base = format!("{}-{}", n.date, title_slug(&n.title));
    let mut name = format!("{base}.md");
    let mut k = 2;
    while edir.join(&name).exists() {
        name = format!("{base}-{k}.md");
        k += 1;
    }
    let text = render(n);
    let path = edir.join(&name);
    std::fs::write(&path, &text).map_err(werr(&path))?;
    let entry = parse(&format!("{ENTRIES}/{name}"), &text);
    let ipath = dir.join(INDEX);
    let mut index = if ipath.exists() {
        std::fs::read_to_string(&ipath).map_err(rerr(&ipath))?
    } else {
        "# Operator logbook\n\nOne line per live entry; aged entries move to ARCHIVE.md (`bakeoff log archive`).\n\n".to_string()
    };
    if !index.ends_with('\n') {
        index.push('\n');
    }
    index.push_str(&index_line(&entry));
    index.push('\n');
    write_replace(&ipath, &index)?;
    Ok(entry)
}

/// Every live entry, oldest first (undated last).
pub fn list(dir: &Path) -> Result<Vec<Entry>, LogbookError> {
    let edir = dir.join(ENTRIES);
    if !edir.is_dir() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let rd = std::fs::read_dir(&edir).map_err(rerr(&edir))?;
    let mut paths: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file = format!("{ENTRIES}/{name}");
        match std::fs::read_to_string(&p) {
            Ok(text) => out.push(parse(&file, &text)),
            // Listed with no date, so archival keeps it (unsure).
            Err(e) => out.push(Entry {
                file,
                date: None,
                title: format!("(unreadable: {e})"),
                summary: String::new(),
                text: String::new(),
            }),
        }
    }
    out.sort_by_key(|e| (e.date.is_none(), e.date, e.file.clone()));
    Ok(out)
}

/// The open-work markers found in an entry's text (case-insensitive).
pub fn open_markers(text: &str, markers: &[String]) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut found: Vec<String> = markers
        .iter()
        .filter(|m| !m.trim().is_empty() && lower.contains(&m.trim().to_lowercase()))
        .cloned()
        .collect();
    if text.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with("- [ ]") || t.starts_with("* [ ]")
    }) {
        found.push("unchecked box".into());
    }
    found
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArchiveReport {
    /// Entries moved to the archive: (file, title).
    pub moved: Vec<(String, String)>,
    /// Aged entries kept because their text carries open work: (file, markers).
    pub kept_open: Vec<(String, Vec<String>)>,
    /// Entries kept because the archival could not be sure: (file, why).
    pub kept_unsure: Vec<(String, String)>,
    /// Entries younger than the age limit.
    pub young: usize,
    pub index_lines: usize,
    pub target_lines: usize,
}

impl ArchiveReport {
    pub fn over_target(&self) -> bool {
        self.index_lines > self.target_lines
    }

    /// What `bakeoff log archive` prints.
    pub fn render(&self) -> String {
        let mut s = format!(
            "archived {} entr{} to {ARCHIVE}; kept {} aged entr{} with open deferred work, {} where unsure, {} younger than the age limit\n",
            self.moved.len(),
            if self.moved.len() == 1 { "y" } else { "ies" },
            self.kept_open.len(),
            if self.kept_open.len() == 1 {
                "y"
            } else {
                "ies"
            },
            self.kept_unsure.len(),
            self.young
        );
        for (f, t) in &self.moved {
            let _ = writeln!(s, "  moved {f} — {t}");
        }
        for (f, m) in &self.kept_open {
            let _ = writeln!(s, "  kept  {f} — open: {}", m.join(", "));
        }
        for (f, why) in &self.kept_unsure {
            let _ = writeln!(s, "  kept  {f} — unsure: {why}");
        }
        let _ = writeln!(
            s,
            "index {INDEX}: {} lines, {} the {}-line target{}",
            self.index_lines,
            if self.over_target() {
                "above"
            } else {
                "within"
            },
            self.target_lines,
            if self.over_target() {
                " — reported, not forced (entries with open work stay until their work is closed)"
            } else {
                ""
            }
        );
        s
    }
}

/// Move entries older than `age_days` (before `today`) to the archive, keeping those with
/// open work and those it cannot judge.
pub fn archive(
    dir: &Path,
    age_days: u32,
    markers: &[String],
    today: NaiveDate,
    target_lines: usize,
) -> Result<ArchiveReport, LogbookError> {
    let mut rep = ArchiveReport {
        target_lines,
        ..ArchiveReport::default()
    };
    // Checked: `NaiveDate - Days` panics past chrono's earliest date (--age 4294967295).
    let cutoff = today
        .checked_sub_days(chrono::Days::new(u64::from(age_days)))
        .ok_or(LogbookError::AgeTooLarge {
            age: age_days,
            today,
        })?;
    let mut to_move = Vec::new();
    for e in list(dir)? {
        let Some(d) = e.date else {
            rep.kept_unsure.push((
                e.file.clone(),
                "no readable `[YYYY-MM-DD]` date in its heading".into(),
            ));
            continue;
        };
        if d >= cutoff {
            rep.young += 1;
            continue;
        }
        if e.text.trim().is_empty() {
            rep.kept_unsure
                .push((e.file.clone(), "empty or unreadable text".into()));
            continue;
        }
        let open = open_markers(&e.text, markers);
        if !open.is_empty() {
            rep.kept_open.push((e.file.clone(), open));
            continue;
        }
        to_move.push(e);
    }

    let ipath = dir.join(INDEX);
    let index = if ipath.exists() {
        std::fs::read_to_string(&ipath).map_err(rerr(&ipath))?
    } else {
        String::new()
    };
    if !to_move.is_empty() {
        // Order matters for safety: archive first, then the index, then remove the entry.
        // A crash in between leaves an entry in both places, never in neither.
        let apath = dir.join(ARCHIVE);
        let mut archive = if apath.exists() {
            std::fs::read_to_string(&apath).map_err(rerr(&apath))?
        } else {
            "# Operator logbook — archive\n\nEntries moved here by `bakeoff log archive`, whole and unedited.\n".to_string()
        };
        for e in &to_move {
            let _ = write!(
                archive,
                "\n---\n<!-- archived {today} from {} -->\n\n{}",
                e.file, e.text
            );
            if !archive.ends_with('\n') {
                archive.push('\n');
            }
        }
        write_replace(&apath, &archive)?;
        let kept: Vec<&str> = index
            .lines()
            .filter(|l| {
                !to_move
                    .iter()
                    .any(|e| l.contains(&format!("]({})", e.file)))
            })
            .collect();
        let mut new_index = kept.join("\n");
        new_index.push('\n');
        write_replace(&ipath, &new_index)?;
        for e in &to_move {
            let p = dir.join(&e.file);
            std::fs::remove_file(&p).map_err(werr(&p))?;
            rep.moved.push((e.file.clone(), e.title.clone()));
        }
    }
    rep.index_lines = if ipath.exists() {
        std::fs::read_to_string(&ipath)
            .map_err(rerr(&ipath))?
            .lines()
            .count()
    } else {
        0
    };
    Ok(rep)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parse_reads_heading_date_title_and_summary() {
        let e = parse(
            "entries/x.md",
            "# `[2026-08-24]` char-rp seat: OOM root-cause\n\n> One evening.\n> Two lines.\n\nBody TODO.\n",
        );
        assert_eq!(e.date, NaiveDate::from_ymd_opt(2026, 8, 24));
        assert_eq!(e.title, "char-rp seat: OOM root-cause");
        assert_eq!(e.summary, "One evening. Two lines.");
    }

    #[test]
    fn markers_are_case_insensitive_and_boxes_count() {
        let m: Vec<String> = DEFAULT_MARKERS.iter().map(|s| s.to_string()).collect();
        assert_eq!(open_markers("Retest before designing", &m), vec!["retest"]);
        assert_eq!(
            open_markers("- [ ] swap the seat", &m),
            vec!["unchecked box"]
        );
        assert!(open_markers("- [x] done, all closed", &m).is_empty());
    }
}
