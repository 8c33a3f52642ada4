//! The upload form carries an `Idempotency-Key` of its own (docs/service.md,
//! "Uploads"): the same form sent twice (a double click, a browser's retry after a lost
//! answer) is one submission, charged once; a fresh form is a new upload.

mod common;

use common::site::{Site, field, good_entry, multipart, open_phase};
use store::{Backend, Role};

/// The site with cinc2017 open, and ann's team in it: ann's session, the phase, the
/// team.
async fn site(backend: Backend) -> (Site, String, store::PhaseId, store::TeamId) {
    let s = Site::new(backend).await;
    s.challenge("cinc2017", "AF").await;
    let phase =
        s.t.create_phase("cinc2017", &open_phase("open", s.t.now()))
            .await
            .unwrap();
    let (ann, token) = s
        .user("ann", Role::Participant, Some("ann's long password"))
        .await;
    let team = s.t.create_team("cinc2017", "Alpha", ann.id).await.unwrap();
    (s, token, phase.id, team.id)
}

impl Site {
    async fn form(&self, token: &str) -> (String, String) {
        let (_, page) = self.page(Some(token), "/challenges/cinc2017/submit").await;
        let csrf = field(&page, "csrf").expect("a CSRF token");
        let key = field(&page, "idempotency_key").expect("the form's upload key");
        (csrf, key)
    }

    /// Sends the form: where it sends the browser.
    async fn send(&self, token: &str, csrf: &str, key: &str) -> String {
        let entry = good_entry();
        let (ct, body) = multipart(&[
            ("csrf", csrf.as_bytes()),
            ("idempotency_key", key.as_bytes()),
            ("phase", b"open"),
            ("entry", &entry),
        ]);
        let r = self
            .http
            .post(format!("{}/challenges/cinc2017/submit", self.base))
            .header("cookie", format!("pj_session={token}"))
            .header("content-type", ct)
            .body(body)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 303, "{:?}", r.text().await);
        r.headers()["location"].to_str().unwrap().to_owned()
    }
}

async fn the_same_form_sent_twice_is_one_submission(b: Backend) {
    let (s, token, phase, team) = site(b).await;
    let (csrf, key) = s.form(&token).await;
    assert!(!key.is_empty());
    let first = s.send(&token, &csrf, &key).await;
    let again = s.send(&token, &csrf, &key).await;
    assert!(first.starts_with("/submissions/"), "{first}");
    assert_eq!(again, first);
    assert_eq!(s.t.quota(phase, team).await.unwrap().used_total, 1);

    // A fresh page is a fresh key: a second upload.
    let (csrf, key2) = s.form(&token).await;
    assert_ne!(key2, key);
    let second = s.send(&token, &csrf, &key2).await;
    assert_ne!(second, first);
    assert_eq!(s.t.quota(phase, team).await.unwrap().used_total, 2);
}

both!(the_same_form_sent_twice_is_one_submission);
