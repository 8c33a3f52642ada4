//! The contest's trial layout laid over a BNCI run: which repetitions become trials, the
//! per-trial relabelling of lines to group codes, and where each trigger goes at 250 Hz.

use p300::{GROUPS, SEQUENCE_END, SEQUENCES, TRIAL_END};

use crate::paradigm::{Character, Place, Run};
use crate::resample::nearest_output;
use crate::{BnciError, FLASHES_PER_CHARACTER, LINES, SEED};

/// The BNCI repetitions (0-based) each character's two trials take their sequences from:
/// 1–5 and 11–15 in the documentation's 1-based terms.
pub const TRIAL_REPETITIONS: [usize; 2] = [0, 10];

/// One trial of a converted block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trial {
    /// The target character and its true code (101–136).
    pub character: char,
    pub code: u32,
    /// The BNCI character (1-based) and the first of its repetitions (1-based) the trial's
    /// five sequences are.
    pub source_character: usize,
    pub first_repetition: usize,
    /// Positions (250 Hz) of the trial-start and trial-end triggers.
    pub start: usize,
    pub end: usize,
    /// The group code (1–12) each BNCI line was given: `groups[line − 1]`.
    pub groups: [u8; LINES],
}

/// SplitMix64: the relabelling's random numbers.
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    /// The stream of one trial: a function of [`SEED`], the subject, the block and the
    /// trial alone.
    pub fn for_trial(subject: u32, block: usize, trial: usize) -> SplitMix64 {
        let mut r = SplitMix64(SEED);
        for part in [u64::from(subject), block as u64, trial as u64] {
            r.0 ^= part;
            r.0 = r.next();
        }
        r
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n ≥ 1), without modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        let n = n.max(1);
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let v = self.next();
            if v < zone {
                return v % n;
            }
        }
    }
}

/// The group code of every line for one trial whose target sits at `column` (1–6) and
/// `row` (7–12): the target's column and row lines get the two groups of the target
/// character (`GROUPS[index]`, which one gets which drawn at random), the other ten lines
/// the other ten codes in a random order. A bijection of the 12 codes.
pub fn relabel(column: u8, row: u8, index: usize, rng: &mut SplitMix64) -> Option<[u8; LINES]> {
    let (g1, g2) = *GROUPS.get(index)?;
    let (c, r) = (
        usize::from(column).checked_sub(1)?,
        usize::from(row).checked_sub(1)?,
    );
    if c >= LINES || r >= LINES || c == r {
        return None;
    }
    let mut groups = [0u8; LINES];
    let (to_column, to_row) = if rng.below(2) == 0 {
        (g1, g2)
    } else {
        (g2, g1)
    };
    groups[c] = to_column;
    groups[r] = to_row;
    let mut rest: Vec<u8> = (1..=LINES as u8).filter(|&g| g != g1 && g != g2).collect();
    // Fisher–Yates.
    for i in (1..rest.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        rest.swap(i, j);
    }
    let mut rest = rest.into_iter();
    for (line, g) in groups.iter_mut().enumerate() {
        if line != c && line != r {
            *g = rest.next()?;
        }
    }
    Some(groups)
}

/// A trigger: its position at 250 Hz and its code.
pub(crate) type Event = (usize, u32);

/// One trial to be: the BNCI character (0-based), its first repetition (0-based) and the
/// index of its first flash in the run.
struct Plan {
    character: usize,
    target: Character,
    repetition: usize,
    first: usize,
}

