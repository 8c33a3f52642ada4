//! Per-team rules over real HTTP, on SQLite and PostgreSQL (docs/service.md,
//! "Deadlines and quotas per team", "Leaderboard hygiene"): a deadline extension for
//! one team, a quota override for one team, a baseline team on the leaderboards — and
//! what participants may not do with them.

mod common;

use chrono::{DateTime, Duration, Utc};
use serde_json::json;

use common::*;
use store::Backend;

both!(
    an_extension_is_one_teams_own_close,
    a_quota_override_raises_and_lowers_one_teams_limit,
    a_baseline_team_is_on_every_board_with_its_badge,
);

fn time(v: &serde_json::Value) -> DateTime<Utc> {
    v.as_str()
        .unwrap_or_else(|| panic!("not a time: {v}"))
        .parse()
        .unwrap()
}

async fn an_extension_is_one_teams_own_close(b: Backend) {
    let h = Harness::start(b).await;
    let (alice, _) = h.ready(json!(null)).await;
    let (_, bob) = h.participant("bob").await;
    let beta = h.team(&bob, "Beta").await;
    let phase = h.t.phases("cinc2017").await.unwrap().remove(0);
    let closes = phase.closes;
    let extended = closes + Duration::hours(12);
    let path = "/api/v1/challenges/cinc2017/phases/official/extensions/Beta";
    let grant = json!({"closes": extended, "reason": "a power cut at the lab"});

    // Attacks: participants (Bob for his own team too) cannot grant, see or revoke.
    for token in [Some(alice.as_str()), Some(bob.as_str())] {
        let a = h.put(token, path, grant.clone()).await;
        assert_eq!((a.status, a.code()), (403, "forbidden"), "{a:?}");
        assert_eq!(h.get(token, path).await.status, 403);
        assert_eq!(h.delete(token, path).await.status, 403);
        let list = "/api/v1/challenges/cinc2017/phases/official/extensions";
        assert_eq!(h.get(token, list).await.status, 403);
    }
    assert_eq!(h.put(None, path, grant.clone()).await.status, 401);

    // Bad input: 422; unknown names: 404.
    for (body, why) in [
        (json!({"closes": extended, "reason": "  "}), "reason"),
        (
            json!({"closes": closes - Duration::hours(1), "reason": "r"}),
            "closes",
        ),
        (json!({"closes": closes, "reason": "r"}), "closes"),
    ] {
        let a = h.put(Some(&h.organiser), path, body).await;
        assert_eq!((a.status, a.code()), (422, "invalid"), "{a:?}");
        assert!(
            a.json["error"]["message"].as_str().unwrap().contains(why),
            "{a:?}"
        );
    }
    let a = h
        .put(Some(&h.organiser), path, json!({"closes": extended}))
        .await;
    assert!(a.status == 400 || a.status == 422, "{a:?}");
    for p in [
        "/api/v1/challenges/cinc2017/phases/nope/extensions/Beta",
        "/api/v1/challenges/cinc2017/phases/official/extensions/Gamma",
        "/api/v1/challenges/nope/phases/official/extensions/Beta",
    ] {
        let a = h.put(Some(&h.organiser), p, grant.clone()).await;
        assert_eq!((a.status, a.code()), (404, "not_found"), "{p}: {a:?}");
    }
    assert_eq!(h.get(Some(&h.organiser), path).await.status, 404);

    // The organiser grants Beta (named by id here) 12 hours more.
    let by_id = format!("/api/v1/challenges/cinc2017/phases/official/extensions/{beta}");
    let a = h.put(Some(&h.organiser), &by_id, grant.clone()).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(time(&a.json["closes"]), extended);
    assert_eq!(time(&a.json["phase_closes"]), closes);
    assert_eq!(a.json["team"], "Beta");
    assert_eq!(a.json["reason"], "a power cut at the lab");
    assert!(a.json["set_by"].is_string(), "{a:?}");
    assert_eq!(a.json["history"].as_array().unwrap().len(), 1);
    let list = h
        .get(
            Some(&h.organiser),
            "/api/v1/challenges/cinc2017/phases/official/extensions",
        )
        .await;
    assert_eq!(list.json.as_array().unwrap().len(), 1, "{list:?}");

    // What each team sees of its close.
    let quota = "/api/v1/challenges/cinc2017/quota?phase=official";
    let q = h.get(Some(&bob), quota).await;
    assert_eq!(
        (time(&q.json["closes"]), &q.json["extended"]),
        (extended, &json!(true)),
        "{q:?}"
    );
    let q = h.get(Some(&alice), quota).await;
    assert_eq!(
        (time(&q.json["closes"]), &q.json["extended"]),
        (closes, &json!(false)),
        "{q:?}"
    );
    let c = h.get(Some(&bob), "/api/v1/challenges/cinc2017").await;
    assert_eq!(time(&c.json["phases"][0]["team_closes"]), extended, "{c:?}");
    let c = h.get(Some(&alice), "/api/v1/challenges/cinc2017").await;
    assert!(c.json["phases"][0].get("team_closes").is_none(), "{c:?}");

    // An hour after the phase's close: Alice is refused, Bob is accepted.
    h.t.clock.set(closes + Duration::hours(1));
    let a = h
        .upload(&alice, "cinc2017", "?phase=official", good_entry())
        .await;
    assert_eq!((a.status, a.code()), (409, "phase_closed"), "{a:?}");
    assert_eq!(time(&a.json["error"]["closes"]), closes);
    assert_eq!(a.json["error"]["extended"], false);
    let a = h
        .upload(&bob, "cinc2017", "?phase=official", good_entry())
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    // The default phase (none is open) is the latest opened: Bob's still.
    let a = h.upload(&bob, "cinc2017", "", good_entry()).await;
    assert_eq!(a.status, 201, "{a:?}");
    let c = h.get(Some(&bob), "/api/v1/challenges/cinc2017").await;
    assert_eq!(c.json["phases"][0]["open"], true, "{c:?}");
    let c = h.get(Some(&alice), "/api/v1/challenges/cinc2017").await;
    assert_eq!(c.json["phases"][0]["open"], false, "{c:?}");
    // Accepted late, judged to the end.
    judge_next(&h, 0.6).await;
    // While Bob may still submit, the final board is not published: he would see it.
    let a = h
        .post(
            Some(&h.organiser),
            "/api/v1/challenges/cinc2017/publish",
            json!({"phase": "official"}),
        )
        .await;
    assert_eq!((a.status, a.code()), (409, "not_publishable"), "{a:?}");
    let open: Vec<&serde_json::Value> = a.json["error"]["blockers"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["kind"] == "extension_open")
        .collect();
    assert_eq!(open.len(), 1, "{a:?}");
    assert_eq!(open[0]["team"], beta.as_str(), "{a:?}");
    assert_eq!(time(&open[0]["closes"]), extended, "{a:?}");
    assert!(open[0].get("submission").is_none(), "{a:?}");

    // After Bob's own close: refused, the message and figures saying his close.
    h.t.clock.set(extended);
    let a = h
        .upload(&bob, "cinc2017", "?phase=official", good_entry())
        .await;
    assert_eq!((a.status, a.code()), (409, "phase_closed"), "{a:?}");
    assert_eq!(time(&a.json["error"]["closes"]), extended);
    assert_eq!(a.json["error"]["extended"], true);
    assert!(
        a.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("of your team (extended)")
    );

    // Revoked (with a reason, kept): the phase's close again.
    h.t.clock.set(closes + Duration::hours(2));
    let a = h
        .delete(
            Some(&h.organiser),
            &format!("{path}?reason=sent%20in%20time"),
        )
        .await;
    assert_eq!(a.status, 204, "{a:?}");
    assert_eq!(h.delete(Some(&h.organiser), path).await.status, 404);
    let a = h
        .upload(&bob, "cinc2017", "?phase=official", good_entry())
        .await;
    assert_eq!((a.status, a.code()), (409, "phase_closed"), "{a:?}");
    let history =
        h.t.extension_history(phase.id, store::TeamId(beta.parse().unwrap()))
            .await;
    let history = history.unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[1].reason.as_deref(), Some("sent in time"));
    assert!(history[1].set_by.is_some());
}

