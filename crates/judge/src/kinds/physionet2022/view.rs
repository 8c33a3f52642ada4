//! PhysioNet 2022's record view: each of the patient's recordings (one row per
//! location), the true murmur and outcome, and the entry's classes and probabilities.

use std::path::Path;

use crate::kinds::view::{self, Ask, Cell, Fact, Plot, RecordView, Table, Trace};

pub(super) fn record_view(
    data: &Path,
    outputs: &Path,
    name: &str,
    ask: Ask,
) -> Result<RecordView, String> {
    view::plain_name(name, "patient")?;
    let txt = view::find_file(data, &format!("{name}.txt"))
        .ok_or_else(|| format!("no patient file for {name}"))?;
    let folder = txt.parent().map(Path::to_path_buf).unwrap_or_default();
    let patient = formats::circor::PatientFile::read(&txt).map_err(|e| e.to_string())?;
    let murmur = patient.annotation("Murmur").map(str::to_owned);
    let outcome = patient.annotation("Outcome").map(str::to_owned);
    let output = view::output(outputs, &format!("{name}.csv"))
        .ok_or_else(|| "no output for this patient".to_owned())
        .and_then(|b| score::physionet2022::parse_output(&b).map_err(|e| format!("{e:?}")));
    let mut traces = Vec::new();
    let mut longest: f64 = 0.0;
    for r in patient.recordings() {
        let wav = formats::wav::Wav::read(folder.join(&r.wav_file)).map_err(|e| e.to_string())?;
        let fs = f64::from(wav.sample_rate().max(1));
        let len = wav.frames() as u64;
        longest = longest.max(len as f64 / fs);
        let (_, _, s0, s1) = view::window(ask, fs, len);
        let (s0, s1) = (s0 as usize, s1 as usize);
        let values: Vec<f64> = match wav.channel(0) {
            Some(formats::wav::Samples::Int(v)) => v
                .get(s0..s1)
                .unwrap_or(&[])
                .iter()
                .map(|&x| f64::from(x))
                .collect(),
            Some(formats::wav::Samples::Float(v)) => v
                .get(s0..s1)
                .unwrap_or(&[])
                .iter()
                .map(|&x| f64::from(x))
                .collect(),
            None => Vec::new(),
        };
        traces.push(Trace {
            label: r.record_name().to_owned(),
            columns: view::columns(&values, ask.columns),
            thin: true,
        });
    }
    let (from, to, _, _) = view::window(ask, 1000.0, (longest * 1000.0) as u64);
    let summary = format!(
        "{} recordings from {from:.1} s to {to:.1} s; true murmur {}, outcome {}.",
        traces.len(),
        murmur.as_deref().unwrap_or("unknown"),
        outcome.as_deref().unwrap_or("unknown")
    );
    let truths = [
        murmur.clone().unwrap_or_default(),
        outcome.clone().unwrap_or_default(),
    ];
    let (table, problems) = match &output {
        Ok(o) => {
            let rows = o
                .classes
                .iter()
                .enumerate()
                .map(|(i, class)| {
                    vec![
                        Cell::text(class),
                        Cell::text(o.binaries.get(i).map(String::as_str).unwrap_or("")),
                        Cell::number(o.scores.get(i).map(String::as_str).unwrap_or("")),
                        if truths.contains(class) {
                            Cell::verdict(true, Some("true class"))
                        } else {
                            Cell::default()
                        },
                    ]
                })
                .collect();
            let head = ["Class", "Chosen", "Probability", "Truth"];
            let table = Table {
                caption: Some("The entry's output".into()),
                head: head.map(String::from).to_vec(),
                rows,
            };
            (Some(table), Vec::new())
        }
        Err(why) => (
            None,
            vec![format!(
                "No usable output: {why} (scored as the empty output)."
            )],
        ),
    };
    Ok(RecordView {
        facts: vec![
            Fact::new("True murmur", murmur.as_deref().unwrap_or("not labelled")),
            Fact::new("True outcome", outcome.as_deref().unwrap_or("not labelled")),
        ],
        notes: Vec::new(),
        problems,
        table,
        plot: Some(Plot {
            from,
            to,
            duration: longest,
            traces,
            bands: Vec::new(),
            shade: None,
            summary,
            legend: "One row per recording location; one min/max pair per pixel column.".into(),
        }),
    })
}
