//! `physiojudge serve`: the platform's HTTP server over its store (docs/service.md,
//! "HTTP API").

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};

#[derive(Args)]
pub struct ServeArgs {
    /// The state folder: the SQLite database (unless --database), entries as uploaded,
    /// result folders. Default: physiojudge's data folder's `serve/`.
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// The database: postgres://… for a fleet, sqlite:PATH or a path (default: the
    /// state folder's SQLite file).
    #[arg(long)]
    pub database: Option<String>,
    /// The largest entry archive accepted, in MiB.
    #[arg(long, default_value_t = 512)]
    pub max_upload_mib: u64,
    /// Job notices for remote workers (`physiojudge worker`) over NATS JetStream:
    /// nats://host:port[/STREAM]. Remote workers take jobs through the API with or
    /// without it; with it, an idle one starts a queued job at once instead of at its
    /// next poll.
    #[arg(long)]
    pub queue: Option<String>,
    /// Local worker slots judging queued submissions, one sandbox slot each (default:
    /// the number of CPUs; 0: none, the queue only fills).
    #[arg(long)]
    pub workers: Option<usize>,
    /// The first sandbox slot of the local workers: they use slots K, K+1, …
    /// (uids 60000+K, …). Two judges on one machine need disjoint slots.
    #[arg(long, default_value_t = 0)]
    pub first_slot: u32,
    /// Seed a working site and judge it: an organiser (its token is printed), the four
    /// challenges on data generated with `synth` (in the state folder), an open phase
    /// each, and the example and trivial entries submitted as two teams. Without
    /// --state, a new state folder per run in physiojudge's data folder
    /// ($XDG_DATA_HOME/physiojudge/serve-demo/<UTC time>).
    #[arg(long)]
    pub demo: bool,
    /// With --demo: the seed of the generated data.
    #[arg(long, default_value_t = crate::evaluate_cmd::DEFAULT_SEED, requires = "demo")]
    pub seed: u64,
    /// With --demo: records (patients, subjects) per challenge (default: synth's demo
    /// size).
    #[arg(long, requires = "demo")]
    pub records: Option<usize>,
    /// With --demo: the folder of example entries (default: the checkout's `entries/`).
    #[arg(long, requires = "demo")]
    pub entries: Option<PathBuf>,
    /// This server's name among replicas: several `serve` processes on one PostgreSQL
    /// database and one shared state folder, behind one address (docs/service.md, "A
    /// fleet"). Its local worker is `local-NAME` (so a replica that starts again ends
    /// only its own earlier attempts) and its uploads in progress live in
    /// `incoming/NAME/`. Every replica needs a name of its own. Without it the server
    /// is the only one on its state folder and its local worker is `local`.
    #[arg(long, value_parser = replica_name)]
    pub replica: Option<String>,
    /// Mark the web site's session cookie `Secure` (serve behind https only).
    #[arg(long)]
    pub secure_cookies: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// What one client may take of the server (docs/service.md, "Running it in public").
/// A limit of 0 is no limit.
#[derive(Args)]
pub struct LimitArgs {
    /// Failed sign-ins per user name per minute (then 429).
    #[arg(long, default_value_t = 10)]
    pub login_tries_per_name: u32,
    /// Failed sign-ins per client address per minute, whatever the names.
    #[arg(long, default_value_t = 30)]
    pub login_tries_per_address: u32,
    /// Accounts made at /signup per client address per hour.
    #[arg(long, default_value_t = 20)]
    pub signups_per_address: u32,
    /// Password hashes computed at once (each holds 19 MiB; default: the number of
    /// CPUs).
    #[arg(long)]
    pub hashes_at_once: Option<usize>,
    /// The longest a sign-in or sign-up waits for its password hash, in seconds; past
    /// it, 503 with Retry-After.
    #[arg(long, default_value_t = 5)]
    pub hash_wait_secs: u64,
    /// Live event streams per user.
    #[arg(long, default_value_t = 16)]
    pub streams_per_user: u32,
    /// Live event streams per client address.
    #[arg(long, default_value_t = 64)]
    pub streams_per_address: u32,
    /// The longest a client may take to send a request's head (and a kept-alive
    /// connection may wait for its next request), in seconds.
    #[arg(long, default_value_t = 10)]
    pub header_timeout_secs: u64,
    /// The longest a connection may go without a byte either way, in seconds.
    #[arg(long, default_value_t = 120)]
    pub idle_timeout_secs: u64,
    /// Behind a reverse proxy: the header holding the client's address
    /// (X-Forwarded-For: its last address; X-Real-IP). Set it only when every request
    /// comes through that proxy.
    #[arg(long)]
    pub trusted_proxy_header: Option<String>,
}

impl LimitArgs {
    fn apply(&self, config: &mut server::Config) -> anyhow::Result<()> {
        config.login_tries_per_minute = self.login_tries_per_name;
        config.login_tries_per_address_per_minute = self.login_tries_per_address;
        config.signups_per_address_per_hour = self.signups_per_address;
        config.streams_per_user = self.streams_per_user;
        config.streams_per_address = self.streams_per_address;
        config.connections.header_timeout =
            std::time::Duration::from_secs(self.header_timeout_secs.max(1));
        config.connections.idle_timeout =
            std::time::Duration::from_secs(self.idle_timeout_secs.max(1));
        config.connections.trusted_proxy_header = match &self.trusted_proxy_header {
            Some(h) => Some(h.parse().map_err(|_| {
                crate::output::UsageError(format!(
                    "--trusted-proxy-header {h:?} is not a header name"
                ))
            })?),
            None => None,
        };
        Ok(())
    }
}

/// Raises the soft limit on open files to the hard one: each connection holds one, and
/// the soft limit a service is started with (1024 under systemd) would let a few
/// hundred slow clients keep everyone else out.
fn raise_open_files() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) if soft < hard => match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
            Ok(()) => tracing::info!("open files: soft limit raised from {soft} to {hard}"),
            Err(e) => tracing::warn!("open files: soft limit {soft} kept (raising it: {e})"),
        },
        Ok((soft, _)) => tracing::info!("open files: soft limit {soft} (the hard limit)"),
        Err(e) => tracing::warn!("open files: reading the limit: {e}"),
    }
}

