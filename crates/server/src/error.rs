//! Errors: what a request gets back (`{"error": {"code", "message", …}}` with the
//! contract's status, docs/architecture.md "HTTP API"), and what stops the server.

use std::path::PathBuf;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use crate::json::Json;

/// What stops the server from starting or serving.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("serving HTTP: {0}")]
    Serve(#[source] std::io::Error),
}

/// An error answer: a status, a stable machine-readable `code`, a sentence for the
/// person, and any figures that decided it (a spent quota's, a closed phase's times).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{status} {code}: {message}")]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// Fields beside `code` and `message` in the error object.
    pub details: Map<String, Value>,
    /// Seconds for a `Retry-After` header (429, 503).
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            details: Map::new(),
            retry_after: None,
        }
    }

    pub(crate) fn with(mut self, key: &str, value: impl serde::Serialize) -> ApiError {
        self.details.insert(
            key.to_owned(),
            serde_json::to_value(value).unwrap_or(Value::Null),
        );
        self
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }

    pub(crate) fn invalid(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "invalid", message)
    }

    pub(crate) fn forbidden(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::FORBIDDEN, "forbidden", message)
    }

    pub(crate) fn not_found(what: &str) -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            format!("no such {what}"),
        )
    }

    pub(crate) fn conflict(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::CONFLICT, code, message)
    }

    /// A fault of ours: the person gets a sentence, the log gets the cause.
    pub(crate) fn internal(cause: &dyn std::fmt::Display) -> ApiError {
        tracing::error!("request failed: {cause}");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the server failed; the cause is in its log",
        )
    }
}

impl From<store::Error> for ApiError {
    fn from(e: store::Error) -> ApiError {
        use store::{Error as E, WorkerRefusal};
        match e {
            E::NotFound { what, .. } => ApiError::not_found(what),
            E::Exists { .. } | E::NameTaken { .. } => ApiError::conflict("exists", e.to_string()),
            E::Invalid { .. } => ApiError::invalid(e.to_string()),
            E::Transition { actual, .. } => {
                ApiError::conflict("state_conflict", e.to_string()).with("state", actual)
            }
            E::QuotaSpent(ref status) => {
                let next = status.next_slot_at;
                let figures = crate::views::QuotaView::from_status(None, status);
                ApiError::conflict("quota_spent", e.to_string())
                    .with("quota", figures)
                    .with("next_slot_at", next)
            }
            E::PhaseClosed {
                ref phase,
                opens,
                closes,
                extended,
                at,
            } => ApiError::conflict("phase_closed", e.to_string())
                .with("phase", phase)
                .with("opens", opens)
                .with("closes", closes)
                .with("extended", extended)
                .with("at", at),
            E::AlreadyInTeam { .. } => ApiError::conflict("already_in_team", e.to_string()),
            E::TeamHasSubmissions { .. } => {
                ApiError::conflict("team_has_submissions", e.to_string())
            }
            E::NotMember { .. } => {
                ApiError::new(StatusCode::FORBIDDEN, "not_member", e.to_string())
            }
            E::InvitationNotPending(_) => {
                ApiError::conflict("invitation_not_pending", e.to_string())
            }
            E::BadCredentials => {
                ApiError::new(StatusCode::UNAUTHORIZED, "bad_credentials", e.to_string())
            }
            E::BadToken => ApiError::new(StatusCode::UNAUTHORIZED, "bad_token", e.to_string()),
            E::Busy { retry_after } => {
                let mut a = ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "busy", e.to_string());
                a.retry_after = Some(retry_after);
                a
            }
            // Every refusal of the queue answered here, so that a new one cannot fall
            // through to "internal" below.
            E::Refused(ref r) => match r {
                WorkerRefusal::Attempt { .. } => {
                    ApiError::conflict("attempt_refused", e.to_string())
                }
                WorkerRefusal::Disabled(_) => {
                    ApiError::new(StatusCode::FORBIDDEN, "worker_disabled", e.to_string())
                }
                WorkerRefusal::Draining(_) => {
                    ApiError::new(StatusCode::FORBIDDEN, "worker_draining", e.to_string())
                }
                WorkerRefusal::WrongVersion { server, .. } => {
                    let server = crate::views::BuildView::from(server);
                    ApiError::conflict("wrong_version", e.to_string()).with("server", server)
                }
            },
            E::WorkerState { from, .. } => {
                let state = crate::views::WorkerStateName::from(from);
                ApiError::conflict("worker_state", e.to_string()).with("worker_state", state)
            }
            E::PauseState { paused, .. } => {
                ApiError::conflict("pause_state", e.to_string()).with("judging_paused", paused)
            }
            E::UploadKeyReused { .. } => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "idempotency_key_reused",
                e.to_string(),
            ),
            E::DataChanged { .. } => ApiError::conflict("data_changed", e.to_string()),
            E::NotPublishable { ref blockers, .. } => {
                let list: Vec<crate::views::BlockerView> =
                    blockers.iter().map(Into::into).collect();
                ApiError::conflict("not_publishable", e.to_string()).with("blockers", list)
            }
            // The database, the schema, a stored record, the random source, a file of
            // the server's: ours, not the caller's.
            other => ApiError::internal(&other),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut error = Map::new();
        error.insert("code".into(), Value::from(self.code));
        error.insert("message".into(), Value::from(self.message));
        for (k, v) in self.details {
            error.entry(k).or_insert(v);
        }
        let mut response = (self.status, Json(json!({ "error": error }))).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"physiojudge\""),
            );
        }
        if let Some(s) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&s.to_string())
        {
            response.headers_mut().insert(header::RETRY_AFTER, v);
        }
        response
    }
}
