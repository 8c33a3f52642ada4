//! `physiojudge sandbox run`: the result record, mounts, usage errors, and a runner killed
//! with SIGKILL leaving nothing behind. Needs root; says why it skips otherwise.

use std::process::{Command, Stdio};
use std::time::Duration;

use testkit::{physiojudge, root};

/// How many host processes run `sleep <marker>`.
fn sleeping(marker: &str) -> usize {
    let o = Command::new("ps").args(["-eo", "args"]).output().unwrap();
    let want = format!("sleep {marker}");
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.trim() == want)
        .count()
}

#[test]
fn json_record_and_mounts() {
    if !root("json_record_and_mounts") {
        return;
    }
    let input = tempfile::tempdir().unwrap();
    std::fs::write(input.path().join("x.txt"), "data\n").unwrap();
    let work = tempfile::tempdir().unwrap();
    let ro = format!("{}:/in", input.path().display());
    let rw = format!("{}:/work", work.path().display());
    let o = physiojudge!(&[
        "sandbox",
        "run",
        "--ro",
        &ro,
        "--rw",
        &rw,
        "--json",
        "--",
        "/bin/sh",
        "-c",
        "cat /in/x.txt; pwd; cp /in/x.txt out.txt; echo no > /in/y 2>/dev/null || echo read-only",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let mut lines: Vec<&str> = text.lines().collect();
    let record: serde_json::Value = serde_json::from_str(lines.pop().unwrap()).unwrap();
    assert_eq!(lines, ["data", "/work", "read-only"]);
    assert_eq!(record["verdict"], "ok");
    assert_eq!(record["exit_code"], 0);
    // A count only where the machine has a hardware counter.
    assert_eq!(
        record["instructions"].as_u64().is_some(),
        sandbox::instructions::available()
    );
    assert_eq!(
        std::fs::read_to_string(work.path().join("out.txt")).unwrap(),
        "data\n"
    );

    let o = physiojudge!(&[
        "sandbox",
        "run",
        "--time",
        "0.2",
        "--json",
        "--",
        "/bin/sh",
        "-c",
        "while :; do :; done",
    ]);
    let record: serde_json::Value = serde_json::from_slice(
        o.stdout
            .trim_ascii_end()
            .rsplit(|&b| b == b'\n')
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(record["verdict"], "time_limit");

    // A program's output without a final newline cannot pass for the record.
    let o = physiojudge!(&[
        "sandbox",
        "run",
        "--json",
        "--",
        "/bin/sh",
        "-c",
        r#"printf '{"verdict":"ok"}'; exit 3"#,
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert_eq!(lines[0], r#"{"verdict":"ok"}"#);
    let record: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(record["verdict"], "runtime_error");
    // Nor can its stderr, when both streams go to one place (`2>&1`).
    let (mut both, to_both) = std::io::pipe().unwrap();
    let mut child = testkit::physiojudge_command!()
        .args(["sandbox", "run", "--json", "--", "/bin/sh", "-c"])
        .arg(r#"printf '{"verdict":"ok"}' >&2; exit 3"#)
        .stdout(to_both.try_clone().unwrap())
        .stderr(to_both)
        .spawn()
        .unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut both, &mut text).unwrap();
    child.wait().unwrap();
    let last = text.lines().last().unwrap_or_default();
    let record: serde_json::Value = serde_json::from_str(last).unwrap_or_default();
    assert_eq!(record["verdict"], "runtime_error", "{text}");

    // Usage errors.
    assert_eq!(
        physiojudge!(&["sandbox", "run", "--ro", "/tmp:relative", "--", "/bin/true"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        physiojudge!(&["sandbox", "run", "--time", "0", "--", "/bin/true"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(physiojudge!(&["sandbox", "run"]).status.code(), Some(2));
}

#[test]
fn a_runner_killed_with_sigkill_leaves_nothing_behind() {
    if !root("a_runner_killed_with_sigkill_leaves_nothing_behind") {
        return;
    }
    let marker = format!("3601.{}", std::process::id());
    let mut runner = testkit::physiojudge_command!()
        .args([
            "sandbox",
            "run",
            "--slot",
            "7",
            "--",
            "/bin/sh",
            "-c",
            &format!("(setsid sleep {marker} &); sleep {marker}"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = runner.id();
    let started = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        sleeping(&marker) == 2
    });
    assert!(started, "the program and its daemon should be running");
    // The runner's spawner for the slot (which forks each run's program) and the slot's
    // init, a fork of the spawner. A one-shot runner makes no next program ahead, and the
    // program itself is `sh` by now. The spawner of a one-shot runner is a fork of it,
    // not `physiojudge __sandbox-init` executed: both carry the runner's command line.
    let ps = Command::new("ps")
        .args(["-eo", "pid=,ppid=,args="])
        .output()
        .unwrap();
    let ps = String::from_utf8_lossy(&ps.stdout);
    let children = |of: u32, args: &str| -> Vec<u32> {
        ps.lines()
            .filter_map(|l| {
                let mut f = l.split_whitespace();
                let (child, parent) = (f.next()?.parse().ok()?, f.next()?.parse::<u32>().ok()?);
                (parent == of && l.contains(args)).then_some(child)
            })
            .collect()
    };
    let spawners = children(pid, " sandbox run ");
    assert_eq!(spawners.len(), 1, "{ps}");
    assert_eq!(
        children(pid, "__sandbox-init"),
        Vec::<u32>::new(),
        "the spawner was executed: {ps}"
    );
    let forks = children(spawners[0], " sandbox run ");
    assert_eq!(forks.len(), 1, "{ps}");
    runner.kill().unwrap();
    runner.wait().unwrap();
    let gone = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        // A zombie is gone too: its reaping is up to the host's init, not ours.
        let running = |p: u32| {
            std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                s.rsplit_once(") ")
                    .is_some_and(|(_, rest)| !rest.starts_with('Z'))
            })
        };
        sleeping(&marker) == 0 && !running(spawners[0]) && !forks.iter().any(|&p| running(p))
    });
    let after = Command::new("ps")
        .args(["-eo", "pid=,ppid=,stat=,args="])
        .output()
        .unwrap();
    assert!(
        gone,
        "processes survived the runner: {}",
        String::from_utf8_lossy(&after.stdout)
    );
    // The next run sweeps the empty cgroups the dead runner left (its slot roots lived
    // in its own mount namespaces: nothing of them is on the host).
    assert!(
        physiojudge!(&["sandbox", "run", "--slot", "7", "--", "/bin/true"])
            .status
            .success()
    );
    let tag = format!("-{pid}-");
    for h in ["memory", "pids", "cpuacct", "freezer", "unified", ""] {
        let dir = std::path::Path::new("/sys/fs/cgroup")
            .join(h)
            .join("physiojudge");
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for e in entries.flatten() {
                let n = e.file_name().to_string_lossy().into_owned();
                assert!(!n.contains(&tag), "left behind: {}", e.path().display());
            }
        }
    }
}

/// A runner started with its standard input and error closed still gives the program
/// its own stdout and stderr (the spawner inherits the gap at 2; descriptors it receives
/// must not be lost to it).
#[test]
fn runner_with_closed_standard_descriptors() {
    if !root("runner_with_closed_standard_descriptors") {
        return;
    }
    let o = Command::new("/bin/sh")
        .arg("-c")
        .arg(r#"exec "$0" sandbox run --json -- /bin/sh -c 'echo out; echo err >&2; exit 3' 0<&- 2>&-"#)
        .arg(env!("CARGO_BIN_EXE_physiojudge"))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    let mut lines: Vec<&str> = text.lines().collect();
    let record: serde_json::Value = serde_json::from_str(lines.pop().unwrap()).unwrap();
    assert_eq!(lines, ["out"], "{text}");
    assert_eq!(record["verdict"], "runtime_error", "{record}");
    assert_eq!(record["exit_code"], 3);
}

/// The spawner of `sandbox run` is a fork of the runner, which holds the caller's
/// environment and descriptors: none of it may reach the program. It sees its own three
/// descriptors, the environment the sandbox gives it (not a variable the runner was
/// started with), loopback only, and cannot read the slot's init (root, a fork of that
/// spawner); a forbidden call ends the run.
#[test]
fn a_one_shot_program_gets_nothing_of_the_runner() {
    if !root("a_one_shot_program_gets_nothing_of_the_runner") {
        return;
    }
    let secret = format!("leak-{}", std::process::id());
    // A descriptor the caller leaves open (not close-on-exec) for the runner to inherit.
    let o = Command::new("/bin/sh")
        .arg("-c")
        .arg(
            r#"exec 7</etc/hostname; exec "$0" sandbox run --json -- /bin/sh -c '
            ls /proc/self/fd | tr "\n" " "; echo
            env | sort | tr "\n" " "; echo
            cat /proc/1/environ >/dev/null 2>&1 && echo init-readable || echo init-closed
            grep -c : /proc/net/dev
            grep -cE ":(memory|pids|cpuacct|freezer):/physiojudge/slot" /proc/self/cgroup'"#,
        )
        .arg(env!("CARGO_BIN_EXE_physiojudge"))
        .env("PHYSIOJUDGE_TEST_SECRET", &secret)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let lines: Vec<&str> = text.lines().collect();
    // `ls` itself opens the folder it lists: one more descriptor, 3.
    assert_eq!(lines[0].trim(), "0 1 2 3", "{text}");
    assert!(
        !text.contains(&secret),
        "the runner's environment leaked: {text}"
    );
    assert!(lines[1].contains("PATH="), "{text}");
    assert_eq!(lines[2], "init-closed", "{text}");
    // `lo` only (its line and the two header lines have no ':' but `lo`'s).
    assert_eq!(lines[3], "1", "{text}");
    // On a host with the cpuacct and freezer v1 controllers (this project's machines),
    // a one-shot run joins four v1 hierarchies, through `tasks`, as its only thread.
    let v1 = |c: &str| {
        std::path::Path::new("/sys/fs/cgroup")
            .join(c)
            .join("tasks")
            .is_file()
    };
    if ["memory", "pids", "cpuacct", "freezer"]
        .iter()
        .all(|c| v1(c))
    {
        assert_eq!(lines[4], "4", "{text}");
    }
    let record: serde_json::Value = serde_json::from_str(lines.last().unwrap()).unwrap();
    assert_eq!(record["verdict"], "ok", "{record}");

    // unshare(CLONE_NEWUSER) is refused by the seccomp filter: the run ends with it.
    let o = physiojudge!(&[
        "sandbox",
        "run",
        "--json",
        "--",
        "/usr/bin/unshare",
        "--user",
        "/bin/true",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    let record: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(record["verdict"], "forbidden_syscall", "{text}");
}
