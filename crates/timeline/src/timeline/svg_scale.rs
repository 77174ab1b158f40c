//! The plot's y scale: ticks at round numbers (1, 2 or 5 times a power of ten) and a top
//! that a few spikes do not set. A value more than `SPIKE_FACTOR` times the bulk (the
//! 75th percentile, or the limit when that is higher: up to a quarter of the calls can be
//! spikes) is a spike: the scale stops at the
//! tallest value that is not one, and each spike's bar is drawn clipped at the top,
//! labelled with its value (docs/pipeline.md, "Export"). A clipped bar keeps every other
//! bar readable and still says how tall it is; a log scale would have made the limit line
//! and the bars' differences, the point of the plot, hard to read.

/// How far above the bulk a value must be for the scale to clip it.
pub const SPIKE_FACTOR: usize = 3;

/// Ticks drawn, at most (and at least 3 when the top allows).
const MAX_TICKS: usize = 6;

/// The y scale of a plot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scale {
    /// The value at the top of the plot: a multiple of `step`.
    pub top: usize,
    /// The tick values from 0 to `top`.
    pub ticks: Vec<usize>,
    /// Values above `top` are drawn clipped at it, with their value.
    pub clipped: bool,
}

/// A round step (1, 2 or 5 times a power of ten) that divides `max` into at most
/// `MAX_TICKS - 1` intervals.
fn round_step(max: usize) -> usize {
    let mut unit = 1usize;
    loop {
        for m in [1, 2, 5] {
            let step = unit.saturating_mul(m);
            if max.div_ceil(step) < MAX_TICKS {
                return step;
            }
        }
        if unit > usize::MAX / 10 {
            return usize::MAX;
        }
        unit *= 10;
    }
}

/// The scale for `values` (each call's tallest bar) and a `limit` line that must show.
pub fn scale(values: &[usize], limit: usize) -> Scale {
    let max = values.iter().copied().max().unwrap_or(0).max(limit).max(1);
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let bulk = sorted
        .get((sorted.len() * 3 / 4).min(sorted.len().saturating_sub(1)))
        .copied()
        .unwrap_or(0)
        .max(limit)
        .max(1);
    let clip_at = bulk.saturating_mul(SPIKE_FACTOR);
    let (reach, clipped) = if max > clip_at {
        // Up to the tallest value that is not a spike: only spikes are clipped.
        let tallest = values.iter().copied().filter(|&v| v <= clip_at).max();
        (tallest.unwrap_or(0).max(limit).max(1), true)
    } else {
        (max, false)
    };
    let step = round_step(reach);
    let top = reach.div_ceil(step).saturating_mul(step);
    let ticks = (0..=top / step).map(|k| k * step).collect();
    Scale {
        top,
        ticks,
        clipped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_numbers_up_to_a_round_top() {
        let s = scale(&[12_345, 40_000, 61_234], 50_000);
        assert_eq!(s.ticks, vec![0, 20_000, 40_000, 60_000, 80_000]);
        assert_eq!(s.top, 80_000);
        assert!(!s.clipped);
        let s = scale(&[3, 7], 0);
        assert_eq!(s.ticks, vec![0, 2, 4, 6, 8]);
        let s = scale(&[96_266], 50_000);
        assert_eq!(s.ticks, vec![0, 20_000, 40_000, 60_000, 80_000, 100_000]);
    }

    #[test]
    fn one_spike_is_clipped_instead_of_flattening_the_rest() {
        let mut values = vec![30_000; 40];
        values.push(45_000);
        values.push(1_000_000);
        let s = scale(&values, 50_000);
        assert!(s.clipped);
        assert!(s.top >= 50_000 && s.top <= 100_000, "{s:?}");
        // Without the spike nothing is clipped, and the top covers the largest value.
        values.pop();
        let s = scale(&values, 50_000);
        assert!(!s.clipped);
        assert_eq!(s.top, 50_000);
    }

    /// Five budget batches in forty calls (an eighth of them) are still spikes: the bulk
    /// is the 75th percentile, not the 90th that one of them would have been.
    #[test]
    fn several_spikes_are_clipped_too() {
        let mut values = vec![20_000; 35];
        values.extend([233_486, 466_120, 300_000, 250_000, 400_000]);
        let s = scale(&values, 30_000);
        assert!(s.clipped, "{s:?}");
        assert!(s.top <= 50_000, "{s:?}");
    }

    #[test]
    fn nothing_at_all_still_has_a_scale() {
        let s = scale(&[], 0);
        assert_eq!(s.ticks, vec![0, 1]);
        assert!(!s.clipped);
    }
}
