//! The PhysioNet 2022 scorer on the real labels of `../shared/data/circor2022` (46
//! patients: 16 Present, 12 Unknown, 18 Absent; 28 Abnormal, 18 Normal): the labels agree
//! with the typed patient-file reader, perfect outputs score the maximum, the trivial
//! answer scores what the formulas say, and every broken output of the official
//! reader's quirks (`docs/scoring.md`) is listed in strict mode and a clear failure in
//! compat mode, never a crash.

use std::path::{Path, PathBuf};

use formats::circor::{Murmur, Outcome, PatientFile};
use score::Mode;
use score::physionet2022::{Reference, load_labels, output_csv, score};

fn labels(test: &str) -> Option<(PathBuf, Reference)> {
    let dir = testkit::shared_data(test)?.join("circor2022/training_data");
    let reference = load_labels(&dir).unwrap();
    Some((dir, reference))
}

/// Writes one output per patient, chosen by `pick`.
fn write_outputs(
    dir: &Path,
    reference: &Reference,
    pick: impl Fn(Murmur, Outcome) -> (Murmur, Outcome),
) {
    for p in &reference.patients {
        let (m, o) = pick(p.murmur, p.outcome);
        let mut scores = [0.0; 5];
        scores[m as usize] = 1.0;
        scores[3 + o as usize] = 1.0;
        std::fs::write(
            dir.join(format!("{}.csv", p.id)),
            output_csv(&p.id, m, o, &scores),
        )
        .unwrap();
    }
}

/// `docs/scoring.md`: mean cost per patient from the referral counts.
fn expected_cost(tp: f64, fp: f64, fn_: f64, tn: f64) -> f64 {
    let n = tp + fp + fn_ + tn;
    let x = (tp + fp) / n;
    let expert = 25.0 + 397.0 * x - 1718.0 * x.powi(2) + 11296.0 * x.powi(4);
    10.0 + expert + (10000.0 * tp + 50000.0 * fn_) / n
}

fn close(got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs(),
        "got {got}, want {want}"
    );
}

#[test]
fn labels_agree_with_the_patient_file_reader() {
    let Some((dir, reference)) = labels("labels_agree_with_the_patient_file_reader") else {
        return;
    };
    assert_eq!(reference.patients.len(), 46);
    assert!(reference.warnings.is_empty(), "{:?}", reference.warnings);
    for p in &reference.patients {
        let file = PatientFile::read(dir.join(format!("{}.txt", p.id))).unwrap();
        assert_eq!(Some(p.murmur), file.murmur(), "{}", p.id);
        assert_eq!(Some(p.outcome), file.outcome(), "{}", p.id);
    }
    let count = |m: Murmur| reference.patients.iter().filter(|p| p.murmur == m).count();
    assert_eq!(
        (
            count(Murmur::Present),
            count(Murmur::Unknown),
            count(Murmur::Absent)
        ),
        (16, 12, 18)
    );
    let abnormal = reference
        .patients
        .iter()
        .filter(|p| p.outcome == Outcome::Abnormal)
        .count();
    assert_eq!(abnormal, 28);
}

#[test]
fn perfect_outputs_score_the_maximum() {
    let Some((_, reference)) = labels("perfect_outputs_score_the_maximum") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    write_outputs(out.path(), &reference, |m, o| (m, o));
    for mode in [Mode::Strict, Mode::OfficialCompat] {
        let r = score(&reference, out.path(), mode).unwrap();
        assert!(r.errors.is_empty() && r.warnings.is_empty(), "{r:?}");
        for t in [&r.murmur, &r.outcome] {
            assert_eq!(
                (
                    t.auroc,
                    t.auprc,
                    t.f_measure,
                    t.accuracy,
                    t.weighted_accuracy
                ),
                (1.0, 1.0, 1.0, 1.0, 1.0)
            );
        }
        assert_eq!(r.score, 1.0);
        // Outcome: refer exactly the 28 Abnormal patients.
        close(r.outcome_cost, expected_cost(28.0, 0.0, 0.0, 18.0));
        // Murmur (3×2): Present and Unknown are referred (11 + 7 Abnormal, 5 + 5
        // Normal), Absent is not (10 Abnormal, 8 Normal).
        close(r.murmur.cost, expected_cost(18.0, 10.0, 10.0, 8.0));
    }
}

#[test]
fn trivial_outputs_score_the_formulas() {
    let Some((_, reference)) = labels("trivial_outputs_score_the_formulas") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    write_outputs(out.path(), &reference, |_, _| {
        (Murmur::Present, Outcome::Abnormal)
    });
    let r = score(&reference, out.path(), Mode::Strict).unwrap();
    assert_eq!(r.score, 80.0 / 134.0);
    assert_eq!(r.outcome.weighted_accuracy, 140.0 / 158.0);
    // Always refer: 10 + 10000 + 10000·p (docs/scoring.md).
    close(r.outcome_cost, 10.0 + 10000.0 + 10000.0 * 28.0 / 46.0);
    close(r.murmur.cost, r.outcome_cost);
    assert_eq!(r.murmur.per_class.accuracy, [1.0, 0.0, 0.0]);
    assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    assert!(r.warnings.iter().all(|w| w.contains("degenerate")));
}

