//! Names people cannot confuse (docs/service.md, "Names"): user names are unique over
//! all users and team names within a challenge once NFKC-normalised and case-folded,
//! and a refusal names the existing name; migration 0008 keys the rows stored before
//! it, colliding ones included, without failing.

use super::*;

both!(look_alikes_collide_and_name_the_existing_name);

#[test]
fn the_key_folds_case_width_and_compatibility_forms() {
    for same in [
        "Alpha",
        "ALPHA",
        "alpha",
        "\u{FF21}lpha",
        "\u{FF21}\u{FF2C}\u{FF30}\u{FF28}\u{FF21}",
    ] {
        assert_eq!(name_key(same), "alpha", "{same:?}");
    }
    // Full case folding (ß is ss), compatibility forms (the ﬁ ligature, a circled
    // digit), and a composed é against e + combining acute.
    assert_eq!(name_key("Straße"), name_key("STRASSE"));
    assert_eq!(name_key("\u{FB01}ve"), name_key("five"));
    assert_eq!(name_key("team \u{2460}"), name_key("TEAM 1"));
    assert_eq!(name_key("caf\u{E9}"), name_key("CAFE\u{301}"));
    for other in ["Alpha2", "Alfa", "Alph", "Ålpha", "Beta"] {
        assert_ne!(name_key(other), name_key("Alpha"), "{other:?}");
    }
}

fn taken(r: Result<impl std::fmt::Debug, Error>, what: &str, name: &str, existing: &str) {
    match r {
        Err(e @ Error::NameTaken { .. }) => {
            let Error::NameTaken {
                what: w,
                name: n,
                existing: x,
            } = &e
            else {
                unreachable!()
            };
            assert_eq!((*w, n.as_str(), x.as_str()), (what, name, existing));
            let msg = e.to_string();
            assert!(msg.contains(&format!("{existing:?}")), "{msg}");
        }
        other => panic!("{name:?}: {other:?}"),
    }
}

async fn look_alikes_collide_and_name_the_existing_name(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let founder = t
        .create_user("Alpha", Role::Participant, None)
        .await
        .unwrap();
    for name in ["ALPHA", "\u{FF21}lpha", "alpha", " aLpHa "] {
        taken(
            t.create_user(name, Role::Participant, None).await,
            "user name",
            name.trim(),
            "Alpha",
        );
    }
    let e = t
        .create_user("Alpha", Role::Participant, None)
        .await
        .unwrap_err();
    assert_eq!(e.to_string(), "user name \"Alpha\" already exists");
    // Names that only look somewhat alike are still distinct.
    let mut others = Vec::new();
    for name in ["Alpha2", "Alfa", "Ålpha", "Beta", "beta team"] {
        others.push(t.create_user(name, Role::Participant, None).await.unwrap());
    }
    taken(
        t.create_user("BETA", Role::Participant, None).await,
        "user name",
        "BETA",
        "Beta",
    );

    // Teams: within a challenge.
    t.create_team(&f.challenge, "Alpha", founder.id)
        .await
        .unwrap();
    for (name, u) in ["ALPHA", "\u{FF21}lpha", "alpha"].iter().zip(&others) {
        taken(
            t.create_team(&f.challenge, name, u.id).await,
            "team name",
            name,
            "Alpha",
        );
    }
    // The refused founder was not left in a half-made team: a distinct name works.
    let b = t
        .create_team(&f.challenge, "Alpha Two", others[0].id)
        .await
        .unwrap();
    assert_eq!(b.name, "Alpha Two");
    // Another challenge has its own names.
    let other = t
        .create_challenge(
            "other",
            "another challenge",
            Definition::Builtin("cinc2017".into()),
            f._data.path(),
        )
        .await
        .unwrap();
    let a2 = t.create_team(&other.id, "ALPHA", founder.id).await.unwrap();
    assert_eq!(a2.name, "ALPHA");
    taken(
        t.create_team(&other.id, "alpha", others[1].id).await,
        "team name",
        "alpha",
        "ALPHA",
    );
}

