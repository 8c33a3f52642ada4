//! Who is asking: the session cookie (an API token, see the crate doc), the CSRF token
//! every form carries, and the pre-session cookie that protects the sign-in form.

use axum::extract::FromRequestParts;
use axum::http::header::{COOKIE, HOST, ORIGIN};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use store::{Principal, Role, User};

use crate::Web;
use crate::html::PageError;

pub(crate) const SESSION: &str = "pj_session";
const PRE: &str = "pj_pre";

/// The request's context: the signed-in user (if any), the CSRF token its forms carry,
/// and a pre-session cookie to set if the browser has none yet.
#[derive(Debug, Clone)]
pub(crate) struct Ctx {
    pub user: Option<User>,
    /// The session's API token: how a page calls the API as this user.
    pub token: Option<String>,
    pub csrf: String,
    /// The signed-in user's pending invitations (the navigation shows how many).
    pub invitations: u32,
    new_pre: Option<String>,
    secure: bool,
}

impl Ctx {
    pub fn is_organiser(&self) -> bool {
        self.user
            .as_ref()
            .is_some_and(|u| u.role == Role::Organiser)
    }

    /// The signed-in user, or the "sign in first" page.
    pub fn need_user(&self, next: &str) -> Result<(&User, &str), Response> {
        match (&self.user, &self.token) {
            (Some(u), Some(t)) => Ok((u, t)),
            _ => Err(crate::html::redirect(&format!(
                "/login?next={}",
                crate::api::seg(next)
            ))),
        }
    }

    pub fn need_organiser(&self) -> Result<(&User, &str), Response> {
        let (u, t) = self.need_user("/organiser")?;
        if u.role != Role::Organiser {
            return Err(PageError::new(
                StatusCode::FORBIDDEN,
                "Organisers only",
                "This page is for the challenge's organisers. Go back to the challenges.",
            )
            .into_response());
        }
        Ok((u, t))
    }

    /// Refuses a form whose CSRF token is not this session's.
    pub fn check_csrf(&self, sent: &str) -> Result<(), PageError> {
        if constant_eq(sent.as_bytes(), self.csrf.as_bytes()) {
            Ok(())
        } else {
            Err(PageError::new(
                StatusCode::FORBIDDEN,
                "The form has expired",
                "This form was not sent from the page this site gave you (or you signed in \
                 or out since). Reload the page and send it again.",
            ))
        }
    }

    /// Adds the pre-session cookie to a response if this request had none.
    pub fn finish(&self, mut r: Response) -> Response {
        if let Some(pre) = &self.new_pre {
            let c = cookie(PRE, pre, "Strict", Some(24 * 3600), self.secure);
            if let Ok(v) = HeaderValue::from_str(&c) {
                r.headers_mut().append(header::SET_COOKIE, v);
            }
        }
        r
    }
}

fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The CSRF token of a session (or pre-session) secret: a hash, so a page that shows
/// it never shows the secret, and nobody without the cookie can make it.
fn csrf_of(secret: &str) -> String {
    let mut h = Sha256::new();
    h.update(b"physiojudge web csrf\0");
    h.update(secret.as_bytes());
    h.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub(crate) fn cookies(headers: &HeaderMap) -> impl Iterator<Item = (&str, &str)> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| {
            let (k, v) = kv.trim().split_once('=')?;
            Some((k.trim(), v.trim()))
        })
}

fn cookie_value<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    cookies(headers).find(|(k, _)| *k == name).map(|(_, v)| v)
}

/// A `Set-Cookie` value.
pub(crate) fn cookie(
    name: &str,
    value: &str,
    same_site: &str,
    max_age: Option<u64>,
    secure: bool,
) -> String {
    let mut c = format!("{name}={value}; Path=/; HttpOnly; SameSite={same_site}");
    if let Some(a) = max_age {
        c.push_str(&format!("; Max-Age={a}"));
    }
    if secure {
        c.push_str("; Secure");
    }
    c
}

