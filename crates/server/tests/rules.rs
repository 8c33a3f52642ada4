//! The platform's rules over real HTTP, on SQLite and PostgreSQL (docs/service.md,
//! "Publishing", "Rescoring", "Versions"): publishing checks and versions, exam scores
//! shown to a team only for its published final entry, rescoring stored outputs as a
//! record applied or cancelled as a whole, the degenerate-output warning, the
//! reproduce command, and attacks on each by participants.

mod common;

use chrono::Duration;
use serde_json::json;

use common::*;
use store::Backend;

both!(
    publishing_checks_and_versions,
    rescoring_stored_outputs,
    leaderboards_combine_current_versions_only,
    a_quiz_phase_ranks_by_quiz_figures_and_leaks_no_exam_figure
);

async fn publishing_checks_and_versions(b: Backend) {
    let h = Harness::start(b).await;
    let (alice, _) = h.ready(json!(null)).await;
    let (_, bob) = h.participant("bob").await;
    h.team(&bob, "Beta").await;
    let a1 = h.upload(&alice, "cinc2017", "", good_entry()).await;
    let a1 = a1.json["id"].as_str().unwrap().to_owned();
    judge_next(&h, 0.7).await;
    let a2 = h.upload(&alice, "cinc2017", "", good_entry()).await;
    let a2 = a2.json["id"].as_str().unwrap().to_owned();
    judge_next(&h, 0.9).await;
    let b1 = h.upload(&bob, "cinc2017", "", good_entry()).await;
    let b1 = b1.json["id"].as_str().unwrap().to_owned();
    let publish = "/api/v1/challenges/cinc2017/publish";
    let body = json!({"phase": "official"});

    // Attacks: a participant (of either team) or nobody cannot publish.
    for token in [Some(alice.as_str()), Some(bob.as_str())] {
        let a = h.post(token, publish, body.clone()).await;
        assert_eq!((a.status, a.code()), (403, "forbidden"), "{a:?}");
    }
    assert_eq!(h.post(None, publish, body.clone()).await.status, 401);

    // Bob's submission is still queued: refused, with the list.
    let a = h.post(Some(&h.organiser), publish, body.clone()).await;
    assert_eq!((a.status, a.code()), (409, "not_publishable"), "{a:?}");
    let blockers = a.json["error"]["blockers"].as_array().unwrap();
    assert_eq!(blockers.len(), 1, "{a:?}");
    assert_eq!(blockers[0]["kind"], "unfinished");
    assert_eq!(blockers[0]["submission"], b1.as_str());
    assert_eq!(blockers[0]["state"], "queued");
    judge_next(&h, 0.5).await;

    // Alice chooses her first (0.7) over her best (0.9); Bob chooses nothing and gets his
    // best.
    let s = h
        .post_empty(Some(&alice), &format!("/api/v1/submissions/{a1}/select"))
        .await;
    assert_eq!(s.status, 200, "{s:?}");
    let p = h.post(Some(&h.organiser), publish, body.clone()).await;
    assert_eq!(p.status, 201, "{p:?}");
    assert_eq!(p.json["board"], "published");
    assert_eq!(p.json["published"]["version"], 1);
    let rows = p.json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{p:?}");
    assert_eq!(
        (rows[0]["team"].clone(), rows[0]["submission"].clone()),
        (json!("Alpha"), json!(a1))
    );
    assert_eq!(rows[0]["score"], 0.7);
    assert_eq!(
        (rows[1]["team"].clone(), rows[1]["score"].clone()),
        (json!("Beta"), json!(0.5))
    );

    // Before the phase closes a team sees no exam score at all.
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{a1}"))
        .await;
    assert_eq!(s.json["scores"], json!({}), "{s:?}");
    h.t.clock.advance(Duration::days(31));
    // After: the published final entry's scores only, never the other submission's.
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{a1}"))
        .await;
    assert_eq!(s.json["scores"], json!({"score": 0.7}), "{s:?}");
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{a2}"))
        .await;
    assert_eq!(s.json["scores"], json!({}), "{s:?}");
    assert!(!s.text.contains("0.9"), "{}", s.text);
    // Another team's submission and its details do not exist for Bob.
    let s = h
        .get(Some(&bob), &format!("/api/v1/submissions/{a1}"))
        .await;
    assert_eq!(s.status, 404, "{s:?}");
    // The live and final boards stay withheld from teams and the public; the
    // published one is public.
    for q in ["", "&board=final", "&final=true"] {
        for token in [None, Some(bob.as_str())] {
            let lb = h
                .get(
                    token,
                    &format!("/api/v1/challenges/cinc2017/leaderboard?phase=official{q}"),
                )
                .await;
            assert_eq!(lb.status, 200, "{lb:?}");
            assert_eq!(lb.json["rows"], json!([]), "{q}: {lb:?}");
            assert!(!lb.text.contains("0.9"), "{}", lb.text);
        }
    }
    let lb = h
        .get(
            Some(&bob),
            "/api/v1/challenges/cinc2017/leaderboard?phase=official&board=published",
        )
        .await;
    assert_eq!(lb.json["rows"].as_array().unwrap().len(), 2, "{lb:?}");
    assert!(!lb.text.contains("0.9"), "{}", lb.text);

    // The snapshot is fixed: a later choice changes it only when published again.
    let s = h
        .post_empty(Some(&alice), &format!("/api/v1/submissions/{a2}/select"))
        .await;
    assert_eq!(s.status, 200, "{s:?}");
    let lb = h
        .get(
            None,
            "/api/v1/challenges/cinc2017/leaderboard?phase=official&board=published",
        )
        .await;
    assert_eq!(lb.json["rows"][0]["submission"], a1.as_str(), "{lb:?}");
    let p = h.post(Some(&h.organiser), publish, body.clone()).await;
    assert_eq!(p.json["published"]["version"], 2, "{p:?}");
    assert_eq!(p.json["rows"][0]["score"], 0.9);
    let v1 = h
        .get(
            None,
            "/api/v1/challenges/cinc2017/leaderboard?phase=official&board=published&version=1",
        )
        .await;
    assert_eq!(v1.json["rows"][0]["score"], 0.7, "{v1:?}");
    let latest = h
        .get(
            None,
            "/api/v1/challenges/cinc2017/leaderboard?phase=official&board=published",
        )
        .await;
    assert_eq!(latest.json["rows"][0]["score"], 0.9, "{latest:?}");
    // Now a2 is the published entry: its scores show, a1's no longer.
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{a2}"))
        .await;
    assert_eq!(s.json["scores"], json!({"score": 0.9}), "{s:?}");
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{a1}"))
        .await;
    assert_eq!(s.json["scores"], json!({}), "{s:?}");
    let none = h
        .get(
            None,
            "/api/v1/challenges/cinc2017/leaderboard?phase=official&board=published&version=9",
        )
        .await;
    assert_eq!(none.status, 404, "{none:?}");
}

