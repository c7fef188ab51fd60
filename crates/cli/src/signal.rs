//! Ctrl-C and SIGTERM, for the commands that end cleanly on them (`serve` finishes what is
//! in flight; `kafka consume -G` commits and leaves its group); SIGHUP, on which `serve`
//! reads its certificate again.

use std::future::Future;

/// Starts catching Ctrl-C (and SIGTERM on Unix) now; the future resolves on the first.
/// Caught from the call on, so a supervisor that signals as soon as it is told the command
/// is up gets a clean stop, not a killed process.
pub(crate) fn stop_requested() -> impl Future<Output = ()> {
    #[cfg(unix)]
    let caught = {
        use tokio::signal::unix::{signal, SignalKind};
        signal(SignalKind::terminate())
            .and_then(|term| signal(SignalKind::interrupt()).map(|interrupt| (term, interrupt)))
    };
    async move {
        #[cfg(unix)]
        if let Ok((mut term, mut interrupt)) = caught {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = term.recv() => {}
            }
            return;
        }
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// SIGHUPs, caught from the call on (instead of ending the process); `None` if they cannot
/// be.
#[cfg(unix)]
pub(crate) fn hangups() -> Option<tokio::signal::unix::Signal> {
    use tokio::signal::unix::{signal, SignalKind};
    signal(SignalKind::hangup()).ok()
}
