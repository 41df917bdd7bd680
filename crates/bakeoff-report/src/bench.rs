//! The final table of a load sweep (`bakeoff bench run`, the `throughput` and `longgen`
//! suites): one row per step, the numbers of docs/metrics.md, then the flags.

use crate::escape::for_terminal;
use crate::table::{Grid, Kind, glue, render, width};
use bakeoff_artifact::{LoadReport, LoadStep};

fn num(v: Option<f64>, digits: usize) -> String {
    match v {
        Some(x) => format!("{x:.digits$}"),
        None => "–".into(),
    }
}

fn rate_cell(s: &LoadStep) -> String {
    match (s.requested_rate, s.achieved_rate) {
        (Some(r), a) => format!("{} of {r}", num(a, 2)),
        (None, _) => num(s.requests_per_second, 2),
    }
}

/// The sweep as a table, the ceiling, pinning and flags beneath.
pub fn sweep(report: &LoadReport) -> String {
    sweep_at(report, width())
}

/// [`sweep`] laid out for `width` columns: below 80 columns without the corrected TTFT,
/// TTFOT, ITL, lateness and decode-ratio columns.
pub fn sweep_at(report: &LoadReport, width: u16) -> String {
    let mut t = Grid::new();
    // Open-loop steps also show TTFT from the intended send (coordinated-omission corrected).
    let open = report.steps.iter().any(|s| s.requested_rate.is_some());
    // docs/metrics.md "GPU telemetry and tokens per joule": only where some step has figures.
    let power = report.steps.iter().any(|s| telemetry(s).is_some());
    t.column("step", Kind::Name(40))
        .column("ok/sent", Kind::Number)
        .column("req/s", Kind::Number)
        .column("out tok/s", Kind::Number);
    if power {
        t.secondary("power W", Kind::Number)
            .secondary("tok/J", Kind::Number);
    }
    t.column("TTFT p50 (ms)", Kind::Number)
        .column("TTFT p99 (ms)", Kind::Number);
    if open {
        t.secondary("TTFT p99 corr. (ms)", Kind::Number);
    }
    t.secondary("TTFOT p50 (ms)", Kind::Number)
        .column("TPOT p50 (ms)", Kind::Number)
        .secondary("ITL p99 (ms)", Kind::Number)
        .column("E2E p50 (ms)", Kind::Number)
        .secondary("late p99 (ms)", Kind::Number)
        .secondary("decode c/s", Kind::Number)
        .column("flags", Kind::Words);
    for s in &report.steps {
        let ratio = s.reconciliation.as_ref().and_then(|r| r.decode_ratio_p50);
        let flags: Vec<&str> = s.flags.iter().map(|f| f.code.as_str()).collect();
        let contaminated = s
            .conditions
            .as_ref()
            .is_some_and(bakeoff_artifact::Conditions::contaminated);
        let mut row = vec![
            // docs/metrics.md "Conditions": the evidence is in the flags and the artifact.
            // A round's label (`c=4 #2`) never wraps apart.
            format!(
                "{}{}",
                glue(&for_terminal(&s.label, 200)),
                if contaminated { " CONTAMINATED" } else { "" }
            ),
            format!("{}/{}", s.ok, s.sent),
            rate_cell(s),
            num(s.output_tokens_per_second, 1),
        ];
        if power {
            let t = telemetry(s);
            row.push(num(t.and_then(|t| t.power_w_mean), 0));
            row.push(num(t.and_then(|t| t.output_tokens_per_joule), 3));
        }
        row.extend([num(s.latency.ttft.p50_ms, 1), num(s.latency.ttft.p99_ms, 1)]);
        if open {
            row.push(num(s.latency.ttft_corrected.p99_ms, 1));
        }
        row.extend([
            num(s.latency.ttfot.p50_ms, 1),
            num(s.latency.tpot.p50_ms, 2),
            num(s.latency.itl.p99_ms, 2),
            num(s.latency.e2e.p50_ms, 1),
            num(s.latency.send_lateness.p99_ms, 3),
            num(ratio, 3),
            flags.join(" "),
        ]);
        t.row(row);
    }
    // The operator's question first: where does this server stop scaling?
    let mut out = capacity_lines(report);
    out.push_str(&render(&t, width));
    out.push('\n');
    // The legend explains only the columns the table shows at this width.
    if t.shows(width, "decode c/s") {
        out.push_str("(\"decode c/s\" = client decode rate / server predicted_per_second; definitions in docs/metrics.md)\n");
    }
    out.push_str(&telemetry_line(report, power && t.shows(width, "tok/J")));
    out.push_str(&level_lines(report));
    match &report.ceiling {
        Some(c) => out.push_str(&format!(
            "harness ceiling: {:.0} req/s, {:.0} streamed tok/s, {} concurrent streams ({}); steps above half are client-bound\n",
            c.requests_per_second, c.streamed_tokens_per_second, c.concurrent_streams, for_terminal(&c.source, 80)
        )),
        None => out.push_str("harness ceiling: not measured (client-bound steps cannot be flagged)\n"),
    }
    out.push_str(&format!(
        "output length: {}\n",
        for_terminal(&report.pinning.detail, 200)
    ));
    out.push_str(&step_notes(report));
    for f in &report.flags {
        out.push_str(&format!(
            "flag {}: {}\n",
            f.code,
            for_terminal(&f.message, 300)
        ));
    }
    if let Some(i) = &report.interrupted {
        out.push_str(&format!("INCOMPLETE: {}\n", for_terminal(i, 200)));
    }
    out
}