/// The harness's data folder as a real (generated) CinC 2017 set, so that the judge can
/// score outputs against it; the exam's record names.
fn real_data(h: &Harness) -> Vec<String> {
    for e in std::fs::read_dir(h.data.path()).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            std::fs::remove_dir_all(p).unwrap();
        } else {
            std::fs::remove_file(p).unwrap();
        }
    }
    synth::write_challenge("cinc2017", h.data.path(), 7, Some(24)).unwrap();
    let c = judge::Challenge::built_in("cinc2017").unwrap();
    let d = judge::dataset::Dataset::open(c.layout, h.data.path()).unwrap();
    let exam = d.split(&c.split, &c.id).unwrap().exam;
    assert!(exam.len() >= 2, "{} exam records", exam.len());
    exam.into_iter().map(|i| i.id).collect()
}

/// The quiz records of the data [`real_data`] wrote.
fn quiz_records(h: &Harness) -> Vec<String> {
    let c = judge::Challenge::built_in("cinc2017").unwrap();
    let d = judge::dataset::Dataset::open(c.layout, h.data.path()).unwrap();
    let quiz = d.split(&c.split, &c.id).unwrap().quiz;
    assert!(!quiz.is_empty(), "no quiz records");
    quiz.into_iter().map(|i| i.id).collect()
}

