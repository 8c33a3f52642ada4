//! The platform's system of record: users and their API tokens, workers, challenges
//! (definition and data manifest), phases with their quotas, teams and invitations,
//! submissions with their attempts and state history, results with their ranking
//! numbers — and the rules the database itself enforces on them (docs/service.md, "Data
//! model"):
//!
//! - **the submission state machine**: `queued → running → scored | failed | error`,
//!   `queued → withdrawn`, `error → queued`. The allowed changes are rows of the table
//!   `state_transitions`; a trigger refuses any other change of `submissions.state`,
//!   whoever issues it, and each change writes a `state_history` row (whose foreign key
//!   names an allowed transition) in the same transaction. The functions here change a
//!   state by compare-and-set (`… WHERE state = $from`) and turn a refusal into
//!   [`Error::Transition`];
//! - **quotas** per phase and team (`total`, `per_day` in UTC days, `max_concurrent`),
//!   checked and spent in one transaction that holds the team's lock
//!   ([`Store::submit`], [`Store::quota`]);
//! - **the queue**: FIFO by `received_at`, fair across teams, leases extended by
//!   heartbeats, a reconciler for lapsed ones, and a result accepted once per attempt
//!   ([`Store::take_job`], [`Store::heartbeat`], [`Store::report`], [`Store::reconcile`]);
//! - **leaderboards**, derived by one query whenever asked for, never stored
//!   ([`Store::leaderboard`]), combining only results made under the challenge's current
//!   definition, data manifest and scorer version;
//! - **publishing** a phase's final leaderboard as a fixed, versioned snapshot, refused
//!   while anything is unfinished ([`Store::publish`]), and **rescoring** as a record
//!   applied or cancelled as a whole ([`Store::create_rescore`],
//!   [`Store::apply_rescore`]).
//!
//! Not here: HTTP and sessions (`server`), judging (`judge`, run by `worker`), moving
//! jobs between machines (`dispatch`: this crate is the record a dispatcher reads and
//! writes, not its transport), and where entries and result folders are kept on disk
//! (paths are recorded, files are the caller's).
//!
//! # Two backends, one API
//!
//! SQLite, embedded (a file in the state folder, WAL mode, foreign keys on), is the
//! default; PostgreSQL (`postgres://…`) is for a fleet. Both run the same migrations
//! (`migrations/common`), except for the triggers, which the two dialects cannot share
//! (`migrations/sqlite`, `migrations/postgres`: one small file each, the same rules).
//!
//! The backends are an enum over the two pools (`Db`), not `sqlx::Any`: the queue and
//! the quota need what `Any` cannot express — SQLite's `BEGIN IMMEDIATE` (take the one
//! write lock before reading what the write depends on) and PostgreSQL's
//! `FOR UPDATE … SKIP LOCKED` with row locks — and the enum keeps each driver's native
//! types and error codes. The queries are still written once: SQL text with `$n`
//! placeholders (both drivers bind them) runs through one small transaction type
//! (`db::Tx`), and only the locking clauses differ. Queries are checked at run time
//! (`sqlx::query`, not `query!`), so building needs no database.
//!
//! Times are microseconds since the Unix epoch (UTC) in `BIGINT` columns, read back as
//! `chrono::DateTime<Utc>`; the store's clock ([`Store::with_clock`]) is the one time
//! source of every rule, so tests can move it.

mod about;
mod challenges;
mod db;
mod error;
mod leaderboard;
pub mod manifest;
mod model;
mod password;
mod placing;
mod publish;
mod queue;
mod rescore;
mod submissions;
mod team_rules;
mod teams;
mod users;
mod web;
mod workers;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

#[cfg(test)]
mod tests;

use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::migrate::{Migration, MigrationSource, MigrationType, Migrator};
use sqlx::postgres::PgPoolOptions;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions};

pub use about::{About, ChallengeAnnouncement, MAX_TEXT_CHARS, MAX_TITLE_CHARS, NewAbout};
pub use error::{Error, WorkerRefusal};
pub use manifest::Manifest;
pub use model::*;
pub use team_rules::MAX_REASON_CHARS;
pub use users::{NewToken, name_key};
pub use web::ScorePoint;

