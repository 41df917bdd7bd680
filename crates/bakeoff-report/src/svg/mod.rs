//! Small inline SVG charts for the HTML report: no script, no external resource, every label
//! escaped. Coordinates are plain numbers; the charts are simple on purpose.

use std::fmt::Write as _;

use crate::escape::for_html;

mod level;

pub use level::{Point, level_chart, line_chart};

pub const PALETTE: &[&str] = &[
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
];

const W: f64 = 640.0;
const H: f64 = 300.0;
const L: f64 = 64.0; // left margin (y labels)
const R: f64 = 16.0;
const T: f64 = 28.0;
const B: f64 = 48.0;

fn nice_max(v: f64) -> f64 {
    if !(v.is_finite() && v > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(v.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if v <= m * mag {
            return m * mag;
        }
    }
    10.0 * mag
}

fn fmt_num(v: f64) -> String {
    if v.abs() >= 100.0 || v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The chart's frame: title, y grid and labels, axes, axis titles; `height` is the whole
/// SVG's (the chart itself is `H` tall, a legend sits below it).
fn frame(out: &mut String, title: &str, x_label: &str, y_label: &str, ymax: f64, height: f64) {
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {height}" width="{W}" height="{height}" role="img" aria-label="{t}"><title>{t}</title><rect x="0" y="0" width="{W}" height="{height}" fill="#fff"/><text x="{L}" y="18" font-size="13" font-weight="bold">{t}</text>"##,
        t = for_html(title)
    );
    // Y grid and labels: five ticks.
    for i in 0..=4 {
        let v = ymax * f64::from(i) / 4.0;
        let y = H - B - (H - T - B) * f64::from(i) / 4.0;
        let _ = write!(
            out,
            r##"<line x1="{L}" y1="{y:.1}" x2="{x2}" y2="{y:.1}" stroke="#ddd"/><text x="{lx}" y="{ty:.1}" font-size="11" text-anchor="end">{v}</text>"##,
            x2 = W - R,
            lx = L - 6.0,
            ty = y + 4.0,
            v = fmt_num(v)
        );
    }
    let _ = write!(
        out,
        r##"<line x1="{L}" y1="{yb}" x2="{xr}" y2="{yb}" stroke="#333"/><line x1="{L}" y1="{T}" x2="{L}" y2="{yb}" stroke="#333"/><text x="{xm}" y="{xl}" font-size="12" text-anchor="middle">{xt}</text><text x="14" y="{ym}" font-size="12" text-anchor="middle" transform="rotate(-90 14 {ym})">{yt}</text>"##,
        yb = H - B,
        xr = W - R,
        xm = (L + W - R) / 2.0,
        xl = H - 8.0,
        ym = (T + H - B) / 2.0,
        xt = for_html(x_label),
        yt = for_html(y_label)
    );
}

/// Width of `n` characters of 11 px text, roughly (DejaVu Sans averages ~6.5 px).
fn text_w(n: &str) -> f64 {
    6.5 * n.chars().count() as f64
}

/// Legend rows: entries laid out left to right, wrapped to the chart's width, so every series
/// is named inside the SVG. Returns each entry's `(x, row)`.
fn legend_layout(names: &[String]) -> Vec<(f64, usize)> {
    let mut out = Vec::with_capacity(names.len());
    let (mut x, mut row) = (L, 0usize);
    for n in names {
        let w = 24.0 + text_w(n);
        if x > L && x + w > W - R {
            x = L;
            row += 1;
        }
        out.push((x, row));
        x += w;
    }
    out
}

/// Height the legend adds below the chart.
fn legend_height(names: &[String]) -> f64 {
    legend_layout(names)
        .last()
        .map(|(_, r)| 16.0 * (*r as f64 + 1.0) + 6.0)
        .unwrap_or(0.0)
}

/// The legend under the chart (`top` is its first row's top), one entry per series.
fn legend(out: &mut String, names: &[String], top: f64) {
    let max_chars = ((W - L - R - 24.0) / 6.5) as usize;
    for (i, (n, (x, row))) in names.iter().zip(legend_layout(names)).enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let y = top + 16.0 * row as f64;
        let shown: String = if n.chars().count() > max_chars {
            let mut t: String = n.chars().take(max_chars.saturating_sub(1)).collect();
            t.push('…');
            t
        } else {
            n.clone()
        };
        let _ = write!(
            out,
            r#"<g class="legend-entry"><rect x="{x:.1}" y="{y:.1}" width="10" height="10" fill="{color}"/><text x="{tx:.1}" y="{ty:.1}" font-size="11">{n}</text></g>"#,
            tx = x + 14.0,
            ty = y + 9.0,
            n = for_html(&shown)
        );
    }
}

