//! `physiojudge evaluate` end to end, on the real data: the example entries are scored
//! exactly as `physiojudge score` scores their outputs, and hostile or broken entries get
//! the documented outcome. Needs root and builds the runtime (once, in target/tmp).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

/// The runtime (in target/tmp, where `testkit::physiojudge!` points every run), set up
/// once per test binary.
fn runtime_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let o = testkit::physiojudge!(["runtime", "setup"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("runtime")
    })
    .clone()
}

/// `physiojudge ARGS…` with the runtime set up.
fn physiojudge(args: &[&str]) -> Output {
    runtime_dir();
    testkit::physiojudge!(args)
}

fn root_and_data(test: &str) -> Option<PathBuf> {
    if !testkit::root(test) {
        return None;
    }
    testkit::shared_data(test)
}

fn repo() -> PathBuf {
    testkit::workspace_root()
}

/// Runs `evaluate --json` and returns (result, result folder, exit status, stderr).
fn evaluate(
    challenge: &str,
    entry: &Path,
    data: &Path,
    extra: &[&str],
) -> (Value, tempfile::TempDir, Output) {
    let out = tempfile::tempdir().unwrap();
    let dest = out.path().join("result");
    let mut args = vec![
        "evaluate",
        "--challenge",
        challenge,
        "--entry",
        entry.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--out",
        dest.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    let o = physiojudge(&args);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let v: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&o.stderr)));
    let on_disk: Value =
        serde_json::from_slice(&std::fs::read(dest.join("result.json")).unwrap()).unwrap();
    assert_eq!(v, on_disk);
    (v, out, o)
}

fn stage<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stage"] == name)
        .unwrap_or_else(|| panic!("no stage {name} in {r}"))
}

fn exam_ids(result_dir: &Path) -> Vec<String> {
    let v: Value = serde_json::from_slice(
        &std::fs::read(result_dir.join("result/private/exam-records.json")).unwrap(),
    )
    .unwrap();
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r["record"].as_str().unwrap().to_string())
        .collect()
}

