//! Uploads with an `Idempotency-Key`: one submission and one charge per key and team,
//! however often and however concurrently it is sent.

use chrono::Duration;

use super::*;

both!(
    an_upload_key_makes_one_submission,
    racing_uploads_with_one_key_make_one_submission,
);

fn key(k: &str, request: u32) -> UploadKey {
    UploadKey::new(k, format!("{request:064x}")).unwrap()
}

async fn an_upload_key_makes_one_submission(t: &TestStore) {
    let quota = Quota {
        total: Some(3),
        ..Quota::default()
    };
    let f = fixture(t, quota, Rule::Best).await;
    let a = team(t, &f, "a").await;
    let b = team(t, &f, "b").await;

    let first = t
        .submit_keyed(&entry(&a, &f, 1), Some(&key("k-1", 1)))
        .await
        .unwrap();
    let Submitted::New(s1) = first else {
        panic!("the first upload is new: {first:?}")
    };
    // The retry (its 201 was lost) is the same submission, not charged again.
    t.clock.advance(Duration::minutes(5));
    let again = t
        .submit_keyed(&entry(&a, &f, 1), Some(&key("k-1", 1)))
        .await
        .unwrap();
    assert_eq!(again, Submitted::Replayed(s1.clone()));
    assert_eq!(t.quota(f.phase.id, a.id).await.unwrap().used_total, 1);
    assert_eq!(
        t.upload_key(a.id, "k-1").await.unwrap(),
        Some((format!("{:064x}", 1), s1.id))
    );

    // The same key with another request is refused, and records nothing.
    let e = t
        .submit_keyed(&entry(&a, &f, 2), Some(&key("k-1", 2)))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, Error::UploadKeyReused { key, submission } if key == "k-1" && *submission == s1.id),
        "{e:?}"
    );
    assert_eq!(t.quota(f.phase.id, a.id).await.unwrap().used_total, 1);

    // Another team's key is its own.
    let Submitted::New(sb) = t
        .submit_keyed(&entry(&b, &f, 1), Some(&key("k-1", 1)))
        .await
        .unwrap()
    else {
        panic!("another team's upload is new")
    };
    assert_ne!(sb.id, s1.id);

    // Spend the quota: a replay is still answered (the first upload was charged, not
    // this one); a new key is refused for the quota.
    for n in 2..=3 {
        t.submit_keyed(&entry(&a, &f, n), Some(&key(&format!("k-{n}"), n)))
            .await
            .unwrap();
    }
    assert_eq!(
        t.submit_keyed(&entry(&a, &f, 1), Some(&key("k-1", 1)))
            .await
            .unwrap(),
        Submitted::Replayed(s1.clone())
    );
    assert!(matches!(
        t.submit_keyed(&entry(&a, &f, 4), Some(&key("k-4", 4)))
            .await,
        Err(Error::QuotaSpent(_))
    ));

    // After 24 hours the key is forgotten: the same request is a new upload (here
    // refused for the quota, which proves it is not answered from the key).
    t.clock.advance(Duration::hours(24));
    assert_eq!(t.upload_key(a.id, "k-1").await.unwrap(), None);
    assert!(matches!(
        t.submit_keyed(&entry(&a, &f, 1), Some(&key("k-1", 1)))
            .await,
        Err(Error::QuotaSpent(_))
    ));

    // Keys are visible ASCII, 1 to 255 characters.
    for bad in ["", "with space", "é", &"x".repeat(256)] {
        assert!(UploadKey::new(bad, "0".repeat(64)).is_err(), "{bad:?}");
    }
}

async fn racing_uploads_with_one_key_make_one_submission(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let store = t.store.clone();
        let new = entry(&a, &f, 7);
        tasks.push(tokio::spawn(async move {
            store.submit_keyed(&new, Some(&key("race", 7))).await
        }));
    }
    let mut ids = Vec::new();
    let mut fresh = 0;
    for task in tasks {
        match task.await.unwrap().unwrap() {
            Submitted::New(s) => {
                fresh += 1;
                ids.push(s.id);
            }
            Submitted::Replayed(s) => ids.push(s.id),
        }
    }
    assert_eq!(fresh, 1);
    ids.dedup();
    assert_eq!(ids.len(), 1);
    assert_eq!(t.quota(f.phase.id, a.id).await.unwrap().used_total, 1);
}

both!(
    a_take_sent_again_gets_the_same_attempt,
    a_new_process_of_a_worker_ends_its_predecessors_attempts,
);

