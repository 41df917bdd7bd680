//! The final comparison's seats: the base configuration and the winner, both up at once (the
//! winner on a port of its own), journaled as every seat a campaign starts, stopped whatever
//! happened.

use std::time::Instant;

use bakeoff_artifact::campaign::{Outcome, OutcomeKind, TrialRecord, VariantRow};
use bakeoff_seats::Seats;
use chrono::Utc;
use tokio::sync::watch;

use crate::candidate::Tune;
use crate::error::CampaignError;
use crate::file::Campaign;
use crate::journal::{Entry, Journal};
use crate::options::RunOptions;
use crate::progress::Reporter;
use crate::record::blank_row;
use crate::variant::{Variant, fleet_with};

/// A port for the winner beside the base: a free one on a loopback host, else the base's
/// port + 1 (docs/campaign.md "Tuning": keep it free on a remote host).
fn winner_port(c: &Campaign, base: &Variant) -> u16 {
    let local = c
        .fleet
        .host_of(&base.seat)
        .map(|h| h.address.as_str())
        .is_none_or(|a| matches!(a, "127.0.0.1" | "localhost" | "::1" | "[::1]"));
    if local
        && let Ok(l) = std::net::TcpListener::bind("127.0.0.1:0")
        && let Ok(a) = l.local_addr()
    {
        return a.port();
    }
    base.seat.port.saturating_add(1)
}

pub(crate) struct Compare<'a> {
    pub c: &'a Campaign,
    pub opts: &'a RunOptions,
    pub journal: &'a mut Journal,
    pub report: &'a Reporter,
    pub stop: &'a watch::Receiver<bool>,
}

impl Compare<'_> {
    /// Bring both up, compare, stop both: the comparison's row.
    pub(crate) async fn run(
        &mut self,
        t: &Tune,
        base: &Variant,
        winner: &Variant,
        record: TrialRecord,
        slug: &str,
    ) -> Result<VariantRow, CampaignError> {
        let t0 = Instant::now();
        let mut winner = winner.clone();
        winner.seat.port = winner_port(self.c, base);
        let mut row = self
            .journal
            .state()
            .rows
            .get(slug)
            .cloned()
            .unwrap_or_else(|| blank_row(&base.candidate, slug));
        row.index = base.index + 49;
        row.trial = Some(record);
        row.attempts = self
            .journal
            .state()
            .attempts
            .get(slug)
            .copied()
            .unwrap_or(0)
            + 1;
        row.started_at = Some(Utc::now());
        row.delta = vec![
            format!("base: {}", base.slug),
            format!("winner: {} (port {})", winner.slug, winner.seat.port),
        ];
        if !self.journal.state().rows.contains_key(slug) {
            // The row first, with its record: a recovery after a kill then keeps what it was.
            let mut pending = row.clone();
            pending.set_outcome(Outcome::pending());
            self.journal.append(Entry::VariantDone {
                at: Utc::now(),
                row: Box::new(pending),
            })?;
        }
        self.journal.append(Entry::VariantStarted {
            at: Utc::now(),
            variant: slug.to_string(),
            attempt: row.attempts,
        })?;
        let seats = Seats::new(
            fleet_with(&self.c.fleet, [base, &winner]),
            self.c.out.clone(),
            self.opts.watch.clone(),
        );
        let outcome = self.compare(&seats, t, base, &winner, &mut row).await;
        for v in [base, &winner] {
            if self
                .journal
                .state()
                .seats_up
                .iter()
                .any(|s| s.name == v.slug)
            {
                let message = match seats.down(&v.slug, true).await {
                    Ok(_) => String::new(),
                    Err(e) => e.to_string(),
                };
                self.journal.append(Entry::SeatStopped {
                    at: Utc::now(),
                    seat: v.slug.clone(),
                    message,
                })?;
            }
        }
        row.set_outcome(outcome?);
        row.finished_at = Some(Utc::now());
        row.timings.total_ms = t0.elapsed().as_millis() as u64;
        Ok(row)
    }

    async fn compare(
        &mut self,
        seats: &Seats,
        t: &Tune,
        base: &Variant,
        winner: &Variant,
        row: &mut VariantRow,
    ) -> Result<Outcome, CampaignError> {
        let mut urls = Vec::new();
        for v in [base, winner] {
            self.journal.append(Entry::SeatStarting {
                at: Utc::now(),
                variant: row.variant.clone(),
                seat: Box::new(v.seat.redacted()),
            })?;
            self.report
                .phase(&row.variant, &format!("starting {}", v.slug));
            let up = match seats.up(&v.slug, true, false).await {
                Ok(up) => up,
                Err(e) => return Ok(Outcome::skipped("backend", e.to_string())),
            };
            if !up.report.as_ref().is_some_and(|r| r.ready()) {
                let r = up.report.as_ref();
                return Ok(Outcome::of(
                    OutcomeKind::Invalid,
                    format!(
                        "{} did not come up for the comparison: {}",
                        v.slug,
                        r.map(|r| r.message.clone()).unwrap_or_default()
                    ),
                ));
            }
            match bakeoff_client::EndpointUrl::parse(&seats.fleet.seat_url(&v.seat)) {
                Ok(u) => urls.push(u),
                Err(e) => return Ok(Outcome::skipped("bad-address", e.to_string())),
            }
        }
        let (Some(b), Some(a)) = (urls.pop(), urls.pop()) else {
            return Ok(Outcome::skipped("backend", "no URL for the two seats"));
        };
        self.report.phase(
            &row.variant,
            "measuring the winner against the base, alternately",
        );
        match super::versus(self.c, t, a, base, b, winner, self.stop).await {
            Ok(k) => {
                row.artifacts.extend(k.artifacts.iter().cloned());
                if let Some(tr) = row.trial.as_mut() {
                    tr.value = Some(k.difference);
                    tr.comparison = Some(k);
                }
                Ok(Outcome::of(OutcomeKind::Completed, ""))
            }
            Err(e) => Ok(Outcome::of(OutcomeKind::Invalid, e)),
        }
    }
}