use db::Db;

/// The database file [`Store::open`] keeps in a state folder.
pub const SQLITE_FILE: &str = "physiojudge.sqlite3";

/// A time source.
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// Limits of the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    /// Attempts a submission gets before an `error` stays (shown to organisers). Only
    /// attempts charged to the run count: those ended by the worker's own error (a
    /// judge or machine fault, a lapsed lease), not those ended by a restart of the
    /// worker's process or the server, a disabled worker or a stop.
    pub max_attempts: u32,
    /// Attempts a submission gets at most, charged or not: a run that takes its worker
    /// down every time (so every attempt ends `worker_restarted`, never charged) stops
    /// here rather than cycling for ever.
    pub max_attempts_total: u32,
    /// Submissions of one team running at once: a team at the cap waits while other
    /// teams' submissions are queued, and is not taken while it is at the cap.
    pub team_running_cap: u32,
    /// A worker whose last this many attempts ended in errors of its own (a judge or
    /// machine fault, a lost lease; not an entry's `failed`, not a stop) is disabled
    /// automatically, with the reason shown (docs/service.md, "Workers"). 0: never.
    pub worker_error_limit: u32,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            max_attempts: 3,
            max_attempts_total: 10,
            team_running_cap: 1,
            worker_error_limit: 3,
        }
    }
}

/// The platform's records, in SQLite or PostgreSQL. Cheap to clone (the pool is shared).
#[derive(Clone)]
pub struct Store {
    db: Db,
    clock: Clock,
    /// Whether the queue's and uploads' times come from the database's clock on
    /// PostgreSQL ([`Store::now_in`]): yes but with a test's clock ([`Store::with_clock`]).
    db_clock: bool,
    policy: Policy,
    /// The scorer version leaderboards combine ([`Store::with_scorer_version`]).
    scorer_version: Option<Arc<str>>,
    /// The judge build workers must run ([`Store::with_build`]).
    build: Option<Arc<Build>>,
    /// Bumped (in this process) by every change a leaderboard may show: shared by the
    /// store's clones, so a cache of leaderboards knows when to derive them again.
    boards: Arc<AtomicU64>,
    /// Password hashes computed at once, and how long one may wait for its turn
    /// ([`Store::with_hashing`]): shared by the store's clones.
    hashing: Arc<users::Hashing>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("backend", &self.backend())
            .field("policy", &self.policy)
            .finish()
    }
}

