//! The platform's HTTP server: the JSON API at `/api/v1` over [`store::Store`] (the
//! contract is the table "HTTP API" of docs/architecture.md; how it behaves is
//! docs/service.md, "HTTP API"), its OpenAPI document (`/api/v1/openapi.json`, generated
//! from this code with `utoipa`), server-sent events of a submission's state changes,
//! `/healthz` and `/metrics`.
//!
//! - **Who may do what**: bearer tokens (`Authorization: Bearer pj_…`) name a user, an
//!   organiser or a participant; a worker's token is refused on every endpoint here
//!   (it is good for the queue only). A team sees its own submissions, the exam only as
//!   `result.json` already reduced it (counts and the ranking numbers at the
//!   challenge's precision: docs/judge.md, "What a participant sees of each split");
//!   organisers see everything.
//! - **Uploads** are streamed to a file in the state folder (never held whole in
//!   memory), counted and hashed while they arrive, synced to disk, checked with the
//!   judge's own unpack rules, and only then recorded — so a refused entry costs the
//!   team nothing and a recorded one is on disk.
//! - **Errors** are `{"error": {"code", "message", …}}` with the statuses of the
//!   contract; JSON is written with `<`, `>` and `&` escaped, so a hostile name cannot
//!   become markup even where a client mistakes the body for HTML.
//!
//! Not here: judging (workers take jobs from the store's queue), moving jobs between
//! machines (`dispatch`), web pages (the `web` crate, which makes its changes through
//! this router), the command line (`physiojudge serve`
//! builds a [`Server`] and serves it).

mod api;
mod auth;
mod boards;
mod config;
mod error;
mod json;
pub mod layout;
mod limits;
mod metrics;
mod serve;
pub mod sight;
pub mod starter;
pub mod views;

use std::path::Path;
use std::sync::Arc;

pub use config::{Config, OnQueued, ProgressSource, RunProgress};
pub use error::{ApiError, ServerError};
pub use limits::{ClientAddr, Throttle};
pub use serve::{Connections, serve};
pub use views::ErrorBody;

/// The HTTP server: the API's router over a store and a state folder.
#[derive(Clone)]
pub struct Server {
    app: api::App,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("state_dir", &self.app.config.state_dir)
            .finish()
    }
}

impl Server {
    /// A server over `store`, keeping files in `config.state_dir` (its folders are made
    /// now; uploads a previous run left unfinished in `incoming/` are removed).
    pub fn new(store: store::Store, config: Config) -> Result<Server, ServerError> {
        layout::prepare(&config.state_dir, &config.incoming())?;
        Ok(Server {
            app: api::App::new(store, config),
        })
    }

    /// The routes: `/api/v1/…`, `/healthz`, `/metrics`. Compose it with other routes
    /// (the web pages, a worker endpoint) as an `axum::Router`.
    pub fn router(&self) -> axum::Router {
        api::router(self.app.clone())
    }

    /// The OpenAPI 3 document served at `/api/v1/openapi.json`.
    pub fn openapi() -> utoipa::openapi::OpenApi {
        api::openapi()
    }

    /// The limits the web site shares with the API (sign-ups per address).
    pub fn throttle(&self) -> Throttle {
        self.app.throttle.clone()
    }

    /// How connections are kept (to serve another router the same way).
    pub fn connections(&self) -> &Connections {
        &self.app.config.connections
    }

    /// The state folder.
    pub fn state_dir(&self) -> &Path {
        &self.app.config.state_dir
    }

    /// Serves on `listener` until the process ends.
    pub async fn serve(self, listener: tokio::net::TcpListener) -> Result<(), ServerError> {
        self.serve_until(listener, std::future::pending()).await
    }

    /// Serves on `listener` until `stop` completes, then finishes the requests in
    /// progress (an event stream ends at its next poll).
    pub async fn serve_until(
        self,
        listener: tokio::net::TcpListener,
        stop: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServerError> {
        let stopping = self.app.stopping.clone();
        let stop = async move {
            stop.await;
            stopping.cancel();
        };
        let connections = self.app.config.connections.clone();
        serve::serve(listener, self.router(), connections, stop)
            .await
            .map_err(ServerError::Serve)
    }
}

/// A flag the event streams watch, so that a server stopping does not wait for
/// clients that never hang up.
#[derive(Clone, Default)]
pub(crate) struct Stopping(Arc<tokio::sync::watch::Sender<bool>>);

impl Stopping {
    pub(crate) fn cancel(&self) {
        self.0.send_replace(true);
    }

    pub(crate) fn subscribe(&self) -> tokio::sync::watch::Receiver<bool> {
        self.0.subscribe()
    }
}
