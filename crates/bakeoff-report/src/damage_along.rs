//! Damage along the reply in every report (docs/suites.md "Damage along the reply"): the
//! headline that says which measure moved, the terminal lines, the comparison cell's part and
//! the HTML curve of per-position KL. A candidate whose first-token KL is negligible while its
//! greedy agreement or per-token KL is not never reads as "no damage".

use std::fmt::Write as _;

use bakeoff_artifact::{DamageAlong, DamageSummary};

use crate::escape::{for_html as h, for_terminal};

/// `0.1234`, or `1.2e-5` for small figures.
pub(crate) fn nats(x: f64) -> String {
    if x == 0.0 {
        "0".into()
    } else if x.abs() < 1e-3 {
        format!("{x:.1e}")
    } else {
        format!("{x:.4}")
    }
}

/// Which measures moved beyond the instrument's noise, in one sentence.
pub fn headline(d: &DamageSummary) -> Option<String> {
    let a = d.along.as_ref();
    let first = d.beyond_noise;
    let agreement = a.and_then(|a| a.agreement_beyond_noise);
    let token = a.and_then(|a| a.kl_beyond_noise);
    if d.withheld.is_some() && a.is_none_or(|a| a.withheld.is_some()) {
        return None;
    }
    let mut moved = Vec::new();
    if first == Some(true) {
        moved.push("first-token KL");
    }
    if agreement == Some(true) {
        moved.push("greedy agreement");
    }
    if token == Some(true) {
        moved.push("per-token KL along the reply");
    }
    let along_withheld = a.and_then(|a| a.withheld.as_deref());
    // A withheld first-token figure is neither "moved" nor "did not move".
    if d.withheld.is_some() {
        return Some(match along_withheld {
            Some(_) => return None,
            None if moved.is_empty() => {
                "first-token KL withheld; along the reply no measure moved beyond noise".into()
            }
            None => format!(
                "first-token KL withheld; moved beyond noise: {}",
                moved.join(", ")
            ),
        });
    }
    Some(match (moved.is_empty(), first, along_withheld) {
        (_, _, Some(why)) if moved.is_empty() => format!(
            "damage along the reply withheld ({}); first-token KL {}",
            for_terminal(why.split(':').next().unwrap_or(why), 80),
            if first == Some(true) { "moved" } else { "did not move" }
        ),
        (true, _, _) if a.is_none() => {
            "first-token KL did not move beyond noise (the reply beyond its first token was not measured: --tokens 0)".into()
        }
        (true, _, _) => {
            let partial = a.is_some_and(|a| a.token_kl.is_none());
            format!(
                "no measure moved beyond the instrument's noise (first-token KL, greedy agreement{})",
                if partial {
                    "; per-token KL not measured on this engine"
                } else {
                    ", per-token KL"
                }
            )
        }
        (false, Some(true), _) => format!("moved beyond noise: {}", moved.join(", ")),
        (false, _, _) => format!(
            "damage after the first token: {} moved beyond noise while first-token KL did not",
            moved.join(" and ")
        ),
    })
}

/// The comparison cell's part: `same reply 30/40; token KL 0.0123`.
pub fn cell_part(a: &DamageAlong) -> Option<String> {
    if a.withheld.is_some() {
        return Some("along: WITHHELD".into());
    }
    let mut t = String::new();
    if let Some(g) = &a.greedy_identical {
        let _ = write!(t, "same reply {}/{}", g.successes, g.n);
    }
    if let Some(k) = &a.token_kl {
        let _ = write!(t, "; token KL {}", nats(k.mean));
    }
    (!t.is_empty()).then_some(t)
}

/// The lines under a run's terminal summary.
pub fn terminal_lines(d: &DamageSummary, out: &mut String) {
    if let Some(line) = headline(d) {
        let _ = writeln!(out, "  headline: {line}");
    }
    if let Some(a) = &d.along {
        along_lines(a, out);
    }
}

