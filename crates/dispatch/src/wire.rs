//! What a remote worker and the server's queue endpoints say to each other over HTTP
//! (docs/service.md, "A fleet"): the bodies beside the [`crate::Assignment`],
//! [`crate::RunProgress`], [`crate::Standing`] and [`store::Report`] that travel as they
//! are. Both ends are this crate's, so the shapes are kept in one place.

use serde::{Deserialize, Serialize};
use store::{Blame, Report, ResultId, WorkerId, WorkerState};

/// `POST /api/v1/queue/announce`'s answer: who the token speaks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Announced {
    pub worker: WorkerId,
    pub name: String,
    pub state: WorkerState,
}

/// `POST /api/v1/queue/take`'s body.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TakeRequest {
    /// Only jobs of these challenges (the ones the worker has data for); `None`: any.
    #[serde(default)]
    pub challenges: Option<Vec<String>>,
    /// The take's own id, the same in every retry of it: a take sent again is answered
    /// with the attempt it leased the first time ([`store::Store::take_job_once`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub take: Option<String>,
}

/// `POST /api/v1/queue/attempts/{submission}/{number}/report`'s body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportRequest {
    pub report: Report,
    /// Whose an `error` is ([`Blame::Worker`] unless the run was stopped).
    pub blame: Blame,
}

/// `POST /api/v1/queue/attempts/{submission}/{number}/report`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportAnswer {
    pub result: ResultId,
}
