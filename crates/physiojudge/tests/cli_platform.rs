//! The platform end to end, on SQLite and on PostgreSQL: the real `physiojudge serve`
//! (one in-process worker) driven over HTTP only, with real data (../shared/data's
//! CinC 2017 subset, the smallest that judges in seconds) and a challenge definition
//! whose limits are tightened (TOML registered through the API).
//!
//! Two teams submit a good entry (our example), one that fails in prep (a required
//! file missing), one that runs out of time (every record sleeps past the limit) and a
//! trivial one. While the good entry runs the server is killed with SIGKILL and
//! started again on the same state: no submission is lost, the queued ones are judged,
//! the lost run ends in `error` ("worker lost", not charged) and is scored by a second
//! attempt, and nothing of the killed run is left (sandbox processes, cgroups, work
//! folders). Then: states and typed reasons, quotas, what a team sees of the exam, the
//! leaderboard, and each figure on it against `physiojudge evaluate --json` of the
//! same entry on the same data.
//!
//! The figures rule checked: the public leaderboard shows each exam ranking number at
//! the challenge's `score_precision`, which is exactly the value `evaluate --json`
//! shows the participant (`exam_score.ranking[].value`); an organiser's leaderboard
//! shows the stored figure, exactly the scorer's number in the organiser's
//! `private/exam-score.json` of the same evaluation. `run_time_s` is a measured time,
//! not a figure of the entry, and is not compared.
//!
//! Needs root (the sandbox), the shared data and PostgreSQL; runs under
//! `flock /tmp/physiojudge-sandbox.lock` with the other sandbox tests. Sandbox slots
//! 44 (SQLite) and 46 (PostgreSQL).

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::platform::{
    Backend, Served, Site, cgroups_of, history, is_final, processes_of, work_folders,
};
use serde_json::{Map, Value, json};

const CHALLENGE: &str = "cinc2017-e2e";

/// The built-in CinC 2017 definition as TOML, renamed and with a record limit of 5 s
/// (our example needs well under a second per record).
fn definition() -> String {
    let text = std::fs::read_to_string(
        testkit::workspace_root().join("challenges/cinc2017/challenge.toml"),
    )
    .unwrap();
    let mut text = text.replace("id = \"cinc2017\"", &format!("id = \"{CHALLENGE}\""));
    for (a, b) in [
        ("record_cpu_s = 30", "record_cpu_s = 5"),
        ("record_wall_s = 60", "record_wall_s = 5"),
    ] {
        assert!(text.contains(a), "{a}");
        text = text.replace(a, b);
    }
    text
}

/// A per-record (cinc2017) entry of shell scripts.
fn shell_entry(dir: &Path, next_sh: &str, files: &[&str]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    for (name, text) in [
        ("next.sh", next_sh),
        ("setup.sh", "true\n"),
        ("answers.txt", "none,N\n"),
        ("dependencies.txt", "# nothing\n"),
        ("AUTHORS.txt", "test\n"),
        ("LICENSE.txt", "MIT\n"),
    ] {
        if files.contains(&name) {
            std::fs::write(dir.join(name), text).unwrap();
        }
    }
    dir.to_path_buf()
}

const ALL: &[&str] = &[
    "next.sh",
    "setup.sh",
    "answers.txt",
    "dependencies.txt",
    "AUTHORS.txt",
    "LICENSE.txt",
];

/// `evaluate --json` of `entry` on `data` with the same definition: result.json and
/// the organiser's private exam score.
fn evaluate(def: &Path, entry: &Path, data: &Path, slot: u32) -> (Value, Value, Vec<String>) {
    let out = tempfile::tempdir().unwrap();
    let dest = out.path().join("result");
    let o = testkit::physiojudge!([
        "evaluate",
        "--challenge",
        CHALLENGE,
        "--challenge-file",
        def.to_str().unwrap(),
        "--entry",
        entry.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--out",
        dest.to_str().unwrap(),
        "--slot",
        &slot.to_string(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    let private: Value =
        serde_json::from_slice(&std::fs::read(dest.join("private/exam-score.json")).unwrap())
            .unwrap();
    let records: Value =
        serde_json::from_slice(&std::fs::read(dest.join("private/exam-records.json")).unwrap())
            .unwrap();
    let ids = records
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["record"].as_str().unwrap().to_owned())
        .collect();
    (r, private, ids)
}

/// The `to` states of a submission's history (organisers see it) and the reason of
/// each change.
fn stage<'a>(s: &'a Value, name: &str) -> &'a Value {
    s["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["stage"] == name)
        .unwrap_or_else(|| panic!("no stage {name} in {s}"))
}

fn result_stage<'a>(result: &'a Value, name: &str) -> &'a Value {
    result["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["stage"] == name)
        .unwrap_or_else(|| panic!("no stage {name} in {result}"))
}

