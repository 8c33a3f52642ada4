//! What the browser tests with real workers share (`judged`, `journey`): an open
//! CinC 2017 challenge on generated data, the platform as `physiojudge serve`
//! assembles it, a judge in sandbox slots, and the `main` of a test binary that is
//! also the sandbox's init program.

use std::ops::Range;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use store::testing::TestStore;
use store::{Backend, Definition};

/// CinC 2017 over a generated data set of 10 records (quick runs) written to `data`,
/// with one phase, "open", from a day ago to a day ahead.
pub async fn open_cinc2017(t: &TestStore, data: &Path) {
    synth::write_challenge("cinc2017", data, 2026, Some(10)).unwrap();
    t.create_challenge(
        "cinc2017",
        "CinC 2017",
        Definition::Builtin("cinc2017".into()),
        data,
    )
    .await
    .unwrap();
    t.create_phase("cinc2017", &super::site::open_phase("open", t.now()))
        .await
        .unwrap();
}

/// The platform as `physiojudge serve` assembles it over `t` and `state`: the local
/// queue (woken by each upload), the API (its event streams fed by `progress` when
/// given) and the site on a free port. No worker yet: the caller starts its pool on the
/// queue. Returns the queue and the site's address.
pub async fn serve(
    t: &TestStore,
    state: &Path,
    progress: Option<server::ProgressSource>,
) -> (dispatch::LocalQueue, String) {
    let mut qc = dispatch::QueueConfig::new(state);
    qc.heartbeat_every = Duration::from_millis(200);
    let queue = dispatch::LocalQueue::new(t.store.clone(), qc);
    let mut config = server::Config::new(state);
    config.events_poll = Duration::from_millis(100);
    let waker = queue.clone();
    config.on_queued = Some(server::OnQueued(Arc::new(move || waker.wake())));
    config.progress = progress;
    let api = server::Server::new(t.store.clone(), config).unwrap();
    let site = web::Web::new(t.store.clone(), &api, web::Config::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(site.serve(listener));
    (queue, base)
}

/// A judge with the tests' Python runtime (made once under the target folder), this
/// binary as its sandbox init program, in sandbox `slots`.
pub fn judge(slots: Range<u32>) -> judge::Judge {
    let runtime_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("runtime");
    let runtime = runtime::setup(&runtime_dir, Path::new(runtime::DEFAULT_PYTHON))
        .expect("the Python runtime");
    let init = sandbox::reexec::this_program().unwrap();
    judge::Judge::new(runtime, init, slots).unwrap()
}

/// The `main` of a test binary that is also the sandbox's init program: runs `test`'s
/// case on each backend the arguments name (all without a name), as root. Without
/// root it skips, or fails when `PHYSIOJUDGE_REQUIRE_DATA=1` says the run must judge.
pub fn main<F, Fut>(test: &str, case: F) -> ExitCode
where
    F: Fn(Backend) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    sandbox::reexec::hook();
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut cases = vec![
        (format!("{test}::sqlite"), Backend::Sqlite),
        (format!("{test}::postgres"), Backend::Postgres),
    ];
    cases.retain(|(name, _)| {
        filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
    });
    if !testkit::root(test) {
        if std::env::var("PHYSIOJUDGE_REQUIRE_DATA").is_ok_and(|v| v == "1") {
            println!("{test}: the sandbox needs root, and PHYSIOJUDGE_REQUIRE_DATA=1");
            return ExitCode::FAILURE;
        }
        println!("0 passed, 0 failed, {} skipped", cases.len());
        return ExitCode::SUCCESS;
    }
    let (mut passed, mut failed) = (0, 0);
    for (name, backend) in cases {
        println!("test {name} ...");
        let started = std::time::Instant::now();
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(4)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(case(backend));
        }))
        .is_ok();
        let took = started.elapsed().as_secs_f64();
        if ok {
            println!("test {name} ... ok ({took:.1} s)");
            passed += 1;
        } else {
            println!("test {name} ... FAILED ({took:.1} s)");
            failed += 1;
        }
    }
    sandbox::shutdown();
    println!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
