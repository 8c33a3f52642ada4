//! CPSC 2021's record view: both ECG leads, the true AF episodes and the predicted ones
//! as bands (the truth also shaded behind the leads).

use std::path::Path;

use crate::kinds::view::{self, Ask, Bands, Fact, Plot, RecordView, Source};

fn episodes(list: &[(f64, f64)]) -> String {
    if list.is_empty() {
        return "none".to_owned();
    }
    list.iter()
        .map(|(a, b)| format!("[{a:.0}, {b:.0}]"))
        .collect::<Vec<_>>()
        .join(" ")
}

pub(super) fn record_view(
    data: &Path,
    outputs: &Path,
    name: &str,
    ask: Ask,
) -> Result<RecordView, String> {
    view::plain_name(name, "record")?;
    let truth = score::cpsc2021::load_record(data, name).map_err(|e| e.to_string())?;
    let rec = formats::wfdb::Record::open(data.join(name)).map_err(|e| e.to_string())?;
    let fs = rec.header.record.fs.unwrap_or(200.0);
    let len = truth.len;
    let dur = len as f64 / fs;
    let (from, to, s0, s1) = view::window(ask, fs, len);
    let traces = view::wfdb_traces(&rec, s0, s1, ask.columns)?;
    let output = ["json", "mat"]
        .iter()
        .find_map(|ext| view::output(outputs, &format!("{name}.{ext}")));
    let predicted: Result<Vec<(f64, f64)>, String> = match output {
        Some(bytes) => score::cpsc2021::check_prediction(&bytes, &format!("{name}.json"), len),
        None => Err("no output for this record".into()),
    };
    let truth_eps: Vec<(f64, f64)> = truth
        .episodes
        .iter()
        .map(|&(a, b)| (a as f64, b as f64))
        .collect();
    let (w0, w1) = (s0 as f64, s1 as f64);
    let summary = format!(
        "{} leads from {from:.1} s to {to:.1} s of {dur:.1} s; {} true AF episode(s), {} predicted.",
        traces.len(),
        truth_eps.len(),
        predicted
            .as_ref()
            .map(|p| p.len().to_string())
            .unwrap_or_else(|_| "none".into())
    );
    let class = match truth.class {
        score::cpsc2021::Class::N => "non-AF",
        score::cpsc2021::Class::AFf => "persistent AF (the whole record)",
        score::cpsc2021::Class::AFp => "paroxysmal AF (episodes)",
    };
    Ok(RecordView {
        facts: vec![
            Fact::new("Class (truth)", class),
            Fact::new(
                "Length",
                format!("{len} samples at {fs} Hz ({})", view::duration(dur)),
            ),
            Fact::new("True AF episodes", episodes(&truth_eps)),
            Fact::new(
                "Predicted",
                match &predicted {
                    Ok(p) => episodes(p),
                    Err(why) => format!("scored as [] — {why}"),
                },
            ),
        ],
        plot: Some(Plot {
            from,
            to,
            duration: dur,
            traces,
            bands: vec![
                Bands {
                    label: "true AF".into(),
                    source: Source::Truth,
                    spans: view::spans(&truth_eps, w0, w1),
                },
                Bands {
                    label: "predicted AF".into(),
                    source: Source::Entry,
                    spans: predicted
                        .as_ref()
                        .map(|p| view::spans(p, w0, w1))
                        .unwrap_or_default(),
                },
            ],
            shade: Some(0),
            summary,
            legend: "Red: true AF episodes (also shaded behind the leads); blue: the entry's. \
                     One min/max pair per pixel column."
                .into(),
        }),
        ..RecordView::default()
    })
}
