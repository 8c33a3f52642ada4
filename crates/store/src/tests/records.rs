//! Users, tokens, challenges and their data manifest, teams, quotas.

use chrono::Duration;

use super::*;

both!(
    users_and_tokens,
    manifest_pins_the_data,
    one_team_per_challenge_and_consent,
    quota_limits_and_figures,
    quota_holds_under_concurrent_submissions,
    phase_times_are_enforced,
    a_refused_write_releases_its_locks,
);

async fn users_and_tokens(t: &TestStore) {
    let alice = t
        .create_user("alice", Role::Organiser, Some("correct horse"))
        .await
        .unwrap();
    assert!(alice.has_password);
    assert!(matches!(
        t.create_user("alice", Role::Participant, None).await,
        Err(Error::NameTaken {
            what: "user name",
            ..
        })
    ));
    assert!(matches!(
        t.create_user(" ", Role::Participant, None).await,
        Err(Error::Invalid { .. })
    ));
    assert_eq!(
        t.check_password("alice", "correct horse").await.unwrap(),
        alice
    );
    for (name, pw) in [("alice", "wrong"), ("nobody", "correct horse")] {
        assert!(matches!(
            t.check_password(name, pw).await,
            Err(Error::BadCredentials)
        ));
    }
    let bob = t.create_user("bob", Role::Participant, None).await.unwrap();
    assert!(matches!(
        t.check_password("bob", "").await,
        Err(Error::BadCredentials)
    ));

    let tok = t.issue_token(alice.id, "laptop").await.unwrap();
    assert!(tok.token.starts_with("pj_") && tok.token.len() == 3 + 64);
    assert_eq!(tok.hash, crate::manifest::sha256_hex(tok.token.as_bytes()));
    assert_eq!(
        t.authenticate(&tok.token).await.unwrap(),
        Principal::User(alice.clone())
    );
    let (w, wtok) = t.create_worker("gpu-1").await.unwrap();
    assert_eq!(
        t.authenticate(&wtok.token).await.unwrap(),
        Principal::Worker(Box::new(w))
    );
    // Only the hash is stored.
    let mut tx = t.store.db.read().await.unwrap();
    let stored = tx
        .fetch_all("SELECT hash FROM api_tokens", crate::db::args![])
        .await
        .unwrap();
    for r in &stored {
        let h: String = r.get("hash").unwrap();
        assert_ne!(h, tok.token);
        assert_ne!(h, wtok.token);
    }
    drop(tx);
    t.revoke_token(&tok.token).await.unwrap();
    assert!(matches!(
        t.authenticate(&tok.token).await,
        Err(Error::BadToken)
    ));
    assert!(matches!(
        t.authenticate("pj_nope").await,
        Err(Error::BadToken)
    ));
    assert!(matches!(
        t.revoke_token(&tok.token).await,
        Err(Error::BadToken)
    ));
    assert!(matches!(
        t.issue_token(UserId::new(), "x").await,
        Err(Error::NotFound { what: "user", .. })
    ));
    assert_eq!(t.user_by_name("bob").await.unwrap(), bob);
}

async fn manifest_pins_the_data(t: &TestStore) {
    let data = tempfile::tempdir().unwrap();
    write(data.path(), "training/a.hea", "a\n");
    write(data.path(), "training/b.hea", "b\n");
    let m = Manifest::compute(data.path()).unwrap();
    assert_eq!(
        m.files.keys().collect::<Vec<_>>(),
        ["training/a.hea", "training/b.hea"]
    );
    // sha256sum's text, hashed.
    let text = format!(
        "{}  training/a.hea\n{}  training/b.hea\n",
        crate::manifest::sha256_hex(b"a\n"),
        crate::manifest::sha256_hex(b"b\n")
    );
    assert_eq!(m.sha256(), crate::manifest::sha256_hex(text.as_bytes()));

    let c = t
        .create_challenge(
            "cpsc2021",
            "PAF",
            Definition::Toml("id = \"cpsc2021\"\n".into()),
            data.path(),
        )
        .await
        .unwrap();
    assert_eq!(c.manifest, m);
    assert_eq!(t.challenge("cpsc2021").await.unwrap(), c);
    assert!(matches!(
        t.create_challenge(
            "cpsc2021",
            "again",
            Definition::Builtin("x".into()),
            data.path()
        )
        .await,
        Err(Error::Exists { .. })
    ));
    t.check_challenge_data("cpsc2021", None).await.unwrap();

    write(data.path(), "training/a.hea", "A\n");
    write(data.path(), "extra.txt", "x");
    std::fs::remove_file(data.path().join("training/b.hea")).unwrap();
    match t.check_challenge_data("cpsc2021", None).await {
        Err(Error::DataChanged { differences, .. }) => assert_eq!(
            differences,
            [
                "training/a.hea changed",
                "training/b.hea is missing",
                "extra.txt is new"
            ]
        ),
        other => panic!("{other:?}"),
    }
    // A worker's copy under its data root.
    let root = tempfile::tempdir().unwrap();
    assert!(matches!(
        t.check_challenge_data("cpsc2021", Some(root.path())).await,
        Err(Error::Io { .. })
    ));
}

