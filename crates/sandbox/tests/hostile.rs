//! The hostile-entry suite: each test really runs an attack (or a plain program) in the
//! sandbox and asserts the exact verdict. Needs root (namespaces, cgroups, mounts); says
//! why it skips otherwise.

use std::time::Duration;

use sandbox::{InitProgram, RunConfig, Verdict, run};

fn config(test: &str, argv: &[&str]) -> Option<RunConfig> {
    if !nix::unistd::Uid::effective().is_root() {
        eprintln!("{test}: skipped: the sandbox needs root");
        return None;
    }
    let init = InitProgram {
        path: env!("CARGO_BIN_EXE_physiojudge-sandbox-init").into(),
        args: Vec::new(),
    };
    let mut cfg = RunConfig::new(argv.iter().map(|s| s.to_string()).collect(), init);
    cfg.limits.wall_time = Duration::from_secs(10);
    cfg.limits.cpu_time = Duration::from_secs(5);
    Some(cfg)
}

fn sh(test: &str, script: &str) -> Option<RunConfig> {
    config(test, &["/bin/sh", "-c", script])
}

#[test]
fn true_is_ok_and_exit_status_is_a_runtime_error() {
    let Some(cfg) = config("true_is_ok", &["/bin/true"]) else {
        return;
    };
    let r = run(&cfg);
    assert_eq!(r.result.verdict, Verdict::Ok, "{:?}", r.result);
    assert_eq!(r.result.exit_code, Some(0));
    let cfg = sh("exit_status", "echo out; echo err >&2; exit 3").unwrap();
    let r = run(&cfg);
    assert_eq!(r.result.verdict, Verdict::RuntimeError, "{:?}", r.result);
    assert_eq!(r.result.exit_code, Some(3));
    assert_eq!(
        (r.stdout.as_slice(), r.stderr.as_slice()),
        (&b"out\n"[..], &b"err\n"[..])
    );
}