async fn a_quota_override_raises_and_lowers_one_teams_limit(b: Backend) {
    let h = Harness::start(b).await;
    let (alice, _) = h.ready(json!({"total": 1})).await;
    let (_, bob) = h.participant("bob").await;
    h.team(&bob, "Beta").await;
    let path = "/api/v1/challenges/cinc2017/phases/official/quotas/Alpha";
    let quota = "/api/v1/challenges/cinc2017/quota?phase=official";
    for t in [&alice, &bob] {
        assert_eq!(h.upload(t, "cinc2017", "", good_entry()).await.status, 201);
    }
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    assert_eq!((a.status, a.code()), (409, "quota_spent"), "{a:?}");
    assert_eq!(a.json["error"]["quota"]["overridden"], false);

    // Participants cannot set, see or remove one.
    let raise = json!({"total": 3, "reason": "joined a week late"});
    for token in [Some(alice.as_str()), Some(bob.as_str())] {
        assert_eq!(h.put(token, path, raise.clone()).await.status, 403);
        assert_eq!(h.get(token, path).await.status, 403);
        assert_eq!(h.delete(token, path).await.status, 403);
    }
    for (body, code) in [
        (json!({"reason": "no limit given"}), 422),
        (json!({"total": 3, "reason": ""}), 422),
        (json!({"total": 3_000_000_000u64, "reason": "r"}), 422),
    ] {
        let a = h.put(Some(&h.organiser), path, body.clone()).await;
        assert_eq!(a.status, code, "{body}: {a:?}");
    }

    // Raised: Alpha has two more; Beta's is the phase's.
    let a = h.put(Some(&h.organiser), path, raise).await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json["limits"]["total"], 3);
    assert_eq!(a.json["effective"]["total"], 3);
    assert_eq!(a.json["reason"], "joined a week late");
    let q = h.get(Some(&alice), quota).await;
    assert_eq!(
        (&q.json["total_left"], &q.json["overridden"]),
        (&json!(2), &json!(true)),
        "{q:?}"
    );
    assert_eq!(q.json["limits"]["total"], 3);
    let q = h.get(Some(&bob), quota).await;
    assert_eq!(
        (&q.json["total_left"], &q.json["overridden"]),
        (&json!(0), &json!(false)),
        "{q:?}"
    );
    assert_eq!(
        h.upload(&alice, "cinc2017", "", good_entry()).await.status,
        201
    );
    let a = h.upload(&bob, "cinc2017", "", good_entry()).await;
    assert_eq!((a.status, a.code()), (409, "quota_spent"), "{a:?}");

    // Lowered: no more than one at once (two are queued).
    let a = h
        .put(
            Some(&h.organiser),
            path,
            json!({"total": 3, "max_concurrent": 1, "reason": "queue"}),
        )
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json["history"].as_array().unwrap().len(), 2);
    let q = h.get(Some(&alice), quota).await;
    assert_eq!(q.json["max_concurrent"], 1, "{q:?}");
    assert_eq!(q.json["spent"], json!(["max_concurrent"]));
    let a = h.upload(&alice, "cinc2017", "", good_entry()).await;
    assert_eq!((a.status, a.code()), (409, "quota_spent"), "{a:?}");
    assert_eq!(a.json["error"]["quota"]["overridden"], true);
    assert_eq!(a.json["error"]["quota"]["max_concurrent"], 1);
    let list = h
        .get(
            Some(&h.organiser),
            "/api/v1/challenges/cinc2017/phases/official/quotas",
        )
        .await;
    assert_eq!(list.json.as_array().unwrap().len(), 1, "{list:?}");

    // Removed: the phase's total of one again.
    assert_eq!(h.delete(Some(&h.organiser), path).await.status, 204);
    let q = h.get(Some(&alice), quota).await;
    assert_eq!(
        (&q.json["total_left"], &q.json["overridden"]),
        (&json!(0), &json!(false)),
        "{q:?}"
    );
    assert_eq!(h.get(Some(&h.organiser), path).await.status, 404);
}

