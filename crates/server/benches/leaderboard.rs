//! `GET /api/v1/challenges/{id}/leaderboard` under load, on SQLite and PostgreSQL
//! (BENCHMARKS.md, "Leaderboard under load").
//!
//! Seeds a phase of `--teams` teams × `--per-team` scored submissions through the store
//! (as workers would: submit, take, report), serves it on 127.0.0.1 from this process,
//! and loads it with `wrk` in a second process (`--connections` connections, one wrk
//! thread per core it may use), printing wrk's figures. Run:
//!
//! ```text
//! apt-get install wrk
//! cargo bench -p server --bench leaderboard -- [--backend sqlite|postgres|both]
//!     [--teams 1000] [--per-team 10] [--connections 64] [--seconds 10] [--runs 3]
//!     [--gzip]
//! ```
//!
//! PostgreSQL is the server of `PHYSIOJUDGE_TEST_POSTGRES` (a fresh database, dropped
//! at the end), as the tests use. Only loopback is ever loaded.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;
use store::testing::TestStore;
use store::{
    Backend, Better, Definition, Figure, NewPhase, NewSubmission, Outcome, Quota, Report, Role,
    Rule, Split,
};

struct Args {
    backends: Vec<Backend>,
    teams: usize,
    per_team: usize,
    connections: usize,
    seconds: u64,
    runs: usize,
    /// Send `Accept-Encoding: gzip` (as browsers do): the server answers the gzipped
    /// board.
    gzip: bool,
}

fn args() -> Args {
    let mut a = Args {
        backends: vec![Backend::Sqlite, Backend::Postgres],
        teams: 1000,
        per_team: 10,
        connections: 64,
        seconds: 10,
        runs: 3,
        gzip: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--backend" => {
                a.backends = match value().as_str() {
                    "sqlite" => vec![Backend::Sqlite],
                    "postgres" => vec![Backend::Postgres],
                    "both" => vec![Backend::Sqlite, Backend::Postgres],
                    other => panic!("--backend {other}: sqlite, postgres or both"),
                }
            }
            "--teams" => a.teams = value().parse().expect("--teams N"),
            "--per-team" => a.per_team = value().parse().expect("--per-team N"),
            "--connections" => a.connections = value().parse().expect("--connections N"),
            "--seconds" => a.seconds = value().parse().expect("--seconds N"),
            "--runs" => a.runs = value().parse().expect("--runs N"),
            "--gzip" => a.gzip = true,
            // cargo bench passes --bench; libtest flags mean nothing here.
            _ => {}
        }
    }
    a
}

/// A `result.json` as the judge writes one (its size and stages matter: the run time
/// comes from it).
fn result_json(score: f64) -> String {
    json!({
        "challenge": "cinc2017", "entry": "entry.zip", "verdict": "scored", "score": score,
        "split": {"training": 60, "quiz": 20, "exam": 20},
        "stages": [
            {"stage": "prep", "status": "passed", "wall_time_s": 1.5},
            {"stage": "train", "status": "skipped", "why": "no train", "wall_time_s": 0.0},
            {"stage": "quiz", "status": "passed", "wall_time_s": 12.25,
             "records": [{"record": "A0001", "state": "ok"}]},
            {"stage": "exam", "status": "passed", "wall_time_s": 31.0,
             "counts": {"records": 20, "ok": 20, "failures": 0, "timeouts": 0, "defaulted": 0}},
            {"stage": "score", "status": "passed", "wall_time_s": 0.0}
        ],
        "exam_score": {"precision": 3,
                       "ranking": [{"key": "score", "value": score, "better": "higher"}]},
        "judge_version": judge::rescore::JUDGE_VERSION
    })
    .to_string()
}

