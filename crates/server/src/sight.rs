//! The server's side of the one visibility rule ([`judge::visibility::sight`]): the
//! facts it reads, taken from a stored phase and the clock. Every view drawn from a
//! phase's figures — the leaderboard's rows and ranks, the site's plot of the best
//! score over time with its caption and `aria-label`, a submission's own figures —
//! asks here, so that no view decides on its own what a caller may see.

use chrono::{DateTime, Utc};
use judge::visibility::{FigureView, PhaseFacts, Sight, Viewer};

use crate::views::BoardName;

/// The facts of `phase` for figures of `split` at `now`.
pub fn facts(phase: &store::Phase, split: store::Split, now: DateTime<Utc>) -> PhaseFacts {
    PhaseFacts {
        exam: split == store::Split::Exam,
        show_exam: phase.show_exam,
        closed: now >= phase.closes,
    }
}

/// What a caller (an organiser or not) may see of a board of `phase` ranked by
/// figures of `split`, and of everything drawn from the same figures.
pub fn board(
    phase: &store::Phase,
    split: store::Split,
    board: BoardName,
    organiser: bool,
    precision: u32,
    now: DateTime<Utc>,
) -> Sight {
    let viewer = if organiser {
        Viewer::Organiser
    } else {
        Viewer::Public
    };
    let view = match board {
        BoardName::Live | BoardName::Final => FigureView::Board,
        BoardName::Published => FigureView::Published,
    };
    judge::visibility::sight(viewer, view, facts(phase, split, now), precision)
}
