//! Readers and writers for the files physiological-signal challenges ship their data in.
//!
//! - [`wfdb`]: WFDB headers, signal files (formats 8, 16, 24, 32, 61, 80, 160, 212, 310,
//!   311) and MIT-format annotation files, read and written as the WFDB library does.
//! - [`mat`]: MATLAB `.mat` files: level 4 (read and write) and level 5 (read: numeric,
//!   logical, char, struct and cell arrays, compressed elements, both byte orders).
//! - [`wav`]: PCM WAV files (phonocardiograms), via `hound`.
//! - [`circor`]: CirCor DigiScope patient files (`.txt`) and segmentations (`.tsv`).
//! - [`npy`]: NumPy `.npy` arrays (read: 1-D and 2-D, numeric dtypes, C or Fortran
//!   order, versions 1.0–3.0; write: 2-D float32), how P300 speller blocks are stored.
//!
//! Every parser takes bytes or text plus the name of their source, never panics on
//! malformed input, and reports errors that name the file, the place and the problem.
//!
//! This crate knows nothing of challenges, scoring or sandboxes: it only turns files into
//! plain vectors and back.

pub mod circor;
pub mod mat;
pub mod npy;
pub mod wav;
pub mod wfdb;

/// Helpers the modules' tests share.
#[cfg(test)]
pub(crate) mod test_util {
    /// An error and its sources joined by ": ", as `anyhow` prints a chain (`{:#}`).
    pub(crate) fn chain(e: &dyn std::error::Error) -> String {
        let mut out = e.to_string();
        let mut source = e.source();
        while let Some(s) = source {
            out += &format!(": {s}");
            source = s.source();
        }
        out
    }

    /// Asserts that the message of the I/O error `io` appears once in `e`'s chain.
    pub(crate) fn assert_io_error_shown_once(e: &dyn std::error::Error, io: &std::io::Error) {
        let printed = chain(e);
        let text = io.to_string();
        assert_eq!(printed.matches(&text).count(), 1, "{printed}");
    }
}
