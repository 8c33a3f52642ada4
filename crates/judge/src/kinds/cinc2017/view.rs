//! CinC 2017's record view: the single-lead ECG with the true class and the entry's
//! answer.

use std::path::Path;

use crate::kinds::view::{self, Ask, Fact, Plot, RecordView};

fn label_name(l: &str) -> &'static str {
    match l {
        "N" => "N — normal rhythm",
        "A" => "A — atrial fibrillation",
        "O" => "O — another rhythm",
        "~" => "~ — too noisy to classify",
        _ => "not a class",
    }
}

/// A `.hea` file named `name` at the top of `data` or one folder down (CinC 2017's
/// training set keeps its records at the top; other copies put them in a folder).
fn find_record(data: &Path, name: &str) -> Option<std::path::PathBuf> {
    view::find_file(data, &format!("{name}.hea")).map(|h| h.with_extension(""))
}

pub(super) fn record_view(
    data: &Path,
    outputs: &Path,
    name: &str,
    ask: Ask,
) -> Result<RecordView, String> {
    view::plain_name(name, "record")?;
    let reference =
        std::fs::read_to_string(data.join("REFERENCE.csv")).map_err(|e| e.to_string())?;
    let truth = score::cinc2017::parse_reference(&reference, "REFERENCE.csv")
        .map_err(|e| e.to_string())?
        .into_iter()
        .find(|(r, _)| r == name)
        .map(|(_, l)| {
            serde_json::to_value(l)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default()
        });
    // The first answer for the record counts, as the scorer counts it.
    let answer = view::output(outputs, "answers.txt").and_then(|b| {
        String::from_utf8_lossy(&b).lines().find_map(|l| {
            let (r, a) = l.split_once(',')?;
            (r.trim() == name).then(|| a.trim().to_owned())
        })
    });
    let path = find_record(data, name).ok_or_else(|| format!("no header for {name}"))?;
    let rec = formats::wfdb::Record::open(&path).map_err(|e| e.to_string())?;
    let fs = rec.header.record.fs.unwrap_or(300.0);
    let len = rec.sig_len().map_err(|e| e.to_string())?;
    let dur = len as f64 / fs;
    let (from, to, s0, s1) = view::window(ask, fs, len);
    let traces = view::wfdb_traces(&rec, s0, s1, ask.columns)?;
    let right = truth.is_some() && truth == answer;
    let summary = format!(
        "ECG from {from:.1} s to {to:.1} s of {dur:.1} s; true class {}, answered {}.",
        truth.as_deref().unwrap_or("unknown"),
        answer.as_deref().unwrap_or("nothing")
    );
    Ok(RecordView {
        facts: vec![
            Fact::new(
                "True class",
                truth.as_deref().map_or("not in the reference", label_name),
            ),
            match &answer {
                Some(a) => Fact::new("Answered", label_name(a)).judged(right),
                None => Fact::new("Answered", "nothing (scored as ~)").judged(false),
            },
            Fact::new(
                "Length",
                format!("{len} samples at {fs} Hz ({})", view::duration(dur)),
            ),
        ],
        plot: Some(Plot {
            from,
            to,
            duration: dur,
            traces,
            bands: Vec::new(),
            shade: None,
            summary,
            legend: "One min/max pair per pixel column.".into(),
        }),
        ..RecordView::default()
    })
}
