//! The seat monitor in the report: each `<stem>.monitor.jsonl` under the directory with the
//! summary beside it (`bakeoff seat monitor`, docs/fleet.md "Monitor"), as a terminal table
//! (also what `seat monitor` prints when it ends) and as an HTML section with two time charts
//! per monitor — each seat's footprint and its probe latency over time, outages shaded.
//!
//! A series whose summary is missing (a monitor that was killed) is still drawn from its
//! samples, and says so. Everything a seat sent (an error message) is escaped.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use bakeoff_artifact::monitor::{
    MonitorFinding, MonitorSample, MonitorSummary, SERIES_SUFFIX, SUMMARY_SUFFIX, bytes_text,
    per_day_text, read_series,
};

use crate::escape::{for_html as h, for_terminal};
use crate::table::{Grid, Kind, render, width};

/// One monitor's files.
#[derive(Debug, Clone)]
pub struct MonitorRun {
    /// The series file, relative to the report's directory.
    pub name: String,
    pub path: PathBuf,
    /// `None`: the monitor did not end cleanly (or its summary did not read: a note says why).
    pub summary: Option<MonitorSummary>,
    pub samples: Vec<MonitorSample>,
}

/// Every monitor series under `dir`, recursively; what could not be read goes to `notes`.
pub fn load(dir: &Path, notes: &mut Vec<String>) -> Vec<MonitorRun> {
    let mut files = Vec::new();
    list(dir, &mut files);
    files.sort();
    let mut out = Vec::new();
    for p in files {
        let name = p
            .strip_prefix(dir)
            .unwrap_or(&p)
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        let (samples, skipped) = match read_series(&p) {
            Ok(v) => v,
            Err(e) => {
                notes.push(format!("monitor series {name} not read: {e}"));
                continue;
            }
        };
        if skipped > 0 {
            notes.push(format!(
                "monitor series {name}: {skipped} line(s) skipped (a torn last line, or another version's)"
            ));
        }
        let summary_path = summary_of(&p);
        let summary = match summary_path.as_deref().filter(|s| s.is_file()) {
            Some(s) => match bakeoff_artifact::read_versioned::<MonitorSummary>(s) {
                Ok(v) => Some(v),
                Err(e) => {
                    notes.push(format!("monitor summary beside {name} not read: {e}"));
                    None
                }
            },
            None => {
                notes.push(format!(
                    "monitor series {name} has no summary (the monitor did not end cleanly): drawn from its samples"
                ));
                None
            }
        };
        out.push(MonitorRun {
            name,
            path: p,
            summary,
            samples,
        });
    }
    out
}

fn list(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            list(&p, out);
        } else if p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(SERIES_SUFFIX))
        {
            out.push(p);
        }
    }
}

/// `x.monitor.jsonl` → `x.monitor.json`.
fn summary_of(series: &Path) -> Option<PathBuf> {
    let name = series.file_name()?.to_str()?;
    let stem = name.strip_suffix(SERIES_SUFFIX)?;
    Some(series.with_file_name(format!("{stem}{SUMMARY_SUFFIX}")))
}

/// Whether a file is a monitor summary (the registry leaves it to this module).
pub fn is_summary(name: &str) -> bool {
    name.ends_with(SUMMARY_SUFFIX)
}

/// A monitor's summary as a table, one row per seat, then its findings and notes.
pub fn terminal(s: &MonitorSummary) -> String {
    terminal_at(s, width())
}