/// The x ticks of a level chart: every level run, once, in order (a log2 axis labels what was
/// measured, not round numbers). Non-positive levels cannot sit on a log axis and are dropped.
pub fn log2_ticks(levels: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut t: Vec<f64> = levels
        .into_iter()
        .filter(|x| x.is_finite() && *x > 0.0)
        .collect();
    t.sort_by(f64::total_cmp);
    t.dedup();
    t
}

/// One line of a [`time_chart`]: its name, and `(x, value)` points (`None`: no reading, a gap).
pub type TimeSeries = (String, Vec<(f64, Option<f64>)>);

/// A time series: x linear from 0 (time since the start, in the unit `x_label` names), one line
/// per series, a `None` value breaking its line (a tick with no reading), and `bands` — spans
/// of x shaded behind the lines (outages) with their titles. Too many points to label each:
/// the axes carry the figures, and the legend names every series.
pub fn time_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[TimeSeries],
    bands: &[(f64, f64, String)],
) -> String {
    let finite = |v: &f64| v.is_finite();
    let xmax = nice_max(
        series
            .iter()
            .flat_map(|s| s.1.iter().map(|p| p.0))
            .chain(bands.iter().map(|b| b.1))
            .filter(finite)
            .fold(0.0, f64::max),
    );
    let ymax = nice_max(
        series
            .iter()
            .flat_map(|s| s.1.iter().filter_map(|p| p.1))
            .filter(finite)
            .fold(0.0, f64::max)
            * 1.1,
    );
    let names: Vec<String> = series.iter().map(|s| s.0.clone()).collect();
    let height = H + legend_height(&names);
    let mut out = String::new();
    frame(&mut out, title, x_label, y_label, ymax, height);
    let px = |x: f64| L + (W - L - R) * (x / xmax).clamp(0.0, 1.0);
    let py = |y: f64| H - B - (H - T - B) * (y / ymax).clamp(0.0, 1.0);
    for (a, b, what) in bands {
        let (xa, xb) = (px(*a), px(*b));
        let _ = write!(
            out,
            r##"<rect class="band" x="{xa:.1}" y="{T}" width="{w:.1}" height="{h:.1}" fill="#f8d7d7"><title>{t}</title></rect>"##,
            w = (xb - xa).max(2.0),
            h = H - T - B,
            t = for_html(what)
        );
    }
    for i in 0..=4 {
        let v = xmax * f64::from(i) / 4.0;
        let x = px(v);
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" y1="{yb}" x2="{x:.1}" y2="{yt}" stroke="#333"/><text class="x-tick" x="{x:.1}" y="{ty}" font-size="11" text-anchor="middle">{v}</text>"##,
            yb = H - B,
            yt = H - B + 4.0,
            ty = H - B + 16.0,
            v = fmt_num(v)
        );
    }
    for (i, (_, pts)) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let mut run: Vec<String> = Vec::new();
        let flush = |run: &mut Vec<String>, out: &mut String| {
            if run.len() > 1 {
                let _ = write!(
                    out,
                    r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
                    run.join(" ")
                );
            }
            run.clear();
        };
        for (x, y) in pts {
            match y.filter(|y| y.is_finite() && x.is_finite()) {
                Some(y) => {
                    let (cx, cy) = (px(*x), py(y));
                    run.push(format!("{cx:.1},{cy:.1}"));
                    let _ = write!(
                        out,
                        r#"<circle cx="{cx:.1}" cy="{cy:.1}" r="2.5" fill="{color}"/>"#
                    );
                }
                None => flush(&mut run, &mut out),
            }
        }
        flush(&mut run, &mut out);
    }
    legend(&mut out, &names, H + 2.0);
    out.push_str("</svg>");
    out
}

