//! What the criterion benches share.

use std::time::Duration;

use criterion::Criterion;

/// Criterion's settings for every bench here: short by default, as the machine is small and
/// shared (1 s warm-up, 2 s measurement, 20 samples); command-line flags still override.
pub(crate) fn short_criterion() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
}
