//! Tests of the PhysioNet 2022 scorer: small folders against the official scorer's
//! figures, its failures, and the reading of labels and outputs.

use formats::circor::{Murmur, Outcome};

use super::metrics::{auc, mean_cost, nanmean};
use super::output::{sanitize_binary, sanitize_scalar};
use super::*;
use crate::{Mode, ScoreError};

const CLASS_LINE: &str = "Present,Unknown,Absent,Abnormal,Normal";

/// A labels folder and an outputs folder. `labels`: (patient, murmur, outcome);
/// `outputs`: (patient, file text).
fn folders(labels: &[(&str, &str, &str)], outputs: &[(&str, String)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("labels")).unwrap();
    std::fs::create_dir(dir.path().join("outputs")).unwrap();
    for (p, m, o) in labels {
        let text = format!(
            "{p} 1 4000\nAV {p}_AV.hea {p}_AV.wav\n#Age: Child\n#Murmur: {m}\n#Murmur locations: nan\n#Outcome: {o}\n"
        );
        std::fs::write(dir.path().join(format!("labels/{p}.txt")), text).unwrap();
    }
    for (p, text) in outputs {
        std::fs::write(dir.path().join(format!("outputs/{p}.csv")), text).unwrap();
    }
    dir
}

fn run(dir: &tempfile::TempDir, mode: Mode) -> Result<Report, ScoreError> {
    score_folders(
        &dir.path().join("labels"),
        &dir.path().join("outputs"),
        mode,
    )
}

fn standard(p: &str, binaries: &str, scores: &str) -> String {
    format!("#{p}\n{CLASS_LINE}\n{binaries}\n{scores}\n")
}

/// Test vector T2 (`docs/scoring.md`): 12 patients exercising the edge cases, with the
/// figures the official evaluate_model.py gives.
fn t2() -> tempfile::TempDir {
    let labels = [
        ("1", "Present", "Abnormal"),
        ("2", "Present", "Normal"),
        ("3", "Unknown", "Abnormal"),
        ("4", "Unknown", "Normal"),
        ("5", "Absent", "Normal"),
        ("6", "Absent", "Abnormal"),
        ("7", "Absent", "Normal"),
        ("8", "Absent", "Abnormal"),
        ("9", "Present", "Abnormal"),
        ("10", "Absent", "Normal"),
        ("11", "Absent", "Normal"),
        ("12", "Maybe", "Normal"),
    ];
    let outputs = [
        ("1", standard("1", "1,0,0,1,0", "0.7,0.2,0.1,0.8,0.2")),
        ("2", standard("2", "0,0,1,0,1", "0.3,0.1,0.6,0.4,0.6")),
        ("3", standard("3", "0,1,0,1,0", "0.2,0.5,0.3,0.6,0.4")),
        ("4", standard("4", "1,0,0,0,1", "0.5,0.3,0.2,0.3,0.7")),
        ("5", standard("5", "0,0,1,0,1", "0.1,0.1,0.8,0.2,0.8")),
        ("6", standard("6", "0,0,1,0,1", "0.2,0.2,0.6,0.45,0.55")),
        ("7", standard("7", "0,0,1,0,1", "0.05,0.15,0.8,0.1,0.9")),
        ("8", standard("8", "0,1,0,1,0", "0.3,0.4,0.3,0.7,0.3")),
        (
            "9",
            "#9\nNormal, abnormal ,ABSENT,unknown,present\n0,1,0,0,TRUE\n0.3,0.7,nan,0.1,0.9\n"
                .to_string(),
        ),
        ("10", standard("10", "0,1,1,0,0", "0.1,0.45,0.45,0.4,0.6")),
        ("11", "#11\n\n\n\n".to_string()),
        ("12", standard("12", "0,0,1,0,1", "0.1,0.1,0.8,0.2,0.8")),
    ];
    folders(&labels, &outputs)
}

fn close(got: f64, want: f64) {
    assert!((got - want).abs() < 1e-10, "got {got}, want {want}");
}

fn close_all(got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len());
    for (&g, &w) in got.iter().zip(want) {
        close(g, w);
    }
}

