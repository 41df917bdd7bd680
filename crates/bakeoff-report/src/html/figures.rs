//! A figure as the HTML report's cells write it: `-` when there is none.

/// A latency in ms: one decimal below 100 ms, none above.
pub(super) fn ms(v: Option<f64>) -> String {
    match v {
        Some(x) if x < 100.0 => format!("{x:.1}"),
        Some(x) => format!("{x:.0}"),
        None => "-".into(),
    }
}

pub(super) fn fixed(v: Option<f64>, digits: usize) -> String {
    v.map(|x| format!("{x:.digits$}"))
        .unwrap_or_else(|| "-".into())
}

pub(super) fn num(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.0}")).unwrap_or_else(|| "-".into())
}
