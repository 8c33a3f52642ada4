//! Reading a multi-segment record: each segment read as a record of its own and joined,
//! signals found by position (fixed layout) or by name (variable layout), gaps invalid.

use std::collections::HashMap;
use std::ops::Range;

use super::super::WfdbError;
use super::super::format::GENERIC_INVALID;
use super::{Calibration, ReadOptions, Record, SignalData};

impl Record {
    pub(super) fn read_multi(
        &self,
        selected: &[usize],
        range: Range<u64>,
    ) -> Result<Vec<SignalData>, WfdbError> {
        let segments = self.header.segments.as_deref().unwrap_or_default();
        let layout = self.signal_specs().to_vec();
        let variable = self.has_layout_segment();
        let mut out: Vec<SignalData> = selected
            .iter()
            .map(|&s| {
                let spec = layout.get(s);
                SignalData {
                    index: s,
                    name: spec.and_then(|x| x.description.clone()),
                    units: spec.map_or("mV", |x| x.effective_units()).to_string(),
                    samples_per_frame: spec.map_or(1, |x| x.effective_samples_per_frame()),
                    digital: Vec::new(),
                    calibration: Vec::new(),
                }
            })
            .collect();
        let mut seg_start = 0u64;
        for (seg, rec) in segments.iter().zip(&self.segments) {
            let seg_range = seg_start..seg_start + seg.sig_len;
            seg_start = seg_range.end;
            let lo = range.start.max(seg_range.start);
            let hi = range.end.min(seg_range.end);
            if lo >= hi {
                continue;
            }
            let local = (lo - seg_range.start)..(hi - seg_range.start);
            let n = hi - lo;
            // A variable layout's signals are found by name: the first signal of the
            // segment that has it, looked up rather than searched for, as a segment may
            // have any number of signals.
            let mut by_name: HashMap<&str, usize> = HashMap::new();
            if let Some(r) = rec.as_deref().filter(|_| variable) {
                for (i, s) in r.header.signals.iter().enumerate() {
                    if let Some(name) = s.description.as_deref() {
                        by_name.entry(name).or_insert(i);
                    }
                }
            }
            // Map each wanted record signal to a signal of this segment.
            let mut seg_signals: Vec<Option<usize>> = Vec::with_capacity(out.len());
            for d in &out {
                let idx = match rec {
                    None => None,
                    Some(_) if variable => {
                        let name = layout.get(d.index).and_then(|s| s.description.as_deref());
                        name.and_then(|name| by_name.get(name).copied())
                    }
                    Some(r) => (d.index < r.header.signals.len()).then_some(d.index),
                };
                seg_signals.push(idx);
            }
            let read: Vec<SignalData> = match rec {
                Some(r) => {
                    let wanted: Vec<usize> = seg_signals.iter().flatten().copied().collect();
                    r.read(&ReadOptions {
                        from: local.start,
                        to: Some(local.end),
                        signals: Some(wanted),
                    })?
                    .signals
                }
                None => Vec::new(),
            };
            let mut read = read.into_iter();
            for (d, idx) in out.iter_mut().zip(&seg_signals) {
                let spf = d.samples_per_frame as usize;
                let start = d.digital.len();
                match idx.and_then(|_| read.next()) {
                    Some(sd) => {
                        if sd.samples_per_frame as usize != spf {
                            return Err(self.err(format!(
                                "signal {} has {} samples per frame in segment {:?} but {spf} in the layout",
                                d.index, sd.samples_per_frame, seg.name
                            )));
                        }
                        let c = sd.calibration[0];
                        d.digital.extend_from_slice(&sd.digital);
                        d.calibration.push(Calibration { start, ..c });
                    }
                    None => {
                        let len = n as usize * spf;
                        d.digital.resize(start + len, GENERIC_INVALID);
                        d.calibration.push(Calibration {
                            start,
                            len,
                            gain: 1.0,
                            baseline: 0,
                            invalid: Some(GENERIC_INVALID),
                        });
                    }
                }
            }
        }
        Ok(out)
    }
}
