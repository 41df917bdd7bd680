//! From a prompt's three answers to a row, and from the rows to the verdict. Pure, so every
//! branch is tested without a server.

use bakeoff_artifact::{
    AdapterReport, AdapterRoute, AdapterRow, AdapterVerdict, FlagCode, FlagSeverity, InstrumentFlag,
};

use super::{AdapterOptions, SUITE};
use crate::damage::{self, TopK, noise};

/// What one request gave: its greedy text and its first token's top-K, or why not.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Answer {
    pub text: Option<String>,
    pub top: Result<TopK, String>,
}

impl Default for Answer {
    fn default() -> Self {
        Self {
            text: None,
            top: Err("not sent".into()),
        }
    }
}

/// One prompt's row: KL(base ‖ adapter), KL(base ‖ base again), top-1s, text agreement.
pub(super) fn row(id: &str, base: &Answer, adapter: &Answer, again: &Answer) -> AdapterRow {
    let unmeasured = [base, adapter, again]
        .iter()
        .find_map(|a| a.top.as_ref().err().cloned());
    let kl_of = |p: &Answer, q: &Answer| match (&p.top, &q.top) {
        (Ok(p), Ok(q)) => damage::kl(p, q).ok().map(|t| t.kl),
        _ => None,
    };
    let differs = |p: &Answer, q: &Answer| match (&p.text, &q.text) {
        (Some(p), Some(q)) => Some(p != q),
        _ => None,
    };
    let top1 = |a: &Answer| {
        a.top
            .as_ref()
            .ok()
            .and_then(TopK::top1)
            .map(|t| t.token.clone())
    };
    AdapterRow {
        id: id.to_string(),
        kl: kl_of(base, adapter),
        self_kl: kl_of(base, again),
        base_top1: top1(base),
        adapter_top1: top1(adapter),
        base_again_top1: top1(again),
        text_differs: differs(base, adapter),
        self_text_differs: differs(base, again),
        unmeasured,
    }
}

