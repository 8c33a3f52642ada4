//! The CPSC 2021 scorer on the real labels of `../shared/data/cpsc2021`: the test vectors of
//! `docs/scoring.md` (each checked with the official scorer), perfect predictions
//! scoring the maximum, and every invalid-prediction quirk giving a listed error in
//! strict mode and a clear failure in official-compat mode, never a crash.

use formats::mat::{NumericArray, NumericData, write_v4_file};
use score::cpsc2021::{Class, RefRecord, Reference, Report, load_reference, score};
use score::{Mode, ScoreError};

fn reference(test: &str) -> Option<Reference> {
    let data = testkit::shared_data(test)?;
    Some(load_reference(&data.join("cpsc2021")).unwrap())
}

fn record<'a>(r: &'a Reference, name: &str) -> &'a RefRecord {
    r.records.iter().find(|x| x.name == name).unwrap()
}

/// Scores one prediction file (`name` with its extension) for one record.
fn score_one(
    r: &Reference,
    rec: &str,
    file: &str,
    content: &[u8],
    mode: Mode,
) -> Result<Report, ScoreError> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(file), content).unwrap();
    let one = Reference {
        dir: r.dir.clone(),
        records: vec![record(r, rec).clone()],
    };
    score(&one, dir.path(), mode)
}

fn u(r: &Reference, rec: &str, endpoints: &str, mode: Mode) -> Result<f64, ScoreError> {
    let json = format!("{{\"predict_endpoints\": {endpoints}}}");
    score_one(r, rec, &format!("{rec}.json"), json.as_bytes(), mode).map(|rep| rep.score)
}

fn both(r: &Reference, rec: &str, endpoints: &str) -> f64 {
    let s = u(r, rec, endpoints, Mode::Strict).unwrap();
    let c = u(r, rec, endpoints, Mode::OfficialCompat).unwrap();
    assert_eq!(s, c, "{rec} {endpoints}: strict and compat differ");
    s
}

#[test]
fn masks_of_data_92_12_and_data_84_1() {
    let Some(r) = reference("masks_of_data_92_12_and_data_84_1") else {
        return;
    };
    let rec = record(&r, "data_92_12");
    assert_eq!((rec.class, rec.len, rec.ma()), (Class::AFp, 9779, 1));
    assert_eq!(rec.episodes, [(2803, 6487)]);
    // Onset: 1.0 on [2668, 2989); 0.5 on [2486, 2668) and [2989, 3148).
    for (x, v) in [
        (2485, 0.0),
        (2486, 0.5),
        (2667, 0.5),
        (2668, 1.0),
        (2988, 1.0),
        (2989, 0.5),
        (3147, 0.5),
        (3148, 0.0),
    ] {
        assert_eq!(rec.onset_at(x), v, "onset at {x}");
    }
    // Offset: 1.0 on [6281, 6645); 0.5 on [6088, 6281) and [6645, 6743).
    for (x, v) in [
        (6087, 0.0),
        (6088, 0.5),
        (6280, 0.5),
        (6281, 1.0),
        (6644, 1.0),
        (6645, 0.5),
        (6742, 0.5),
        (6743, 0.0),
    ] {
        assert_eq!(rec.offset_at(x), v, "offset at {x}");
    }
    let rec = record(&r, "data_84_1");
    assert_eq!((rec.class, rec.len), (Class::AFf, 103808));
    assert_eq!((rec.onset_at(0), rec.onset_at(244)), (1.0, 1.0));
    assert!(rec.onset_at(245) < 1.0);
    assert_eq!((rec.offset_at(103618), rec.offset_at(103807)), (1.0, 1.0));
    assert!(rec.offset_at(103617) < 1.0);
}

