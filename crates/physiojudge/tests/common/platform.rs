//! The platform as a participant and an organiser meet it: the real `physiojudge serve`
//! binary on a loopback port, over a SQLite state folder or a throwaway PostgreSQL
//! database, spoken to over HTTP only.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The runtime (in target/tmp, where `testkit::physiojudge!` points every run), set up
/// once per test binary.
pub fn runtime_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let o = testkit::physiojudge!(["runtime", "setup"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("runtime")
    })
    .clone()
}

/// Which database a test's server keeps its records in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// A PostgreSQL database with a random name on the test server
/// (`store::testing::postgres_url`), dropped when this is.
pub struct PgDatabase {
    pub url: String,
    name: String,
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

impl PgDatabase {
    pub fn new() -> PgDatabase {
        use sqlx::Connection;
        let admin = store::testing::postgres_url();
        let name = format!(
            "physiojudge_e2e_{}",
            uuid::Uuid::now_v7().simple().to_string()[16..].to_owned()
        );
        block_on(async {
            let mut c = sqlx::PgConnection::connect(&admin)
                .await
                .unwrap_or_else(|e| panic!("these tests need PostgreSQL at {admin}: {e}"));
            sqlx::query(&format!("CREATE DATABASE {name}"))
                .execute(&mut c)
                .await
                .unwrap();
            let _ = c.close().await;
        });
        let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
        PgDatabase {
            url: format!("{base}/{name}"),
            name,
        }
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        use sqlx::Connection;
        let admin = store::testing::postgres_url();
        let name = self.name.clone();
        let _ = std::thread::spawn(move || {
            block_on(async {
                if let Ok(mut c) = sqlx::PgConnection::connect(&admin).await {
                    let _ = sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .execute(&mut c)
                        .await;
                    let _ = c.close().await;
                }
            })
        })
        .join();
    }
}

/// Where a server keeps its state: a folder, and the database of the backend.
pub struct Site {
    pub state: tempfile::TempDir,
    /// The serve process's temporary folder (`TMPDIR`): where the judge makes its work
    /// folders, so a test can see what is left in it.
    pub tmp: tempfile::TempDir,
    pub pg: Option<PgDatabase>,
    pub slot: u32,
}

impl Site {
    pub fn new(backend: Backend, slot: u32) -> Site {
        Site {
            state: tempfile::tempdir().unwrap(),
            tmp: tempfile::tempdir().unwrap(),
            pg: (backend == Backend::Postgres).then(PgDatabase::new),
            slot,
        }
    }

    fn db_args(&self) -> Vec<String> {
        match &self.pg {
            Some(pg) => vec!["--database".into(), pg.url.clone()],
            None => Vec::new(),
        }
    }

