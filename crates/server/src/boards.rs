//! The leaderboards the server has served, kept as the JSON bytes it sent
//! (docs/service.md, "Caching"): a leaderboard is asked for far more often than it
//! changes, and a large one costs tens of milliseconds to derive.
//!
//! An entry is good while the store's board generation is the one it was derived at
//! (every change this process makes moves it) and it is younger than [`TTL`] (changes
//! other processes make on the same database). Deriving is single-flight per entry:
//! after a change, one request derives and the others wait for it (nobody is served the
//! board from before the change); when only the TTL ran out, one request derives again
//! while the others are served the entry they had.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use std::io::Write;

use axum::body::Bytes;

use crate::error::ApiError;
use crate::views::BoardName;

/// How long an entry is served without asking the database again.
pub(crate) const TTL: Duration = Duration::from_secs(1);

/// Entries kept at most; past it the cache is emptied (the few variants of each phase
/// are what is asked for again and again; an odd `?phase=` must not grow it forever).
const KEPT: usize = 1024;

/// What a served leaderboard depends on: the request as asked, so that an answer from
/// the cache reads nothing from the database, not even to find the phase.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct BoardKey {
    pub challenge: String,
    pub phase: Option<String>,
    pub board: BoardName,
    pub version: Option<u32>,
    pub organiser: bool,
}

/// A leaderboard as sent: its JSON, and the same gzipped for clients that accept it
/// (a 1,000-row board is 248 kB of JSON and about a tenth of that gzipped).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Board {
    pub json: Bytes,
    pub gzip: Bytes,
}

impl Board {
    /// A board from its JSON (compressing takes milliseconds: call it off the
    /// request threads).
    pub(crate) fn new(json: Vec<u8>) -> std::io::Result<Board> {
        let mut z = flate2::write::GzEncoder::new(
            Vec::with_capacity(json.len() / 8),
            flate2::Compression::fast(),
        );
        z.write_all(&json)?;
        let gzip = z.finish()?;
        Ok(Board {
            json: Bytes::from(json),
            gzip: Bytes::from(gzip),
        })
    }
}

struct Entry {
    generation: u64,
    at: Instant,
    body: Option<Board>,
    /// A request is deriving it again after the TTL ran out.
    refreshing: bool,
    /// Held while a request derives it after a change (or for the first time).
    deriving: Arc<tokio::sync::Mutex<()>>,
}

#[derive(Default)]
pub(crate) struct Boards(Mutex<HashMap<BoardKey, Entry>>);

enum Step {
    Serve(Board),
    Refresh,
    Wait(Arc<tokio::sync::Mutex<()>>),
}

impl Boards {
    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<BoardKey, Entry>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The answer for `key`: from the cache, or `derive`d (and kept).
    pub(crate) async fn serve<F, Fut>(
        &self,
        key: &BoardKey,
        generation: u64,
        derive: F,
    ) -> Result<Board, ApiError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Board, ApiError>>,
    {
        let step = {
            let mut entries = self.entries();
            if entries.len() >= KEPT && !entries.contains_key(key) {
                entries.clear();
            }
            let e = entries.entry(key.clone()).or_insert_with(|| Entry {
                generation,
                at: Instant::now(),
                body: None,
                refreshing: false,
                deriving: Arc::default(),
            });
            match &e.body {
                Some(b) if e.generation == generation && (e.at.elapsed() < TTL || e.refreshing) => {
                    Step::Serve(b.clone())
                }
                Some(_) if e.generation == generation => {
                    e.refreshing = true;
                    Step::Refresh
                }
                _ => Step::Wait(e.deriving.clone()),
            }
        };
        match step {
            Step::Serve(b) => Ok(b),
            Step::Refresh => {
                let r = derive().await;
                self.keep(key, generation, &r);
                r
            }
            Step::Wait(deriving) => {
                let _held = deriving.lock().await;
                if let Some(b) = self.fresh(key, generation) {
                    return Ok(b);
                }
                let r = derive().await;
                self.keep(key, generation, &r);
                r
            }
        }
    }

    fn fresh(&self, key: &BoardKey, generation: u64) -> Option<Board> {
        let entries = self.entries();
        let e = entries.get(key)?;
        (e.generation == generation && e.at.elapsed() < TTL)
            .then(|| e.body.clone())
            .flatten()
    }

    fn keep(&self, key: &BoardKey, generation: u64, derived: &Result<Board, ApiError>) {
        let mut entries = self.entries();
        if let Some(e) = entries.get_mut(key) {
            e.refreshing = false;
            if let Ok(b) = derived {
                e.generation = generation;
                e.at = Instant::now();
                e.body = Some(b.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn key() -> BoardKey {
        BoardKey {
            challenge: "c".into(),
            phase: None,
            board: BoardName::Live,
            version: None,
            organiser: false,
        }
    }

    #[tokio::test]
    async fn one_derivation_per_generation_and_concurrent_misses_wait_for_it() {
        let boards = Arc::new(Boards::default());
        let derived = Arc::new(AtomicUsize::new(0));
        let derive = |n: &'static str| {
            let derived = derived.clone();
            move || async move {
                derived.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok(Board::new(n.as_bytes().to_vec()).unwrap())
            }
        };
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let (boards, d) = (boards.clone(), derive("g1"));
            tasks.push(tokio::spawn(async move {
                boards.serve(&key(), 1, d).await.unwrap()
            }));
        }
        for t in tasks {
            assert_eq!(t.await.unwrap().json, "g1");
        }
        assert_eq!(derived.load(Ordering::SeqCst), 1);
        // A new generation is derived again, never served from the old one.
        let b = boards.serve(&key(), 2, derive("g2")).await.unwrap();
        assert_eq!((b.json, derived.load(Ordering::SeqCst)), ("g2".into(), 2));
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&b.gzip[..]), &mut text)
            .unwrap();
        assert_eq!(text, "g2");
        // A failed derivation keeps nothing.
        let k = BoardKey {
            challenge: "x".into(),
            ..key()
        };
        let e = boards
            .serve(&k, 2, || async { Err(ApiError::not_found("phase")) })
            .await;
        assert!(e.is_err());
        assert_eq!(boards.fresh(&k, 2), None);
    }
}
