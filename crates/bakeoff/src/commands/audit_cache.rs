//! `bakeoff audit cache PATH… [--json]`: the model download caches — per repository its
//! snapshots and size on disk, every partial download and what it is doing, every lock and its
//! holder — then the problems, each with its fix. Exit 1 when a problem was found (an incomplete
//! download, a lock held by a process that is not progressing), 2 when a PATH is not a cache.

use bakeoff_cache::{AuditOptions, audit_paths, render};
use bakeoff_report::table::width;

use crate::exit::{Error, Exit};
use bakeoff_flags::cli::AuditCacheArgs;

pub fn run(a: AuditCacheArgs) -> Result<Exit, Error> {
    // A PATH that is missing or no cache is a usage error: one line naming it and the fix.
    let report = audit_paths(&a.paths, &AuditOptions::default())?;
    if a.json {
        stdoutln!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(Error::json)?
        );
    } else {
        for line in render::lines(&report, width()) {
            stdoutln!("{}", super::screen(&line));
        }
    }
    Ok(Exit::from_ok(report.ok))
}