/// `docs/scoring.md`, each vector in both modes where the official scorer accepts it.
#[test]
fn test_vectors_of_the_spec() {
    let Some(r) = reference("test_vectors_of_the_spec") else {
        return;
    };
    let f4 = |v: f64| format!("{v:.4}");
    // data_92_12 (AFp, L = 9779, Ma = 1)
    for (p, want) in [
        ("[[2833,6457]]", 3.0),
        ("[[2803,6487]]", 3.0),
        ("[[2668,6281]]", 3.0),
        ("[[2667,6280]]", 2.0),
        ("[[2989,6645]]", 2.0),
        ("[[2988.9,6644.9]]", 3.0),
        ("[[2833,6457],[2833,6457]]", 3.0),
        ("[[2833,6457],[9000,9778]]", 2.0),
        ("[[0,9778]]", 0.0),
        ("[]", -1.0),
    ] {
        assert_eq!(both(&r, "data_92_12", p), want, "data_92_12 {p}");
    }
    // Reversed rows: the official scorer scores them (1); strict mode refuses them (−1).
    assert_eq!(
        u(&r, "data_92_12", "[[6457,2833]]", Mode::OfficialCompat).unwrap(),
        1.0
    );
    assert_eq!(
        u(&r, "data_92_12", "[[6457,2833]]", Mode::Strict).unwrap(),
        -1.0
    );
    // Where the official scorer crashes: a clear failure in compat mode, −1 ([]) in strict.
    for p in ["[[2833,9779]]", "[2833,6457]", "[[2833,6457,1]]"] {
        let e = u(&r, "data_92_12", p, Mode::OfficialCompat).unwrap_err();
        assert!(
            matches!(e, ScoreError::OfficialWouldFail { .. }),
            "{p}: {e}"
        );
        assert_eq!(u(&r, "data_92_12", p, Mode::Strict).unwrap(), -1.0, "{p}");
    }
    // data_92_19 (AFp, Ma = 2)
    // The markers (as in labels.csv); the test vectors' episodes are the first and last AF beats.
    let rec = record(&r, "data_92_19");
    assert_eq!(rec.episodes, [(14873, 18427), (54784, 62702)]);
    assert_eq!(both(&r, "data_92_19", "[[14903,18397],[54814,62672]]"), 5.0);
    assert_eq!(both(&r, "data_92_19", "[[14903,18397]]"), 3.0);
    assert_eq!(both(&r, "data_92_19", "[[14903,18397],[14903,18397]]"), 5.0);
    assert_eq!(
        f4(both(
            &r,
            "data_92_19",
            "[[14903,18397],[54814,62672],[100,200]]"
        )),
        "3.6667"
    );
    // data_101_6 (AFp, Ma = 4, last (N at L)
    let rec = record(&r, "data_101_6");
    assert_eq!((rec.ma(), rec.len), (4, 22355));
    assert_eq!(rec.episodes.last().unwrap().1, 22355);
    let l = rec.len;
    assert_eq!(both(&r, "data_101_6", &perfect(rec)), 9.0);
    assert_eq!(both(&r, "data_101_6", &format!("[[0,{}]]", l - 1)), 1.0);
    assert_eq!(both(&r, "data_101_6", &format!("[[0,{}]]", l - 2)), 2.0);
    assert_eq!(both(&r, "data_101_6", "[]"), -1.0);
    // data_101_8 (AFp, Ma = 2, the last (N third from the end: the tail branch)
    let l = record(&r, "data_101_8").len;
    assert_eq!(both(&r, "data_101_8", &format!("[[0,{}]]", l - 1)), 0.5);
    // data_84_1 (AFf, L = 103808)
    assert_eq!(both(&r, "data_84_1", "[[0,103807]]"), 3.0);
    assert_eq!(both(&r, "data_84_1", "[[1,103807]]"), 2.0);
    assert_eq!(both(&r, "data_84_1", "[[0,50000],[50001,103807]]"), 1.0);
    assert_eq!(both(&r, "data_84_1", "[]"), -2.0);
    // A negative index wraps to the end in the official scorer; strict mode refuses it.
    assert_eq!(
        u(&r, "data_84_1", "[[-1,103806]]", Mode::OfficialCompat).unwrap(),
        2.0
    );
    assert_eq!(
        u(&r, "data_84_1", "[[-1,103806]]", Mode::Strict).unwrap(),
        -2.0
    );
    // data_21_7 (N)
    assert_eq!(both(&r, "data_21_7", "[]"), 1.0);
    assert_eq!(both(&r, "data_21_7", "[[0,47200]]"), -1.0);
    assert_eq!(both(&r, "data_21_7", "[[10,20]]"), -0.5);
    // A flat list on an N record: the official scorer takes it as two rows (AFp, −0.5).
    assert_eq!(
        u(&r, "data_21_7", "[10,20]", Mode::OfficialCompat).unwrap(),
        -0.5
    );
    assert_eq!(u(&r, "data_21_7", "[10,20]", Mode::Strict).unwrap(), 1.0);
}

/// The prediction the reference itself implies: each episode from its start marker to its
/// end marker (clipped to the last sample), the whole record for AFf, nothing for N.
fn perfect(rec: &RefRecord) -> String {
    let last = rec.len as i64 - 1;
    let rows: Vec<String> = match rec.class {
        Class::N => vec![],
        Class::AFf => vec![format!("[0,{last}]")],
        Class::AFp => rec
            .episodes
            .iter()
            .map(|&(s, e)| format!("[{s},{}]", e.min(last)))
            .collect(),
    };
    format!("[{}]", rows.join(","))
}

/// Perfect predictions score the maximum on every real record: 1 + 2·Ma for AFp, 3 for
/// AFf, 1 for N; and the mean over the reference is the mean of those.
#[test]
fn perfect_predictions_score_the_maximum() {
    let Some(r) = reference("perfect_predictions_score_the_maximum") else {
        return;
    };
    assert_eq!(r.records.len(), 23);
    let dir = tempfile::tempdir().unwrap();
    let mut maxima = std::collections::BTreeMap::new();
    for rec in &r.records {
        let json = format!("{{\"predict_endpoints\": {}}}", perfect(rec));
        std::fs::write(dir.path().join(format!("{}.json", rec.name)), json).unwrap();
        let max = match rec.class {
            Class::N => 1.0,
            Class::AFf => 3.0,
            Class::AFp => 1.0 + 2.0 * rec.ma() as f64,
        };
        maxima.insert(rec.name.clone(), max);
    }
    let mean = maxima.values().sum::<f64>() / maxima.len() as f64;
    for mode in [Mode::Strict, Mode::OfficialCompat] {
        let rep = score(&r, dir.path(), mode).unwrap();
        assert!(rep.errors.is_empty(), "{:?}", rep.errors);
        let got: std::collections::BTreeMap<String, f64> =
            rep.items.iter().map(|i| (i.record.clone(), i.u)).collect();
        assert_eq!(got, maxima, "{mode:?}");
        assert!(
            (rep.score - mean).abs() < 1e-12,
            "{mode:?}: {} vs {mean}",
            rep.score
        );
    }
    // The class mix of the README: 8 N, 7 AFf, 8 AFp.
    let count = |c| r.records.iter().filter(|x| x.class == c).count();
    assert_eq!(
        (count(Class::N), count(Class::AFf), count(Class::AFp)),
        (8, 7, 8)
    );
}

