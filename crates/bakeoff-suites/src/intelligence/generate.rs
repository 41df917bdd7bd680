//! The default battery, generated from a fixed seed with a self-contained SplitMix64, so the
//! shipped file (data/intelligence-default.jsonl) is reproducible byte for byte by any build:
//! `BAKEOFF_UPDATE_BATTERY=1 cargo test -p bakeoff-suites --lib regenerates_the_shipped_battery`
//! rewrites it, and the same test fails when the file and the generator disagree.
//!
//! Six families of original items, 36 each: arithmetic, date-arithmetic, ordering,
//! spatial-grid, unit-conversion and contradiction (either statement of the contradicting
//! pair is accepted: contradiction is symmetric).
//!
//! Answer positions are stratified, not drawn: in `ordering` the answer of the j-th item with
//! k options sits at letter `j mod k`, and `contradiction` cycles through the ten letter pairs
//! of five options. So no constant reply ("always A") beats the chance floor by more than an
//! item's worth (a drawn position gave "always A" 55.6 % on contradiction, chance 40 %). Prompts
//! are unique within a family: a repeat is redrawn.

use super::battery::{BatteryItem, LETTERS, Scoring};

pub const SEED: u64 = 0xBA4E_0FF5_EED5_2026;
pub const PER_FAMILY: usize = 36;

/// The project's SplitMix64 (bakeoff-stats), with the draws the generator needs. Its output for
/// a seed never changes, so the shipped battery regenerates byte for byte.
pub struct Rng(bakeoff_stats::SplitMix64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(bakeoff_stats::SplitMix64::new(seed))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi - lo + 1) as u64;
        lo + (self.next_u64() % span) as i64
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.range(0, xs.len() as i64 - 1) as usize]
    }
    pub fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = self.range(0, i as i64) as usize;
            xs.swap(i, j);
        }
    }
}

fn open(id: String, family: &str, prompt: String, answer: String, scoring: Scoring) -> BatteryItem {
    BatteryItem {
        id,
        family: family.into(),
        prompt,
        options: None,
        answers: vec![answer],
        scoring,
    }
}

fn arithmetic(r: &mut Rng, i: usize) -> BatteryItem {
    let (a, b) = (r.range(12, 999), r.range(2, 99));
    let (sym, v) = match i % 3 {
        0 => ("+", a + b),
        1 => ("-", a - b),
        _ => ("*", a * b),
    };
    open(
        format!("arith-{i:03}"),
        "arithmetic",
        format!("What is {a} {sym} {b}? Reply with only the number."),
        v.to_string(),
        Scoring::Integer,
    )
}

/// Days since 1970-01-01 for a civil date (H. Hinnant's `days_from_civil`).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

fn date_arithmetic(r: &mut Rng, i: usize) -> BatteryItem {
    let start = days_from_civil(r.range(2001, 2030), r.range(1, 12), r.range(1, 28));
    let n = r.range(3, 120);
    let after = i.is_multiple_of(2);
    let (y, m, d) = civil_from_days(start);
    let (ey, em, ed) = civil_from_days(if after { start + n } else { start - n });
    open(
        format!("date-{i:03}"),
        "date-arithmetic",
        format!(
            "What date is {n} days {} {y:04}-{m:02}-{d:02}? Reply with only the date in YYYY-MM-DD format.",
            if after { "after" } else { "before" }
        ),
        format!("{ey:04}-{em:02}-{ed:02}"),
        Scoring::Date,
    )
}

const NAMES: &[&str] = &[
    "Ana", "Bruno", "Chen", "Dara", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jun", "Kemal",
    "Lena", "Mirek", "Noor", "Oskar", "Pia",
];

fn ordering(r: &mut Rng, i: usize) -> BatteryItem {
    let k = 3 + i % 3; // 3, 4 or 5 people
    let mut names: Vec<&str> = NAMES.to_vec();
    r.shuffle(&mut names);
    let chain: Vec<&str> = names[..k].to_vec(); // tallest first
    let (adj, sup_hi, sup_lo) = *r.pick(&[
        ("taller", "tallest", "shortest"),
        ("older", "oldest", "youngest"),
        ("faster", "fastest", "slowest"),
    ]);
    let mut facts: Vec<String> = chain
        .windows(2)
        .map(|w| format!("{} is {adj} than {}.", w[0], w[1]))
        .collect();
    r.shuffle(&mut facts);
    let ask_hi = r.range(0, 1) == 0;
    let answer_name = if ask_hi { chain[0] } else { chain[k - 1] };
    // The others in random order, the answer at its stratified letter.
    let mut options: Vec<String> = chain
        .iter()
        .filter(|n| **n != answer_name)
        .map(|s| s.to_string())
        .collect();
    r.shuffle(&mut options);
    let idx = (i / 3) % k;
    options.insert(idx, answer_name.to_string());
    BatteryItem {
        id: format!("order-{i:03}"),
        family: "ordering".into(),
        prompt: format!(
            "{} Who is the {}? Reply with only the letter of the option.",
            facts.join(" "),
            if ask_hi { sup_hi } else { sup_lo }
        ),
        options: Some(options),
        answers: vec![(LETTERS[idx] as char).to_string()],
        scoring: Scoring::Choice,
    }
}