/// Which database a store is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Store {
    /// The SQLite database of a state folder ([`SQLITE_FILE`] in it), created if
    /// missing, migrated to the current schema.
    pub async fn open(state_dir: &Path) -> Result<Store, Error> {
        std::fs::create_dir_all(state_dir).map_err(|source| Error::Io {
            path: state_dir.to_path_buf(),
            source,
        })?;
        Store::open_sqlite(&state_dir.join(SQLITE_FILE)).await
    }

    /// A SQLite database file, created if missing, migrated.
    pub async fn open_sqlite(path: &Path) -> Result<Store, Error> {
        Store::sqlite(SqliteConnectOptions::new().filename(path), None).await
    }

    /// `postgres://…` (or `postgresql://…`), `sqlite:PATH` or a plain path to a SQLite
    /// file; migrated to the current schema.
    pub async fn connect(url: &str) -> Result<Store, Error> {
        Store::connect_without_migration(url, None).await
    }

    /// [`Store::connect`], with every migration but `without` (tests of that migration
    /// on records stored before it; [`migrate`] applies it later).
    pub(crate) async fn connect_without_migration(
        url: &str,
        without: Option<i64>,
    ) -> Result<Store, Error> {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let pool = PgPoolOptions::new()
                .max_connections(10)
                .acquire_timeout(Duration::from_secs(30))
                .connect(url)
                .await?;
            Store::migrated(Db::Postgres(pool), without).await
        } else if url.starts_with("sqlite:") {
            let opts =
                SqliteConnectOptions::from_str(url).map_err(|_| Error::BadUrl(url.to_owned()))?;
            Store::sqlite(opts, without).await
        } else if url.contains("://") || url.is_empty() {
            Err(Error::BadUrl(url.to_owned()))
        } else {
            Store::open_sqlite(Path::new(url)).await
        }
    }

    async fn sqlite(opts: SqliteConnectOptions, without: Option<i64>) -> Result<Store, Error> {
        let opts = opts
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .foreign_keys(true)
            // Writers queue for the one write lock rather than fail at once.
            .busy_timeout(Duration::from_secs(30));
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .acquire_timeout(Duration::from_secs(60))
            .connect_with(opts)
            .await?;
        Store::migrated(Db::Sqlite(pool), without).await
    }

    async fn migrated(db: Db, without: Option<i64>) -> Result<Store, Error> {
        migrate(&db, without).await?;
        Ok(Store {
            db,
            clock: Arc::new(Utc::now),
            db_clock: true,
            policy: Policy::default(),
            scorer_version: None,
            build: None,
            boards: Arc::new(AtomicU64::new(0)),
            hashing: Arc::new(users::Hashing::new(
                users::Hashing::default_permits(),
                users::Hashing::DEFAULT_WAIT,
            )),
        })
    }

    /// The same store (and every clone made of it from now on) with another bound on
    /// password hashing: `permits` argon2 hashes at once (each holds 19 MiB), and a
    /// sign-in or sign-up that waits longer than `wait` for its turn is refused with
    /// [`Error::Busy`]. By default: one per CPU, 5 s.
    pub fn with_hashing(mut self, permits: usize, wait: Duration) -> Store {
        self.hashing = Arc::new(users::Hashing::new(permits, wait));
        self
    }

    /// The same store with another clock (tests; a server never needs one), used for
    /// every time, on both backends.
    pub fn with_clock(mut self, clock: Clock) -> Store {
        self.clock = clock;
        self.db_clock = false;
        self
    }

    /// The same store with another clock for this process (tests of a server whose
    /// clock is wrong): leases, `received_at` and deadlines still follow PostgreSQL's
    /// clock; on SQLite, whose clock is the process's, this is the clock.
    pub fn with_process_clock(mut self, clock: Clock) -> Store {
        self.clock = clock;
        self.db_clock = true;
        self
    }

    /// The time now as the queue and uploads count it, in `tx`: PostgreSQL's clock
    /// (`clock_timestamp()`, to the microsecond) unless a test set a clock, so that
    /// several servers on one database agree on leases, `received_at` and deadlines
    /// whatever their own clocks say; on SQLite the process's clock (the database is
    /// a file this process opens: there is no other clock to ask).
    pub(crate) async fn now_in(&self, tx: &mut db::Tx) -> Result<DateTime<Utc>, Error> {
        if !(self.db_clock && tx.is_postgres()) {
            return Ok(self.now());
        }
        let t: i64 = tx
            .fetch_one(
                "SELECT CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000000 AS BIGINT) AS t",
                db::args![],
            )
            .await?
            .get("t")?;
        time(t)
    }

    /// The same store with other queue limits.
    pub fn with_policy(mut self, policy: Policy) -> Store {
        self.policy = policy;
        self
    }

    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// The same store, whose leaderboards combine only results scored by this scorer
    /// version (the platform's current one): a result of another scorer waits for a
    /// rescoring (docs/service.md, "Versions"). Without it, every scorer version counts.
    pub fn with_scorer_version(mut self, version: impl Into<String>) -> Store {
        self.scorer_version = Some(Arc::from(version.into()));
        self
    }

    pub fn scorer_version(&self) -> Option<&str> {
        self.scorer_version.as_deref()
    }

    /// The same store, which hands jobs only to workers that announced this judge build
    /// (the server's own): another worker's take is refused with
    /// [`WorkerRefusal::WrongVersion`] (docs/service.md, "Workers"). Without it, any build may
    /// take jobs (tests of the queue alone).
    pub fn with_build(mut self, build: Build) -> Store {
        self.build = Some(Arc::new(build));
        self
    }

    /// The judge build workers must run, if the store checks it.
    pub fn build(&self) -> Option<&Build> {
        self.build.as_deref()
    }

    /// A number that changes whenever this process changes something a leaderboard
    /// shows (a result accepted or replaced, a selection, a publication, a team hidden
    /// or disqualified). Changes made by another process on the same database are not
    /// seen here: a cache keyed on it must also expire.
    pub fn board_generation(&self) -> u64 {
        self.boards.load(Ordering::Acquire)
    }

    pub(crate) fn boards_changed(&self) {
        self.boards.fetch_add(1, Ordering::AcqRel);
    }

    pub fn backend(&self) -> Backend {
        match self.db {
            Db::Sqlite(_) => Backend::Sqlite,
            Db::Postgres(_) => Backend::Postgres,
        }
    }

    /// The store's time now, to the microsecond (what is stored).
    pub fn now(&self) -> DateTime<Utc> {
        truncate((self.clock)())
    }

    /// Closes the pool (waits for connections in use to come back).
    pub async fn close(&self) {
        self.db.close().await
    }

    /// A consistent copy of a SQLite database, taken while it is in use
    /// (`VACUUM INTO`), written to `to` (which must not exist). PostgreSQL is backed up
    /// with its own tools (`pg_dump`): this returns [`Error::Invalid`] there.
    pub async fn backup(&self, to: &Path) -> Result<(), Error> {
        let Db::Sqlite(pool) = &self.db else {
            return Err(Error::Invalid {
                field: "backup",
                problem: "a PostgreSQL store is backed up with pg_dump".to_owned(),
            });
        };
        let Some(path) = to.to_str() else {
            return Err(Error::Invalid {
                field: "backup path",
                problem: format!("{} is not UTF-8", to.display()),
            });
        };
        sqlx::query("VACUUM INTO $1")
            .bind(path)
            .execute(pool)
            .await?;
        Ok(())
    }
}