pub(crate) fn random_hex(bytes: usize) -> String {
    let mut b = vec![0u8; bytes];
    // The OS's generator does not fail on a working machine; if it did, a zero secret
    // would still be refused below (an empty-looking cookie is treated as none).
    if getrandom::fill(&mut b).is_err() {
        return String::new();
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Whether a form post comes from this site: an `Origin` header, when the browser sends
/// one, must name the host the request was sent to (`Host`, or `X-Forwarded-Host` from a
/// proxy that rewrites `Host`). This is a second wall; the CSRF token is the first.
pub(crate) fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(ORIGIN).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    let authority = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
        .unwrap_or("");
    [HOST.as_str(), "x-forwarded-host"]
        .iter()
        .filter_map(|h| headers.get(*h).and_then(|v| v.to_str().ok()))
        .any(|host| !host.is_empty() && authority.eq_ignore_ascii_case(host))
}

impl FromRequestParts<Web> for Ctx {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, web: &Web) -> Result<Ctx, Response> {
        Ctx::from_headers(web, &parts.headers).await
    }
}

impl Ctx {
    /// The context of a request with these headers.
    pub(crate) async fn from_headers(web: &Web, headers: &HeaderMap) -> Result<Ctx, Response> {
        let secure = web.config.secure_cookies;
        if let Some(token) = cookie_value(headers, SESSION).filter(|t| !t.is_empty()) {
            match web.store.authenticate(token).await {
                Ok(Principal::User(u)) => {
                    let invitations = match web.store.pending_invitation_count(u.id).await {
                        Ok(n) => n,
                        Err(e) => return Err(PageError::internal(&e).into_response()),
                    };
                    return Ok(Ctx {
                        invitations,
                        user: Some(u),
                        csrf: csrf_of(token),
                        token: Some(token.to_owned()),
                        new_pre: None,
                        secure,
                    });
                }
                // A revoked or unknown token (or a worker's): treated as signed out.
                Ok(Principal::Worker(_)) | Err(store::Error::BadToken) => {}
                Err(e) => return Err(PageError::internal(&e).into_response()),
            }
        }
        let (pre, new_pre) = match cookie_value(headers, PRE).filter(|p| p.len() >= 32) {
            Some(p) => (p.to_owned(), None),
            None => {
                let p = random_hex(16);
                (p.clone(), Some(p))
            }
        };
        Ok(Ctx {
            user: None,
            token: None,
            csrf: csrf_of(&pre),
            invitations: 0,
            new_pre,
            secure,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn origins() {
        assert!(same_origin(&headers(&[("host", "a.example")])));
        assert!(same_origin(&headers(&[
            ("host", "a.example:8080"),
            ("origin", "http://a.example:8080")
        ])));
        assert!(same_origin(&headers(&[
            ("host", "127.0.0.1:8080"),
            ("x-forwarded-host", "judge.example"),
            ("origin", "https://judge.example")
        ])));
        assert!(!same_origin(&headers(&[
            ("host", "a.example"),
            ("origin", "https://evil.example")
        ])));
        assert!(!same_origin(&headers(&[
            ("host", "a.example"),
            ("origin", "null")
        ])));
        assert!(!same_origin(&headers(&[("origin", "https://a.example")])));
    }

    #[test]
    fn csrf_tokens_differ_by_secret_and_hide_it() {
        let (a, b) = (csrf_of("pj_one"), csrf_of("pj_two"));
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(!a.contains("one"));
        assert!(constant_eq(a.as_bytes(), csrf_of("pj_one").as_bytes()));
        assert!(!constant_eq(a.as_bytes(), b.as_bytes()));
    }

    #[test]
    fn cookies_are_http_only_and_secure_on_request() {
        let c = cookie(SESSION, "pj_x", "Lax", Some(60), true);
        assert_eq!(
            c,
            "pj_session=pj_x; Path=/; HttpOnly; SameSite=Lax; Max-Age=60; Secure"
        );
        assert!(!cookie(SESSION, "pj_x", "Lax", None, false).contains("Secure"));
    }
}