/// Every invalid prediction is a listed error in strict mode (scored as `[]`), and a
/// clear failure in official-compat mode where the official scorer crashes.
#[test]
fn invalid_predictions_are_listed_not_fatal() {
    let Some(r) = reference("invalid_predictions_are_listed_not_fatal") else {
        return;
    };
    let l = record(&r, "data_92_12").len;
    let cases: &[(&str, &[u8], &str)] = &[
        (
            "end == L",
            format!("{{\"predict_endpoints\": [[10,{l}]]}}")
                .leak()
                .as_bytes(),
            "not within",
        ),
        (
            "flat list",
            b"{\"predict_endpoints\": [10, 20]}",
            "flat list",
        ),
        (
            "three columns",
            b"{\"predict_endpoints\": [[1,2,3]]}",
            "rows of 3",
        ),
        (
            "ragged",
            b"{\"predict_endpoints\": [[1,2],[3]]}",
            "different lengths",
        ),
        (
            "strings",
            b"{\"predict_endpoints\": [[\"2833\",\"6457\"]]}",
            "not numbers",
        ),
        (
            "booleans",
            b"{\"predict_endpoints\": [[true,6457]]}",
            "not numbers",
        ),
        (
            "NaN literal",
            b"{\"predict_endpoints\": [[NaN,6457]]}",
            "not a pair of finite numbers",
        ),
        (
            "missing key",
            b"{\"endpoints\": []}",
            "predict_endpoints\" is missing",
        ),
        ("not a list", b"{\"predict_endpoints\": 5}", "not a list"),
        ("not an object", b"[[1,2]]", "not an object"),
        ("empty file", b"", "not valid JSON"),
        ("binary garbage", b"\x00\xff\xfe{{", "not valid JSON"),
        (
            "negative",
            b"{\"predict_endpoints\": [[-5,100]]}",
            "not within",
        ),
    ];
    for (what, content, reason) in cases {
        let rep = score_one(&r, "data_92_12", "data_92_12.json", content, Mode::Strict).unwrap();
        assert_eq!(rep.score, -1.0, "{what}: scored as []");
        assert!(rep.items[0].defaulted, "{what}");
        assert_eq!(rep.errors.len(), 1, "{what}");
        assert!(
            rep.errors[0].reason.contains(reason),
            "{what}: {}",
            rep.errors[0]
        );
        assert!(rep.errors[0].file.contains("data_92_12.json"));
    }
    // The official scorer accepts negative endpoints (they wrap) and a boolean beside a
    // number (True is 1: the row is AFp, its end earns the offset credit).
    let rep = score_one(
        &r,
        "data_92_12",
        "data_92_12.json",
        b"{\"predict_endpoints\": [[true,6457]]}",
        Mode::OfficialCompat,
    )
    .unwrap();
    assert_eq!(rep.score, 2.0);
    for (what, content, _) in cases
        .iter()
        .filter(|c| c.0 != "negative" && c.0 != "booleans")
    {
        let e = score_one(
            &r,
            "data_92_12",
            "data_92_12.json",
            content,
            Mode::OfficialCompat,
        )
        .unwrap_err();
        assert!(
            matches!(e, ScoreError::OfficialWouldFail { .. }),
            "{what}: {e}"
        );
    }
}

/// A set where one N record predicts `[[NaN, NaN]]`: Python's `json.load` reads NaN, the
/// official class test finds `NaN - NaN != L - 1` (AFp: −0.5 on an N record), and the
/// mean counts it. Strict mode lists the file and scores it as `[]`. (Figures from the
/// official scoring logic run with the oracle's numpy on these files.)
#[test]
fn a_nan_endpoint_is_scored_as_the_official_scorer_scores_it() {
    let Some(r) = reference("a_nan_endpoint_is_scored_as_the_official_scorer_scores_it") else {
        return;
    };
    let three = Reference {
        dir: r.dir.clone(),
        records: ["data_21_7", "data_84_1", "data_92_12"]
            .iter()
            .map(|n| record(&r, n).clone())
            .collect(),
    };
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    for (rec, rows) in [
        ("data_21_7", "[[NaN, NaN]]"),
        ("data_84_1", "[[0,103807]]"),
        ("data_92_12", "[[2833,6457]]"),
    ] {
        let json = format!("{{\"predict_endpoints\": {rows}}}");
        std::fs::write(p.join(format!("{rec}.json")), json).unwrap();
    }
    let compat = score(&three, p, Mode::OfficialCompat).unwrap();
    let us: Vec<f64> = compat.items.iter().map(|i| i.u).collect();
    assert_eq!(us, [-0.5, 3.0, 3.0]);
    assert_eq!(compat.items[0].class_pred, Class::AFp);
    assert_eq!(compat.score, 1.8333333333333333);
    assert!(
        compat
            .text()
            .starts_with("AF Endpoints Detection Performance: 1.8333\n")
    );

    let strict = score(&three, p, Mode::Strict).unwrap();
    assert_eq!(strict.items[0].u, 1.0);
    assert!(strict.items[0].defaulted);
    assert_eq!(strict.errors.len(), 1);
    assert_eq!(strict.errors[0].file, "data_21_7.json");
    assert!(
        strict.errors[0]
            .reason
            .contains("[NaN, NaN] is not a pair of finite numbers"),
        "{}",
        strict.errors[0]
    );
    assert_eq!(strict.score, 7.0 / 3.0);

    // On AF records the official scorer goes on to int(NaN) and stops.
    for rec in ["data_84_1", "data_92_12"] {
        let e = u(&r, rec, "[[NaN, NaN]]", Mode::OfficialCompat).unwrap_err();
        assert!(
            matches!(&e, ScoreError::OfficialWouldFail { file, .. } if file == &format!("{rec}.json"))
                && e.to_string()
                    .contains("cannot convert float NaN to integer"),
            "{rec}: {e}"
        );
        let want = if rec == "data_84_1" { -2.0 } else { -1.0 };
        assert_eq!(u(&r, rec, "[[NaN, NaN]]", Mode::Strict).unwrap(), want);
    }
}

