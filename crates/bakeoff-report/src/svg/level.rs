//! The level chart: concurrency (or any positive level) on a log2 axis against a value, a
//! level run in rounds drawn as their mean with an error bar and the rounds faint, and value
//! labels placed where no other label or tick is (docs/reports.md, "Throughput and latency").

use std::fmt::Write as _;

use super::{
    B, H, L, PALETTE, R, T, W, fmt_num, frame, legend, legend_height, log2_ticks, nice_max,
};
use crate::escape::for_html;

/// One point of a [`level_chart`]: a level `x`, the value drawn `y` (a level run in several
/// rounds: their mean), its 95 % interval when it has one (an error bar), and each round's
/// value when there were several (drawn faint).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub interval: Option<(f64, f64)>,
    pub rounds: Vec<f64>,
}

impl Point {
    pub fn at(x: f64, y: f64) -> Point {
        Point {
            x,
            y,
            ..Point::default()
        }
    }
}

/// Concurrency (or any positive level) against a value: see [`level_chart`]; plain points.
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> String {
    let series: Vec<(String, Vec<Point>)> = series
        .iter()
        .map(|(n, pts)| {
            (
                n.clone(),
                pts.iter().map(|(x, y)| Point::at(*x, *y)).collect(),
            )
        })
        .collect();
    level_chart(title, "", x_label, y_label, &series)
}

