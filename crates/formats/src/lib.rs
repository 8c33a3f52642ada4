//! Readers and writers for the files physiological-signal challenges ship their data in.
//!
//! - [`wfdb`]: WFDB headers, signal files (formats 8, 16, 24, 32, 61, 80, 160, 212, 310,
//!   311) and MIT-format annotation files, read and written as the WFDB library does.
//! - [`mat`]: MATLAB `.mat` files, level 4 numeric matrices and the level-5 subset the
//!   P300 speller data needs (structs of double matrices, compressed elements).
//! - [`wav`]: PCM WAV files (phonocardiograms), via `hound`.
//! - [`circor`]: CirCor DigiScope patient files (`.txt`) and segmentations (`.tsv`).
//!
//! Every parser takes bytes or text plus the name of their source, never panics on
//! malformed input, and reports errors that name the file, the place and the problem.
//!
//! This crate knows nothing of challenges, scoring or sandboxes: it only turns files into
//! plain vectors and back.

// pub mod circor;
// pub mod mat;
// pub mod wav;
pub mod wfdb;
