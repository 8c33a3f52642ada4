//! Our CirCor readers on the 46 real patient files and 121 segmentations in
//! `../shared/data/circor2022`: every file parses and renders back byte for byte, the typed
//! fields agree with the dataset's own table (`selected_patients.csv`) for every patient,
//! the counts in the data README hold, and errors on damaged real files name the file, the
//! line and the problem.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use formats::circor::{
    AgeGroup, Campaign, CircorErrorKind, DiastolicTiming, Murmur, Outcome, PatientFile,
    SegmentAnomaly, SegmentState, Segmentation, Site, SystolicTiming, keys,
};

fn data(test: &str) -> Option<PathBuf> {
    Some(testkit::shared_data(test)?.join("circor2022"))
}

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

fn patients(dir: &Path) -> BTreeMap<String, (PatientFile, Vec<u8>)> {
    files(&dir.join("training_data"), "txt")
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            let parsed = PatientFile::read(&p).unwrap_or_else(|e| panic!("{e}"));
            (parsed.patient_id().to_string(), (parsed, bytes))
        })
        .collect()
}

#[test]
fn every_patient_file_parses_and_renders_back_byte_for_byte() {
    let Some(dir) = data("every_patient_file_parses_and_renders_back_byte_for_byte") else {
        return;
    };
    let all = patients(&dir);
    assert_eq!(all.len(), 46);
    for (pid, (p, bytes)) in &all {
        assert_eq!(p.to_text().as_bytes(), &bytes[..], "{pid}");
        assert_eq!(p.frequency_hz(), 4000, "{pid}");
        // Every key is one we type, in the standard order, once.
        let got: Vec<&str> = p.annotations().iter().map(|a| a.key()).collect();
        assert_eq!(got, keys::STANDARD_ORDER.to_vec(), "{pid}");
        // Every recording names files that exist, and the typed view renders back the same
        // lines.
        for r in p.recordings() {
            let folder = dir.join("training_data");
            for f in [&r.header_file, &r.wav_file] {
                assert!(folder.join(f).is_file(), "{pid}: {f}");
            }
            let tsv = r
                .segmentation_file
                .as_ref()
                .expect("training data has tsv files");
            assert!(folder.join(tsv).is_file(), "{pid}: {tsv}");
            assert!(
                r.record_name()
                    .starts_with(&format!("{pid}_{}", r.location.site))
            );
            assert_eq!(r.location.index, None, "the real files write the bare site");
        }
        assert_eq!(p.info().to_annotations(), p.annotations(), "{pid}");
    }
}