/// `text` in lines of at most `max` characters, broken between words (a longer word alone).
fn wrap_words(text: &str, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for w in text.split(' ').filter(|w| !w.is_empty()) {
        if !cur.is_empty() && cur.chars().count() + 1 + w.chars().count() > max {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

/// A value label's box: its centre `x`, baseline `y`, width `w` (10 px text).
#[derive(Debug, Clone, Copy)]
struct LabelBox {
    x: f64,
    y: f64,
    w: f64,
}

/// Height of one 10 px label line, and the gap kept between two labels side by side.
const LABEL_LINE: f64 = 11.0;
const LABEL_GAP: f64 = 2.0;

fn collide(a: &LabelBox, b: &LabelBox) -> bool {
    (a.x - b.x).abs() < (a.w + b.w) / 2.0 + LABEL_GAP && (a.y - b.y).abs() < LABEL_LINE
}

/// Baselines for value labels that want to sit at `wanted` (centre x, baseline y, width):
/// each at the free spot nearest its point — above it first, then a line further up or down
/// — never over another label, never below the plot's floor (the x-axis tick labels sit
/// under it) nor above its top. A label with no free spot keeps its wish, clamped.
fn place_labels(wanted: &[LabelBox]) -> Vec<f64> {
    let top = T + LABEL_LINE;
    let floor = H - B - 3.0;
    let mut order: Vec<usize> = (0..wanted.len()).collect();
    order.sort_by(|&a, &b| {
        wanted[a]
            .x
            .total_cmp(&wanted[b].x)
            .then(wanted[a].y.total_cmp(&wanted[b].y))
    });
    let mut placed: Vec<LabelBox> = Vec::new();
    let mut out = vec![0.0; wanted.len()];
    for i in order {
        let want = wanted[i];
        let start = want.y.clamp(top, floor);
        let spot = (0..40)
            .map(|k| {
                let step = f64::from((k + 1) / 2) * LABEL_LINE;
                if k % 2 == 1 {
                    start - step
                } else {
                    start + step
                }
            })
            .filter(|y| (top..=floor).contains(y))
            .find(|y| {
                !placed
                    .iter()
                    .any(|p| collide(p, &LabelBox { y: *y, ..want }))
            })
            .unwrap_or(start);
        placed.push(LabelBox { y: spot, ..want });
        out[i] = spot;
    }
    out
}

/// Concurrency (or any positive level) against a value: x on a log2 axis with a tick labelled
/// at every level run, one line per series through its points, each point's value printed
/// beside it (the page has no script, so nothing is left to hover) where no other label or
/// tick is, and a legend under the chart naming every series. A point with an interval gets
/// an error bar (clipped at the plot's top, then drawn open), and a level's rounds are drawn
/// faint behind its mean. `caption`, when not empty, is a grey line under the legend: what
/// every series shares (the candidate, the sweep), so the legend names only what differs.
pub fn level_chart(
    title: &str,
    caption: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<Point>)],
) -> String {
    let ticks = log2_ticks(series.iter().flat_map(|s| s.1.iter().map(|p| p.x)));
    let ymax = nice_max(
        series
            .iter()
            .flat_map(|s| {
                s.1.iter()
                    .flat_map(|p| std::iter::once(p.y).chain(p.rounds.iter().copied()))
            })
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max)
            * 1.15,
    );
    let names: Vec<String> = series.iter().map(|s| s.0.clone()).collect();
    // The caption, in grey under the legend, wrapped to the chart's width.
    let caption_lines = wrap_words(caption, ((W - L - R) / 6.0) as usize);
    let below = H + legend_height(&names);
    let height = below + 16.0 * caption_lines.len() as f64;
    let mut out = String::new();
    frame(&mut out, title, x_label, y_label, ymax, height);
    for (i, line) in caption_lines.iter().enumerate() {
        let _ = write!(
            out,
            r##"<text class="caption" x="{L}" y="{y:.1}" font-size="11" fill="#666">{c}</text>"##,
            y = below + 12.0 + 16.0 * i as f64,
            c = for_html(line)
        );
    }
    let (lo, hi) = match (ticks.first(), ticks.last()) {
        (Some(a), Some(b)) => (a.log2(), b.log2()),
        _ => (0.0, 1.0),
    };
    // Inset so the end points and their labels stay inside the plot.
    let inset = 28.0;
    let px = |x: f64| {
        if hi > lo {
            L + inset + (W - L - R - 2.0 * inset) * (x.log2() - lo) / (hi - lo)
        } else {
            (L + W - R) / 2.0
        }
    };
    let py = |y: f64| H - B - (H - T - B) * (y / ymax).clamp(0.0, 1.0);
    for t in &ticks {
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" y1="{yb}" x2="{x:.1}" y2="{yt}" stroke="#333"/><text class="x-tick" x="{x:.1}" y="{ty}" font-size="11" text-anchor="middle">{v}</text>"##,
            x = px(*t),
            yb = H - B,
            yt = H - B + 4.0,
            ty = H - B + 16.0,
            v = fmt_num(*t)
        );
    }
    let series: Vec<Vec<Point>> = series
        .iter()
        .map(|(_, pts)| {
            let mut pts: Vec<Point> = pts
                .iter()
                .filter(|p| p.x > 0.0 && p.x.is_finite() && p.y.is_finite())
                .cloned()
                .collect();
            pts.sort_by(|a, b| a.x.total_cmp(&b.x));
            pts
        })
        .collect();
    for (i, pts) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        draw_series(&mut out, pts, color, &px, &py, ymax);
    }
    // Every point's value, beside it: where series meet at one level (TTFT p50, p90 and p99
    // of a few requests) each label takes the nearest free line, in its series' colour.
    // A point with an error bar has its label beside it, right of the bar, not across it.
    let texts: Vec<(usize, f64, f64, bool, String)> = series
        .iter()
        .enumerate()
        .flat_map(|(i, pts)| {
            pts.iter()
                .map(move |p| (i, p.x, p.y, p.interval.is_some(), fmt_num(p.y)))
        })
        .collect();
    let wanted: Vec<LabelBox> = texts
        .iter()
        .map(|(_, x, y, beside, t)| {
            let w = 6.0 * t.chars().count() as f64;
            if *beside {
                LabelBox {
                    x: px(*x) + 7.0 + w / 2.0,
                    y: py(*y) - 4.0,
                    w,
                }
            } else {
                LabelBox {
                    x: px(*x),
                    y: py(*y) - 7.0,
                    w,
                }
            }
        })
        .collect();
    for ((i, _, _, _, t), (want, ty)) in texts.iter().zip(wanted.iter().zip(place_labels(&wanted)))
    {
        let color = PALETTE[i % PALETTE.len()];
        let _ = write!(
            out,
            r#"<text class="value" x="{:.1}" y="{ty:.1}" font-size="10" text-anchor="middle" fill="{color}">{}</text>"#,
            want.x, t
        );
    }
    legend(&mut out, &names, H + 2.0);
    out.push_str("</svg>");
    out
}

