//! Writing WFDB records: signal files in any supported format, and their header, with
//! the initial values and checksums the WFDB library would write. FLAC files (formats
//! 508, 516, 524) are written as the WFDB library and wfdb-python write them: one stream,
//! a channel per signal, samples of the format's size, blocks of 4096, a nominal rate of
//! 96 kHz (docs/formats.md, "FLAC formats").

use std::path::Path;

use super::format::{self, Format};
use super::header::{Header, RecordLine, SignalSpec};
use super::read::{check_file_groups, file_groups};
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

    check_text(&record.name, "record name", false).map_err(&fail)?;
    if record.name.contains('/') {
        return Err(fail(format!(
            "the record name {:?} holds a '/'",
            record.name
        )));
    }
    for c in comments {
        if c.contains(['\n', '\r']) {
            return Err(fail(format!("comment {c:?} holds a line break")));
        }
    }
    let mut frames: Option<(usize, u64)> = None;
    for (i, s) in signals.iter().enumerate() {
        check_spec(&s.spec).map_err(|m| fail(format!("signal {i}: {m}")))?;
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
    check_file_groups(&specs).map_err(&fail)?;
    // Every file's bytes, encoded before anything is written.
    let mut files: Vec<(std::path::PathBuf, Vec<u8>)> = Vec::new();
    for g in file_groups(&specs) {
        let first = &specs[g.start];
        if first.is_null() {
            // Nothing stored: an initial value at the ADC zero and a checksum of 0.
            for spec in &mut out_specs[g] {
                let zero = spec.effective_adc_zero();
                fill_positional(spec, zero, 0);
            }
            continue;
        }
        let fmt = first.format;
        // Per signal: the stored stream (differences for format 8).
        let mut streams = Vec::with_capacity(g.len());
        for i in g.clone() {
            let (stream, initial, checksum) = prepare(i, &signals[i], &fail)?;
            fill_positional(&mut out_specs[i], initial, checksum);
            streams.push(stream);
        }
        if let Some(bits) = fmt.flac_bits() {
            // One channel per signal, each its samples in order (check_file_groups has
            // made sure they share the samples per frame, so the channels line up frame
            // by frame).
            let channels: Vec<&[i32]> = streams.iter().map(Vec::as_slice).collect();
            let bytes = super::flac::encode(&channels, bits).map_err(|m| {
                WfdbError::in_file(
                    dir.join(&first.file_name).display().to_string(),
                    WfdbErrorKind::Write(m),
                )
            })?;
            files.push((dir.join(&first.file_name), bytes));
            continue;
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
        files.push((dir.join(&first.file_name), bytes));
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
    // The checks above should make this impossible; it keeps the promise that what we
    // write reads back as the header we return.
    match Header::parse(&header.to_text(), &hea_name) {
        Ok(back) if back == header => {}
        Ok(_) => return Err(fail("the header would not read back as written".into())),
        Err(e) => return Err(fail(format!("the header would not read back: {e}"))),
    }
    for (path, bytes) in files {
        std::fs::write(&path, &bytes).map_err(|e| WfdbError::io(path.display().to_string(), e))?;
    }
    write_header(dir, &header)?;
    Ok(header)
}

/// Sets the positional fields of a signal line, so that the line is written in full and
/// reads back as the spec returned.
fn fill_positional(spec: &mut SignalSpec, initial: i32, checksum: i32) {
    spec.initial_value = Some(initial);
    spec.checksum = Some(checksum);
    spec.block_size.get_or_insert(0);
    spec.adc_res.get_or_insert(spec.format.written_adc_res());
    spec.adc_zero.get_or_insert(0);
    spec.adc_gain.get_or_insert(super::header::DEFAULT_GAIN);
}

/// A name, units or description for a header: not empty, no line break, and (unless it is
/// a description, the rest of its line) no white space.
fn check_text(text: &str, what: &str, spaces_allowed: bool) -> Result<(), String> {
    if text.is_empty() {
        return Err(format!("the {what} is empty"));
    }
    if text.contains(['\n', '\r']) || (!spaces_allowed && text.contains(char::is_whitespace)) {
        return Err(format!(
            "the {what} {text:?} holds {}",
            if spaces_allowed {
                "a line break"
            } else {
                "white space"
            }
        ));
    }
    Ok(())
}

/// Checks that a signal line can be written and read back as it is.
fn check_spec(s: &SignalSpec) -> Result<(), String> {
    check_text(&s.file_name, "file name", false)?;
    if s.samples_per_frame == Some(0) {
        return Err("samples per frame must be at least 1".into());
    }
    if let Some(g) = s.adc_gain
        && !g.is_finite()
    {
        return Err(format!("the gain {g} is not a finite number"));
    }
    if let Some(u) = &s.units {
        check_text(u, "units", false)?;
        if u.contains(['(', ')']) {
            return Err(format!("the units {u:?} hold a parenthesis"));
        }
    }
    if let Some(d) = &s.description {
        check_text(d, "description", true)?;
        if d.trim() != d {
            return Err(format!(
                "the description {d:?} starts or ends with white space"
            ));
        }
    }
    Ok(())
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