/// The figures along the reply, one measure a line.
fn along_lines(a: &DamageAlong, out: &mut String) {
    let _ = writeln!(
        out,
        "  along the reply ({} greedy tokens, {} prompts):",
        a.tokens, a.prompts
    );
    if let Some(line) = timing_line(&a.timing) {
        let _ = writeln!(out, "    {line}");
    }
    floor_lines(a, out);
    if let Some(why) = &a.withheld {
        let _ = writeln!(out, "    WITHHELD — {}", for_terminal(why, 600));
        return;
    }
    if let Some(g) = &a.greedy_identical {
        let _ = writeln!(
            out,
            "    greedy agreement: identical replies {}/{} = {:.0}% [Wilson 95% {:.0}–{:.0}%]{}{}",
            g.successes,
            g.n,
            g.estimate * 100.0,
            g.low * 100.0,
            g.high * 100.0,
            a.first_divergence_median
                .map(|m| format!("; replies part at token {m:.0} (median)"))
                .unwrap_or_default(),
            a.reproduced
                .as_ref()
                .map(|r| format!(
                    "; {:.0}% of the reference's tokens reproduced [{:.0}–{:.0}%]",
                    r.mean * 100.0,
                    r.low * 100.0,
                    r.high * 100.0
                ))
                .unwrap_or_default()
        );
    }
    match (&a.token_kl, &a.forcing_missing) {
        (Some(k), _) => {
            let _ = writeln!(
                out,
                "    per-token KL along the reference's reply: mean {} nats [95% bootstrap over prompts {}–{}], median {} [{}–{}], max {} over {} positions",
                nats(k.mean),
                nats(k.low),
                nats(k.high),
                nats(k.median),
                nats(k.median_low),
                nats(k.median_high),
                nats(k.max),
                k.n
            );
            if let Some(t) = &a.token_top1_differs {
                let _ = writeln!(
                    out,
                    "    top-1 differs at {:.1}% of positions [{:.1}–{:.1}%]",
                    t.mean * 100.0,
                    t.low * 100.0,
                    t.high * 100.0
                );
            }
            let _ = writeln!(
                out,
                "    noise floor {} nats: per-token KL {}",
                nats(a.noise_floor_nats),
                if a.kl_beyond_noise == Some(true) {
                    "beyond noise"
                } else {
                    "within noise"
                }
            );
        }
        (None, Some(why)) => {
            let _ = writeln!(
                out,
                "    per-token KL not measured: {}",
                for_terminal(why, 400)
            );
        }
        (None, None) => {}
    }
}

/// Each phase's seconds, per prompt and per position, and requests, on one line.
fn timing_line(timing: &[bakeoff_artifact::AlongTiming]) -> Option<String> {
    if timing.is_empty() {
        return None;
    }
    let phases: Vec<String> = timing
        .iter()
        .map(|t| {
            let per: String = [
                t.seconds_per_prompt.map(|x| format!("{x:.2} s/prompt, ")),
                t.seconds_per_position
                    .map(|x| format!("{:.1} ms/position, ", x * 1000.0)),
            ]
            .into_iter()
            .flatten()
            .collect();
            format!(
                "{} {:.1} s ({per}{} requests)",
                t.phase, t.seconds, t.requests
            )
        })
        .collect();
    Some(format!("time: {}", phases.join("; ")))
}

/// The reference against itself: the self-check, the batch floor and the route check.
fn floor_lines(a: &DamageAlong, out: &mut String) {
    if let Some(c) = &a.self_check {
        let _ = writeln!(
            out,
            "    self-check (reference twice, one at a time): identical {}/{}{}: {}",
            c.identical.successes,
            c.identical.n,
            c.token_kl
                .as_ref()
                .map(|k| format!(", per-token KL upper bound {}", nats(k.high)))
                .unwrap_or_default(),
            match c.passed {
                Some(true) => "passed",
                _ => "FAILED",
            }
        );
    }
    if let Some(b) = &a.batch_floor {
        let _ = writeln!(
            out,
            "    batch floor (reference with {} in flight): identical {}/{}{}",
            b.in_flight,
            b.identical.successes,
            b.identical.n,
            b.token_kl
                .as_ref()
                .map(|k| format!(", per-token KL {}", mean_interval(k)))
                .unwrap_or_default()
        );
    }
    if let Some(r) = &a.route_check
        && let Some(k) = &r.token_kl
    {
        let _ = writeln!(
            out,
            "    route check (reference forced along its own reply on {} prompts, against its decode): per-token KL {}",
            r.identical.n,
            mean_interval(k)
        );
    }
}