#[test]
fn t2_matches_the_official_scorer() {
    let dir = t2();
    for mode in [Mode::Strict, Mode::OfficialCompat] {
        let r = run(&dir, mode).unwrap();
        let m = &r.murmur;
        close(m.auroc, 0.7832175926);
        close(m.auprc, 0.7069444444);
        close(m.f_measure, 0.4966329966);
        close(m.accuracy, 0.5);
        close(m.weighted_accuracy, 0.5);
        close(m.cost, 8489.9382716049);
        close_all(&m.per_class.auroc, &[0.796875, 0.9, 0.6527777778]);
        close_all(&m.per_class.auprc, &[0.75, 0.75, 0.6208333333]);
        close_all(&m.per_class.f_measure, &[0.4444444444, 0.5, 0.5454545455]);
        close_all(&m.per_class.accuracy, &[0.5, 0.5, 0.5]);
        let o = &r.outcome;
        close(o.auroc, 0.9285714286);
        close(o.auprc, 0.9702380952);
        close(o.f_measure, 0.7482517483);
        close(o.accuracy, 0.75);
        close(o.weighted_accuracy, 0.78125);
        close(o.cost, 8010.0);
        close_all(&o.per_class.auroc, &[1.0, 0.8571428571]);
        close_all(&o.per_class.auprc, &[1.0, 0.9404761905]);
        close_all(&o.per_class.f_measure, &[0.7272727273, 0.7692307692]);
        close_all(&o.per_class.accuracy, &[0.8, 0.7142857143]);
        assert_eq!((r.score, r.outcome_cost), (m.weighted_accuracy, o.cost));
        assert!(r.errors.is_empty(), "{:?}", r.errors);
        // What the official code reads silently is named.
        let w = r.warnings.join("\n");
        assert!(
            w.contains("12.txt: murmur label \"Maybe\" is none of"),
            "{w}"
        );
        assert!(
            w.contains("9.csv: binary label \"TRUE\" for Present"),
            "{w}"
        );
        assert!(w.contains("9.csv: score \"nan\" for Absent"), "{w}");
        assert!(w.contains("11.csv: no murmur class"), "{w}");
        let p11 = r.items.iter().find(|i| i.patient == "11").unwrap();
        assert_eq!(
            (p11.murmur_output, p11.outcome_output),
            (Murmur::Present, Outcome::Abnormal)
        );
        assert!(!p11.defaulted);
    }
}

#[test]
fn t2_text_report_has_the_official_layout() {
    let r = run(&t2(), Mode::Strict).unwrap();
    let text = r.text();
    let official = "#Murmur scores\nAUROC,AUPRC,F-measure,Accuracy,Weighted Accuracy,Cost\n\
        0.783,0.707,0.497,0.500,0.500,8489.938\n\n\
        #Outcome scores\nAUROC,AUPRC,F-measure,Accuracy,Weighted Accuracy,Cost\n\
        0.929,0.970,0.748,0.750,0.781,8010.000\n\n\
        #Murmur scores (per class)\nClasses,Present,Unknown,Absent\n\
        AUROC,0.797,0.900,0.653\nAUPRC,0.750,0.750,0.621\nF-measure,0.444,0.500,0.545\n\
        Accuracy,0.500,0.500,0.500\n\n\
        #Outcome scores (per class)\nClasses,Abnormal,Normal\nAUROC,1.000,0.857\n\
        AUPRC,1.000,0.940\nF-measure,0.727,0.769\nAccuracy,0.800,0.714\n\n";
    assert!(text.starts_with(official), "{text}");
}

/// Test vector T1 (`docs/scoring.md`): the official test set's composition, every output
/// Present/Abnormal with constant scores; the published trivial-baseline rows.
#[test]
fn t1_constant_outputs_on_the_test_set_composition() {
    let mut labels = Vec::new();
    let murmurs = [("Present", 99), ("Unknown", 35), ("Absent", 343)];
    let mut murmur_of = murmurs.iter().flat_map(|&(m, n)| std::iter::repeat_n(m, n));
    let ids: Vec<String> = (0..477).map(|i| format!("{}", 10000 + i)).collect();
    for (k, id) in ids.iter().enumerate() {
        let outcome = if k < 242 { "Abnormal" } else { "Normal" };
        labels.push((id.as_str(), murmur_of.next().unwrap(), outcome));
    }
    let outputs: Vec<(&str, String)> = ids
        .iter()
        .map(|id| (id.as_str(), standard(id, "1,0,0,1,0", "1,0,0,1,0")))
        .collect();
    let dir = folders(&labels, &outputs);
    let r = run(&dir, Mode::Strict).unwrap();
    let text = r.text();
    assert!(
        text.starts_with(
            "#Murmur scores\nAUROC,AUPRC,F-measure,Accuracy,Weighted Accuracy,Cost\n\
         0.500,0.333,0.115,0.208,0.525,15083.375\n\n\
         #Outcome scores\nAUROC,AUPRC,F-measure,Accuracy,Weighted Accuracy,Cost\n\
         0.500,0.500,0.337,0.507,0.837,15083.375\n"
        ),
        "{text}"
    );
    assert!(text.contains("AUPRC,0.208,0.073,0.719\n"), "{text}");
    assert!(text.contains("Accuracy,1.000,0.000,0.000\n"), "{text}");
    assert_eq!(r.score, 495.0 / 943.0);
    assert!(r.warnings.iter().any(|w| w.contains("degenerate")));
}