fn score_json(args: &[&str]) -> Value {
    let o = physiojudge(args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Runs the example entry of `challenge` on `data` and checks that it is scored, that its
/// exam score is `physiojudge score`'s on the kept exam outputs over the exam records
/// alone, and that the participant's view names no exam record.
fn example_scores_as_the_scorer_says(challenge: &str, data: &Path) {
    let (r, dir, o) = evaluate(
        challenge,
        &repo().join("entries").join(challenge),
        data,
        &[],
    );
    assert!(o.status.success(), "{r}");
    assert_eq!(r["verdict"], "scored", "{r}");
    let ids = exam_ids(dir.path());
    let outputs = dir.path().join("result/private/exam-outputs");
    let reference = tempfile::tempdir().unwrap();
    let link = |name: String| {
        std::os::unix::fs::symlink(data.join(&name), reference.path().join(&name)).unwrap()
    };
    let s = match challenge {
        "cpsc2021" => {
            for id in &ids {
                for ext in ["hea", "atr", "dat"] {
                    link(format!("{id}.{ext}"));
                }
            }
            std::fs::write(reference.path().join("RECORDS"), ids.join("\n")).unwrap();
            score_json(&[
                "score",
                "cpsc2021",
                "--reference",
                reference.path().to_str().unwrap(),
                "--predictions",
                outputs.to_str().unwrap(),
                "--json",
            ])
        }
        "cinc2017" => {
            let subset: String = std::fs::read_to_string(data.join("REFERENCE.csv"))
                .unwrap()
                .lines()
                .filter(|l| ids.iter().any(|id| l.starts_with(&format!("{id},"))))
                .map(|l| format!("{l}\n"))
                .collect();
            let csv = reference.path().join("REFERENCE.csv");
            std::fs::write(&csv, subset).unwrap();
            let quiz_log =
                std::fs::read_to_string(dir.path().join("result/logs/quiz.log")).unwrap();
            assert!(
                quiz_log.contains("answers match the submitted answers.txt"),
                "{quiz_log}"
            );
            score_json(&[
                "score",
                "cinc2017",
                "--reference",
                csv.to_str().unwrap(),
                "--answers",
                outputs.join("answers.txt").to_str().unwrap(),
                "--json",
            ])
        }
        _ => {
            assert_eq!(stage(&r, "train")["status"], "passed");
            for id in &ids {
                link(format!("{id}.txt"));
            }
            let s = score_json(&[
                "score",
                "physionet2022",
                "--labels",
                reference.path().to_str().unwrap(),
                "--outputs",
                outputs.to_str().unwrap(),
                "--json",
            ]);
            assert_eq!(exam_report(dir.path())["outcome_cost"], s["outcome_cost"]);
            assert_eq!(ranked(&r, "outcome_cost"), at_precision(&s["outcome_cost"]));
            s
        }
    };
    // The organiser's report holds the scorer's own figure; the participant sees it at
    // the challenge's precision and nothing else of the exam's figures.
    assert_eq!(exam_report(dir.path())["score"], s["score"], "{r}\n{s}");
    assert_eq!(r["score"], at_precision(&s["score"]), "{r}\n{s}");
    assert_eq!(ranked(&r, "score"), r["score"]);
    // Quiz items show what the entry answered, not the reference (the quiz split is not
    // declared public); the organiser's copy has everything.
    let items = r["quiz_score"]["report"]["items"].as_array().unwrap();
    assert!(!items.is_empty(), "{r}");
    for key in [
        "class_true",
        "reference",
        "murmur_label",
        "outcome_label",
        "u",
        "mr",
    ] {
        assert!(
            items.iter().all(|i| i.get(key).is_none()),
            "{key} shown: {r}"
        );
    }
    let private_quiz: Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("result/private/quiz-score.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(private_quiz["items"].as_array().unwrap().len(), items.len());
    let exam_stage = stage(&r, "exam");
    let t = exam_stage["wall_time_s"].as_f64().unwrap();
    assert_eq!(
        t,
        t.round(),
        "the exam's time is shown in whole seconds: {r}"
    );
    let shown = std::fs::read_to_string(dir.path().join("result/result.json")).unwrap();
    for id in &ids {
        assert!(!shown.contains(&format!("\"{id}\"")), "{id} leaked");
    }
    assert!(!dir.path().join("result/logs/exam.log").exists());
}

#[test]
fn example_entries_on_the_real_data() {
    let Some(data) = root_and_data("example_entries_on_the_real_data") else {
        return;
    };
    for (challenge, sub) in [
        ("cpsc2021", "cpsc2021"),
        ("cinc2017", "cinc2017"),
        ("physionet2022", "circor2022/training_data"),
    ] {
        example_scores_as_the_scorer_says(challenge, &data.join(sub));
    }
}

#[test]
fn example_entries_on_synth_data() {
    if !testkit::root("example_entries_on_synth_data") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for challenge in ["cpsc2021", "cinc2017", "physionet2022"] {
        let data = dir.path().join(challenge);
        let o = physiojudge(&[
            "synth",
            challenge,
            "--out",
            data.to_str().unwrap(),
            "--seed",
            "7",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        example_scores_as_the_scorer_says(challenge, &data);
    }
}

/// A per-record (cinc2017) entry made of shell scripts.
fn shell_entry(next_sh: &str, setup_sh: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("next.sh", next_sh),
        ("setup.sh", setup_sh),
        ("answers.txt", "none,N\n"),
        ("dependencies.txt", "# nothing\n"),
        ("AUTHORS.txt", "test\n"),
        ("LICENSE.txt", "MIT\n"),
    ] {
        std::fs::write(d.path().join(name), text).unwrap();
    }
    d
}

/// A challenge file: the built-in one with some lines replaced.
fn challenge_file(id: &str, replace: &[(&str, &str)]) -> tempfile::NamedTempFile {
    let mut text =
        std::fs::read_to_string(repo().join(format!("challenges/{id}/challenge.toml"))).unwrap();
    for (a, b) in replace {
        assert!(text.contains(a), "{a}");
        text = text.replace(a, b);
    }
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), text).unwrap();
    f
}

/// A challenge definition that cannot be used is the caller's input: exit 1 with the file
/// named, before anything runs (no root, runtime or data needed). One test per case.
fn refused_definition(definition: &Path, why: &str) {
    let entry = tempfile::tempdir().unwrap();
    let def = definition.to_str().unwrap();
    let o = testkit::physiojudge!([
        "evaluate",
        "--challenge",
        "cinc2017",
        "--challenge-file",
        def,
        "--entry",
        entry.path().to_str().unwrap(),
        "--data",
        entry.path().to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", testkit::text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(def) && err.contains(why), "{err}");
    assert!(!err.contains("not the entry's fault"), "{err}");
}

#[test]
fn a_definition_with_memory_out_of_range_exits_1_naming_the_file() {
    let f = challenge_file("cinc2017", &[("memory_mb = ", "memory_mb = 0 # ")]);
    refused_definition(f.path(), "limits.memory_mb = 0 is not in 1..=");
}

#[test]
fn dev_zero_as_the_definition_exits_1_naming_it() {
    refused_definition(Path::new("/dev/zero"), "not a regular file");
}

/// What a participant's terminal shows when stderr is not one (a pipe, as in CI logs):
/// plain progress lines with the stage, records done of total and the elapsed time; the
/// summary's numbers only for stages that were scored.
#[test]
fn progress_is_plain_lines_when_stderr_is_not_a_terminal() {
    let Some(data) = root_and_data("progress_is_plain_lines") else {
        return;
    };
    let data = data.join("cinc2017");
    let summary = |entry: &Path| {
        let out = tempfile::tempdir().unwrap();
        let o = physiojudge(&[
            "evaluate",
            "--challenge",
            "cinc2017",
            "--entry",
            entry.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
            "--out",
            out.path().join("result").to_str().unwrap(),
        ]);
        let said = String::from_utf8_lossy(&o.stderr).into_owned();
        (String::from_utf8_lossy(&o.stdout).into_owned(), said)
    };
    let e = shell_entry("echo \"$1,N\" >> answers.txt\n", "true\n");
    let (stdout, said) = summary(e.path());
    let lines: Vec<&str> = said.lines().map(str::trim).collect();
    assert!(
        lines.iter().any(|l| l.starts_with("quiz: started, ")),
        "{said}"
    );
    // The last record of a stage always gets its line: `quiz: N/N records, T s`.
    assert!(
        lines.iter().any(|l| {
            l.strip_prefix("quiz: ")
                .and_then(|l| l.strip_suffix(" s"))
                .and_then(|l| l.split_once(" records, "))
                .and_then(|(done, _)| done.split_once('/'))
                .is_some_and(|(d, t)| d == t && d.parse::<u32>().is_ok())
        }),
        "{said}"
    );
    assert!(stdout.contains("quiz score "), "{stdout}");
    assert!(
        stdout.lines().any(|l| l.starts_with("exam score")),
        "{stdout}"
    );

    // A quiz that fails: no quiz number, and the exam is not scored.
    let e = shell_entry("echo boom >&2; exit 7\n", "true\n");
    let (stdout, said) = summary(e.path());
    assert!(!stdout.contains("quiz score"), "{stdout}");
    assert!(stdout.contains("not scored"), "{stdout}");
    assert!(
        said.contains("boom") && said.contains("logs/quiz.log"),
        "{said}"
    );
}

#[test]
fn broken_per_record_entries_get_their_documented_outcome() {
    let Some(data) = root_and_data("broken_per_record_entries") else {
        return;
    };
    let data = data.join("cinc2017");
    let answer = "echo \"$1,N\" >> answers.txt\n";

    // A required file missing: prep fails and lists it; an empty AUTHORS.txt (optional
    // for the built-in challenges) is a warning.
    let e = shell_entry(answer, "true\n");
    std::fs::remove_file(e.path().join("LICENSE.txt")).unwrap();
    std::fs::write(e.path().join("AUTHORS.txt"), "").unwrap();
    let (r, _d, o) = evaluate("cinc2017", e.path(), &data, &[]);
    assert!(!o.status.success());
    let prep = stage(&r, "prep");
    assert_eq!(prep["status"], "failed");
    assert_eq!(prep["reason"]["kind"], "missing_files");
    assert_eq!(prep["reason"]["files"], serde_json::json!(["LICENSE.txt"]));
    assert!(
        r["warnings"][0]
            .as_str()
            .is_some_and(|w| w.starts_with("AUTHORS.txt is missing or empty")),
        "{r}"
    );
    assert_eq!(r["verdict"], "failed");
    assert!(r["score"].is_null());
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing"));

    // setup.sh failing, and running past its limit.
    let e = shell_entry(answer, "echo building >&2; exit 3\n");
    let (r, dir, _) = evaluate("cinc2017", e.path(), &data, &[]);
    let prep = stage(&r, "prep");
    assert_eq!(prep["reason"]["kind"], "setup", "{r}");
    assert_eq!(prep["reason"]["verdict"], "runtime_error");
    assert_eq!(prep["reason"]["exit_code"], 3);
    let log = std::fs::read_to_string(dir.path().join("result/logs/prep.log")).unwrap();
    assert!(log.contains("building"), "{log}");
    let quick = challenge_file("cinc2017", &[("setup_time_s = 300", "setup_time_s = 1")]);
    let e = shell_entry(answer, "sleep 30\n");
    let (r, _d, _) = evaluate(
        "cinc2017",
        e.path(),
        &data,
        &["--challenge-file", quick.path().to_str().unwrap()],
    );
    assert_eq!(
        stage(&r, "prep")["reason"]["verdict"],
        "wall_time_limit",
        "{r}"
    );

    // Crashing on the quiz's second record: the quiz stops there, with diagnostics.
    let crash_second = "n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count\n\
                        if [ $n = 2 ]; then echo \"boom on $1\" >&2; exit 7; fi\n\
                        echo \"$1,N\" >> answers.txt\n";
    let e = shell_entry(crash_second, "true\n");
    let (r, dir, o) = evaluate("cinc2017", e.path(), &data, &[]);
    let quiz = stage(&r, "quiz");
    assert_eq!(quiz["status"], "failed");
    assert_eq!(quiz["reason"]["kind"], "run");
    // The participant is told the error and where the whole log is.
    let last = quiz["reason"]["last_line"].as_str().unwrap();
    assert!(last.starts_with("boom on "), "{r}");
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains(last) && said.contains("logs/quiz.log"),
        "{said}"
    );
    let records = quiz["records"].as_array().unwrap();
    assert_eq!(records[0]["state"], "ok");
    assert_eq!(records[1]["state"], "failed");
    assert_eq!(records[1]["verdict"], "runtime_error");
    assert!(records[2..].iter().all(|x| x["state"] == "not_run"));
    assert_eq!(quiz["reason"]["record"], records[1]["record"]);
    assert_eq!(stage(&r, "exam")["status"], "skipped");
    let log = std::fs::read_to_string(dir.path().join("result/logs/quiz.log")).unwrap();
    assert!(log.contains("boom on"), "{log}");

    // Crashing on one exam record and sleeping past the limit on another: the exam
    // goes on, the participant gets counts only, the records get the default answer.
    let quiz_n = r["split"]["quiz"].as_u64().unwrap();
    let exam_trouble = format!(
        "n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count\n\
         if [ $n = {} ]; then echo \"secret $1\" >&2; exit 7; fi\n\
         if [ $n = {} ]; then sleep 30; fi\n\
         echo \"$1,N\" >> answers.txt\n",
        quiz_n + 3,
        quiz_n + 5
    );
    let short = challenge_file(
        "cinc2017",
        &[
            ("record_cpu_s = 30", "record_cpu_s = 2"),
            ("record_wall_s = 60", "record_wall_s = 2"),
        ],
    );
    let e = shell_entry(&exam_trouble, "true\n");
    let (r, dir, o) = evaluate(
        "cinc2017",
        e.path(),
        &data,
        &["--challenge-file", short.path().to_str().unwrap()],
    );
    assert!(o.status.success(), "{r}");
    assert_eq!(r["verdict"], "scored");
    let exam = stage(&r, "exam");
    assert_eq!(exam["status"], "passed");
    assert!(exam.get("records").is_none());
    assert_eq!(exam["counts"]["failures"], 1, "{exam}");
    assert_eq!(exam["counts"]["timeouts"], 1, "{exam}");
    assert!(exam.get("log").is_none());
    let shown = std::fs::read_to_string(dir.path().join("result/result.json")).unwrap();
    assert!(!shown.contains("secret"));
    let private = std::fs::read_to_string(dir.path().join("result/private/exam.log")).unwrap();
    assert!(private.contains("secret"));
}

#[test]
fn malformed_output_and_label_snooping_in_a_folder_entry() {
    let Some(data) = root_and_data("malformed_output_and_label_snooping") else {
        return;
    };
    let data = data.join("cpsc2021");
    let e = tempfile::tempdir().unwrap();
    for (name, text) in [("AUTHORS.txt", "t\n"), ("LICENSE.txt", "MIT\n")] {
        std::fs::write(e.path().join(name), text).unwrap();
    }
    // Looks everywhere it can for the labels (annotation files, class comments, the
    // host's data folder) and says what it found; writes one malformed output.
    let snoop = format!(
        r#"import os, sys
data, out = sys.argv[1], sys.argv[2]
found = []
for top in ["/", "{host}"]:
    for root, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys", "/runtime", "/usr")]
        for f in files:
            p = os.path.join(root, f)
            if f.endswith(".atr") or f == "REFERENCE.csv":
                found.append(p)
            elif f.endswith(".hea"):
                try:
                    if "fibrillation" in open(p).read():
                        found.append(p)
                except OSError:
                    pass
print("FOUND" if found else "nothing found", found)
names = open(os.path.join(data, "RECORDS")).read().split()
for i, n in enumerate(names):
    if i == 1:
        os.symlink("/etc/shadow", os.path.join(out, n + ".json"))
        continue
    with open(os.path.join(out, n + ".json"), "w") as f:
        f.write("{{not json" if i == 0 else '{{"predict_endpoints": []}}')
"#,
        host = data.display()
    );
    std::fs::write(e.path().join("entry_2021.py"), snoop).unwrap();
    let (r, dir, _) = evaluate("cpsc2021", e.path(), &data, &[]);
    let quiz = stage(&r, "quiz");
    assert_eq!(quiz["status"], "failed", "{r}");
    assert_eq!(quiz["reason"]["kind"], "output");
    let records = quiz["records"].as_array().unwrap();
    assert_eq!(records[0]["state"], "invalid_output", "{quiz}");
    assert_eq!(records[1]["state"], "missing_output", "{quiz}");
    assert!(records[2..].iter().all(|x| x["state"] == "ok"));
    let log = std::fs::read_to_string(dir.path().join("result/logs/quiz.log")).unwrap();
    assert!(log.contains("nothing found []"), "{log}");
    assert!(log.contains(".json not taken: is a symbolic link"), "{log}");
}

#[test]
fn hostile_archives_are_refused_in_prep() {
    let Some(data) = root_and_data("hostile_archives") else {
        return;
    };
    let data = data.join("cinc2017");
    let dir = tempfile::tempdir().unwrap();
    // Built with the system Python's zipfile: a member escaping with '..', and a bomb
    // (600 MiB of zeros, under 1 MiB packed).
    let script = r#"import sys, zipfile
slip, bomb = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(slip, "w") as z:
    z.writestr("next.sh", "echo hi")
    z.writestr("../../escaped.txt", "x")
with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
    with z.open("big.bin", "w", force_zip64=True) as f:
        block = bytes(1 << 20)
        for _ in range(600):
            f.write(block)
"#;
    let slip = dir.path().join("slip/entry.zip");
    let bomb = dir.path().join("bomb/entry.zip");
    std::fs::create_dir_all(slip.parent().unwrap()).unwrap();
    std::fs::create_dir_all(bomb.parent().unwrap()).unwrap();
    let o = Command::new("/usr/bin/python3")
        .args(["-c", script, slip.to_str().unwrap(), bomb.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::metadata(&bomb).unwrap().len() < 1 << 20);

    let (r, _d, o) = evaluate("cinc2017", &slip, &data, &[]);
    assert!(!o.status.success());
    let prep = stage(&r, "prep");
    assert_eq!(prep["reason"]["kind"], "unpack", "{r}");
    assert!(
        prep["reason"]["message"]
            .as_str()
            .unwrap()
            .contains("escaped.txt")
    );
    assert!(!dir.path().join("escaped.txt").exists());

    let (r, _d, _) = evaluate("cinc2017", &bomb, &data, &[]);
    let prep = stage(&r, "prep");
    assert_eq!(prep["reason"]["kind"], "unpack", "{r}");
    assert!(
        prep["reason"]["message"]
            .as_str()
            .unwrap()
            .contains("more than"),
        "{r}"
    );
}

/// Without `--out`, every run writes to a fresh folder of its own in physiojudge's data
/// folder (`$XDG_DATA_HOME/physiojudge/evaluate/`) and says where.
#[test]
fn default_result_folders_are_fresh_and_in_the_data_folder() {
    let Some(data) = root_and_data("default_result_folders") else {
        return;
    };
    runtime_dir();
    let home = tempfile::tempdir().unwrap();
    let entry = tempfile::tempdir().unwrap();
    let run = |json: bool| {
        let mut c = testkit::physiojudge_command!();
        c.args(["evaluate", "--challenge", "cinc2017", "--entry"])
            .arg(entry.path())
            .arg("--data")
            .arg(data.join("cinc2017"))
            .env("XDG_DATA_HOME", home.path());
        if json {
            c.arg("--json");
        }
        let o = testkit::output(&mut c);
        // An empty entry fails prep (missing files), after its result is written.
        assert_eq!(o.status.code(), Some(1), "{}", testkit::text(&o));
        o
    };
    let o = run(false);
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    let result = stdout
        .lines()
        .find_map(|l| l.strip_prefix("result"))
        .map(|p| PathBuf::from(p.trim()))
        .unwrap_or_else(|| panic!("no result line: {stdout}"));
    let first = result.parent().unwrap();
    assert_eq!(
        first.parent().unwrap(),
        home.path().join("physiojudge/evaluate")
    );
    let name = first.file_name().unwrap().to_string_lossy();
    assert!(
        name.starts_with("cinc2017-") && name.ends_with('Z'),
        "{name}"
    );
    assert!(result.is_file(), "{stdout}");

    let o = run(true);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    let second = stderr
        .lines()
        .find_map(|l| l.strip_prefix("result folder: "))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no result folder on stderr: {stderr}"));
    assert_ne!(first, second);
    assert_eq!(first.parent(), second.parent());
    assert!(second.join("result.json").is_file());
}

/// `p300 synth` into `dir/name`.
fn p300_data(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    let data = dir.join(name);
    let mut all = vec!["p300", "synth", "--out", data.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = physiojudge(&all);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    data
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            if e.file_name() != "__pycache__" {
                copy_dir(&e.path(), &dest);
            }
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// The organiser's full exam report (the participant sees the ranking numbers only).
fn exam_report(dir: &Path) -> Value {
    let p = dir.join("result/private/exam-score.json");
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// A ranking number as `result.json` shows it.
fn ranked(r: &Value, key: &str) -> Value {
    r["exam_score"]["ranking"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["key"] == key)
        .unwrap_or_else(|| panic!("no ranking number {key} in {r}"))["value"]
        .clone()
}

/// `x` at the default precision of 3 decimals, as the judge rounds.
fn at_precision(x: &Value) -> Value {
    let x = x.as_f64().unwrap();
    format!("{x:.3}").parse::<f64>().unwrap().into()
}

fn exam_session(dir: &tempfile::TempDir) -> Value {
    let p = dir.path().join("result/private/exam-outputs/session.json");
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

#[test]
fn p300_baseline_streams_reproducibly_and_beats_waiting_for_every_sequence() {
    if !testkit::root("p300_baseline_streams") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let data = p300_data(
        tmp.path(),
        "data",
        &[
            "--subjects",
            "6",
            "--seed",
            "11",
            "--chars",
            "16",
            "--snr",
            "3",
        ],
    );
    let baseline = repo().join("entries/p300speller");
    let waiting = tmp.path().join("waiting");
    copy_dir(&baseline, &waiting);
    let settings = waiting.join("AlgorithmImplement/settings.py");
    let text = std::fs::read_to_string(&settings).unwrap();
    assert!(text.contains("DYNAMIC_STOPPING = True"), "{text}");
    std::fs::write(
        &settings,
        text.replace("DYNAMIC_STOPPING = True", "DYNAMIC_STOPPING = False"),
    )
    .unwrap();

    let (r, dir, o) = evaluate("p300speller", &baseline, &data, &[]);
    assert!(o.status.success(), "{r}");
    assert_eq!(r["verdict"], "scored", "{r}");
    assert_eq!(stage(&r, "train")["status"], "passed", "{r}");
    assert_eq!(stage(&r, "quiz")["status"], "skipped", "{r}");
    assert_eq!(r["split"]["exam"], 3, "{r}");
    // The participant sees the ranking number only: no accuracy, no per-subject table,
    // no session log.
    assert_eq!(
        r["exam_score"]["ranking"].as_array().unwrap().len(),
        1,
        "{r}"
    );
    let shown = exam_report(dir.path());
    let dynamic = shown["score"].as_f64().unwrap();
    assert!(shown["accuracy"].as_f64().unwrap() > 0.5, "{r}");
    let session = exam_session(&dir);
    assert_eq!(session["trials"].as_array().unwrap().len(), 3 * 16);
    assert_eq!(session["finished"], true);
    assert_eq!(session["summary"]["score"], shown["score"]);
    assert_eq!(r["score"], at_precision(&shown["score"]));

    let (w, wdir, o) = evaluate("p300speller", &waiting, &data, &[]);
    assert!(o.status.success(), "{w}");
    let wshown = exam_report(wdir.path());
    let waited = wshown["score"].as_f64().unwrap();
    assert!(
        dynamic > waited,
        "dynamic stopping {dynamic} (mean {} s per trial) should beat waiting for all 5 \
         sequences {waited} ({} s)",
        shown["mean_trial_seconds"],
        wshown["mean_trial_seconds"]
    );
    // Waiting for every sequence takes the whole 9 s on every trial it answers in time.
    assert!(wshown["mean_trial_seconds"].as_f64().unwrap() > 8.9, "{w}");

    // The same entry on the same data: the same reports, at the same points.
    let (again, dir2, _) = evaluate("p300speller", &baseline, &data, &[]);
    assert_eq!(again["score"], r["score"]);
    assert_eq!(exam_session(&dir2)["log"], session["log"]);
}

/// A stream entry: the given `AlgorithmImplement.py` and `config.toml`.
fn stream_entry(algorithm: &str, config: &str) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("AlgorithmImplement")).unwrap();
    std::fs::write(
        d.path().join("AlgorithmImplement/AlgorithmImplement.py"),
        algorithm,
    )
    .unwrap();
    std::fs::write(d.path().join("config.toml"), config).unwrap();
    d
}

#[test]
fn broken_stream_entries_get_their_documented_outcome() {
    if !testkit::root("broken_stream_entries") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let data = p300_data(
        tmp.path(),
        "data",
        &["--subjects", "2", "--seed", "3", "--chars", "2"],
    );
    // A quiz (full diagnostics) and a small compute budget: 2 + 2 s per subject.
    let challenge = challenge_file(
        "p300speller",
        &[
            (
                "training = 0.5\nquiz = 0.0\nexam = 0.5",
                "training = 0.0\nquiz = 0.5\nexam = 0.5",
            ),
            ("record_cpu_s = 60", "record_cpu_s = 2"),
            ("startup_s = 30", "startup_s = 2"),
        ],
    );
    let file = challenge.path().to_str().unwrap();
    let run = |entry: &tempfile::TempDir| {
        evaluate(
            "p300speller",
            entry.path(),
            &data,
            &["--challenge-file", file],
        )
    };
    let header = "from physiojudge_stream import AlgorithmInterface, ReportModel\n\
                  class AlgorithmImplement(AlgorithmInterface):\n    def run(self):\n";

    // A misspelt key in config.toml.
    let e = stream_entry(header, "unitImage = \"x\"\ncomand = [\"./a\"]\n");
    let (r, _d, o) = run(&e);
    assert!(!o.status.success());
    let reason = &stage(&r, "prep")["reason"];
    assert_eq!(reason["kind"], "config", "{r}");
    assert!(
        reason["message"]
            .as_str()
            .unwrap()
            .contains("line 2: unknown field `comand`"),
        "{r}"
    );

    // Spinning forever: the budget is exceeded, the run is invalid, there is no score.
    let e = stream_entry(
        &format!("{header}        while True:\n            pass\n"),
        "unitImage = \"python:3\"\n",
    );
    let (r, _d, _) = run(&e);
    let reason = &stage(&r, "quiz")["reason"];
    assert_eq!(reason["kind"], "compute_budget", "{r}");
    assert_eq!(reason["budget_s"], 4.0, "{r}");
    assert!(r["quiz_score"].is_null(), "{r}");

    // Junk on the wire, from an entry of its own (no Python client).
    let e = stream_entry(
        header,
        "command = [\"python3\", \"-c\", \"import sys; sys.stdout.buffer.write(b'\\\\x05\\\\x00\\\\x00\\\\x00Zjunk'); sys.stdout.flush(); sys.stdin.buffer.read()\"]\n",
    );
    let (r, _d, _) = run(&e);
    let reason = &stage(&r, "quiz")["reason"];
    assert_eq!(reason["kind"], "protocol", "{r}");
    assert!(
        reason["message"]
            .as_str()
            .unwrap()
            .contains("unknown frame kind 0x5a at byte 0"),
        "{r}"
    );

    // Prints go to stderr, not into the protocol; looking for the data's labels finds
    // nothing (the blocks exist only on the host); a crash mid-session fails the quiz,
    // whose score still counts what was reported (nothing: ITR 0).
    let e = stream_entry(
        &format!(
            "{header}        import os, sys\n\
             \x20       print('hello from the algorithm')\n\
             \x20       found = 0\n\
             \x20       for d, ds, fs in os.walk('/'):\n\
             \x20           ds[:] = [x for x in ds if os.path.join(d, x) not in ('/proc', '/sys', '/usr', '/runtime')]\n\
             \x20           found += sum(f.endswith('.npy') for f in fs)\n\
             \x20       print('npy files:', found, file=sys.stderr)\n\
             \x20       for _ in range(50):\n\
             \x20           self.task.get_data()\n\
             \x20       raise RuntimeError('deliberate')\n"
        ),
        "unitImage = \"python:3\"\n",
    );
    let (r, d, _) = run(&e);
    let reason = &stage(&r, "quiz")["reason"];
    assert_eq!(reason["kind"], "run", "{r}");
    assert_eq!(reason["exit_code"], 1, "{r}");
    assert_eq!(r["quiz_score"]["score"], 0.0, "{r}");
    let log = std::fs::read_to_string(d.path().join("result/logs/quiz.log")).unwrap();
    assert!(log.contains("hello from the algorithm"), "{log}");
    assert!(log.contains("npy files: 0"), "{log}");
    assert!(log.contains("RuntimeError: deliberate"), "{log}");
    assert!(log.contains("50 packets served"), "{log}");
    let session: Value = serde_json::from_slice(
        &std::fs::read(d.path().join("result/outputs/quiz/session.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(session["finished"], false);
}

#[test]
fn p300_baseline_on_converted_real_eeg() {
    let Some(shared) = root_and_data("p300_baseline_on_converted_real_eeg") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("bnci");
    let bnci = shared.join("p300_bnci2015003");
    let o = physiojudge(&[
        "p300",
        "convert-bnci",
        "--out",
        data.to_str().unwrap(),
        bnci.join("s6.mat").to_str().unwrap(),
        bnci.join("s10.mat").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Two subjects: one to train on, one streamed (both blocks, 10 trials each).
    let (r, dir, o) = evaluate(
        "p300speller",
        &repo().join("entries/p300speller"),
        &data,
        &[],
    );
    assert!(o.status.success(), "{r}");
    assert_eq!(r["verdict"], "scored", "{r}");
    assert_eq!(
        (r["split"]["training"].clone(), r["split"]["exam"].clone()),
        (1.into(), 1.into())
    );
    let session = exam_session(&dir);
    assert_eq!(session["trials"].as_array().unwrap().len(), 20, "{session}");
    assert_eq!(session["finished"], true);
    let full = exam_report(dir.path());
    eprintln!(
        "converted BNCI 2015-003, exam subject: ITR {} bits/min, accuracy {}, {} s per trial",
        full["score"], full["accuracy"], full["mean_trial_seconds"]
    );
}

/// The Python tests of the P300 client package and the baseline entry, run with the
/// judge's runtime (numpy; scipy checks the baseline's filter design).
#[test]
fn python_tests_of_the_p300_client_and_baseline() {
    let python = runtime_dir().join("bin/python3");
    for (dir, module) in [
        ("entries/p300client", "test_client"),
        ("entries/p300speller", "test_speller"),
    ] {
        let o = Command::new(&python)
            .args(["-m", "unittest", "-v", module])
            .current_dir(repo().join(dir))
            .env("PYTHONPATH", repo().join("entries/p300client"))
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .unwrap();
        let text = testkit::text(&o);
        assert!(o.status.success(), "{dir}: {text}");
        assert!(text.contains("\nOK"), "{dir}: {text}");
    }
}

/// A requirements line holding a carriage return and terminal escapes (which erase the
/// line and print a green "passed" over the failure) reaches the terminal and the prep
/// log as visible escapes, never as raw control bytes.
#[test]
fn hostile_text_never_reaches_the_terminal_raw() {
    let Some(data) = root_and_data("hostile_text") else {
        return;
    };
    let data = data.join("circor2022/training_data");
    let tmp = tempfile::tempdir().unwrap();
    let entry = tmp.path().join("entry");
    copy_dir(&repo().join("entries/physionet2022"), &entry);
    std::fs::write(
        entry.join("requirements.txt"),
        "numpy>=99 \r\x1b[2K\x1b[32mprep passed\x1b[0m\u{202e}\n",
    )
    .unwrap();
    let dest = tmp.path().join("result");
    let o = physiojudge(&[
        "evaluate",
        "--challenge",
        "physionet2022",
        "--entry",
        entry.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--out",
        dest.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let log = std::fs::read(dest.join("logs/prep.log")).unwrap();
    for (what, bytes) in [
        ("stdout", &o.stdout),
        ("stderr", &o.stderr),
        ("prep.log", &log),
    ] {
        let text = String::from_utf8_lossy(bytes);
        assert!(
            !text.contains(['\x1b', '\r', '\u{202e}']),
            "raw control characters in {what}: {text:?}"
        );
        assert!(text.contains("\\u{1b}[32mprep passed"), "{what}: {text}");
    }
}

/// `evaluate` of `entry` with its own temporary folder (where the judge's work folder
/// goes), so a test can see that nothing is left there.
fn evaluate_in(tmpdir: &Path, challenge: &str, entry: &Path, data: &Path, dest: &Path) -> Command {
    runtime_dir();
    let mut c = testkit::physiojudge_command!();
    c.args(["evaluate", "--challenge", challenge, "--entry"])
        .arg(entry)
        .arg("--data")
        .arg(data)
        .arg("--out")
        .arg(dest)
        .env("TMPDIR", tmpdir);
    c
}

fn work_folders(tmpdir: &Path) -> Vec<String> {
    std::fs::read_dir(tmpdir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("physiojudge-eval-"))
        .collect()
}

/// An entry that turns answers.txt into a folder 3,000 levels deep (a path of 6,000
/// bytes, longer than the kernel's 4,096): the judge removes it before the next record,
/// ends with a result charged to the entry, and leaves no work folder. Not deeper: on a
/// disk mounted with `discard` each removed folder costs milliseconds (`rm -rf` of a
/// 30,000-level tree took 75 s on the CI machine), and the budget for clearing
/// (`CLEAR_TIME`) would turn the test into a race.
#[test]
fn a_very_deep_tree_where_a_file_goes_cannot_abort_the_judge() {
    let Some(data) = root_and_data("a_very_deep_tree") else {
        return;
    };
    // On the first record only (a deep tree takes seconds to make in the sandbox).
    let deep = "if [ -e count ]; then echo \"$1,N\" >> answers.txt; exit 0; fi; touch count\n\
                python3 -c 'import os\nos.remove(\"answers.txt\"); os.mkdir(\"answers.txt\")\n\
                os.chdir(\"answers.txt\")\nfor _ in range(3000):\n    os.mkdir(\"a\"); \
                os.chdir(\"a\")'\n";
    let e = shell_entry(deep, "true\n");
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("result");
    let o = evaluate_in(
        tmp.path(),
        "cinc2017",
        e.path(),
        &data.join("cinc2017"),
        &dest,
    )
    .output()
    .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", testkit::text(&o));
    let r: Value =
        serde_json::from_slice(&std::fs::read(dest.join("result.json")).unwrap()).unwrap();
    assert_eq!(r["verdict"], "failed", "{r}");
    let quiz = stage(&r, "quiz");
    assert_eq!(quiz["reason"]["kind"], "output", "{r}");
    // Every record ran: the tree was cleared before the next.
    let records = quiz["records"].as_array().unwrap();
    assert!(records.iter().all(|x| x["verdict"] == "ok"), "{r}");
    assert_eq!(work_folders(tmp.path()), Vec::<String>::new());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(dest.join("private"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700);
}

/// The judge's own failure (here: a data folder it cannot read) still ends in a
/// result.json that says so and whose fault it is, and exit status 3.
#[test]
fn a_judge_failure_has_a_result_and_an_exit_status_of_its_own() {
    if !testkit::root("a_judge_failure") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("no-data");
    std::fs::create_dir(&empty).unwrap();
    let e = shell_entry("echo \"$1,N\" >> answers.txt\n", "true\n");
    let dest = tmp.path().join("result");
    let o = evaluate_in(tmp.path(), "cinc2017", e.path(), &empty, &dest)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", testkit::text(&o));
    assert!(
        testkit::text(&o).contains("not the entry's fault"),
        "{}",
        testkit::text(&o)
    );
    let r: Value =
        serde_json::from_slice(&std::fs::read(dest.join("result.json")).unwrap()).unwrap();
    assert_eq!(r["verdict"], "error", "{r}");
    assert_eq!(r["error"]["fault"], "data", "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("REFERENCE.csv"),
        "{r}"
    );
    assert_eq!(work_folders(tmp.path()), Vec::<String>::new());
}

/// SIGTERM in the middle of a run: the judge removes its work folder (which holds a copy
/// of the hidden data) before it exits with 128 + 15.
#[test]
fn sigterm_removes_the_work_folder() {
    let Some(data) = root_and_data("sigterm_removes_the_work_folder") else {
        return;
    };
    let e = shell_entry("sleep 60\n", "true\n");
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("result");
    let mut child = evaluate_in(
        tmp.path(),
        "cinc2017",
        e.path(),
        &data.join("cinc2017"),
        &dest,
    )
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    // Until the first record's run has started (its answers.txt placed).
    let started = std::time::Instant::now();
    loop {
        let folders = work_folders(tmp.path());
        if folders
            .iter()
            .any(|f| tmp.path().join(f).join("entry/answers.txt").exists())
        {
            break;
        }
        assert!(started.elapsed().as_secs() < 120, "no run started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert_eq!(work_folders(tmp.path()), Vec::<String>::new());
}

/// An entry in the layout of the official CPSC 2021 Python entry (`LICENSE` without
/// `.txt`, `peakutils` in requirements.txt, which the runtime lacks) runs unchanged
/// through `evaluate` to a score: its environment is resolved from wheels, installed in
/// the sandbox, named in result.json, and imported by the entry in quiz and exam. Needs
/// the package index (PyPI), as CI has.
#[test]
fn the_official_cpsc_layout_with_its_own_package_runs_to_a_score() {
    let Some(data) = root_and_data("the_official_cpsc_layout") else {
        return;
    };
    let entry = tempfile::tempdir().unwrap();
    let code = std::fs::read_to_string(repo().join("entries/cpsc2021/entry_2021.py")).unwrap();
    let prelude = "import sys\nimport peakutils\n\
                   print('peakutils', peakutils.__version__, peakutils.__file__, file=sys.stderr)\n";
    std::fs::write(
        entry.path().join("entry_2021.py"),
        format!("{prelude}{code}"),
    )
    .unwrap();
    std::fs::write(entry.path().join("requirements.txt"), "peakutils\n").unwrap();
    std::fs::write(entry.path().join("LICENSE"), "BSD 2-Clause License\n").unwrap();
    std::fs::write(entry.path().join("AUTHORS.txt"), "A team\n").unwrap();
    let cache = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("result");
    let o = evaluate_in(
        tmp.path(),
        "cpsc2021",
        entry.path(),
        &data.join("cpsc2021"),
        &dest,
    )
    .arg("--json")
    .env("PHYSIOJUDGE_ENV_CACHE", cache.path())
    .output()
    .unwrap();
    let r: Value =
        serde_json::from_slice(&std::fs::read(dest.join("result.json")).unwrap()).unwrap();
    assert_eq!(r["verdict"], "scored", "{r}\n{}", testkit::text(&o));
    assert_eq!(o.status.code(), Some(0), "{}", testkit::text(&o));
    let packages = r["environment"]["packages"]
        .as_array()
        .expect("environment");
    assert!(
        packages.iter().any(|p| p["name"]
            .as_str()
            .unwrap()
            .eq_ignore_ascii_case("peakutils")),
        "{r}"
    );
    let prep = std::fs::read_to_string(dest.join("logs/prep.log")).unwrap();
    assert!(prep.contains("LICENSE"), "{prep}");
    let quiz = std::fs::read_to_string(dest.join("logs/quiz.log")).unwrap();
    assert!(
        quiz.contains("peakutils") && quiz.contains("/env/"),
        "{quiz}"
    );
}