async fn one_team_per_challenge_and_consent(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = t.create_user("a", Role::Participant, None).await.unwrap();
    let b = t.create_user("b", Role::Participant, None).await.unwrap();
    let c = t.create_user("c", Role::Participant, None).await.unwrap();
    let ta = t.create_team(&f.challenge, "ta", a.id).await.unwrap();
    assert!(matches!(
        t.create_team(&f.challenge, "ta", b.id).await,
        Err(Error::NameTaken { .. })
    ));
    // a is in ta already: a second team of the same challenge is refused, and the
    // half-made team is not left behind.
    assert!(matches!(
        t.create_team(&f.challenge, "ta2", a.id).await,
        Err(Error::AlreadyInTeam { .. })
    ));
    let tb = t.create_team(&f.challenge, "tb", b.id).await.unwrap();

    // Joining needs the invitee's consent.
    assert!(matches!(
        t.invite(ta.id, c.id, b.id).await,
        Err(Error::NotMember { .. })
    ));
    let inv = t.invite(ta.id, c.id, a.id).await.unwrap();
    assert_eq!(t.members(ta.id).await.unwrap(), std::slice::from_ref(&a));
    assert_eq!(
        t.invitations(c.id).await.unwrap(),
        std::slice::from_ref(&inv)
    );
    assert_eq!(t.pending_invitation_count(c.id).await.unwrap(), 1);
    assert!(matches!(
        t.accept_invitation(inv.id, b.id).await,
        Err(Error::InvitationNotPending(_))
    ));
    assert_eq!(t.accept_invitation(inv.id, c.id).await.unwrap(), ta);
    assert_eq!(t.members(ta.id).await.unwrap(), [a.clone(), c.clone()]);
    assert_eq!(
        t.team_of(c.id, &f.challenge).await.unwrap(),
        Some(ta.clone())
    );
    assert!(matches!(
        t.accept_invitation(inv.id, c.id).await,
        Err(Error::InvitationNotPending(_))
    ));

    // c is in ta now: accepting tb's invitation is refused and leaves it pending.
    let inv2 = t.invite(tb.id, c.id, b.id).await.unwrap();
    assert!(matches!(
        t.accept_invitation(inv2.id, c.id).await,
        Err(Error::AlreadyInTeam { .. })
    ));
    assert_eq!(
        t.invitations(c.id).await.unwrap(),
        std::slice::from_ref(&inv2)
    );
    t.decline_invitation(inv2.id, c.id).await.unwrap();
    assert!(t.invitations(c.id).await.unwrap().is_empty());
    assert_eq!(t.pending_invitation_count(c.id).await.unwrap(), 0);
    assert_eq!(t.members(tb.id).await.unwrap(), [b]);
}

