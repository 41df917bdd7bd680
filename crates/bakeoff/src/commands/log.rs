//! `bakeoff log add|list|archive`: the operator logbook.

use bakeoff_report::escape::for_terminal;
use bakeoff_report::logbook::{self, NewEntry};
use bakeoff_report::logbook_text;

use crate::exit::{Error, Exit};
use bakeoff_flags::cli::{LogCommand, LogDirArgs};
use bakeoff_flags::config::{LogAddConfig, LogArchiveConfig, default_markers};

pub fn run(c: LogCommand) -> Result<Exit, Error> {
    match c {
        LogCommand::Add(a) => add(a.validate()?),
        LogCommand::List(a) => list(a),
        LogCommand::Archive(a) => archive(a.validate()?),
    }
}

fn add(a: LogAddConfig) -> Result<Exit, Error> {
    let body = a.body.read()?;
    let n = NewEntry {
        date: a.date,
        title: a.title.clone(),
        summary: a.summary.clone(),
        body,
        artifacts: a.artifacts.clone(),
        commits: a.commits.clone(),
    };
    let e = logbook::add(&a.dir, &n)?;
    stdoutln!("{}", logbook_text::added(&a.dir, &e));
    Ok(Exit::Ok)
}

fn list(a: LogDirArgs) -> Result<Exit, Error> {
    let entries = logbook::list(&a.dir)?;
    for l in logbook_text::list(&a.dir, &entries, &default_markers()) {
        stdoutln!("{l}");
    }
    Ok(Exit::Ok)
}

fn archive(a: LogArchiveConfig) -> Result<Exit, Error> {
    let r = logbook::archive(&a.dir, a.age, &a.markers, a.today, a.target)?;
    for l in r.render().lines() {
        stdoutln!("{}", for_terminal(l, 2000));
    }
    Ok(Exit::Ok)
}
