//! A suite's score as every rendering writes it (terminal, Markdown, HTML, the evidence
//! registry's claims): `successes/n = estimate% [low–high%]`.

use bakeoff_artifact::Score;

pub fn score_text(s: &Option<Score>) -> String {
    match s {
        Some(s) => format!(
            "{}/{} = {:.0}% [{:.0}–{:.0}%]",
            s.successes,
            s.n,
            s.estimate * 100.0,
            s.low * 100.0,
            s.high * 100.0
        ),
        None => "not scored".into(),
    }
}
