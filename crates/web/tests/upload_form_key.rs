//! The upload form carries an `Idempotency-Key` of its own (docs/service.md,
//! "Uploads"): the same form sent twice (a double click, a browser's retry after a lost
//! answer) is one submission, charged once; a fresh form is a new upload.

use std::io::Write;

use store::testing::TestStore;
use store::{Backend, Role};

struct Site {
    t: TestStore,
    base: String,
    http: reqwest::Client,
    _state: tempfile::TempDir,
    _data: tempfile::TempDir,
}

async fn site(backend: Backend) -> (Site, String, store::PhaseId, store::TeamId) {
    let t = TestStore::new(backend).await;
    let state = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(data.path().join("a")).unwrap();
    std::fs::write(data.path().join("a/rec1.hea"), "rec1 2 200 1000\n").unwrap();
    std::fs::write(data.path().join("REFERENCE.csv"), "rec1,N\n").unwrap();
    t.create_challenge(
        "cinc2017",
        "AF",
        store::Definition::Builtin("cinc2017".into()),
        data.path(),
    )
    .await
    .unwrap();
    let now = t.now();
    let phase = t
        .create_phase(
            "cinc2017",
            &store::NewPhase {
                name: "open".into(),
                opens: now - chrono::Duration::days(1),
                closes: now + chrono::Duration::days(1),
                selection_closes: None,
                quota: store::Quota::default(),
                scored_split: store::Split::Exam,
                show_exam: true,
                rule: store::Rule::Best,
            },
        )
        .await
        .unwrap();
    let ann = t
        .create_user("ann", Role::Participant, Some("ann's long password"))
        .await
        .unwrap();
    let token = t.issue_token(ann.id, "test").await.unwrap().token;
    let team = t.create_team("cinc2017", "Alpha", ann.id).await.unwrap();
    let api = server::Server::new(t.store.clone(), server::Config::new(state.path())).unwrap();
    let web = web::Web::new(t.store.clone(), &api, web::Config::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(web.serve(listener));
    let s = Site {
        t,
        base: format!("http://{addr}"),
        http: reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
        _state: state,
        _data: data,
    };
    (s, token, phase.id, team.id)
}

/// The value of the form field `name` in a page.
fn field(page: &str, name: &str) -> Option<String> {
    let marker = format!("name=\"{name}\" value=\"");
    let at = page.find(&marker)? + marker.len();
    page[at..].split('"').next().map(str::to_owned)
}

fn good_entry() -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for (name, text) in [
        ("setup.sh", "#!/bin/sh\n"),
        ("next.sh", "#!/bin/sh\necho \"$1,N\" >> answers.txt\n"),
    ] {
        w.start_file(name, options).unwrap();
        w.write_all(text.as_bytes()).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// The form as a browser sends it: CSRF token first, then the key, then the file.
fn multipart(parts: &[(&str, &[u8])]) -> (String, Vec<u8>) {
    let boundary = "physiojudgeboundary5c2a";
    let mut body = Vec::new();
    for (name, value) in parts {
        body.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        if *name == "entry" {
            body.extend_from_slice(
                b"Content-Disposition: form-data; name=\"entry\"; filename=\"e.zip\"\r\n\
                  Content-Type: application/zip\r\n\r\n",
            );
        } else {
            body.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
            );
        }
        body.extend_from_slice(value);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

impl Site {
    async fn form(&self, token: &str) -> (String, String) {
        let page = self
            .http
            .get(format!("{}/challenges/cinc2017/submit", self.base))
            .header("cookie", format!("pj_session={token}"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
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

macro_rules! both {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name(store::Backend::Sqlite).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name(store::Backend::Postgres).await;
            }
        }
    )+};
}

both!(the_same_form_sent_twice_is_one_submission);
