//! A fleet's two wires (docs/service.md, "A fleet"): how a `physiojudge worker` on
//! another machine sees the platform's queue, dialling out only.
//!
//! - [`RemoteDispatch`]: the [`dispatch::Dispatch`] trait over the server's HTTP API
//!   (`/api/v1/queue/…`, a worker's token). The server answers each call with its own
//!   queue and store, so a remote worker keeps exactly the rules of a local one. The
//!   entry is downloaded before judging; the result folder is sent before the report.
//! - [`Doorbell`]: job notices over NATS JetStream. The server rings once for every
//!   submission queued ([`spawn_ringer`]); an idle worker waits for a ring, then takes
//!   from the server. A notice is only a hint: the store decides which job a worker
//!   gets, a lost notice costs a poll's wait (workers also look every
//!   [`RemoteConfig::poll_every`]), and a duplicate costs one empty take. PostgreSQL
//!   stays the system of record; nothing is lost if NATS is.
//!
//! Not here: judging (`worker`, which runs a pool over any `Dispatch`), the queue's
//! rules (`store`), the server's endpoints (`server`).

mod doorbell;
mod remote;

pub use doorbell::{Doorbell, Listener, Notice, NoticeCounts, QueueUrl, spawn_ringer};
pub use remote::{RemoteConfig, RemoteDispatch, TakeCounts};

/// What can go wrong with a fleet's wires.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// A `--queue` address that is not `nats://host:port[/STREAM]`.
    #[error("queue address {url:?}: {why}")]
    BadQueueUrl { url: String, why: String },
    /// NATS or JetStream failed (not reachable, the stream refused).
    #[error("NATS {what}: {why}")]
    Nats { what: &'static str, why: String },
}
