//! The site open to the public (docs/service.md, "Running it in public"): sign-ups
//! are limited per address, and the upload form's parts other than the file are
//! capped and checked in order before any of them is trusted; pages are gzipped for
//! clients that ask.

mod common;

use common::site::{Site, csrf_of, multipart};
use store::Backend;

/// The value of a cookie a response sets.
fn set_cookie(r: &reqwest::Response, name: &str) -> Option<String> {
    r.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(|c| {
            let (kv, _) = c.split_once(';').unwrap_or((c, ""));
            let (k, v) = kv.split_once('=')?;
            (k == name && !v.is_empty()).then(|| v.to_owned())
        })
}

impl Site {
    /// A fresh visitor's pre-session cookie and the sign-up form's CSRF token.
    async fn visitor(&self) -> (String, String) {
        let r = self.get(None, "/signup").await;
        let pre = set_cookie(&r, "pj_pre").unwrap();
        let csrf = csrf_of(&r.text().await.unwrap());
        (pre, csrf)
    }

    /// Signs `name` up: the response.
    async fn signup(&self, name: &str) -> reqwest::Response {
        let (pre, csrf) = self.visitor().await;
        self.http
            .post(self.url("/signup"))
            .header("cookie", format!("pj_pre={pre}"))
            .form(&[
                ("csrf", csrf.as_str()),
                ("name", name),
                ("password", "long enough pass"),
            ])
            .send()
            .await
            .unwrap()
    }
}

async fn signups_are_limited_per_address(b: Backend) {
    let s = Site::with(b, |c| c.signups_per_address_per_hour = 3).await;
    let mut statuses = Vec::new();
    for i in 0..5 {
        let r = s.signup(&format!("user{i}")).await;
        if r.status() == 429 {
            assert!(r.headers().contains_key("retry-after"));
        }
        statuses.push(r.status().as_u16());
    }
    assert_eq!(statuses, [303, 303, 303, 429, 429]);
}

async fn upload_form_parts_are_capped_before_the_csrf_check(b: Backend) {
    let s = Site::new(b).await;
    let r = s.signup("ann").await;
    assert_eq!(r.status(), 303);
    let session = set_cookie(&r, "pj_session").unwrap();
    let (_, page) = s.page(Some(&session), "/token").await;
    let csrf = csrf_of(&page);
    // Past the 4 KiB cap, but small enough to be sent whole before the answer comes
    // (a client still writing when the server answers and closes may see a reset).
    let big = vec![b'm'; 8 << 10];
    let post = |parts: Vec<(&'static str, Vec<u8>)>| {
        let parts: Vec<(&str, &[u8])> = parts.iter().map(|(n, v)| (*n, v.as_slice())).collect();
        let (ct, body) = multipart(&parts);
        s.http
            .post(format!("{}/challenges/cinc2017/submit", s.base))
            .header("cookie", format!("pj_session={session}"))
            .header("content-type", ct)
            .body(body)
            .send()
    };
    // A large field before the CSRF token: refused before it is read.
    let r = post(vec![
        ("method", big.clone()),
        ("csrf", csrf.clone().into_bytes()),
        ("entry", b"PK".to_vec()),
    ])
    .await
    .unwrap();
    assert_eq!(r.status(), 400);
    // A CSRF part past the cap: 413, not read whole to be compared.
    let r = post(vec![("csrf", big.clone()), ("entry", b"PK".to_vec())])
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    // Any other field past the cap, after a good token: 413 too.
    let r = post(vec![
        ("csrf", csrf.clone().into_bytes()),
        ("method", big),
        ("entry", b"PK".to_vec()),
    ])
    .await
    .unwrap();
    assert_eq!(r.status(), 413);
}

/// A page is gzipped for a client that asks and plain for one that does not; it names
/// the site's icon, which both icon addresses serve.
async fn pages_are_gzipped_when_asked_and_the_icon_is_served(b: Backend) {
    use std::io::Read;
    let s = Site::new(b).await;
    let plain = s.http.get(format!("{}/", s.base)).send().await.unwrap();
    assert_eq!(plain.status(), 200);
    assert!(plain.headers().get("content-encoding").is_none());
    let plain = plain.text().await.unwrap();
    assert!(
        plain.contains(r#"<link rel="icon" href="/favicon.svg""#),
        "{plain}"
    );
    let gz = s
        .http
        .get(format!("{}/", s.base))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(gz.status(), 200);
    assert_eq!(gz.headers()["content-encoding"], "gzip");
    let bytes = gz.bytes().await.unwrap();
    let mut page = String::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_string(&mut page)
        .unwrap();
    assert!(
        bytes.len() < page.len(),
        "{} >= {}",
        bytes.len(),
        page.len()
    );
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("Challenges"));
    for path in ["/favicon.ico", "/favicon.svg"] {
        let icon = s
            .http
            .get(format!("{}{path}", s.base))
            .send()
            .await
            .unwrap();
        assert_eq!(icon.status(), 200, "{path}");
        assert_eq!(icon.headers()["content-type"], "image/svg+xml", "{path}");
        assert!(icon.text().await.unwrap().starts_with("<svg"), "{path}");
    }
}

both!(
    pages_are_gzipped_when_asked_and_the_icon_is_served,
    signups_are_limited_per_address,
    upload_form_parts_are_capped_before_the_csrf_check
);
