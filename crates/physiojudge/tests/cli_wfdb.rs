//! The real `physiojudge` binary on the real records of `../shared/data`: what
//! `wfdb info|rdsamp|rdann` print, and the exit codes of docs/architecture.md (0, 1, 2).

use std::process::Output;

use testkit::physiojudge;

use formats::wfdb::{Format, ReadOptions, Record, RecordLine, SignalSpec, WriteSignal};

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn ok(args: &[&str]) -> String {
    let o = physiojudge!(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout(&o)
}

#[test]
fn info_text_and_json() {
    let Some(data) = testkit::shared_data("info_text_and_json") else {
        return;
    };
    let rec = data.join("cpsc2021/data_101_6");
    let text = ok(&["wfdb", "info", rec.to_str().unwrap()]);
    for want in [
        "Record data_101_6",
        "Length: 0:01:51.775 (22355 frames)",
        "Sampling frequency: 200 Hz",
        "File: data_101_6.dat (format 16)",
        "Gain: 30061.276794035417 adu/mV, baseline -161790",
        "Initial value: -10581, checksum: 64292",
        "paroxysmal atrial fibrillation",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&ok(&["wfdb", "info", rec.to_str().unwrap(), "--json"])).unwrap();
    assert_eq!(json["frames"], 22355);
    assert_eq!(json["record"]["name"], "data_101_6");
    assert_eq!(json["signals"][1]["description"], "II");
    assert_eq!(json["signals"][1]["adc_gain"], 27477.561608300908);
    assert_eq!(json["signals"][0]["format"], 16);

    // CinC 2017: the YYYY-MM-DD date before the time is read and shown as written.
    let text = ok(&[
        "wfdb",
        "info",
        data.join("cinc2017/A00013").to_str().unwrap(),
    ]);
    assert!(
        text.contains("Starting time: 10:06:01 2014-06-10"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "wfdb",
        "info",
        data.join("cinc2017/A00013").to_str().unwrap(),
        "--json",
    ]))
    .unwrap();
    assert_eq!(json["record"]["base_date"], "2014-06-10");
    assert_eq!(json["signals"][0]["byte_offset"], 24);
}

/// rdsamp prints exactly what the (oracle-tested) library reads.
#[test]
fn rdsamp_prints_the_samples() {
    let Some(data) = testkit::shared_data("rdsamp_prints_the_samples") else {
        return;
    };
    let rec_path = data.join("cpsc2021/data_92_4");
    let rec = Record::open(&rec_path).unwrap();
    let lib = rec
        .read(&ReadOptions {
            from: 100,
            to: Some(400),
            signals: Some(vec![1, 0]),
        })
        .unwrap();
    let p = rec_path.to_str().unwrap();
    for physical in [false, true] {
        let mut args = vec![
            "wfdb",
            "rdsamp",
            p,
            "--from",
            "100",
            "--to",
            "400",
            "--signals",
            "1,0",
        ];
        if physical {
            args.push("--physical");
        }
        let out = ok(&args);
        let rows: Vec<Vec<&str>> = out.lines().map(|l| l.split(',').collect()).collect();
        assert_eq!(rows.len(), 300);
        for (t, row) in rows.iter().enumerate() {
            assert_eq!(row[0], (100 + t).to_string());
            for (k, s) in lib.signals.iter().enumerate() {
                if physical {
                    assert_eq!(
                        row[k + 1].parse::<f64>().unwrap(),
                        s.physical()[t],
                        "row {t}"
                    );
                } else {
                    assert_eq!(row[k + 1].parse::<i32>().unwrap(), s.digital[t], "row {t}");
                }
            }
        }
    }
    // A whole record longer than the chunks rdsamp prints in: every frame, every value.
    let long = data.join("cpsc2021/data_0_1");
    let rec = Record::open(&long).unwrap();
    let all = rec.read(&ReadOptions::default()).unwrap();
    assert!(all.frames > 3 * 65536);
    let out = ok(&["wfdb", "rdsamp", long.to_str().unwrap()]);
    let mut n = 0;
    for (t, line) in out.lines().enumerate() {
        let want = format!(
            "{t},{},{}",
            all.signals[0].digital[t], all.signals[1].digital[t]
        );
        assert_eq!(line, want);
        n += 1;
    }
    assert_eq!(n as u64, all.frames);
}

