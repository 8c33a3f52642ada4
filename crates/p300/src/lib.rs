//! The fixed layout of the online P300 speller's blocks (`docs/challenges.md`, *BCI
//! contest*): the 6×6 matrix and its 12 flash groups, the trigger codes, the 64 channel
//! rows and the trigger row, the 250 Hz rate, the trial timing and the subject folders.
//! It is what the generator (`synth::p300`), the streaming host (`stream`) and the
//! converter of real recordings (`bnci`) must agree on, in one place, so that none of them
//! depends on another to learn it.
//!
//! # Blocks
//!
//! A block is [`ROWS`] rows × n samples at [`SAMPLE_RATE`] Hz: rows 0–63 the channels of
//! the Neuracle cap in [`CHANNELS`] order, row [`TRIGGER_ROW`] (the last) the trigger row,
//! 0 except at event samples, which hold the event's code:
//!
//! | code | event |
//! |---|---|
//! | [`TRIAL_START_MIN`]–[`TRIAL_START_MAX`] (101–136) | trial start: the target's code ([`target_code`]: 101 + its row-major index in [`MATRIX`]); the host masks it to 101 when it streams |
//! | 1–[`FLASH_MAX`] (12) | a flash of that group ([`GROUPS`]) |
//! | [`SEQUENCE_END`] (200) | the end of a sequence of 12 flashes |
//! | [`TRIAL_END`] (241) | the end of a trial |
//!
//! Subject *k*'s blocks are in the folder [`subject_dir`]`(k)`: `S01`, `S02`, …
//!
//! # Trial timing
//!
//! The contest's trial, as the generator writes it (the converter keeps the cue and the
//! gap but has its own flash spacing: `docs/p300-data.md`). A block opens with [`LEAD`]
//! samples (1.0 s) of signal before the first trial; each trial (one character) then
//! runs, in samples from the trial start `t0`:
//!
//! | sample | trigger |
//! |---|---|
//! | `t0` | the target's code 101–136 |
//! | `t0 + 250` | first flash of sequence 1 (1.0 s cue pause, [`CUE`]) |
//! | `s + round(k · 37.5)`, k = 0…11 | flash k of the sequence starting at `s` ([`flash_offset`]): codes 1–12, each group once per sequence (150 ms SOA, so 38/37-sample spacing) |
//! | `s + 450` | 200: sequence end (after the 12th flash's 150 ms, [`SEQUENCE_END_AFTER`]) |
//! | `s + 450 + 212` | the next sequence's first flash (850 ms gap, [`GAP`]; [`sequence_offset`]), [`SEQUENCES`] sequences in all |
//! | `s5 + 450 + 212` | 241: trial end, 850 ms after the 5th sequence's 200 (`s5`: that sequence's first flash; [`trial_end_offset`]) |
//! | 241's sample + 250 | the next trial's start (1.0 s rest, [`REST`]) |
//!
//! So a trial takes [`TRIAL_SAMPLES`] = 3810 samples (15.24 s) from its start to the next
//! one's, and a block of `chars` trials [`block_samples`]`(chars)` = [`LEAD`] + `chars` ×
//! 3810 samples, the last 250 after the final 241.
//!
//! Not for: data (no samples, no files read or written: the generator, the converter and
//! `stream::load` do that), sessions (packets, masking, report windows: `stream`) or
//! scoring (the ITR: `score`).

/// Samples per second.
pub const SAMPLE_RATE: u32 = 250;
/// Rows of a block: 64 channels and the trigger row (last).
pub const ROWS: usize = 65;
/// The trigger row's index.
pub const TRIGGER_ROW: usize = 64;

