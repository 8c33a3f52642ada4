//! The CinC 2017 scorer on the real reference of `../shared/data/cinc2017` (48 records, 12
//! per class): perfect answers, the trivial all-N answer, and every kind of broken answers
//! file, which is listed and never fatal in strict mode.

use score::Mode;
use score::cinc2017::{Label, parse_reference, score, score_files};

fn reference(test: &str) -> Option<(std::path::PathBuf, Vec<(String, Label)>)> {
    let data = testkit::shared_data(test)?;
    let path = data.join("cinc2017/REFERENCE.csv");
    let refs = parse_reference(&std::fs::read_to_string(&path).unwrap(), "REFERENCE.csv").unwrap();
    Some((path, refs))
}

#[test]
fn perfect_and_trivial_answers() {
    let Some((path, refs)) = reference("perfect_and_trivial_answers") else {
        return;
    };
    assert_eq!(refs.len(), 48);
    for l in Label::ALL {
        assert_eq!(refs.iter().filter(|r| r.1 == l).count(), 12, "{l:?}");
    }
    // Perfect: the reference itself as answers.
    let r = score_files(&path, &path, Mode::Strict).unwrap();
    assert_eq!((r.f1.n, r.f1.a, r.f1.o, r.f1.noisy), (1.0, 1.0, 1.0, 1.0));
    assert_eq!((r.score, r.score_4class), (1.0, 1.0));
    assert!(r.errors.is_empty());
    // Trivial: everything N. F1n = 2·12/(12 + 48) = 0.4; the others 0.
    let all_n: String = refs.iter().map(|(rec, _)| format!("{rec},N\n")).collect();
    let r = score(&refs, &all_n, "answers.txt", Mode::Strict).unwrap();
    assert_eq!((r.f1.n, r.f1.a, r.f1.o, r.f1.noisy), (0.4, 0.0, 0.0, 0.0));
    assert_eq!(r.score, 0.4 / 3.0);
    assert_eq!(r.score_4class, 0.1);
}

#[test]
fn broken_answers_are_listed() {
    let Some((path, refs)) = reference("broken_answers_are_listed") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let answers = dir.path().join("answers.txt");
    // Missing file: every record is `~`, and the report says the file is missing.
    let r = score_files(&path, &answers, Mode::Strict).unwrap();
    assert!(r.errors[0].reason.contains("missing"));
    assert!(
        r.items
            .iter()
            .all(|i| i.answer == Label::Noisy && i.defaulted)
    );
    assert_eq!(r.f1.noisy, 2.0 * 12.0 / (12.0 + 48.0));
    assert!(score_files(&path, &answers, Mode::OfficialCompat).is_err());
    // Binary garbage, CRLF, blank lines, quotes and spaces.
    std::fs::write(
        &answers,
        b"\xff\xfe\x00garbage\r\n\r\nA00001, N \r\n\"A00002\",N\n",
    )
    .unwrap();
    let r = score_files(&path, &answers, Mode::Strict).unwrap();
    let first = r.items.iter().find(|i| i.record == refs[0].0).unwrap();
    assert_eq!(
        first.answer,
        Label::N,
        "spaces around the fields are trimmed"
    );
    assert!(r.errors.iter().any(|e| e.line == Some(1)), "{:?}", r.errors);
    assert!(
        r.warnings.iter().any(|w| w.contains("\"A00002\"")),
        "{:?}",
        r.warnings
    );
    assert_eq!(r.items.len(), 48);
}