#[test]
fn official_failures_are_reproduced_as_clear_errors() {
    let labels = [
        ("1", "Present", "Abnormal"),
        ("2", "Absent", "Normal"),
        ("5", "Absent", "Normal"),
    ];
    let ok = |p: &str| {
        (
            p.to_string(),
            standard(p, "1,0,0,1,0", "0.9,0.05,0.05,0.8,0.2"),
        )
    };
    let cases: [(&str, String, &str); 4] = [
        (
            "5",
            String::new(),
            "Output file 5.csv not found for label file 5.txt.",
        ),
        ("5", "#5\nPresent\n".into(), "2 line(s)"),
        (
            "5",
            format!("#5\n{CLASS_LINE}\n1,0\n0.1,0.2,0.3,0.4,0.5\n"),
            "IndexError",
        ),
        (
            "5",
            b"#5\nPresent\n1\n0.\xff\n"
                .iter()
                .map(|&b| b as char)
                .collect(),
            "UnicodeDecodeError",
        ),
    ];
    for (p, text, official) in cases {
        let mut outputs: Vec<(String, String)> = vec![ok("1"), ok("2")];
        let dir = folders(&labels, &[]);
        if !text.is_empty() {
            outputs.push((p.into(), text));
        }
        for (p, t) in &outputs {
            std::fs::write(dir.path().join(format!("outputs/{p}.csv")), t).unwrap();
        }
        if official == "UnicodeDecodeError" {
            std::fs::write(
                dir.path().join("outputs/5.csv"),
                b"#5\nPresent\n1\n0.\xff\n",
            )
            .unwrap();
        }
        let e = run(&dir, Mode::OfficialCompat).unwrap_err().to_string();
        assert!(e.contains(official) && e.contains("5.csv"), "{e}");
        // Strict mode scores the patient as the empty output and says why.
        let r = run(&dir, Mode::Strict).unwrap();
        let item = r.items.iter().find(|i| i.patient == "5").unwrap();
        assert!(item.defaulted);
        assert_eq!(
            (item.murmur_output, item.outcome_output),
            (Murmur::Present, Outcome::Abnormal)
        );
        assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
        assert_eq!(r.errors[0].file, "5.csv");
    }
}

#[test]
fn ragged_lines_are_errors_only_in_strict_mode() {
    let labels = [("1", "Absent", "Normal"), ("2", "Present", "Abnormal")];
    // An extra value on line 3: the official code reads the first five silently.
    let outputs = [
        ("1", standard("1", "0,0,1,0,1,1", "0.1,0.1,0.8,0.3,0.7")),
        ("2", standard("2", "1,0,0,1,0", "0.8,0.1,0.1,0.7,0.3")),
    ];
    let dir = folders(&labels, &outputs);
    let strict = run(&dir, Mode::Strict).unwrap();
    assert!(
        strict.errors[0]
            .reason
            .contains("line 2 names 5 class(es) but line 3 has 6"),
        "{:?}",
        strict.errors
    );
    assert!(strict.items[0].defaulted);
    let compat = run(&dir, Mode::OfficialCompat).unwrap();
    assert!(compat.errors.is_empty());
    assert_eq!(compat.score, 1.0);

    // The website's own example misses a comma: "0         1" becomes one field, the
    // values shift, and Normal (column 5) has none: the official code crashes.
    std::fs::write(
        dir.path().join("outputs/1.csv"),
        standard("1", "0,0         1,0,1", "0.1,0.1,0.8,0.3,0.7"),
    )
    .unwrap();
    let e = run(&dir, Mode::OfficialCompat).unwrap_err().to_string();
    assert!(
        e.contains("\"Normal\" is column 5 of line 2 but line 3 has only 4"),
        "{e}"
    );
    let strict = run(&dir, Mode::Strict).unwrap();
    assert!(
        strict.errors[0].reason.contains("IndexError"),
        "{:?}",
        strict.errors
    );
}