/// Brings the schema up to date (but for migration `without`). The migrator applies
/// every migration it has not applied yet, in order of version, whether or not a later
/// one was applied before (so one left out is applied last; the versions need not be
/// contiguous: there is no 0004).
pub(crate) async fn migrate(db: &Db, without: Option<i64>) -> Result<(), Error> {
    let mut all = migrations(db);
    all.retain(|m| without.is_none_or(|w| m.version != w));
    let migrator = Migrator::new(Embedded(all)).await?;
    match db {
        Db::Sqlite(p) => migrator.run(p).await?,
        Db::Postgres(p) => migrator.run(p).await?,
    }
    if without.is_none_or(|w| w != 8) {
        fill_name_keys(db).await?;
    }
    Ok(())
}

/// Gives every user and team stored without a name key (before migration 0008) its
/// key, which SQL cannot compute. Rows go in order of creation; one whose key is held
/// already (by an older row, or one the store keyed since) gets `#` and its own id
/// appended, so it stays unique and the fill never fails: the older name keeps the
/// plain key, and a new name like either is refused as like the older one. Runs at
/// every start and does nothing once all are filled (docs/service.md, "Names").
async fn fill_name_keys(db: &Db) -> Result<(), Error> {
    let mut tx = db.write().await?;
    let r = db::attempt(async {
        // A user's key is unique over all users (scope ''), a team's within its challenge.
        for (table, scope_sql) in [("users", "''"), ("teams", "challenge_id")] {
            let rows = tx
                .fetch_all(
                    &format!(
                        "SELECT id, name, {scope_sql} AS scope FROM {table} \
                         WHERE name_key IS NULL ORDER BY created_at, id"
                    ),
                    db::args![],
                )
                .await?;
            for r in rows {
                let id: String = r.get("id")?;
                let scope: String = r.get("scope")?;
                let plain = users::name_key(&r.get::<String>("name")?);
                let held = tx
                    .fetch_optional(
                        &format!("SELECT id FROM {table} WHERE name_key = $1 AND {scope_sql} = $2"),
                        db::args![&plain, &scope],
                    )
                    .await?
                    .is_some();
                let key = if held { format!("{plain}#{id}") } else { plain };
                tx.execute(
                    // Another server starting on the same database may have filled it.
                    &format!("UPDATE {table} SET name_key = $1 WHERE id = $2 AND name_key IS NULL"),
                    db::args![key, id],
                )
                .await?;
            }
        }
        Ok(())
    })
    .await;
    tx.finish(r).await
}

