//! `physiojudge serve`: the platform's HTTP server over its store (docs/service.md,
//! "HTTP API").

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;

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
    /// Local worker slots judging queued submissions, one sandbox slot each (default:
    /// the number of CPUs; 0: none, the queue only fills).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Mark the web site's session cookie `Secure` (serve behind https only).
    #[arg(long)]
    pub secure_cookies: bool,
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
    let state = a
        .state
        .unwrap_or_else(|| runtime::data_home().join("serve"));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async {
        let store = open_store(&state, a.database.as_deref()).await?;
        // The local queue, its reconciler (lapsed leases become `error` and queue again)
        // and worker slots (docs/service.md, "Queue and workers"). The server tells the
        // queue of every upload and requeue, so an idle slot starts at once.
        let queue = dispatch::LocalQueue::new(store.clone(), dispatch::QueueConfig::new(&state));
        let _reconciler = queue.spawn_reconciler();
        let mut config = server::Config::new(&state);
        config.max_upload_bytes = a.max_upload_mib.saturating_mul(1 << 20);
        let waker = queue.clone();
        config.on_queued = Some(server::OnQueued(std::sync::Arc::new(move || waker.wake())));
        let server = server::Server::new(store.clone(), config)
            .with_context(|| format!("preparing the state folder {}", state.display()))?;
        let slots = a.workers.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        });
        let _pool = if slots > 0 {
            let slots_u32 = u32::try_from(slots).context("--workers is too large")?;
            let judge = std::sync::Arc::new(crate::evaluate_cmd::judge_with_slots(0..slots_u32)?);
            let config = worker::Config::new(&state, slots);
            Some(
                worker::Pool::start_local(&queue, "local", judge, config, None)
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
        site.serve(listener).await.context("serving")?;
        store.close().await;
        Ok(())
    })
}
