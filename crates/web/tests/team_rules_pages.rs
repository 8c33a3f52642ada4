//! The pages of per-team rules, without a browser (the HTML as served): the organiser
//! console's forms for extensions, quota overrides and baselines (CSRF-checked, through
//! the API), a team's own close on its challenge and submit pages, and the baseline
//! badge on the leaderboard. On SQLite and PostgreSQL.

mod common;

use std::time::Duration;

use chrono::Duration as Span;
use common::site::{Site, open_phase};
use store::{Backend, NewPhase, Quota, Role};

/// The site, its event streams polled often, with cinc2017 (no phase yet).
async fn site(backend: Backend) -> Site {
    let s = Site::with(backend, |c| c.events_poll = Duration::from_millis(100)).await;
    s.challenge("cinc2017", "AF classification").await;
    s
}

/// The console page whose CSRF token the forms carry.
const CONSOLE: &str = "/organiser/challenges/cinc2017/rules";

impl Site {
    /// Posts a form as `token`'s session, with the CSRF token its console carries: the
    /// status and the page answered (a refusal drawn in place).
    async fn post_page(&self, token: &str, path: &str, fields: &[(&str, &str)]) -> (u16, String) {
        let r = self.post_form(Some(token), CONSOLE, path, fields).await;
        (r.status().as_u16(), r.text().await.unwrap())
    }

    /// Posts a form as `token`'s session, with the CSRF token its console carries: the
    /// status and where it sends the browser.
    async fn post(&self, token: &str, path: &str, fields: &[(&str, &str)]) -> (u16, String) {
        let r = self.post_form(Some(token), CONSOLE, path, fields).await;
        let location = r
            .headers()
            .get("location")
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        (r.status().as_u16(), location)
    }
}