/// `mean M [LOW–HIGH]`, in nats.
fn mean_interval(k: &bakeoff_stats::ClusteredSummary) -> String {
    format!("mean {} [{}–{}]", nats(k.mean), nats(k.low), nats(k.high))
}

/// The per-position curve: mean KL at each position of the reference's reply, the noise
/// floor as a dashed line. A plain SVG; every label is a number.
fn curve(a: &DamageAlong) -> String {
    let (w, hgt, pad) = (640.0, 180.0, 40.0);
    let max_x = a.positions.last().map_or(1, |p| p.position.max(1)) as f64;
    let max_y = a
        .positions
        .iter()
        .map(|p| p.mean_kl)
        .fold(a.noise_floor_nats, f64::max)
        .max(1e-9);
    let x = |p: f64| pad + p / max_x * (w - 2.0 * pad);
    let y = |k: f64| hgt - pad + -(k / max_y) * (hgt - 2.0 * pad);
    let points: Vec<String> = a
        .positions
        .iter()
        .map(|p| format!("{:.1},{:.1}", x(f64::from(p.position)), y(p.mean_kl)))
        .collect();
    let mut s = format!(
        "<svg class=\"damage-curve\" viewBox=\"0 0 {w} {hgt}\" width=\"{w}\" height=\"{hgt}\" role=\"img\" aria-label=\"mean per-token KL by position\">"
    );
    let _ = write!(
        s,
        "<line x1=\"{pad}\" y1=\"{0:.1}\" x2=\"{1:.1}\" y2=\"{0:.1}\" stroke=\"#888\"/><line x1=\"{pad}\" y1=\"{pad}\" x2=\"{pad}\" y2=\"{0:.1}\" stroke=\"#888\"/>",
        hgt - pad,
        w - pad
    );
    let fy = y(a.noise_floor_nats);
    let _ = write!(
        s,
        "<line class=\"noise-floor\" x1=\"{pad}\" y1=\"{fy:.1}\" x2=\"{:.1}\" y2=\"{fy:.1}\" stroke=\"#c60\" stroke-dasharray=\"4 3\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\" fill=\"#c60\">noise floor {}</text>",
        w - pad,
        w - pad,
        fy - 3.0,
        h(&nats(a.noise_floor_nats))
    );
    let _ = write!(
        s,
        "<polyline fill=\"none\" stroke=\"#36c\" stroke-width=\"1.5\" points=\"{}\"/>",
        points.join(" ")
    );
    let _ = write!(
        s,
        "<text x=\"{pad}\" y=\"{:.1}\" font-size=\"10\">0</text><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"end\">token {}</text><text x=\"2\" y=\"{:.1}\" font-size=\"10\">{}</text></svg>",
        hgt - pad + 14.0,
        w - pad,
        hgt - pad + 14.0,
        max_x,
        pad + 4.0,
        h(&nats(max_y))
    );
    s
}

/// The HTML part: the headline, the figures and the curve.
pub fn html(d: &DamageSummary) -> String {
    let mut out = String::new();
    if let Some(line) = headline(d) {
        let _ = write!(out, "<p class=\"damage-headline\"><b>{}</b></p>", h(&line));
    }
    let Some(a) = &d.along else {
        return out;
    };
    let mut text = String::new();
    along_lines(a, &mut text);
    let _ = write!(out, "<pre class=\"damage-along\">{}</pre>", h(&text));
    if !a.positions.is_empty() {
        let _ = write!(
            out,
            "<figure class=\"damage-curve\"><figcaption>Mean KL(reference ‖ candidate) at each position of the reference's greedy reply ({} prompts reach position 0)</figcaption>{}</figure>",
            a.positions.first().map_or(0, |p| p.prompts),
            curve(a)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bakeoff_artifact::AlongTiming;

    #[test]
    fn the_time_line_gives_each_phase_per_prompt_and_per_position() {
        let t = [
            AlongTiming::new("self-check", 2, 64, 10, 3.2),
            AlongTiming::new("candidate", 0, 0, 0, 0.0),
        ];
        assert_eq!(
            timing_line(&t).as_deref(),
            Some(
                "time: self-check 3.2 s (1.60 s/prompt, 50.0 ms/position, 10 requests); candidate 0.0 s (0 requests)"
            )
        );
        assert_eq!(timing_line(&[]), None);
    }
}
