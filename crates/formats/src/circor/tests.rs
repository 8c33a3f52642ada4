//! Tests of the CirCor reader and writer: the documented example, round trips, errors
//! that name file, line and problem, and properties over arbitrary input.

use super::*;
use proptest::prelude::*;

const P2530: &str = "2530 4 4000\n\
AV 2530_AV.hea 2530_AV.wav 2530_AV.tsv\n\
PV 2530_PV.hea 2530_PV.wav 2530_PV.tsv\n\
TV 2530_TV.hea 2530_TV.wav 2530_TV.tsv\n\
MV 2530_MV.hea 2530_MV.wav 2530_MV.tsv\n\
#Age: Child\n\
#Sex: Female\n\
#Height: 98.0\n\
#Weight: 15.9\n\
#Pregnancy status: False\n\
#Murmur: Absent\n\
#Murmur locations: nan\n\
#Most audible location: nan\n\
#Systolic murmur timing: nan\n\
#Systolic murmur shape: nan\n\
#Systolic murmur grading: nan\n\
#Systolic murmur pitch: nan\n\
#Systolic murmur quality: nan\n\
#Diastolic murmur timing: nan\n\
#Diastolic murmur shape: nan\n\
#Diastolic murmur grading: nan\n\
#Diastolic murmur pitch: nan\n\
#Diastolic murmur quality: nan\n\
#Outcome: Abnormal\n\
#Campaign: CC2015\n\
#Additional ID: nan\n";

fn perr(text: &str) -> CircorError {
    PatientFile::parse(text.as_bytes(), "p.txt").unwrap_err()
}

fn serr(text: &str) -> CircorError {
    Segmentation::parse(text.as_bytes(), "s.tsv").unwrap_err()
}

#[test]
fn parses_and_renders_the_documented_example() {
    let p = PatientFile::parse(P2530.as_bytes(), "2530.txt").unwrap();
    assert_eq!(p.patient_id(), "2530");
    assert_eq!(p.frequency_hz(), 4000);
    assert_eq!(p.recordings().len(), 4);
    assert_eq!(p.recordings()[3].location, Location::new(Site::Mv));
    assert_eq!(p.recordings()[0].record_name(), "2530_AV");
    assert_eq!(
        p.recordings()[0],
        Recording::named("2530", Site::Av, None, true)
    );
    let i = p.info();
    assert_eq!(i.age, Some(AgeGroup::Child));
    assert_eq!(i.sex, Some(Sex::Female));
    assert_eq!(i.height_cm, Some(98.0));
    assert_eq!(i.weight_kg, Some(15.9));
    assert_eq!(i.pregnant, Some(false));
    assert_eq!(p.murmur(), Some(Murmur::Absent));
    assert_eq!(p.outcome(), Some(Outcome::Abnormal));
    assert_eq!(i.campaign, Some(Campaign::Cc2015));
    assert!(i.systolic.is_empty() && i.diastolic.is_empty());
    assert_eq!(p.annotations().len(), 21);
    assert_eq!(p.annotation("Additional ID"), Some("nan"));
    assert_eq!(p.to_text(), P2530);
    assert!(p.has_hidden_content());
    // The typed view renders back to the same lines.
    assert_eq!(i.to_annotations(), p.annotations());
}

#[test]
fn crlf_and_missing_final_newline_round_trip() {
    let crlf = P2530.replace('\n', "\r\n");
    let p = PatientFile::parse(crlf.as_bytes(), "c.txt").unwrap();
    assert_eq!(p.line_ending(), LineEnding::CrLf);
    assert_eq!(p.to_text(), crlf);
    let cut = P2530.trim_end_matches('\n');
    let p = PatientFile::parse(cut.as_bytes(), "c.txt").unwrap();
    assert!(!p.final_newline());
    assert_eq!(p.to_text(), cut);
}