async fn pages_of_team_rules(backend: Backend) {
    let s = site(backend).await;
    let now = s.t.now();
    let phase =
        s.t.create_phase(
            "cinc2017",
            &NewPhase {
                closes: now + Span::days(10),
                quota: Quota {
                    total: Some(5),
                    ..Quota::default()
                },
                ..open_phase("official", now)
            },
        )
        .await
        .unwrap();
    let (_, org) = s.user("org", Role::Organiser, None).await;
    let (alice, alice_token) = s.user("alice", Role::Participant, None).await;
    let (bob, bob_token) = s.user("bob", Role::Participant, None).await;
    let (org_user, _) = (s.t.user_by_name("org").await.unwrap(), ());
    s.t.create_team("cinc2017", "Alpha", alice.id)
        .await
        .unwrap();
    let beta = s.t.create_team("cinc2017", "Beta", bob.id).await.unwrap();
    let base =
        s.t.create_team("cinc2017", "Trivial", org_user.id)
            .await
            .unwrap();
    s.t.set_team_hidden(base.id, true, Some("an organisers' team"))
        .await
        .unwrap();

    // A participant's session cannot use the console's forms.
    let (status, _) = s.page(Some(&bob_token), "/organiser").await;
    assert_eq!(status, 403);

    // The organiser grants Beta an extension, sets its quota, marks the baseline.
    let closes = (phase.closes + Span::days(2))
        .format("%Y-%m-%dT%H:%M")
        .to_string();
    let beta_id = beta.id.to_string();
    let (status, to) = s
        .post(
            &org,
            "/organiser/challenges/cinc2017/extensions",
            &[
                ("form", "extension"),
                ("phase", "official"),
                ("team", &beta_id),
                ("closes", &closes),
                ("reason", "a power cut at the lab"),
            ],
        )
        .await;
    assert_eq!(
        (status, to.as_str()),
        (
            303,
            "/organiser/challenges/cinc2017/rules?done=extension&name=Beta"
        )
    );
    let (status, to) = s
        .post(
            &org,
            "/organiser/challenges/cinc2017/quotas",
            &[
                ("form", "quota"),
                ("phase", "official"),
                ("team", &beta_id),
                ("total", "9"),
                ("per_day", ""),
                ("max_concurrent", ""),
                ("reason", "joined late"),
            ],
        )
        .await;
    assert_eq!(
        (status, to.as_str()),
        (
            303,
            "/organiser/challenges/cinc2017/rules?done=quota&name=Beta"
        )
    );
    let (status, _) = s
        .post(
            &org,
            "/organiser/challenges/cinc2017/baseline",
            &[
                ("form", "baseline"),
                ("team", &base.id.to_string()),
                ("baseline", "true"),
            ],
        )
        .await;
    assert_eq!(status, 303);
    assert!(s.t.team(base.id).await.unwrap().baseline);
    // A form without the session's CSRF token is refused and changes nothing.
    let r = s
        .http
        .post(format!(
            "{}/organiser/challenges/cinc2017/extensions/revoke",
            s.base
        ))
        .header("cookie", format!("pj_session={org}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!(
            "csrf=forged&form=rule-remove&phase=official&team={beta_id}"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 403);
    assert!(s.t.extension(phase.id, beta.id).await.unwrap().is_some());

    // A refusal, the form's own or the API's, is the same page with the reason above
    // the form and what was typed kept; nothing changes.
    for (closes, status, why) in [
        ("soon", 422, "Closes: “soon” is not a date and time"),
        ("2000-01-01T00:00", 422, "Not done: "),
    ] {
        let (got, page) = s
            .post_page(
                &org,
                "/organiser/challenges/cinc2017/extensions",
                &[
                    ("form", "extension"),
                    ("phase", "official"),
                    ("team", &beta_id),
                    ("closes", closes),
                    ("reason", "a <b>second</b> power cut"),
                ],
            )
            .await;
        assert_eq!(got, status, "{page}");
        assert!(page.contains("id=\"refused-extension\""), "{page}");
        assert!(page.contains(why), "{page}");
        assert!(
            page.contains("value=\"a &lt;b&gt;second&lt;/b&gt; power cut\""),
            "the reason was not kept: {page}"
        );
        assert!(page.contains(&format!("value=\"{closes}\"")), "{page}");
    }
    assert_eq!(
        s.t.extension(phase.id, beta.id)
            .await
            .unwrap()
            .unwrap()
            .reason,
        "a power cut at the lab"
    );

    // The console lists what is in force.
    let (_, console) = s
        .page(Some(&org), "/organiser/challenges/cinc2017/rules")
        .await;
    for want in [
        "table class=\"extensions\"",
        "a power cut at the lab",
        "joined late",
        "9 in all",
        "Baselines: Trivial",
        "action=\"/organiser/challenges/cinc2017/extensions/revoke\"",
    ] {
        assert!(console.contains(want), "the console lacks {want:?}");
    }

    // Bob's challenge and submit pages say his own close; Alice's do not.
    let own = (phase.closes + Span::days(2))
        .format("%Y-%m-%d %H:%M UTC")
        .to_string();
    let (_, page) = s.page(Some(&bob_token), "/challenges/cinc2017").await;
    assert!(page.contains("for your team: "), "{page}");
    let (_, page) = s
        .page(Some(&bob_token), "/challenges/cinc2017/submit")
        .await;
    assert!(page.contains("The phase closes for your team"), "{page}");
    assert!(
        page.contains("an extension the organisers granted"),
        "{page}"
    );
    assert!(
        page.contains("Your team's limits were set by the organisers"),
        "{page}"
    );
    assert!(
        page.contains(&format!("(closes {own} for your team)")),
        "{page}"
    );
    let (_, page) = s.page(Some(&alice_token), "/challenges/cinc2017").await;
    assert!(!page.contains("for your team: "));
    let (_, page) = s
        .page(Some(&alice_token), "/challenges/cinc2017/submit")
        .await;
    assert!(!page.contains("an extension the organisers granted"));
    assert!(!page.contains("Your team's limits were set"));

    // Revoked and removed through the console.
    for (path, done) in [
        (
            "/organiser/challenges/cinc2017/extensions/revoke",
            "extension-revoked",
        ),
        (
            "/organiser/challenges/cinc2017/quotas/remove",
            "quota-removed",
        ),
    ] {
        let (status, to) = s
            .post(
                &org,
                path,
                &[
                    ("form", "rule-remove"),
                    ("phase", "official"),
                    ("team", &beta_id),
                ],
            )
            .await;
        assert_eq!(
            (status, to),
            (
                303,
                format!("/organiser/challenges/cinc2017/rules?done={done}&name=Beta")
            )
        );
    }
    assert!(s.t.extension(phase.id, beta.id).await.unwrap().is_none());
    assert!(
        s.t.quota_override(phase.id, beta.id)
            .await
            .unwrap()
            .is_none()
    );

    // The baseline's scored entry is on the leaderboard page with its badge.
    let (worker, _) = s.t.create_worker("w1").await.unwrap();
    for (team, v) in [(&beta, 0.8), (&base, 0.4)] {
        s.t.submit(&store::NewSubmission {
            team: team.id,
            phase: phase.id,
            entry_sha256: format!("{:064x}", (v * 10.0) as u64),
            entry_path: "entries/x.zip".into(),
            method_name: None,
            method_description: None,
        })
        .await
        .unwrap();
        let job =
            s.t.take_job(worker.id, Duration::from_secs(60), None)
                .await
                .unwrap()
                .unwrap();
        let figure = store::Figure {
            key: "score".into(),
            value: Some(v),
            better: store::Better::Higher,
        };
        s.t.report(
            worker.id,
            job.attempt,
            &store::Report {
                outcome: store::Outcome::Scored,
                result_json: Some("{}".into()),
                private_json: None,
                figures: vec![figure.clone()],
                quiz_figures: vec![figure],
                scorer_version: judge::rescore::SCORER_VERSION.into(),
                judge_version: "judge 0.1.0".into(),
                message: None,
                runtime_lock: None,
                warnings: Vec::new(),
            },
        )
        .await
        .unwrap();
    }
    let (status, board) = s
        .page(Some(&alice_token), "/challenges/cinc2017/leaderboard")
        .await;
    assert_eq!(status, 200);
    let badge = "<span class=\"badge baseline\"";
    assert_eq!(board.matches(badge).count(), 1, "{board}");
    let trivial = board.find("Trivial").expect("the baseline's row");
    assert!(
        board[trivial..].starts_with(&format!("Trivial {badge}")),
        "{}",
        &board[trivial..trivial + 80]
    );
    assert!(board.find("Beta").unwrap() < trivial, "ranked after Beta");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite() {
    pages_of_team_rules(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres() {
    pages_of_team_rules(Backend::Postgres).await;
}