/// Scores with their Wilson intervals as error bars on a 0–100 % axis: one row per score
/// (`label`, estimate, low, high), its figures printed at the end of the row.
pub fn score_chart(title: &str, rows: &[(String, f64, f64, f64)]) -> String {
    const W: f64 = 760.0;
    let row_h = 22.0;
    let label_w = 360.0;
    let value_w = 120.0;
    let top = 40.0;
    let height = top + row_h * rows.len() as f64 + 24.0;
    let x0 = label_w;
    let x1 = W - value_w;
    let px = |p: f64| x0 + (x1 - x0) * p.clamp(0.0, 1.0);
    let mut out = String::new();
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {height}" width="{W}" height="{height}" role="img" aria-label="{t}"><title>{t}</title><rect x="0" y="0" width="{W}" height="{height}" fill="#fff"/><text x="8" y="18" font-size="13" font-weight="bold">{t}</text>"##,
        t = for_html(title)
    );
    for pct in [0, 25, 50, 75, 100] {
        let x = px(f64::from(pct) / 100.0);
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" y1="{y1}" x2="{x:.1}" y2="{y2}" stroke="#ddd"/><text x="{x:.1}" y="{ty}" font-size="10" text-anchor="middle">{pct}%</text>"##,
            y1 = top - 6.0,
            y2 = height - 22.0,
            ty = height - 8.0
        );
    }
    let max_chars = (label_w / 6.5) as usize;
    for (i, (label, est, low, high)) in rows.iter().enumerate() {
        let y = top + row_h * i as f64 + row_h / 2.0;
        let shown: String = if label.chars().count() > max_chars {
            let mut t: String = label.chars().take(max_chars.saturating_sub(1)).collect();
            t.push('…');
            t
        } else {
            label.clone()
        };
        let _ = write!(
            out,
            r##"<text x="8" y="{ty:.1}" font-size="11">{l}</text><line x1="{xl:.1}" y1="{y:.1}" x2="{xh:.1}" y2="{y:.1}" stroke="#08519c" stroke-width="2"/><line x1="{xl:.1}" y1="{ya:.1}" x2="{xl:.1}" y2="{yb:.1}" stroke="#08519c" stroke-width="2"/><line x1="{xh:.1}" y1="{ya:.1}" x2="{xh:.1}" y2="{yb:.1}" stroke="#08519c" stroke-width="2"/><circle cx="{xe:.1}" cy="{y:.1}" r="4" fill="#08519c"/><text class="value" x="{tx:.1}" y="{ty:.1}" font-size="11">{e:.0}% [{lo:.0}–{hi:.0}%]</text>"##,
            ty = y + 4.0,
            l = for_html(&shown),
            xl = px(*low),
            xh = px(*high),
            xe = px(*est),
            ya = y - 5.0,
            yb = y + 5.0,
            tx = x1 + 10.0,
            e = est * 100.0,
            lo = low * 100.0,
            hi = high * 100.0
        );
    }
    out.push_str("</svg>");
    out
}

/// Grouped bars: one group per label, one bar per series value (`None` leaves a gap).
pub fn bar_chart(
    title: &str,
    y_label: &str,
    series_names: &[String],
    groups: &[(String, Vec<Option<f64>>)],
) -> String {
    let ymax = nice_max(
        groups
            .iter()
            .flat_map(|g| g.1.iter().flatten().copied())
            .fold(0.0, f64::max)
            * 1.1,
    );
    let mut out = String::new();
    frame(
        &mut out,
        title,
        "",
        y_label,
        ymax,
        H + legend_height(series_names),
    );
    let n = groups.len().max(1) as f64;
    let gw = (W - L - R) / n;
    let k = series_names.len().max(1) as f64;
    let bw = (gw * 0.8 / k).min(40.0);
    for (gi, (label, vals)) in groups.iter().enumerate() {
        let gx = L + gw * gi as f64 + (gw - bw * k) / 2.0;
        for (si, v) in vals.iter().enumerate() {
            let Some(v) = v else { continue };
            let h = (H - T - B) * v / ymax;
            let color = PALETTE[si % PALETTE.len()];
            let _ = write!(
                out,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{bw:.1}" height="{h:.1}" fill="{color}"><title>{l} {n}: {v} ms</title></rect><text class="value" x="{tx:.1}" y="{ty:.1}" font-size="10" text-anchor="middle">{v}</text>"#,
                x = gx + bw * si as f64,
                y = H - B - h,
                l = for_html(label),
                n = for_html(&series_names[si.min(series_names.len().saturating_sub(1))]),
                v = fmt_num(*v),
                tx = gx + bw * (si as f64 + 0.5),
                ty = H - B - h - 3.0
            );
        }
        let short: String = label.chars().take((gw / 6.5) as usize).collect();
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{}" font-size="11" text-anchor="middle">{}</text>"#,
            L + gw * (gi as f64 + 0.5),
            H - B + 16.0,
            for_html(&short)
        );
    }
    legend(&mut out, series_names, H + 2.0);
    out.push_str("</svg>");
    out
}