/// A class line that ends with a comma (a CSV writer's artefact) has an empty last
/// class name: values one fewer than the names still match every class, as the
/// official code reads them. Strict mode warns and scores it; other mismatches stay
/// errors.
#[test]
fn a_trailing_comma_on_the_class_line_is_not_a_mismatch() {
    let labels = [("1", "Absent", "Normal"), ("2", "Present", "Abnormal")];
    let trailing = |p: &str, b: &str, s: &str| format!("#{p}\n{CLASS_LINE},\n{b}\n{s}\n");
    let outputs = [
        ("1", trailing("1", "0,0,1,0,1", "0.1,0.1,0.8,0.3,0.7")),
        // Line 4 ends with a comma too: six values for six names.
        ("2", trailing("2", "1,0,0,1,0", "0.8,0.1,0.1,0.7,0.3,")),
    ];
    let dir = folders(&labels, &outputs);
    let strict = run(&dir, Mode::Strict).unwrap();
    assert!(strict.errors.is_empty(), "{:?}", strict.errors);
    assert_eq!(strict.score, 1.0);
    assert!(strict.items.iter().all(|i| !i.defaulted));
    assert_eq!(strict.items[0].murmur_scores, [0.1, 0.1, 0.8]);
    let named: Vec<&String> = strict
        .warnings
        .iter()
        .filter(|w| w.contains("ends with a comma"))
        .collect();
    assert_eq!(named.len(), 2, "{:?}", strict.warnings);
    assert!(named[0].starts_with("1.csv: ") && named[0].contains("column 6"));
    assert!(named[0].contains("line 3 or 4"), "{}", named[0]);
    assert!(named[1].starts_with("2.csv: ") && named[1].contains("on line 3;"));
    let compat = run(&dir, Mode::OfficialCompat).unwrap();
    assert_eq!(compat.score, 1.0);

    // Any other mismatch stays an error: two values fewer, or an empty name that is
    // not the last.
    for (binaries, class_line) in [
        ("0,0,1,0", format!("{CLASS_LINE},")),
        (
            "0,0,1,0,1",
            "Present,,Unknown,Absent,Abnormal,Normal".to_string(),
        ),
    ] {
        let text = format!("#1\n{class_line}\n{binaries}\n0.1,0.1,0.8,0.3,0.7\n");
        std::fs::write(dir.path().join("outputs/1.csv"), text).unwrap();
        let strict = run(&dir, Mode::Strict).unwrap();
        assert!(
            strict.errors[0].reason.contains("but line 3 has"),
            "{class_line}: {:?}",
            strict.errors
        );
        assert!(strict.items[0].defaulted);
    }
}

/// Findings of a differential test against the official code (8,710 random cases
/// bit-identical; these are the ones it caught).
#[test]
fn compat_reports_the_failure_the_official_scorer_reports_first() {
    fn ok(p: &str) -> (&str, String) {
        (p, standard(p, "0,0,1,0,1", "0.1,0.1,0.8,0.2,0.8"))
    }
    let labels = [("1", "Absent", "Normal"), ("2", "Absent", "Normal")];
    let e = |dir: &tempfile::TempDir| run(dir, Mode::OfficialCompat).unwrap_err().to_string();
    // A missing outcome label and a missing output: the pairing comes first.
    let dir = folders(&labels, &[ok("1")]);
    std::fs::write(dir.path().join("labels/1.txt"), "#Murmur: Absent\n").unwrap();
    assert!(
        e(&dir).contains("Output file 2.csv not found"),
        "{}",
        e(&dir)
    );
    // Missing outcome label in 1, missing murmur label in 2: murmur labels first.
    let dir = folders(&labels, &[ok("1"), ok("2")]);
    std::fs::write(dir.path().join("labels/1.txt"), "#Murmur: Absent\n").unwrap();
    std::fs::write(dir.path().join("labels/2.txt"), "#Outcome: Normal\n").unwrap();
    assert!(
        e(&dir).contains("2.txt") && e(&dir).contains("#Murmur:"),
        "{}",
        e(&dir)
    );
    // Missing outcome label, two-line output: murmur outputs are read first.
    let dir = folders(&labels, &[("1", "#1\nPresent\n".into()), ok("2")]);
    std::fs::write(dir.path().join("labels/1.txt"), "#Murmur: Absent\n").unwrap();
    assert!(e(&dir).contains("2 line(s)"), "{}", e(&dir));
    // An outcome IndexError in 1 and a one-line 2: every murmur read comes first.
    let dir = folders(
        &labels,
        &[
            ("1", format!("#1\n{CLASS_LINE}\n0,0,1\n0.1,0.1,0.8\n")),
            ("2", "#2".into()),
        ],
    );
    assert!(
        e(&dir).contains("2.csv") && e(&dir).contains("1 line(s)"),
        "{}",
        e(&dir)
    );
}

