//! The terminal rendering of `bakeoff eval compare A B` (the comparison is [`super::compare`]).
//! Pure: it returns the text and prints nothing.

use super::{FamilyComparison, RunComparison};
use crate::escape::for_terminal;

/// The comparison for a terminal: the two runs, the differences found between them (allowed or
/// not), notices and left-out pairs, the family table (and the refusal suite's own), the damage
/// along the reply, then one verdict line per family or the reason there is none. Artifact
/// paths, suite and family names and the reasons come from artifact files and go through
/// [`for_terminal`].
pub fn text(c: &RunComparison) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "paired comparison\n  A: {}\n  B: {}\n",
        for_terminal(&c.a, 200),
        for_terminal(&c.b, 200)
    ));
    for cf in &c.confounds {
        s.push_str(&format!(
            "  difference: {}{}\n",
            for_terminal(&cf.detail, 300),
            if cf.allowed { " (allowed)" } else { "" }
        ));
    }
    for n in &c.notices {
        s.push_str(&format!("  notice: {}\n", for_terminal(n, 300)));
    }
    for sk in &c.skipped_suites {
        s.push_str(&format!(
            "  not paired: {}\n",
            for_terminal(&sk.reason, 300)
        ));
    }
    if c.unscored_pairs > 0 {
        s.push_str(&format!(
            "  {} paired item(s) left out: not scored in one of the runs\n",
            c.unscored_pairs
        ));
    }
    // Rows that count something other than passed items (the refusal suite's) get their own
    // table, headed by what they count.
    let (counted, passed): (Vec<&FamilyComparison>, Vec<&FamilyComparison>) =
        c.families.iter().partition(|f| f.measure.is_some());
    if !passed.is_empty() {
        s.push_str(&format!(
            "\n{:<14} {:<20} {:>5} {:>8} {:>8} {:>22} {:>22} {:>8} {:>10}\n",
            "suite", "family", "n", "A ok", "B ok", "B lost", "B gained", "p", "min diff"
        ));
    }
    for f in passed {
        let (aok, bok, p) = match &f.paired {
            Some(p) => (
                p.both_correct + p.only_a,
                p.both_correct + p.only_b,
                format!("{:.3}", p.p_value),
            ),
            None => (0, 0, "-".into()),
        };
        let mdd = f.min_detectable_cell();
        s.push_str(&format!(
            "{:<14} {:<20} {:>5} {:>8} {:>8} {:>22} {:>22} {:>8} {:>10}\n",
            for_terminal(&f.suite, 14),
            for_terminal(&f.family, 20),
            f.pairs,
            aok,
            bok,
            f.lost,
            f.gained,
            p,
            mdd
        ));
    }
    s.push_str(&refusal_table(&counted));
    if let Some(d) = &c.damage {
        s.push_str(&format!(
            "\ndamage along the reply, paired by prompt ({} prompts): identical only in A {}, only in B {} (exact McNemar p = {:.3}){}\ndamage: {}\n",
            d.pairs,
            d.identical_only_a,
            d.identical_only_b,
            d.agreement_p_value,
            d.kl_difference
                .map(|[m, lo, hi]| format!(
                    "; per-token KL B − A {m:+.3e} nats [95% bootstrap {lo:+.3e}, {hi:+.3e}]"
                ))
                .unwrap_or_default(),
            d.verdict
        ));
    }
    s.push('\n');
    for (side, v) in [("A", &c.contaminated_a), ("B", &c.contaminated_b)] {
        for x in v {
            s.push_str(&format!("contaminated: {side} {}\n", for_terminal(x, 400)));
        }
    }
    match &c.no_verdict_reason {
        Some(r) => s.push_str(&format!("{}\n", for_terminal(r, 600))),
        None => {
            for f in &c.families {
                let flags = if f.instrument_flags.is_empty() {
                    String::new()
                } else {
                    format!(" [{}]", f.instrument_flags.join(", "))
                };
                s.push_str(&format!(
                    "{}/{}: {}{}\n",
                    for_terminal(&f.suite, 40),
                    for_terminal(&f.family, 40),
                    f.verdict,
                    for_terminal(&flags, 200)
                ));
            }
        }
    }
    s
}

/// The refusal suite's paired rows: refusals per run and the discordant pairs that decide.
fn refusal_table(rows: &[&FamilyComparison]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "\n{:<14} {:>5} {:>10} {:>10} {:>16} {:>16} {:>8} {:>10}\n",
        "suite", "n", "A refused", "B refused", "only A refused", "only B refused", "p", "min diff"
    );
    for f in rows {
        let cells = match &f.paired {
            Some(p) => [
                (p.both_correct + p.only_a).to_string(),
                (p.both_correct + p.only_b).to_string(),
                p.only_a.to_string(),
                p.only_b.to_string(),
                format!("{:.3}", p.p_value),
            ],
            None => ["-", "-", "-", "-", "-"].map(String::from),
        };
        let mdd = f.min_detectable_cell();
        let [ra, rb, oa, ob, p] = cells;
        s.push_str(&format!(
            "{:<14} {:>5} {ra:>10} {rb:>10} {oa:>16} {ob:>16} {p:>8} {mdd:>10}\n",
            for_terminal(&f.suite, 14),
            f.pairs,
        ));
    }
    s
}
