//! The two backends behind one small interface: a transaction that runs SQL text with
//! bound values and hands back rows read by column name.
//!
//! Every query of the crate is written once, in the SQL both dialects share (`$1`
//! placeholders, `RETURNING`, `ON CONFLICT`, partial indexes, window functions), and run
//! through [`Tx`]; the few places that differ ask [`Tx::is_postgres`].

use sqlx::postgres::{PgArguments, PgRow};
use sqlx::query::Query;
use sqlx::sqlite::{SqliteArguments, SqliteRow};
use sqlx::{Decode, PgPool, Postgres, Row as _, Sqlite, SqlitePool, Type};

use crate::error::Error;

/// The pool of one backend.
#[derive(Clone, Debug)]
pub(crate) enum Db {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// One transaction on either backend.
pub(crate) enum Tx {
    Sqlite(sqlx::Transaction<'static, Sqlite>),
    Postgres(sqlx::Transaction<'static, Postgres>),
}

impl Db {
    /// A transaction that will write. On SQLite it is `BEGIN IMMEDIATE`: it takes the
    /// database's one write lock at once, so that what it reads stays true until it
    /// commits (a deferred transaction that reads and then writes can fail with
    /// `SQLITE_BUSY` when another writer went first). On PostgreSQL it is a plain
    /// `BEGIN` (read committed); the statements lock the rows they depend on.
    pub(crate) async fn write(&self) -> Result<Tx, Error> {
        Ok(match self {
            Db::Sqlite(p) => Tx::Sqlite(p.begin_with("BEGIN IMMEDIATE").await?),
            Db::Postgres(p) => Tx::Postgres(p.begin().await?),
        })
    }

    /// A transaction that only reads: one consistent snapshot on SQLite (WAL), read
    /// committed on PostgreSQL.
    pub(crate) async fn read(&self) -> Result<Tx, Error> {
        Ok(match self {
            Db::Sqlite(p) => Tx::Sqlite(p.begin().await?),
            Db::Postgres(p) => Tx::Postgres(p.begin().await?),
        })
    }

    pub(crate) async fn close(&self) {
        match self {
            Db::Sqlite(p) => p.close().await,
            Db::Postgres(p) => p.close().await,
        }
    }
}

/// A value bound to a `$n` placeholder.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    Int(Option<i64>),
    Text(Option<String>),
    Real(Option<f64>),
    Bool(bool),
}

impl From<i64> for Val {
    fn from(v: i64) -> Val {
        Val::Int(Some(v))
    }
}
impl From<Option<i64>> for Val {
    fn from(v: Option<i64>) -> Val {
        Val::Int(v)
    }
}
impl From<&str> for Val {
    fn from(v: &str) -> Val {
        Val::Text(Some(v.to_owned()))
    }
}
impl From<String> for Val {
    fn from(v: String) -> Val {
        Val::Text(Some(v))
    }
}
impl From<&String> for Val {
    fn from(v: &String) -> Val {
        Val::Text(Some(v.clone()))
    }
}
impl From<Option<String>> for Val {
    fn from(v: Option<String>) -> Val {
        Val::Text(v)
    }
}
impl From<Option<&str>> for Val {
    fn from(v: Option<&str>) -> Val {
        Val::Text(v.map(str::to_owned))
    }
}
impl From<Option<f64>> for Val {
    fn from(v: Option<f64>) -> Val {
        Val::Real(v)
    }
}
impl From<bool> for Val {
    fn from(v: bool) -> Val {
        Val::Bool(v)
    }
}

/// Runs the work of a transaction (an `async` block that uses it), for
/// [`Tx::finish`]: `let r = attempt(async { … }).await; tx.finish(r).await`. The
/// function only gives the block its type, so that `?` in it needs no annotation.
pub(crate) async fn attempt<T>(
    work: impl std::future::Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    work.await
}

/// `args![a, b, …]`: the values for `$1`, `$2`, ….
macro_rules! args {
    () => { Vec::<$crate::db::Val>::new() };
    ($($v:expr),+ $(,)?) => { vec![$($crate::db::Val::from($v)),+] };
}
pub(crate) use args;

fn bind_sqlite<'q>(
    mut q: Query<'q, Sqlite, SqliteArguments<'q>>,
    args: Vec<Val>,
) -> Query<'q, Sqlite, SqliteArguments<'q>> {
    for a in args {
        q = match a {
            Val::Int(v) => q.bind(v),
            Val::Text(v) => q.bind(v),
            Val::Real(v) => q.bind(v),
            Val::Bool(v) => q.bind(v),
        };
    }
    q
}

fn bind_pg(
    mut q: Query<'_, Postgres, PgArguments>,
    args: Vec<Val>,
) -> Query<'_, Postgres, PgArguments> {
    for a in args {
        q = match a {
            Val::Int(v) => q.bind(v),
            Val::Text(v) => q.bind(v),
            Val::Real(v) => q.bind(v),
            Val::Bool(v) => q.bind(v),
        };
    }
    q
}

