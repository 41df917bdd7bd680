//! `bakeoff plan`'s text: the per-GPU summary table first, then the arithmetic behind it. Seat
//! names, paths and process names come from files and the driver: every line is escaped.

use bakeoff_term::escape::for_terminal;

use crate::gpu_table::gpu_table_at;
use crate::kv_report::KvReport;
use crate::report::{PlanReport, render_text};

/// The plan as printed at `width` columns (each line ends with a newline).
pub fn terminal(report: &PlanReport, width: u16) -> String {
    let mut out = String::new();
    if let Some(t) = gpu_table_at(&report.gpus, width) {
        out.push_str(&t);
        out.push('\n');
    }
    for l in render_text(report).lines() {
        out.push_str(&for_terminal(l, 2000));
        out.push('\n');
    }
    out
}

/// `bakeoff kv`'s text: the header line first, then the warnings, then the arithmetic.
pub fn kv_terminal(r: &KvReport) -> String {
    let mut it = r.lines.iter();
    let mut out = String::new();
    if let Some(first) = it.next() {
        out.push_str(first);
        out.push('\n');
    }
    for w in &r.warnings {
        out.push_str(&format!("WARNING: {w}\n"));
    }
    for l in it {
        out.push_str(l);
        out.push('\n');
    }
    out
}