#[test]
fn a_fourth_line_cut_at_the_read_limit_is_not_read() {
    let labels = [("1", "Absent", "Normal"), ("2", "Present", "Abnormal")];
    let mut long = standard("2", "1,0,0,1,0", "0.1,0.1,0.8,0.9,").into_bytes();
    long.pop();
    long.extend(std::iter::repeat_n(b' ', 5 << 20));
    long.extend_from_slice(b"0.1\n");
    let dir = folders(
        &labels,
        &[("1", standard("1", "0,0,1,0,1", "0.1,0.1,0.8,0.05,0.9"))],
    );
    std::fs::write(dir.path().join("outputs/2.csv"), &long).unwrap();
    let r = run(&dir, Mode::Strict).unwrap();
    assert!(
        r.errors[0].reason.contains("do not end within 4 MiB"),
        "{:?}",
        r.errors
    );
    assert!(run(&dir, Mode::OfficialCompat).is_err());
}

#[test]
fn stray_names_are_ignored_and_infinite_scores_keep_their_sign() {
    use std::os::unix::ffi::OsStrExt;
    let labels = [("1", "Absent", "Normal"), ("2", "Present", "Abnormal")];
    let dir = folders(
        &labels,
        &[
            ("1", standard("1", "0,0,1,0,1", "-inf,0.1,inf,0.2,0.8")),
            ("2", standard("2", "1,0,0,1,0", "0.8,0.1,0.1,0.7,0.3")),
        ],
    );
    let odd = std::ffi::OsStr::from_bytes(b"rec\xff.wav");
    std::fs::write(dir.path().join("labels").join(odd), b"").unwrap();
    let r = run(&dir, Mode::OfficialCompat).unwrap();
    assert_eq!(r.score, 1.0);
    let json = serde_json::to_value(&r.items[0]).unwrap();
    assert_eq!(
        json["murmur_scores"],
        serde_json::json!(["-inf", 0.1, "inf"])
    );
    std::fs::write(
        dir.path()
            .join("labels")
            .join(std::ffi::OsStr::from_bytes(b"3\xff.TXT")),
        b"",
    )
    .unwrap();
    assert!(
        run(&dir, Mode::Strict)
            .unwrap_err()
            .to_string()
            .contains("not UTF-8")
    );
}

#[test]
fn wrong_patient_id_changes_nothing_but_is_named() {
    let labels = [("1", "Absent", "Normal"), ("2", "Present", "Abnormal")];
    let a = folders(
        &labels,
        &[
            ("1", standard("1", "0,0,1,0,1", "0.1,0.1,0.8,0.3,0.7")),
            ("2", standard("2", "1,0,0,1,0", "0.8,0.1,0.1,0.7,0.3")),
        ],
    );
    let b = folders(
        &labels,
        &[
            ("1", standard("99", "0,0,1,0,1", "0.1,0.1,0.8,0.3,0.7")),
            ("2", standard("2", "1,0,0,1,0", "0.8,0.1,0.1,0.7,0.3")),
        ],
    );
    let (ra, rb) = (
        run(&a, Mode::Strict).unwrap(),
        run(&b, Mode::Strict).unwrap(),
    );
    // Debug text, so that NaN per-class values compare equal.
    assert_eq!(format!("{:?}", ra.murmur), format!("{:?}", rb.murmur));
    assert_eq!(format!("{:?}", ra.outcome), format!("{:?}", rb.outcome));
    assert!(
        rb.warnings
            .iter()
            .any(|w| w.contains("1.csv: line 1 names patient \"99\""))
    );
    assert_eq!(ra.score, 1.0);
}