/// [`terminal`] laid out for `width` columns.
pub fn terminal_at(s: &MonitorSummary, width: u16) -> String {
    let mut t = Grid::new();
    t.column("seat", Kind::Name(40))
        .secondary("host", Kind::Name(20))
        .column("answered", Kind::Number)
        .column("probe p50 / max", Kind::Number)
        .column("footprint first → last", Kind::Text)
        .column("slope", Kind::Number)
        .secondary("max waiting", Kind::Number)
        .secondary("aliases", Kind::Words);
    for r in &s.seats {
        t.row(vec![
            for_terminal(&r.seat, 200),
            for_terminal(&r.host, 100),
            answered_text(r),
            r.latency_ms
                .map(|l| format!("{:.0} / {:.0} ms", l.p50, l.max))
                .unwrap_or_else(|| "-".into()),
            match (r.first_bytes, r.last_bytes, r.footprint_source) {
                (Some(a), Some(b), Some(src)) => {
                    format!("{} → {} ({})", bytes_text(a), bytes_text(b), src.as_str())
                }
                _ => "not read".into(),
            },
            r.slope_bytes_per_day
                .map(per_day_text)
                .unwrap_or_else(|| "-".into()),
            r.max_waiting
                .map(|w| format!("{w:.0}"))
                .unwrap_or_else(|| "-".into()),
            for_terminal(&r.aliases.join(", "), 400),
        ]);
    }
    let mut out = format!(
        "seat monitor of {} — {} tick(s) every {} s, {} to {} ({})\n{}\n",
        for_terminal(&s.fleet, 200),
        s.ticks,
        s.interval_s,
        s.started_at.format("%Y-%m-%d %H:%M:%S UTC"),
        s.ended_at.format("%H:%M:%S"),
        s.ended_by,
        render(&t, width)
    );
    if s.findings.is_empty() {
        out.push_str(&format!(
            "no finding (drift threshold +{} % and {})\n",
            s.thresholds.percent,
            bytes_text(s.thresholds.min_bytes)
        ));
    }
    for f in &s.findings {
        out.push_str(&format!("finding {}\n", for_terminal(&f.text(), 600)));
    }
    for n in &s.notes {
        out.push_str(&format!("note: {}\n", for_terminal(n, 400)));
    }
    out
}

/// `11/14 (11 reasoning only, 1 restart)`: ticks answered of ticks sampled, and what else
/// the series saw.
fn answered_text(r: &bakeoff_artifact::monitor::SeatSeries) -> String {
    let mut extra = Vec::new();
    if r.reasoning_only > 0 {
        extra.push(format!("{} reasoning only", r.reasoning_only));
    }
    if r.restarts > 0 {
        extra.push(format!(
            "{} restart{}; footprint since the last",
            r.restarts,
            if r.restarts == 1 { "" } else { "s" }
        ));
    }
    if extra.is_empty() {
        format!("{}/{}", r.answered, r.samples)
    } else {
        format!("{}/{} ({})", r.answered, r.samples, extra.join(", "))
    }
}

/// The report's terminal lines for every monitor of the directory, laid out for `width`.
pub fn terminal_runs(runs: &[MonitorRun], width: u16) -> String {
    let mut out = String::new();
    for r in runs {
        out.push('\n');
        match &r.summary {
            Some(s) => out.push_str(&terminal_at(s, width)),
            None => out.push_str(&format!(
                "seat monitor {}: {} sample(s), no summary (the monitor did not end cleanly)\n",
                for_terminal(&r.name, 300),
                r.samples.len()
            )),
        }
    }
    out
}

/// Seats in the order the series first names them.
fn seats_of(samples: &[MonitorSample]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for s in samples {
        if !v.contains(&s.seat) {
            v.push(s.seat.clone());
        }
    }
    v
}

/// The unit the time axis reads best in, for a span of `max_s` seconds.
fn time_unit(max_s: f64) -> (&'static str, f64) {
    if max_s > 4.0 * 3600.0 {
        ("h", 3600.0)
    } else if max_s > 300.0 {
        ("min", 60.0)
    } else {
        ("s", 1.0)
    }
}

/// The HTML section: per monitor, its seats table, findings, and the two charts.
pub fn html_section(runs: &[MonitorRun]) -> String {
    let mut out = String::from("<h2 id=\"monitor\">Seat monitor</h2>");
    out.push_str("<p class=\"muted\">Each tick: a real short completion per seat (a reply that is all reasoning counts as alive), its latency, the seat's memory footprint labelled with its source (GPU per process, Docker stats, process RSS), and the queue from <code>/metrics</code>. Outages are shaded.</p>");
    for r in runs {
        let _ = write!(out, "<h3>{}</h3>", h(&r.name));
        match &r.summary {
            Some(s) => summary_html(&mut out, s),
            None => out.push_str(
                "<p><strong>No summary:</strong> the monitor did not end cleanly; the charts are drawn from its samples.</p>",
            ),
        }
        charts(&mut out, r);
    }
    out
}