async fn seed(t: &TestStore, teams: usize, per_team: usize, data: &std::path::Path) -> String {
    std::fs::write(data.join("REFERENCE.csv"), "A0001,N\n").unwrap();
    let c = t
        .create_challenge(
            "cinc2017",
            "bench",
            Definition::Builtin("cinc2017".into()),
            data,
        )
        .await
        .unwrap();
    let now = t.now();
    let phase = t
        .create_phase(
            &c.id,
            &NewPhase {
                name: "official".into(),
                opens: now - chrono::Duration::days(1),
                closes: now + chrono::Duration::days(30),
                selection_closes: None,
                quota: Quota::default(),
                scored_split: Split::Quiz,
                show_exam: true,
                rule: Rule::Best,
            },
        )
        .await
        .unwrap();
    let (worker, _) = t.create_worker("bench").await.unwrap();
    let mut team_ids = Vec::new();
    for i in 0..teams {
        let u = t
            .create_user(&format!("user{i}"), Role::Participant, None)
            .await
            .unwrap();
        team_ids.push(
            t.create_team(&c.id, &format!("team {i:04}"), u.id)
                .await
                .unwrap()
                .id,
        );
    }
    let started = Instant::now();
    let mut n = 0u64;
    for round in 0..per_team {
        for (i, team) in team_ids.iter().enumerate() {
            n += 1;
            t.submit(&NewSubmission {
                team: *team,
                phase: phase.id,
                entry_sha256: format!("{n:064x}"),
                entry_path: format!("entries/{n}.zip"),
                method_name: Some(format!("method {round}")),
                method_description: None,
            })
            .await
            .unwrap();
            let job = t
                .take_job(worker.id, Duration::from_secs(600), None)
                .await
                .unwrap()
                .expect("the job just queued");
            // Scores that tie now and then (equal ranks) and differ by team and round.
            let score = ((i * 7 + round * 13) % 997) as f64 / 1000.0;
            t.report(
                worker.id,
                job.attempt,
                &Report {
                    outcome: Outcome::Scored,
                    result_json: Some(result_json(score)),
                    private_json: Some(json!({"score": score}).to_string()),
                    figures: vec![Figure {
                        key: "score".into(),
                        value: Some(score),
                        better: Better::Higher,
                    }],
                    quiz_figures: Vec::new(),
                    scorer_version: judge::rescore::SCORER_VERSION.into(),
                    judge_version: judge::rescore::JUDGE_VERSION.into(),
                    message: None,
                    runtime_lock: Some(judge::rescore::runtime_lock_id()),
                    warnings: Vec::new(),
                },
            )
            .await
            .unwrap();
        }
    }
    eprintln!(
        "seeded {teams} teams x {per_team} scored submissions in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    c.id
}

fn wrk(url: &str, connections: usize, seconds: u64, gzip: bool) -> String {
    let mut cmd = Command::new("wrk");
    if gzip {
        cmd.args(["-H", "Accept-Encoding: gzip"]);
    }
    let out = cmd
        .args([
            "-t1",
            &format!("-c{connections}"),
            &format!("-d{seconds}s"),
            "--latency",
            url,
        ])
        .output()
        .expect("wrk (apt-get install wrk)");
    assert!(
        out.status.success(),
        "wrk failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One figure of wrk's report: `Requests/sec:` or a latency percentile line (`99%`).
fn figure(report: &str, label: &str) -> String {
    report
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(label))
        .and_then(|l| l.split_whitespace().last())
        .unwrap_or("?")
        .to_owned()
}

fn main() {
    let a = args();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let host = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_default();
    println!(
        "machine: {} cores, {host}; load average before: {}",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    for backend in &a.backends {
        rt.block_on(async {
            let t = TestStore::new(*backend).await;
            let data = tempfile::tempdir().unwrap();
            let state = tempfile::tempdir().unwrap();
            let challenge = seed(&t, a.teams, a.per_team, data.path()).await;
            let server = server::Server::new(t.store.clone(), server::Config::new(state.path())).unwrap();
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let serving = tokio::spawn(server.serve_until(listener, async {
                let _ = stopped.await;
            }));
            let url = format!("http://{addr}/api/v1/challenges/{challenge}/leaderboard?phase=official");
            let body = reqwest::get(&url).await.unwrap().bytes().await.unwrap();
            let rows = serde_json::from_slice::<serde_json::Value>(&body).unwrap()["rows"]
                .as_array()
                .map_or(0, Vec::len);
            // One uncached derivation: what a request pays right after a change.
            let mut cold = Vec::new();
            for _ in 0..5 {
                let s = Instant::now();
                t.store.leaderboard(t.store.phases(&challenge).await.unwrap()[0].id).await.unwrap();
                cold.push(s.elapsed().as_secs_f64() * 1000.0);
            }
            cold.sort_by(f64::total_cmp);
            println!(
                "{backend:?}: {rows} rows, {} bytes a response; uncached derivation (store query) median {:.1} ms",
                body.len(),
                cold[cold.len() / 2]
            );
            for run in 1..=a.runs {
                let url = url.clone();
                let (c, s, z) = (a.connections, a.seconds, a.gzip);
                let report = tokio::task::spawn_blocking(move || wrk(&url, c, s, z))
                    .await
                    .unwrap();
                println!(
                    "{backend:?} run {run}: {} req/s, p50 {}, p90 {}, p99 {}",
                    figure(&report, "Requests/sec:"),
                    figure(&report, "50%"),
                    figure(&report, "90%"),
                    figure(&report, "99%"),
                );
                if run == 1 {
                    println!("{}", report.trim_end());
                }
            }
            let _ = stop.send(());
            let _ = serving.await;
        });
    }
}