#[test]
fn without_labels_keeps_only_the_demographics() {
    let p = PatientFile::parse(P2530.as_bytes(), "2530.txt").unwrap();
    let v = p.without_labels();
    let want = "2530 4 4000\n\
AV 2530_AV.hea 2530_AV.wav\n\
PV 2530_PV.hea 2530_PV.wav\n\
TV 2530_TV.hea 2530_TV.wav\n\
MV 2530_MV.hea 2530_MV.wav\n\
#Age: Child\n\
#Sex: Female\n\
#Height: 98.0\n\
#Weight: 15.9\n\
#Pregnancy status: False\n";
    assert_eq!(v.to_text(), want);
    assert!(!v.has_hidden_content());
    assert_eq!(v.murmur(), None);
    assert_eq!(v.outcome(), None);
    // The stripped file is a valid file, equal to what parsing its text gives.
    assert_eq!(PatientFile::parse_str(want, "v.txt").unwrap(), v);
    // Unknown keys are dropped too (whitelist, not blacklist).
    let extra = P2530.replace("#Age: Child\n", "#Age: Child\n#Notes: murmur heard\n");
    let p = PatientFile::parse_str(&extra, "x.txt").unwrap();
    assert_eq!(p.annotation("Notes"), Some("murmur heard"));
    assert_eq!(p.without_labels().to_text(), want);
}

#[test]
fn unlabelled_files_parse_with_no_labels() {
    let text = "9 1 4000\nMV 9_MV.hea 9_MV.wav\n#Age: Infant\n#Sex: Male\n";
    let p = PatientFile::parse_str(text, "9.txt").unwrap();
    assert_eq!((p.murmur(), p.outcome()), (None, None));
    assert_eq!(p.recordings()[0].segmentation_file, None);
    assert_eq!(p.to_text(), text);
}

#[test]
fn values_match_like_the_helper_code() {
    let text = P2530
        .replace("#Age: Child", "#Age: young Adult ")
        .replace("#Murmur: Absent", "#Murmur:  present")
        .replace("#Pregnancy status: False", "#Pregnancy status: TRUE");
    let p = PatientFile::parse_str(&text, "p.txt").unwrap();
    assert_eq!(p.info().age, Some(AgeGroup::YoungAdult));
    assert_eq!(p.murmur(), Some(Murmur::Present));
    assert_eq!(p.info().pregnant, Some(true));
    assert_eq!(p.annotation("Murmur"), Some(" present"));
    assert_eq!(p.to_text(), text);
}

#[test]
fn murmur_details_are_typed() {
    let text = P2530
        .replace("#Murmur locations: nan", "#Murmur locations: MV+Phc+TV")
        .replace("#Most audible location: nan", "#Most audible location: MV")
        .replace(
            "#Systolic murmur timing: nan",
            "#Systolic murmur timing: Holosystolic",
        )
        .replace(
            "#Systolic murmur shape: nan",
            "#Systolic murmur shape: Crescendo",
        )
        .replace(
            "#Systolic murmur grading: nan",
            "#Systolic murmur grading: III/VI",
        )
        .replace(
            "#Diastolic murmur timing: nan",
            "#Diastolic murmur timing: Early-diastolic",
        )
        .replace(
            "#Diastolic murmur grading: nan",
            "#Diastolic murmur grading: I/IV",
        )
        .replace(
            "#Diastolic murmur quality: nan",
            "#Diastolic murmur quality: Blowing",
        );
    let p = PatientFile::parse_str(&text, "p.txt").unwrap();
    let i = p.info();
    assert_eq!(
        i.murmur_locations,
        Some(vec![Site::Mv, Site::Phc, Site::Tv])
    );
    assert_eq!(i.most_audible_location, Some(Site::Mv));
    assert_eq!(i.systolic.timing, Some(SystolicTiming::Holo));
    assert_eq!(i.systolic.shape, Some(MurmurShape::Crescendo));
    assert_eq!(i.systolic.grading, Some(SystolicGrade::Grade3));
    assert_eq!(i.diastolic.timing, Some(DiastolicTiming::Early));
    assert_eq!(i.diastolic.grading, Some(DiastolicGrade::Grade1));
    assert_eq!(i.diastolic.quality, Some(Quality::Blowing));
    assert_eq!(i.diastolic.pitch, None);
    assert_eq!(i.to_annotations(), p.annotations());
}