fn spatial(r: &mut Rng, i: usize) -> BatteryItem {
    let (mut x, mut y) = (r.range(0, 5), r.range(0, 5));
    let start = (x, y);
    let steps = 2 + i % 3;
    let mut moves = Vec::new();
    for _ in 0..steps {
        let n = r.range(1, 4);
        match r.range(0, 3) {
            0 => {
                y += n;
                moves.push(format!("up {n}"));
            }
            1 => {
                y -= n;
                moves.push(format!("down {n}"));
            }
            2 => {
                x += n;
                moves.push(format!("right {n}"));
            }
            _ => {
                x -= n;
                moves.push(format!("left {n}"));
            }
        }
    }
    open(
        format!("grid-{i:03}"),
        "spatial-grid",
        format!(
            "On a grid, x grows to the right and y grows upward. You start at ({}, {}) and move {}. \
             Where are you now? Reply with only the coordinates as (x, y).",
            start.0,
            start.1,
            moves.join(", then ")
        ),
        format!("({x}, {y})"),
        Scoring::Exact,
    )
}

fn units(r: &mut Rng, i: usize) -> BatteryItem {
    let (from, to, factor) = *r.pick(&[
        ("metres", "centimetres", 100),
        ("kilometres", "metres", 1000),
        ("hours", "minutes", 60),
        ("minutes", "seconds", 60),
        ("kilograms", "grams", 1000),
        ("litres", "millilitres", 1000),
        ("days", "hours", 24),
        ("centimetres", "millimetres", 10),
    ]);
    let n = r.range(2, 48);
    open(
        format!("unit-{i:03}"),
        "unit-conversion",
        format!("How many {to} are in {n} {from}? Reply with only the number."),
        (n * factor).to_string(),
        Scoring::Integer,
    )
}

const THINGS: &[(&str, &str)] = &[
    ("the red box", "the blue box"),
    ("the oak tree", "the pine tree"),
    ("the north tower", "the south tower"),
    ("the silver car", "the green car"),
    ("the left bridge", "the right bridge"),
];

/// The ten letter pairs of five options, ordered so that any prefix spreads the letters evenly
/// (the first six use each letter two or three times).
const CONTRADICTION_PAIRS: [(usize, usize); 10] = [
    (0, 1),
    (2, 3),
    (0, 4),
    (1, 2),
    (3, 4),
    (0, 2),
    (1, 3),
    (2, 4),
    (0, 3),
    (1, 4),
];

fn contradiction(r: &mut Rng, i: usize) -> BatteryItem {
    let who = *r.pick(NAMES);
    let year = r.range(1950, 2005);
    let (a, b) = *r.pick(THINGS);
    let rel = *r.pick(&["heavier", "older", "taller", "longer"]);
    let city = *r.pick(&["Porto", "Tallinn", "Quito", "Osaka", "Accra", "Perth"]);
    let other_city = *r.pick(&["Lyon", "Gdansk", "Lima", "Kobe", "Dakar", "Hobart"]);
    let pets = r.range(2, 5);
    // A contradicting pair and three consistent fillers; which pair varies by item.
    let (p, q) = match i % 3 {
        0 => (
            format!("{} is {rel} than {}.", cap(a), b),
            format!("{} is {rel} than {}.", cap(b), a),
        ),
        1 => (
            format!("{who} was born in {year}."),
            format!("{who} was born in {}.", year + r.range(3, 12)),
        ),
        _ => (
            format!("{who} has never left {city}."),
            format!("{who} spent last winter in {other_city}, far from {city}."),
        ),
    };
    let fillers = [
        format!("{who} owns {pets} bicycles."),
        format!("The library in {city} opens at nine."),
        format!("{} was painted last spring.", cap(a)),
        format!("{who} likes tea more than coffee."),
        format!("{} stands near the river.", cap(b)),
    ];
    let mut f: Vec<String> = fillers.to_vec();
    r.shuffle(&mut f);
    // The pair at its stratified letters (which of the two comes first is drawn), the fillers
    // in the other three places.
    let (lo, hi) = CONTRADICTION_PAIRS[i % CONTRADICTION_PAIRS.len()];
    let (first, second) = if r.range(0, 1) == 0 { (p, q) } else { (q, p) };
    let mut fill = f.into_iter();
    let statements: Vec<String> = (0..5)
        .map(|slot| match slot {
            s if s == lo => first.clone(),
            s if s == hi => second.clone(),
            _ => fill.next().unwrap_or_default(),
        })
        .collect();
    let answers: Vec<String> = [lo, hi]
        .iter()
        .map(|&k| (LETTERS[k] as char).to_string())
        .collect();
    BatteryItem {
        id: format!("contra-{i:03}"),
        family: "contradiction".into(),
        prompt:
            "Exactly two of the following statements contradict each other. Name one of those two \
                 statements: reply with only its letter."
                .into(),
        options: Some(statements),
        answers,
        scoring: Scoring::Choice,
    }
}