async fn a_take_sent_again_gets_the_same_attempt(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    let b = team(t, &f, "b").await;
    let s1 = t.submit(&entry(&a, &f, 1)).await.unwrap();
    t.clock.advance(Duration::seconds(1));
    let s2 = t.submit(&entry(&b, &f, 2)).await.unwrap();
    let w = f.worker.id;
    let j = t
        .take_job_once(w, LEASE, None, Some("t-1"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(j.attempt.submission, s1.id);
    // The answer was lost; the worker sends the same take 20 s later: the same attempt,
    // its lease renewed from now, and s2 is left for the next take.
    t.clock.advance(Duration::seconds(20));
    let again = t
        .take_job_once(w, LEASE, None, Some("t-1"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.attempt, j.attempt);
    assert_eq!(again.lease_expires_at, t.now() + Duration::seconds(60));
    assert_eq!(
        (again.entry_path.clone(), again.team),
        (j.entry_path.clone(), j.team)
    );
    assert_eq!(t.submission(s2.id).await.unwrap().state, State::Queued);
    assert_eq!(t.attempts(s1.id).await.unwrap().len(), 1);
    // Once the attempt has ended, the take id hands out nothing more.
    t.report(w, j.attempt, &failed()).await.unwrap();
    assert_eq!(
        t.take_job_once(w, LEASE, None, Some("t-1")).await.unwrap(),
        None
    );
    assert_eq!(t.submission(s2.id).await.unwrap().state, State::Queued);
    let k = t
        .take_job_once(w, LEASE, None, Some("t-2"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(k.attempt.submission, s2.id);
    // Another worker's take id is its own.
    let (other, _) = t.create_worker("w2").await.unwrap();
    assert_eq!(
        t.take_job_once(other.id, LEASE, None, Some("t-2"))
            .await
            .unwrap(),
        None
    );
    assert!(matches!(
        t.take_job_once(w, LEASE, None, Some("no spaces")).await,
        Err(Error::Invalid { .. })
    ));
}

async fn a_new_process_of_a_worker_ends_its_predecessors_attempts(t: &TestStore) {
    let f = fixture(t, Quota::default(), Rule::Best).await;
    let a = team(t, &f, "a").await;
    let b = team(t, &f, "b").await;
    let s1 = t.submit(&entry(&a, &f, 1)).await.unwrap();
    let s2 = t.submit(&entry(&b, &f, 2)).await.unwrap();
    let (other, _) = t.create_worker("w2").await.unwrap();
    let started = |instance: &str| Announcement {
        build: Build {
            judge_version: "judge 0.1.0".into(),
            runtime_lock: "sha256:00".into(),
        },
        slots: Some(1),
        host: None,
        instance: Some(instance.into()),
    };
    t.announce_worker(f.worker.id, &started("p-1"))
        .await
        .unwrap();
    let j = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    let k = t.take_job(other.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!((j.attempt.submission, k.attempt.submission), (s1.id, s2.id));
    // The same process announcing again (a reconnect) ends nothing.
    t.announce_worker(f.worker.id, &started("p-1"))
        .await
        .unwrap();
    assert_eq!(t.submission(s1.id).await.unwrap().state, State::Running);
    // The worker killed and started again: its new process ends the old one's attempt
    // at once (no 35 s lapse), requeued, not charged, not held against the worker; the
    // other worker's attempt goes on.
    t.announce_worker(f.worker.id, &started("p-2"))
        .await
        .unwrap();
    assert_eq!(t.submission(s1.id).await.unwrap().state, State::Queued);
    assert_eq!(t.submission(s2.id).await.unwrap().state, State::Running);
    let h = t.history(s1.id).await.unwrap();
    assert_eq!(
        h[2].reason,
        Reason::WorkerRestarted {
            worker: f.worker.id,
            attempt: 1
        }
    );
    let statuses = t.worker_statuses().await.unwrap();
    let me = statuses
        .iter()
        .find(|s| s.worker.id == f.worker.id)
        .unwrap();
    assert_eq!((me.error_streak, me.recent_errors), (0, 0));
    assert_eq!(t.quota(f.phase.id, a.id).await.unwrap().used_total, 1);
    // What the new process takes is its own: announcing again leaves it alone.
    let j2 = t.take_job(f.worker.id, LEASE, None).await.unwrap().unwrap();
    assert_eq!(j2.attempt.number, 2);
    t.announce_worker(f.worker.id, &started("p-2"))
        .await
        .unwrap();
    assert_eq!(t.submission(s1.id).await.unwrap().state, State::Running);
}
