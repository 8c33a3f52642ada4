//! Users, workers and API tokens.

use crate::db::{Row, args};
use crate::manifest::{hex, sha256_hex};
use crate::{
    Build, Error, Principal, Refusal, Role, Store, User, UserId, Worker, WorkerId, WorkerState,
    opt_time, time, us,
};

/// A token as issued: shown once, then only its hash is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewToken {
    /// The secret to give its holder (`pj_` and 64 hex digits: 32 random bytes).
    pub token: String,
    /// Its sha256 (lower-case hex), the key it is stored under.
    pub hash: String,
}

impl NewToken {
    fn generate() -> Result<NewToken, Error> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| Error::Random(e.to_string()))?;
        let token = format!("pj_{}", hex(&bytes));
        let hash = sha256_hex(token.as_bytes());
        Ok(NewToken { token, hash })
    }
}

const USER_COLUMNS: &str = "id, name, role, password_hash IS NOT NULL AS has_password, created_at";

pub(crate) fn user_from(r: &Row) -> Result<User, Error> {
    Ok(User {
        id: UserId::parse_stored(&r.get::<String>("id")?)?,
        name: r.get("name")?,
        role: Role::parse_stored(&r.get::<String>("role")?)?,
        has_password: r.get("has_password")?,
        created_at: time(r.get("created_at")?)?,
    })
}

pub(crate) const WORKER_COLUMNS: &str = "id, name, created_at, last_seen_at, state, \
    state_changed_at, state_changed_by, state_reason, judge_version, runtime_lock, slots, host, \
    announced_at, refused_at, refusal";

pub(crate) fn worker_from(r: &Row) -> Result<Worker, Error> {
    let build = match (
        r.get::<Option<String>>("judge_version")?,
        r.get::<Option<String>>("runtime_lock")?,
    ) {
        (Some(judge_version), Some(runtime_lock)) => Some(Build {
            judge_version,
            runtime_lock,
        }),
        _ => None,
    };
    let refusal = match (
        opt_time(r.get("refused_at")?)?,
        r.get::<Option<String>>("refusal")?,
    ) {
        (Some(at), Some(message)) => Some(Refusal { at, message }),
        _ => None,
    };
    Ok(Worker {
        id: WorkerId::parse_stored(&r.get::<String>("id")?)?,
        name: r.get("name")?,
        created_at: time(r.get("created_at")?)?,
        last_seen_at: opt_time(r.get("last_seen_at")?)?,
        state: WorkerState::parse_stored(&r.get::<String>("state")?)?,
        state_changed_at: opt_time(r.get("state_changed_at")?)?,
        state_changed_by: r
            .get::<Option<String>>("state_changed_by")?
            .map(|u| UserId::parse_stored(&u))
            .transpose()?,
        state_reason: r
            .get::<Option<String>>("state_reason")?
            .map(|j| {
                serde_json::from_str(&j)
                    .map_err(|e| Error::Corrupt(format!("worker state reason: {e}")))
            })
            .transpose()?,
        build,
        slots: r
            .get::<Option<i64>>("slots")?
            .map(crate::count)
            .transpose()?,
        host: r.get("host")?,
        announced_at: opt_time(r.get("announced_at")?)?,
        refusal,
    })
}

/// A user's or a team's name as stored: without leading and trailing white space, and
/// refused when it holds a control or a Unicode format character (general category Cc
/// or Cf: zero-width spaces and joiners, word joiners, the bidirectional overrides and
/// isolates). Such characters are invisible or reorder what is shown, so `Alpha` with a
/// zero-width space beside `Alpha`, or a right-to-left override, would let one team pass
/// for another (docs/service.md, "Names").
pub(crate) fn display_name(field: &'static str, s: &str) -> Result<String, Error> {
    use icu_properties::CodePointMapData;
    use icu_properties::props::GeneralCategory;
    let name = s.trim();
    nonempty(field, name)?;
    let gc = CodePointMapData::<GeneralCategory>::new();
    if let Some(c) = name.chars().find(|&c| {
        matches!(
            gc.get(c),
            GeneralCategory::Format | GeneralCategory::Control
        )
    }) {
        return Err(Error::Invalid {
            field,
            problem: format!(
                "holds the invisible or reordering character U+{:04X}",
                u32::from(c)
            ),
        });
    }
    Ok(name.to_owned())
}

/// The key two names are compared by: NFKC, case folding, NFKC again (the second pass
/// composes what folding decomposed, as Unicode's NFKC_Casefold does), so `ALPHA`,
/// `alpha` and a full-width `Ａlpha` all have `Alpha`'s key. Users' keys are unique
/// over all users, teams' within a challenge (docs/service.md, "Names").
pub fn name_key(name: &str) -> String {
    use icu_casemap::CaseMapper;
    use icu_normalizer::ComposingNormalizer;
    let nfkc = ComposingNormalizer::new_nfkc();
    let once = nfkc.normalize(name);
    let folded = CaseMapper::new().fold_string(&once);
    nfkc.normalize(&folded).into_owned()
}