/// The Neuracle 64-channel cap in row order (docs/challenges.md).
pub const CHANNELS: [&str; 64] = [
    "Fpz", "Fp1", "Fp2", "AF3", "AF4", "AF7", "AF8", "Fz", "F1", "F2", "F3", "F4", "F5", "F6",
    "F7", "F8", "FCz", "FC1", "FC2", "FC3", "FC4", "FC5", "FC6", "FT7", "FT8", "Cz", "C1", "C2",
    "C3", "C4", "C5", "C6", "T7", "T8", "CP1", "CP2", "CP3", "CP4", "CP5", "CP6", "TP7", "TP8",
    "Pz", "P3", "P4", "P5", "P6", "P7", "P8", "POz", "PO3", "PO4", "PO5", "PO6", "PO7", "PO8",
    "Oz", "O1", "O2", "ECG", "HEOR", "HEOL", "VEOU", "VEOL",
];
/// Row of Pz (where the generator's `snr` is defined).
pub const PZ: usize = 42;

/// The 6×6 speller matrix, row-major (docs/challenges.md).
pub const MATRIX: [char; 36] = [
    'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O', 'P', 'Q', 'R', 'S',
    'T', 'U', 'V', 'W', 'X', 'Y', 'Z', '1', '2', '3', '4', '5', '6', '7', '8', '9', '_',
];

/// The two flash groups (codes 1–12) each character of [`MATRIX`] belongs to, by row-major
/// index (docs/challenges.md): a constant-weight 2-of-12 code, every pair distinct.
pub const GROUPS: [(u8, u8); 36] = [
    (1, 4),  // A
    (1, 5),  // B
    (1, 6),  // C
    (1, 7),  // D
    (1, 8),  // E
    (1, 9),  // F
    (2, 10), // G
    (2, 5),  // H
    (2, 6),  // I
    (2, 7),  // J
    (2, 8),  // K
    (2, 9),  // L
    (3, 10), // M
    (3, 11), // N
    (3, 6),  // O
    (3, 7),  // P
    (3, 8),  // Q
    (3, 9),  // R
    (4, 10), // S
    (4, 11), // T
    (4, 12), // U
    (4, 7),  // V
    (4, 8),  // W
    (4, 9),  // X
    (5, 10), // Y
    (5, 11), // Z
    (5, 12), // 1
    (1, 10), // 2
    (5, 8),  // 3
    (5, 9),  // 4
    (6, 10), // 5
    (6, 11), // 6
    (6, 12), // 7
    (3, 12), // 8
    (2, 11), // 9
    (6, 9),  // _
];

/// The flash groups of the character at row-major `index` (`None` past 35).
pub fn groups_of(index: usize) -> Option<(u8, u8)> {
    GROUPS.get(index).copied()
}

/// The trial-start trigger code of the character at row-major `index`: 101–136.
pub fn target_code(index: usize) -> u32 {
    TRIAL_START_MIN + index as u32
}

/// Trigger codes: trial start (the target's code, 101–136, masked to 101 when streamed),
/// flashes of groups 1–12, sequence end, trial end.
pub const TRIAL_START_MIN: u32 = 101;
pub const TRIAL_START_MAX: u32 = 136;
pub const FLASH_MAX: u32 = 12;
pub const SEQUENCE_END: u32 = 200;
pub const TRIAL_END: u32 = 241;

/// Sequences per trial, flashes per sequence.
pub const SEQUENCES: usize = 5;
pub const FLASHES: usize = 12;
/// Samples before the first trial of a block.
pub const LEAD: usize = 250;
/// Cue pause: trial start to the first flash.
pub const CUE: usize = 250;
/// A sequence's first flash to its sequence-end trigger (12 × 150 ms).
pub const SEQUENCE_END_AFTER: usize = 450;
/// Sequence end to the next sequence's first flash, and the last one to the trial end
/// (850 ms, rounded down to whole samples).
pub const GAP: usize = 212;
/// Trial end to the next trial's start.
pub const REST: usize = 250;
/// A trial's start to the next trial's start.
pub const TRIAL_SAMPLES: usize = CUE + SEQUENCES * (SEQUENCE_END_AFTER + GAP) + REST;