/// Each step's engine-side reading (`/metrics`: generated tokens, the client/server ratios,
/// spec-decode acceptance) and goodput, a line each where the step has them.
fn step_notes(report: &LoadReport) -> String {
    let mut out = String::new();
    for s in &report.steps {
        if let Some(m) = &s.metrics {
            let spec = m.spec_decode.as_ref().map(|d| {
                format!(
                    ", spec-decode acceptance {} ({})",
                    num(d.acceptance_rate, 3),
                    for_terminal(&d.source, 40)
                )
            });
            let latency = match (m.client_server_ttft_ratio, m.client_server_e2e_ratio) {
                (None, None) => String::new(),
                (t, e) => format!(", client/server mean TTFT {} E2E {}", num(t, 3), num(e, 3)),
            };
            out.push_str(&format!(
                "{}: /metrics {} generated {} tokens, client/server token ratio {}{}{}\n",
                for_terminal(&s.label, 200),
                for_terminal(&m.family, 20),
                num(m.generation_tokens, 0),
                num(m.client_server_token_ratio, 3),
                latency,
                spec.unwrap_or_default()
            ));
        }
        if let Some(line) = warmup_note(s) {
            out.push_str(&line);
        }
        if let Some(b) = s.bound.as_ref().filter(|b| b.ended_by != "requests") {
            let why = match b.ended_by.as_str() {
                "time" => format!("its {:.0} s upper bound came first", b.duration_cap_s),
                "failures" => "as many requests failed".to_string(),
                other => for_terminal(other, 40),
            };
            out.push_str(&format!(
                "{}: held {} of {} completed requests: {why}\n",
                for_terminal(&s.label, 200),
                b.completed,
                b.requests
            ));
        }
        if let Some(g) = &s.goodput {
            out.push_str(&format!(
                "{}: goodput {}/{} met {} ({} req/s)\n",
                for_terminal(&s.label, 200),
                g.met,
                g.of,
                for_terminal(&g.slo, 60),
                num(g.per_second, 2)
            ));
        }
    }
    out
}

/// The step's warm-up (`--step-warmup`), only where it waited: its slowest first token more
/// than twice the step's own TTFT p99 and over 100 ms — the server was still busy with the step
/// before, and the step started after it (docs/metrics.md, "Warm-up before each step").
fn warmup_note(s: &LoadStep) -> Option<String> {
    let w = s.warmup.as_ref()?;
    let waited = w.ttft_max_ms?;
    let p99 = s.latency.ttft.p99_ms.unwrap_or(0.0);
    (waited > 100.0 && waited > 2.0 * p99).then(|| {
        format!(
            "{}: its warm-up ({} request(s), {:.2} s) waited up to {:.0} ms for a first token, against the step's TTFT p99 {:.0} ms: the step started after it\n",
            for_terminal(&s.label, 200),
            w.sent,
            w.wall_s,
            waited,
            p99
        )
    })
}

/// A step's GPU telemetry when it has figures (not when it says "unavailable").
fn telemetry(s: &LoadStep) -> Option<&bakeoff_artifact::GpuTelemetry> {
    s.gpu_telemetry
        .as_ref()
        .filter(|t| t.unavailable.is_none() && t.power_w_mean.is_some())
}

