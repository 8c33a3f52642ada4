//! What keeps one client from taking the server from everyone else: how many tries a
//! name or an address gets at guessing passwords or making accounts, and how many
//! event streams a user or an address keeps open (docs/service.md, "Running it in
//! public").
//!
//! Every limit here is *reserved before* the work it limits: a try takes its place in
//! the window under the lock, then the slow password check runs, and a success gives
//! the place back. Checking first and counting after the check would let a burst of
//! concurrent guesses all pass the check before any failure was counted.
//!
//! Not here: the bound on password hashing itself (the store's, `Store::with_hashing`),
//! the limits on connections (`crate::serve`).

use std::collections::HashMap;
use std::hash::Hash;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::http::StatusCode;

use crate::error::ApiError;

/// The address a request came from: the peer of its connection, or, behind a proxy
/// named in `Config::trusted_proxy_header`, the address that header gives. Put in each
/// request's extensions by the server's connection loop; absent on requests made
/// in-process (a page calling the API), which carry their page's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientAddr(pub IpAddr);

/// Keys remembered at once before the expired ones are dropped.
const REMEMBERED: usize = 10_000;

/// Tries per key in a window that starts at the key's first try: past `limit`, a try
/// is refused until the window is over. A `limit` of 0 means no limit.
pub(crate) struct Window<K> {
    limit: u32,
    window: Duration,
    tries: Mutex<HashMap<K, (Instant, u32)>>,
}

impl<K: Eq + Hash + Clone> Window<K> {
    pub(crate) fn new(limit: u32, window: Duration) -> Window<K> {
        Window {
            limit,
            window,
            tries: Mutex::new(HashMap::new()),
        }
    }

    /// Takes a try for `key`, or says in how many seconds one is free again.
    pub(crate) fn reserve(&self, key: &K) -> Result<(), u64> {
        if self.limit == 0 {
            return Ok(());
        }
        let mut tries = self.tries.lock().unwrap_or_else(|p| p.into_inner());
        if tries.len() >= REMEMBERED {
            let window = self.window;
            tries.retain(|_, (start, _)| start.elapsed() < window);
        }
        let e = tries.entry(key.clone()).or_insert((Instant::now(), 0));
        let age = e.0.elapsed();
        if age >= self.window {
            *e = (Instant::now(), 0);
        } else if e.1 >= self.limit {
            return Err((self.window - age).as_secs().max(1));
        }
        e.1 += 1;
        Ok(())
    }

    /// Gives back a try taken with [`Window::reserve`] (it succeeded, or it never
    /// reached the work the limit is for).
    pub(crate) fn release(&self, key: &K) {
        if self.limit == 0 {
            return;
        }
        let mut tries = self.tries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = tries.get_mut(key) {
            e.1 = e.1.saturating_sub(1);
        }
    }
}

/// 429 with `Retry-After`.
pub(crate) fn too_many(what: &str, wait: u64) -> ApiError {
    let mut e = ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
        format!("{what}: try again in {wait} s"),
    );
    e.retry_after = Some(wait);
    e
}

/// Failed sign-ins, per name tried (whatever the address: guessing one account's
/// password from many addresses stays slow) and per address (one address guessing
/// many names stays slow too).
pub(crate) struct Logins {
    per_name: Window<String>,
    per_addr: Window<IpAddr>,
}

/// A sign-in's reserved tries: [`Login::succeeded`] gives them back; dropped
/// otherwise, they stay counted as a failure.
pub(crate) struct Login<'a> {
    logins: &'a Logins,
    name: String,
    addr: Option<IpAddr>,
    counted: bool,
}

impl Logins {
    pub(crate) fn new(per_name_per_minute: u32, per_addr_per_minute: u32) -> Logins {
        Logins {
            per_name: Window::new(per_name_per_minute, Duration::from_secs(60)),
            per_addr: Window::new(per_addr_per_minute, Duration::from_secs(60)),
        }
    }

    /// Reserves a try for `name` from `addr`, or 429.
    pub(crate) fn reserve(&self, name: &str, addr: Option<IpAddr>) -> Result<Login<'_>, ApiError> {
        let name = name.to_owned();
        self.per_name
            .reserve(&name)
            .map_err(|w| too_many("too many failed sign-ins for this name", w))?;
        if let Some(a) = addr
            && let Err(w) = self.per_addr.reserve(&a)
        {
            self.per_name.release(&name);
            return Err(too_many("too many failed sign-ins from this address", w));
        }
        Ok(Login {
            logins: self,
            name,
            addr,
            counted: true,
        })
    }
}

impl Login<'_> {
    /// The password was right (or the try never reached the check): not a failure.
    pub(crate) fn not_failed(mut self) {
        self.give_back();
    }

    fn give_back(&mut self) {
        if std::mem::take(&mut self.counted) {
            self.logins.per_name.release(&self.name);
            if let Some(a) = &self.addr {
                self.logins.per_addr.release(a);
            }
        }
    }

    /// The password was wrong: the try stays counted.
    pub(crate) fn failed(mut self) {
        self.counted = false;
    }
}

impl Drop for Login<'_> {
    /// A try whose outcome was not said (an error on the way) is not a failure.
    fn drop(&mut self) {
        self.give_back();
    }
}

/// The limits the web site shares with the API: sign-ups per address (each costs a
/// password hash and leaves an account behind).
#[derive(Clone)]
pub struct Throttle(Arc<Window<IpAddr>>);

impl std::fmt::Debug for Throttle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Throttle")
    }
}