async fn quota_limits_and_figures(t: &TestStore) {
    let quota = Quota {
        total: Some(4),
        per_day: Some(2),
        max_concurrent: Some(2),
    };
    let f = fixture(t, quota, Rule::Best).await;
    let team = team(t, &f, "t").await;
    let q = t.quota(f.phase.id, team.id).await.unwrap();
    assert_eq!(
        (q.total_left, q.today_left, q.running, q.next_slot_at),
        (Some(4), Some(2), 0, Some(t.now()))
    );

    let s1 = t.submit(&entry(&team, &f, 1)).await.unwrap();
    assert_eq!(s1.state, State::Queued);
    assert_eq!(s1.received_at, t.now());
    let s2 = t.submit(&entry(&team, &f, 2)).await.unwrap();
    // Two today and two queued: both the day and concurrency are spent.
    let q = t.quota(f.phase.id, team.id).await.unwrap();
    assert_eq!(q.spent, [QuotaLimit::PerDay, QuotaLimit::MaxConcurrent]);
    let midnight = "2026-03-03T00:00:00Z"
        .parse::<chrono::DateTime<chrono::Utc>>()
        .unwrap();
    assert_eq!(q.next_slot_at, Some(midnight));
    match t.submit(&entry(&team, &f, 3)).await {
        Err(Error::QuotaSpent(status)) => assert_eq!(*status, q),
        other => panic!("{other:?}"),
    }

    // Withdrawn and error never count.
    t.withdraw(s1.id, None).await.unwrap();
    let job = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(job.attempt.submission, s2.id);
    t.store
        .clone()
        .with_policy(Policy {
            max_attempts: 1,
            team_running_cap: 1,
            ..Policy::default()
        })
        .report(f.worker.id, job.attempt, &judge_error())
        .await
        .unwrap();
    assert_eq!(t.submission(s2.id).await.unwrap().state, State::Error);
    let q = t.quota(f.phase.id, team.id).await.unwrap();
    assert_eq!((q.used_total, q.used_today, q.running), (0, 0, 0));
    assert!(q.spent.is_empty());

    // The next UTC day: a new daily allowance; the total still binds.
    let s3 = t.submit(&entry(&team, &f, 3)).await.unwrap();
    let j3 = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    t.report(f.worker.id, j3.attempt, &failed()).await.unwrap();
    assert_eq!(t.submission(s3.id).await.unwrap().state, State::Failed);
    t.submit(&entry(&team, &f, 4)).await.unwrap();
    let q = t.quota(f.phase.id, team.id).await.unwrap();
    assert_eq!((q.used_total, q.today_left, q.running), (2, Some(0), 1));
    assert_eq!(q.spent, [QuotaLimit::PerDay]);
    t.clock.set(midnight);
    let q = t.quota(f.phase.id, team.id).await.unwrap();
    assert_eq!((q.today_left, q.next_slot_at), (Some(2), Some(midnight)));
    t.submit(&entry(&team, &f, 5)).await.unwrap();
    t.submit(&entry(&team, &f, 6)).await.unwrap_err();
    t.clock.advance(Duration::days(1));
    // Concurrency: 4 and 5 are queued.
    match t.submit(&entry(&team, &f, 7)).await {
        Err(Error::QuotaSpent(s)) => {
            assert_eq!(s.spent, [QuotaLimit::MaxConcurrent]);
            assert_eq!(s.next_slot_at, None);
        }
        other => panic!("{other:?}"),
    }
    for _ in 0..2 {
        let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
        t.report(f.worker.id, j.attempt, &failed()).await.unwrap();
    }
    t.submit(&entry(&team, &f, 8)).await.unwrap();
    let q = t.quota(f.phase.id, team.id).await.unwrap();
    assert_eq!((q.used_total, q.total_left), (4, Some(0)));
    assert_eq!(
        (q.spent.clone(), q.next_slot_at),
        (vec![QuotaLimit::Total], None)
    );
    let msg = t
        .submit(&entry(&team, &f, 9))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("4 of 4 submissions in the phase used"),
        "{msg}"
    );
}