/// Official-compat mode reads a prediction as Python's `json.load` does, then lets numpy's
/// arithmetic decide. Each figure (or failure) is what the official scoring logic gives on
/// the same file with Python 3.11 and numpy 2.4.
#[test]
fn compat_reads_predictions_as_python_json_load() {
    let Some(r) = reference("compat_reads_predictions_as_python_json_load") else {
        return;
    };
    let big = "1180591620717411303424"; // 2^70
    let big_plus = |d: u64| {
        let v: u128 = 1180591620717411303424 + u128::from(d);
        v.to_string()
    };
    let googol4 = format!("1{}", "0".repeat(400));
    let googol4_plus = format!("1{}47200", "0".repeat(395));
    let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    let cases: Vec<(&str, String, Result<f64, &str>)> = vec![
        (
            "data_21_7",
            "{\"predict_endpoints\": [[0, Infinity]]}".into(),
            Ok(-0.5),
        ),
        (
            "data_21_7",
            "{\"predict_endpoints\": [[-Infinity, 5], [1, 2]]}".into(),
            Ok(-0.5),
        ),
        (
            "data_21_7",
            "{\"predict_endpoints\": [[0, 1e400]]}".into(),
            Ok(-0.5),
        ),
        (
            "data_84_1",
            "{\"predict_endpoints\": [[0, Infinity]]}".into(),
            Err("cannot convert float infinity to integer"),
        ),
        (
            "data_21_7",
            "{\"predict_endpoints\": [[0, 47200.0]]}".into(),
            Ok(-1.0),
        ),
        // A repeated key: the last value counts.
        (
            "data_21_7",
            "{\"predict_endpoints\": [], \"predict_endpoints\": [[0, 47200]]}".into(),
            Ok(-1.0),
        ),
        (
            "data_84_1",
            "{\"predict_endpoints\": [[0, 5]], \"predict_endpoints\": [[0, 103807]]}".into(),
            Ok(3.0),
        ),
        // Integers are exact: their difference decides the class (Python objects in numpy).
        (
            "data_21_7",
            format!("{{\"predict_endpoints\": [[{big}, {}]]}}", big_plus(47200)),
            Ok(-1.0),
        ),
        (
            "data_21_7",
            format!("{{\"predict_endpoints\": [[{googol4}, {googol4_plus}]]}}"),
            Ok(-1.0),
        ),
        (
            "data_84_1",
            format!("{{\"predict_endpoints\": [[{big}, {}]]}}", big_plus(103807)),
            Err("out of range"),
        ),
        // int64 differences wrap, uint64 ones too; int64 with uint64 is float64.
        (
            "data_21_7",
            "{\"predict_endpoints\": [[9223372036854775806, -9223372036854728610]]}".into(),
            Ok(-1.0),
        ),
        (
            "data_21_7",
            "{\"predict_endpoints\": [[9223372036854775808, 9223372036854823008]]}".into(),
            Ok(-1.0),
        ),
        (
            "data_21_7",
            "{\"predict_endpoints\": [[9223372036854775807, 9223372036854823008]]}".into(),
            Ok(-0.5),
        ),
        // A float against an integer too large for a float.
        (
            "data_21_7",
            format!("{{\"predict_endpoints\": [[0.5, {googol4}]]}}"),
            Err("too large to convert to a float (OverflowError)"),
        ),
        (
            "data_21_7",
            format!("{{\"predict_endpoints\": [[0.5, {googol4}], [1, 2]]}}"),
            Ok(-0.5),
        ),
        (
            "data_21_7",
            format!("{{\"predict_endpoints\": [[{}, 1]]}}", "1".repeat(4301)),
            Err("4301 digits"),
        ),
        (
            "data_21_7",
            format!("{{\"predict_endpoints\": [[{}, 1]]}}", "1".repeat(4300)),
            Ok(-0.5),
        ),
        (
            "data_21_7",
            "\u{feff}{\"predict_endpoints\": []}".into(),
            Err("Unexpected UTF-8 BOM"),
        ),
        (
            "data_21_7",
            "{\"\\ud800\": 1, \"predict_endpoints\": [[1,2]]}".into(),
            Ok(-0.5),
        ),
        (
            "data_21_7",
            format!("{{\"x\": {}, \"predict_endpoints\": [[1,2]]}}", nest(991)),
            Ok(-0.5),
        ),
        (
            "data_21_7",
            format!("{{\"x\": {}, \"predict_endpoints\": [[1,2]]}}", nest(992)),
            Err("RecursionError"),
        ),
        // One row that is not a pair: the class test cannot take its truth.
        (
            "data_21_7",
            "{\"predict_endpoints\": [[1,2,3]]}".into(),
            Err("ambiguous"),
        ),
        (
            "data_21_7",
            "{\"predict_endpoints\": [[1,2,3],[4,5,6]]}".into(),
            Ok(-0.5),
        ),
        (
            "data_21_7",
            "{\"predict_endpoints\": [5]}".into(),
            Err("IndexError"),
        ),
        // A float row of an AF record: int() truncates, -1 wraps.
        (
            "data_84_1",
            "{\"predict_endpoints\": [[-1, 103806.9]]}".into(),
            Ok(1.0),
        ),
    ];
    for (rec, json, want) in &cases {
        let got = score_one(
            &r,
            rec,
            &format!("{rec}.json"),
            json.as_bytes(),
            Mode::OfficialCompat,
        );
        let shown: String = json.chars().take(80).collect();
        match (got, want) {
            (Ok(rep), Ok(w)) => assert_eq!(rep.score, *w, "{rec} {shown}"),
            (Err(e), Err(w)) => {
                assert!(
                    matches!(e, ScoreError::OfficialWouldFail { .. }) && e.to_string().contains(w),
                    "{rec} {shown}: {e}"
                );
                assert!(e.to_string().contains(&format!("{rec}.json")), "{e}");
            }
            (got, _) => panic!("{rec} {shown}: got {got:?}, want {want:?}"),
        }
    }

    // Strict mode reads the same way: a repeated key is a warning, a BOM an error.
    let rep = score_one(
        &r,
        "data_21_7",
        "data_21_7.json",
        b"{\"predict_endpoints\": [[0, 5]], \"predict_endpoints\": []}",
        Mode::Strict,
    )
    .unwrap();
    assert_eq!(rep.score, 1.0);
    assert!(rep.errors.is_empty());
    assert!(
        rep.warnings[0].starts_with("data_21_7.json: ") && rep.warnings[0].contains("2 times"),
        "{:?}",
        rep.warnings
    );
    let rep = score_one(
        &r,
        "data_21_7",
        "data_21_7.json",
        "\u{feff}{\"predict_endpoints\": [[0, 5]]}".as_bytes(),
        Mode::Strict,
    )
    .unwrap();
    assert!(rep.items[0].defaulted);
    assert!(rep.errors[0].reason.contains("BOM"), "{:?}", rep.errors);
}

