//! `physiojudge wfdb info|rdsamp|rdann`: WFDB records on the command line, in the spirit
//! of the WFDB tools `wfdbdesc`, `rdsamp` and `rdann`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use formats::wfdb::{Format, ReadOptions, Record, SignalData, annotation};

use crate::output::UsageError;

use crate::output::csv_field;

#[derive(Subcommand)]
pub enum WfdbCommand {
    /// Describe a record: record line, every signal line, segments, comments.
    Info(InfoArgs),
    /// Print samples as CSV: the frame index, then one column per signal.
    ///
    /// Signals with several samples per frame print the mean of each frame (digital
    /// values: the sum divided by the count, truncated toward zero; a frame holding an
    /// invalid sample prints the invalid value, NaN in physical units).
    Rdsamp(RdsampArgs),
    /// Print annotations as CSV: sample,symbol,subtype,chan,num,aux.
    Rdann(RdannArgs),
}

#[derive(Args)]
pub struct InfoArgs {
    /// Record path without extension (`data/100` reads `data/100.hea`).
    pub record: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct RdsampArgs {
    /// Record path without extension.
    pub record: PathBuf,
    /// Physical units (gain and baseline applied; invalid samples print NaN) instead of
    /// digital values.
    #[arg(long)]
    pub physical: bool,
    /// First frame to print (0-based).
    #[arg(long, default_value_t = 0)]
    pub from: u64,
    /// Frame to stop before (exclusive); default: the end of the record.
    #[arg(long)]
    pub to: Option<u64>,
    /// Signals to print, 0-based, comma-separated, in the order wanted (default: all).
    #[arg(long, value_delimiter = ',')]
    pub signals: Option<Vec<usize>>,
}

#[derive(Args)]
pub struct RdannArgs {
    /// Record path without extension.
    pub record: PathBuf,
    /// Annotator: the annotation file's extension (`atr` reads `REC.atr`).
    pub annotator: String,
    /// Print a JSON array of annotations instead of CSV.
    #[arg(long)]
    pub json: bool,
}

pub fn run(cmd: WfdbCommand, out: &mut dyn Write) -> Result<()> {
    match cmd {
        WfdbCommand::Info(a) => info(&a, out),
        WfdbCommand::Rdsamp(a) => rdsamp(&a, out),
        WfdbCommand::Rdann(a) => rdann(&a, out),
    }
}

fn open(path: &PathBuf) -> Result<Record> {
    Ok(Record::open(path)?)
}

fn duration(frames: u64, fs: f64) -> String {
    if fs <= 0.0 {
        return "unknown".into();
    }
    // Round once, to milliseconds, so that 59.9996 s prints as 0:01:00.000.
    let ms = (frames as f64 / fs * 1000.0).round() as u64;
    let (h, m, s, ms) = (ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000);
    format!("{h}:{m:02}:{s:02}.{ms:03}")
}

fn info(a: &InfoArgs, out: &mut dyn Write) -> Result<()> {
    let rec = open(&a.record)?;
    let h = &rec.header;
    let frames = rec.sig_len()?;
    let fs = h.record.effective_fs();
    if a.json {
        let mut v = serde_json::to_value(h)?;
        v["frames"] = frames.into();
        v["fs"] = fs.into();
        v["duration_seconds"] = if fs > 0.0 {
            (frames as f64 / fs).into()
        } else {
            serde_json::Value::Null
        };
        writeln!(out, "{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    writeln!(out, "Record {}", h.record.name)?;
    let start = match (h.record.base_time, h.record.base_date) {
        (Some(t), Some(d)) => format!("{t} {d}"),
        (Some(t), None) => t.to_string(),
        (None, Some(d)) => d.to_string(),
        (None, None) => "not specified".into(),
    };
    writeln!(out, "Starting time: {start}")?;
    writeln!(out, "Length: {} ({frames} frames)", duration(frames, fs))?;
    writeln!(out, "Sampling frequency: {fs} Hz")?;
    if let Some(cf) = h.record.counter_freq {
        writeln!(
            out,
            "Counter frequency: {cf} (base {})",
            h.record.base_counter.unwrap_or(0.0)
        )?;
    }
    if let Some(segments) = &h.segments {
        writeln!(out, "{} segments:", segments.len())?;
        for s in segments {
            writeln!(out, "  {} ({} frames)", s.name, s.sig_len)?;
        }
    }
    writeln!(out, "{} signals", rec.n_signals())?;
    for (k, s) in rec.signal_specs().iter().enumerate() {
        writeln!(
            out,
            "Signal {k}: {}",
            s.description.as_deref().unwrap_or("(no description)")
        )?;
        writeln!(out, "  File: {} (format {})", s.file_name, s.format.code())?;
        if s.effective_samples_per_frame() > 1 {
            writeln!(
                out,
                "  Samples per frame: {}",
                s.effective_samples_per_frame()
            )?;
        }
        if let Some(skew) = s.skew {
            writeln!(out, "  Skew: {skew}")?;
        }
        if let Some(off) = s.byte_offset {
            writeln!(out, "  Byte offset: {off}")?;
        }
        let uncal = if s.adc_gain == Some(0.0) {
            " (uncalibrated)"
        } else {
            ""
        };
        writeln!(
            out,
            "  Gain: {} adu/{}{uncal}, baseline {}",
            s.effective_gain(),
            s.effective_units(),
            s.effective_baseline()
        )?;
        writeln!(
            out,
            "  ADC: {} bits, zero {}",
            s.effective_adc_res(),
            s.effective_adc_zero()
        )?;
        let checksum = s.checksum.map_or("none".into(), |c| c.to_string());
        writeln!(
            out,
            "  Initial value: {}, checksum: {checksum}",
            s.effective_initial_value()
        )?;
    }
    if !h.comments.is_empty() {
        writeln!(out, "Comments:")?;
        for c in &h.comments {
            writeln!(out, "  {}", c.trim())?;
        }
    }
    Ok(())
}

/// Frames read and printed at a time, so that printing a record needs memory for one
/// chunk, not for the whole record.
const RDSAMP_CHUNK_FRAMES: u64 = 1 << 16;

/// Appends one frame's value of a signal: the sample, or the mean of the frame's samples
/// (digital: the sum divided by the count, truncated toward zero, as wfdb-python does).
/// A frame with an invalid sample has no mean: it prints the invalid value, as the WFDB
/// library's getvec returns WFDB_INVALID_SAMPLE for it (a mean counting the sentinel as
/// a value would look like a valid sample).
fn push_value(line: &mut String, s: &SignalData, physical: &[f64], frame: usize) {
    use std::fmt::Write as _;
    let spf = s.samples_per_frame.max(1) as usize;
    let range = frame * spf..(frame + 1) * spf;
    if !physical.is_empty() {
        let v = physical[range].iter().sum::<f64>() / spf as f64;
        if v.is_nan() {
            line.push_str("NaN");
        } else {
            let _ = write!(line, "{v}");
        }
    } else if spf == 1 {
        let _ = write!(line, "{}", s.digital[frame]);
    } else {
        // A frame lies in one segment, so one calibration run tells its invalid value.
        let run = s
            .calibration
            .partition_point(|c| c.start + c.len <= range.start);
        let invalid = s.calibration.get(run).and_then(|c| c.invalid);
        let samples = &s.digital[range];
        match invalid.filter(|i| samples.contains(i)) {
            Some(i) => {
                let _ = write!(line, "{i}");
            }
            None => {
                let sum: i64 = samples.iter().map(|&v| v as i64).sum();
                let _ = write!(line, "{}", sum / spf as i64);
            }
        }
    }
}

fn rdsamp(a: &RdsampArgs, out: &mut dyn Write) -> Result<()> {
    if let Some(to) = a.to
        && to < a.from
    {
        return Err(UsageError(format!("--to {to} is before --from {}", a.from)).into());
    }
    let rec = open(&a.record)?;
    let end = match a.to {
        Some(to) => to,
        None => rec.sig_len()?,
    };
    // Format 8 stores differences, so every read sums from the start of its file: read
    // such records in one piece rather than summing again for every chunk.
    let chunk = if rec.signal_specs().iter().any(|s| s.format == Format::F8) {
        end.saturating_sub(a.from).max(1)
    } else {
        RDSAMP_CHUNK_FRAMES
    };
    let mut warned = false;
    let mut line = String::new();
    let mut from = a.from;
    loop {
        let to = end.min(from.saturating_add(chunk));
        let part = rec.read(&ReadOptions {
            from,
            to: Some(to),
            signals: a.signals.clone(),
        })?;
        if !a.physical && !warned && part.signals.iter().any(|s| !s.has_uniform_calibration()) {
            tracing::warn!(
                "{}: segments store some signals with different gains or baselines, so their \
                 digital values are not comparable across segments; --physical converts each \
                 segment with its own calibration",
                a.record.display()
            );
            warned = true;
        }
        let physical: Vec<Vec<f64>> = part
            .signals
            .iter()
            .map(|s| if a.physical { s.physical() } else { Vec::new() })
            .collect();
        for t in 0..part.frames as usize {
            line.clear();
            line.push_str(&(from + t as u64).to_string());
            for (s, p) in part.signals.iter().zip(&physical) {
                line.push(',');
                push_value(&mut line, s, p, t);
            }
            line.push('\n');
            out.write_all(line.as_bytes())?;
        }
        if to >= end {
            return Ok(());
        }
        from = to;
    }
}

fn rdann(a: &RdannArgs, out: &mut dyn Write) -> Result<()> {
    let file = annotation::read_annotator(&a.record, &a.annotator).with_context(|| {
        format!(
            "reading the {:?} annotations of {}",
            a.annotator,
            a.record.display()
        )
    })?;
    if file.trailing_bytes > 0 {
        tracing::warn!(
            "{}.{}: {} bytes after the end-of-file marker were ignored",
            a.record.display(),
            a.annotator,
            file.trailing_bytes
        );
    }
    // Definition notes at sample 0 (time resolution, custom labels) configure the file,
    // as in the WFDB library; they are applied to symbols, not printed.
    let annotations = file.content();
    if a.json {
        let items: Vec<serde_json::Value> = annotations
            .iter()
            .map(|x| {
                serde_json::json!({
                    "sample": x.sample,
                    "symbol": file.symbol(x.code),
                    "code": x.code,
                    "subtype": x.subtype,
                    "chan": x.chan,
                    "num": x.num,
                    "aux": x.aux_str(),
                })
            })
            .collect();
        writeln!(out, "{}", serde_json::to_string_pretty(&items)?)?;
        return Ok(());
    }
    for x in annotations {
        let aux = x.aux_str().unwrap_or_default();
        writeln!(
            out,
            "{},{},{},{},{},{}",
            x.sample,
            csv_field(&file.symbol(x.code)),
            x.subtype,
            x.chan,
            x.num,
            csv_field(&aux)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::duration;

    #[test]
    fn durations_round_once() {
        assert_eq!(duration(22355, 200.0), "0:01:51.775");
        assert_eq!(duration(599_999, 10_000.0), "0:01:00.000");
        assert_eq!(duration(24 * 3600 * 360, 360.0), "24:00:00.000");
        assert_eq!(duration(5, 0.0), "unknown");
    }
}