/// What the power and tok/J columns are (`shown`: the table shows them), or why there are none
/// (nothing for old artifacts).
fn telemetry_line(report: &LoadReport, shown: bool) -> String {
    if let Some(t) = report.steps.iter().find_map(telemetry) {
        if !shown {
            return format!(
                "GPU telemetry: {} (power and tok/J left out at this width; --json has them)\n",
                for_terminal(&t.source, 20)
            );
        }
        let energy = match t.energy_method {
            Some(bakeoff_artifact::EnergyMethod::NvmlEnergyCounter) => "NVML energy counter",
            Some(bakeoff_artifact::EnergyMethod::IntegratedPower) => "power integrated (estimate)",
            None => "no energy figure",
        };
        return format!(
            "(\"power W\" = mean GPU power, \"tok/J\" = output tokens per joule, idle power included; {}, {}; GPUs: {})\n",
            for_terminal(&t.source, 20),
            energy,
            for_terminal(&t.scope_detail, 200)
        );
    }
    match report
        .steps
        .iter()
        .find_map(|s| s.gpu_telemetry.as_ref()?.unavailable.as_ref())
    {
        Some(why) => format!("GPU telemetry: {}\n", for_terminal(why, 400)),
        None => String::new(),
    }
}

/// The capacity finding (and the SLO's), one line each, when the sweep has one.
fn capacity_lines(report: &LoadReport) -> String {
    let Some(c) = &report.capacity else {
        return String::new();
    };
    let mut out = format!("capacity: {}\n", for_terminal(&c.statement, 400));
    if let Some(caveat) = capacity_caveat(report) {
        out.push_str(&format!("capacity caveat: {caveat}\n"));
    }
    if let Some(s) = &c.slo {
        out.push_str(&format!(
            "capacity under SLO: {} (searched {})\n",
            for_terminal(&s.statement, 300),
            for_terminal(&s.searched, 80)
        ));
    }
    if let Some(s) = &c.sessions {
        out.push_str(&format!(
            "capacity in sessions: {}\n",
            for_terminal(&s.statement, 400)
        ));
    }
    out
}

/// Why the capacity finding may not describe the server alone: the steps it rests on ran on
/// a contaminated host (docs/metrics.md "Conditions"). `None` when every measured step ran
/// clean or none recorded its conditions.
pub fn capacity_caveat(report: &LoadReport) -> Option<String> {
    report.capacity.as_ref()?;
    let measured: Vec<&LoadStep> = report.steps.iter().filter(|s| s.ok > 0).collect();
    let tainted = measured
        .iter()
        .filter(|s| {
            s.conditions
                .as_ref()
                .is_some_and(bakeoff_artifact::Conditions::contaminated)
        })
        .count();
    match tainted {
        0 => None,
        n if n == measured.len() => Some(format!(
            "every step it rests on ({n} of {n}) ran on a contaminated host: the knee may be the neighbours', not the server's; rerun on a quiet host"
        )),
        n => Some(format!(
            "{n} of {} steps it rests on ran on a contaminated host (marked CONTAMINATED): read the levels they measured with care",
            measured.len()
        )),
    }
}

/// `mean [low, high] ±r %`: the interval and its half-width as a share of the mean
/// (docs/statistics.md, "Relative width and repeats needed"); an interval as wide as its mean
/// says that the repeats are too few to tell (docs/statistics.md, "Intervals that stay in
/// range").
pub fn interval_text(m: &Option<bakeoff_stats::MeanInterval>, digits: usize, unit: &str) -> String {
    match m {
        Some(m) => {
            let relative = m
                .relative_half_width()
                .map(|r| format!(" ±{:.1} %", r * 100.0))
                .unwrap_or_default();
            let few = if m.too_few() && m.mean != 0.0 {
                format!(" (n = {} too few to tell)", m.values.len())
            } else {
                String::new()
            };
            format!(
                "{:.digits$} [{:.digits$}, {:.digits$}]{unit}{relative}{few}",
                m.mean, m.low, m.high
            )
        }
        None => "–".into(),
    }
}