/// One row of either backend.
pub(crate) enum Row {
    Sqlite(SqliteRow),
    Postgres(PgRow),
}

/// A column type both backends decode.
pub(crate) trait Column:
    for<'r> Decode<'r, Sqlite> + Type<Sqlite> + for<'r> Decode<'r, Postgres> + Type<Postgres>
{
}
impl<T> Column for T where
    T: for<'r> Decode<'r, Sqlite> + Type<Sqlite> + for<'r> Decode<'r, Postgres> + Type<Postgres>
{
}

impl Row {
    /// The column `col`, decoded as `T`.
    pub(crate) fn get<T: Column>(&self, col: &str) -> Result<T, Error> {
        match self {
            Row::Sqlite(r) => r.try_get(col),
            Row::Postgres(r) => r.try_get(col),
        }
        .map_err(|e| Error::Corrupt(format!("column {col}: {e}")))
    }
}

impl Tx {
    pub(crate) fn is_postgres(&self) -> bool {
        matches!(self, Tx::Postgres(_))
    }

    /// Runs a statement; the number of rows it changed.
    pub(crate) async fn execute(&mut self, sql: &str, args: Vec<Val>) -> Result<u64, Error> {
        Ok(match self {
            Tx::Sqlite(c) => bind_sqlite(sqlx::query(sql), args)
                .execute(&mut **c)
                .await?
                .rows_affected(),
            Tx::Postgres(c) => bind_pg(sqlx::query(sql), args)
                .execute(&mut **c)
                .await?
                .rows_affected(),
        })
    }

    pub(crate) async fn fetch_all(&mut self, sql: &str, args: Vec<Val>) -> Result<Vec<Row>, Error> {
        Ok(match self {
            Tx::Sqlite(c) => bind_sqlite(sqlx::query(sql), args)
                .fetch_all(&mut **c)
                .await?
                .into_iter()
                .map(Row::Sqlite)
                .collect(),
            Tx::Postgres(c) => bind_pg(sqlx::query(sql), args)
                .fetch_all(&mut **c)
                .await?
                .into_iter()
                .map(Row::Postgres)
                .collect(),
        })
    }

    pub(crate) async fn fetch_optional(
        &mut self,
        sql: &str,
        args: Vec<Val>,
    ) -> Result<Option<Row>, Error> {
        Ok(match self {
            Tx::Sqlite(c) => bind_sqlite(sqlx::query(sql), args)
                .fetch_optional(&mut **c)
                .await?
                .map(Row::Sqlite),
            Tx::Postgres(c) => bind_pg(sqlx::query(sql), args)
                .fetch_optional(&mut **c)
                .await?
                .map(Row::Postgres),
        })
    }

    pub(crate) async fn fetch_one(&mut self, sql: &str, args: Vec<Val>) -> Result<Row, Error> {
        self.fetch_optional(sql, args)
            .await?
            .ok_or_else(|| Error::Corrupt(format!("no row from: {sql}")))
    }

    /// Ends the transaction with the outcome of its work: commits after `Ok`, rolls back
    /// at once after `Err`. (A transaction merely dropped is rolled back only when sqlx
    /// next tests its connection, in a task of its own: until then it keeps its locks,
    /// and another worker would skip a team it had locked.)
    pub(crate) async fn finish<T>(self, outcome: Result<T, Error>) -> Result<T, Error> {
        match outcome {
            Ok(v) => {
                self.commit().await?;
                Ok(v)
            }
            Err(e) => {
                let _ = match self {
                    Tx::Sqlite(t) => t.rollback().await,
                    Tx::Postgres(t) => t.rollback().await,
                };
                Err(e)
            }
        }
    }

    pub(crate) async fn commit(self) -> Result<(), Error> {
        match self {
            Tx::Sqlite(t) => t.commit().await?,
            Tx::Postgres(t) => t.commit().await?,
        }
        Ok(())
    }
}
