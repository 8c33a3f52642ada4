//! JSON in and out.
//!
//! Out: [`Json`] writes `<`, `>` and `&` inside strings as `\u003c`, `\u003e`, `\u0026`
//! — the same JSON value, but a team named `<script>…` cannot turn into markup in a
//! page that pastes the body, or in a browser that sniffs it as HTML (every answer also
//! says `X-Content-Type-Options: nosniff`).
//!
//! In: [`Body`] and [`Query`] turn axum's plain-text refusals into the API's error
//! object: a body that is not JSON is 400, JSON of the wrong shape 422, a body over the
//! size limit 413 (docs/architecture.md, "HTTP API").

use std::io;

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// A JSON answer, HTML-safe.
#[derive(Debug, Clone, Copy)]
pub struct Json<T>(pub T);

/// `value` as HTML-safe JSON text.
pub fn to_vec<T: Serialize>(value: &T) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::with_capacity(128);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, HtmlSafe);
    value.serialize(&mut ser)?;
    Ok(out)
}

impl<T: Serialize> IntoResponse for Json<T> {
    fn into_response(self) -> Response {
        match to_vec(&self.0) {
            Ok(bytes) => (
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )],
                bytes,
            )
                .into_response(),
            // Only a map with non-string keys or a failing Serialize impl gets here;
            // none of the views has either.
            Err(e) => {
                tracing::error!("serialising an answer: {e}");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    [(
                        header::CONTENT_TYPE,
                        HeaderValue::from_static("application/json"),
                    )],
                    r#"{"error":{"code":"internal","message":"the server failed; the cause is in its log"}}"#,
                )
                    .into_response()
            }
        }
    }
}

/// serde_json's compact formatter, with `<`, `>` and `&` escaped in strings.
struct HtmlSafe;

impl serde_json::ser::Formatter for HtmlSafe {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let bytes = fragment.as_bytes();
        let mut start = 0;
        for (i, b) in bytes.iter().enumerate() {
            let escaped: &[u8] = match b {
                b'<' => b"\\u003c",
                b'>' => b"\\u003e",
                b'&' => b"\\u0026",
                _ => continue,
            };
            writer.write_all(&bytes[start..i])?;
            writer.write_all(escaped)?;
            start = i + 1;
        }
        writer.write_all(&bytes[start..])
    }
}

/// A JSON request body, refused in the API's own words.
#[derive(Debug, Clone, Copy)]
pub struct Body<T>(pub T);

impl<S, T> FromRequest<S> for Body<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        match axum::Json::<T>::from_request(req, state).await {
            Ok(axum::Json(v)) => Ok(Body(v)),
            Err(rejection) => Err(match rejection {
                JsonRejection::JsonDataError(e) => ApiError::invalid(e.body_text()),
                JsonRejection::JsonSyntaxError(e) => ApiError::bad_request(e.body_text()),
                JsonRejection::MissingJsonContentType(_) => {
                    ApiError::bad_request("the body must be JSON (Content-Type: application/json)")
                }
                JsonRejection::BytesRejection(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                    ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "too_large", e.body_text())
                }
                other => ApiError::bad_request(other.body_text()),
            }),
        }
    }
}

/// Query parameters, refused in the API's own words (400).
#[derive(Debug, Clone, Copy)]
pub struct Query<T>(pub T);

impl<S, T> FromRequestParts<S> for Query<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(v)| Query(v))
            .map_err(|e: QueryRejection| ApiError::bad_request(e.body_text()))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn markup_is_escaped_and_the_value_kept() {
        let name = "<script>alert('x')</script> & co";
        let text =
            String::from_utf8(super::to_vec(&serde_json::json!({ name: name })).unwrap()).unwrap();
        assert!(!text.contains('<') && !text.contains('>') && !text.contains('&'));
        assert!(text.contains(r"\u003cscript\u003e"));
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back[name], name);
    }
}
