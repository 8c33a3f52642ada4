//! The API's own requests, made in-process: how a page changes anything and reads
//! what the API shows its user (so the page shows the same and no more).

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::response::Response;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tower::ServiceExt;

use server::ErrorBody;

use crate::Web;
use crate::html::PageError;

/// The largest API answer a page reads (a submission with every quiz record, a log
/// already capped by the judge).
const ANSWER_CAP: usize = 16 << 20;

/// An API answer, read whole.
pub(crate) struct Answer {
    pub status: StatusCode,
    pub body: Bytes,
    /// The API's `Retry-After` (429, 503), in seconds.
    pub retry_after: Option<u64>,
}

impl Answer {
    /// The body as `T` if the call succeeded; else the API's error.
    pub fn json<T: DeserializeOwned>(&self) -> Result<T, Refusal> {
        if self.status.is_success() {
            serde_json::from_slice(&self.body).map_err(|e| Refusal {
                status: StatusCode::INTERNAL_SERVER_ERROR,
                code: "internal".into(),
                message: format!("the API's answer could not be read: {e}"),
                body: None,
                retry_after: None,
            })
        } else {
            Err(self.refusal())
        }
    }

    pub fn refusal(&self) -> Refusal {
        match serde_json::from_slice::<ErrorBody>(&self.body) {
            Ok(b) => Refusal {
                status: self.status,
                code: b.error.code.clone(),
                message: b.error.message.clone(),
                body: Some(b),
                retry_after: self.retry_after,
            },
            Err(_) => Refusal {
                status: self.status,
                code: "internal".into(),
                message: String::from_utf8_lossy(&self.body)
                    .chars()
                    .take(500)
                    .collect(),
                body: None,
                retry_after: self.retry_after,
            },
        }
    }
}

/// The API said no: its status, code and message (and its whole error body).
#[derive(Debug)]
pub(crate) struct Refusal {
    pub status: StatusCode,
    pub code: String,
    pub message: String,
    pub body: Option<ErrorBody>,
    pub retry_after: Option<u64>,
}

impl From<Refusal> for PageError {
    fn from(r: Refusal) -> PageError {
        PageError::from_api(r.status, &r.code, &r.message)
    }
}

/// Passes a request on to the API unchanged.
pub(crate) async fn forward(web: &Web, req: Request) -> Response {
    match web.api.clone().oneshot(req).await {
        Ok(r) => r,
        Err(never) => match never {},
    }
}

/// Calls the API as `token`'s user (or nobody) with an optional body.
pub(crate) async fn call(
    web: &Web,
    method: Method,
    path: &str,
    token: Option<&str>,
    content_type: Option<&str>,
    body: Body,
) -> Answer {
    call_from(web, None, method, path, token, content_type, body).await
}

/// [`call`] on behalf of a client at `from` (the page request's address), so that the
/// API's limits per address count the person, not the site.
pub(crate) async fn call_from(
    web: &Web,
    from: Option<server::ClientAddr>,
    method: Method,
    path: &str,
    token: Option<&str>,
    content_type: Option<&str>,
    body: Body,
) -> Answer {
    let mut b = Request::builder().method(method).uri(path);
    if let Some(a) = from {
        b = b.extension(a);
    }
    if let Some(t) = token {
        b = b.header(header::AUTHORIZATION, format!("Bearer {t}"));
    }
    if let Some(ct) = content_type {
        b = b.header(header::CONTENT_TYPE, ct);
    }
    let req = match b.body(body) {
        Ok(r) => r,
        Err(e) => {
            return Answer {
                retry_after: None,
                status: StatusCode::BAD_REQUEST,
                body: Bytes::from(
                    serde_json::json!({"error": {"code": "bad_request", "message": e.to_string()}})
                        .to_string(),
                ),
            };
        }
    };
    answer_of(forward(web, req).await).await
}

/// The upload form's call: the API's upload with the form's own `Idempotency-Key`, so
/// that a form sent twice (a double click, a browser's retry) makes one submission.
pub(crate) async fn upload(
    web: &Web,
    path: &str,
    token: &str,
    key: Option<&str>,
    body: Body,
) -> Answer {
    let mut b = Request::builder()
        .method(Method::POST)
        .uri(path)
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/octet-stream");
    if let Some(k) = key {
        b = b.header("idempotency-key", k);
    }
    match b.body(body) {
        Ok(req) => answer_of(forward(web, req).await).await,
        Err(e) => Answer {
            retry_after: None,
            status: StatusCode::BAD_REQUEST,
            body: Bytes::from(
                serde_json::json!({"error": {"code": "bad_request", "message": e.to_string()}})
                    .to_string(),
            ),
        },
    }
}

/// The API's answer, read whole (up to [`ANSWER_CAP`]).
async fn answer_of(r: axum::response::Response) -> Answer {
    let status = r.status();
    let retry_after = r
        .headers()
        .get(header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok());
    match axum::body::to_bytes(r.into_body(), ANSWER_CAP).await {
        Ok(body) => Answer {
            status,
            body,
            retry_after,
        },
        Err(e) => Answer {
            retry_after: None,
            status: StatusCode::INTERNAL_SERVER_ERROR,
            body: Bytes::from(
                serde_json::json!({"error": {"code": "internal", "message": e.to_string()}})
                    .to_string(),
            ),
        },
    }
}

pub(crate) async fn get(web: &Web, path: &str, token: Option<&str>) -> Answer {
    call(web, Method::GET, path, token, None, Body::empty()).await
}

pub(crate) async fn post_json(
    web: &Web,
    path: &str,
    token: Option<&str>,
    value: &impl Serialize,
) -> Answer {
    send_json(web, Method::POST, path, token, value).await
}

pub(crate) async fn send_json(
    web: &Web,
    method: Method,
    path: &str,
    token: Option<&str>,
    value: &impl Serialize,
) -> Answer {
    let body = serde_json::to_vec(value).unwrap_or_default();
    call(
        web,
        method,
        path,
        token,
        Some("application/json"),
        Body::from(body),
    )
    .await
}

pub(crate) async fn delete(web: &Web, path: &str, token: Option<&str>) -> Answer {
    call(web, Method::DELETE, path, token, None, Body::empty()).await
}

/// A path segment, percent-encoded (ids come from the address bar).
pub(crate) fn seg(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