fn summary_html(out: &mut String, s: &MonitorSummary) {
    let _ = write!(
        out,
        "<p class=\"muted\">{} — {} tick(s) every {} s, {} to {} ({}); drift threshold +{} % and {}.</p>",
        h(&s.fleet),
        s.ticks,
        s.interval_s,
        h(&s.started_at.format("%Y-%m-%d %H:%M:%S UTC").to_string()),
        h(&s.ended_at.format("%H:%M:%S").to_string()),
        h(&s.ended_by),
        s.thresholds.percent,
        h(&bytes_text(s.thresholds.min_bytes))
    );
    out.push_str("<table class=\"monitor\"><thead><tr><th>seat</th><th>host</th><th>answered</th><th>probe p50 / mean / max</th><th>footprint first → last (max)</th><th>source</th><th>slope</th><th>max waiting</th><th>aliases</th></tr></thead><tbody>");
    for r in &s.seats {
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            h(&r.seat),
            h(&r.host),
            h(&answered_text(r)),
            r.latency_ms
                .map(|l| format!("{:.0} / {:.0} / {:.0} ms", l.p50, l.mean, l.max))
                .unwrap_or_else(|| "-".into()),
            match (r.first_bytes, r.last_bytes, r.max_bytes) {
                (Some(a), Some(b), Some(m)) => h(&format!(
                    "{} → {} ({})",
                    bytes_text(a),
                    bytes_text(b),
                    bytes_text(m)
                )),
                _ => "not read".into(),
            },
            r.footprint_source.map(|s| s.as_str()).unwrap_or("-"),
            h(&r.slope_bytes_per_day
                .map(per_day_text)
                .unwrap_or_else(|| "-".into())),
            r.max_waiting
                .map(|w| format!("{w:.0}"))
                .unwrap_or_else(|| "-".into()),
            h(&r.aliases.join(", "))
        );
    }
    out.push_str("</tbody></table>");
    if s.findings.is_empty() {
        out.push_str("<p>No finding.</p>");
    } else {
        out.push_str("<ul class=\"findings\">");
        for f in &s.findings {
            let _ = write!(
                out,
                "<li><span class=\"flag\">{}</span> {}</li>",
                f.kind(),
                h(&f.text())
            );
        }
        out.push_str("</ul>");
    }
    if !s.notes.is_empty() {
        out.push_str("<ul>");
        for n in &s.notes {
            let _ = write!(out, "<li class=\"muted\">{}</li>", h(n));
        }
        out.push_str("</ul>");
    }
}

