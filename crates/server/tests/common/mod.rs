//! A real server on 127.0.0.1 (a random port) over a real store — a SQLite file in a
//! temporary folder, or a fresh PostgreSQL database (store::testing) — and a client.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Duration, Utc};
use serde_json::{Value, json};

use store::testing::TestStore;
use store::{Backend, Role};

/// `both!(case, …)`: each `async fn case(Backend)` as two tests, `case::sqlite` and
/// `case::postgres` (`store::both_backends!`).
#[macro_export]
macro_rules! both {
    ($($name:ident),+ $(,)?) => {
        store::both_backends!($($name),+);
    };
}

pub struct Harness {
    pub t: TestStore,
    pub base: String,
    pub http: reqwest::Client,
    pub state: tempfile::TempDir,
    pub data: tempfile::TempDir,
    pub organiser: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

/// The answer's status and its body as JSON (`Null` when it is not JSON).
pub struct Answer {
    pub status: u16,
    pub text: String,
    pub json: Value,
    pub headers: reqwest::header::HeaderMap,
}

impl std::fmt::Debug for Answer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status, self.text)
    }
}

impl Answer {
    pub fn code(&self) -> &str {
        self.json["error"]["code"].as_str().unwrap_or("")
    }
}

pub async fn answer(r: reqwest::Response) -> Answer {
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let text = r.text().await.unwrap_or_default();
    let json = serde_json::from_str(&text).unwrap_or(Value::Null);
    Answer {
        status,
        text,
        json,
        headers,
    }
}

impl Harness {
    pub async fn start(backend: Backend) -> Harness {
        Harness::start_with(backend, |_| {}).await
    }

    pub async fn start_with(backend: Backend, tweak: impl FnOnce(&mut server::Config)) -> Harness {
        Harness::start_tuned(backend, |s| s, tweak).await
    }