fn quota(s: &Served, token: &str) -> Value {
    let a = s.get(
        Some(token),
        &format!("/api/v1/challenges/{CHALLENGE}/quota?phase=open"),
    );
    assert_eq!(a.status, 200, "{a:?}");
    a.json
}

fn end_to_end(backend: Backend, slot: u32) {
    let test = "platform_end_to_end";
    if !testkit::root(test) {
        return;
    }
    let Some(data) = testkit::shared_data(test) else {
        return;
    };
    let data = data.join("cinc2017");
    let site = Site::new(backend, slot);
    let uid = 60_000 + slot;
    let org = site.organiser("boss");
    let s = site.serve(&[]);

    // The organiser: the challenge (a TOML definition) and an open phase.
    let def = definition();
    let def_dir = tempfile::tempdir().unwrap();
    let def_file = def_dir.path().join("challenge.toml");
    std::fs::write(&def_file, &def).unwrap();
    let a = s.post(
        &org,
        "/api/v1/challenges",
        json!({"id": CHALLENGE, "definition": def, "data": data.to_str().unwrap()}),
    );
    assert_eq!(a.status, 201, "{a:?}");
    let precision = a.json["score_precision"].as_u64().unwrap();
    let a = s.post(
        &org,
        &format!("/api/v1/challenges/{CHALLENGE}/phases"),
        json!({"name": "open", "opens": "2026-01-01T00:00:00Z", "closes": "2099-01-01T00:00:00Z",
               "quota": {"total": 3}, "scored_split": "exam", "show_exam": true,
               "rule": "best"}),
    );
    assert_eq!(a.status, 201, "{a:?}");

    // Two teams.
    let alice = s.participant(&org, "alice");
    let bob = s.participant(&org, "bob");
    s.team(&alice, "Alpha", CHALLENGE);
    s.team(&bob, "Beta", CHALLENGE);

    let entries = tempfile::tempdir().unwrap();
    let good = testkit::workspace_root().join("entries/cinc2017");
    let slow = shell_entry(&entries.path().join("slow"), "sleep 30\n", ALL);
    let no_licence = shell_entry(
        &entries.path().join("prep"),
        "echo \"$1,N\" >> answers.txt\n",
        &ALL[..5],
    );
    let trivial = shell_entry(
        &entries.path().join("trivial"),
        "echo \"$1,N\" >> answers.txt\n",
        ALL,
    );
    let a_good = s.submit(&alice, CHALLENGE, &good);
    let b_slow = s.submit(&bob, CHALLENGE, &slow);
    let a_prep = s.submit(&alice, CHALLENGE, &no_licence);
    let b_trivial = s.submit(&bob, CHALLENGE, &trivial);
    let all = [&a_good, &b_slow, &a_prep, &b_trivial];

    // The good entry runs first (oldest, one worker); kill the server mid-run, once the
    // entry's processes are up.
    s.wait_for(&alice, &a_good, Duration::from_secs(120), |v| {
        v["state"] == "running"
    });
    let until = std::time::Instant::now() + Duration::from_secs(60);
    while processes_of(uid).is_empty() {
        assert!(std::time::Instant::now() < until, "no sandbox process seen");
        std::thread::sleep(Duration::from_millis(100));
    }
    for id in &all[1..] {
        assert_eq!(s.submission(&org, id).json["state"], "queued");
    }
    // A participant follows the good entry from a terminal across the crash.
    let follower = testkit::physiojudge_command!()
        .args(["status", "--server", &s.base, "--token", &alice, &a_good])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let killed = s.pid();
    let addr = s.base.trim_start_matches("http://").to_owned();
    s.kill9();
    // The run dies with its server: no process of the slot outlives it for long.
    let until = std::time::Instant::now() + Duration::from_secs(10);
    while !processes_of(uid).is_empty() {
        assert!(
            std::time::Instant::now() < until,
            "sandbox processes left: {:?}",
            processes_of(uid)
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // Again on the same state and address: everything is judged.
    let s = site.serve_on(&addr, &[]);
    for id in all {
        s.wait_for(&org, id, Duration::from_secs(600), is_final);
    }
    // The follower reconnected, saw the lost run go to `error` and back, and the
    // second attempt's stages; of the exam, that it ran, never its records.
    let followed = follower.wait_with_output().unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&followed.stdout),
        String::from_utf8_lossy(&followed.stderr),
    );
    assert!(followed.status.success(), "{out}\n{err}");
    assert!(
        out.contains("state      scored (attempts: 2)"),
        "{out}\n{err}"
    );
    for line in [
        "running → error (worker_restarted)",
        "error → queued",
        "running → scored",
    ] {
        assert!(err.contains(line), "{line:?} not in:\n{err}");
    }
    assert!(err.contains("  quiz: "), "no quiz progress in:\n{err}");
    assert!(
        err.lines()
            .filter(|l| l.trim_start().starts_with("exam: "))
            .all(|l| !l.contains("records")),
        "exam records shown to the team:\n{err}"
    );
    // What the killed run left is gone once the new server has judged.
    assert_eq!(cgroups_of(killed), Vec::<PathBuf>::new());
    assert_eq!(work_folders(site.tmp.path()), Vec::<String>::new());

    // States and reasons.
    let good_o = s.submission(&org, &a_good).json;
    assert_eq!(good_o["state"], "scored", "{good_o}");
    assert_eq!(good_o["attempts"], 2, "{good_o}");
    let h = history(&good_o);
    let states: Vec<&str> = h.iter().map(|(to, _)| to.as_str()).collect();
    assert_eq!(
        states,
        ["queued", "running", "error", "queued", "running", "scored"],
        "{good_o}"
    );
    // The lost attempt was ended by the restarted server's own start (its local worker
    // is new, so what the old one held is dead), not by a lapsed lease: typed so.
    assert_eq!(h[2].1, "worker_restarted", "{good_o}");
    let detail = &good_o["organiser"]["history"][2]["detail"];
    assert_eq!(detail["kind"], "worker_restarted", "{good_o}");
    assert_eq!(detail["attempt"], 1, "{good_o}");
    assert_eq!(
        detail["worker"], good_o["organiser"]["history"][1]["detail"]["worker"],
        "{good_o}"
    );
    for (id, end) in [
        (&b_slow, "failed"),
        (&a_prep, "failed"),
        (&b_trivial, "scored"),
    ] {
        let v = s.submission(&org, id).json;
        let states: Vec<String> = history(&v).into_iter().map(|(to, _)| to).collect();
        assert_eq!(states, ["queued", "running", end], "{v}");
        assert_eq!(v["attempts"], 1, "{v}");
    }
    // Failed in prep: the required files it lacks, typed.
    let prep = s.submission(&alice, &a_prep).json;
    assert_eq!(stage(&prep, "prep")["outcome"], "failed", "{prep}");
    assert!(
        prep["reason"].as_str().unwrap().starts_with("prep: ")
            && prep["reason"].as_str().unwrap().contains("LICENSE.txt"),
        "{prep}"
    );
    let result = &s.submission(&org, &a_prep).json["organiser"]["result"];
    let reason = &result_stage(result, "prep")["reason"];
    assert_eq!(reason["kind"], "missing_files", "{result}");
    assert_eq!(reason["files"], json!(["LICENSE.txt"]), "{result}");
    // Out of time: the quiz's first record ran past the limit.
    let slow_t = s.submission(&bob, &b_slow).json;
    assert_eq!(stage(&slow_t, "prep")["outcome"], "passed", "{slow_t}");
    assert_eq!(stage(&slow_t, "quiz")["outcome"], "failed", "{slow_t}");
    assert!(slow_t["reason"].as_str().unwrap().starts_with("quiz: "));
    let result = &s.submission(&org, &b_slow).json["organiser"]["result"];
    let quiz = result_stage(result, "quiz");
    assert_eq!(quiz["reason"]["kind"], "run", "{result}");
    let verdict = quiz["records"][0]["verdict"].as_str().unwrap_or("");
    assert!(
        verdict == "wall_time_limit" || verdict == "time_limit",
        "{result}"
    );

    // Quota: scored and failed count; the error of the killed run does not.
    for token in [&alice, &bob] {
        let q = quota(&s, token);
        assert_eq!(q["used_total"], 2, "{q}");
        assert_eq!(q["total_left"], 1, "{q}");
    }

    // What a team sees of its scored entry: the exam as counts, no records, no log.
    let seen = s.submission(&alice, &a_good);
    let exam = stage(&seen.json, "exam");
    assert!(exam.get("records").is_none(), "{exam}");
    assert_eq!(exam["log"], false, "{exam}");
    assert!(exam["counts"]["records"].as_u64().unwrap() > 0, "{exam}");
    assert!(seen.json.get("organiser").is_none());
    assert_eq!(
        s.get(
            Some(&alice),
            &format!("/api/v1/submissions/{a_good}/logs/exam")
        )
        .status,
        403
    );
    assert_eq!(s.submission(&bob, &a_good).status, 404);

    // The leaderboard, public and the organiser's.
    let public = s
        .get(
            None,
            &format!("/api/v1/challenges/{CHALLENGE}/leaderboard?phase=open"),
        )
        .json;
    let organiser = s
        .get(
            Some(&org),
            &format!("/api/v1/challenges/{CHALLENGE}/leaderboard?phase=open"),
        )
        .json;
    let rows = public["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{public}");
    assert_eq!(
        (rows[0]["rank"].clone(), rows[0]["team"].clone()),
        (json!(1), json!("Alpha"))
    );
    assert_eq!(
        (rows[1]["rank"].clone(), rows[1]["team"].clone()),
        (json!(2), json!("Beta"))
    );
    assert_eq!(rows[0]["submission"], json!(a_good));
    assert_eq!(rows[1]["submission"], json!(b_trivial));
    // The team's view of its own submission holds the same public figures.
    assert_eq!(seen.json["scores"], rows[0]["scores"], "{}", seen.text);

    // `physiojudge status` of a finished submission: its summary and exit status.
    let o = testkit::physiojudge!(["status", "--server", &s.base, "--token", &alice, &a_good]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("state      scored (attempts: 2)"), "{out}");
    let o = testkit::physiojudge!(["status", "--server", &s.base, "--token", &alice, &a_prep]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = testkit::physiojudge!(["status", "--server", &s.base, "--token", &bob, &a_good]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("(404 not_found)"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Bob's third submission takes his last slot; a fourth is refused, clearly.
    let b_third = s.submit(&bob, CHALLENGE, &trivial);
    let o = testkit::physiojudge!([
        "submit",
        "--server",
        &s.base,
        "--token",
        &bob,
        "--challenge",
        CHALLENGE,
        trivial.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the server refused (409 quota_spent)"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    s.wait_for(&bob, &b_third, Duration::from_secs(300), is_final);
    s.stop();
    assert_eq!(processes_of(uid), Vec::<u32>::new());
    assert_eq!(work_folders(site.tmp.path()), Vec::<String>::new());

    // A result for an attempt is accepted once: the lost attempt's and the scored
    // one's are both refused now.
    duplicate_reports_are_refused(&site, &a_good);

    // Every figure against `physiojudge evaluate --json` of the same entry and data.
    for (entry, row, org_row, id) in [
        (&good, &rows[0], &organiser["rows"][0], &a_good),
        (&trivial, &rows[1], &organiser["rows"][1], &b_trivial),
    ] {
        let (r, private, exam_ids) = evaluate(&def_file, entry, &data, slot);
        // Both splits are stored, each exactly as the scorer wrote it: the exam's as in
        // the private exam report, the quiz's as in the quiz report (what a
        // quiz-scored phase ranks by).
        let (exam_stored, quiz_stored) = stored_figures(&site, id);
        let quiz_report = &r["quiz_score"]["report"];
        assert!(!quiz_stored.is_empty(), "no quiz figures stored: {r}");
        for (key, value) in &quiz_stored {
            assert_eq!(value, &quiz_report[key], "quiz {key}: {quiz_report}");
        }
        for (key, value) in &exam_stored {
            assert_eq!(value, &private[key], "exam {key}: {private}");
        }
        assert_eq!(r["verdict"], "scored", "{r}");
        assert_eq!(r["exam_score"]["precision"], json!(precision));
        let ranking = r["exam_score"]["ranking"].as_array().unwrap();
        let scores = row["scores"].as_object().unwrap();
        assert_eq!(scores.len(), ranking.len(), "{row}\n{r}");
        for n in ranking {
            let key = n["key"].as_str().unwrap();
            // The public figure: exactly what evaluate shows the participant.
            assert_eq!(scores[key], n["value"], "{key}: {row}\n{r}");
            // The organiser's: exactly the scorer's figure.
            assert_eq!(
                org_row["scores"][key], private[key],
                "{key}: {org_row}\n{private}"
            );
        }
        assert_eq!(row["score"], ranking[0]["value"]);
        // None of the hidden records is named to the team that ran it.
        if entry == &good {
            assert!(!exam_ids.is_empty());
            for id in &exam_ids {
                assert!(!seen.text.contains(&format!("\"{id}\"")), "{id} shown");
            }
        }
    }
}

/// The stored ranking numbers of both splits of a submission's live result, by key:
/// (exam, quiz).
type SplitFigures = (Map<String, Value>, Map<String, Value>);

/// Reads the live result's figures of each split straight from the site's store.
fn stored_figures(site: &Site, id: &str) -> SplitFigures {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = match &site.pg {
            Some(pg) => store::Store::connect(&pg.url).await.unwrap(),
            None => store::Store::open(site.state.path()).await.unwrap(),
        };
        let submission: store::SubmissionId = id.parse().unwrap();
        let live = store
            .results(submission)
            .await
            .unwrap()
            .into_iter()
            .rfind(|r| !r.replaced && r.outcome == store::Outcome::Scored)
            .expect("a live scored result");
        store.close().await;
        let map = |f: &[store::Figure]| -> Map<String, Value> {
            f.iter().map(|f| (f.key.clone(), json!(f.value))).collect()
        };
        (map(&live.figures), map(&live.quiz_figures))
    })
}

/// Opens the site's store and reports for the good entry's two attempts as the local
/// worker: both are refused.
fn duplicate_reports_are_refused(site: &Site, id: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let store = match &site.pg {
            Some(pg) => store::Store::connect(&pg.url).await.unwrap(),
            None => store::Store::open(site.state.path()).await.unwrap(),
        };
        let worker = store
            .workers()
            .await
            .unwrap()
            .into_iter()
            .find(|w| w.name == "local")
            .expect("the local worker");
        let submission: store::SubmissionId = id.parse().unwrap();
        for number in [1, 2] {
            let report = store::Report {
                outcome: store::Outcome::Failed,
                result_json: Some("{}".into()),
                private_json: None,
                figures: Vec::new(),
                quiz_figures: Vec::new(),
                scorer_version: "test".into(),
                judge_version: "test".into(),
                runtime_lock: Some("test".into()),
                warnings: Vec::new(),
                message: None,
            };
            let key = store::AttemptKey { submission, number };
            let r = store.report(worker.id, key, &report).await;
            assert!(r.is_err(), "attempt {number}'s second result was accepted");
        }
        let s = store.submission(submission).await.unwrap();
        assert_eq!(s.state, store::State::Scored);
        store.close().await;
    });
}

#[test]
fn end_to_end_sqlite() {
    end_to_end(Backend::Sqlite, 44);
}

#[test]
fn end_to_end_postgres() {
    end_to_end(Backend::Postgres, 46);
}
