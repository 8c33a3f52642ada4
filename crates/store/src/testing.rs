//! Test support (feature `testing`): a throwaway store on each backend, and a clock a
//! test moves by hand.
//!
//! - [`TestStore::sqlite`]: a database file in a fresh temporary folder.
//! - [`TestStore::postgres`]: a fresh database with a random name on the server of
//!   `PHYSIOJUDGE_TEST_POSTGRES` (default `postgres://postgres@127.0.0.1:5432/postgres`,
//!   trust authentication), dropped (`WITH (FORCE)`) when the `TestStore` is dropped,
//!   after a failing test too. Tests therefore run in parallel. No server is an error
//!   that says which URL was tried: these tests do not skip.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use sqlx::Connection;

use crate::manifest::hex;
use crate::{Backend, Store};

/// `store::both_backends!(case, …)`, for the test files of crates that use the store:
/// each `async fn case(Backend)` of the calling file as two tests, `case::sqlite` and
/// `case::postgres`, each on a two-thread runtime (the caller depends on tokio with its
/// `macros` feature).
#[macro_export]
macro_rules! both_backends {
    ($($name:ident),+ $(,)?) => {$(
        mod $name {
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name($crate::Backend::Sqlite).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name($crate::Backend::Postgres).await;
            }
        }
    )+};
}

/// The PostgreSQL server tests create their databases on (its maintenance database).
pub fn postgres_url() -> String {
    std::env::var("PHYSIOJUDGE_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned())
}

/// A clock that stands still until moved.
#[derive(Clone, Debug)]
pub struct ManualClock(Arc<Mutex<DateTime<Utc>>>);

impl ManualClock {
    pub fn new(start: DateTime<Utc>) -> ManualClock {
        ManualClock(Arc::new(Mutex::new(start)))
    }

    pub fn now(&self) -> DateTime<Utc> {
        *self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set(&self, t: DateTime<Utc>) {
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = t;
    }

    pub fn advance(&self, d: chrono::Duration) {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *t += d;
    }

    /// As a store's clock.
    pub fn clock(&self) -> crate::Clock {
        let me = self.clone();
        Arc::new(move || me.now())
    }
}

/// A store that disappears with this value, on a [`ManualClock`] that starts at
/// 2026-03-02T10:00:00Z.
pub struct TestStore {
    pub store: Store,
    pub clock: ManualClock,
    _dir: Option<tempfile::TempDir>,
    pg_database: Option<String>,
}

impl std::ops::Deref for TestStore {
    type Target = Store;
    fn deref(&self) -> &Store {
        &self.store
    }
}

/// The time a [`TestStore`]'s clock starts at.
pub fn start_time() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-03-02T10:00:00Z")
        .map(|t| t.to_utc())
        .unwrap_or_default()
}

impl TestStore {
    /// A store of the given backend.
    pub async fn new(backend: Backend) -> TestStore {
        TestStore::without_migration(backend, None).await
    }

    /// A store with every migration but `without` (all: `None`): that migration can then
    /// be tested on records stored before it, by code that writes the later
    /// migrations' columns. (A schema that merely stopped before it would lack the
    /// columns of every migration after it, which today's code writes; each migration
    /// touches tables of its own, so leaving one out and applying it last is the schema
    /// an upgrade meets.)
    pub(crate) async fn without_migration(backend: Backend, without: Option<i64>) -> TestStore {
        match backend {
            Backend::Sqlite => TestStore::sqlite_without(without).await,
            Backend::Postgres => TestStore::postgres_without(without).await,
        }
    }

    pub async fn sqlite() -> TestStore {
        TestStore::sqlite_without(None).await
    }

    async fn sqlite_without(without: Option<i64>) -> TestStore {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let path = dir.path().join(crate::SQLITE_FILE);
        let store =
            Store::connect_without_migration(&format!("sqlite:{}", path.display()), without)
                .await
                .expect("a SQLite store in a temporary folder");
        TestStore::with(store, Some(dir), None)
    }

    pub async fn postgres() -> TestStore {
        TestStore::postgres_without(None).await
    }

    async fn postgres_without(without: Option<i64>) -> TestStore {
        let admin = postgres_url();
        let mut bytes = [0u8; 8];
        getrandom::fill(&mut bytes).expect("random bytes");
        let name = format!("physiojudge_test_{}", hex(&bytes));
        let mut conn = sqlx::PgConnection::connect(&admin)
            .await
            .unwrap_or_else(|e| {
                panic!(
                    "store tests need PostgreSQL at {admin} (set PHYSIOJUDGE_TEST_POSTGRES to \
                     another server): {e}"
                )
            });
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut conn)
            .await
            .unwrap_or_else(|e| panic!("CREATE DATABASE {name} on {admin}: {e}"));
        let _ = conn.close().await;
        let url = database_url(&admin, &name);
        let store = Store::connect_without_migration(&url, without)
            .await
            .unwrap_or_else(|e| panic!("connecting to {url}: {e}"));
        TestStore::with(store, None, Some(name))
    }

    fn with(store: Store, dir: Option<tempfile::TempDir>, pg: Option<String>) -> TestStore {
        let clock = ManualClock::new(start_time());
        TestStore {
            store: store.with_clock(clock.clock()),
            clock,
            _dir: dir,
            pg_database: pg,
        }
    }
}

/// `admin` with its database name replaced by `name`.
fn database_url(admin: &str, name: &str) -> String {
    let (base, query) = match admin.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (admin, None),
    };
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    let base = match base[after_scheme..].find('/') {
        Some(i) => &base[..after_scheme + i],
        None => base,
    };
    match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    }
}

impl Drop for TestStore {
    fn drop(&mut self) {
        let Some(name) = self.pg_database.take() else {
            return;
        };
        let admin = postgres_url();
        // Drop may run inside the test's runtime, which cannot be blocked on: do the
        // work on a thread of its own with its own small runtime.
        let done = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(async {
                let mut conn = sqlx::PgConnection::connect(&admin)
                    .await
                    .map_err(|e| e.to_string())?;
                sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .execute(&mut conn)
                    .await
                    .map_err(|e| e.to_string())?;
                let _ = conn.close().await;
                Ok::<(), String>(())
            })
        })
        .join();
        if let Ok(Err(e)) = done {
            eprintln!("could not drop the test database: {e}");
        }
    }
}
