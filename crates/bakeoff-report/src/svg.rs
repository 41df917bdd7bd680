//! Small inline SVG charts for the HTML report: no script, no external resource, every label
//! escaped. Coordinates are plain numbers; the charts are simple on purpose.

use std::fmt::Write as _;

use crate::escape::for_html;

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

fn frame(out: &mut String, title: &str, x_label: &str, y_label: &str, ymax: f64) {
    let _ = write!(
        out,
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="{t}"><title>{t}</title><rect x="0" y="0" width="{W}" height="{H}" fill="#fff"/><text x="{L}" y="18" font-size="13" font-weight="bold">{t}</text>"##,
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

fn legend(out: &mut String, names: &[String]) {
    let mut x = L + 8.0;
    for (i, n) in names.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let _ = write!(
            out,
            r#"<rect x="{x:.1}" y="{y}" width="10" height="10" fill="{color}"/><text x="{tx:.1}" y="{ty}" font-size="11">{n}</text>"#,
            y = T + 2.0,
            tx = x + 14.0,
            ty = T + 11.0,
            n = for_html(n)
        );
        x += 24.0 + 6.5 * n.chars().count() as f64;
    }
}

/// Lines through `(x, y)` points, one per series, on linear axes from zero.
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
) -> String {
    let xmax = nice_max(
        series
            .iter()
            .flat_map(|s| s.1.iter().map(|p| p.0))
            .fold(0.0, f64::max),
    );
    let ymax = nice_max(
        series
            .iter()
            .flat_map(|s| s.1.iter().map(|p| p.1))
            .fold(0.0, f64::max)
            * 1.1,
    );
    let mut out = String::new();
    frame(&mut out, title, x_label, y_label, ymax);
    let px = |x: f64| L + (W - L - R) * x / xmax;
    let py = |y: f64| H - B - (H - T - B) * y / ymax;
    for i in 0..=4 {
        let v = xmax * f64::from(i) / 4.0;
        let _ = write!(
            out,
            r#"<text x="{:.1}" y="{}" font-size="11" text-anchor="middle">{}</text>"#,
            px(v),
            H - B + 16.0,
            fmt_num(v)
        );
    }
    for (i, (_, pts)) in series.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let mut pts = pts.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let path: Vec<String> = pts
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", px(*x), py(*y)))
            .collect();
        let _ = write!(
            out,
            r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
            path.join(" ")
        );
        for (x, y) in &pts {
            let _ = write!(
                out,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{color}"><title>{} → {}</title></circle>"#,
                px(*x),
                py(*y),
                fmt_num(*x),
                fmt_num(*y)
            );
        }
    }
    let names: Vec<String> = series.iter().map(|s| s.0.clone()).collect();
    legend(&mut out, &names);
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
    frame(&mut out, title, "", y_label, ymax);
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
                r#"<rect x="{:.1}" y="{:.1}" width="{bw:.1}" height="{h:.1}" fill="{color}"><title>{} {}: {} ms</title></rect>"#,
                gx + bw * si as f64,
                H - B - h,
                for_html(label),
                for_html(&series_names[si.min(series_names.len().saturating_sub(1))]),
                fmt_num(*v)
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
    legend(&mut out, series_names);
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
    fn nice_axis_maxima() {
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(nice_max(7.3), 10.0);
        assert_eq!(nice_max(180.0), 200.0);
        assert_eq!(nice_max(230.0), 250.0);
    }
}