/// A refused insert of a name (`what`: "user name" or "team name"): a unique violation
/// is [`Error::NameTaken`] naming the name stored under the same key, read by `lookup`
/// (one `$1`, the key) after the failed transaction is gone; any other error as it is.
pub(crate) async fn name_taken(
    db: &crate::db::Db,
    e: Error,
    what: &'static str,
    name: &str,
    key: &str,
    lookup: &str,
    scope: Option<&str>,
) -> Error {
    if !e.is_unique_violation() {
        return e;
    }
    let found = async {
        let mut tx = db.read().await?;
        let r = crate::db::attempt(async {
            let args = match scope {
                Some(s) => args![key, s],
                None => args![key],
            };
            match tx.fetch_optional(lookup, args).await? {
                Some(r) => Ok(Some(r.get::<String>("name")?)),
                None => Ok(None),
            }
        })
        .await;
        tx.finish(r).await
    }
    .await;
    match found {
        Ok(Some(existing)) => Error::NameTaken {
            what,
            name: name.to_owned(),
            existing,
        },
        // Gone again, or unreadable: still taken when the insert was refused.
        _ => Error::Exists {
            what,
            value: name.to_owned(),
        },
    }
}

pub(crate) fn nonempty(field: &'static str, s: &str) -> Result<(), Error> {
    if s.trim().is_empty() {
        return Err(Error::Invalid {
            field,
            problem: "empty".to_owned(),
        });
    }
    Ok(())
}

/// The bound on password hashing: argon2 with this crate's parameters holds 19 MiB
/// while it runs, and each sign-in or sign-up runs one, so without a bound an
/// anonymous burst of them holds as much memory as it has requests. With it, at most
/// `permits` hashes run at once; the others queue in arrival order for at most `wait`,
/// then give up with [`Error::Busy`] (the server answers 503 with `Retry-After`).
///
/// The hashes run on `permits` threads of their own, not tokio's blocking pool, and
/// each thread keeps its argon2 memory ([`crate::password::Memory`]) from one hash to
/// the next instead of allocating and freeing 19 MiB each time: glibc kept freed
/// blocks in the heaps of the threads that used them (seen: ~290 MB after 64 sign-ins
/// on the blocking pool, ~190 MB on two threads of their own), while blocks allocated
/// once per thread bound hashing memory to `permits` × 19 MiB.
pub(crate) struct Hashing {
    permits: tokio::sync::Semaphore,
    wait: std::time::Duration,
    jobs: std::sync::Mutex<std::sync::mpsc::Sender<Job>>,
}

type Job = Box<dyn FnOnce(&mut crate::password::Memory) + Send>;

impl std::fmt::Debug for Hashing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hashing").field("wait", &self.wait).finish()
    }
}

impl Hashing {
    pub(crate) const DEFAULT_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

    pub(crate) fn new(permits: usize, wait: std::time::Duration) -> Hashing {
        let permits = permits.max(1);
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        let rx = std::sync::Arc::new(std::sync::Mutex::new(rx));
        for _ in 0..permits {
            let rx = rx.clone();
            // A thread that cannot start leaves the others (or, with none, every hash
            // ends as an error below): never a panic here.
            let _ = std::thread::Builder::new()
                .name("password-hash".into())
                .spawn(move || {
                    let mut memory = crate::password::Memory::default();
                    loop {
                        let job = match rx.lock() {
                            Ok(r) => r.recv(),
                            Err(_) => return,
                        };
                        // The store (the sender) is gone: so is the thread.
                        let Ok(job) = job else { return };
                        job(&mut memory);
                    }
                });
        }
        Hashing {
            permits: tokio::sync::Semaphore::new(permits),
            wait,
            jobs: std::sync::Mutex::new(tx),
        }
    }

    /// One hash at a time per CPU: more would only share the same cores.
    pub(crate) fn default_permits() -> usize {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    }

    /// Runs `f` (a hash or a check) on a hashing thread once a permit is free.
    async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut crate::password::Memory) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        let busy = || Error::Busy {
            retry_after: self.wait.as_secs().max(1),
        };
        let permit = match tokio::time::timeout(self.wait, self.permits.acquire()).await {
            Ok(Ok(p)) => p,
            // Closed never happens (nobody closes it); a timeout is the queue too long.
            Ok(Err(_)) | Err(_) => return Err(busy()),
        };
        let (tx, rx) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |memory| {
            let _ = tx.send(f(memory));
        });
        let sent = self
            .jobs
            .lock()
            .map_err(|_| Error::Password("the hashing threads are gone".into()))?
            .send(job);
        if sent.is_err() {
            return Err(Error::Password("the hashing threads are gone".into()));
        }
        let r = rx
            .await
            .map_err(|_| Error::Password("a hashing thread ended".into()))?;
        drop(permit);
        r
    }
}