impl Throttle {
    pub(crate) fn new(signups_per_hour: u32) -> Throttle {
        Throttle(Arc::new(Window::new(
            signups_per_hour,
            Duration::from_secs(3600),
        )))
    }

    /// Takes a sign-up from `addr` (no address: a request made in-process, not
    /// limited here), or says in how many seconds one is free again.
    pub fn reserve_signup(&self, addr: Option<IpAddr>) -> Result<(), u64> {
        match addr {
            Some(a) => self.0.reserve(&a),
            None => Ok(()),
        }
    }

    /// Gives back a sign-up that was refused before any work (a bad form).
    pub fn release_signup(&self, addr: Option<IpAddr>) {
        if let Some(a) = addr {
            self.0.release(&a);
        }
    }
}

/// Live event streams per user and per address: each holds a connection (a file
/// descriptor) and a poll of the store for as long as the client likes.
pub(crate) struct Streams {
    per_user: u32,
    per_addr: u32,
    live: Mutex<(HashMap<uuid::Uuid, u32>, HashMap<IpAddr, u32>)>,
}

/// One live stream, counted until dropped.
pub(crate) struct StreamSlot {
    streams: Arc<Streams>,
    user: uuid::Uuid,
    addr: Option<IpAddr>,
}

impl Streams {
    pub(crate) fn new(per_user: u32, per_addr: u32) -> Streams {
        Streams {
            per_user,
            per_addr,
            live: Mutex::new((HashMap::new(), HashMap::new())),
        }
    }

    /// A slot for a new stream of `user` from `addr`, or 429. A limit of 0 is none.
    pub(crate) fn open(
        self: &Arc<Streams>,
        user: uuid::Uuid,
        addr: Option<IpAddr>,
    ) -> Result<StreamSlot, ApiError> {
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        let (users, addrs) = &mut *live;
        let by_user = users.get(&user).copied().unwrap_or(0);
        if self.per_user > 0 && by_user >= self.per_user {
            return Err(too_many(
                &format!(
                    "this account has {by_user} event streams open already (the most \
                     allowed); close one"
                ),
                5,
            ));
        }
        if let Some(a) = addr {
            let by_addr = addrs.get(&a).copied().unwrap_or(0);
            if self.per_addr > 0 && by_addr >= self.per_addr {
                return Err(too_many(
                    &format!(
                        "this address has {by_addr} event streams open already (the most \
                         allowed); close one"
                    ),
                    5,
                ));
            }
            *addrs.entry(a).or_default() += 1;
        }
        *users.entry(user).or_default() += 1;
        Ok(StreamSlot {
            streams: self.clone(),
            user,
            addr,
        })
    }

    /// Streams open now.
    #[cfg(test)]
    fn open_now(&self) -> u64 {
        let live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        live.0.values().map(|n| u64::from(*n)).sum()
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut live = self.streams.live.lock().unwrap_or_else(|p| p.into_inner());
        let (users, addrs) = &mut *live;
        if let Some(n) = users.get_mut(&self.user) {
            *n -= 1;
            if *n == 0 {
                users.remove(&self.user);
            }
        }
        if let Some(a) = self.addr
            && let Some(n) = addrs.get_mut(&a)
        {
            *n -= 1;
            if *n == 0 {
                addrs.remove(&a);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_refuses_past_its_limit_and_takes_back_releases() {
        let w = Window::new(2, Duration::from_secs(60));
        assert!(w.reserve(&"a").is_ok());
        assert!(w.reserve(&"a").is_ok());
        let wait = w.reserve(&"a").unwrap_err();
        assert!((1..=60).contains(&wait));
        assert!(w.reserve(&"b").is_ok(), "another key has its own tries");
        w.release(&"a");
        assert!(w.reserve(&"a").is_ok());
        assert!(Window::new(0, Duration::from_secs(1)).reserve(&"x").is_ok());
    }

    #[test]
    fn concurrent_reservations_never_pass_the_limit() {
        let w = Arc::new(Window::new(10, Duration::from_secs(60)));
        let passed: usize = (0..60)
            .map(|_| {
                let w = w.clone();
                std::thread::spawn(move || w.reserve(&"name").is_ok())
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| usize::from(t.join().unwrap()))
            .sum();
        assert_eq!(passed, 10);
    }

    #[test]
    fn a_login_that_did_not_fail_gives_its_tries_back() {
        let l = Logins::new(1, 5);
        let a = Some(IpAddr::from([127, 0, 0, 1]));
        l.reserve("ann", a).unwrap().not_failed();
        let t = l.reserve("ann", a).unwrap();
        assert_eq!(
            l.reserve("ann", a).err().map(|e| e.status.as_u16()),
            Some(429)
        );
        t.failed();
        assert!(l.reserve("ann", a).is_err(), "a failure stays counted");
        drop(l.reserve("bob", a).unwrap());
        assert!(
            l.reserve("bob", a).is_ok(),
            "an unfinished try is not a failure"
        );
    }

    #[test]
    fn streams_are_counted_until_dropped() {
        let s = Arc::new(Streams::new(2, 3));
        let (u, v) = (uuid::Uuid::from_u128(1), uuid::Uuid::from_u128(2));
        let a = Some(IpAddr::from([10, 0, 0, 1]));
        let one = s.open(u, a).unwrap();
        let _two = s.open(u, a).unwrap();
        assert!(s.open(u, a).is_err(), "per user");
        let _three = s.open(v, a).unwrap();
        assert!(s.open(v, a).is_err(), "per address");
        assert!(s.open(v, None).is_ok(), "no address: the user's limit only");
        drop(one);
        assert!(s.open(u, a).is_ok());
        assert_eq!(s.open_now(), 2);
    }
}
