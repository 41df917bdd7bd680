//! Blocking reads (NVML, nvidia-smi, `/proc`, a subprocess) from async code: on tokio's
//! blocking pool, so no runtime thread waits on a wedged driver (tokio 1.x
//! `task::spawn_blocking`: "closures which block … should be run on this pool").

/// Runs `read` on tokio's blocking pool and waits for it without holding a runtime thread.
///
/// A panic in `read` is resumed here, as if `read` had run inline. The pool cancels a task only
/// when the runtime shuts down before it starts, and that drops this future too: then it waits
/// to be dropped rather than inventing a reading.
pub async fn off_runtime<T: Send + 'static>(read: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(read).await {
        Ok(v) => v,
        Err(e) => match e.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(_) => std::future::pending().await,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_value_comes_back_and_a_panic_is_the_callers() {
        assert_eq!(off_runtime(|| 6 * 7).await, 42);
        let caught = tokio::spawn(off_runtime(|| -> u32 { panic!("driver wedged") })).await;
        assert!(caught.is_err_and(|e| e.is_panic()));
    }
}