/// The migrations of a backend: the common ones and the dialect's own, by version.
fn migrations(db: &Db) -> Vec<Migration> {
    let common: &[(i64, &str, &str)] = &[
        (
            1,
            "records",
            include_str!("../migrations/common/0001_records.sql"),
        ),
        (
            12,
            "challenge pages",
            include_str!("../migrations/common/0012_challenge_pages.sql"),
        ),
    ];
    let dialect: &[(i64, &str, &str)] = match db {
        Db::Sqlite(_) => &[
            (
                2,
                "guards",
                include_str!("../migrations/sqlite/0002_guards.sql"),
            ),
            (
                3,
                "platform rules",
                include_str!("../migrations/sqlite/0003_platform_rules.sql"),
            ),
            (
                5,
                "figures by split",
                include_str!("../migrations/sqlite/0005_figures_by_split.sql"),
            ),
            (
                6,
                "team rules",
                include_str!("../migrations/sqlite/0006_team_rules.sql"),
            ),
            (
                7,
                "worker controls",
                include_str!("../migrations/sqlite/0007_worker_controls.sql"),
            ),
            (
                8,
                "name keys",
                include_str!("../migrations/sqlite/0008_name_keys.sql"),
            ),
            (
                9,
                "idempotency",
                include_str!("../migrations/sqlite/0009_idempotency.sql"),
            ),
        ],
        Db::Postgres(_) => &[
            (
                2,
                "guards",
                include_str!("../migrations/postgres/0002_guards.sql"),
            ),
            (
                3,
                "platform rules",
                include_str!("../migrations/postgres/0003_platform_rules.sql"),
            ),
            (
                5,
                "figures by split",
                include_str!("../migrations/postgres/0005_figures_by_split.sql"),
            ),
            (
                6,
                "team rules",
                include_str!("../migrations/postgres/0006_team_rules.sql"),
            ),
            (
                7,
                "worker controls",
                include_str!("../migrations/postgres/0007_worker_controls.sql"),
            ),
            (
                8,
                "name keys",
                include_str!("../migrations/postgres/0008_name_keys.sql"),
            ),
            (
                9,
                "idempotency",
                include_str!("../migrations/postgres/0009_idempotency.sql"),
            ),
        ],
    };
    let mut all: Vec<Migration> = common
        .iter()
        .chain(dialect)
        .map(|&(version, description, sql)| {
            Migration::new(
                version,
                description.into(),
                MigrationType::Simple,
                sql.into(),
                false,
            )
        })
        .collect();
    all.sort_by_key(|m| m.version);
    all
}

/// Migrations compiled into the crate (no folder to ship, no database to build).
#[derive(Debug)]
struct Embedded(Vec<Migration>);

impl MigrationSource<'static> for Embedded {
    fn resolve(
        self,
    ) -> std::pin::Pin<
        Box<
            dyn std::future::Future<Output = Result<Vec<Migration>, sqlx::error::BoxDynError>>
                + Send,
        >,
    > {
        Box::pin(async move { Ok(self.0) })
    }
}

/// A time as stored: microseconds since the epoch.
pub(crate) fn us(t: DateTime<Utc>) -> i64 {
    t.timestamp_micros()
}

/// A stored time.
pub(crate) fn time(us: i64) -> Result<DateTime<Utc>, Error> {
    DateTime::from_timestamp_micros(us)
        .ok_or_else(|| Error::Corrupt(format!("time {us} µs is out of range")))
}

pub(crate) fn opt_time(us: Option<i64>) -> Result<Option<DateTime<Utc>>, Error> {
    us.map(time).transpose()
}

fn truncate(t: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(t.timestamp_micros()).unwrap_or(t)
}

/// A count or number as stored (BIGINT) → u32, refusing what this crate never writes.
pub(crate) fn count(v: i64) -> Result<u32, Error> {
    u32::try_from(v).map_err(|_| Error::Corrupt(format!("count {v} out of range")))
}