#[test]
fn patient_errors_name_file_line_and_problem() {
    let msg = |t: &str| perr(t).to_string();
    assert_eq!(msg(""), "p.txt: the file is empty");
    assert_eq!(
        msg("2530 4\n"),
        "p.txt: line 1: expected `<patient id> <number of recordings> <sampling \
         frequency>` separated by single spaces, found \"2530 4\""
    );
    assert_eq!(
        msg("25x0 0 4000\n"),
        "p.txt: line 1: the patient id \"25x0\" is not a string of digits"
    );
    assert!(msg("1 04 4000\n").contains("number of recordings \"04\""));
    assert_eq!(
        msg("1 0 0\n"),
        "p.txt: line 1: the sampling frequency is 0 Hz"
    );
    let four = P2530.replacen("2530 4 4000", "2530 5 4000", 1);
    assert_eq!(
        msg(&four),
        "p.txt: line 6: line 1 declares 5 recording(s) but 4 recording line(s) follow"
    );
    let three = P2530.replacen("2530 4 4000", "2530 3 4000", 1);
    assert_eq!(perr(&three).line, Some(5));
    let bad_loc = P2530.replacen("TV 2530_TV.hea", "XV 2530_TV.hea", 1);
    let e = perr(&bad_loc);
    assert_eq!(e.line, Some(4));
    assert!(
        e.to_string()
            .contains("unknown auscultation location \"XV\""),
        "{e}"
    );
    let climb = P2530.replacen("2530_PV.wav", "../x.wav", 1);
    assert_eq!(
        msg(&climb),
        "p.txt: line 3: \"../x.wav\" is not a plain `.wav` file name"
    );
    let two_spaces = P2530.replacen("AV 2530_AV.hea", "AV  2530_AV.hea", 1);
    assert!(matches!(
        perr(&two_spaces).kind,
        CircorErrorKind::BadRecordingLine { .. }
    ));
    let bad_age = P2530.replacen("#Age: Child", "#Age: Toddler", 1);
    assert_eq!(
        msg(&bad_age),
        "p.txt: line 6: `#Age:` has the value \"Toddler\"; expected Neonate, Infant, \
         Child, Adolescent, Young adult or nan"
    );
    let nan_label = P2530.replacen("#Murmur: Absent", "#Murmur: nan", 1);
    assert_eq!(
        msg(&nan_label),
        "p.txt: line 11: `#Murmur:` has the value \"nan\"; expected Present, Unknown or \
         Absent"
    );
    let height = P2530.replacen("#Height: 98.0", "#Height: -3", 1);
    assert!(msg(&height).contains("line 8: `#Height:` has the value \"-3\""));
    let dup = P2530.replacen("#Campaign: CC2015", "#Outcome: Normal", 1);
    assert_eq!(
        msg(&dup),
        "p.txt: line 25: `#Outcome:` appears a second time (first on line 24)"
    );
    let no_colon = P2530.replacen("#Sex: Female", "#Sex:Female", 1);
    assert_eq!(
        msg(&no_colon),
        "p.txt: line 7: expected a `#Key: value` line, found \"#Sex:Female\""
    );
    let blank = P2530.replacen("#Sex: Female\n", "\n", 1);
    assert_eq!(msg(&blank), "p.txt: line 7: empty line");
    let mixed = P2530.replacen("#Sex: Female\n", "#Sex: Female\r\n", 1);
    assert_eq!(
        msg(&mixed),
        "p.txt: line 7: this line ends in CRLF but line 1 ends in LF"
    );
    let e = PatientFile::parse(b"1 0 4000\n#Age: \xff\n", "b.txt").unwrap_err();
    assert_eq!(
        e.to_string(),
        "b.txt: line 2: not UTF-8 text: invalid byte at offset 15"
    );
    let long = format!("{} 1 4000", "9".repeat(10)) + &" x".repeat(200);
    assert!(msg(&long).len() < 300);
}