    /// `physiojudge admin … user add NAME --organiser`: its token.
    pub fn organiser(&self, name: &str) -> String {
        let mut args = vec![
            "admin".to_owned(),
            "--state".into(),
            self.state.path().to_str().unwrap().into(),
        ];
        args.extend(self.db_args());
        args.extend(["user", "add", name, "--organiser"].map(String::from));
        let o = testkit::physiojudge!(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap().trim().to_owned()
    }

    /// `physiojudge serve` with one worker in this site's sandbox slot, on a free port.
    pub fn serve(&self, extra: &[&str]) -> Served {
        self.serve_on("127.0.0.1:0", extra)
    }

    /// [`Site::serve`] on the address `listen`.
    pub fn serve_on(&self, listen: &str, extra: &[&str]) -> Served {
        self.serve_with(listen, 1, extra)
    }

    /// [`Site::serve_on`] with `workers` local worker slots (0: only remote workers
    /// judge).
    pub fn serve_with(&self, listen: &str, workers: usize, extra: &[&str]) -> Served {
        runtime_dir();
        let mut c = testkit::physiojudge_command!();
        c.args([
            "serve",
            "--state",
            self.state.path().to_str().unwrap(),
            "--listen",
            listen,
            "--workers",
            &workers.to_string(),
            "--first-slot",
            &self.slot.to_string(),
        ])
        .args(self.db_args())
        .args(extra)
        .env("TMPDIR", self.tmp.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
        let mut child = c.spawn().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().and_then(Result::ok).unwrap_or_default();
        // "physiojudge serving http://ADDR/api/v1 (state …)"
        let addr = first
            .split("http://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_owned();
        // The rest of stdout, read on a thread (so the server never blocks on it).
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in lines.map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Served {
            child,
            base: format!("http://{addr}"),
            http: reqwest::blocking::Client::builder()
                .timeout(Duration::from_secs(60))
                .build()
                .unwrap(),
            stdout: rx,
        }
    }
}

/// A running `serve`; killed (SIGKILL) when dropped, if still running.
pub struct Served {
    pub child: Child,
    pub base: String,
    pub http: reqwest::blocking::Client,
    pub stdout: std::sync::mpsc::Receiver<String>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An answer: its status and its body as JSON (`Null` when it is not JSON).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub text: String,
    pub json: Value,
}

fn answer(r: reqwest::blocking::Response) -> Answer {
    let status = r.status().as_u16();
    let text = r.text().unwrap_or_default();
    let json = serde_json::from_str(&text).unwrap_or(Value::Null);
    Answer { status, text, json }
}

impl Served {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn get(&self, token: Option<&str>, path: &str) -> Answer {
        let mut r = self.http.get(format!("{}{path}", self.base));
        if let Some(t) = token {
            r = r.bearer_auth(t);
        }
        answer(r.send().unwrap())
    }

    pub fn post(&self, token: &str, path: &str, body: Value) -> Answer {
        answer(
            self.http
                .post(format!("{}{path}", self.base))
                .bearer_auth(token)
                .json(&body)
                .send()
                .unwrap(),
        )
    }

    /// A participant and its token.
    pub fn participant(&self, organiser: &str, name: &str) -> String {
        let a = self.post(
            organiser,
            "/api/v1/users",
            json!({"name": name, "role": "participant"}),
        );
        assert_eq!(a.status, 201, "{a:?}");
        a.json["token"].as_str().unwrap().to_owned()
    }

    pub fn team(&self, token: &str, name: &str, challenge: &str) {
        let a = self.post(
            token,
            "/api/v1/teams",
            json!({"name": name, "challenge": challenge}),
        );
        assert_eq!(a.status, 201, "{a:?}");
    }

    /// `physiojudge submit --no-wait`: the submission's id.
    pub fn submit(&self, token: &str, challenge: &str, entry: &Path) -> String {
        let o = testkit::physiojudge!([
            "submit",
            "--server",
            &self.base,
            "--token",
            token,
            "--challenge",
            challenge,
            "--no-wait",
            entry.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let id = String::from_utf8(o.stdout).unwrap().trim().to_owned();
        assert_eq!(id.len(), 36, "{id:?}");
        id
    }

    pub fn submission(&self, token: &str, id: &str) -> Answer {
        self.get(Some(token), &format!("/api/v1/submissions/{id}"))
    }

    /// Waits until `done` holds of the submission (as `token` sees it), up to `within`.
    pub fn wait_for(
        &self,
        token: &str,
        id: &str,
        within: Duration,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let until = Instant::now() + within;
        loop {
            let a = self.submission(token, id);
            if a.status == 200 && done(&a.json) {
                return a.json;
            }
            assert!(
                Instant::now() < until,
                "submission {id} not there in {within:?}: {a:?}"
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// Stops the server as an operator would (SIGTERM) and waits for it.
    pub fn stop(mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }

    /// kill -9, and waits for it.
    pub fn kill9(mut self) {
        self.child.kill().unwrap();
        let _ = self.child.wait();
    }
}

/// A submission's state changes as an organiser sees them: (state, reason) each.
pub fn history(s: &Value) -> Vec<(String, String)> {
    s["organiser"]["history"]
        .as_array()
        .unwrap_or_else(|| panic!("no history: {s}"))
        .iter()
        .map(|h| {
            (
                h["to"].as_str().unwrap().to_owned(),
                h["reason"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// A final state: nothing changes after it.
pub fn is_final(s: &Value) -> bool {
    matches!(s["state"].as_str(), Some("scored" | "failed" | "withdrawn"))
}

/// The processes running as `uid` (a sandbox slot's): their pids.
pub fn processes_of(uid: u32) -> Vec<u32> {
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(status) = std::fs::read_to_string(e.path().join("status")) else {
            continue;
        };
        let real = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|u| u.parse::<u32>().ok());
        if real == Some(uid) {
            pids.push(pid);
        }
    }
    pids
}

/// The sandbox's cgroups (any hierarchy, v1 or v2) whose name carries `pid`, the
/// runner process that made them (`<anything>-<pid>-<n>`).
pub fn cgroups_of(pid: u32) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut parents = vec![PathBuf::from("/sys/fs/cgroup/physiojudge")];
    if let Ok(d) = std::fs::read_dir("/sys/fs/cgroup") {
        parents.extend(d.flatten().map(|e| e.path().join("physiojudge")));
    }
    for p in parents {
        let Ok(d) = std::fs::read_dir(&p) else {
            continue;
        };
        for e in d.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let mut parts = name.rsplit('-');
            let _n = parts.next();
            if parts.next().and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
                found.push(e.path());
            }
        }
    }
    found
}

/// The judge's work folders in `tmp`.
pub fn work_folders(tmp: &Path) -> Vec<String> {
    std::fs::read_dir(tmp)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("physiojudge-eval-"))
                .collect()
        })
        .unwrap_or_default()
}