/// Samples from a sequence's first flash to its flash `k`: round(k · 37.5), halves up.
pub fn flash_offset(k: usize) -> usize {
    // k · 37.5 is whole or a half, so rounding halves up is the ceiling.
    (75 * k).div_ceil(2)
}

/// Samples from a trial's start to the first flash of its sequence `s` (0-based).
pub fn sequence_offset(s: usize) -> usize {
    CUE + s * (SEQUENCE_END_AFTER + GAP)
}

/// Samples from a trial's start to its trial-end trigger.
pub fn trial_end_offset() -> usize {
    sequence_offset(SEQUENCES)
}

/// Samples in a block of `chars` trials.
pub fn block_samples(chars: usize) -> usize {
    LEAD + chars * TRIAL_SAMPLES
}

/// The folder of subject `subject` (1-based): `S01`.
pub fn subject_dir(subject: usize) -> String {
    format!("S{subject:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_character_is_in_exactly_two_groups_and_the_pairs_differ() {
        assert_eq!(CHANNELS[PZ], "Pz");
        let mut sizes = [0usize; 13];
        let mut pairs = std::collections::BTreeSet::new();
        for (i, &(a, b)) in GROUPS.iter().enumerate() {
            assert!(
                (1..=12).contains(&a) && (1..=12).contains(&b) && a != b,
                "{i}"
            );
            sizes[usize::from(a)] += 1;
            sizes[usize::from(b)] += 1;
            assert!(
                pairs.insert((a.min(b), a.max(b))),
                "{} repeats a pair",
                MATRIX[i]
            );
            assert_eq!(groups_of(i), Some((a, b)));
        }
        assert_eq!(pairs.len(), 36);
        assert_eq!(&sizes[1..], &[7, 7, 7, 7, 7, 7, 4, 5, 6, 6, 5, 4]);
        assert_eq!(groups_of(36), None);
        assert_eq!(target_code(0), 101);
        assert_eq!(MATRIX[25], 'Z');
        assert_eq!(target_code(26), 127);
        assert_eq!(MATRIX[26], '1');
        assert_eq!(target_code(35), 136);
        assert_eq!(MATRIX[35], '_');
        // Spot checks against the table in docs/challenges.md.
        let of = |c: char| GROUPS[MATRIX.iter().position(|&m| m == c).unwrap()];
        assert_eq!(of('H'), (2, 5));
        assert_eq!(of('2'), (1, 10));
        assert_eq!(of('8'), (3, 12));
        assert_eq!(of('_'), (6, 9));
    }

    #[test]
    fn the_codes_and_the_timing_fit_together() {
        assert_eq!(target_code(MATRIX.len() - 1), TRIAL_START_MAX);
        assert_eq!(FLASH_MAX as usize, FLASHES);
        assert_eq!((ROWS, TRIGGER_ROW), (CHANNELS.len() + 1, CHANNELS.len()));
        // 150 ms SOA at 250 Hz: 37.5 samples, so 38 and 37 in turn; the 13th slot is the
        // sequence end.
        let steps: Vec<usize> = (1..FLASHES)
            .map(|k| flash_offset(k) - flash_offset(k - 1))
            .collect();
        assert!(steps.iter().all(|&d| d == 37 || d == 38), "{steps:?}");
        assert_eq!(flash_offset(FLASHES), SEQUENCE_END_AFTER);
        assert_eq!((sequence_offset(0), sequence_offset(1)), (250, 912));
        assert_eq!(trial_end_offset(), 3560);
        assert_eq!(TRIAL_SAMPLES, trial_end_offset() + REST);
        assert_eq!(TRIAL_SAMPLES, 3810);
        assert_eq!(block_samples(32), 250 + 32 * 3810);
        assert_eq!(subject_dir(6), "S06");
        assert_eq!(subject_dir(10), "S10");
    }
}