#[test]
fn builder_validates_and_round_trips() {
    let info = PatientInfo {
        age: Some(AgeGroup::Infant),
        sex: Some(Sex::Male),
        height_cm: Some(61.0),
        weight_kg: Some(2.8160000000000003),
        pregnant: Some(false),
        murmur: Some(Murmur::Present),
        murmur_locations: Some(vec![Site::Av, Site::Mv]),
        most_audible_location: Some(Site::Av),
        systolic: SystolicMurmur {
            timing: Some(SystolicTiming::Early),
            shape: Some(MurmurShape::Decrescendo),
            grading: Some(SystolicGrade::Grade1),
            pitch: Some(Pitch::Low),
            quality: Some(Quality::Blowing),
        },
        diastolic: DiastolicMurmur::default(),
        outcome: Some(Outcome::Normal),
        campaign: Some(Campaign::Cc2014),
        additional_id: Some("68222".into()),
    };
    let recs = vec![
        Recording::named("77", Site::Av, None, true),
        Recording::named("77", Site::Mv, Some(2), true),
    ];
    let p = PatientFile::from_info("77", 4000, recs.clone(), &info).unwrap();
    assert_eq!(p.info(), &info);
    assert!(p.to_text().contains("\n#Weight: 2.8160000000000003\n"));
    assert!(
        p.to_text()
            .contains("\nMV 77_MV_2.hea 77_MV_2.wav 77_MV_2.tsv\n")
    );
    assert_eq!(PatientFile::parse_str(&p.to_text(), "77.txt").unwrap(), p);
    let crlf = p.clone().with_line_ending(LineEnding::CrLf);
    assert_eq!(crlf.to_text(), p.to_text().replace('\n', "\r\n"));

    // Injection through a value or a name is refused, not written.
    let sneaky = vec![Annotation::new("Age", "Child\n#Murmur: Present")];
    assert!(PatientFile::new("77", 4000, vec![], sneaky).is_err());
    let mut spaced = recs.clone();
    spaced[0].wav_file = "a.wav b.tsv".into();
    spaced[0].segmentation_file = None;
    let e = PatientFile::new("77", 4000, spaced, vec![]).unwrap_err();
    assert!(e.to_string().contains("contains a space"), "{e}");
    let bad = PatientInfo {
        height_cm: Some(f64::NAN),
        ..PatientInfo::default()
    };
    let p = PatientFile::from_info("77", 4000, vec![], &bad).unwrap();
    assert_eq!(
        p.info().height_cm,
        None,
        "NaN is written as nan, which means not given"
    );
    let bad = PatientInfo {
        height_cm: Some(-1.0),
        ..PatientInfo::default()
    };
    let e = PatientFile::from_info("77", 4000, vec![], &bad).unwrap_err();
    assert_eq!(e.file, "<new patient file 77>");
    assert_eq!(e.line, Some(4));
}

#[test]
fn locations_parse_exactly() {
    assert_eq!(
        Location::parse("AV_1"),
        Some(Location {
            site: Site::Av,
            index: Some(1)
        })
    );
    assert_eq!(
        Location::parse("Phc").map(|l| l.to_string()),
        Some("Phc".into())
    );
    for bad in ["av", "AV_", "AV_0", "AV_01", "PHC", "AV_1_2", ""] {
        assert_eq!(Location::parse(bad), None, "{bad}");
    }
}