fn charts(out: &mut String, r: &MonitorRun) {
    let seats = seats_of(&r.samples);
    let max_s = r.samples.iter().map(|s| s.t_s).fold(0.0, f64::max);
    let (unit, div) = time_unit(max_s);
    let x_label = format!("time since start ({unit})");
    let t0 = r.summary.as_ref().map(|s| s.started_at);
    // Outages shaded on both charts: from the summary's findings, else from the samples.
    let bands: Vec<(f64, f64, String)> = match (&r.summary, t0) {
        (Some(s), Some(t0)) => s
            .findings
            .iter()
            .filter_map(|f| match f {
                MonitorFinding::Outage(o) => {
                    let a = (o.started_at - t0).num_milliseconds() as f64 / 1000.0;
                    Some((
                        a / div,
                        (a + o.duration_s.max(0.0)) / div,
                        format!("outage of {}", o.seat),
                    ))
                }
                MonitorFinding::FootprintDrift(_) => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let footprint: Vec<crate::svg::TimeSeries> = seats
        .iter()
        .map(|seat| {
            let pts: Vec<&MonitorSample> = r.samples.iter().filter(|s| &s.seat == seat).collect();
            let source = pts
                .iter()
                .find_map(|s| s.footprint.as_ref().map(|f| f.source.as_str()))
                .unwrap_or("no reading");
            (
                format!("{seat} ({source})"),
                pts.iter()
                    .map(|s| {
                        (
                            s.t_s / div,
                            s.footprint
                                .as_ref()
                                .map(|f| f.bytes as f64 / (1024.0 * 1024.0)),
                        )
                    })
                    .collect(),
            )
        })
        .collect();
    let latency: Vec<crate::svg::TimeSeries> = seats
        .iter()
        .map(|seat| {
            (
                seat.clone(),
                r.samples
                    .iter()
                    .filter(|s| &s.seat == seat)
                    .map(|s| {
                        (
                            s.t_s / div,
                            s.probe.as_ref().filter(|p| p.ok).map(|p| p.latency_ms),
                        )
                    })
                    .collect(),
            )
        })
        .collect();
    out.push_str("<div class=\"charts\">");
    out.push_str(&crate::svg::time_chart(
        "Footprint over time (MiB)",
        &x_label,
        "MiB",
        &footprint,
        &bands,
    ));
    out.push_str(&crate::svg::time_chart(
        "Probe latency over time (ms; gaps: not answering)",
        &x_label,
        "ms",
        &latency,
        &bands,
    ));
    out.push_str("</div>");
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use bakeoff_artifact::monitor::{
        DriftThresholds, FootprintSample, FootprintSource, MONITOR_VERSION, Outage, ProbeSample,
        SeatSeries,
    };
    use chrono::{DateTime, Utc};

    fn at(s: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap()
    }

    fn sample(t: i64, ok: bool) -> MonitorSample {
        MonitorSample {
            schema_version: MONITOR_VERSION,
            tick: t as u64,
            at: at(t),
            t_s: t as f64,
            seat: "seat<1>".into(),
            host: "local".into(),
            state: "running".into(),
            started_at: None,
            answering: ok,
            probe: Some(ProbeSample {
                model: "m".into(),
                ok,
                latency_ms: 200.0,
                ttft_ms: None,
                content_chars: 3,
                reasoning_chars: 0,
                reasoning_only: false,
                error: (!ok).then(|| "connect: <script>".into()),
            }),
            footprint: Some(FootprintSample {
                bytes: 100 << 20,
                source: FootprintSource::ProcRss,
                detail: "VmRSS of pid 1".into(),
            }),
            footprint_unavailable: None,
            queue: None,
            queue_unavailable: None,
        }
    }

    #[test]
    fn the_section_escapes_what_a_seat_sent_and_shades_the_outage() {
        let summary = MonitorSummary {
            schema_version: MONITOR_VERSION,
            fleet: "f.toml".into(),
            started_at: at(0),
            ended_at: at(4),
            ended_by: "duration".into(),
            interval_s: 1.0,
            duration_s: Some(4.0),
            ticks: 4,
            series: "f.monitor.jsonl".into(),
            thresholds: DriftThresholds {
                percent: 10.0,
                min_bytes: 1 << 28,
            },
            seats: vec![SeatSeries {
                seat: "seat<1>".into(),
                host: "local".into(),
                aliases: vec!["a<b>".into()],
                samples: 4,
                restarts: 0,
                answered: 3,
                reasoning_only: 0,
                latency_ms: None,
                footprint_source: Some(FootprintSource::ProcRss),
                first_bytes: Some(100 << 20),
                last_bytes: Some(100 << 20),
                max_bytes: Some(100 << 20),
                slope_bytes_per_day: Some(0.0),
                max_waiting: None,
            }],
            findings: vec![MonitorFinding::Outage(Outage {
                seat: "seat<1>".into(),
                aliases: vec!["a<b>".into()],
                started_at: at(2),
                ended_at: Some(at(3)),
                duration_s: 1.0,
                failed_ticks: 1,
                first_error: "connect: <script>".into(),
            })],
            notes: vec![],
        };
        let run = MonitorRun {
            name: "f.monitor.jsonl".into(),
            path: PathBuf::from("f.monitor.jsonl"),
            summary: Some(summary.clone()),
            samples: vec![
                sample(0, true),
                sample(1, true),
                sample(2, false),
                sample(3, true),
            ],
        };
        let html = html_section(&[run]);
        assert!(!html.contains("<script>") && !html.contains("<b>") && !html.contains("seat<1>"));
        assert!(html.contains("connect: &lt;script&gt;"));
        assert!(html.contains("class=\"band\""));
        assert_eq!(html.matches("<svg").count(), 2);
        let text = terminal_at(&summary, 200);
        assert!(
            text.contains("finding outage: seat<1> stopped answering"),
            "{text}"
        );
        assert!(text.contains("3/4"), "{text}");
    }
}
