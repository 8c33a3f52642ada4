//! Writing WFDB records: signal files in any supported format, and their header, with
//! the initial values and checksums the WFDB library would write.

use std::path::Path;

use super::format::{self, Format};
use super::header::{Header, RecordLine, SignalSpec};
use super::read::file_groups;
use super::{WfdbError, WfdbErrorKind};

/// One signal to write: its header line (file, format, samples per frame, gain, baseline,
/// units, ADC resolution and zero, description) and its digital samples,
/// `samples_per_frame` per frame. The initial value and checksum are computed; skew and
/// byte offset must be absent.
#[derive(Debug, Clone)]
pub struct WriteSignal<'a> {
    pub spec: SignalSpec,
    pub samples: &'a [i32],
}

/// Writes `record.name`'s signal files and header into `dir` and returns the header
/// written. `record.n_signals` and `record.sig_len` are set from `signals`.
pub fn write_record(
    dir: &Path,
    record: &RecordLine,
    signals: &[WriteSignal<'_>],
    comments: &[String],
) -> Result<Header, WfdbError> {
    let hea = dir.join(format!("{}.hea", record.name));
    let hea_name = hea.display().to_string();
    let fail = |msg: String| WfdbError::in_file(&hea_name, WfdbErrorKind::Write(msg));

    let mut frames: Option<(usize, u64)> = None;
    for (i, s) in signals.iter().enumerate() {
        if s.spec.skew.is_some_and(|v| v != 0) || s.spec.byte_offset.is_some_and(|v| v != 0) {
            return Err(fail(format!(
                "signal {i}: writing a skew or a byte offset is not supported"
            )));
        }
        if s.spec.is_null() {
            if !s.samples.is_empty() {
                return Err(fail(format!(
                    "signal {i} is a null signal (`~`) but has samples"
                )));
            }
            continue;
        }
        let spf = s.spec.effective_samples_per_frame() as usize;
        if s.samples.len() % spf != 0 {
            return Err(fail(format!(
                "signal {i} has {} samples, not a whole number of frames of {spf}",
                s.samples.len()
            )));
        }
        let n = (s.samples.len() / spf) as u64;
        match frames {
            Some((j, m)) if m != n => {
                return Err(fail(format!(
                    "signal {j} has {m} frames but signal {i} has {n}"
                )));
            }
            _ => frames = Some((i, n)),
        }
    }
    let n_frames = frames.map_or(0, |f| f.1);

    let specs: Vec<SignalSpec> = signals.iter().map(|s| s.spec.clone()).collect();
    // The header returned is the one a reader will see: defaults are not written.
    let mut out_specs = specs.clone();
    for s in &mut out_specs {
        s.samples_per_frame = s.samples_per_frame.filter(|&v| v != 1);
        s.skew = None;
        s.byte_offset = None;
    }
    for (gi, g) in file_groups(&specs).into_iter().enumerate() {
        let first = &specs[g.start];
        if first.is_null() {
            continue;
        }
        if file_groups(&specs)[..gi]
            .iter()
            .any(|o| specs[o.start].file_name == first.file_name)
        {
            return Err(fail(format!(
                "signals sharing file {:?} must be consecutive",
                first.file_name
            )));
        }
        let fmt = first.format;
        if let Some(s) = specs[g.clone()].iter().find(|s| s.format != fmt) {
            return Err(fail(format!(
                "file {:?} cannot hold formats {} and {}",
                first.file_name,
                fmt.code(),
                s.format.code()
            )));
        }
        // Per signal: the stored stream (differences for format 8).
        let mut streams = Vec::with_capacity(g.len());
        for i in g.clone() {
            let (stream, initial, checksum) = prepare(i, &signals[i], &fail)?;
            out_specs[i].initial_value = Some(initial);
            out_specs[i].checksum = Some(checksum);
            out_specs[i].block_size.get_or_insert(0);
            out_specs[i].adc_res.get_or_insert(fmt.default_adc_res());
            out_specs[i].adc_zero.get_or_insert(0);
            out_specs[i]
                .adc_gain
                .get_or_insert(super::header::DEFAULT_GAIN);
            streams.push(stream);
        }
        let spfs: Vec<usize> = specs[g.clone()]
            .iter()
            .map(|s| s.effective_samples_per_frame() as usize)
            .collect();
        let tspf: usize = spfs.iter().sum();
        let mut flat = Vec::with_capacity(n_frames as usize * tspf);
        for f in 0..n_frames as usize {
            for (stream, &spf) in streams.iter().zip(&spfs) {
                flat.extend_from_slice(&stream[f * spf..(f + 1) * spf]);
            }
        }
        let mut bytes = Vec::with_capacity(fmt.bytes_written(flat.len() as u64) as usize);
        format::encode(fmt, &flat, &mut bytes);
        let path = dir.join(&first.file_name);
        std::fs::write(&path, &bytes).map_err(|e| WfdbError::io(path.display().to_string(), e))?;
    }

    let mut record = record.clone();
    record.n_segments = None;
    record.n_signals = signals.len();
    record.sig_len = Some(n_frames);
    if record.fs.is_none() {
        record.fs = Some(super::header::DEFAULT_FS);
    }
    let header = Header {
        record,
        signals: out_specs,
        segments: None,
        comments: comments.to_vec(),
    };
    write_header(dir, &header)?;
    Ok(header)
}

/// Writes `header` as `<dir>/<name>.hea` (for instance the header of a multi-segment
/// record whose segments were written with [`write_record`]).
pub fn write_header(dir: &Path, header: &Header) -> Result<(), WfdbError> {
    let hea = dir.join(format!("{}.hea", header.record.name));
    std::fs::write(&hea, header.to_text()).map_err(|e| WfdbError::io(hea.display().to_string(), e))
}

/// Checks a signal's samples against its format and returns the stream to store, the
/// initial value and the checksum (16-bit sum, written signed as the C library does).
fn prepare(
    index: usize,
    s: &WriteSignal<'_>,
    fail: &dyn Fn(String) -> WfdbError,
) -> Result<(Vec<i32>, i32, i32), WfdbError> {
    let fmt = s.spec.format;
    let checksum = s
        .samples
        .iter()
        .fold(0i16, |acc, &v| acc.wrapping_add(v as i16)) as i32;
    if fmt == Format::F8 {
        let initial = s
            .spec
            .initial_value
            .or_else(|| s.samples.first().copied())
            .unwrap_or(0);
        let mut prev = initial;
        let mut diffs = Vec::with_capacity(s.samples.len());
        for (k, &v) in s.samples.iter().enumerate() {
            let d = v as i64 - prev as i64;
            if !(-128..=127).contains(&d) {
                return Err(fail(format!(
                    "signal {index}, sample {k}: format 8 stores differences of -128 to 127, \
                     but the sample differs from the previous one by {d}"
                )));
            }
            diffs.push(d as i32);
            prev = v;
        }
        return Ok((diffs, initial, checksum));
    }
    let (lo, hi) = fmt.range();
    if let Some((k, v)) = s
        .samples
        .iter()
        .enumerate()
        .find(|(_, v)| !(lo..=hi).contains(*v))
    {
        return Err(fail(format!(
            "signal {index}, sample {k}: value {v} does not fit format {} ({lo} to {hi})",
            fmt.code()
        )));
    }
    let initial = s
        .samples
        .first()
        .copied()
        .unwrap_or_else(|| s.spec.effective_adc_zero());
    Ok((s.samples.to_vec(), initial, checksum))
}