#[test]
fn segmentations_parse_and_render() {
    let text = "0\t0.242\t0\n0.242\t0.400176\t1\n0.4\t0.5\t2\n0.5\t0.6\t3\n0.6\t23.6\t4\n";
    let s = Segmentation::parse(text.as_bytes(), "s.tsv").unwrap();
    assert_eq!(s.segments().len(), 5);
    assert_eq!(
        s.segments()[1],
        Segment {
            start_s: 0.242,
            end_s: 0.400176,
            state: SegmentState::S1
        }
    );
    // 0.4 < 0.400176: the overlap is reported, not refused.
    assert_eq!(
        s.anomalies(),
        vec![SegmentAnomaly::Overlap {
            line: 3,
            start_s: 0.4,
            previous_end_s: 0.400176
        }]
    );
    assert_eq!(s.to_text(), text);
    let crlf = text.replace('\n', "\r\n");
    assert_eq!(
        Segmentation::parse(crlf.as_bytes(), "c.tsv")
            .unwrap()
            .to_text(),
        crlf
    );
}

#[test]
fn the_odd_50782_mv_1_line_is_read_and_flagged() {
    let s = Segmentation::parse(b"0\t0\t28", "50782_MV_1.tsv").unwrap();
    assert_eq!(
        s.segments(),
        &[Segment {
            start_s: 0.0,
            end_s: 0.0,
            state: SegmentState::Other(28)
        }]
    );
    assert!(!s.final_newline());
    assert!(!s.segments()[0].state.is_known());
    let a = s.anomalies();
    assert_eq!(
        a,
        vec![
            SegmentAnomaly::UnknownState { line: 1, code: 28 },
            SegmentAnomaly::ZeroLength { line: 1, at_s: 0.0 }
        ]
    );
    assert_eq!(
        a[0].to_string(),
        "line 1: unknown state 28 (expected 0 to 4)"
    );
    assert_eq!(s.to_text(), "0\t0\t28");
}

#[test]
fn segmentation_errors_name_file_line_and_problem() {
    assert_eq!(
        serr("0\t1\t0\n1\t2\n").to_string(),
        "s.tsv: line 2: 2 tab-separated field(s); expected 3 (`start_s<TAB>end_s<TAB>state`)"
    );
    assert_eq!(
        serr("0 1 0\n").to_string(),
        "s.tsv: line 1: 1 tab-separated field(s); expected 3 (`start_s<TAB>end_s<TAB>state`)"
    );
    assert_eq!(
        serr("0\tx\t0\n").to_string(),
        "s.tsv: line 1: the end time \"x\" is not a finite, non-negative number of seconds"
    );
    assert!(serr("-1\t0\t0\n").to_string().contains("start time \"-1\""));
    assert!(serr("0\tinf\t0\n").to_string().contains("end time \"inf\""));
    assert_eq!(
        serr("0\t1\t2.0\n").to_string(),
        "s.tsv: line 1: the state \"2.0\" is not a whole number"
    );
    assert!(serr("0\t1\t-1\n").to_string().contains("state \"-1\""));
    assert_eq!(
        serr("0\t1\t0\n2\t1.5\t1\n").to_string(),
        "s.tsv: line 2: the segment ends at 1.5 s, before it starts at 2 s"
    );
    assert_eq!(serr("0\t1\t0\n\n").to_string(), "s.tsv: line 2: empty line");
    assert!(matches!(
        serr("0\t1\t0\r\n1\t2\t0\n").kind,
        CircorErrorKind::MixedLineEndings { .. }
    ));
    let e = Segmentation::parse(b"0\t1\t0\xff", "s.tsv").unwrap_err();
    assert!(
        matches!(e.kind, CircorErrorKind::NotText { offset: 5 }),
        "{e}"
    );
    assert_eq!(
        Segmentation::parse(b"", "e.tsv").unwrap().segments().len(),
        0
    );
}

#[test]
fn segmentation_builder() {
    let s = Segmentation::new(vec![Segment {
        start_s: 0.0,
        end_s: 0.5,
        state: SegmentState::Other(3),
    }])
    .unwrap();
    assert_eq!(s.segments()[0].state, SegmentState::S2);
    assert_eq!(s.to_text(), "0\t0.5\t3\n");
    let e = Segmentation::new(vec![Segment {
        start_s: 1.0,
        end_s: 0.5,
        state: SegmentState::S1,
    }])
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "<new segmentation>: line 1: the segment ends at 0.5 s, before it starts at 1 s"
    );
    assert!(
        Segmentation::new(vec![Segment {
            start_s: f64::NAN,
            end_s: 0.5,
            state: SegmentState::S1,
        }])
        .is_err()
    );
}

