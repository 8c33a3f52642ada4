//! Our CirCor readers against the oracle (`tests/oracle/circor_oracle.py`): the official
//! helper code's reading rules for patient files, numpy's `loadtxt` for segmentations, on
//! every real file. Values must be equal, not close.

use std::collections::BTreeMap;

use formats::circor::{PatientFile, Segmentation};
use serde_json::Value;

#[test]
fn patient_files_and_segmentations_match_the_oracle() {
    let test = "patient_files_and_segmentations_match_the_oracle";
    let Some(data) = testkit::shared_data(test) else {
        return;
    };
    let Some(python) = testkit::oracle_python(test) else {
        return;
    };
    let dir = data.join("circor2022/training_data");
    let out = testkit::run_oracle(&python, "circor_oracle.py", &[dir.to_str().unwrap()]);
    let oracle: Value = serde_json::from_slice(&out).unwrap();
    let patients = oracle["patients"].as_object().unwrap();
    let segs = oracle["segmentations"].as_object().unwrap();
    assert_eq!((patients.len(), segs.len()), (46, 121));

    for (name, o) in patients {
        let p = PatientFile::read(dir.join(name)).unwrap();
        let ctx = name.as_str();
        assert_eq!(o["id"], p.patient_id(), "{ctx}");
        assert_eq!(o["num_locations"], p.recordings().len(), "{ctx}");
        assert_eq!(
            o["frequency"].as_f64(),
            Some(f64::from(p.frequency_hz())),
            "{ctx}"
        );
        let locs: Vec<String> = p
            .recordings()
            .iter()
            .map(|r| r.location.to_string())
            .collect();
        assert_eq!(o["locations"], serde_json::json!(locs), "{ctx}");
        let wavs: Vec<&str> = p.recordings().iter().map(|r| r.wav_file.as_str()).collect();
        assert_eq!(o["wav_files"], serde_json::json!(wavs), "{ctx}");
        let i = p.info();
        // The helper returns the raw (stripped) strings; ours are typed.
        let text = |v: &Value| v.as_str().map(str::to_string);
        let nan_to_none = |s: Option<String>| s.filter(|s| s != "nan");
        assert_eq!(
            nan_to_none(text(&o["age"])),
            i.age.map(|a| a.as_str().to_string()),
            "{ctx}"
        );
        assert_eq!(
            text(&o["sex"]),
            i.sex.map(|a| a.as_str().to_string()),
            "{ctx}"
        );
        assert_eq!(o["height"].as_f64(), i.height_cm, "{ctx}");
        assert_eq!(o["weight"].as_f64(), i.weight_kg, "{ctx}");
        assert_eq!(o["pregnancy"].as_bool(), i.pregnant, "{ctx}");
        // Labels: the helper does not strip them; the scorer does. Compare stripped, and
        // check that nothing needed stripping in the real files.
        for (v, ours) in [
            (&o["murmur"], i.murmur.map(|m| m.as_str())),
            (&o["outcome"], i.outcome.map(|m| m.as_str())),
        ] {
            assert_eq!(v.as_str(), ours, "{ctx}");
        }
        let raw: Vec<(String, String)> = p
            .annotations()
            .iter()
            .map(|a| (a.key().to_string(), a.value().to_string()))
            .collect();
        let oracle_raw: Vec<(String, String)> = o["annotations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|kv| (text(&kv[0]).unwrap(), text(&kv[1]).unwrap()))
            .collect();
        assert_eq!(raw, oracle_raw, "{ctx}");
    }

    let mut checked = BTreeMap::new();
    for (name, rows) in segs {
        let s = Segmentation::read(dir.join(name)).unwrap();
        let rows = rows.as_array().unwrap();
        assert_eq!(rows.len(), s.segments().len(), "{name}");
        for (k, (row, seg)) in rows.iter().zip(s.segments()).enumerate() {
            let r: Vec<f64> = row
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            let ours = vec![seg.start_s, seg.end_s, f64::from(seg.state.code())];
            assert_eq!(r, ours, "{name} line {}", k + 1);
        }
        checked.insert(name.clone(), rows.len());
    }
    assert_eq!(checked["50782_MV_1.tsv"], 1);
}

/// The participant views we write load under the helper code's rules exactly as the full
/// files do (same recordings, same demographics) and carry no label.
#[test]
fn participant_views_load_like_the_originals_under_the_helper_rules() {
    let test = "participant_views_load_like_the_originals_under_the_helper_rules";
    let Some(data) = testkit::shared_data(test) else {
        return;
    };
    let Some(python) = testkit::oracle_python(test) else {
        return;
    };
    let dir = data.join("circor2022/training_data");
    let views = tempfile::tempdir().unwrap();
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "txt") {
            let p = PatientFile::read(&path).unwrap();
            p.without_labels()
                .write(views.path().join(path.file_name().unwrap()))
                .unwrap();
            n += 1;
        }
    }
    assert_eq!(n, 46);
    let run = |d: &std::path::Path| -> Value {
        let out = testkit::run_oracle(&python, "circor_oracle.py", &[d.to_str().unwrap()]);
        serde_json::from_slice(&out).unwrap()
    };
    let full = run(&dir);
    let view = run(views.path());
    let full = full["patients"].as_object().unwrap();
    let view = view["patients"].as_object().unwrap();
    assert_eq!(full.len(), view.len());
    for (name, f) in full {
        let v = &view[name];
        for field in [
            "id",
            "num_locations",
            "frequency",
            "locations",
            "wav_files",
            "age",
            "sex",
            "height",
            "weight",
            "pregnancy",
        ] {
            assert_eq!(v[field], f[field], "{name}: {field}");
        }
        assert_eq!(
            (&v["murmur"], &v["outcome"]),
            (&Value::Null, &Value::Null),
            "{name}"
        );
        assert_eq!(v["annotations"].as_array().unwrap().len(), 5, "{name}");
    }
}
