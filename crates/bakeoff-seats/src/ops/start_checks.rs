//! The checks `up` runs before a seat starts, beside the pre-start hooks: its port (no sibling
//! on the same host and port is up, no released seat's process still holds what this start
//! needs) and its GPU memory beside the seats already up on the GPUs it shares.

use super::{OpsError, Seats};
use crate::fleet::types::Seat;

/// The GPUs a seat is given: a container's `gpus`, a process's `CUDA_VISIBLE_DEVICES`.
pub(super) fn seat_gpus(seat: &Seat) -> Vec<String> {
    seat.gpu_ids()
}

/// Whether two seats' GPU lists name a GPU in common (`all` shares every GPU).
pub(super) fn share_a_gpu(a: &[String], b: &[String]) -> bool {
    a.iter()
        .any(|g| g == "all" || b.iter().any(|h| h == g || h == "all"))
}

impl Seats {
    pub(super) async fn port_check(&self, seat: &Seat) -> Result<(), OpsError> {
        self.port_check_except(seat, None).await
    }

    /// The port check, ignoring `except` (a swap's OLD, which is stopped next). A sibling
    /// whose state is unknown (its Docker engine does not answer) does not block: if it does
    /// hold the port, the start fails as a classified `port-in-use` and nothing serving is
    /// touched.
    pub(super) async fn port_check_except(
        &self,
        seat: &Seat,
        except: Option<&str>,
    ) -> Result<(), OpsError> {
        // A process that outlived an earlier stop (a zombie loader) of any seat on this host
        // with the same port or a shared GPU — the seat itself included, and a swap's OLD too —
        // holds what this start needs: refuse while it lives (crate::release).
        let gpus = seat_gpus(seat);
        let proc = crate::release::ProcRoot::system();
        for other in self.fleet.seats.iter().filter(|o| {
            o.host == seat.host
                && (o.port == seat.port || seat_gpus(o).iter().any(|g| gpus.contains(g)))
        }) {
            if let Some(z) = crate::release::live_zombie(&self.fleet.state_dir, &other.name, &proc)
            {
                return Err(OpsError::ZombieLoader {
                    seat: seat.name.clone(),
                    left_by: other.name.clone(),
                    pid: z.pid,
                    state: z.state,
                    state_words: crate::release::state_words(z.state),
                    held: z.held(),
                    fix: z.fix(),
                });
            }
        }
        for other in self
            .fleet
            .port_siblings(seat)
            .filter(|o| Some(o.name.as_str()) != except)
        {
            if self.status_of(other).await.observed.is_up() {
                return Err(OpsError::PortTaken {
                    seat: seat.name.clone(),
                    other: other.name.clone(),
                    port: seat.port,
                    host: seat.host.clone(),
                });
            }
        }
        self.placement_check(seat, except).await
    }

    /// The memory check (`plan --coexist`'s arithmetic, per host): a seat whose claim does not
    /// fit beside the seats already up on a GPU it shares is refused with the arithmetic. Only
    /// seats on the same host and a shared GPU count; a swap's OLD (`except`) and the seat's
    /// own port siblings (alternatives, never up beside it) do not. An answer other than NO
    /// (`unknown`, `not-checked`: no size for the GPU) lets the start go ahead.
    async fn placement_check(&self, seat: &Seat, except: Option<&str>) -> Result<(), OpsError> {
        let Some(check) = &self.placement else {
            return Ok(());
        };
        let mine = seat_gpus(seat);
        if mine.is_empty() {
            return Ok(());
        }
        let mut staying = Vec::new();
        for o in self.fleet.seats.iter().filter(|o| {
            o.name != seat.name
                && Some(o.name.as_str()) != except
                && o.host == seat.host
                && o.port != seat.port
                && share_a_gpu(&mine, &seat_gpus(o))
        }) {
            if self.status_of(o).await.observed.is_up() {
                staying.push(o.name.clone());
            }
        }
        if staying.is_empty() {
            return Ok(());
        }
        let fit = check(&self.fleet, &seat.name, &staying).await;
        if fit.answer == "no" {
            return Err(OpsError::DoesNotFit {
                seat: seat.name.clone(),
                beside: staying.join(", "),
                host: seat.host.clone(),
                arithmetic: fit
                    .lines
                    .iter()
                    .map(|l| l.trim())
                    .collect::<Vec<_>>()
                    .join("; "),
            });
        }
        Ok(())
    }
}