/// A proportion and its interval as a horizontal bar on a 0–100 % scale (for tables).
pub fn interval_bar(estimate: f64, low: f64, high: f64) -> String {
    let w = 160.0;
    let x = |p: f64| 4.0 + (w - 8.0) * p.clamp(0.0, 1.0);
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} 16" width="{w}" height="16" aria-hidden="true"><line x1="4" y1="8" x2="{e}" y2="8" stroke="#ccc"/><rect x="{l:.1}" y="4" width="{iw:.1}" height="8" fill="#9ecae1"/><circle cx="{m:.1}" cy="8" r="3.5" fill="#08519c"/></svg>"##,
        e = w - 4.0,
        l = x(low),
        iw = (x(high) - x(low)).max(1.0),
        m = x(estimate)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped_and_no_script_appears() {
        let s = line_chart(
            "<script>x</script>",
            "c",
            "tok/s",
            &[("<b>".into(), vec![(1.0, 2.0), (4.0, 8.0)])],
        );
        assert!(!s.contains("<script"));
        assert!(!s.contains("<b>"));
        assert!(s.contains("&lt;script&gt;"));
        let b = bar_chart(
            "t",
            "ms",
            &["p50".into()],
            &[("a<".into(), vec![Some(1.0)])],
        );
        assert!(b.contains("a&lt;"));
    }

    #[test]
    fn log2_axis_ticks_are_the_levels_run() {
        assert_eq!(
            log2_ticks([8.0, 1.0, 2.0, 2.0, 64.0, 0.0, -1.0]),
            vec![1.0, 2.0, 8.0, 64.0]
        );
        let s = line_chart(
            "t",
            "concurrency",
            "tok/s",
            &[
                ("a".into(), vec![(1.0, 10.0), (4.0, 30.0), (16.0, 50.0)]),
                ("b".into(), vec![(2.0, 12.0), (4.0, 20.0)]),
            ],
        );
        let ticks: Vec<&str> = s
            .split("<text class=\"x-tick\"")
            .skip(1)
            .filter_map(|t| t.split('>').nth(1))
            .filter_map(|t| t.split('<').next())
            .collect();
        assert_eq!(ticks, ["1", "2", "4", "16"]);
        // Evenly spaced in log2: 1→2 and 2→4 are the same width, 4→16 twice it.
        let xs: Vec<f64> = s
            .split("<text class=\"x-tick\" x=\"")
            .skip(1)
            .filter_map(|t| t.split('"').next()?.parse().ok())
            .collect();
        assert!(((xs[1] - xs[0]) - (xs[2] - xs[1])).abs() < 0.2, "{xs:?}");
        assert!(
            ((xs[3] - xs[2]) - 2.0 * (xs[2] - xs[1])).abs() < 0.2,
            "{xs:?}"
        );
        // Every value printed, every series named.
        for v in ["10", "30", "50", "12", "20"] {
            assert!(s.contains(&format!(">{v}</text>")), "{v}");
        }
        assert_eq!(s.matches("class=\"legend-entry\"").count(), 2);
    }

    #[test]
    fn the_legend_wraps_inside_the_svg() {
        let names: Vec<String> = (0..9)
            .map(|i| format!("gemma-3-270m-llamacpp-q4km-8k bench throughput p{i}"))
            .collect();
        let layout = legend_layout(&names);
        assert!(layout.iter().all(|(x, _)| *x >= L));
        for ((x, _), n) in layout.iter().zip(&names) {
            assert!(
                x + 24.0 + text_w(n) <= W - R + 0.1,
                "{n} runs past the edge"
            );
        }
        assert!(layout.last().map(|l| l.1).unwrap_or(0) >= 4, "wrapped");
        let series: Vec<(String, Vec<(f64, f64)>)> = names
            .iter()
            .map(|n| (n.clone(), vec![(1.0, 1.0)]))
            .collect();
        let s = line_chart("t", "c", "v", &series);
        let h = H + legend_height(&names);
        assert!(
            s.contains(&format!("height=\"{h}\"")),
            "the SVG grows to hold it"
        );
    }

    #[test]
    fn score_chart_draws_intervals_with_their_figures() {
        let s = score_chart("scores", &[("a smoke".into(), 0.5, 0.2, 0.8)]);
        assert!(s.contains("50% [20–80%]"));
        assert!(s.contains("<circle"));
    }

    #[test]
    fn a_time_chart_breaks_its_line_at_a_gap_and_shades_bands() {
        let s = time_chart(
            "<x>",
            "time (s)",
            "MiB",
            &[(
                "seat <a>".into(),
                vec![
                    (0.0, Some(1.0)),
                    (1.0, Some(2.0)),
                    (2.0, None),
                    (3.0, Some(3.0)),
                    (4.0, Some(4.0)),
                ],
            )],
            &[(2.0, 3.0, "outage <b>".into())],
        );
        assert_eq!(s.matches("<polyline").count(), 2, "{s}");
        assert_eq!(s.matches("<circle").count(), 4);
        assert!(s.contains("class=\"band\""));
        assert!(!s.contains("<a>") && !s.contains("<b>") && !s.contains("<x>"));
        assert!(s.contains("outage &lt;b&gt;"));
    }

    #[test]
    fn nice_axis_maxima() {
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(nice_max(7.3), 10.0);
        assert_eq!(nice_max(180.0), 200.0);
        assert_eq!(nice_max(230.0), 250.0);
    }
}
