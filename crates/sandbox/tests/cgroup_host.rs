//! The cgroup layer on this host's real cgroupfs (v1 on the project's machines, v2 where
//! the host gives v2 its controllers): limits are enforced, accounting is read, and the
//! kill leaves nothing alive. Needs root; says why it skips otherwise.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use sandbox::cgroup::{CgroupLimits, Layout};

fn layout(test: &str) -> Option<Layout> {
    if !nix::unistd::Uid::effective().is_root() {
        eprintln!("{test}: skipped: creating cgroups needs root");
        return None;
    }
    Some(Layout::detect(Path::new("/sys/fs/cgroup")).expect("a cgroup layout on this host"))
}

fn name(test: &str) -> String {
    format!("test-{test}-{}", std::process::id())
}

#[test]
fn kill_all_leaves_nothing_alive() {
    let Some(layout) = layout("kill_all_leaves_nothing_alive") else {
        return;
    };
    let cg = layout
        .create(
            &name("kill"),
            CgroupLimits {
                memory_bytes: 256 << 20,
                pids: 32,
            },
        )
        .unwrap();
    // A shell that starts a background grandchild, then waits: both must die.
    let mut child = Command::new("sh")
        .args(["-c", "sleep 0.3; (sleep 60 &) ; sleep 60"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    cg.add(child.id()).unwrap();
    std::thread::sleep(Duration::from_millis(600));
    let before = cg.procs().unwrap();
    assert!(
        before.len() >= 3,
        "shell, sleep and the background sleep: {before:?}"
    );
    cg.kill_all().unwrap();
    assert!(cg.procs().unwrap().is_empty());
    let status = child.wait().unwrap();
    assert!(!status.success());
    let dirs: Vec<_> = cg.dirs().iter().map(|d| d.to_path_buf()).collect();
    cg.remove().unwrap();
    for d in dirs {
        assert!(!d.exists(), "{} still exists", d.display());
    }
}

#[test]
fn memory_and_pids_limits_are_enforced_and_accounted() {
    let Some(layout) = layout("memory_and_pids_limits_are_enforced_and_accounted") else {
        return;
    };
    let cg = layout
        .create(
            &name("mem"),
            CgroupLimits {
                memory_bytes: 64 << 20,
                pids: 4,
            },
        )
        .unwrap();
    // Joins the cgroup during the sleep, then touches 200 MiB.
    // Debian's Python, not a version-manager shim that forks helpers of its own.
    let mut child = Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import time; time.sleep(0.3); b = bytearray(200 << 20)",
        ])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    cg.add(child.id()).unwrap();
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(cg.oom_kills().unwrap() >= 1, "{status:?}");
    let peak = cg.memory_peak().expect("peak memory on this kernel");
    assert!(peak > 32 << 20 && peak <= 64 << 20, "peak {peak}");
    assert!(cg.cpu_time().unwrap() > Duration::ZERO);

    // Pids: a shell in the cgroup cannot start a fifth process.
    let mut child = Command::new("sh")
        .args([
            "-c",
            "sleep 0.3; for i in 1 2 3 4 5 6; do sleep 5 & done; wait",
        ])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    cg.add(child.id()).unwrap();
    std::thread::sleep(Duration::from_millis(800));
    assert!(cg.procs().unwrap().len() <= 4);
    assert!(cg.pids_limit_hits().unwrap() >= 1);
    cg.kill_all().unwrap();
    child.wait().unwrap();
    cg.remove().unwrap();
}
