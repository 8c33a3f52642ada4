//! Small blocks with a known trial layout, for the tests of this crate.

use crate::{Block, SubjectBlocks};

/// Where things are in a block made by [`block`]: trial `t` starts at `start(t)`;
/// sequence `k` of it has flashes at `flash(t, k, j)`, j = 0..12.
pub const TRIAL_LEN: usize = 300;
pub const LEAD: usize = 5;

pub fn start(t: usize) -> usize {
    LEAD + t * TRIAL_LEN
}

pub fn flash(t: usize, k: usize, j: usize) -> usize {
    start(t) + 20 + k * 50 + j * 3
}

pub fn seq_end(t: usize, k: usize) -> usize {
    flash(t, k, 11) + 4
}

pub fn trial_end(t: usize) -> usize {
    start(t) + 20 + 5 * 50 + 10
}

/// A 2-row block (one EEG row counting samples, the trigger row) of `codes.len()` trials
/// whose targets are `codes` (101–136).
pub fn block(name: &str, codes: &[u32]) -> Block {
    let samples = start(codes.len()) + LEAD;
    let mut data = vec![0f32; 2 * samples];
    for (i, v) in data.iter_mut().take(samples).enumerate() {
        *v = i as f32;
    }
    let trig = &mut data[samples..];
    for (t, &code) in codes.iter().enumerate() {
        trig[start(t)] = code as f32;
        for k in 0..5 {
            for j in 0..12 {
                trig[flash(t, k, j)] = ((j + k) % 12 + 1) as f32;
            }
            trig[seq_end(t, k)] = 200.0;
        }
        trig[trial_end(t)] = 241.0;
    }
    Block::new(name, 2, samples, data).expect("a consistent block")
}

pub fn subject(id: u32, codes: &[u32]) -> SubjectBlocks {
    SubjectBlocks {
        person_id: id,
        name: format!("S{id:02}"),
        blocks: vec![block(&format!("S{id:02}/block_1"), codes)],
    }
}