/// The triggers of a converted block in time order, and its trials. `samples` is the
/// block's length at 250 Hz.
pub(crate) fn triggers(
    place: &Place<'_>,
    run: &Run,
    subject: u32,
    block: usize,
    samples: usize,
) -> Result<(Vec<Event>, Vec<Trial>), BnciError> {
    let soa = run.timing.soa;
    let mut plans = Vec::new();
    for (c, ch) in run.characters.iter().enumerate() {
        for &rep in &TRIAL_REPETITIONS {
            let first = ch.first_flash + rep * LINES;
            if first + SEQUENCES * LINES > ch.first_flash + FLASHES_PER_CHARACTER {
                return Err(place.err(None, "too few repetitions per character"));
            }
            plans.push(Plan {
                character: c,
                target: *ch,
                repetition: rep,
                first,
            });
        }
    }
    let flash_at = |i: usize| run.flashes.get(i).copied();
    let first_pos = |plan: &Plan| flash_at(plan.first).map(|f| nearest_output(f.onset));

    let mut events: Vec<Event> = Vec::new();
    let mut trials = Vec::with_capacity(plans.len());
    let mut previous_end: Option<usize> = None;
    for (t, plan) in plans.iter().enumerate() {
        let Plan {
            character: c,
            target: ch,
            repetition: rep,
            first,
        } = *plan;
        let mut rng = SplitMix64::for_trial(subject, block, t);
        let groups = relabel(ch.column, ch.row, ch.index, &mut rng)
            .ok_or_else(|| place.err(None, format!("character {}: no group code", c + 1)))?;
        let character = p300::MATRIX.get(ch.index).copied().unwrap_or('?');
        let code = p300::target_code(ch.index);
        let Some(first_flash) = first_pos(plan) else {
            return Err(place.err(None, format!("character {}: missing flashes", c + 1)));
        };

        // Trial start: one cue (1.0 s) before the first flash, or right after the
        // previous trial's end if that leaves less.
        let earliest = previous_end.map_or(0, |e| e + 1);
        let start = first_flash.saturating_sub(p300::CUE).max(earliest);
        if start >= first_flash {
            return Err(place.err(
                flash_at(first).map(|f| f.onset),
                format!(
                    "character {}: no room for the trial-start trigger before the first \
                     flash of repetition {}",
                    c + 1,
                    rep + 1
                ),
            ));
        }
        let mut trial_events = vec![(start, code)];
        let mut last_sequence_end = start;
        for s in 0..SEQUENCES {
            for k in 0..LINES {
                let i = first + s * LINES + k;
                let f = flash_at(i).ok_or_else(|| place.err(None, "missing flashes"))?;
                let line = usize::from(f.line);
                let g = groups.get(line.wrapping_sub(1)).copied().unwrap_or(0);
                trial_events.push((nearest_output(f.onset), u32::from(g)));
            }
            // Sequence end: the last sample of the 12th flash's SOA, i.e. one sample
            // before where a 13th flash would start (in BNCI the next repetition's first
            // flash does, with no pause between repetitions).
            let last = flash_at(first + s * LINES + LINES - 1)
                .ok_or_else(|| place.err(None, "missing flashes"))?;
            let end = nearest_output(last.onset.saturating_add(soa)).saturating_sub(1);
            trial_events.push((end, SEQUENCE_END));
            last_sequence_end = end;
        }
        // Trial end: 850 ms after the last sequence end, but before the next trial's
        // first flash with a sample to spare for its start, and within the block.
        let mut end = last_sequence_end.saturating_add(p300::GAP);
        if let Some(next) = plans.get(t + 1).and_then(first_pos) {
            end = end.min(next.saturating_sub(2));
        }
        end = end.min(samples.saturating_sub(1));
        if end <= last_sequence_end {
            return Err(place.err(
                flash_at(first + SEQUENCES * LINES - 1).map(|f| f.onset),
                format!(
                    "character {}: no room for the trial-end trigger after repetition {}",
                    c + 1,
                    rep + SEQUENCES
                ),
            ));
        }
        trial_events.push((end, TRIAL_END));
        previous_end = Some(end);
        events.extend(trial_events);
        trials.push(Trial {
            character,
            code,
            source_character: c + 1,
            first_repetition: rep + 1,
            start,
            end,
            groups,
        });
    }

    // Every trigger on a sample of its own, in order, inside the block.
    for w in events.windows(2) {
        if w[1].0 <= w[0].0 {
            return Err(place.err(
                None,
                format!(
                    "at 250 Hz, trigger {} would fall at sample {} and trigger {} at sample \
                     {}: flashes or sequences too close together to convert",
                    w[0].1, w[0].0, w[1].1, w[1].0
                ),
            ));
        }
    }
    if let Some(&(pos, code)) = events.last()
        && pos >= samples
    {
        return Err(place.err(
            None,
            format!("trigger {code} would fall at sample {pos}, past the block's {samples}"),
        ));
    }
    Ok((events, trials))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relabelling_is_a_bijection_keeping_the_target_on_its_groups() {
        let mut seen_orientations = [false; 2];
        for (index, &(g1, g2)) in GROUPS.iter().enumerate() {
            let (column, row) = ((index % 6) as u8 + 1, (index / 6) as u8 + 7);
            for trial in 0..20 {
                let mut rng = SplitMix64::for_trial(6, 1, trial);
                let g = relabel(column, row, index, &mut rng).unwrap();
                let mut sorted = g;
                sorted.sort_unstable();
                assert_eq!(sorted.to_vec(), (1..=12).collect::<Vec<u8>>(), "{g:?}");
                let pair = (g[usize::from(column) - 1], g[usize::from(row) - 1]);
                assert!(pair == (g1, g2) || pair == (g2, g1), "{index}: {pair:?}");
                seen_orientations[usize::from(pair.0 == g2)] = true;
                // No other line gets a target group.
                for (line, &code) in g.iter().enumerate() {
                    if line + 1 != usize::from(column) && line + 1 != usize::from(row) {
                        assert!(code != g1 && code != g2);
                    }
                }
            }
        }
        assert_eq!(seen_orientations, [true, true]);
        assert_eq!(relabel(0, 7, 0, &mut SplitMix64(1)), None);
        assert_eq!(relabel(1, 13, 0, &mut SplitMix64(1)), None);
        assert_eq!(relabel(1, 7, 36, &mut SplitMix64(1)), None);
        assert_eq!(relabel(3, 3, 0, &mut SplitMix64(1)), None);
    }

    #[test]
    fn relabelling_is_seeded_per_trial() {
        let draw = |s, b, t| relabel(2, 9, 13, &mut SplitMix64::for_trial(s, b, t)).unwrap();
        assert_eq!(draw(6, 1, 3), draw(6, 1, 3));
        // Different trials get different maps (the non-target lines are shuffled anew).
        let maps: std::collections::BTreeSet<[u8; 12]> = (0..10).map(|t| draw(6, 1, t)).collect();
        assert!(maps.len() >= 9, "{maps:?}");
        assert_ne!(draw(6, 1, 0), draw(10, 1, 0));
        assert_ne!(draw(6, 1, 0), draw(6, 2, 0));
    }

    #[test]
    fn below_is_in_range() {
        let mut r = SplitMix64(7);
        let mut hits = [0usize; 3];
        for _ in 0..3000 {
            hits[r.below(3) as usize] += 1;
        }
        assert!(hits.iter().all(|&h| (900..1100).contains(&h)), "{hits:?}");
        assert_eq!(r.below(0), 0);
        assert_eq!(r.below(1), 0);
    }
}