#[test]
fn a_file_that_cannot_be_read_is_named_with_its_error_once() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.txt");
    let io = std::fs::read(&missing).unwrap_err();
    let e = PatientFile::read(&missing).unwrap_err();
    assert!(matches!(e.kind, CircorErrorKind::Read(_)));
    crate::test_util::assert_io_error_shown_once(&e, &io);
    let e = Segmentation::read(&missing).unwrap_err();
    crate::test_util::assert_io_error_shown_once(&e, &io);
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("AV".to_string()),
        Just("Phc".to_string()),
        Just("MV_2".to_string()),
        Just("1_AV.hea".to_string()),
        Just("1_AV.wav".to_string()),
        Just("1_AV.tsv".to_string()),
        "[0-9]{1,3}",
        "[A-Za-z./_ -]{0,6}",
    ]
}

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::collection::vec(token(), 0..5).prop_map(|t| t.join(" ")),
        (
            proptest::sample::select(keys::STANDARD_ORDER.to_vec()),
            prop_oneof![
                Just("nan".to_string()),
                Just("Present".to_string()),
                Just("CC2014".to_string()),
                "[ -~]{0,8}"
            ]
        )
            .prop_map(|(k, v)| format!("#{k}: {v}")),
        "[ -~\t]{0,12}",
    ]
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        if let Ok(p) = PatientFile::parse(&bytes, "fuzz.txt") {
            prop_assert_eq!(p.to_text().into_bytes(), bytes.clone());
        }
        if let Ok(s) = Segmentation::parse(&bytes, "fuzz.tsv") {
            prop_assert_eq!(Segmentation::parse(s.to_text().as_bytes(), "again").unwrap(), s);
        }
    }

    /// Near-valid patient files: whatever parses renders back byte for byte, and its
    /// participant view parses back equal.
    #[test]
    fn patient_files_round_trip(
        n in 0usize..3,
        lines in proptest::collection::vec(line(), 0..8),
        crlf in any::<bool>(),
        final_newline in any::<bool>(),
    ) {
        let mut all = vec![format!("12 {n} 4000")];
        all.extend(lines);
        let text = join_lines(&all, if crlf { LineEnding::CrLf } else { LineEnding::Lf }, final_newline);
        if let Ok(p) = PatientFile::parse_str(&text, "prop.txt") {
            prop_assert_eq!(p.to_text(), text);
            let v = p.without_labels();
            prop_assert!(!v.has_hidden_content());
            prop_assert_eq!(PatientFile::parse_str(&v.to_text(), "v.txt").unwrap(), v);
        }
    }

    #[test]
    fn segmentations_round_trip(
        rows in proptest::collection::vec((0.0f64..100.0, 0.0f64..2.0, 0u32..40), 0..20),
    ) {
        let segments: Vec<Segment> = rows
            .iter()
            .map(|&(s, d, c)| Segment { start_s: s, end_s: s + d, state: SegmentState::from_code(c) })
            .collect();
        let s = Segmentation::new(segments).unwrap();
        let text = s.to_text();
        let back = Segmentation::parse(text.as_bytes(), "prop.tsv").unwrap();
        prop_assert_eq!(&back, &s);
        prop_assert_eq!(back.to_text(), text);
    }

    #[test]
    fn arbitrary_tsv_text_never_panics(text in "[0-9.\t\r\nainfe+-]{0,80}") {
        if let Ok(s) = Segmentation::parse(text.as_bytes(), "fuzz.tsv") {
            let again = Segmentation::parse(s.to_text().as_bytes(), "again.tsv").unwrap();
            prop_assert_eq!(again, s);
        }
    }
}
