//! `physiojudge wfdb info|rdsamp|rdann`: WFDB records on the command line, in the spirit
//! of the WFDB tools `wfdbdesc`, `rdsamp` and `rdann`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use formats::wfdb::{ReadOptions, Record, SignalData, annotation};

use crate::output::csv_field;

#[derive(Subcommand)]
pub enum WfdbCommand {
    /// Describe a record: record line, every signal line, segments, comments.
    Info(InfoArgs),
    /// Print samples as CSV: the frame index, then one column per signal.
    ///
    /// Signals with several samples per frame print the mean of each frame (digital
    /// values: the sum divided by the count, truncated toward zero).
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
    let secs = frames as f64 / fs;
    let (h, rem) = ((secs / 3600.0).floor(), secs % 3600.0);
    let (m, s) = ((rem / 60.0).floor(), rem % 60.0);
    format!("{}:{:02}:{:06.3}", h as u64, m as u64, s)
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

/// One value of a frame: the sample, or the mean of the frame's samples.
fn frame_values(s: &SignalData, physical: bool) -> Vec<String> {
    let spf = s.samples_per_frame.max(1) as usize;
    if physical {
        s.physical()
            .chunks(spf)
            .map(|c| {
                let v = c.iter().sum::<f64>() / spf as f64;
                if v.is_nan() {
                    "NaN".into()
                } else {
                    v.to_string()
                }
            })
            .collect()
    } else if spf == 1 {
        s.digital.iter().map(i32::to_string).collect()
    } else {
        s.frame_means_digital().iter().map(i64::to_string).collect()
    }
}

fn rdsamp(a: &RdsampArgs, out: &mut dyn Write) -> Result<()> {
    let rec = open(&a.record)?;
    let signals = rec.read(&ReadOptions {
        from: a.from,
        to: a.to,
        signals: a.signals.clone(),
    })?;
    let columns: Vec<Vec<String>> = signals
        .signals
        .iter()
        .map(|s| frame_values(s, a.physical))
        .collect();
    let mut line = String::new();
    for t in 0..signals.frames as usize {
        line.clear();
        line.push_str(&(signals.from + t as u64).to_string());
        for c in &columns {
            line.push(',');
            line.push_str(&c[t]);
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
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