async fn a_baseline_team_is_on_every_board_with_its_badge(b: Backend) {
    let h = Harness::start(b).await;
    let (alice, _) = h.ready(json!(null)).await;
    // The organisers' own team: hidden when made.
    let base = h.team(&h.organiser, "Trivial baseline").await;
    assert_eq!(
        h.upload(&alice, "cinc2017", "", good_entry()).await.status,
        201
    );
    judge_next(&h, 0.8).await;
    assert_eq!(
        h.upload(&h.organiser, "cinc2017", "", good_entry())
            .await
            .status,
        201
    );
    judge_next(&h, 0.3).await;
    let board = "/api/v1/challenges/cinc2017/leaderboard?phase=official";
    let rows = |a: &Answer| a.json["rows"].as_array().unwrap().clone();
    assert_eq!(rows(&h.get(Some(&h.organiser), board).await).len(), 1);

    // Only organisers mark a baseline.
    let mark = format!("/api/v1/teams/{base}/baseline");
    let a = h.put(Some(&alice), &mark, json!({"baseline": true})).await;
    assert_eq!((a.status, a.code()), (403, "forbidden"), "{a:?}");
    let a = h
        .put(Some(&h.organiser), &mark, json!({"baseline": true}))
        .await;
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(
        (&a.json["baseline"], &a.json["hidden"]),
        (&json!(true), &json!(false))
    );
    let nobody = format!("/api/v1/teams/{}/baseline", uuid::Uuid::now_v7());
    assert_eq!(
        h.put(Some(&h.organiser), &nobody, json!({"baseline": true}))
            .await
            .status,
        404
    );

    // Live, final and published boards, to organisers and to a team alike.
    let publish = h
        .post(
            Some(&h.organiser),
            "/api/v1/challenges/cinc2017/publish",
            json!({"phase": "official"}),
        )
        .await;
    assert_eq!(publish.status, 201, "{publish:?}");
    for which in ["live", "final", "published"] {
        for token in [Some(h.organiser.as_str()), Some(alice.as_str()), None] {
            let a = h.get(token, &format!("{board}&board={which}")).await;
            if a.json["withheld"].is_string() {
                continue; // exam scores shown only on the published board to teams
            }
            let r = rows(&a);
            let marks: Vec<_> = r
                .iter()
                .map(|r| {
                    (
                        r["team"].as_str().unwrap(),
                        r["rank"].as_u64().unwrap(),
                        r["baseline"].as_bool().unwrap(),
                    )
                })
                .collect();
            assert_eq!(
                marks,
                [("Alpha", 1, false), ("Trivial baseline", 2, true)],
                "{which}: {a:?}"
            );
        }
    }
}