    /// [`Harness::start_with`], with the server's store changed first (its bound on
    /// password hashing).
    pub async fn start_tuned(
        backend: Backend,
        tune: impl FnOnce(store::Store) -> store::Store,
        tweak: impl FnOnce(&mut server::Config),
    ) -> Harness {
        let t = TestStore::new(backend).await;
        let state = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(data.path().join("a")).unwrap();
        std::fs::write(data.path().join("a/A0001.hea"), "A0001 1 300 9000\n").unwrap();
        std::fs::write(data.path().join("REFERENCE.csv"), "A0001,N\n").unwrap();
        let mut config = server::Config::new(state.path());
        config.events_poll = std::time::Duration::from_millis(50);
        // The queue remote workers take from, over a store that refuses other builds
        // (as `serve`'s is).
        config.queue = Some(dispatch::LocalQueue::new(
            t.store.clone().with_build(server_build()),
            dispatch::QueueConfig::new(state.path()),
        ));
        tweak(&mut config);
        let server = server::Server::new(tune(t.store.clone()), config).unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(server.serve_until(listener, async {
            let _ = rx.await;
        }));
        let org = t.create_user("org", Role::Organiser, None).await.unwrap();
        let organiser = t.issue_token(org.id, "test").await.unwrap().token;
        Harness {
            t,
            base: format!("http://{addr}"),
            http: reqwest::Client::new(),
            state,
            data,
            organiser,
            stop: Some(tx),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn get(&self, token: Option<&str>, path: &str) -> Answer {
        let mut r = self.http.get(self.url(path));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        answer(r.send().await.unwrap()).await
    }

    pub async fn post(&self, token: Option<&str>, path: &str, body: Value) -> Answer {
        let mut r = self.http.post(self.url(path)).json(&body);
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        answer(r.send().await.unwrap()).await
    }

    pub async fn put(&self, token: Option<&str>, path: &str, body: Value) -> Answer {
        let mut r = self.http.put(self.url(path)).json(&body);
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        answer(r.send().await.unwrap()).await
    }

    pub async fn patch(&self, token: Option<&str>, path: &str, body: Value) -> Answer {
        let mut r = self.http.patch(self.url(path)).json(&body);
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        answer(r.send().await.unwrap()).await
    }

    pub async fn delete(&self, token: Option<&str>, path: &str) -> Answer {
        let mut r = self.http.delete(self.url(path));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        answer(r.send().await.unwrap()).await
    }

    pub async fn post_empty(&self, token: Option<&str>, path: &str) -> Answer {
        let mut r = self.http.post(self.url(path));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        answer(r.send().await.unwrap()).await
    }

    /// `PUT path` with `bytes` as an octet stream.
    pub async fn put_bytes(&self, token: &str, path: &str, bytes: Vec<u8>) -> Answer {
        let r = self
            .http
            .put(self.url(path))
            .bearer_auth(token)
            .header("content-type", "application/octet-stream")
            .body(bytes)
            .send()
            .await
            .unwrap();
        answer(r).await
    }

    pub async fn upload(
        &self,
        token: &str,
        challenge: &str,
        query: &str,
        bytes: Vec<u8>,
    ) -> Answer {
        let r = self
            .http
            .post(self.url(&format!(
                "/api/v1/challenges/{challenge}/submissions{query}"
            )))
            .bearer_auth(token)
            .header("content-type", "application/octet-stream")
            .body(bytes)
            .send()
            .await
            .unwrap();
        answer(r).await
    }

    /// A participant (through the API) and its token.
    pub async fn participant(&self, name: &str) -> (String, String) {
        let a = self
            .post(
                Some(&self.organiser),
                "/api/v1/users",
                json!({"name": name, "role": "participant", "password": "correct horse"}),
            )
            .await;
        assert_eq!(a.status, 201, "{a:?}");
        (
            a.json["id"].as_str().unwrap().to_owned(),
            a.json["token"].as_str().unwrap().to_owned(),
        )
    }

    /// The challenge `cinc2017` on the harness's data folder.
    pub async fn challenge(&self) {
        let a = self
            .post(
                Some(&self.organiser),
                "/api/v1/challenges",
                json!({"id": "cinc2017", "definition": "cinc2017",
                       "data": self.data.path().to_str().unwrap()}),
            )
            .await;
        assert_eq!(a.status, 201, "{a:?}");
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.t.now()
    }

    /// A phase of `cinc2017` open from `opens` (relative to now) for 30 days.
    pub async fn phase(&self, name: &str, opens: Duration, quota: Value, show_exam: bool) -> Value {
        let opens = self.now() + opens;
        let a = self
            .post(
                Some(&self.organiser),
                "/api/v1/challenges/cinc2017/phases",
                json!({"name": name, "opens": opens, "closes": opens + Duration::days(30),
                       "quota": quota, "scored_split": "exam", "show_exam": show_exam,
                       "rule": "best"}),
            )
            .await;
        assert_eq!(a.status, 201, "{a:?}");
        a.json
    }

    /// A team of `cinc2017` founded by `token`'s user: its id.
    pub async fn team(&self, token: &str, name: &str) -> String {
        let a = self
            .post(
                Some(token),
                "/api/v1/teams",
                json!({"name": name, "challenge": "cinc2017"}),
            )
            .await;
        assert_eq!(a.status, 201, "{a:?}");
        a.json["id"].as_str().unwrap().to_owned()
    }

    /// Challenge, open phase, a participant in a team: the participant's token and
    /// team id.
    pub async fn ready(&self, quota: Value) -> (String, String) {
        self.challenge().await;
        self.phase("official", -Duration::days(1), quota, false)
            .await;
        let (_, token) = self.participant("alice").await;
        let team = self.team(&token, "Alpha").await;
        (token, team)
    }

    pub fn entries(&self) -> Vec<PathBuf> {
        files_in(&self.state.path().join("entries"))
    }

    pub fn incoming(&self) -> Vec<PathBuf> {
        files_in(&self.state.path().join("incoming"))
    }
}

pub fn files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default()
}

/// A zip of `files`.
pub fn zip(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for (name, bytes) in files {
        w.start_file(*name, options).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// A tar of `files`.
pub fn tar(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, bytes) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, name, *bytes).unwrap();
    }
    b.into_inner().unwrap()
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A small valid entry.
pub fn good_entry() -> Vec<u8> {
    zip(&[
        ("setup.sh", b"#!/bin/sh\n"),
        ("next.sh", b"#!/bin/sh\necho \"$1,N\" >> answers.txt\n"),
    ])
}

/// The judge build the server runs (its workers must run the same).
pub fn server_build() -> store::Build {
    store::Build {
        judge_version: judge::rescore::JUDGE_VERSION.to_owned(),
        runtime_lock: judge::rescore::runtime_lock_id(),
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A `result.json` as the judge writes it for a scored entry of cinc2017.
pub fn scored_result() -> Value {
    json!({
        "challenge": "cinc2017",
        "entry": "entry.zip",
        "verdict": "scored",
        "score": 0.812,
        "split": {"training": 10, "quiz": 5, "exam": 5},
        "stages": [
            {"stage": "prep", "status": "passed", "wall_time_s": 0.5, "log": "logs/prep.log"},
            {"stage": "quiz", "status": "passed", "wall_time_s": 1.25,
             "records": [{"record": "A0001", "state": "ok"}], "log": "logs/quiz.log"},
            {"stage": "exam", "status": "passed", "wall_time_s": 3.0,
             "counts": {"records": 5, "ok": 4, "failures": 1, "timeouts": 0, "defaulted": 0}},
            {"stage": "score", "status": "passed", "wall_time_s": 0.0}
        ],
        "quiz_score": {"score": 0.7, "report": {"score": 0.7, "errors": ["A0003: no answer"]}},
        "exam_score": {"precision": 3,
                       "ranking": [{"key": "score", "value": 0.812, "better": "higher"}]},
        "judge_version": "judge 0.1.0"
    })
}

/// Takes the next job as a worker and reports it scored (0.812, with `scored_result`),
/// writing the result folder's logs as a worker would.
pub async fn judge_next(h: &Harness, score: f64) -> store::AttemptKey {
    judge_next_split(h, score, 0.7).await
}

/// [`judge_next`] with the exam's score `score` and the quiz's `quiz` (in the quiz
/// report of `result.json`, as the judge writes it when quiz labels are revealed).
pub async fn judge_next_split(h: &Harness, score: f64, quiz: f64) -> store::AttemptKey {
    let (worker, _) = match h.t.workers().await.unwrap().into_iter().next() {
        Some(w) => (w, ()),
        None => (h.t.create_worker("w1").await.unwrap().0, ()),
    };
    let job =
        h.t.take_job(worker.id, std::time::Duration::from_secs(60), None)
            .await
            .unwrap()
            .expect("a queued job");
    let dir = server::layout::result_dir(h.state.path(), job.attempt);
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    std::fs::create_dir_all(dir.join("private")).unwrap();
    std::fs::write(dir.join("logs/quiz.log"), "quiz: record A0001 ok\n").unwrap();
    std::fs::write(dir.join("private/exam.log"), "exam: record X9 hidden\n").unwrap();
    let mut result = scored_result();
    result["exam_score"]["ranking"][0]["value"] = json!(score);
    result["score"] = json!(score);
    result["quiz_score"]["score"] = json!(quiz);
    result["quiz_score"]["report"]["score"] = json!(quiz);
    h.t.report(
        worker.id,
        job.attempt,
        &store::Report {
            outcome: store::Outcome::Scored,
            result_json: Some(result.to_string()),
            private_json: Some(r#"{"score": 0.81234, "f1_n": 0.9}"#.into()),
            figures: vec![store::Figure {
                key: "score".into(),
                value: Some(score),
                better: store::Better::Higher,
            }],
            quiz_figures: vec![store::Figure {
                key: "score".into(),
                value: Some(quiz),
                better: store::Better::Higher,
            }],
            scorer_version: "score 0.1.0".into(),
            judge_version: "judge 0.1.0".into(),
            message: None,
            runtime_lock: None,
            warnings: Vec::new(),
        },
    )
    .await
    .unwrap();
    job.attempt
}

/// Reads server-sent events until `until` says stop (or the stream ends): the data of
/// each `state` event, parsed.
pub async fn read_events(
    r: reqwest::Response,
    mut until: impl FnMut(&[Value]) -> bool,
) -> Vec<Value> {
    use futures_util::StreamExt;
    let mut events = Vec::new();
    let mut buf = String::new();
    let mut stream = r.bytes_stream();
    // A guard against a hang, not a timing assertion: each event comes within a poll.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        let next = tokio::time::timeout_at(deadline, stream.next()).await;
        let Ok(Some(Ok(chunk))) = next else { break };
        buf.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            if block.lines().any(|l| l == "event: state") {
                let data: String = block
                    .lines()
                    .filter_map(|l| l.strip_prefix("data: "))
                    .collect();
                events.push(serde_json::from_str(&data).unwrap());
            }
        }
        if until(&events) {
            break;
        }
    }
    events
}