/// Predictions with strings, booleans, nulls, objects or deeper lists: strict mode rejects
/// them, official-compat mode does what the official scorer does with numpy 2.4 (numeric
/// strings in two rows or more are read as integers, and an N record never looks at its
/// values). Each figure, or the exception's type, is the official scoring logic's on the
/// same record and file (Python 3.11, numpy 2.4.6).
#[test]
fn compat_follows_numpy_on_values_that_are_not_numbers() {
    let Some(r) = reference("compat_follows_numpy_on_values_that_are_not_numbers") else {
        return;
    };
    let digits = |n: usize| format!("1{}", "0".repeat(n - 1));
    let nest = |n: usize, inner: &str| format!("{}{inner}{}", "[".repeat(n), "]".repeat(n));
    let long: Vec<(&str, String, Result<f64, &str>)> = vec![
        (
            "data_92_12",
            format!("[[\"{}\", \"2\"], [\"4\", \"5\"]]", digits(4301)),
            Err("ValueError"),
        ),
        (
            "data_92_12",
            format!("[[\"1_{}\", \"2\"], [\"4\", \"5\"]]", &digits(4300)[1..]),
            Err("IndexError"),
        ),
        ("data_21_7", nest(64, "1,2"), Ok(-0.5)),
        ("data_21_7", nest(65, "1,2"), Err("ValueError")),
        ("data_21_7", nest(65, "\"1\",\"2\""), Err("ValueError")),
    ];
    #[rustfmt::skip]
    let short: &[(&str, &str, Result<f64, &str>)] = &[
        ("data_21_7", r#"{"predict_endpoints": [["100", "200"], ["300", "400"]]}"#, Ok(-0.5)),
        ("data_21_7", r#"{"predict_endpoints": [["100", "200"]]}"#, Err("UFuncTypeError")),
        ("data_84_1", r#"{"predict_endpoints": [["100", "200"], ["300", "400"]]}"#, Ok(0.75)),
        ("data_92_12", r#"{"predict_endpoints": [["100", "200"], ["300", "400"]]}"#, Ok(1.0)),
        ("data_92_12", r#"{"predict_endpoints": [["2833", "6457"], ["300", "400"]]}"#, Ok(2.0)),
        ("data_92_12", r#"{"predict_endpoints": [["2833", 6457], [300, 400]]}"#, Ok(2.0)),
        ("data_92_12", r#"{"predict_endpoints": [["2833", 6457.0], [300, 400]]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": [[" 2833 ", "6_457"], ["-1", "+4"]]}"#, Ok(2.0)),
        ("data_92_12", r#"{"predict_endpoints": [["2833.0", "6457"], ["300", "400"]]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": [["abc", "6457"], ["300", "400"]]}"#, Err("ValueError")),
        ("data_21_7", r#"{"predict_endpoints": [["abc", "x"], ["300", "400"]]}"#, Ok(-0.5)),
        ("data_21_7", r#"{"predict_endpoints": [["abc", "x"], ["300", "400"], ["", ""]]}"#, Ok(-0.5)),
        ("data_92_12", r#"{"predict_endpoints": [["99999", "6457"], ["300", "400"]]}"#, Err("IndexError")),
        ("data_92_12", r#"{"predict_endpoints": [["\u0662\u0668\u0663\u0663", "6457"], ["300", "400"]]}"#, Ok(2.0)),
        ("data_21_7", r#"{"predict_endpoints": [[true, 47200]]}"#, Ok(-0.5)),
        ("data_21_7", r#"{"predict_endpoints": [[false, 47200]]}"#, Ok(-1.0)),
        ("data_21_7", r#"{"predict_endpoints": [[true, false]]}"#, Ok(-0.5)),
        ("data_21_7", r#"{"predict_endpoints": [[true, false], [true, true]]}"#, Ok(-0.5)),
        ("data_92_12", r#"{"predict_endpoints": [[true, false], [true, true]]}"#, Ok(1.0)),
        ("data_92_12", r#"{"predict_endpoints": [[true, 6457], [true, 2.5]]}"#, Ok(1.5)),
        ("data_84_1", r#"{"predict_endpoints": [[false, 103807]]}"#, Ok(3.0)),
        ("data_84_1", r#"{"predict_endpoints": [[false, 103807.0]]}"#, Ok(3.0)),
        ("data_84_1", r#"{"predict_endpoints": [[false, "103807"]]}"#, Err("UFuncTypeError")),
        ("data_21_7", r#"{"predict_endpoints": [[null, 1]]}"#, Err("TypeError")),
        ("data_21_7", r#"{"predict_endpoints": [[null, 1], [2, 3]]}"#, Ok(-0.5)),
        ("data_92_12", r#"{"predict_endpoints": [[null, 1], [2, 3]]}"#, Err("TypeError")),
        ("data_92_12", r#"{"predict_endpoints": [[1, 2], [null, 3]]}"#, Err("TypeError")),
        ("data_92_12", r#"{"predict_endpoints": [["1", 2], [null, 3]]}"#, Err("TypeError")),
        ("data_21_7", r#"{"predict_endpoints": [[{}, 1], [2, 3]]}"#, Ok(-0.5)),
        ("data_21_7", r#"{"predict_endpoints": [[{"a":1}, 1], [2, 3]]}"#, Ok(-0.5)),
        ("data_21_7", r#"{"predict_endpoints": [[{}, 1]]}"#, Err("TypeError")),
        ("data_21_7", r#"{"predict_endpoints": ["a", "b"]}"#, Ok(-0.5)),
        ("data_21_7", r#"{"predict_endpoints": ["a"]}"#, Err("UFuncTypeError")),
        ("data_21_7", r#"{"predict_endpoints": [null, null]}"#, Ok(-0.5)),
        ("data_21_7", r#"{"predict_endpoints": [true, 5]}"#, Ok(-0.5)),
        ("data_21_7", r#"{"predict_endpoints": [{}, {}]}"#, Ok(-0.5)),
        ("data_21_7", r#"{"predict_endpoints": [{}]}"#, Err("IndexError")),
        ("data_21_7", r#"{"predict_endpoints": [[[1,2]]]}"#, Ok(-0.5)),
        ("data_21_7", r#"{"predict_endpoints": [[[0,47200]]]}"#, Ok(-1.0)),
        ("data_21_7", r#"{"predict_endpoints": [[[1,2],[3,4]]]}"#, Err("ValueError")),
        ("data_21_7", r#"{"predict_endpoints": [[[1,2]],[[3,4]]]}"#, Ok(-0.5)),
        ("data_92_12", r#"{"predict_endpoints": [[[1,2]],[[3,4]]]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": [[[1],[2]],[[3],[4]]]}"#, Err("TypeError")),
        ("data_92_12", r#"{"predict_endpoints": [[[1,2],[3,4]],[[1,2],[3,4]]]}"#, Err("TypeError")),
        ("data_21_7", r#"{"predict_endpoints": [[[1],[2]]]}"#, Err("ValueError")),
        ("data_21_7", r#"{"predict_endpoints": [[[]]]}"#, Err("ValueError")),
        ("data_21_7", r#"{"predict_endpoints": [[], []]}"#, Ok(-0.5)),
        ("data_21_7", r#"{"predict_endpoints": [[]]}"#, Err("ValueError")),
        ("data_21_7", r#"{"predict_endpoints": [["1", "2", "3"], ["4", "5", "6"]]}"#, Ok(-0.5)),
        ("data_21_7", r#"{"predict_endpoints": [["1", "2"], ["4"]]}"#, Err("ValueError")),
        ("data_21_7", r#"{"predict_endpoints": [[1e400, "2"], ["4", "5"]]}"#, Ok(-0.5)),
        ("data_92_12", r#"{"predict_endpoints": [[NaN, "2"], ["4", "5"]]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": [[1180591620717411303424, "2"], ["4", "5"]]}"#, Err("IndexError")),
        ("data_92_12", r#"{"predict_endpoints": [[-1, "2"], ["4", "5"]]}"#, Ok(1.0)),
        ("data_92_12", r#"{"predict_endpoints": ["2833", "6457"]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": [["2833", "6457"]]}"#, Err("UFuncTypeError")),
        ("data_92_12", r#"{"predict_endpoints": [["2833\u0000", "6457"], ["300", "400"]]}"#, Ok(2.0)),
        ("data_21_7", r#"{"predict_endpoints": [["0", "47200"], [1, 2]]}"#, Ok(-0.5)),
        ("data_21_7", r#"{"predict_endpoints": [[18446744073709504417, true]]}"#, Ok(-1.0)),
        ("data_21_7", r#"{"predict_endpoints": [[[[0, 47200]]]]}"#, Ok(-1.0)),
        ("data_21_7", r#"{"predict_endpoints": [[true, 1.5]]}"#, Ok(-0.5)),
        ("data_92_12", r#"{"predict_endpoints": [["1__0", "2"], ["4", "5"]]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": [["_10", "2"], ["4", "5"]]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": [["-0", "\u2003 12\u001c"], ["4", "5"]]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": [["-0", "\u2003 12\u3000"], ["4", "5"]]}"#, Ok(1.0)),
        ("data_92_12", r#"{"predict_endpoints": [["", "2"], ["4", "5"]]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": [["\ud800", "2"], ["4", "5"]]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": [[2833, 6457], [300, null]]}"#, Err("TypeError")),
        ("data_92_12", r#"{"predict_endpoints": [[2833.9, "6457"], [300, {}]]}"#, Err("TypeError")),
        ("data_92_12", r#"{"predict_endpoints": [[2833.9, "6457"], [300, true]]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": [[2833.9, "6457"], [300, true], [1, {}]]}"#, Err("TypeError")),
        ("data_92_12", r#"{"predict_endpoints": [[2833.9, "6457"], [300, true], [1, null]]}"#, Err("TypeError")),
        ("data_92_12", r#"{"predict_endpoints": [[2833.9, "6457"], [300, 6457.5], ["-1", null]]}"#, Err("TypeError")),
        ("data_84_1", r#"{"predict_endpoints": [[true, 103808]]}"#, Err("IndexError")),
        ("data_84_1", r#"{"predict_endpoints": [[true, 103808], [0, "103807"]]}"#, Err("ValueError")),
        ("data_84_1", r#"{"predict_endpoints": [[false, 103807], [0, "103807"]]}"#, Err("ValueError")),
        ("data_21_7", r#"{"predict_endpoints": [["1"]]}"#, Err("UFuncTypeError")),
        ("data_21_7", r#"{"predict_endpoints": [[null]]}"#, Err("ValueError")),
        ("data_21_7", r#"{"predict_endpoints": [[null, 1, 2]]}"#, Err("TypeError")),
        ("data_21_7", r#"{"predict_endpoints": [[true]]}"#, Err("ValueError")),
        ("data_21_7", r#"{"predict_endpoints": [null]}"#, Err("IndexError")),
        ("data_21_7", r#"{"predict_endpoints": [true]}"#, Err("IndexError")),
        ("data_21_7", r#"{"predict_endpoints": [[[null], [1]]]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": ["12", "34"]}"#, Ok(1.0)),
        ("data_92_12", r#"{"predict_endpoints": ["12", 34]}"#, Ok(1.0)),
        ("data_92_12", r#"{"predict_endpoints": ["12", 3.5]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": ["12", true]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": ["1", "34"]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": ["-1", "34"]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": ["12\u0000", "34"]}"#, Ok(1.0)),
        ("data_92_12", r#"{"predict_endpoints": ["12", null]}"#, Err("TypeError")),
        ("data_92_12", r#"{"predict_endpoints": ["12", {"3": 0, "4": 1}]}"#, Ok(1.0)),
        ("data_92_12", r#"{"predict_endpoints": ["12", {"3": 0}]}"#, Err("ValueError")),
        ("data_92_12", r#"{"predict_endpoints": [{"1": 0, "2": 1}, {"3": 0, "4": 1}]}"#, Ok(1.0)),
        ("data_92_12", r#"{"predict_endpoints": ["\u0661\u0662", "34"]}"#, Ok(1.0)),
        ("data_92_12", r#"{"predict_endpoints": [true, false]}"#, Err("TypeError")),
        ("data_92_12", r#"{"predict_endpoints": [null, null]}"#, Err("TypeError")),
        ("data_84_1", r#"{"predict_endpoints": ["12", "34", "56"]}"#, Ok(1.0)),
    ];
    let cases = long
        .iter()
        .map(|(rec, rows, want)| (*rec, format!("{{\"predict_endpoints\": {rows}}}"), *want));
    let cases = cases.chain(
        short
            .iter()
            .map(|(rec, json, want)| (*rec, json.to_string(), *want)),
    );
    for (rec, json, want) in cases {
        let shown: String = json.chars().take(90).collect();
        let strict = score_one(
            &r,
            rec,
            &format!("{rec}.json"),
            json.as_bytes(),
            Mode::Strict,
        );
        let strict = strict.unwrap();
        assert!(
            strict.items[0].defaulted,
            "{rec} {shown}: strict rejects it"
        );
        assert_eq!(strict.errors.len(), 1, "{rec} {shown}");
        let compat = score_one(
            &r,
            rec,
            &format!("{rec}.json"),
            json.as_bytes(),
            Mode::OfficialCompat,
        );
        match (compat, want) {
            (Ok(rep), Ok(w)) => assert_eq!(rep.score, w, "{rec} {shown}"),
            (Err(e), Err(w)) => assert!(
                matches!(e, ScoreError::OfficialWouldFail { .. })
                    && e.to_string().contains(&format!("({w}")),
                "{rec} {shown}: want {w}, got {e}"
            ),
            (got, _) => panic!("{rec} {shown}: got {got:?}, want {want:?}"),
        }
    }
}

/// The input of the issue: numeric strings in two rows. The official scorer scores the N
/// record −0.5 (two rows are AFp; an N record's values are never read), so compat mode
/// scores it and every other file of the folder; strict mode lists it and scores it `[]`.
#[test]
fn numeric_strings_in_two_rows_score_like_the_official_scorer() {
    let Some(r) = reference("numeric_strings_in_two_rows_score_like_the_official_scorer") else {
        return;
    };
    let three = Reference {
        dir: r.dir.clone(),
        records: ["data_21_7", "data_84_1", "data_92_12"]
            .iter()
            .map(|n| record(&r, n).clone())
            .collect(),
    };
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    for (rec, rows) in [
        ("data_21_7", r#"[["100", "200"], ["300", "400"]]"#),
        ("data_84_1", "[[0, 103807]]"),
        ("data_92_12", "[[2833, 6457]]"),
    ] {
        let json = format!("{{\"predict_endpoints\": {rows}}}");
        std::fs::write(p.join(format!("{rec}.json")), json).unwrap();
    }
    let compat = score(&three, p, Mode::OfficialCompat).unwrap();
    let us: Vec<f64> = compat.items.iter().map(|i| i.u).collect();
    assert_eq!(us, [-0.5, 3.0, 3.0]);
    assert_eq!(compat.items[0].class_pred, Class::AFp);
    assert_eq!(compat.items[0].mr, 2);
    assert!(compat.errors.is_empty());
    assert!(
        compat
            .text()
            .starts_with("AF Endpoints Detection Performance: 1.8333\n")
    );

    let strict = score(&three, p, Mode::Strict).unwrap();
    let us: Vec<f64> = strict.items.iter().map(|i| i.u).collect();
    assert_eq!(us, [1.0, 3.0, 3.0]);
    assert!(strict.items[0].defaulted);
    assert_eq!(strict.errors.len(), 1);
    assert_eq!(strict.errors[0].file, "data_21_7.json");
    assert!(
        strict.errors[0]
            .reason
            .contains("values that are not numbers: \"100\""),
        "{}",
        strict.errors[0]
    );
}

/// Which records are scored: strict mode scores every reference record (a missing file is
/// `[]`), official-compat mode scores the files found, including a record that has both a
/// `.json` and a `.mat` twice, and fails on a file that is no record.
#[test]
fn which_records_are_scored() {
    let Some(r) = reference("which_records_are_scored") else {
        return;
    };
    let two = Reference {
        dir: r.dir.clone(),
        records: vec![
            record(&r, "data_92_12").clone(),
            record(&r, "data_84_1").clone(),
        ],
    };
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(
        p.join("data_92_12.json"),
        "{\"predict_endpoints\": [[2833,6457]]}",
    )
    .unwrap();
    // The same record as a .mat: 1-based, shifted by −1 when read.
    let m = NumericArray::new(vec![1, 2], NumericData::Double(vec![2834.0, 6458.0]), None).unwrap();
    write_v4_file(p.join("data_92_12.mat"), &[("predict_endpoints", &m)]).unwrap();

    let strict = score(&two, p, Mode::Strict).unwrap();
    // data_92_12 scores 3 from its .json; data_84_1 has no file: [] gives −2.
    assert_eq!(
        strict.items.iter().map(|i| i.u).collect::<Vec<_>>(),
        [3.0, -2.0]
    );
    assert_eq!(strict.score, 0.5);
    let reasons: Vec<String> = strict.errors.iter().map(ToString::to_string).collect();
    assert!(
        reasons
            .iter()
            .any(|e| e.contains("data_92_12.mat") && e.contains("second prediction")),
        "{reasons:?}"
    );
    assert!(
        reasons
            .iter()
            .any(|e| e.contains("data_84_1.json") && e.contains("missing")),
        "{reasons:?}"
    );

    let compat = score(&two, p, Mode::OfficialCompat).unwrap();
    // Both files of data_92_12 count, data_84_1 is skipped: mean of 3 and 3.
    assert_eq!(compat.items.len(), 2);
    assert_eq!(compat.score, 3.0);

    // A file that names no record: a warning in strict mode, a crash of the official scorer.
    std::fs::write(p.join("config.json"), "{}").unwrap();
    let strict = score(&two, p, Mode::Strict).unwrap();
    assert!(strict.warnings.iter().any(|w| w.contains("config.json")));
    let e = score(&two, p, Mode::OfficialCompat).unwrap_err();
    assert!(e.to_string().contains("config.json"), "{e}");
}

#[test]
fn reference_problems_are_fatal_and_named() {
    let Some(data) = testkit::shared_data("reference_problems_are_fatal_and_named") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let copy = |name: &str, ext: &str| {
        std::fs::copy(
            data.join(format!("cpsc2021/{name}.{ext}")),
            dir.path().join(format!("{name}.{ext}")),
        )
        .unwrap();
    };
    copy("data_92_12", "hea");
    // No .atr file.
    let e = load_reference(dir.path()).unwrap_err().to_string();
    assert!(e.contains("data_92_12.atr"), "{e}");
    copy("data_92_12", "atr");
    load_reference(dir.path()).unwrap();
    // A header without the class comment.
    let hea = std::fs::read_to_string(dir.path().join("data_92_12.hea")).unwrap();
    let stripped: String = hea
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.path().join("data_92_12.hea"), stripped).unwrap();
    let e = load_reference(dir.path()).unwrap_err().to_string();
    assert!(e.contains("data_92_12.hea") && e.contains("class"), "{e}");
}