/// Output tok/s against the ±5 % goal: met, or how many repeats would reach it.
fn precision_text(l: &bakeoff_artifact::LevelSummary) -> String {
    let Some(p) = &l.output_tokens_per_second_precision else {
        return String::new();
    };
    let goal = p.target * 100.0;
    if p.relative_half_width <= p.target {
        return format!("; out tok/s within ±{goal:.0} %");
    }
    let needs = match p.repeats_needed {
        Some(n) => format!("; out tok/s ±{goal:.0} % needs ≈ {n} repeats"),
        None => format!(
            "; out tok/s ±{goal:.0} % needs more than {} repeats",
            bakeoff_stats::repeats::MAX_REPEATS_ESTIMATE
        ),
    };
    match &l.output_tokens_per_second_fix {
        Some(f) => format!("{needs}{}", fix_text(f, l.repeats)),
        None => needs,
    }
}

/// The cheaper of more repeats and longer steps, by measuring time (docs/statistics.md, "The
/// cheaper fix").
fn fix_text(f: &bakeoff_stats::CheaperFix, repeats: u32) -> String {
    let repeats_cost = format!(
        "{} repeats ≈ {}",
        f.repeats_needed,
        seconds(f.repeats_seconds)
    );
    match (f.cheaper, f.longer_steps_seconds, f.step_requests) {
        (bakeoff_stats::FixKind::LongerSteps, Some(t), Some(r)) => format!(
            "; cheaper fix: longer steps, --step-requests {r} at {repeats} repeats ≈ {} (against {repeats_cost})",
            seconds(t)
        ),
        (_, Some(t), _) => format!(
            " (≈ {}); cheaper fix: more repeats (steps {:.1}× longer at {repeats} repeats ≈ {})",
            seconds(f.repeats_seconds),
            f.step_length_factor.unwrap_or(1.0),
            seconds(t)
        ),
        _ => format!(
            " (≈ {}); cheaper fix: more repeats (the spread lies between steps, {:.0} % of it within: longer steps cannot reach it)",
            seconds(f.repeats_seconds),
            f.within_share * 100.0
        ),
    }
}

