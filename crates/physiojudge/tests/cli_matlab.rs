//! MATLAB-language entries on GNU Octave end to end (docs/matlab.md):
//! `physiojudge runtime setup --octave` builds the Octave runtime once
//! (`$PHYSIOJUDGE_RUNTIMES_DIR`, which scripts/test.sh points at a folder it reuses);
//! our `rdsamp`/`rdann` agree sample for sample with `physiojudge wfdb` on every record
//! format of ../shared/data, and what `wrann` writes reads back the same; the `matlab` and `mcc` shims keep MATLAB's exit codes; a
//! function Octave lacks fails the run naming it, its file and line; and our example
//! entries for CPSC 2021 (Result.m layout) and PhysioNet 2017 (next.sh calling matlab)
//! score through `evaluate`, in the sandbox. Needs root, mmdebstrap and Debian's
//! mirror, as CI has.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;
use testkit::{physiojudge, text};

/// Builds (or finds) the Octave runtime once per test binary; `None` without root.
fn octave(test: &str) -> Option<()> {
    if !testkit::root(test) {
        return None;
    }
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let o = physiojudge!(["runtime", "setup", "--octave"]);
        assert!(o.status.success(), "{}", text(&o));
    });
    Some(())
}

/// A sandbox run's output and the program's exit status (from the result record, the
/// last line of `--json` output: the command's own status says only whether the sandbox
/// worked).
struct Ran {
    out: std::process::Output,
    code: Option<i64>,
}

/// Runs `argv` in the sandbox with the Octave runtime, `data` read-only at /data and
/// `work` writable at /w (the working folder).
fn in_octave(data: &Path, work: &Path, argv: &[&str]) -> Ran {
    let (out, record) = octave_run(
        &["--mem", "2048", "--time", "120", "--wall-time", "300"],
        data,
        work,
        argv,
    );
    let code = record["exit_code"].as_i64();
    Ran { out, code }
}

/// [`in_octave`] with the sandbox options `options` (limits, `--slot`); the output and
/// the run's record.
fn octave_run(
    options: &[&str],
    data: &Path,
    work: &Path,
    argv: &[&str],
) -> (std::process::Output, Value) {
    let mut args = vec![
        "sandbox".to_string(),
        "run".into(),
        "--json".into(),
        "--octave".into(),
    ];
    args.extend(options.iter().map(|s| s.to_string()));
    args.extend([
        "--ro".into(),
        format!("{}:/data", data.display()),
        "--rw".into(),
        format!("{}:/w", work.display()),
        "--".into(),
    ]);
    args.extend(argv.iter().map(|s| s.to_string()));
    let out = physiojudge!(args);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let record: Value = serde_json::from_str(stdout.lines().last().unwrap_or("{}")).unwrap();
    (out, record)
}

/// One record of each format the shared data uses: format 16 in a `.dat` with two
/// signals and baselines (CPSC 2021), in a MAT v4 file after a 24-byte header (CinC
/// 2017), in a WAV file after a 44-byte header (CirCor 2022).
const RECORDS: &[&str] = &[
    "cpsc2021/data_0_1",
    "cpsc2021/data_101_6",
    "cinc2017/A00001",
    "cinc2017/A01070",
    "circor2022/training_data/2530_AV",
];

fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn our_rdsamp_and_rdann_agree_with_physiojudge_wfdb() {
    let Some(data) = testkit::shared_data("rdsamp/rdann against physiojudge wfdb") else {
        return;
    };
    if octave("rdsamp/rdann against physiojudge wfdb").is_none() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    // Digital values as int64 (rawUnits 4) and physical ones (the default) to files,
    // every digit of a double kept (%.17g reads back as the same double).
    let mut script = String::new();
    for (i, r) in RECORDS.iter().enumerate() {
        script.push_str(&format!(
            "[d, fs, tm] = rdsamp('/data/{r}', [], [], [], 4); p = rdsamp('/data/{r}');\n\
             f = fopen('/w/d{i}.csv', 'w'); fprintf(f, [repmat('%d,', 1, size(d, 2) - 1) '%d\\n'], d'); fclose(f);\n\
             f = fopen('/w/p{i}.csv', 'w'); fprintf(f, [repmat('%.17g,', 1, size(p, 2) - 1) '%.17g\\n'], p'); fclose(f);\n\
             f = fopen('/w/t{i}.csv', 'w'); fprintf(f, '%.17g\\n', [fs; tm(end)]); fclose(f);\n"
        ));
    }
    script.push_str(
        "[a, t, s, c, n, x] = rdann('/data/cpsc2021/data_101_6', 'atr');\n\
         f = fopen('/w/ann.csv', 'w');\n\
         for k = 1:numel(a), fprintf(f, '%d,%s,%d,%d,%d,%s\\n', a(k), t(k), s(k), c(k), n(k), x{k}); end\n\
         fclose(f);\n\
         wrann('/w/copy', 'atr', a, t, s, c, n, x);\n\
         s2 = rdsamp('/data/cpsc2021/data_0_1', 2, 1000, 11, 3); f = fopen('/w/part.csv', 'w');\n\
         fprintf(f, '%s %d %d\\n', class(s2), size(s2, 1), size(s2, 2)); fprintf(f, '%d\\n', s2); fclose(f);\n",
    );
    std::fs::write(work.path().join("dump.m"), script).unwrap();
    let r = in_octave(&data, work.path(), &["matlab", "-batch", "dump"]);
    assert_eq!(r.code, Some(0), "{}", text(&r.out));

    for (i, r) in RECORDS.iter().enumerate() {
        let record = data.join(r);
        let rec = record.to_str().unwrap();
        let ours = |p: &str| std::fs::read_to_string(work.path().join(p)).unwrap();
        // physiojudge wfdb rdsamp: the frame index, then one column per signal.
        let theirs = |physical: bool| {
            let mut args = vec!["wfdb", "rdsamp", rec];
            if physical {
                args.push("--physical");
            }
            let o = physiojudge!(args);
            assert!(o.status.success(), "{}", text(&o));
            csv_rows(&String::from_utf8_lossy(&o.stdout))
                .into_iter()
                .map(|row| row[1..].to_vec())
                .filter(|row| row.iter().all(|v| !v.is_empty()))
                .collect::<Vec<_>>()
        };
        let digital = theirs(false);
        let mine = csv_rows(&ours(&format!("d{i}.csv")));
        // A header line, if the CLI prints one, is the only row that does not parse.
        let digital: Vec<_> = digital
            .into_iter()
            .filter(|row| row[0].parse::<i64>().is_ok())
            .collect();
        assert_eq!(mine.len(), digital.len(), "{r}: frames");
        assert!(!mine.is_empty(), "{r}: no samples");
        for (k, (a, b)) in mine.iter().zip(&digital).enumerate() {
            assert_eq!(a, b, "{r}: digital frame {k}");
        }
        let physical: Vec<_> = theirs(true)
            .into_iter()
            .filter(|row| row[0].parse::<f64>().is_ok())
            .collect();
        let mine = csv_rows(&ours(&format!("p{i}.csv")));
        assert_eq!(mine.len(), physical.len(), "{r}: physical frames");
        for (k, (a, b)) in mine.iter().zip(&physical).enumerate() {
            for (x, y) in a.iter().zip(b) {
                let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
                // Same formula, (d - baseline) / gain; a reciprocal multiply may differ
                // in the last bit.
                let close =
                    (x.is_nan() && y.is_nan()) || (x - y).abs() <= 4.0 * f64::EPSILON * y.abs();
                assert!(close, "{r}: physical frame {k}: {x} vs {y}");
            }
        }
        let t: Vec<f64> = ours(&format!("t{i}.csv"))
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        let info = physiojudge!(["wfdb", "info", "--json", rec]);
        let info: Value = serde_json::from_slice(&info.stdout).unwrap();
        assert_eq!(t[0], info["fs"].as_f64().unwrap(), "{r}: fs");
        let frames = info["frames"].as_f64().unwrap();
        assert_eq!(t[1], (frames - 1.0) / t[0], "{r}: the last sample's time");
    }

    // rdann: 1-based positions (the WFDB library's sample + 1), symbols, subtypes,
    // channels, numbers and aux strings, every annotation.
    let rec = data.join("cpsc2021/data_101_6");
    let o = physiojudge!(["wfdb", "rdann", rec.to_str().unwrap(), "atr"]);
    assert!(o.status.success(), "{}", text(&o));
    let theirs: Vec<Vec<String>> = csv_rows(&String::from_utf8_lossy(&o.stdout))
        .into_iter()
        .filter(|row| row[0].parse::<i64>().is_ok())
        .collect();
    let mine = csv_rows(&std::fs::read_to_string(work.path().join("ann.csv")).unwrap());
    assert_eq!(mine.len(), theirs.len(), "annotations");
    assert!(mine.len() > 100, "too few annotations to say anything");
    let mut aux_seen = 0;
    for (k, (a, b)) in mine.iter().zip(&theirs).enumerate() {
        let at: i64 = a[0].parse().unwrap();
        let sample: i64 = b[0].parse().unwrap();
        assert_eq!(at, sample + 1, "annotation {k}: position");
        assert_eq!(
            a[1..5],
            b[1..5],
            "annotation {k}: symbol, subtype, chan, num"
        );
        let aux_a = a[5..].join(",");
        let aux_b = b[5..].join(",");
        assert_eq!(
            aux_a.trim_matches('"'),
            aux_b.trim_matches('"'),
            "annotation {k}: aux"
        );
        aux_seen += usize::from(!aux_a.is_empty());
    }
    assert!(
        aux_seen > 0,
        "no rhythm annotation with an aux string was compared"
    );
    // wrann wrote back what rdann read: physiojudge reads the copy as the original.
    std::fs::copy(
        data.join("cpsc2021/data_101_6.hea"),
        work.path().join("copy.hea"),
    )
    .unwrap();
    let copy = work.path().join("copy");
    let o = physiojudge!(["wfdb", "rdann", copy.to_str().unwrap(), "atr"]);
    assert!(o.status.success(), "{}", text(&o));
    let copied: Vec<Vec<String>> = csv_rows(&String::from_utf8_lossy(&o.stdout))
        .into_iter()
        .filter(|row| row[0].parse::<i64>().is_ok())
        .collect();
    assert_eq!(
        copied, theirs,
        "wrann's copy read by physiojudge wfdb rdann"
    );

    // A part of one signal, digital int16: samples 11..=1000 of signal 2.
    let part = std::fs::read_to_string(work.path().join("part.csv")).unwrap();
    let mut lines = part.lines();
    assert_eq!(lines.next(), Some("int16 990 1"));
    let o = physiojudge!([
        "wfdb",
        "rdsamp",
        data.join("cpsc2021/data_0_1").to_str().unwrap(),
        "--from",
        "10",
        "--to",
        "1000",
        "--signals",
        "1"
    ]);
    let theirs: Vec<String> = csv_rows(&String::from_utf8_lossy(&o.stdout))
        .into_iter()
        .filter(|row| row[0].parse::<i64>().is_ok())
        .map(|row| row[1].clone())
        .collect();
    assert_eq!(lines.map(str::to_string).collect::<Vec<_>>(), theirs);
}