fn cap(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// The default battery: family by family, `PER_FAMILY` items each, from [`SEED`].
pub fn default_battery() -> Vec<BatteryItem> {
    let mut r = Rng::new(SEED);
    let gens: [fn(&mut Rng, usize) -> BatteryItem; 6] = [
        arithmetic,
        date_arithmetic,
        ordering,
        spatial,
        units,
        contradiction,
    ];
    let mut out = Vec::with_capacity(gens.len() * PER_FAMILY);
    for g in gens {
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..PER_FAMILY {
            let mut item = g(&mut r, i);
            // A repeated prompt is redrawn (the next draws differ); the bound only guards
            // against a generator that cannot vary, which the tests would catch.
            for _ in 0..64 {
                if seen.insert(item.rendered_prompt()) {
                    break;
                }
                item = g(&mut r, i);
            }
            out.push(item);
        }
    }
    out
}

/// The JSONL text of the default battery, as shipped.
pub fn default_battery_jsonl() -> String {
    let mut s = String::new();
    for it in default_battery() {
        s.push_str(&super::battery::to_line(&it));
        s.push('\n');
    }
    s
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_round_trip() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(
            civil_from_days(days_from_civil(2024, 2, 29) + 1),
            (2024, 3, 1)
        );
        assert_eq!(
            civil_from_days(days_from_civil(2023, 12, 31) + 1),
            (2024, 1, 1)
        );
        for z in (-1000..30_000).step_by(7) {
            let (y, m, d) = civil_from_days(z);
            assert_eq!(days_from_civil(y, m, d), z);
        }
    }

    /// What always answering `letter` scores on a family, against its chance floor.
    fn constant_reply(items: &[BatteryItem], family: &str, letter: &str) -> (usize, f64) {
        let fam: Vec<&BatteryItem> = items.iter().filter(|i| i.family == family).collect();
        let hits = fam
            .iter()
            .filter(|i| i.answers.iter().any(|a| a == letter))
            .count();
        let chance: f64 = fam.iter().map(|i| i.chance()).sum();
        (hits, chance)
    }

    #[test]
    fn no_constant_letter_beats_chance_by_more_than_an_item() {
        let items = default_battery();
        for fam in ["ordering", "contradiction"] {
            for l in ["A", "B", "C", "D", "E"] {
                let (hits, chance) = constant_reply(&items, fam, l);
                assert!(
                    hits as f64 <= chance + 1.0,
                    "always {l} on {fam}: {hits} items, chance {chance:.1}"
                );
            }
        }
    }

    #[test]
    fn regenerates_the_shipped_battery() {
        let text = default_battery_jsonl();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data/intelligence-default.jsonl");
        if std::env::var_os("BAKEOFF_UPDATE_BATTERY").is_some() {
            std::fs::write(&path, &text).unwrap();
        }
        let shipped = std::fs::read_to_string(&path).unwrap();
        assert!(
            shipped == text,
            "data/intelligence-default.jsonl differs from the generator: rerun with BAKEOFF_UPDATE_BATTERY=1"
        );
        let items = super::super::battery::parse(&shipped, "shipped").unwrap();
        assert!(items.len() >= 200);
        let mut fams: Vec<&str> = items.iter().map(|i| i.family.as_str()).collect();
        fams.dedup();
        assert_eq!(fams.len(), 6);
        // No repeated prompt within a family.
        let mut prompts: Vec<(String, String)> = items
            .iter()
            .map(|i| (i.family.clone(), i.rendered_prompt()))
            .collect();
        prompts.sort();
        prompts.dedup();
        assert_eq!(prompts.len(), items.len());
        // Every contradiction item accepts exactly the two statements of its pair.
        assert!(
            items
                .iter()
                .filter(|i| i.family == "contradiction")
                .all(|i| i.answers.len() == 2)
        );
    }
}