/// Seconds as a person reads a measuring time: `95 s`, `42 min`, `3.1 h`.
fn seconds(s: f64) -> String {
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// Under `--repeat`: each level's mean with its 95 % interval across repeats.
fn level_lines(report: &LoadReport) -> String {
    let mut out = String::new();
    for l in &report.levels {
        let gpu = if l.power_w_mean.is_some() || l.output_tokens_per_joule.is_some() {
            format!(
                ", power W {}, tok/J {}",
                interval_text(&l.power_w_mean, 0, ""),
                interval_text(&l.output_tokens_per_joule, 3, "")
            )
        } else {
            String::new()
        };
        out.push_str(&format!(
            "{} over {} repeats (mean [95 % interval]): out tok/s {}, req/s {}, TTFT p50 {}, TPOT p50 {}, E2E p50 {}{gpu}{}{}\n",
            for_terminal(&l.label, 100),
            l.repeats,
            interval_text(&l.output_tokens_per_second, 1, ""),
            interval_text(&l.requests_per_second, 2, ""),
            interval_text(&l.ttft_p50_ms, 1, " ms"),
            interval_text(&l.tpot_p50_ms, 2, " ms"),
            interval_text(&l.e2e_p50_ms, 1, " ms"),
            precision_text(l),
            if l.unstable { " — unstable" } else { "" }
        ));
    }
    if !report.levels.is_empty() {
        out.push_str(
            "(±: the 95 % interval's half-width as a share of the mean; repeats needed assume the spread stays — docs/statistics.md)\n",
        );
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn renders_an_empty_sweep_without_numbers_invented() {
        let r: LoadReport = serde_json::from_value(serde_json::json!({
            "mode": "closed", "plan": {}, "warmup_requests": 0, "steps": [],
            "pinning": {"ignore_eos_sent": false, "min_tokens_sent": false, "finished": 0,
                        "exact_length": 0, "detail": "no finished request"}
        }))
        .unwrap();
        let s = sweep(&r);
        assert!(s.contains("not measured"));
        assert!(s.contains("no finished request"));
    }

    fn lat() -> serde_json::Value {
        serde_json::json!({"count": 4, "clamped_high": 0, "mean_ms": 10.0, "min_ms": 10.0,
            "p50_ms": 10.0, "p90_ms": 10.0, "p95_ms": 10.0, "p99_ms": 10.0, "max_ms": 10.0})
    }

    fn report(telemetry: &[serde_json::Value]) -> LoadReport {
        let steps: Vec<serde_json::Value> = telemetry
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut s = serde_json::json!({
                    "label": format!("c={}", i + 1), "concurrency": i + 1, "sent": 4, "ok": 4,
                    "errors": {}, "wall_s": 2.0, "output_tokens": 1000,
                    "output_tokens_per_second": 500.0, "token_source": "usage",
                    "latency": {"ttft": lat(), "ttfot": lat(), "tpot": lat(), "itl": lat(),
                        "e2e": lat(), "send_lateness": lat(), "ttft_corrected": lat(),
                        "e2e_corrected": lat()},
                    "histograms": {"ttft": [], "itl": [], "e2e": []}
                });
                if !t.is_null() {
                    s["gpu_telemetry"] = t.clone();
                }
                s
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "mode": "closed", "plan": {}, "warmup_requests": 0, "steps": steps,
            "pinning": {"ignore_eos_sent": false, "min_tokens_sent": false, "finished": 8,
                        "exact_length": 8, "detail": "pinned"}
        }))
        .unwrap()
    }

    /// docs/metrics.md "GPU telemetry and tokens per joule": the power and tok/J columns appear
    /// only when a step has figures; a step without them shows dashes, and a host without NVML
    /// keeps the old table with one line saying why.
    #[test]
    fn power_and_tokens_per_joule_columns_only_with_telemetry() {
        let measured = serde_json::json!({"source": "nvml", "interval_ms": 250, "samples": 9,
            "scope": "engine-gpus", "scope_detail": "engine pid 7 holds memory on GPU 0",
            "power_w_mean": 612.4, "power_w_max": 700.0, "energy_j": 1224.8,
            "energy_method": "nvml-energy-counter", "output_tokens_per_joule": 0.75});
        let text = sweep_at(&report(&[measured, serde_json::Value::Null]), 200);
        assert!(text.contains("power W") && text.contains("tok/J"), "{text}");
        assert!(text.contains("612") && text.contains("0.750"), "{text}");
        assert!(
            text.contains("NVML energy counter") && text.contains("idle power included"),
            "{text}"
        );

        let none = serde_json::json!({"source": "nvml, nvidia-smi", "interval_ms": 0, "samples": 0,
            "unavailable": "unavailable (no NVML): NVML did not initialize"});
        for r in [
            report(&[none, serde_json::Value::Null]),
            report(&[serde_json::Value::Null]),
        ] {
            let text = sweep_at(&r, 200);
            assert!(
                !text.contains("tok/J") && !text.contains("power W"),
                "{text}"
            );
        }
        let text = sweep_at(
            &report(&[serde_json::json!({"source": "nvml, nvidia-smi",
            "interval_ms": 0, "samples": 0, "unavailable": "unavailable (no NVML): x"})]),
            200,
        );
        assert!(
            text.contains("GPU telemetry: unavailable (no NVML)"),
            "{text}"
        );
    }

    /// docs/statistics.md "Relative width and repeats needed": each repeated figure shows its
    /// half-width as a share of the mean, power and tok/J get intervals, and output tok/s says
    /// whether it met ±5 % or how many repeats would.
    #[test]
    fn repeated_levels_show_relative_widths_and_repeats_needed() {
        let mut r = report(&[serde_json::Value::Null]);
        let mi = |v: &[f64]| bakeoff_stats::mean_interval(v);
        let tps = mi(&[900.0, 1000.0, 1100.0]);
        r.levels = vec![bakeoff_artifact::LevelSummary {
            label: "c=8".into(),
            repeats: 3,
            output_tokens_per_second_precision: tps
                .as_ref()
                .and_then(|m| m.precision(bakeoff_stats::RELATIVE_HALF_WIDTH_GOAL)),
            output_tokens_per_second: tps,
            requests_per_second: mi(&[3.5, 3.9, 4.3]),
            ttft_p50_ms: mi(&[770.0, 780.0, 790.0]),
            tpot_p50_ms: mi(&[5.7, 5.8, 5.9]),
            e2e_p50_ms: None,
            power_w_mean: mi(&[140.0, 142.0, 138.0]),
            output_tokens_per_joule: mi(&[6.4, 7.0, 7.9]),
            output_tokens_per_second_fix: None,
            unstable: false,
            heterogeneity: None,
        }];
        let text = sweep_at(&r, 200);
        assert!(
            text.contains("out tok/s 1000.0 [751.6, 1248.4] ±24.8 %"),
            "{text}"
        );
        assert!(
            text.contains("TTFT p50 780.0 [755.2, 804.8] ms ±3.2 %"),
            "{text}"
        );
        assert!(text.contains("power W 140 [135, 145] ±3.5 %"), "{text}");
        assert!(text.contains("tok/J 7.100"), "{text}");
        assert!(text.contains("out tok/s ±5 % needs ≈ 18 repeats"), "{text}");
        assert!(text.contains("±: the 95 % interval's half-width"), "{text}");

        r.levels[0].output_tokens_per_second = mi(&[999.0, 1000.0, 1001.0]);
        r.levels[0].output_tokens_per_second_precision = r.levels[0]
            .output_tokens_per_second
            .as_ref()
            .and_then(|m| m.precision(bakeoff_stats::RELATIVE_HALF_WIDTH_GOAL));
        let text = sweep_at(&r, 200);
        assert!(text.contains("out tok/s within ±5 %"), "{text}");
    }

    /// docs/statistics.md "The cheaper fix": the line under `--repeat` names the cheaper of more
    /// repeats and longer steps with both times, and says when longer steps cannot help.
    #[test]
    fn the_cheaper_fix_names_longer_steps_or_more_repeats_with_their_times() {
        use bakeoff_stats::{CheaperFix, FixKind};
        let longer = CheaperFix {
            cheaper: FixKind::LongerSteps,
            target: 0.05,
            repeats_needed: 24,
            repeats_seconds: 24.0 * 16.5,
            step_length_factor: Some(3.2),
            step_requests: Some(128),
            longer_steps_seconds: Some(3.0 * (3.2 * 10.0 + 6.5)),
            within_share: 0.9,
        };
        assert_eq!(
            fix_text(&longer, 3),
            "; cheaper fix: longer steps, --step-requests 128 at 3 repeats ≈ 116 s (against 24 repeats ≈ 7 min)"
        );
        let repeats = CheaperFix {
            cheaper: FixKind::MoreRepeats,
            longer_steps_seconds: Some(1428.0),
            step_length_factor: Some(47.6),
            repeats_seconds: 180.0,
            repeats_needed: 18,
            ..longer.clone()
        };
        assert_eq!(
            fix_text(&repeats, 3),
            " (≈ 3 min); cheaper fix: more repeats (steps 47.6× longer at 3 repeats ≈ 24 min)"
        );
        let between = CheaperFix {
            longer_steps_seconds: None,
            step_length_factor: None,
            step_requests: None,
            within_share: 0.02,
            ..repeats
        };
        assert_eq!(
            fix_text(&between, 3),
            " (≈ 3 min); cheaper fix: more repeats (the spread lies between steps, 2 % of it within: longer steps cannot reach it)"
        );
    }

    /// docs/metrics.md "Warm-up before each step" and "Steps of completed requests": a warm-up
    /// that waited is named under the table, one that did not is not; a step its upper bound cut
    /// short says how many it held.
    #[test]
    fn a_warmup_that_waited_and_a_step_cut_short_are_named() {
        let mut r = report(&[serde_json::Value::Null, serde_json::Value::Null]);
        r.steps[0].warmup = Some(bakeoff_artifact::StepWarmup {
            sent: 1,
            ok: 1,
            wall_s: 6.61,
            ttft_max_ms: Some(6480.0),
        });
        r.steps[1].warmup = Some(bakeoff_artifact::StepWarmup {
            sent: 1,
            ok: 1,
            wall_s: 0.2,
            ttft_max_ms: Some(15.0),
        });
        r.steps[1].bound = Some(bakeoff_artifact::StepBoundRecord {
            requests: 256,
            duration_cap_s: 600.0,
            completed: 40,
            ended_by: "time".into(),
        });
        let text = sweep_at(&r, 200);
        assert!(
            text.contains("c=1: its warm-up (1 request(s), 6.61 s) waited up to 6480 ms for a first token, against the step's TTFT p99 10 ms"),
            "{text}"
        );
        assert!(!text.contains("c=2: its warm-up"), "{text}");
        assert!(
            text.contains(
                "c=2: held 40 of 256 completed requests: its 600 s upper bound came first"
            ),
            "{text}"
        );
    }
}