#[test]
fn every_broken_output_is_listed_or_a_clear_failure() {
    let Some((_, reference)) = labels("every_broken_output_is_listed_or_a_clear_failure") else {
        return;
    };
    let classes = "Present,Unknown,Absent,Abnormal,Normal";
    // (what, bytes, strict: listed as an error (else a warning), compat: fails)
    let cases: Vec<(&str, Vec<u8>, bool, bool)> = vec![
        ("missing", Vec::new(), true, true),
        ("empty file", b"".to_vec(), true, true),
        ("two lines", b"#p\nPresent\n".to_vec(), true, true),
        (
            "binaries shorter than classes",
            format!("#p\n{classes}\n1,0\n1,0,0,1,0\n").into_bytes(),
            true,
            true,
        ),
        (
            "scores shorter than classes",
            format!("#p\n{classes}\n1,0,0,1,0\n1\n").into_bytes(),
            true,
            true,
        ),
        (
            "not UTF-8",
            {
                let mut b = format!("#p\n{classes}\n1,0,0,1,0\n0,0,0,0,0\n").into_bytes();
                b[3] = 0xff;
                b
            },
            true,
            true,
        ),
        (
            "extra values",
            format!("#p\n{classes}\n1,0,0,1,0,0\n1,0,0,1,0\n").into_bytes(),
            true,
            false,
        ),
        (
            "official empty output",
            b"#p\n\n\n\n".to_vec(),
            false,
            false,
        ),
        (
            "wrong id, TRUE, yes, nan, words, duplicates, unknown class",
            format!(
                "#someone else\n{classes},present,Maybe\nTRUE,yes,0,1,0,1,1\nnan,x,0.5,1,0,0.9,1\n"
            )
            .into_bytes(),
            false,
            false,
        ),
        (
            "no outcome classes",
            b"#p\nPresent,Unknown,Absent\n0,0,1\n0.1,0.1,0.8\n".to_vec(),
            false,
            false,
        ),
        (
            "CRLF, lone CR, quotes, spaces, infinities",
            format!("#p\r{classes}\r\n\"1\", '0' ,0,T,0\r\n inf,-inf,1e400,0.5,0.5\r\n")
                .into_bytes(),
            false,
            false,
        ),
    ];
    let victim = &reference.patients[0].id;
    for (what, bytes, strict_error, compat_fails) in cases {
        let out = tempfile::tempdir().unwrap();
        write_outputs(out.path(), &reference, |m, o| (m, o));
        let file = out.path().join(format!("{victim}.csv"));
        if what == "missing" {
            std::fs::remove_file(&file).unwrap();
        } else {
            std::fs::write(&file, &bytes).unwrap();
        }
        let r = score(&reference, out.path(), Mode::Strict).unwrap();
        let named = |list: &[String]| list.iter().any(|e| e.contains(&format!("{victim}.csv")));
        let errors: Vec<String> = r.errors.iter().map(ToString::to_string).collect();
        if strict_error {
            assert_eq!(errors.len(), 1, "{what}: {errors:?}");
            assert!(named(&errors), "{what}: {errors:?}");
            assert!(r.items[0].defaulted, "{what}");
        } else {
            assert!(errors.is_empty(), "{what}: {errors:?}");
            assert!(named(&r.warnings), "{what}: {:?}", r.warnings);
            assert!(!r.items[0].defaulted, "{what}");
        }
        assert_eq!(r.items.len(), 46);
        match score(&reference, out.path(), Mode::OfficialCompat) {
            Err(e) => {
                assert!(compat_fails, "{what}: {e}");
                let e = e.to_string();
                assert!(e.contains(&format!("{victim}.csv")), "{what}: {e}");
            }
            Ok(r) => assert!(!compat_fails, "{what}: compat scored {}", r.score),
        }
    }
}

#[test]
fn stray_outputs_and_a_missing_folder() {
    let Some((dir, reference)) = labels("stray_outputs_and_a_missing_folder") else {
        return;
    };
    let out = tempfile::tempdir().unwrap();
    write_outputs(out.path(), &reference, |m, o| (m, o));
    std::fs::write(out.path().join("99999.csv"), "#99999\n\n\n\n").unwrap();
    std::fs::create_dir(out.path().join("not-a-file.csv")).unwrap();
    let r = score(&reference, out.path(), Mode::Strict).unwrap();
    assert_eq!(r.score, 1.0);
    assert!(
        r.warnings
            .iter()
            .any(|w| w.starts_with("99999.csv: no patient"))
    );
    // No outputs at all: every patient is the empty output, and the folder is named.
    let missing = dir.join("no-such-folder");
    let r = score(&reference, &missing, Mode::Strict).unwrap();
    assert_eq!(r.errors.len(), 1);
    assert!(r.errors[0].reason.contains("outputs folder does not exist"));
    assert!(r.items.iter().all(|i| i.defaulted));
    assert!(score(&reference, &missing, Mode::OfficialCompat).is_err());
}