#[test]
fn every_segmentation_parses_and_renders_back_byte_for_byte() {
    let Some(dir) = data("every_segmentation_parses_and_renders_back_byte_for_byte") else {
        return;
    };
    let tsvs = files(&dir.join("training_data"), "tsv");
    assert_eq!(tsvs.len(), 121);
    let mut odd = BTreeMap::new();
    let mut crlf = Vec::new();
    for path in &tsvs {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let bytes = std::fs::read(path).unwrap();
        let s = Segmentation::read(path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(s.to_text().as_bytes(), &bytes[..], "{name}");
        assert!(!s.segments().is_empty(), "{name}");
        if s.line_ending() == formats::circor::LineEnding::CrLf {
            crlf.push(name.clone());
        }
        let a = s.anomalies();
        if !a.is_empty() {
            odd.insert(name, a);
        }
    }
    // The README: 84974_PV.tsv is the one CRLF segmentation.
    assert_eq!(crlf, vec!["84974_PV.tsv"]);
    // The only unknown state and the only zero-length segment: 50782_MV_1.tsv.
    let mv1 = &odd["50782_MV_1.tsv"];
    assert_eq!(
        mv1,
        &vec![
            SegmentAnomaly::UnknownState { line: 1, code: 28 },
            SegmentAnomaly::ZeroLength { line: 1, at_s: 0.0 }
        ]
    );
    // Sub-millisecond overlaps elsewhere (found independently with awk over the files).
    let overlaps: Vec<(&str, usize)> = odd
        .iter()
        .flat_map(|(n, a)| {
            a.iter().filter_map(move |x| match x {
                SegmentAnomaly::Overlap {
                    line,
                    start_s,
                    previous_end_s,
                } => {
                    assert!(previous_end_s - start_s < 0.001, "{n}:{line}");
                    Some((n.as_str(), *line))
                }
                _ => None,
            })
        })
        .collect();
    let expected_overlaps: Vec<(&str, usize)> = vec![
        ("2530_MV.tsv", 13),
        ("68368_AV.tsv", 62),
        ("68423_AV.tsv", 5),
        ("68423_AV.tsv", 33),
        ("84974_AV.tsv", 15),
        ("84974_AV.tsv", 18),
        ("85132_PV.tsv", 10),
        ("85287_TV.tsv", 42),
    ];
    assert_eq!(overlaps, expected_overlaps);
    for (n, a) in &odd {
        let unknown = a.iter().any(|x| {
            matches!(
                x,
                SegmentAnomaly::UnknownState { .. } | SegmentAnomaly::ZeroLength { .. }
            )
        });
        assert_eq!(unknown, n == "50782_MV_1.tsv", "{n}");
    }
    let s = Segmentation::read(dir.join("training_data/50782_MV_1.tsv")).unwrap();
    assert!(!s.final_newline());
    assert_eq!(s.segments()[0].state, SegmentState::Other(28));
}

/// `selected_patients.csv`: the header plus the dataset's own `training_data.csv` rows.
fn table(dir: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(dir.join("selected_patients.csv")).unwrap();
    let mut lines = text.lines();
    let split = |l: &str| l.split(',').map(str::to_string).collect::<Vec<_>>();
    let header = split(lines.next().unwrap());
    let rows: Vec<Vec<String>> = lines.map(split).collect();
    for r in &rows {
        assert_eq!(
            r.len(),
            header.len(),
            "no quoted commas in this table: {r:?}"
        );
    }
    (header, rows)
}

#[test]
fn typed_fields_agree_with_the_dataset_table_for_every_patient() {
    let Some(dir) = data("typed_fields_agree_with_the_dataset_table_for_every_patient") else {
        return;
    };
    let all = patients(&dir);
    let (header, rows) = table(&dir);
    assert_eq!(rows.len(), 46);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let opt = |s: &str| (s != "nan").then(|| s.to_string());
    for row in &rows {
        let pid = &row[col("Patient ID")];
        let (p, _) = all
            .get(pid)
            .unwrap_or_else(|| panic!("{pid} has no patient file"));
        let i = p.info();
        let locs: Vec<String> = p
            .recordings()
            .iter()
            .map(|r| r.location.to_string())
            .collect();
        assert_eq!(locs.join("+"), row[col("Recording locations:")], "{pid}");
        let cell = |name: &str| row[col(name)].as_str();
        assert_eq!(
            i.age.map(|a| a.as_str().to_string()),
            opt(cell("Age")),
            "{pid}"
        );
        assert_eq!(
            i.sex.map(|a| a.as_str().to_string()),
            opt(cell("Sex")),
            "{pid}"
        );
        let num = |s: &str| (s != "nan").then(|| s.parse::<f64>().unwrap());
        assert_eq!(i.height_cm, num(cell("Height")), "{pid}");
        assert_eq!(i.weight_kg, num(cell("Weight")), "{pid}");
        assert_eq!(
            i.pregnant,
            Some(cell("Pregnancy status") == "True"),
            "{pid}"
        );
        assert_eq!(
            i.murmur.map(|m| m.to_string()),
            opt(cell("Murmur")),
            "{pid}"
        );
        let sites = i
            .murmur_locations
            .as_ref()
            .map(|l| l.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("+"));
        assert_eq!(sites, opt(cell("Murmur locations")), "{pid}");
        let most = i.most_audible_location.map(|s| s.to_string());
        assert_eq!(most, opt(cell("Most audible location")), "{pid}");
        let s = &i.systolic;
        let d = &i.diastolic;
        let pairs: [(Option<String>, &str); 10] = [
            (s.timing.map(|x| x.to_string()), "Systolic murmur timing"),
            (s.shape.map(|x| x.to_string()), "Systolic murmur shape"),
            (s.grading.map(|x| x.to_string()), "Systolic murmur grading"),
            (s.pitch.map(|x| x.to_string()), "Systolic murmur pitch"),
            (s.quality.map(|x| x.to_string()), "Systolic murmur quality"),
            (d.timing.map(|x| x.to_string()), "Diastolic murmur timing"),
            (d.shape.map(|x| x.to_string()), "Diastolic murmur shape"),
            (d.grading.map(|x| x.to_string()), "Diastolic murmur grading"),
            (d.pitch.map(|x| x.to_string()), "Diastolic murmur pitch"),
            (d.quality.map(|x| x.to_string()), "Diastolic murmur quality"),
        ];
        for (got, name) in pairs {
            assert_eq!(got, opt(cell(name)), "{pid}: {name}");
        }
        assert_eq!(
            i.outcome.map(|o| o.to_string()),
            opt(cell("Outcome")),
            "{pid}"
        );
        assert_eq!(
            i.campaign.map(|c| c.to_string()),
            opt(cell("Campaign")),
            "{pid}"
        );
        assert_eq!(i.additional_id, opt(cell("Additional ID")), "{pid}");
        // The raw lines agree with the table cell for cell too.
        for (k, h) in keys::STANDARD_ORDER.iter().zip(&header[2..]) {
            assert_eq!(k, h, "the table's columns follow the files' key order");
            assert_eq!(p.annotation(k), Some(cell(h)), "{pid}: {k}");
        }
    }
}

#[test]
fn the_readme_counts_and_edge_cases_hold() {
    let Some(dir) = data("the_readme_counts_and_edge_cases_hold") else {
        return;
    };
    let all = patients(&dir);
    let by_murmur = |m: Murmur| -> Vec<&str> {
        all.iter()
            .filter(|(_, (p, _))| p.murmur() == Some(m))
            .map(|(id, _)| id.as_str())
            .collect()
    };
    fn sorted(s: &str) -> Vec<&str> {
        let mut v: Vec<&str> = s.split(' ').collect();
        v.sort();
        v
    }
    assert_eq!(
        by_murmur(Murmur::Present),
        sorted(
            "9979 46778 49966 50136 50258 51064 68423 68425 68560 84690 84732 84937 85031 85132 \
             85135 85339"
        )
    );
    assert_eq!(
        by_murmur(Murmur::Absent),
        sorted(
            "2530 49622 49979 50207 50720 50782 64715 68368 68887 74417 84804 84974 84976 85019 \
             85027 85124 85244 85287"
        )
    );
    assert_eq!(
        by_murmur(Murmur::Unknown),
        sorted("50636 68298 72288 76758 84736 84747 84755 84995 85155 85202 85203 85294")
    );
    let outcome_split = |m: Murmur| {
        let of = |o: Outcome| {
            all.values()
                .filter(|(p, _)| p.murmur() == Some(m) && p.outcome() == Some(o))
                .count()
        };
        (of(Outcome::Abnormal), of(Outcome::Normal))
    };
    assert_eq!(outcome_split(Murmur::Present), (11, 5));
    assert_eq!(outcome_split(Murmur::Absent), (10, 8));
    assert_eq!(outcome_split(Murmur::Unknown), (7, 5));

    let mut sites: BTreeMap<Site, usize> = BTreeMap::new();
    for (p, _) in all.values() {
        for r in p.recordings() {
            *sites.entry(r.location.site).or_default() += 1;
        }
    }
    let want = [
        (Site::Av, 32),
        (Site::Pv, 21),
        (Site::Tv, 23),
        (Site::Mv, 44),
        (Site::Phc, 1),
    ];
    assert_eq!(sites, want.into_iter().collect());
    assert_eq!(sites.values().sum::<usize>(), 121);

    let count = |f: &dyn Fn(&PatientFile) -> bool| all.values().filter(|(p, _)| f(p)).count();
    assert_eq!(count(&|p| p.info().age == Some(AgeGroup::Child)), 23);
    assert_eq!(count(&|p| p.info().age == Some(AgeGroup::Infant)), 17);
    assert_eq!(count(&|p| p.info().age == Some(AgeGroup::Neonate)), 3);
    assert_eq!(count(&|p| p.info().age == Some(AgeGroup::Adolescent)), 2);
    assert_eq!(count(&|p| p.info().age.is_none()), 1);
    assert_eq!(count(&|p| p.info().campaign == Some(Campaign::Cc2015)), 37);
    assert_eq!(count(&|p| p.info().campaign == Some(Campaign::Cc2014)), 9);
    let timing = |t: SystolicTiming| count(&|p| p.info().systolic.timing == Some(t));
    assert_eq!(timing(SystolicTiming::Holo), 9);
    assert_eq!(timing(SystolicTiming::Early), 5);
    assert_eq!(timing(SystolicTiming::Mid), 1);
    assert_eq!(timing(SystolicTiming::Late), 1);
    assert_eq!(count(&|p| !p.info().diastolic.is_empty()), 1);

    // Edge cases named in the README.
    let get = |id: &str| &all[id].0;
    let p = get("50782");
    let names: Vec<&str> = p.recordings().iter().map(|r| r.record_name()).collect();
    assert_eq!(
        names,
        [
            "50782_AV_1",
            "50782_AV_2",
            "50782_PV",
            "50782_TV",
            "50782_MV_1",
            "50782_MV_2"
        ]
    );
    assert_eq!(p.info().pregnant, Some(true));
    assert_eq!(p.info().age, None);
    assert_eq!(p.annotation(keys::AGE), Some("nan"));
    assert_eq!(count(&|p| p.info().pregnant == Some(true)), 1);
    let phc: Vec<&str> = all
        .iter()
        .filter(|(_, (p, _))| p.recordings().iter().any(|r| r.location.site == Site::Phc))
        .map(|(id, _)| id.as_str())
        .collect();
    assert_eq!(phc, ["84690"]);
    assert_eq!(
        get("84690").info().murmur_locations,
        Some(vec![Site::Mv, Site::Phc, Site::Tv])
    );
    assert_eq!(
        get("46778").info().diastolic.timing,
        Some(DiastolicTiming::Early)
    );
    assert_eq!(
        get("85132").info().systolic.timing,
        Some(SystolicTiming::Late)
    );
    assert_eq!(
        get("49966").info().systolic.timing,
        Some(SystolicTiming::Mid)
    );
    let mut neonates: Vec<&str> = all
        .iter()
        .filter(|(_, (p, _))| p.info().age == Some(AgeGroup::Neonate))
        .map(|(id, _)| id.as_str())
        .collect();
    neonates.sort();
    assert_eq!(neonates, ["50636", "84732", "84804"]);
}

#[test]
fn the_participant_view_of_every_real_file_holds_no_label() {
    let Some(dir) = data("the_participant_view_of_every_real_file_holds_no_label") else {
        return;
    };
    for (pid, (p, _)) in patients(&dir) {
        let v = p.without_labels();
        let text = v.to_text();
        assert_eq!(PatientFile::parse_str(&text, "view").unwrap(), v, "{pid}");
        assert!(!v.has_hidden_content(), "{pid}");
        assert_eq!((v.murmur(), v.outcome()), (None, None), "{pid}");
        for banned in [
            "Murmur",
            "murmur",
            "Outcome",
            "Campaign",
            "Additional",
            ".tsv",
        ] {
            assert!(!text.contains(banned), "{pid}: {banned} in\n{text}");
        }
        let keys: Vec<&str> = v.annotations().iter().map(|a| a.key()).collect();
        assert_eq!(keys, keys::PARTICIPANT_VISIBLE.to_vec(), "{pid}");
        // The demographics and the recordings' audio are untouched.
        let (i, j) = (p.info(), v.info());
        assert_eq!(
            (i.age, i.sex, i.height_cm, i.weight_kg, i.pregnant),
            (j.age, j.sex, j.height_cm, j.weight_kg, j.pregnant),
            "{pid}"
        );
        assert_eq!(v.recordings().len(), p.recordings().len());
        for (a, b) in p.recordings().iter().zip(v.recordings()) {
            assert_eq!(
                (&a.location, &a.header_file, &a.wav_file),
                (&b.location, &b.header_file, &b.wav_file)
            );
        }
        // Line count: first line, recordings, five demographics.
        assert_eq!(text.lines().count(), 1 + p.recordings().len() + 5, "{pid}");
    }
}

#[test]
fn errors_on_damaged_real_files_name_file_line_and_problem() {
    let Some(dir) = data("errors_on_damaged_real_files_name_file_line_and_problem") else {
        return;
    };
    for (pid, (_, bytes)) in patients(&dir) {
        let text = String::from_utf8(bytes).unwrap();
        let name = format!("{pid}.txt");
        let line_of = |prefix: &str| text.lines().position(|l| l.starts_with(prefix)).unwrap() + 1;

        let bad = text.replacen("#Murmur: ", "#Murmur: Maybe", 1);
        let e = PatientFile::parse_str(&bad, &name).unwrap_err();
        assert_eq!(e.file, name);
        assert_eq!(e.line, Some(line_of("#Murmur: ")), "{pid}");
        assert!(
            matches!(&e.kind, CircorErrorKind::BadValue { key, .. } if key == "Murmur"),
            "{e}"
        );
        assert!(
            e.to_string().starts_with(&format!(
                "{name}: line {}: `#Murmur:` has the value",
                line_of("#Murmur: ")
            )),
            "{e}"
        );

        // One recording line fewer than line 1 declares.
        let second = text.lines().nth(1).unwrap();
        let short = text.replacen(&format!("{second}\n"), "", 1);
        let e = PatientFile::parse_str(&short, &name).unwrap_err();
        assert!(
            matches!(e.kind, CircorErrorKind::RecordingCount { .. }),
            "{e}"
        );

        // Cut in the middle of the first `#` line's key: the line is no `#Key: value`.
        let cut = &text[..text.find("#Age").unwrap() + 3];
        let e = PatientFile::parse_str(cut, &name).unwrap_err();
        assert_eq!(e.line, Some(line_of("#Age")), "{pid}");
        assert_eq!(
            e.to_string(),
            format!(
                "{name}: line {}: expected a `#Key: value` line, found \"#Ag\"",
                line_of("#Age")
            )
        );
    }
    let tsv = dir.join("training_data/2530_AV.tsv");
    let text = std::fs::read_to_string(&tsv).unwrap();
    let bad = text.replacen("\t1\n", "\tS1\n", 1);
    let line = text.lines().position(|l| l.ends_with("\t1")).unwrap() + 1;
    let e = Segmentation::parse(bad.as_bytes(), "2530_AV.tsv").unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("2530_AV.tsv: line {line}: the state \"S1\" is not a whole number")
    );
}
