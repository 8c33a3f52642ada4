//! Names people cannot confuse (issue 32, finding 10): a team or user name is trimmed,
//! and one holding an invisible or reordering character (Unicode general category Cf
//! or Cc: zero-width space, word joiner, zero-width joiner, a right-to-left override)
//! is refused, so none of the review's look-alikes of `Alpha` is accepted beside it;
//! and names equal after NFKC normalisation and case folding collide, the refusal
//! naming the existing name. On SQLite and PostgreSQL.

mod common;

use common::Harness;
use serde_json::json;

async fn look_alike_names_are_refused(backend: store::Backend) {
    let h = Harness::start(backend).await;
    let (_, _alpha) = h.ready(json!({"total": 10})).await;
    let look_alikes = [
        "Alpha ",
        " Alpha",
        "Alpha\u{200B}",
        "Alpha\u{2060}",
        "Al\u{200D}pha",
        "\u{202E}ahplA",
        "Alpha\u{2066}",
        "Alpha\t",
    ];
    for (i, name) in look_alikes.iter().enumerate() {
        let (_, token) = h.participant(&format!("p{i}")).await;
        let a = h
            .post(
                Some(&token),
                "/api/v1/teams",
                json!({"name": name, "challenge": "cinc2017"}),
            )
            .await;
        assert!(matches!(a.status, 400 | 409 | 422), "{name:?}: {a:?}");
    }
    // One team: Alpha. A name with spaces around it is kept trimmed.
    let teams: Vec<String> = h
        .get(Some(&h.organiser), "/api/v1/teams?challenge=cinc2017")
        .await
        .json
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    assert!(teams.iter().all(|t| t == "Alpha"), "{teams:?}");
    let (_, token) = h.participant("zed").await;
    let a = h
        .post(
            Some(&token),
            "/api/v1/teams",
            json!({"name": "  Beta  ", "challenge": "cinc2017"}),
        )
        .await;
    assert_eq!(a.status, 201, "{a:?}");
    assert_eq!(a.json["name"], "Beta");
    // Users alike.
    for name in ["bob\u{200B}", "\u{202E}bob", "bob\u{feff}"] {
        let a = h
            .post(
                Some(&h.organiser),
                "/api/v1/users",
                json!({"name": name, "role": "participant", "password": "correct horse"}),
            )
            .await;
        assert!(matches!(a.status, 400 | 422), "{name:?}: {a:?}");
    }
}

/// A name that reads the same as a taken one once NFKC-normalised and case-folded
/// (`ALPHA`, a full-width `Ａlpha`, `alpha` beside `Alpha`) is refused with 409
/// `exists`, and the message names the existing name; a distinct name still works.
async fn names_alike_after_folding_are_taken(backend: store::Backend) {
    let h = Harness::start(backend).await;
    let (_, _alpha) = h.ready(json!({"total": 10})).await;
    for (i, name) in ["ALPHA", "\u{FF21}lpha", "alpha"].iter().enumerate() {
        let (_, token) = h.participant(&format!("q{i}")).await;
        let a = h
            .post(
                Some(&token),
                "/api/v1/teams",
                json!({"name": name, "challenge": "cinc2017"}),
            )
            .await;
        assert_eq!(a.status, 409, "{name:?}: {a:?}");
        assert_eq!(a.json["error"]["code"], "exists", "{a:?}");
        let msg = a.json["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains("\"Alpha\""), "{name:?}: {msg}");
    }
    let (_, token) = h.participant("q9").await;
    let a = h
        .post(
            Some(&token),
            "/api/v1/teams",
            json!({"name": "Alpha Two", "challenge": "cinc2017"}),
        )
        .await;
    assert_eq!(a.status, 201, "{a:?}");

    h.participant("Carol").await;
    for name in ["CAROL", "\u{FF23}arol", "carol", "Carol"] {
        let a = h
            .post(
                Some(&h.organiser),
                "/api/v1/users",
                json!({"name": name, "role": "participant", "password": "correct horse"}),
            )
            .await;
        assert_eq!(a.status, 409, "{name:?}: {a:?}");
        assert_eq!(a.json["error"]["code"], "exists", "{a:?}");
        let msg = a.json["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains("\"Carol\""), "{name:?}: {msg}");
    }
    h.participant("Caroline").await;
}

both!(
    look_alike_names_are_refused,
    names_alike_after_folding_are_taken
);