/// Migration 0008 on users and teams stored before it, some of whose names collide:
/// it does not fail, every name is kept as it was, the oldest of a colliding group
/// keeps the plain key (so a new look-alike is refused naming it), the later ones get
/// their id appended, and starting again changes nothing.
mod migration_0008 {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn sqlite() {
        keys_colliding_rows_stored_before_it(Backend::Sqlite).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn postgres() {
        keys_colliding_rows_stored_before_it(Backend::Postgres).await;
    }
}

async fn keys(t: &TestStore, table: &str) -> Vec<(String, String, Option<String>)> {
    let mut tx = t.store.db.read().await.unwrap();
    let rows = tx
        .fetch_all(
            &format!("SELECT id, name, name_key FROM {table} ORDER BY created_at, id"),
            crate::db::args![],
        )
        .await
        .unwrap();
    tx.commit().await.unwrap();
    rows.iter()
        .map(|r| {
            (
                r.get::<String>("id").unwrap(),
                r.get::<String>("name").unwrap(),
                r.get::<Option<String>>("name_key").unwrap(),
            )
        })
        .collect()
}

async fn keys_colliding_rows_stored_before_it(backend: Backend) {
    let t = TestStore::without_migration(backend, Some(8)).await;
    let f = fixture(&t, Quota::default(), Rule::Best).await;
    // Rows as the schema before 0008 stored them: `ALPHA` and a full-width `Ａlpha`
    // were accepted beside an older `Alpha`.
    let users = [
        (UserId::new(), "Alpha", 1),
        (UserId::new(), "ALPHA", 2),
        (UserId::new(), "\u{FF21}lpha", 3),
        (UserId::new(), "bob", 4),
    ];
    let teams = [
        (TeamId::new(), "Team X", 1),
        (TeamId::new(), "team x", 2),
        (TeamId::new(), "Solo", 3),
    ];
    let mut tx = t.store.db.write().await.unwrap();
    for (id, name, at) in &users {
        tx.execute(
            "INSERT INTO users (id, name, role, created_at) VALUES ($1, $2, 'participant', $3)",
            crate::db::args![*id, *name, *at as i64],
        )
        .await
        .unwrap();
    }
    for (id, name, at) in &teams {
        tx.execute(
            "INSERT INTO teams (id, challenge_id, name, created_at) VALUES ($1, $2, $3, $4)",
            crate::db::args![*id, &f.challenge, *name, *at as i64],
        )
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();

    crate::migrate(&t.store.db, None).await.unwrap();
    let u = keys(&t, "users").await;
    let want: Vec<(String, String, Option<String>)> = vec![
        (users[0].0.to_string(), "Alpha".into(), Some("alpha".into())),
        (
            users[1].0.to_string(),
            "ALPHA".into(),
            Some(format!("alpha#{}", users[1].0)),
        ),
        (
            users[2].0.to_string(),
            "\u{FF21}lpha".into(),
            Some(format!("alpha#{}", users[2].0)),
        ),
        (users[3].0.to_string(), "bob".into(), Some("bob".into())),
    ];
    assert_eq!(u, want);
    let tm = keys(&t, "teams").await;
    assert_eq!(
        tm.iter().map(|r| r.2.clone().unwrap()).collect::<Vec<_>>(),
        [
            "team x".to_owned(),
            format!("team x#{}", teams[1].0),
            "solo".to_owned()
        ]
    );
    // Starting again changes nothing.
    crate::migrate(&t.store.db, None).await.unwrap();
    assert_eq!(keys(&t, "users").await, want);
    assert_eq!(keys(&t, "teams").await, tm);

    // New names are compared with the oldest of each group.
    taken(
        t.create_user("alpha", Role::Participant, None).await,
        "user name",
        "alpha",
        "Alpha",
    );
    taken(
        t.create_user("BOB", Role::Participant, None).await,
        "user name",
        "BOB",
        "bob",
    );
    let carol = t
        .create_user("carol", Role::Participant, None)
        .await
        .unwrap();
    taken(
        t.create_team(&f.challenge, "TEAM X", carol.id).await,
        "team name",
        "TEAM X",
        "Team X",
    );
    t.create_team(&f.challenge, "Team Y", carol.id)
        .await
        .unwrap();
}