/// The verdict from the rows: the instrument check on the base against itself, then the
/// adapter against the base with `eval damage`'s noise rule.
pub fn decide(
    route: AdapterRoute,
    rows: Vec<AdapterRow>,
    prompts: u64,
    options: &AdapterOptions,
) -> AdapterReport {
    let measured: Vec<&AdapterRow> = rows
        .iter()
        .filter(|r| r.unmeasured.is_none() && r.kl.is_some() && r.self_kl.is_some())
        .collect();
    let count = |f: &dyn Fn(&AdapterRow) -> bool| measured.iter().filter(|r| f(r)).count() as u64;
    let top1_differs = count(&|r| r.base_top1 != r.adapter_top1);
    let self_top1_differs = count(&|r| r.base_top1 != r.base_again_top1);
    let text_differs = count(&|r| r.text_differs == Some(true));
    let self_text_differs = count(&|r| r.self_text_differs == Some(true));
    let self_kls: Vec<f64> = measured.iter().filter_map(|r| r.self_kl).collect();
    let kls: Vec<f64> = measured.iter().filter_map(|r| r.kl).collect();
    let n = measured.len() as u64;
    let mut report = AdapterReport {
        verdict: AdapterVerdict::NotMeasured,
        message: String::new(),
        route,
        top_k: options.top_k,
        max_tokens: options.max_tokens,
        prompts,
        measured: n,
        self_check: None,
        kl: None,
        noise_floor_nats: noise::RESOLUTION_NATS,
        top1_differs,
        text_differs,
        self_text_differs,
        bootstrap_seed: noise::BOOTSTRAP_SEED,
        rows: Vec::new(),
    };
    let (Some(check), Some(kl)) = (
        noise::self_check(&self_kls, self_top1_differs),
        noise::summarize_kl(&kls),
    ) else {
        report.message = format!(
            "not measured: none of the {prompts} prompts came back with logprobs on all three \
             requests (base, adapter, base again)"
        );
        report.rows = rows;
        return report;
    };
    report.noise_floor_nats = noise::noise_floor(&check.kl);
    if !check.passed {
        report.verdict = AdapterVerdict::Withheld;
        report.message = format!(
            "withheld: the base disagreed with itself on the same text (KL upper bound {:.4} \
             nats, above the self-check's {:.0e}; top-1 changed on {self_top1_differs} and the \
             greedy text on {self_text_differs} of {n} prompts), so any difference from the \
             adapter could be the server's own noise: make it deterministic (temperature 0 \
             honoured, no sampling, no replicas behind the address) and check again",
            check.kl.high, check.limit_nats
        );
        report.self_check = Some(check);
        report.rows = rows;
        return report;
    }
    let beyond = noise::beyond_noise(&check.kl, &kl);
    // The first token can agree while later ones part: texts that differ where the base's
    // own texts never did are a difference too.
    let text_only = !beyond && self_text_differs == 0 && text_differs > 0;
    report.verdict = if beyond || text_only {
        AdapterVerdict::Applied
    } else {
        AdapterVerdict::AdapterNoOp
    };
    report.message = if beyond {
        format!(
            "applied: KL(base ‖ adapter) {:.4} nats (95 % interval {:.4}–{:.4}) over {n} prompts, \
             above the noise floor {:.0e}; top-1 differs on {top1_differs}, the greedy text on \
             {text_differs}",
            kl.mean, kl.low, kl.high, report.noise_floor_nats
        )
    } else if text_only {
        format!(
            "applied: the first token's distribution is within noise (KL {:.4} nats) but the \
             greedy text differs on {text_differs} of {n} prompts, where the base never differed \
             from itself",
            kl.mean
        )
    } else {
        format!(
            "adapter-no-op: the adapter answers as the base does, within the server's own noise \
             (KL(base ‖ adapter) {:.4} nats, interval {:.4}–{:.4}, noise floor {:.0e}; top-1 \
             differs on {top1_differs} of {n} prompts, the greedy text on {text_differs}): it is \
             served and not applied{}",
            kl.mean,
            kl.low,
            kl.high,
            report.noise_floor_nats,
            no_op_hint(&report.route)
        )
    };
    report.self_check = Some(check);
    report.kl = Some(kl);
    report.rows = rows;
    report
}

/// Where to look when an adapter does nothing, by how it is served.
fn no_op_hint(route: &AdapterRoute) -> String {
    match &route.lora {
        Some(l) if l.scale == 0.0 => format!(
            " — llama.cpp serves adapter {} at scale 0 (--lora-scaled FILE:0, \
             --lora-init-without-apply, or a POST /lora-adapters): requests without a `lora` \
             field get the base model; set its scale with POST /lora-adapters",
            l.id
        ),
        Some(_) => String::new(),
        None => " — vLLM 0.24.0's LoRA application was such a silent no-op (docs/field-cases.md F6): check \
                 the engine version, and compare with merged weights"
            .to_string(),
    }
}