async fn quota_holds_under_concurrent_submissions(t: &TestStore) {
    let quota = Quota {
        total: Some(5),
        per_day: None,
        max_concurrent: None,
    };
    let f = fixture(t, quota, Rule::Best).await;
    let team = team(t, &f, "racers").await;
    let other = self::team(t, &f, "others").await;
    let mut tasks = Vec::new();
    for n in 0..16 {
        let store = t.store.clone();
        let e = entry(if n % 4 == 3 { &other } else { &team }, &f, n);
        tasks.push(tokio::spawn(async move { store.submit(&e).await }));
    }
    let (mut ok, mut spent) = (0, 0);
    for task in tasks {
        match task.await.unwrap() {
            Ok(s) if s.team == team.id => ok += 1,
            Ok(_) => {}
            Err(Error::QuotaSpent(s)) => {
                assert_eq!(s.used_total, 5);
                spent += 1;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!((ok, spent), (5, 7));
    assert_eq!(t.submissions(team.id, f.phase.id).await.unwrap().len(), 5);
    assert_eq!(t.submissions(other.id, f.phase.id).await.unwrap().len(), 4);
}

async fn phase_times_are_enforced(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let team = team(t, &f, "late").await;
    t.clock.set(f.phase.closes);
    assert!(matches!(
        t.submit(&entry(&team, &f, 1)).await,
        Err(Error::PhaseClosed { .. })
    ));
    t.clock.set(f.phase.opens - Duration::seconds(1));
    assert!(matches!(
        t.submit(&entry(&team, &f, 1)).await,
        Err(Error::PhaseClosed { .. })
    ));
    assert_eq!(t.open_phase(&f.challenge, t.now()).await.unwrap(), None);
    t.clock.set(f.phase.opens);
    assert_eq!(
        t.open_phase(&f.challenge, t.now()).await.unwrap(),
        Some(f.phase.clone())
    );
    t.submit(&entry(&team, &f, 1)).await.unwrap();
    let mut bad = entry(&team, &f, 2);
    bad.entry_sha256 = "XYZ".into();
    assert!(matches!(t.submit(&bad).await, Err(Error::Invalid { .. })));
    assert!(matches!(
        t.create_phase(
            &f.challenge,
            &NewPhase {
                name: "backwards".into(),
                closes: f.phase.opens,
                ..new_phase_like(&f.phase)
            }
        )
        .await,
        Err(Error::Invalid { .. })
    ));
}

pub(crate) fn new_phase_like(p: &Phase) -> NewPhase {
    NewPhase {
        name: p.name.clone(),
        opens: p.opens,
        closes: p.closes,
        selection_closes: p.selection_closes,
        quota: p.quota,
        scored_split: p.scored_split,
        show_exam: p.show_exam,
        rule: p.rule,
    }
}

#[tokio::test]
async fn sqlite_online_backup() {
    let t = TestStore::sqlite().await;
    let f = fixture(&t, Quota::default(), Rule::Best).await;
    let team = team(&t, &f, "t").await;
    t.submit(&entry(&team, &f, 1)).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let copy = out.path().join("backup.sqlite3");
    t.backup(&copy).await.unwrap();
    let restored = Store::open_sqlite(&copy).await.unwrap();
    assert_eq!(
        restored.challenges().await.unwrap(),
        t.challenges().await.unwrap()
    );
    assert_eq!(
        restored.submissions(team.id, f.phase.id).await.unwrap(),
        t.submissions(team.id, f.phase.id).await.unwrap()
    );
    let pg = TestStore::postgres().await;
    assert!(matches!(pg.backup(&copy).await, Err(Error::Invalid { .. })));
}

#[tokio::test]
async fn urls() {
    assert!(matches!(
        Store::connect("mysql://x").await,
        Err(Error::BadUrl(_))
    ));
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite:{}", dir.path().join("x.db").display());
    let s = Store::connect(&url).await.unwrap();
    assert_eq!(s.backend(), Backend::Sqlite);
    // WAL, foreign keys on, on every connection of the pool.
    for _ in 0..3 {
        let mut tx = s.db.read().await.unwrap();
        let mode: String = tx
            .fetch_one("PRAGMA journal_mode", crate::db::args![])
            .await
            .unwrap()
            .get("journal_mode")
            .unwrap();
        let fk: i64 = tx
            .fetch_one("PRAGMA foreign_keys", crate::db::args![])
            .await
            .unwrap()
            .get("foreign_keys")
            .unwrap();
        assert_eq!((mode.as_str(), fk), ("wal", 1));
    }
    // Migrating twice is a no-op.
    drop(s);
    Store::connect(&url).await.unwrap();
}

async fn a_refused_write_releases_its_locks(t: &TestStore) {
    use sqlx::{Connection, Executor};
    let quota = Quota {
        total: Some(1),
        ..Quota::default()
    };
    let f = fixture(t, quota, Rule::Best).await;
    let team = team(t, &f, "t").await;
    t.submit(&entry(&team, &f, 1)).await.unwrap();
    // A connection of our own, opened beforehand, to look at the locks with.
    enum Probe {
        Pg(sqlx::PgConnection),
        Sqlite(sqlx::SqliteConnection),
    }
    let mut probe = match &t.store.db {
        crate::db::Db::Postgres(pool) => Probe::Pg(
            sqlx::PgConnection::connect_with(&pool.connect_options())
                .await
                .unwrap(),
        ),
        crate::db::Db::Sqlite(pool) => {
            let opts = (*pool.connect_options())
                .clone()
                .busy_timeout(std::time::Duration::ZERO);
            Probe::Sqlite(sqlx::SqliteConnection::connect_with(&opts).await.unwrap())
        }
    };
    for n in 0..20 {
        // Refused while it held the team's lock (the write lock on SQLite): the lock
        // must be free the moment the refusal is returned, not when the pool next
        // tests the connection.
        assert!(matches!(
            t.submit(&entry(&team, &f, n + 2)).await,
            Err(Error::QuotaSpent(_))
        ));
        match &mut probe {
            Probe::Pg(c) => {
                let mut tx = c.begin().await.unwrap();
                sqlx::query("SELECT id FROM teams WHERE id = $1 FOR UPDATE NOWAIT")
                    .bind(team.id.to_string())
                    .execute(&mut *tx)
                    .await
                    .unwrap_or_else(|e| panic!("round {n}: the team is still locked: {e}"));
                tx.rollback().await.unwrap();
            }
            Probe::Sqlite(c) => {
                c.execute("BEGIN IMMEDIATE")
                    .await
                    .unwrap_or_else(|e| panic!("round {n}: the database is still locked: {e}"));
                c.execute("ROLLBACK").await.unwrap();
            }
        }
    }
}