#[test]
fn the_shims_keep_matlab_s_exit_codes_and_name_what_octave_lacks() {
    let Some(data) = testkit::shared_data("the matlab and mcc shims") else {
        return;
    };
    if octave("the matlab and mcc shims").is_none() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    let code = |argv: &[&str]| in_octave(&data, w, argv).code;
    assert_eq!(
        code(&["matlab", "-nodisplay", "-batch", "disp(1 + 1)"]),
        Some(0)
    );
    assert_eq!(code(&["matlab", "-batch", "exit(7)"]), Some(7));
    assert_eq!(code(&["matlab", "-nodisplay", "-r", "quit"]), Some(0));
    assert_eq!(code(&["matlab", "-batch", "error('no')"]), Some(1));
    assert_eq!(code(&["matlab", "-batch", "x = [1 2"]), Some(1));
    assert_eq!(code(&["matlab", "-frobnicate"]), Some(2));

    // Octave's root is the whole system, read-only; no shadow file; no network.
    let r = in_octave(
        &data,
        w,
        &[
            "matlab",
            "-batch",
            "printf('%d %d %s\\n', fopen('/usr/x', 'w'), exist('/etc/shadow', 'file'), \
             strtrim(fileread('/etc/debian_version'))); \
             [st, out] = system('cat /proc/net/dev | wc -l'); printf('lines %s', out);",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", text(&r.out));
    let said = String::from_utf8_lossy(&r.out.stdout);
    assert!(said.starts_with("-1 0 12."), "{said}");
    // Only the loopback device: a header of two lines and `lo`.
    assert!(said.contains("lines 3"), "{said}");

    // mcc -m X.m -a . makes ./X, which calls X with its arguments as char vectors.
    std::fs::write(
        w.join("shout.m"),
        "function shout(a, b)\n  fprintf('%s|%s|%s\\n', class(a), a, b);\n  helper();\nend\n",
    )
    .unwrap();
    std::fs::create_dir(w.join("lib")).unwrap();
    std::fs::write(
        w.join("lib/helper.m"),
        "function helper()\n  v = 42;\n  save('/w/out.mat', 'v');\nend\n",
    )
    .unwrap();
    let r = in_octave(
        &data,
        w,
        &[
            "/bin/sh",
            "-c",
            "mcc -m shout.m -a lib && ./shout \"it's\" 'two words'",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", text(&r.out));
    assert!(
        String::from_utf8_lossy(&r.out.stdout).contains("char|it's|two words"),
        "{}",
        text(&r.out)
    );
    // save writes MAT files, not Octave's text format, unless told otherwise.
    let mat = std::fs::read(w.join("out.mat")).unwrap();
    assert!(mat.starts_with(b"MATLAB 5.0 MAT-file"), "{:?}", &mat[..20]);

    // A function Octave lacks: named, with the entry's file and line, and what to use.
    std::fs::write(
        w.join("train_model.m"),
        "function train_model()\n  x = rand(10, 2);\n  m = TreeBagger(10, x, [1:10]');\nend\n",
    )
    .unwrap();
    let r = in_octave(&data, w, &["matlab", "-batch", "train_model"]);
    assert_eq!(r.code, Some(1), "{}", text(&r.out));
    let err = String::from_utf8_lossy(&r.out.stderr);
    assert!(
        err.contains(
            "physiojudge: unsupported_matlab function=TreeBagger file=/w/train_model.m line=3"
        ),
        "{err}"
    );
    assert!(err.contains("svmtrain"), "{err}");
}

/// Evaluates `entry` for `challenge` on `data`; the result.
fn evaluate(challenge: &str, entry: &Path, data: &Path, out: &Path) -> Value {
    let o = physiojudge!([
        "evaluate",
        "--challenge",
        challenge,
        "--entry",
        entry.to_str().unwrap(),
        "--data",
        data.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let result = std::fs::read_to_string(out.join("result.json"))
        .unwrap_or_else(|e| panic!("no result.json ({e}): {}", text(&o)));
    serde_json::from_str(&result).unwrap()
}

/// The reason `stage` of result `r` failed for, which must be a function Octave lacks:
/// `function`, called from the entry's `file` at `line`.
fn assert_unsupported<'a>(
    r: &'a Value,
    stage: &str,
    function: &str,
    file: &str,
    line: u64,
) -> &'a Value {
    let s = r["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stage"] == stage)
        .unwrap_or_else(|| panic!("no {stage} stage: {r:#}"));
    assert_eq!(s["status"], "failed", "{r:#}");
    let reason = &s["reason"];
    assert_eq!(reason["kind"], "unsupported_matlab", "{r:#}");
    assert_eq!(reason["function"], function, "{r:#}");
    assert_eq!(reason["file"], file, "{r:#}");
    assert_eq!(reason["line"], line, "{r:#}");
    reason
}

fn entry_dir(name: &str) -> PathBuf {
    testkit::workspace_root().join("entries").join(name)
}

#[test]
fn our_matlab_entries_score_through_evaluate() {
    let Some(data) = testkit::shared_data("MATLAB entries through evaluate") else {
        return;
    };
    if octave("MATLAB entries through evaluate").is_none() {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    for (challenge, entry, data) in [
        ("cpsc2021", "cpsc2021-matlab", data.join("cpsc2021")),
        ("cinc2017", "cinc2017-matlab", data.join("cinc2017")),
    ] {
        let dest = out.path().join(challenge);
        let r = evaluate(challenge, &entry_dir(entry), &data, &dest);
        assert_eq!(r["verdict"], "scored", "{challenge}: {r:#}");
        assert_eq!(r["runtime"]["name"], "octave", "{challenge}: {r:#}");
        let why = r["runtime"]["why"].as_str().unwrap();
        assert!(
            why.contains("octave 7.3") && why.contains("octave-signal"),
            "{why}"
        );
        assert!(r["score"].as_f64().is_some(), "{challenge}: {r:#}");
    }
}

#[test]
fn a_function_octave_lacks_fails_the_stage_naming_it() {
    let Some(data) = testkit::shared_data("unsupported MATLAB in evaluate") else {
        return;
    };
    if octave("unsupported MATLAB in evaluate").is_none() {
        return;
    }
    let entry = tempfile::tempdir().unwrap();
    let e = entry.path();
    std::fs::write(e.join("LICENSE.txt"), "MIT\n").unwrap();
    std::fs::write(
        e.join("Result.m"),
        "function Result(names, data, out)\n  % A forest, as MATLAB's Statistics Toolbox has.\n  \
         model = TreeBagger(5, rand(10, 2), (1:10)');\nend\n",
    )
    .unwrap();
    let dest = tempfile::tempdir().unwrap();
    let r = evaluate(
        "cpsc2021",
        e,
        &data.join("cpsc2021"),
        &dest.path().join("r"),
    );
    assert_unsupported(&r, "quiz", "TreeBagger", "Result.m", 3);
}

#[test]
fn a_2022_layout_entry_fails_in_train_naming_what_octave_lacks() {
    let Some(data) = testkit::shared_data("unsupported MATLAB in train") else {
        return;
    };
    if octave("unsupported MATLAB in train").is_none() {
        return;
    }
    // The 2022 MATLAB layout: the organisers' train_model.m and run_model.m calling the
    // team's code, here a forest as the official example trains.
    let entry = tempfile::tempdir().unwrap();
    let e = entry.path();
    std::fs::write(
        e.join("train_model.m"),
        "function train_model(input_directory, output_directory)\n  \
         team_training_code(input_directory, output_directory);\nend\n",
    )
    .unwrap();
    std::fs::write(
        e.join("run_model.m"),
        "function run_model(model_directory, input_directory, output_directory)\nend\n",
    )
    .unwrap();
    std::fs::write(
        e.join("team_training_code.m"),
        "function team_training_code(input_directory, output_directory)\n  \
         files = dir(fullfile(input_directory, '*.txt'));\n  \
         model = TreeBagger(300, rand(numel(files), 3), (1:numel(files))');\nend\n",
    )
    .unwrap();
    let dest = tempfile::tempdir().unwrap();
    let r = evaluate(
        "physionet2022",
        e,
        &data.join("circor2022/training_data"),
        &dest.path().join("r"),
    );
    assert_unsupported(&r, "train", "TreeBagger", "team_training_code.m", 3);
    assert_eq!(r["runtime"]["name"], "octave", "{r:#}");
}

/// The hostile suite's attacks (crates/sandbox/tests/hostile.rs) made from MATLAB code
/// on Octave's root, as an entry would: Octave's root file system, our files and the
/// data are read-only, the host's folders invisible; no network but the run's own
/// loopback; no privilege from a setuid program (whose mount stops the run); only the run's own processes in
/// /proc; a fork bomb, a memory bomb and a busy loop end at their limits. Sandbox
/// slots 64-67.
#[test]
fn octave_shown_as_the_root_holds_against_the_hostile_suite() {
    const TEST: &str = "the hostile suite with Octave's root";
    if octave(TEST).is_none() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("RECORDS"), "A00001\n").unwrap();
    let secret = tempfile::tempdir().unwrap();
    std::fs::write(secret.path().join("REFERENCE.csv"), "A00001,N\n").unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    std::fs::create_dir(w.join("m")).unwrap();
    let host_cwd = std::env::current_dir().unwrap();

    // Files: writes outside /w and /tmp fail, the host's folders are not there, the run
    // is not root and has no capabilities, a setuid mount cannot mount, /proc shows the
    // run's own processes only.
    let script = format!(
        "for p = {{'/usr/x', '/etc/x', '/x', '/proc/x', '/matlab/toolbox/x.m', '/data/x', \
         '/w/ok', '/tmp/ok'}}\n\
           f = fopen(p{{1}}, 'w'); if f >= 0, printf('wrote %s\\n', p{{1}}); fclose(f); end\n\
         end\n\
         for p = {{'{cwd}', '{secret}', '{secret}/REFERENCE.csv'}}\n\
           if exist(p{{1}}), printf('sees %s\\n', p{{1}}); end\n\
         end\n\
         [st, s] = system('ls -l /usr/bin/mount; id -u; grep -E ''^(CapEff|CapPrm|CapBnd|NoNewPrivs)'' /proc/self/status; \
         ls /proc | grep -E ''^[0-9]+$'' | tr ''\\n'' '' '''); printf('%s\\n', s);\n",
        cwd = host_cwd.display(),
        secret = secret.path().display(),
    );
    std::fs::write(w.join("files.m"), script).unwrap();
    let (o, record) = octave_run(
        &["--slot", "64", "--time", "60", "--wall-time", "120"],
        data.path(),
        w,
        &["matlab", "-batch", "files"],
    );
    assert_eq!(record["verdict"], "ok", "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let wrote: Vec<&str> = out.lines().filter(|l| l.starts_with("wrote")).collect();
    assert_eq!(wrote, ["wrote /w/ok", "wrote /tmp/ok"], "{out}");
    assert!(!out.contains("sees"), "{out}");
    // mount is setuid in Octave's root; it runs with no privilege (below, not root, no
    // capabilities, no new privileges).
    assert!(out.contains("-rwsr-xr-x"), "{out}");
    let uid = out
        .lines()
        .find_map(|l| l.trim().parse::<u32>().ok())
        .unwrap_or_else(|| panic!("no uid: {out}"));
    assert_ne!(uid, 0, "{out}");
    for cap in [
        "CapEff:\t0000000000000000",
        "CapPrm:\t0000000000000000",
        "CapBnd:\t0000000000000000",
        "NoNewPrivs:\t1",
    ] {
        assert!(out.contains(cap), "{cap}: {out}");
    }
    // The last line of numbers (the one before is the uid; the run's record follows).
    let pids: Vec<u32> = out
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty() && l.split_whitespace().all(|w| w.parse::<u32>().is_ok()))
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert!(
        !pids.is_empty() && !pids.contains(&1) && pids.iter().all(|&p| p < 100),
        "{pids:?}: {out}"
    );

    // The setuid mount, tried: the run is stopped at the call, nothing is mounted.
    let (o, record) = octave_run(
        &["--slot", "64", "--time", "60", "--wall-time", "120"],
        data.path(),
        w,
        &[
            "matlab",
            "-batch",
            "system('/usr/bin/mount -t tmpfs none /w/m; touch /w/m/inside');",
        ],
    );
    assert_eq!(record["verdict"], "forbidden_syscall", "{}", text(&o));
    let message = record["message"].as_str().unwrap_or_default();
    assert!(message.contains("mount"), "{message}");
    assert!(!w.join("m/inside").exists());

    // Network: Octave's urlread and the shell's /dev/tcp reach nothing; a datagram to
    // the host's 127.0.0.1 goes to the run's own loopback; only `lo` is there.
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let (tport, uport) = (
        tcp.local_addr().unwrap().port(),
        udp.local_addr().unwrap().port(),
    );
    std::fs::write(
        w.join("network.m"),
        format!(
            "try\n  urlread('http://127.0.0.1:{tport}/'); disp('url read');\n\
             catch\n  disp('no url');\nend\n\
             [st, s] = system(['bash -c \"echo x > /dev/tcp/127.0.0.1/{tport} && echo tcp; \
             echo x > /dev/udp/127.0.0.1/{uport} && echo udp sent\"; \
             echo ifaces=$(tail -n +3 /proc/net/dev | cut -d: -f1 | xargs)']); printf('%s', s);\n"
        ),
    )
    .unwrap();
    let (o, record) = octave_run(
        &["--slot", "65", "--time", "60", "--wall-time", "120"],
        data.path(),
        w,
        &["matlab", "-batch", "network"],
    );
    assert_eq!(record["verdict"], "ok", "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("no url"), "{out}");
    assert!(!out.lines().any(|l| l == "tcp"), "{out}");
    assert!(out.contains("udp sent"), "{out}");
    assert!(out.lines().any(|l| l == "ifaces=lo"), "{out}");
    assert_eq!(
        tcp.accept().map(|_| ()).map_err(|e| e.kind()),
        Err(std::io::ErrorKind::WouldBlock),
        "the host's TCP port got a connection"
    );
    let mut buf = [0u8; 16];
    assert_eq!(
        udp.recv(&mut buf).map_err(|e| e.kind()),
        Err(std::io::ErrorKind::WouldBlock),
        "the host's UDP port got a datagram"
    );

    // A fork bomb from Octave's system(): held at the process limit, ended by the wall
    // clock (CPU time to spare, as in the hostile suite); the host still forks.
    let (o, record) = octave_run(
        &[
            "--slot",
            "66",
            "--pids",
            "24",
            "--wall-time",
            "10",
            "--time",
            "640",
        ],
        data.path(),
        w,
        &[
            "matlab",
            "-batch",
            "system('b() { b | b & }; b; exec sleep 60');",
        ],
    );
    assert_eq!(record["verdict"], "wall_time_limit", "{}", text(&o));
    assert!(
        std::process::Command::new("/bin/true")
            .status()
            .unwrap()
            .success()
    );

    // A memory bomb is a memory limit; a busy loop a time limit.
    let (o, record) = octave_run(
        &["--slot", "67", "--mem", "400", "--wall-time", "60"],
        data.path(),
        w,
        &["matlab", "-batch", "x = ones(1, 2e8); disp(sum(x));"],
    );
    assert_eq!(record["verdict"], "memory_limit", "{}", text(&o));
    assert!(
        record["peak_memory_bytes"].as_u64().unwrap() <= 400 << 20,
        "{record}"
    );
    let (o, record) = octave_run(
        &["--slot", "67", "--time", "4", "--wall-time", "60"],
        data.path(),
        w,
        &["matlab", "-batch", "while true, end"],
    );
    assert_eq!(record["verdict"], "time_limit", "{}", text(&o));
}

/// A PhysioNet 2022 MATLAB entry of ours written as the official example is (its code
/// is not ours to copy): labels gathered in a `categorical` grown one patient at a
/// time, a classifier trained on them and saved with `-v7.3`, its `predict` called as a
/// method of the loaded model, and the organisers' CSV header made with
/// `strjoin(string(classes), ',')`. `CLASSIFIER(features, Y)` is the call the test
/// swaps.
const ENTRY_2022: &[(&str, &str)] = &[
    (
        "train_model.m",
        "function train_model(data_folder, model_folder)\n\
         % The organisers' script: teams do not edit it.\n\
         if ~exist(model_folder, 'dir')\n  mkdir(model_folder);\nend\n\
         team_training_code(data_folder, model_folder);\nend\n",
    ),
    (
        "run_model.m",
        "function run_model(model_folder, data_folder, output_folder)\n\
         % The organisers' script: teams do not edit it.\n\
         model = load(fullfile(model_folder, 'model.mat'));\n\
         files = dir(fullfile(data_folder, '*.txt'));\n\
         if ~exist(output_folder, 'dir')\n  mkdir(output_folder);\nend\n\
         for j = 1:numel(files)\n\
           header = strsplit(fileread(fullfile(data_folder, files(j).name)), '\\n');\n\
           [score, label, classes] = team_testing_code(header, read_recordings(data_folder, header), model);\n\
           first = strsplit(header{1}, ' ');\n\
           out = fullfile(output_folder, [first{1} '.csv']);\n\
           fid = fopen(out, 'w');\n\
           fprintf(fid, '#%s\\n%s\\n', first{1}, strjoin(string(classes), ','));\n\
           fclose(fid);\n\
           dlmwrite(out, label, 'delimiter', ',', '-append');\n\
           dlmwrite(out, score, 'delimiter', ',', '-append', 'precision', 4);\n\
         end\nend\n",
    ),
    (
        "read_recordings.m",
        "function recordings = read_recordings(data_folder, header)\n\
         first = strsplit(header{1}, ' ');\n\
         recordings = {};\n\
         for j = 1:str2double(first{2})\n\
           parts = strsplit(header{j + 1}, ' ');\n\
           recordings{j} = audioread(fullfile(data_folder, strtrim(parts{3})));\n\
         end\nend\n",
    ),
    (
        "features_of.m",
        "function f = features_of(header, recordings)\n\
         % Per auscultation location: mean absolute amplitude and variance; then age.\n\
         places = {'AV', 'MV', 'PV', 'TV'};\n\
         f = zeros(1, 9);\n\
         first = strsplit(header{1}, ' ');\n\
         for j = 1:str2double(first{2})\n\
           parts = strsplit(header{j + 1}, ' ');\n\
           at = find(strcmp(places, parts{1}), 1);\n\
           if ~isempty(at)\n\
             f(2 * at - 1) = mean(abs(recordings{j}));\n\
             f(2 * at) = var(recordings{j});\n\
           end\n\
         end\n\
         ages = {'Neonate', 'Infant', 'Child', 'Adolescent', 'Young Adult'};\n\
         age = header(startsWith(header, '#Age'));\n\
         if ~isempty(age)\n\
           parts = strsplit(age{1}, ':');\n\
           f(9) = find([strcmp(ages, strtrim(parts{2})) true], 1);\n\
         end\nend\n",
    ),
    (
        "label_of.m",
        "function name = label_of(header, field)\n\
         line = header(startsWith(header, ['#' field ':']));\n\
         parts = strsplit(line{1}, ':');\n\
         name = strtrim(parts{2});\nend\n",
    ),
    (
        "team_training_code.m",
        "function team_training_code(data_folder, model_folder)\n\
         files = dir(fullfile(data_folder, '*.txt'));\n\
         features = [];\n\
         labels_murmur = categorical;\n\
         labels_outcome = categorical;\n\
         for j = 1:numel(files)\n\
           header = strsplit(fileread(fullfile(data_folder, files(j).name)), '\\n');\n\
           features(j, :) = features_of(header, read_recordings(data_folder, header));\n\
           labels_murmur(j) = label_of(header, 'Murmur');\n\
           labels_outcome(j) = label_of(header, 'Outcome');\n\
         end\n\
         classes_murmur = sort(categories(labels_murmur))';\n\
         classes_outcome = sort(categories(labels_outcome))';\n\
         model_murmur = CLASSIFIER(features, labels_murmur);\n\
         model_outcome = CLASSIFIER(features, labels_outcome);\n\
         save(fullfile(model_folder, 'model.mat'), 'model_murmur', 'classes_murmur', \
         'model_outcome', 'classes_outcome', '-v7.3');\nend\n",
    ),
    (
        "team_testing_code.m",
        "function [score, label, classes] = team_testing_code(header, recordings, model)\n\
         features = features_of(header, recordings);\n\
         [m, m_score] = model.model_murmur.predict(features);\n\
         [o, o_score] = model.model_outcome.predict(features);\n\
         label = [strcmp(model.classes_murmur, m) strcmp(model.classes_outcome, o)];\n\
         score = [m_score o_score];\n\
         classes = [model.classes_murmur model.classes_outcome];\nend\n",
    ),
    ("LICENSE.txt", "MIT\n"),
];

/// The official PhysioNet 2022 MATLAB example's way (our own code, [`ENTRY_2022`]):
/// with a TreeBagger, train fails naming it, the file and the line, and suggests a
/// call; with that call put in its place, the entry scores.
#[test]
fn a_2022_entry_written_as_the_official_one_scores_once_its_forest_is_replaced() {
    const TEST: &str = "the PhysioNet 2022 MATLAB example's way";
    let Some(data) = testkit::shared_data(TEST) else {
        return;
    };
    if octave(TEST).is_none() {
        return;
    }
    let data = data.join("circor2022/training_data");
    // No Python runtime: a MATLAB entry needs the Octave runtime alone.
    let no_python = tempfile::tempdir().unwrap();
    // `call(Y)`: the classifier call on the entry's features and the labels Y.
    let run = |call: &dyn Fn(&str) -> String| {
        let entry = tempfile::tempdir().unwrap();
        for (name, text) in ENTRY_2022 {
            let mut text = text.to_string();
            for y in ["labels_murmur", "labels_outcome"] {
                text = text.replace(&format!("CLASSIFIER(features, {y})"), &call(y));
            }
            std::fs::write(entry.path().join(name), text).unwrap();
        }
        let dest = tempfile::tempdir().unwrap();
        let out = dest.path().join("r");
        let o = testkit::output(
            testkit::physiojudge_command!()
                .env("PHYSIOJUDGE_RUNTIME_DIR", no_python.path())
                .args(["evaluate", "--challenge", "physionet2022", "--entry"])
                .arg(entry.path())
                .arg("--data")
                .arg(&data)
                .arg("--out")
                .arg(&out),
        );
        let result = std::fs::read_to_string(out.join("result.json"))
            .unwrap_or_else(|e| panic!("no result.json ({e}): {}", text(&o)));
        let r: Value = serde_json::from_str(&result).unwrap();
        (r, o)
    };
    let (r, _) = run(&|y: &str| format!("TreeBagger(300, features, {y})"));
    let reason = assert_unsupported(&r, "train", "TreeBagger", "team_training_code.m", 14);
    let instead = reason["instead"].as_str().unwrap();
    assert!(
        instead.contains(
            "Replace the call TreeBagger(NumTrees, X, Y) with \
             fitcknn(X, Y, 'NumNeighbors', 5, 'Standardize', true)"
        ),
        "{instead}"
    );

    // That one call replaced as the message says (X, Y the entry's own), nothing else.
    let (r, o) =
        run(&|y: &str| format!("fitcknn(features, {y}, 'NumNeighbors', 5, 'Standardize', true)"));
    assert_eq!(r["verdict"], "scored", "{r:#}\n{}", text(&o));
    assert!(r["score"].as_f64().is_some(), "{r:#}");
    assert_eq!(r["language"], "matlab", "{r:#}");
    // result.json names the Octave runtime and its three packages, and no Python.
    assert_eq!(r["runtime"]["name"], "octave", "{r:#}");
    assert!(r["runtime"].get("python").is_none(), "{r:#}");
    let versions = &r["runtime"]["versions"];
    for p in ["octave", "octave-signal", "octave-statistics"] {
        assert!(
            versions[p].as_str().is_some_and(|v| !v.is_empty()),
            "{p}: {r:#}"
        );
    }
    // A Python entry on the same machine is told what to set up.
    let entry = tempfile::tempdir().unwrap();
    std::fs::write(entry.path().join("team_code.py"), "import os\n").unwrap();
    let dest = tempfile::tempdir().unwrap();
    let o = testkit::output(
        testkit::physiojudge_command!()
            .env("PHYSIOJUDGE_RUNTIME_DIR", no_python.path())
            .args(["evaluate", "--challenge", "physionet2022", "--entry"])
            .arg(entry.path())
            .arg("--data")
            .arg(&data)
            .arg("--out")
            .arg(dest.path().join("r")),
    );
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(
            "the Python runtime entries run with is not set up here: run \
                           `physiojudge runtime setup`"
        ),
        "{}",
        text(&o)
    );
}

/// Our MATLAB functions for what Octave 7 lacks (docs/matlab.md): `categorical`,
/// `string`, `fitcknn` and `save -v7.3`, each checked against what MATLAB gives,
/// the differences the docs name included. Octave's `assert`s: exit 0 only if all hold.
const COMPAT_CHECKS: &str = r#"% categorical: grown by assignment, categories in the order names came
c = categorical;
assert(isempty(c) && iscategorical(c) && ~iscategorical({'a'}));
c(1) = 'Present'; c(2) = 'Absent'; c(4) = 'Present';
assert(isequal(categories(c), {'Present'; 'Absent'}));
assert(isequal(cellstr(c), {'Present', 'Absent', '<undefined>', 'Present'}));
assert(isequal(double(c), [1 2 0 1]) && numel(c) == 4 && length(c) == 4);
assert(isequal(c == 'Present', logical([1 0 0 1])) && isequal('Absent' ~= c, logical([1 0 1 1])));
c(end + 1) = 'Unknown';
assert(isequal(size(c), [1 5]) && strcmp(char(c(5)), 'Unknown'));
d = categorical({'b', 'a', 'b'});
assert(isequal(categories(d), {'a'; 'b'}) && isequal(double(d), [2 1 2]));
assert(isequal(d(2:3) == 'b', logical([0 1])) && isa(d(1), 'categorical'));
assert(isequal(cellstr(categorical([3 1 3])), {'3', '1', '3'}));
d(2) = [];
assert(isequal(cellstr(d), {'b', 'b'}));
% string: text as a cell array of character vectors
assert(isequal(strjoin(string({'Present', 'Absent'}), ','), 'Present,Absent'));
assert(isequal(string('abc'), {'abc'}) && isequal(string([1.5 2]), {'1.5', '2'}));
assert(isequal(string(true), {'true'}) && isequal(string(categorical({'x'})), {'x'}));
% fitcknn: votes of the nearest rows, after standardising
X = [0 0; 0 1; 1 0; 10 10; 10 11; 11 10];
y = categorical({'lo', 'lo', 'lo', 'hi', 'hi', 'hi'});
m = fitcknn(X, y, 'NumNeighbors', 3, 'Standardize', true);
[label, score, cost] = m.predict([0.2 0.2; 10.5 10.5]);
assert(isequal(label, {'lo'; 'hi'}) && isequal(m.ClassNames, {'hi'; 'lo'}));
assert(isequal(score, [0 1; 1 0]) && isequal(cost, 1 - score));
[l2, s2] = predict(m, [5.4 5.4]);
assert(isequal(l2, {'lo'}) && abs(sum(s2) - 1) < 1e-12);
n = fitcknn([1; 2; 3], [10; 20; 10]);
assert(isequal(predict(n, 2.1), 20));
first = n.predict(2.1);
assert(isequal(first, 20));
% save -v7.3 writes a MAT file the model comes back from
save('/w/model.mat', 'm', '-v7.3');
f = fopen('/w/model.mat'); head = fread(f, 19, 'char=>char')'; fclose(f);
assert(strcmp(head, 'MATLAB 5.0 MAT-file'));
s = load('/w/model.mat');
[l3, s3] = s.m.predict([0.2 0.2; 10.5 10.5]);
assert(isequal(l3, label) && isequal(s3, score));
disp('compat ok');
"#;

#[test]
fn our_matlab_functions_for_what_octave_lacks_behave_as_documented() {
    const TEST: &str = "categorical, string, fitcknn, save -v7.3";
    if octave(TEST).is_none() {
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("compat_checks.m"), COMPAT_CHECKS).unwrap();
    let r = in_octave(
        data.path(),
        work.path(),
        &["matlab", "-batch", "compat_checks"],
    );
    assert_eq!(r.code, Some(0), "{}", text(&r.out));
    assert!(
        String::from_utf8_lossy(&r.out.stdout).contains("compat ok"),
        "{}",
        text(&r.out)
    );
}