async fn rescoring_stored_outputs(b: Backend) {
    let h = Harness::start(b).await;
    let exam = real_data(&h);
    h.challenge().await;
    h.phase("official", -Duration::days(1), json!(null), true)
        .await;
    let (_, alice) = h.participant("alice").await;
    h.team(&alice, "Alpha").await;
    let (_, bob) = h.participant("bob").await;
    h.team(&bob, "Beta").await;
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    let id = a.json["id"].as_str().unwrap().to_owned();
    let key = judge_next(&h, 0.812).await;
    // The exam outputs the run kept: one class for every record.
    let dir = server::layout::result_dir(h.state.path(), key);
    std::fs::create_dir_all(dir.join("private/exam-outputs")).unwrap();
    let answers: String = exam.iter().map(|r| format!("{r},N\n")).collect();
    std::fs::write(dir.join("private/exam-outputs/answers.txt"), answers).unwrap();
    // And the quiz outputs (the participant's copy): rescoring recomputes both splits.
    std::fs::create_dir_all(dir.join("outputs/quiz")).unwrap();
    let answers: String = quiz_records(&h)
        .iter()
        .map(|r| format!("{r},A\n"))
        .collect();
    std::fs::write(dir.join("outputs/quiz/answers.txt"), answers).unwrap();

    let rescore = "/api/v1/challenges/cinc2017/rescore";
    let why = json!({"reason": "the F1 of ~ was wrong"});
    // Attacks: participants (the team's own too) cannot rescore or decide.
    for token in [alice.as_str(), bob.as_str()] {
        let a = h.post(Some(token), rescore, why.clone()).await;
        assert_eq!((a.status, a.code()), (403, "forbidden"), "{a:?}");
    }
    let bad = h
        .post(Some(&h.organiser), rescore, json!({"reason": "  "}))
        .await;
    assert_eq!(bad.status, 422, "{bad:?}");

    let r = h.post(Some(&h.organiser), rescore, why.clone()).await;
    assert_eq!(r.status, 201, "{r:?}");
    assert_eq!(r.json["state"], "pending");
    assert_eq!(r.json["reason"], "the F1 of ~ was wrong");
    assert_eq!(r.json["scope"]["results"], 1);
    let changes = r.json["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{r:?}");
    assert_eq!(changes[0]["submission"], id.as_str());
    assert_eq!(changes[0]["before"]["score"], 0.812);
    let after = changes[0]["after"]["score"].as_f64().unwrap();
    assert!(after != 0.812 && after.is_finite(), "{after}");
    assert_eq!(changes[0]["quiz_before"]["score"], 0.7, "{r:?}");
    let quiz_after = changes[0]["quiz_after"]["score"].as_f64().unwrap();
    assert!(quiz_after != 0.7 && quiz_after.is_finite(), "{quiz_after}");
    assert!(
        changes[0]["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("degenerate output"),
        "{r:?}"
    );
    let rid = r.json["id"].as_str().unwrap().to_owned();
    // Nothing changed yet (the leaderboard is now in the server's cache).
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{id}"))
        .await;
    assert_eq!(s.json["scores"]["score"], 0.812, "{s:?}");
    let lb = h
        .get(
            None,
            "/api/v1/challenges/cinc2017/leaderboard?phase=official",
        )
        .await;
    assert_eq!(lb.json["rows"][0]["score"], 0.812, "{lb:?}");
    for token in [alice.as_str(), bob.as_str()] {
        for path in [
            format!("/api/v1/rescores/{rid}/apply"),
            format!("/api/v1/rescores/{rid}/cancel"),
        ] {
            let a = h.post_empty(Some(token), &path).await;
            assert_eq!(a.status, 403, "{path}: {a:?}");
        }
        let a = h.get(Some(token), &format!("/api/v1/rescores/{rid}")).await;
        assert_eq!(a.status, 403, "{a:?}");
    }

    let applied = h
        .post_empty(Some(&h.organiser), &format!("/api/v1/rescores/{rid}/apply"))
        .await;
    assert_eq!(applied.status, 200, "{applied:?}");
    assert_eq!(applied.json["state"], "applied");
    let again = h
        .post_empty(Some(&h.organiser), &format!("/api/v1/rescores/{rid}/apply"))
        .await;
    assert_eq!(
        (again.status, again.code()),
        (409, "state_conflict"),
        "{again:?}"
    );
    // The team sees the new score at the challenge's precision, and the warning.
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{id}"))
        .await;
    let shown = s.json["scores"]["score"].as_f64().unwrap();
    assert_eq!(shown, (after * 1000.0).round() / 1000.0, "{s:?}");
    let warnings: Vec<&str> = s.json["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .collect();
    assert!(
        warnings.iter().any(|w| w.starts_with("degenerate output")),
        "{warnings:?}"
    );
    // The replaced result stays, marked replaced.
    let o = h
        .get(Some(&h.organiser), &format!("/api/v1/submissions/{id}"))
        .await;
    assert_eq!(o.json["organiser"]["results"], 2, "{o:?}");
    let results = h.t.results(key.submission).await.unwrap();
    assert_eq!(results.iter().filter(|r| r.replaced).count(), 1);
    assert!(results.iter().any(|r| !r.replaced && r.rescore.is_some()));
    // Both splits' figures of the live result are the rescoring's, exactly.
    let live = results.iter().find(|r| !r.replaced).unwrap();
    assert_eq!(live.figures[0].value, Some(after));
    assert_eq!(live.quiz_figures[0].value, Some(quiz_after));
    // The leaderboard follows at once: applying dropped the cached board (well within
    // the cache's 1 s lifetime).
    let lb = h
        .get(
            None,
            "/api/v1/challenges/cinc2017/leaderboard?phase=official",
        )
        .await;
    assert_eq!(lb.json["rows"][0]["score"].as_f64(), Some(shown), "{lb:?}");

    // Scored again with nothing new: no change; cancelled, it stays a record.
    let r2 = h.post(Some(&h.organiser), rescore, why.clone()).await;
    assert_eq!(r2.json["changes"], json!([]), "{r2:?}");
    let rid2 = r2.json["id"].as_str().unwrap();
    let c = h
        .post_empty(
            Some(&h.organiser),
            &format!("/api/v1/rescores/{rid2}/cancel"),
        )
        .await;
    assert_eq!(c.json["state"], "cancelled", "{c:?}");
    let g = h
        .get(Some(&h.organiser), &format!("/api/v1/rescores/{rid2}"))
        .await;
    assert_eq!(g.json["state"], "cancelled", "{g:?}");
}

/// A result scored by another scorer version is left off the leaderboard until it is
/// rescored; the reproduce command names every version and hash.
async fn leaderboards_combine_current_versions_only(b: Backend) {
    let h = Harness::start(b).await;
    h.challenge().await;
    h.phase("open", -Duration::days(1), json!(null), true).await;
    let (_, alice) = h.participant("alice").await;
    let alpha = h.team(&alice, "Alpha").await;
    let (_, bob) = h.participant("bob").await;
    h.team(&bob, "Beta").await;
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    let id = a.json["id"].as_str().unwrap().to_owned();
    judge_next(&h, 0.8).await;
    h.upload(&bob, "cinc2017", "", good_entry()).await;
    // Bob's result comes from an older scorer.
    let (worker, _) = (h.t.workers().await.unwrap().remove(0), ());
    let job =
        h.t.take_job(worker.id, std::time::Duration::from_secs(60), None)
            .await
            .unwrap()
            .unwrap();
    let mut result = scored_result();
    result["exam_score"]["ranking"][0]["value"] = json!(0.9);
    h.t.report(
        worker.id,
        job.attempt,
        &store::Report {
            outcome: store::Outcome::Scored,
            result_json: Some(result.to_string()),
            private_json: Some(r#"{"score": 0.9}"#.into()),
            figures: vec![store::Figure {
                key: "score".into(),
                value: Some(0.9),
                better: store::Better::Higher,
            }],
            quiz_figures: Vec::new(),
            scorer_version: "score 0.0.1".into(),
            judge_version: "0.0.1".into(),
            message: None,
            runtime_lock: Some("sha256:0123456789abcdef".into()),
            warnings: Vec::new(),
        },
    )
    .await
    .unwrap();
    let lb = h
        .get(
            Some(&h.organiser),
            "/api/v1/challenges/cinc2017/leaderboard?phase=open",
        )
        .await;
    let teams: Vec<&str> = lb.json["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["team"].as_str().unwrap())
        .collect();
    assert_eq!(teams, ["Alpha"], "{lb:?}");
    // Hiding a team drops the cached board at once.
    let alpha: store::TeamId = alpha.parse().unwrap();
    h.t.set_team_hidden(alpha, true, Some("organisers' own"))
        .await
        .unwrap();
    let lb = h
        .get(
            Some(&h.organiser),
            "/api/v1/challenges/cinc2017/leaderboard?phase=open",
        )
        .await;
    assert_eq!(lb.json["rows"], json!([]), "{lb:?}");
    // The reproduce command names the versions and hashes the result was made with.
    let s = h
        .get(Some(&alice), &format!("/api/v1/submissions/{id}"))
        .await;
    let r = &s.json["reproduce"];
    let command = r["command"].as_str().unwrap();
    assert!(
        command.starts_with("physiojudge evaluate --challenge cinc2017 "),
        "{command}"
    );
    for field in [
        "entry_sha256",
        "definition_sha256",
        "manifest_sha256",
        "judge_version",
        "scorer_version",
    ] {
        let v = r[field].as_str().unwrap_or_else(|| panic!("{field}: {r}"));
        assert!(command.contains(v), "{field} {v} not in {command}");
    }
    let b = h
        .get(
            Some(&h.organiser),
            &format!("/api/v1/submissions/{}", job.attempt.submission),
        )
        .await;
    assert_eq!(
        b.json["reproduce"]["runtime_lock"], "sha256:0123456789abcdef",
        "{b:?}"
    );
    assert!(
        b.json["reproduce"]["command"]
            .as_str()
            .unwrap()
            .contains("sha256:0123456789abcdef")
    );
}

/// The ranking numbers are the exam's in every phase: one that names the quiz as its
/// split still rounds them for the public, and withholds them while it hides exam
/// scores.
async fn a_quiz_phase_ranks_by_quiz_figures_and_leaks_no_exam_figure(b: Backend) {
    let h = Harness::start(b).await;
    h.challenge().await;
    let now = h.now();
    for (name, split, show) in [
        ("shown", "exam", true),
        ("hidden", "exam", false),
        ("validation", "quiz", true),
        ("blind", "quiz", false),
    ] {
        let a = h
            .post(
                Some(&h.organiser),
                "/api/v1/challenges/cinc2017/phases",
                json!({"name": name, "opens": now - Duration::days(1),
                       "closes": now + Duration::days(30), "scored_split": split,
                       "show_exam": show, "rule": "best"}),
            )
            .await;
        assert_eq!(a.status, 201, "{a:?}");
    }
    let (_, alice) = h.participant("alice").await;
    let (_, bob) = h.participant("bob").await;
    h.team(&alice, "Alpha").await;
    h.team(&bob, "Beta").await;
    // Alpha is better on the exam, Beta on the quiz.
    for phase in ["shown", "hidden", "validation", "blind"] {
        for (token, exam, quiz) in [
            (&alice, 0.812_345_678, 0.612_345_678_9),
            (&bob, 0.5, 0.712_345_678_9),
        ] {
            let a = h
                .upload(token, "cinc2017", &format!("?phase={phase}"), good_entry())
                .await;
            assert_eq!(a.status, 201, "{a:?}");
            judge_next_split(&h, exam, quiz).await;
        }
    }
    // A quiz-scored phase ranks by the quiz's figures, shown exactly to everyone (each
    // team sees its own quiz report in full); no exam figure appears, whether the phase
    // shows exam scores or not.
    for phase in ["validation", "blind"] {
        for token in [None, Some(alice.as_str()), Some(h.organiser.as_str())] {
            let lb = h
                .get(
                    token,
                    &format!("/api/v1/challenges/cinc2017/leaderboard?phase={phase}"),
                )
                .await;
            assert_eq!(lb.status, 200, "{lb:?}");
            assert_eq!(lb.json["split"], "quiz", "{lb:?}");
            let rows: Vec<_> = lb.json["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| (r["team"].clone(), r["score"].clone()))
                .collect();
            assert_eq!(
                rows,
                [
                    (json!("Beta"), json!(0.712_345_678_9)),
                    (json!("Alpha"), json!(0.612_345_678_9))
                ],
                "{phase}: {lb:?}"
            );
            assert!(!lb.text.contains("0.812"), "{}", lb.text);
        }
    }
    // Its final leaderboard and publication rank by the quiz too.
    let fin = h
        .get(
            Some(&h.organiser),
            "/api/v1/challenges/cinc2017/leaderboard?phase=validation&board=final",
        )
        .await;
    assert_eq!(fin.json["rows"][0]["team"], "Beta", "{fin:?}");
    let p = h
        .post(
            Some(&h.organiser),
            "/api/v1/challenges/cinc2017/publish",
            json!({"phase": "validation"}),
        )
        .await;
    assert_eq!(p.status, 201, "{p:?}");
    assert_eq!(p.json["split"], "quiz", "{p:?}");
    assert_eq!(p.json["rows"][0]["score"], 0.712_345_678_9, "{p:?}");
    // An exam-scored phase ranks by the exam's, rounded for all but organisers.
    let lb = h
        .get(None, "/api/v1/challenges/cinc2017/leaderboard?phase=shown")
        .await;
    assert_eq!(lb.json["split"], "exam", "{lb:?}");
    assert_eq!(lb.json["rows"][0]["team"], "Alpha", "{lb:?}");
    let lb = h
        .get(None, "/api/v1/challenges/cinc2017/leaderboard?phase=shown")
        .await;
    assert_eq!(lb.json["rows"][0]["score"], 0.812, "{lb:?}");
    assert!(!lb.text.contains("0.812345"), "{}", lb.text);
    // A client that accepts gzip gets the same board gzipped.
    let r = h
        .http
        .get(h.url("/api/v1/challenges/cinc2017/leaderboard?phase=shown"))
        .header("accept-encoding", "gzip, br")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-encoding"], "gzip");
    assert_eq!(r.headers()["vary"], "accept-encoding");
    let zipped = r.bytes().await.unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&zipped[..]), &mut text)
        .unwrap();
    assert_eq!(text, lb.text);
    let lb = h
        .get(None, "/api/v1/challenges/cinc2017/leaderboard?phase=hidden")
        .await;
    assert_eq!(lb.json["rows"], json!([]), "{lb:?}");
    assert!(!lb.text.contains("0.812"), "{}", lb.text);
    let o = h
        .get(
            Some(&h.organiser),
            "/api/v1/challenges/cinc2017/leaderboard?phase=hidden",
        )
        .await;
    assert_eq!(o.json["rows"][0]["score"], 0.812_345_678, "{o:?}");
    assert!(!o.text.contains("0.7123"), "{}", o.text);
}