impl Store {
    async fn hash_password(&self, password: String) -> Result<String, Error> {
        self.hashing
            .run(move |memory| crate::password::hash(memory, password.as_bytes()))
            .await
    }
}

impl Store {
    /// A new user; with a password, its argon2id hash is stored (never the password).
    pub async fn create_user(
        &self,
        name: &str,
        role: Role,
        password: Option<&str>,
    ) -> Result<User, Error> {
        let name = &display_name("user name", name)?;
        let key = name_key(name);
        let hash = match password {
            Some(p) => Some(self.hash_password(p.to_owned()).await?),
            None => None,
        };
        let id = UserId::new();
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let r = tx
                .fetch_one(
                    &format!(
                        "INSERT INTO users (id, name, name_key, role, password_hash, \
                         created_at) VALUES ($1, $2, $3, $4, $5, $6) RETURNING {USER_COLUMNS}"
                    ),
                    args![id, name, &key, role, hash, us(self.now())],
                )
                .await?;
            let user = user_from(&r)?;
            Ok(user)
        })
        .await;
        match tx.finish(r).await {
            Err(e) => Err(name_taken(
                &self.db,
                e,
                "user name",
                name,
                &key,
                "SELECT name FROM users WHERE name_key = $1",
                None,
            )
            .await),
            ok => ok,
        }
    }

    /// Sets (or, with `None`, removes) a user's password.
    pub async fn set_password(&self, user: UserId, password: Option<&str>) -> Result<(), Error> {
        let hash = match password {
            Some(p) => Some(self.hash_password(p.to_owned()).await?),
            None => None,
        };
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let n = tx
                .execute(
                    "UPDATE users SET password_hash = $2 WHERE id = $1",
                    args![user, hash],
                )
                .await?;
            if n == 0 {
                return Err(not_found("user", user));
            }
            Ok(())
        })
        .await;
        tx.finish(r).await
    }

    pub async fn user(&self, id: UserId) -> Result<User, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let r = tx
                .fetch_optional(
                    &format!("SELECT {USER_COLUMNS} FROM users WHERE id = $1"),
                    args![id],
                )
                .await?
                .ok_or_else(|| not_found("user", id))?;
            user_from(&r)
        })
        .await;
        tx.finish(r).await
    }

    pub async fn user_by_name(&self, name: &str) -> Result<User, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let r = tx
                .fetch_optional(
                    &format!("SELECT {USER_COLUMNS} FROM users WHERE name = $1"),
                    args![name],
                )
                .await?
                .ok_or_else(|| not_found("user", name))?;
            user_from(&r)
        })
        .await;
        tx.finish(r).await
    }

    /// The user with this name and password; [`Error::BadCredentials`] for a wrong
    /// name, a wrong password or a user without one alike.
    pub async fn check_password(&self, name: &str, password: &str) -> Result<User, Error> {
        let mut tx = self.db.read().await?;
        let row = tx
            .fetch_optional(
                &format!("SELECT {USER_COLUMNS}, password_hash FROM users WHERE name = $1"),
                args![name],
            )
            .await?;
        tx.commit().await?;
        let Some(row) = row else {
            return Err(Error::BadCredentials);
        };
        let Some(stored) = row.get::<Option<String>>("password_hash")? else {
            return Err(Error::BadCredentials);
        };
        let password = password.to_owned();
        let ok = self
            .hashing
            .run(move |memory| crate::password::verify(memory, password.as_bytes(), &stored))
            .await?;
        if ok {
            user_from(&row)
        } else {
            Err(Error::BadCredentials)
        }
    }

    /// A new API token for a user, with a label of the caller's choosing.
    pub async fn issue_token(&self, user: UserId, label: &str) -> Result<NewToken, Error> {
        let t = NewToken::generate()?;
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            tx.execute(
                "INSERT INTO api_tokens (hash, kind, user_id, label, created_at) \
                 VALUES ($1, 'user', $2, $3, $4)",
                args![&t.hash, user, label, us(self.now())],
            )
            .await
            .map_err(|e| missing(e, "user", user))?;
            Ok(t)
        })
        .await;
        tx.finish(r).await
    }

    /// A new worker and its token (good only for the queue's functions).
    pub async fn create_worker(&self, name: &str) -> Result<(Worker, NewToken), Error> {
        nonempty("worker name", name)?;
        let t = NewToken::generate()?;
        let id = WorkerId::new();
        let now = us(self.now());
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let r = tx
                .fetch_one(
                    &format!(
                        "INSERT INTO workers (id, name, created_at) VALUES ($1, $2, $3) \
                         RETURNING {WORKER_COLUMNS}"
                    ),
                    args![id, name, now],
                )
                .await
                .map_err(|e| exists(e, "worker", name))?;
            let worker = worker_from(&r)?;
            tx.execute(
                "INSERT INTO api_tokens (hash, kind, worker_id, label, created_at) \
                 VALUES ($1, 'worker', $2, $3, $4)",
                args![&t.hash, id, name, now],
            )
            .await?;
            Ok((worker, t))
        })
        .await;
        tx.finish(r).await
    }

    pub async fn worker(&self, id: WorkerId) -> Result<Worker, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let r = tx
                .fetch_optional(
                    &format!("SELECT {WORKER_COLUMNS} FROM workers WHERE id = $1"),
                    args![id],
                )
                .await?
                .ok_or_else(|| not_found("worker", id))?;
            worker_from(&r)
        })
        .await;
        tx.finish(r).await
    }

    /// Every worker, by name.
    pub async fn workers(&self) -> Result<Vec<Worker>, Error> {
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            tx.fetch_all(
                &format!("SELECT {WORKER_COLUMNS} FROM workers ORDER BY name"),
                args![],
            )
            .await?
            .iter()
            .map(worker_from)
            .collect()
        })
        .await;
        tx.finish(r).await
    }

    /// Who a token speaks for: looked up by its sha256; [`Error::BadToken`] if unknown
    /// or revoked.
    pub async fn authenticate(&self, token: &str) -> Result<Principal, Error> {
        let hash = sha256_hex(token.as_bytes());
        let mut tx = self.db.read().await?;
        let r = crate::db::attempt(async {
            let Some(r) = tx
                .fetch_optional(
                    "SELECT kind, user_id, worker_id FROM api_tokens \
                     WHERE hash = $1 AND revoked_at IS NULL",
                    args![&hash],
                )
                .await?
            else {
                return Err(Error::BadToken);
            };
            let kind: String = r.get("kind")?;
            let principal = match kind.as_str() {
                "user" => {
                    let id: Option<String> = r.get("user_id")?;
                    let id = UserId::parse_stored(id.as_deref().unwrap_or(""))?;
                    let u = tx
                        .fetch_one(
                            &format!("SELECT {USER_COLUMNS} FROM users WHERE id = $1"),
                            args![id],
                        )
                        .await?;
                    Principal::User(user_from(&u)?)
                }
                "worker" => {
                    let id: Option<String> = r.get("worker_id")?;
                    let id = WorkerId::parse_stored(id.as_deref().unwrap_or(""))?;
                    let w = tx
                        .fetch_one(
                            &format!("SELECT {WORKER_COLUMNS} FROM workers WHERE id = $1"),
                            args![id],
                        )
                        .await?;
                    Principal::Worker(Box::new(worker_from(&w)?))
                }
                other => return Err(Error::Corrupt(format!("token kind {other:?}"))),
            };
            Ok(principal)
        })
        .await;
        tx.finish(r).await
    }

    /// Revokes a token (it stays recorded). Unknown tokens are [`Error::BadToken`].
    pub async fn revoke_token(&self, token: &str) -> Result<(), Error> {
        let hash = sha256_hex(token.as_bytes());
        let mut tx = self.db.write().await?;
        let r = crate::db::attempt(async {
            let n = tx
                .execute(
                    "UPDATE api_tokens SET revoked_at = $2 WHERE hash = $1 AND revoked_at IS NULL",
                    args![&hash, us(self.now())],
                )
                .await?;
            if n == 0 {
                return Err(Error::BadToken);
            }
            Ok(())
        })
        .await;
        tx.finish(r).await
    }
}

pub(crate) fn not_found(what: &'static str, id: impl std::fmt::Display) -> Error {
    Error::NotFound {
        what,
        id: id.to_string(),
    }
}

/// A unique violation as [`Error::Exists`].
pub(crate) fn exists(e: Error, what: &'static str, value: &str) -> Error {
    if e.is_unique_violation() {
        Error::Exists {
            what,
            value: value.to_owned(),
        }
    } else {
        e
    }
}

/// A foreign-key violation as [`Error::NotFound`].
pub(crate) fn missing(e: Error, what: &'static str, id: impl std::fmt::Display) -> Error {
    if e.db().is_some_and(|d| d.is_foreign_key_violation()) {
        not_found(what, id)
    } else {
        e
    }
}
