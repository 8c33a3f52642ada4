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
        // `evaluate` opens the default Python runtime whatever the entry's language.
        let o = physiojudge!(["runtime", "setup"]);
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
    let mut args = vec![
        "sandbox".to_string(),
        "run".into(),
        "--json".into(),
        "--octave".into(),
        "--mem".into(),
        "2048".into(),
        "--time".into(),
        "120".into(),
        "--wall-time".into(),
        "300".into(),
        "--ro".into(),
        format!("{}:/data", data.display()),
        "--rw".into(),
        format!("{}:/w", work.display()),
        "--".into(),
    ];
    args.extend(argv.iter().map(|s| s.to_string()));
    let out = physiojudge!(args);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let record: Value = serde_json::from_str(stdout.lines().last().unwrap_or("{}")).unwrap();
    let code = record["exit_code"].as_i64();
    Ran { out, code }
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
    let quiz = r["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stage"] == "quiz")
        .unwrap();
    let reason = &quiz["reason"];
    assert_eq!(reason["kind"], "unsupported_matlab", "{r:#}");
    assert_eq!(reason["function"], "TreeBagger", "{r:#}");
    assert_eq!(reason["file"], "Result.m", "{r:#}");
    assert_eq!(reason["line"], 3, "{r:#}");
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
    let train = r["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["stage"] == "train")
        .unwrap();
    assert_eq!(train["status"], "failed", "{r:#}");
    let reason = &train["reason"];
    assert_eq!(reason["kind"], "unsupported_matlab", "{r:#}");
    assert_eq!(reason["function"], "TreeBagger", "{r:#}");
    assert_eq!(reason["file"], "team_training_code.m", "{r:#}");
    assert_eq!(reason["line"], 3, "{r:#}");
    assert_eq!(r["runtime"]["name"], "octave", "{r:#}");
}