/// A frame of several samples with an invalid one has no mean: rdsamp prints the
/// invalid value of the signal's format (NaN in physical units), as the WFDB library's
/// getvec returns WFDB_INVALID_SAMPLE, rather than a mean that counts the sentinel.
#[test]
fn rdsamp_frames_with_an_invalid_sample_print_the_invalid_value() {
    let dir = tempfile::tempdir().unwrap();
    let a = [-32768, 3911, 1, 2, 5, -32768];
    let b = [-2048, 100, 1, 3, 7, 9];
    let spec = |file: &str, format| {
        let mut s = SignalSpec::new(file, format);
        s.samples_per_frame = Some(2);
        s
    };
    formats::wfdb::write_record(
        dir.path(),
        &RecordLine::new("spf", 250.0),
        &[
            WriteSignal {
                spec: spec("a.dat", Format::F16),
                samples: &a,
            },
            WriteSignal {
                spec: spec("b.dat", Format::F212),
                samples: &b,
            },
        ],
        &[],
    )
    .unwrap();
    let rec = dir.path().join("spf");
    let rec = rec.to_str().unwrap();
    assert_eq!(
        ok(&["wfdb", "rdsamp", rec]),
        "0,-32768,-2048\n1,1,2\n2,-32768,8\n"
    );
    let physical = ok(&["wfdb", "rdsamp", rec, "--physical"]);
    let rows: Vec<&str> = physical.lines().collect();
    assert_eq!(rows[0], "0,NaN,NaN", "{physical}");
    assert!(rows[2].starts_with("2,NaN,"), "{physical}");
}

#[test]
fn rdsamp_reads_wav_backed_records() {
    let Some(data) = testkit::shared_data("rdsamp_reads_wav_backed_records") else {
        return;
    };
    let rec = data.join("circor2022/training_data/50782_MV_1");
    let out = ok(&["wfdb", "rdsamp", rec.to_str().unwrap(), "--to", "3"]);
    assert_eq!(out.lines().count(), 3);
}

#[test]
fn exit_codes() {
    let o = physiojudge!(&["wfdb", "info", "/nonexistent/rec"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("/nonexistent/rec.hea") && err.contains("cannot read"),
        "{err}"
    );

    let o = physiojudge!(&["wfdb", "rdsamp"]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "a missing argument is a usage error"
    );
    let o = physiojudge!(&["wfdb", "frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
    let o = physiojudge!(&["wfdb", "rdsamp", "x", "--from", "minus-one"]);
    assert_eq!(o.status.code(), Some(2));
    // Options that contradict each other are usage errors too, found before any file is read.
    let o = physiojudge!(&[
        "wfdb",
        "rdsamp",
        "/nonexistent/rec",
        "--from",
        "5",
        "--to",
        "2",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--to 2 is before --from 5"));

    for args in [
        &["--help"][..],
        &["wfdb", "--help"],
        &["wfdb", "info", "--help"],
        &["wfdb", "rdsamp", "--help"],
        &["wfdb", "rdann", "--help"],
    ] {
        let o = physiojudge!(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert!(stdout(&o).contains("Usage"), "{args:?}");
    }
}

#[test]
fn errors_name_the_file_and_problem() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("r.hea"), "r 1 250 100\nr.dat 16 abc\n").unwrap();
    let o = physiojudge!(&["wfdb", "info", dir.path().join("r").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("r.hea: line 2") && err.contains("ADC gain"),
        "{err}"
    );

    std::fs::write(dir.path().join("r.hea"), "r 1 250 100\nr.dat 16\n").unwrap();
    std::fs::write(dir.path().join("r.dat"), [0u8; 10]).unwrap();
    let o = physiojudge!(&["wfdb", "rdsamp", dir.path().join("r").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("r.dat") && err.contains("truncated"), "{err}");
    assert!(o.stdout.is_empty(), "nothing printed before the error");
}

#[test]
fn rdann_prints_every_annotation() {
    let Some(data) = testkit::shared_data("rdann_prints_every_annotation") else {
        return;
    };
    let rec = data.join("cpsc2021/data_101_6");
    let file = formats::wfdb::annotation::read_annotator(&rec, "atr").unwrap();
    let out = ok(&["wfdb", "rdann", rec.to_str().unwrap(), "atr"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), file.annotations.len());
    assert!(lines.iter().any(|l| l.ends_with(",+,0,0,0,(AFIB")), "{out}");
    // The last rhythm change sits one past the last sample (a quirk of this record).
    assert_eq!(*lines.last().unwrap(), "22355,+,0,0,0,(N");

    // AFf records: every beat carries the literal aux text "None".
    let out = ok(&[
        "wfdb",
        "rdann",
        data.join("cpsc2021/data_8_2").to_str().unwrap(),
        "atr",
    ]);
    assert!(
        out.lines().next().unwrap().starts_with("0,+,0,0,0,(AFIB"),
        "{out}"
    );
    assert!(
        out.lines()
            .filter(|l| l.contains(",N,"))
            .all(|l| l.ends_with(",None"))
    );

    let json: serde_json::Value = serde_json::from_str(&ok(&[
        "wfdb",
        "rdann",
        rec.to_str().unwrap(),
        "atr",
        "--json",
    ]))
    .unwrap();
    let items = json.as_array().unwrap();
    assert_eq!(items.len(), file.annotations.len());
    assert_eq!(items.last().unwrap()["aux"], "(N");
    assert_eq!(items.last().unwrap()["sample"], 22355);

    let o = physiojudge!(&["wfdb", "rdann", rec.to_str().unwrap(), "qrs"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("data_101_6.qrs"));
}
