//! What the tests over HTTP share: a site over a fresh store (a SQLite file, or a
//! PostgreSQL database of its own) — the API and the pages on a free loopback port —
//! with its state folder and a one-record CinC 2017 data folder; built-in challenges
//! and phases over it; accounts with a session; requests as a session, a bearer or a
//! visitor; and the forms' CSRF tokens and bodies.

use serde_json::Value;
use store::testing::TestStore;
use store::{Backend, Definition, NewPhase, Quota, Role, Rule, Split};

/// The site over a store, on a free loopback port.
pub struct Site {
    pub t: TestStore,
    /// `http://127.0.0.1:<port>`.
    pub base: String,
    /// A client that follows no redirect: a form's answer is its own 303.
    pub http: reqwest::Client,
    /// The server's state folder (entries, result folders).
    pub state: tempfile::TempDir,
    /// The challenges' data: one CinC 2017 record, `A0001`, labelled `N`.
    pub data: tempfile::TempDir,
}

impl Site {
    /// A site with the server's default configuration.
    pub async fn new(backend: Backend) -> Site {
        Site::with(backend, |_| {}).await
    }

    /// A site whose server configuration `tweak` changed first.
    pub async fn with(backend: Backend, tweak: impl FnOnce(&mut server::Config)) -> Site {
        let t = TestStore::new(backend).await;
        let state = tempfile::tempdir().unwrap();
        let data = one_record_data();
        let mut config = server::Config::new(state.path());
        tweak(&mut config);
        let api = server::Server::new(t.store.clone(), config).unwrap();
        let site = web::Web::new(t.store.clone(), &api, web::Config::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(site.serve(listener));
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        Site {
            t,
            base,
            http,
            state,
            data,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The built-in challenge `id` over the site's data folder.
    pub async fn challenge(&self, id: &str, title: &str) {
        self.t
            .create_challenge(id, title, Definition::Builtin(id.into()), self.data.path())
            .await
            .unwrap();
    }

    /// A user (with `password`, if given) and a session token of theirs, good as the
    /// site's cookie and as the API's bearer token.
    pub async fn user(
        &self,
        name: &str,
        role: Role,
        password: Option<&str>,
    ) -> (store::User, String) {
        let u = self.t.create_user(name, role, password).await.unwrap();
        let token = self.t.issue_token(u.id, "test").await.unwrap().token;
        (u, token)
    }

    /// A page or a download as `token`'s session (none: a visitor).
    pub async fn get(&self, token: Option<&str>, path: &str) -> reqwest::Response {
        let mut r = self.http.get(self.url(path));
        if let Some(t) = token {
            r = r.header("cookie", format!("pj_session={t}"));
        }
        r.send().await.unwrap()
    }

    /// [`Site::get`]'s status and text.
    pub async fn page(&self, token: Option<&str>, path: &str) -> (u16, String) {
        let r = self.get(token, path).await;
        (r.status().as_u16(), r.text().await.unwrap())
    }

    /// Any answer to a GET with `token` as a bearer token (none: a visitor).
    pub async fn bearer(&self, token: Option<&str>, path: &str) -> reqwest::Response {
        let mut r = self.http.get(self.url(path));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        r.send().await.unwrap()
    }

    /// An API call with a JSON body as `token`'s caller (none: a visitor): the status
    /// and the JSON answered (`null` for none).
    pub async fn api(
        &self,
        method: reqwest::Method,
        token: Option<&str>,
        path: &str,
        body: Value,
    ) -> (u16, Value) {
        let mut r = self.http.request(method, self.url(path));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        let r = r.json(&body).send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }

    /// Posts `fields` as a form to `to` as `token`'s session (none: a visitor), with
    /// the CSRF token of the page at `from`.
    pub async fn post_form(
        &self,
        token: Option<&str>,
        from: &str,
        to: &str,
        fields: &[(&str, &str)],
    ) -> reqwest::Response {
        let (_, page) = self.page(token, from).await;
        let mut r = self
            .http
            .post(self.url(to))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form_body(&csrf_of(&page), fields));
        if let Some(t) = token {
            r = r.header("cookie", format!("pj_session={t}"));
        }
        r.send().await.unwrap()
    }
}

/// A data folder of one CinC 2017 record (`A0001`, labelled `N`).
pub fn one_record_data() -> tempfile::TempDir {
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(data.path().join("a")).unwrap();
    std::fs::write(data.path().join("a/A0001.hea"), "A0001 1 300 9000\n").unwrap();
    std::fs::write(data.path().join("REFERENCE.csv"), "A0001,N\n").unwrap();
    data
}

/// A phase named `name` open from a day before `now` to a day after: no quota, scored
/// on the exam, exam scores shown, each team's best entry ranked. Change what a test
/// needs with `NewPhase { …, ..open_phase(name, now) }`.
pub fn open_phase(name: &str, now: chrono::DateTime<chrono::Utc>) -> NewPhase {
    NewPhase {
        name: name.into(),
        opens: now - chrono::Duration::days(1),
        closes: now + chrono::Duration::days(1),
        selection_closes: None,
        quota: Quota::default(),
        scored_split: Split::Exam,
        show_exam: true,
        rule: Rule::Best,
    }
}

/// `s` percent-encoded for a form body.
pub fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The value of the form field `name` in a page.
pub fn field(page: &str, name: &str) -> Option<String> {
    let marker = format!("name=\"{name}\" value=\"");
    let at = page.find(&marker)? + marker.len();
    page[at..].split('"').next().map(str::to_owned)
}

/// A page's CSRF token (its first form's).
pub fn csrf_of(page: &str) -> String {
    field(page, "csrf").expect("a form with a CSRF token")
}

/// A form body: the CSRF token first, then `fields` in order.
pub fn form_body(csrf: &str, fields: &[(&str, &str)]) -> String {
    let mut body = format!("csrf={}", enc(csrf));
    for (k, v) in fields {
        body.push_str(&format!("&{k}={}", enc(v)));
    }
    body
}

/// What the page's `<main>` holds (the frame's own script tag left out).
pub fn main_of(page: &str) -> &str {
    let a = page.find("<main").expect("a main element");
    let b = page.find("</main>").expect("the end of main");
    &page[a..b]
}

/// A multipart body of `parts` (name, value) in order, as a browser sends a form; the
/// part `entry` is a file, `e.zip`. The content type and the body.
pub fn multipart(parts: &[(&str, &[u8])]) -> (String, Vec<u8>) {
    let boundary = "physiojudgeboundary7d1f";
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

/// A zip archive of `files` (name, bytes).
pub fn zip(files: &[(&str, &[u8])]) -> Vec<u8> {
    use std::io::Write;
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for (name, bytes) in files {
        w.start_file(*name, options).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// A per-record entry that answers `N` for every record.
pub fn good_entry() -> Vec<u8> {
    zip(&[
        ("setup.sh", b"#!/bin/sh\n"),
        ("next.sh", b"#!/bin/sh\necho \"$1,N\" >> answers.txt\n"),
    ])
}
