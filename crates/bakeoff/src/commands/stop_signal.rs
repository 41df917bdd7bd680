//! Ctrl-C or SIGTERM, for every long command: each stops cleanly on either and keeps what it
//! measured (`eval run`, `eval damage`, `eval adapter`, `bench run`, `campaign run`, `seat monitor`).

/// Resolves at the first Ctrl-C or SIGTERM.
pub async fn wait() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// A stop flag for a long command: it turns `true` at the first Ctrl-C or SIGTERM. The watcher
/// ends when the guard drops, so an early return never leaves it behind.
pub struct StopWatch {
    pub rx: tokio::sync::watch::Receiver<bool>,
    watcher: tokio::task::JoinHandle<()>,
}

impl Drop for StopWatch {
    fn drop(&mut self) {
        self.watcher.abort();
    }
}

/// Start watching for Ctrl-C and SIGTERM.
pub fn watch() -> StopWatch {
    let (tx, rx) = tokio::sync::watch::channel(false);
    let watcher = tokio::spawn(async move {
        wait().await;
        let _ = tx.send(true);
    });
    StopWatch { rx, watcher }
}