/// One series: its rounds faint behind the means, the line through the means, and each point
/// with its error bar (open at the top where the interval passes `ymax`).
fn draw_series(
    out: &mut String,
    pts: &[Point],
    color: &str,
    px: &dyn Fn(f64) -> f64,
    py: &dyn Fn(f64) -> f64,
    ymax: f64,
) {
    // Each round faint, behind the mean.
    for p in pts {
        if p.rounds.len() > 1 {
            for v in p.rounds.iter().filter(|v| v.is_finite()) {
                let _ = write!(
                    out,
                    r#"<circle class="round" cx="{:.1}" cy="{:.1}" r="2.5" fill="{color}" fill-opacity="0.3"/>"#,
                    px(p.x),
                    py(*v)
                );
            }
        }
    }
    let path: Vec<String> = pts
        .iter()
        .map(|p| format!("{:.1},{:.1}", px(p.x), py(p.y)))
        .collect();
    let _ = write!(
        out,
        r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
        path.join(" ")
    );
    for p in pts {
        let (cx, cy) = (px(p.x), py(p.y));
        if let Some((low, high)) = p.interval.filter(|(l, h)| l.is_finite() && h.is_finite()) {
            let (yl, yh) = (py(low), py(high));
            let clipped = high > ymax;
            let _ = write!(
                out,
                r#"<g class="error-bar"><title>95 % interval {} – {}</title><line x1="{cx:.1}" y1="{yl:.1}" x2="{cx:.1}" y2="{yh:.1}" stroke="{color}" stroke-width="1.5"/><line x1="{a:.1}" y1="{yl:.1}" x2="{b:.1}" y2="{yl:.1}" stroke="{color}" stroke-width="1.5"/>"#,
                fmt_num(low),
                fmt_num(high),
                a = cx - 4.0,
                b = cx + 4.0
            );
            if !clipped {
                let _ = write!(
                    out,
                    r#"<line x1="{a:.1}" y1="{yh:.1}" x2="{b:.1}" y2="{yh:.1}" stroke="{color}" stroke-width="1.5"/>"#,
                    a = cx - 4.0,
                    b = cx + 4.0
                );
            }
            out.push_str("</g>");
        }
        let _ = write!(
            out,
            r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="3.5" fill="{color}"/>"#
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value labels of a chart: (x, baseline y, text) in document order.
    fn value_labels(svg: &str) -> Vec<(f64, f64, String)> {
        svg.split("<text class=\"value\" x=\"")
            .skip(1)
            .filter_map(|t| {
                let x: f64 = t.split('"').next()?.parse().ok()?;
                let y: f64 = t.split("y=\"").nth(1)?.split('"').next()?.parse().ok()?;
                let text = t.split('>').nth(1)?.split('<').next()?.to_string();
                Some((x, y, text))
            })
            .collect()
    }

    /// TTFT p50, p90 and p99 of a few requests meet at one level (and at the floor):
    /// no two labels overlap, and none sits on the x-axis tick labels.
    #[test]
    fn value_labels_never_collide_nor_sit_on_the_ticks() {
        let series: Vec<(String, Vec<(f64, f64)>)> = ["p50", "p90", "p99"]
            .iter()
            .enumerate()
            .map(|(i, p)| {
                (
                    p.to_string(),
                    vec![
                        (1.0, 30.0 + i as f64),
                        (2.0, 31.0 + i as f64),
                        (4.0, 900.0 + i as f64),
                    ],
                )
            })
            .collect();
        let s = line_chart("t", "c", "ms", &series);
        let labels = value_labels(&s);
        assert_eq!(labels.len(), 9, "{s}");
        for (i, a) in labels.iter().enumerate() {
            assert!(a.1 <= H - B - 3.0 + 1e-9, "{a:?} sits on the axis ticks");
            assert!(a.1 >= T, "{a:?} above the plot");
            for b in &labels[i + 1..] {
                let wa = 6.0 * a.2.chars().count() as f64;
                let wb = 6.0 * b.2.chars().count() as f64;
                let overlap = (a.0 - b.0).abs() < (wa + wb) / 2.0 && (a.1 - b.1).abs() < LABEL_LINE;
                assert!(!overlap, "{a:?} and {b:?} overlap");
            }
        }
    }

    /// A level run in rounds is drawn as its mean with an error bar, its rounds
    /// faint; one value label per level, not one per round.
    #[test]
    fn repeated_levels_draw_a_mean_with_an_error_bar_and_faint_rounds() {
        let pts = vec![
            Point {
                x: 1.0,
                y: 6.0,
                interval: Some((0.7, 51.9)),
                rounds: vec![4.98, 7.02],
            },
            Point {
                x: 4.0,
                y: 12.0,
                interval: Some((11.0, 13.0)),
                rounds: vec![11.5, 12.5],
            },
        ];
        let s = level_chart("t", "cand bench", "c", "tok/s", &[("mean".into(), pts)]);
        assert_eq!(s.matches("class=\"error-bar\"").count(), 2, "{s}");
        assert_eq!(s.matches("class=\"round\"").count(), 4, "{s}");
        assert_eq!(
            s.matches("<polyline").count(),
            1,
            "one line through the means"
        );
        assert_eq!(value_labels(&s).len(), 2);
        assert!(s.contains(">cand bench</text>"), "the caption");
        // The axis is scaled to the means and rounds, not to a two-round interval's top.
        assert!(s.contains(">15</text>") || s.contains(">20</text>"), "{s}");
    }
}