/// The store of a state folder, or of `--database`.
pub async fn open_store(state: &Path, database: Option<&str>) -> anyhow::Result<store::Store> {
    match database {
        Some(url) => store::Store::connect(url)
            .await
            .with_context(|| format!("opening the database {url}")),
        None => store::Store::open(state)
            .await
            .with_context(|| format!("opening the database in {}", state.display())),
    }
}

pub fn run(a: ServeArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let state = match (&a.state, a.demo) {
        (Some(s), _) => s.clone(),
        (None, false) => runtime::data_home().join("serve"),
        (None, true) => crate::output::run_folder("serve-demo", "")?,
    };
    if a.demo {
        if a.workers == Some(0) {
            return Err(crate::output::UsageError(
                "--demo judges its submissions: it needs workers (not --workers 0)".into(),
            )
            .into());
        }
        if !nix::unistd::Uid::effective().is_root() {
            bail!(
                "--demo judges entries in the sandbox, which needs root (namespaces, \
                 cgroups): run it as root"
            );
        }
        crate::demo_cmd::ensure_runtime()?;
    }
    if a.replica.is_some()
        && !a
            .database
            .as_deref()
            .is_some_and(|d| d.starts_with("postgres://") || d.starts_with("postgresql://"))
    {
        // Replicas share one database; a SQLite file belongs to one process.
        return Err(crate::output::UsageError(
            "--replica needs --database postgres://…: replicas share one PostgreSQL database"
                .into(),
        )
        .into());
    }
    let notices: Option<fleet::QueueUrl> = match &a.queue {
        Some(q) => Some(
            q.parse()
                .map_err(|e: fleet::FleetError| crate::output::UsageError(e.to_string()))?,
        ),
        None => None,
    };
    raise_open_files();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async {
        // Workers of another judge build than this one are refused (docs/service.md,
        // "Workers"); the local pool runs this one. Password hashes are bounded before
        // the store is shared (the API's and the site's clones share the bound).
        let hashes = a.limits.hashes_at_once.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        });
        let store = open_store(&state, a.database.as_deref())
            .await?
            .with_build(worker::this_build())
            .with_hashing(
                hashes,
                std::time::Duration::from_secs(a.limits.hash_wait_secs),
            );
        // The local queue, its reconciler (lapsed leases become `error` and queue again)
        // and worker slots (docs/service.md, "Queue and workers"). The server tells the
        // queue of every upload and requeue, so an idle slot starts at once.
        let queue = dispatch::LocalQueue::new(store.clone(), dispatch::QueueConfig::new(&state));
        let _reconciler = queue.spawn_reconciler();
        let mut config = server::Config::new(&state);
        config.max_upload_bytes = a.max_upload_mib.saturating_mul(1 << 20);
        config.replica = a.replica.clone();
        a.limits.apply(&mut config)?;
        let waker = queue.clone();
        config.on_queued = Some(server::OnQueued(std::sync::Arc::new(move || waker.wake())));
        // Remote workers take from the same queue through the API; with --queue, each
        // wake-up also rings them over JetStream.
        config.queue = Some(queue.clone());
        let _ringer = notices.map(|q| AbortOnDrop(ring_when_connected(&queue, q)));
        // The runs' progress for the event streams: the local runs' as the workers'
        // observer hears it, the remote ones' as their heartbeats bring it.
        let progress = Progress::default();
        let seen = progress.clone();
        let remote = queue.clone();
        config.progress = Some(server::ProgressSource(std::sync::Arc::new(move |id| {
            seen.get(id).or_else(|| {
                let (attempt, p) = remote.progress(store::SubmissionId(id))?;
                Some(server::RunProgress {
                    attempt: attempt.number,
                    stage: p.stage?,
                    done: p.done,
                    total: p.total,
                })
            })
        })));
        let server = server::Server::new(store.clone(), config)
            .with_context(|| format!("preparing the state folder {}", state.display()))?;
        let slots = a.workers.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        });
        let _pool = if slots > 0 {
            let end = u32::try_from(slots)
                .ok()
                .and_then(|n| a.first_slot.checked_add(n))
                .context("--workers or --first-slot is too large")?;
            let judge =
                std::sync::Arc::new(crate::evaluate_cmd::judge_with_slots(a.first_slot..end)?);
            let config = worker::Config::new(&state, slots);
            Some(
                worker::Pool::start_local(
                    &queue,
                    &local_worker_name(a.replica.as_deref()),
                    judge,
                    config,
                    Some(progress.observer()),
                )
                .await
                .context("starting the local workers")?,
            )
        } else {
            None
        };
        let listener = tokio::net::TcpListener::bind(a.listen)
            .await
            .with_context(|| format!("listening on {}", a.listen))?;
        let addr = listener.local_addr().unwrap_or(a.listen);
        // The web site serves its pages and passes the API's paths on to the API.
        let site = web::Web::new(
            store.clone(),
            &server,
            web::Config {
                secure_cookies: a.secure_cookies,
                ..web::Config::default()
            },
        );
        writeln!(
            out,
            "physiojudge serving http://{addr}/ and http://{addr}/api/v1 (state {})",
            state.display()
        )?;
        out.flush()?;
        // SIGINT/SIGTERM end the process (main's signal thread): every record is a
        // committed transaction, and unfinished uploads are removed at the next start.
        if a.demo {
            let mut serving = tokio::spawn(site.serve(listener));
            let demo = Demo {
                base: format!("http://{addr}"),
                state: state.clone(),
                seed: a.seed,
                records: a.records,
                entries: a
                    .entries
                    .clone()
                    .unwrap_or_else(crate::demo_cmd::default_entries),
            };
            // Seeding waits for the judging; serving ending first ends both.
            tokio::select! {
                served = &mut serving => served.context("serving")?.context("serving")?,
                seeded = demo.seed(&store, out) => {
                    seeded?;
                    serving.await.context("serving")?.context("serving")?;
                }
            }
        } else {
            site.serve(listener).await.context("serving")?;
        }
        store.close().await;
        Ok(())
    })
}

