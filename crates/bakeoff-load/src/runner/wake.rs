//! Waking a session's next turn at its intended time. Tokio's timer has a 1 ms grain and
//! rounds up, so a thousand sessions' tool waits would each end up to a millisecond late; an OS
//! thread of its own holds every pending wake in a heap, sleeps to within `SPIN` of the next one
//! and spins the rest, as the open loop's dispatcher does ([`super::open`]). The task woken
//! stamps its own send, so lateness still includes the runtime picking it up.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, watch};

const SPIN: Duration = Duration::from_micros(100);

struct Pending {
    at: Instant,
    seq: u64,
    wake: oneshot::Sender<()>,
}

impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

/// The wake thread of one step; it ends when the step drops its last handle.
#[derive(Clone)]
pub(super) struct WakeClock {
    tx: mpsc::Sender<(Instant, oneshot::Sender<()>)>,
}

impl WakeClock {
    pub(super) fn start() -> Self {
        let (tx, rx) = mpsc::channel::<(Instant, oneshot::Sender<()>)>();
        std::thread::spawn(move || run(rx));
        Self { tx }
    }

    /// Wait until `at`; `false` when the operator interrupted first.
    pub(super) async fn until(&self, at: Instant, cancel: &mut watch::Receiver<bool>) -> bool {
        if *cancel.borrow() {
            return false;
        }
        if at <= Instant::now() {
            return true;
        }
        let (wake, woken) = oneshot::channel();
        if self.tx.send((at, wake)).is_err() {
            // The thread is gone (it cannot be while a handle lives): the runtime's timer.
            tokio::select! {
                _ = tokio::time::sleep_until(at.into()) => return true,
                _ = cancel.changed() => return false,
            }
        }
        tokio::select! {
            r = woken => r.is_ok(),
            _ = cancel.changed() => false,
        }
    }
}

fn run(rx: mpsc::Receiver<(Instant, oneshot::Sender<()>)>) {
    let mut heap: BinaryHeap<Reverse<Pending>> = BinaryHeap::new();
    let mut seq = 0u64;
    let mut open = true;
    loop {
        let now = Instant::now();
        while heap.peek().is_some_and(|Reverse(p)| p.at <= now) {
            if let Some(Reverse(p)) = heap.pop() {
                // A receiver gone (its step interrupted) needs no wake.
                let _ = p.wake.send(());
            }
        }
        let next = heap.peek().map(|Reverse(p)| p.at);
        let got = match (next, open) {
            (None, false) => return,
            (None, true) => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
            (Some(at), _) => {
                let left = at.saturating_duration_since(Instant::now());
                if left <= SPIN {
                    std::hint::spin_loop();
                    continue;
                }
                if open {
                    rx.recv_timeout(left - SPIN)
                } else {
                    std::thread::sleep(left - SPIN);
                    continue;
                }
            }
        };
        match got {
            Ok((at, wake)) => {
                seq += 1;
                heap.push(Reverse(Pending { at, seq, wake }));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => open = false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn wakes_at_the_time_asked_and_not_before() {
        let clock = WakeClock::start();
        let (_tx, mut rx) = watch::channel(false);
        let t0 = Instant::now();
        let at = t0 + Duration::from_millis(30);
        assert!(clock.until(at, &mut rx).await);
        assert!(Instant::now() >= at);
        // Several at once, out of order: each wakes.
        let later = [40u64, 10, 25].map(|ms| Instant::now() + Duration::from_millis(ms));
        for at in later {
            let (clock, mut rx) = (clock.clone(), rx.clone());
            assert!(clock.until(at, &mut rx).await);
            assert!(Instant::now() >= at);
        }
    }

    #[tokio::test]
    async fn an_interrupt_ends_the_wait() {
        let clock = WakeClock::start();
        let (tx, mut rx) = watch::channel(false);
        let far = Instant::now() + Duration::from_secs(3600);
        let waiting = tokio::spawn(async move { clock.until(far, &mut rx).await });
        let _ = tx.send(true);
        assert!(!waiting.await.unwrap_or(true));
    }
}