#[test]
fn missing_labels_and_empty_folders_are_reference_errors() {
    let dir = folders(&[("1", "Present", "Abnormal")], &[]);
    std::fs::write(
        dir.path().join("labels/2.txt"),
        "2 1 4000\nAV a b\n#Murmur: Absent\n",
    )
    .unwrap();
    let e = run(&dir, Mode::Strict).unwrap_err().to_string();
    assert!(
        e.contains("2.txt") && e.contains("no `#Outcome: <class>` line"),
        "{e}"
    );
    let empty = tempfile::tempdir().unwrap();
    let e = score_folders(empty.path(), empty.path(), Mode::Strict)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no patient .txt files"), "{e}");
}

#[test]
fn labels_are_read_as_the_helper_code_reads_them() {
    // CRLF, the last matching line wins, `#Murmur locations:` is not `#Murmur:`, and
    // a line without ": " is skipped.
    let text = "1 1 4000\r\n#Murmur: Absent\r\n#Murmur locations: AV\r\n#Murmur:Present\r\n#Murmur:  unknown \r\n#Outcome: normal\r\n";
    let (m, o, w) = parse_labels(text, "1.txt").unwrap();
    assert_eq!((m, o), (Murmur::Unknown, Outcome::Normal));
    assert!(w.is_empty());
}

#[test]
fn sanitising_follows_the_helper_code() {
    for (raw, one) in [
        ("1", true),
        ("1.0", true),
        (" \"1\" ", true),
        ("'T'", true),
        ("t", true),
        ("TRUE", false),
        ("yes", false),
        ("0.999", false),
        ("", false),
        ("inf", false),
    ] {
        assert_eq!(sanitize_binary(raw).0, one, "{raw:?}");
    }
    assert!(!sanitize_binary("0").1 && !sanitize_binary("False").1 && sanitize_binary("yes").1);
    assert_eq!(sanitize_scalar("-inf"), (f64::NEG_INFINITY, false));
    assert_eq!(sanitize_scalar("1_0"), (10.0, false));
    assert_eq!(sanitize_scalar("NaN"), (0.0, true));
    assert_eq!(sanitize_scalar("0.5\n"), (0.5, false));
}

#[test]
fn auc_walk_handles_ties_and_infinities() {
    // Constant scores: AUROC 0.5, AUPRC = prevalence.
    let (roc, prc) = auc(&[true, false, false, false], &[0.3; 4]);
    assert_eq!((roc, prc), (0.5, 0.25));
    // Perfect separation with an infinite score (largest + 1 stays inf).
    let (roc, prc) = auc(&[true, false], &[f64::INFINITY, 0.0]);
    assert_eq!((roc, prc), (1.0, 1.0));
    // No positives: undefined.
    assert!(auc(&[false, false], &[0.1, 0.2]).0.is_nan());
    assert!(nanmean(&[f64::NAN, f64::NAN]).is_nan());
    assert_eq!(nanmean(&[f64::NAN, 1.0, 0.5]), 0.75);
}

#[test]
fn cost_sanity_figures() {
    // Always refer: 10 + 10000 + 10000·p; never refer: 35 + 50000·p (docs/scoring.md).
    let abnormal = [true, false, false, false];
    close(mean_cost(&[true; 4], &abnormal), 10.0 + 10000.0 + 2500.0);
    close(mean_cost(&[false; 4], &abnormal), 35.0 + 12500.0);
}

#[test]
fn output_lines_split_like_python_text_mode() {
    let out = parse_output(b"#1\rPresent,Normal\r\n1,1\n0.5,0.5").unwrap();
    assert_eq!(out.classes, ["Present", "Normal"]);
    assert_eq!(out.scores, ["0.5", "0.5"]);
    assert_eq!(
        parse_output(b"#1\n\n\n").unwrap_err(),
        OutputProblem::TooFewLines(3)
    );
    assert_eq!(
        parse_output(b"").unwrap_err(),
        OutputProblem::TooFewLines(0)
    );
    let written = output_csv(
        "7",
        Murmur::Unknown,
        Outcome::Normal,
        &[0.1, 0.6, 0.3, 0.25, 0.75],
    );
    assert_eq!(
        written,
        "#7\nPresent,Unknown,Absent,Abnormal,Normal\n0,1,0,0,1\n0.1,0.6,0.3,0.25,0.75\n"
    );
}