/// Rings remote workers for each wake-up of `queue` once NATS answers: dialled in the
/// background, and again until it does (meanwhile remote workers poll), so a NATS that
/// is down never keeps the platform from starting.
fn ring_when_connected(
    queue: &dispatch::LocalQueue,
    url: fleet::QueueUrl,
) -> tokio::task::JoinHandle<()> {
    let queue = queue.clone();
    tokio::spawn(async move {
        let mut wait = std::time::Duration::from_secs(1);
        let bell = loop {
            match fleet::Doorbell::connect(&url).await {
                Ok(bell) => break bell,
                Err(e) => tracing::warn!("job notices: {e}; remote workers poll meanwhile"),
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(std::time::Duration::from_secs(60));
        };
        tracing::info!("ringing remote workers on {}/{}", url.server, url.stream);
        // The ringer runs until this task is aborted with its holder.
        let ringer = AbortOnDrop(fleet::spawn_ringer(&queue, bell));
        std::future::pending::<()>().await;
        drop(ringer);
    })
}

/// A task that ends with its holder.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// `--replica`'s name: 1 to 32 lowercase letters, digits and `-` (it names a folder and
/// a worker).
fn replica_name(name: &str) -> Result<String, String> {
    let ok = (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(name.to_owned())
    } else {
        Err(format!(
            "{name:?}: give 1 to 32 lowercase letters, digits and '-'"
        ))
    }
}

/// The server's own worker: `local`, or `local-NAME` for the replica NAME, so that
/// replicas on one database never end each other's attempts when one starts again.
fn local_worker_name(replica: Option<&str>) -> String {
    match replica {
        Some(r) => format!("local-{r}"),
        None => "local".to_owned(),
    }
}

/// The last progress of each running local attempt, by submission.
#[derive(Clone, Default)]
struct Progress(
    std::sync::Arc<std::sync::Mutex<std::collections::HashMap<uuid::Uuid, server::RunProgress>>>,
);

impl Progress {
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<uuid::Uuid, server::RunProgress>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn get(&self, id: uuid::Uuid) -> Option<server::RunProgress> {
        self.lock().get(&id).cloned()
    }

    /// The pool's observer: records each run's progress, forgets it when the job ends.
    fn observer(&self) -> worker::Observer {
        let me = self.clone();
        std::sync::Arc::new(move |e: &worker::Event| match e {
            worker::Event::Progress {
                attempt, progress, ..
            } => {
                if let Some(stage) = &progress.stage {
                    me.lock().insert(
                        attempt.submission.0,
                        server::RunProgress {
                            attempt: attempt.number,
                            stage: stage.clone(),
                            done: progress.done,
                            total: progress.total,
                        },
                    );
                }
            }
            worker::Event::Finished { attempt, .. } => {
                me.lock().remove(&attempt.submission.0);
            }
            _ => {}
        })
    }
}

/// What `serve --demo` seeds, through the server's own HTTP API (as an organiser and
/// two participants would, a third with the MATLAB examples when the Octave runtime is
/// set up), so the site it shows is made the way any site is.
struct Demo {
    base: String,
    state: PathBuf,
    seed: u64,
    records: Option<usize>,
    entries: PathBuf,
}

impl Demo {
    async fn call(
        &self,
        http: &reqwest::Client,
        token: &str,
        path: &str,
        body: Value,
    ) -> anyhow::Result<Value> {
        let r = http
            .post(format!("{}{path}", self.base))
            .bearer_auth(token)
            .json(&body)
            .send()
            .await
            .with_context(|| format!("POST {path}"))?;
        let status = r.status();
        let v: Value = r.json().await.unwrap_or(Value::Null);
        if !status.is_success() {
            bail!("POST {path}: {status}: {}", v["error"]["message"]);
        }
        Ok(v)
    }

    async fn seed(&self, store: &store::Store, out: &mut dyn Write) -> anyhow::Result<()> {
        let http = reqwest::Client::new();
        // The first organiser, as `admin user add` makes it.
        // Passwords too, so that the site can be signed into as each of them.
        let org_password = demo_password()?;
        let org = store
            .create_user("organiser", store::Role::Organiser, Some(&org_password))
            .await
            .context("creating the demo's organiser (--demo needs a fresh state folder)")?;
        let org_token = store
            .issue_token(org.id, "physiojudge serve --demo")
            .await
            .context("issuing the organiser's token")?
            .token;
        writeln!(out, "demo organiser token: {org_token}")?;
        writeln!(
            out,
            "demo organiser password: {org_password} (user organiser)"
        )?;
        // The MATLAB examples (a third team) when the Octave runtime is set up; else
        // the reason they are left out.
        let octave = crate::demo_cmd::octave_for_examples();
        let mut participants = vec![("alice", "Examples"), ("bob", "Trivial")];
        match &octave {
            Ok(()) => participants.push(("carol", "MATLAB examples")),
            Err(why) => writeln!(out, "demo: {why}")?,
        }
        let mut teams = Vec::new();
        for (name, team) in participants {
            let password = demo_password()?;
            let u = self
                .call(
                    &http,
                    &org_token,
                    "/api/v1/users",
                    json!({"name": name, "role": "participant", "password": password}),
                )
                .await?;
            let token = u["token"].as_str().unwrap_or_default().to_owned();
            writeln!(out, "demo participant {name} (team {team}) token: {token}")?;
            writeln!(out, "demo participant {name} password: {password}")?;
            teams.push((team, token));
        }
        out.flush()?;
        let now = chrono_now();
        let data_root = self.state.join("demo-data");
        let entries_root = self.state.join("demo-entries");
        let mut submissions = Vec::new();
        for (id, kind) in crate::demo_cmd::challenges()? {
            let data = data_root.join(id);
            let (seed, records) = (self.seed, self.records);
            let dir = data.clone();
            let summary = tokio::task::spawn_blocking(move || {
                synth::write_challenge(id, &dir, seed, records)
            })
            .await
            .context("generating data")?
            .with_context(|| format!("generating {id} data"))?;
            eprintln!("{summary}");
            let data_path = data
                .canonicalize()
                .with_context(|| format!("{}", data.display()))?;
            self.call(
                &http,
                &org_token,
                "/api/v1/challenges",
                json!({"id": id, "definition": id, "data": data_path.to_string_lossy()}),
            )
            .await?;
            self.call(
                &http,
                &org_token,
                &format!("/api/v1/challenges/{id}/phases"),
                json!({"name": "open", "opens": now.0, "closes": now.1,
                       "scored_split": "exam", "show_exam": true, "rule": "best"}),
            )
            .await?;
            let trivial_dir = entries_root.join(format!("trivial-{id}"));
            crate::demo_cmd::write_trivial(id, kind, &trivial_dir)?;
            let example = crate::demo_cmd::example(id, kind, &self.entries)?;
            let mut entries = vec![(&teams[0], example), (&teams[1], trivial_dir)];
            if let (Some(team), Some(dir)) = (teams.get(2), kind.shipped().matlab_example) {
                entries.push((team, self.entries.join(dir)));
            }
            for ((team, token), entry) in entries {
                self.call(
                    &http,
                    token,
                    "/api/v1/teams",
                    json!({"name": team, "challenge": id}),
                )
                .await?;
                let archive = crate::client_cmd::pack(&entry)?;
                let file = tokio::fs::File::open(archive.path()).await?;
                let size = file.metadata().await?.len();
                let r = http
                    .post(format!("{}/api/v1/challenges/{id}/submissions", self.base))
                    .bearer_auth(token)
                    .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
                    .header(reqwest::header::CONTENT_LENGTH, size)
                    .body(reqwest::Body::from(file))
                    .send()
                    .await
                    .context("uploading a demo entry")?;
                let status = r.status();
                let v: Value = r.json().await.unwrap_or(Value::Null);
                if !status.is_success() {
                    bail!(
                        "uploading {}: {status}: {}",
                        entry.display(),
                        v["error"]["message"]
                    );
                }
                let submission = v["id"].as_str().unwrap_or("?").to_owned();
                writeln!(out, "demo submission {submission} ({id}, team {team})")?;
                submissions.push(submission);
                out.flush()?;
            }
        }
        writeln!(
            out,
            "demo seeded: leaderboards at {}/api/v1/challenges/<id>/leaderboard; follow a \
             submission with `physiojudge status --server {} --token T ID`",
            self.base, self.base
        )?;
        out.flush()?;
        self.wait_judged(&http, &org_token, &submissions, out).await
    }

    /// Waits until every demo submission is final, then says so (with how many scored
    /// and how long the judging took): someone trying the demo learns when the boards are
    /// complete. A submission the server cannot report is waited for again.
    async fn wait_judged(
        &self,
        http: &reqwest::Client,
        token: &str,
        submissions: &[String],
        out: &mut dyn Write,
    ) -> anyhow::Result<()> {
        let started = std::time::Instant::now();
        let mut left: Vec<&String> = submissions.iter().collect();
        let mut scored = 0;
        while !left.is_empty() {
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            let mut still = Vec::new();
            for id in left {
                let state = match http
                    .get(format!("{}/api/v1/submissions/{id}", self.base))
                    .bearer_auth(token)
                    .send()
                    .await
                {
                    Ok(r) => r.json::<Value>().await.ok().map(|v| v["state"].clone()),
                    Err(_) => None,
                };
                match state.as_ref().and_then(Value::as_str) {
                    Some("scored") => scored += 1,
                    Some("failed" | "error" | "withdrawn") => {}
                    _ => still.push(id),
                }
            }
            left = still;
        }
        writeln!(
            out,
            "demo judged: {} submissions final, {scored} scored, in {} s; the boards are at \
             {}/",
            submissions.len(),
            started.elapsed().as_secs(),
            self.base
        )?;
        out.flush()?;
        Ok(())
    }
}

/// The demo phase's opening (a minute ago) and closing (a year on) times, RFC 3339.
fn chrono_now() -> (String, String) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    (rfc3339(now.saturating_sub(60)), rfc3339(now + 365 * 86_400))
}

fn rfc3339(secs: u64) -> String {
    let stamp = crate::output::utc_stamp_secs(secs);
    // YYYYMMDDTHHMMSSZ → YYYY-MM-DDTHH:MM:SSZ
    format!(
        "{}-{}-{}T{}:{}:{}Z",
        &stamp[0..4],
        &stamp[4..6],
        &stamp[6..8],
        &stamp[9..11],
        &stamp[11..13],
        &stamp[13..15]
    )
}

/// A fresh random password for a demo account (16 hex digits), printed once like its
/// token: the demo's accounts can sign in on the site as well as use the API.
fn demo_password() -> anyhow::Result<String> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("random bytes: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
