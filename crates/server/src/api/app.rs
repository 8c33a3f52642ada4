//! What every handler shares ([`App`]): the store, the served leaderboards, limits,
//! metrics and the server's configuration.

use std::ops::Deref;
use std::sync::Arc;

use super::{events, workers};
use crate::limits::{Logins, Streams};
use crate::metrics::Metrics;
use crate::{Config, Stopping};

/// What every handler shares. Cheap to clone.
#[derive(Clone)]
pub(crate) struct App(Arc<Inner>);

pub(crate) struct Inner {
    pub store: store::Store,
    /// Leaderboards as served (`challenges::leaderboard`).
    pub boards: crate::boards::Boards,
    pub config: Config,
    pub metrics: Metrics,
    /// Upload checks under way at once (`Config::concurrent_checks`).
    pub checks: tokio::sync::Semaphore,
    pub logins: Logins,
    /// Sign-ups per address, shared with the web site.
    pub throttle: crate::Throttle,
    /// Live event streams per user and address.
    pub streams: Arc<Streams>,
    /// The history of each followed submission, read once per poll for all its
    /// streams.
    pub histories: events::Histories,
    pub stopping: Stopping,
}

impl Deref for App {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl App {
    pub(crate) fn new(store: store::Store, config: Config) -> App {
        // Leaderboards combine only scores of this judge's scorer (docs/service.md,
        // "Versions"); older ones wait for a rescoring.
        let store = store.with_scorer_version(judge::rescore::SCORER_VERSION);
        // Workers of another judge build than the server's are refused
        // (docs/service.md, "Workers").
        let store = match store.build() {
            Some(_) => store,
            None => store.with_build(workers::server_build()),
        };
        App(Arc::new(Inner {
            boards: Default::default(),
            store,
            checks: tokio::sync::Semaphore::new(config.concurrent_checks.max(1)),
            logins: Logins::new(
                config.login_tries_per_minute,
                config.login_tries_per_address_per_minute,
            ),
            throttle: crate::Throttle::new(config.signups_per_address_per_hour),
            streams: Arc::new(Streams::new(
                config.streams_per_user,
                config.streams_per_address,
            )),
            histories: Default::default(),
            config,
            metrics: Metrics::default(),
            stopping: Stopping::default(),
        }))
    }
}