/// A withheld check is an invalid measurement on the suite; a no-op adapter is the verdict,
/// not a fault of the instrument.
pub(super) fn flags(r: &AdapterReport) -> Vec<InstrumentFlag> {
    match r.verdict {
        AdapterVerdict::Withheld => vec![InstrumentFlag {
            code: FlagCode::SelfCheckFailed,
            severity: FlagSeverity::Invalid,
            message: r.message.clone(),
            suite: Some(SUITE.to_string()),
            count: None,
        }],
        _ => Vec::new(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use bakeoff_artifact::{AdapterRouteKind, LoraListing};

    use super::*;
    use crate::damage::TokenProb;

    fn answer(text: &str, top: &[(&str, f64)]) -> Answer {
        Answer {
            text: Some(text.into()),
            top: Ok(TopK {
                tokens: top
                    .iter()
                    .map(|(t, p)| TokenProb {
                        token: (*t).into(),
                        logprob: p.ln(),
                        bytes: None,
                    })
                    .collect(),
            }),
        }
    }

    fn route(scale: Option<f64>) -> AdapterRoute {
        AdapterRoute {
            kind: if scale.is_some() {
                AdapterRouteKind::LlamacppLora
            } else {
                AdapterRouteKind::ModelId
            },
            adapter: "a".into(),
            base_model: "m".into(),
            adapter_model: "m".into(),
            parent: None,
            root: None,
            lora: scale.map(|scale| LoraListing {
                id: 0,
                path: "a.gguf".into(),
                scale,
            }),
            base_fields: Default::default(),
            adapter_fields: Default::default(),
        }
    }

    const BASE: &[(&str, f64)] = &[("What", 0.4), ("<", 0.2), ("The", 0.1)];
    const MOVED: &[(&str, f64)] = &[("<", 0.4), ("What", 0.2), ("The", 0.1)];

    fn rows(n: usize, adapter: &Answer, again: &Answer) -> Vec<AdapterRow> {
        let base = answer("What is it", BASE);
        (0..n)
            .map(|i| row(&format!("p{i}"), &base, adapter, again))
            .collect()
    }

    #[test]
    fn the_base_twice_and_the_adapter_the_same_is_a_no_op() {
        let same = answer("What is it", BASE);
        let r = decide(
            route(Some(0.0)),
            rows(12, &same, &same),
            12,
            &AdapterOptions::default(),
        );
        assert_eq!(r.verdict, AdapterVerdict::AdapterNoOp, "{}", r.message);
        assert_eq!(r.kl.as_ref().unwrap().mean, 0.0);
        assert!(r.self_check.as_ref().unwrap().passed);
        assert!(r.message.contains("scale 0"), "{}", r.message);
        assert!(flags(&r).is_empty());
    }

    #[test]
    fn a_moved_distribution_is_applied_with_its_kl() {
        let same = answer("What is it", BASE);
        let moved = answer("< is it", MOVED);
        let r = decide(
            route(None),
            rows(12, &moved, &same),
            12,
            &AdapterOptions::default(),
        );
        assert_eq!(r.verdict, AdapterVerdict::Applied, "{}", r.message);
        let kl = r.kl.as_ref().unwrap();
        assert!(kl.low > r.noise_floor_nats && kl.mean > 0.05, "{kl:?}");
        assert_eq!((r.top1_differs, r.text_differs), (12, 12));
    }

    #[test]
    fn text_that_parts_after_an_equal_first_token_is_applied() {
        let same = answer("What is it", BASE);
        let later = answer("What was it", BASE);
        let r = decide(
            route(None),
            rows(5, &later, &same),
            5,
            &AdapterOptions::default(),
        );
        assert_eq!(r.verdict, AdapterVerdict::Applied, "{}", r.message);
        assert!(r.message.contains("greedy text"), "{}", r.message);
    }

    #[test]
    fn a_base_that_disagrees_with_itself_withholds_the_verdict() {
        let moved = answer("< is it", MOVED);
        // The base's second answer moves as much as the adapter's: noise that would read as
        // an applied adapter.
        let r = decide(
            route(None),
            rows(12, &moved, &moved),
            12,
            &AdapterOptions::default(),
        );
        assert_eq!(r.verdict, AdapterVerdict::Withheld, "{}", r.message);
        assert!(r.kl.is_none());
        assert!(!r.self_check.as_ref().unwrap().passed);
        assert_eq!(flags(&r)[0].code, FlagCode::SelfCheckFailed);
    }

    #[test]
    fn no_logprobs_is_not_measured() {
        let none = Answer {
            text: Some("x".into()),
            top: Err("the base request: no logprobs".into()),
        };
        let base = none.clone();
        let r = decide(
            route(None),
            vec![row("p", &base, &none, &none)],
            1,
            &AdapterOptions::default(),
        );
        assert_eq!(r.verdict, AdapterVerdict::NotMeasured);
        assert_eq!(
            r.rows[0].unmeasured.as_deref(),
            Some("the base request: no logprobs")
        );
    }
}
