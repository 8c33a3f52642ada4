//! Simulated real-time sessions of the online P300 speller (`docs/stream.md`, with the
//! contest's rules in `docs/challenges.md`): the host side of its streaming framework.
//!
//! A [`Session`] plays the blocks of every subject, subjects in a seeded shuffled order,
//! as 40 ms packets of 10 samples with all rows (EEG and the trigger row last), the trial
//! start triggers 101–136 (which encode the target) masked to 101. The algorithm asks for
//! packets and reports characters whenever it dares; the session records each report at
//! the position reached in the block, and [`Session::finish`] matches reports to trials
//! (first valid report wins, within the trial's window), counts the sequences each used
//! and gives the ITR of every subject and their mean, with a log of the reports (capped
//! per trial, so that what the host keeps is bounded whatever the algorithm sends).
//! [`protocol`] carries a session over a byte stream to an algorithm in another process
//! (a sandboxed entry) in any language.
//!
//! [`load`] reads blocks stored in the organiser layout (`<subject>/<block>.npy`). The
//! layout itself (trigger codes, rows, rate) is the `p300` crate's.
//!
//! Not here: running the algorithm (the sandbox), choosing which subjects a stage
//! streams (the judge), the ITR formula itself ([`score::itr`]).

mod block;
pub mod load;
pub mod protocol;
mod session;
#[cfg(test)]
mod testblocks;

pub use block::{Block, BlockError, Sequence, TrialSpan};
pub use session::{
    LATER_KEPT_PER_TRIAL, OUTSIDE_KEPT, Packet, ReportLog, ReportStatus, Session, SessionError,
    SessionResult, SubjectBlocks, TrialOutcome,
};

/// Samples per packet (40 ms at [`p300::SAMPLE_RATE`]).
pub const PACKET_SAMPLES: usize = 10;
/// A sequence counts as used once this many of its flashes were delivered before the
/// report (data of up to two flashes of a new sequence comes free).
pub const FLASHES_FOR_A_SEQUENCE: usize = 3;

/// The end (exclusive) of the packet holding block-relative sample `pos`:
/// `(⌊pos/10⌋ + 1)·10` (docs/architecture.md: the clean form, not the framework's `ceil`).
pub fn seg_end(pos: usize) -> usize {
    (pos / PACKET_SAMPLES + 1) * PACKET_SAMPLES
}
