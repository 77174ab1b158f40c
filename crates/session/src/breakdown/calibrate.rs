//! The chars-per-token ratio of a session whose model has no tokenizer here (Claude): fit
//! on the session's own calls, each a point (characters the file holds for the call,
//! tokens the API recorded). The fit has an intercept, since every call also carries what
//! the file does not hold (the system prompt, the tool schemas) and that part must not
//! bend the ratio; it is what `finish` shows as "not in the file".

/// Used when the calls cannot tell (fewer than two, or all the same size): a common
/// figure for English and code.
pub const DEFAULT_CHARS_PER_TOKEN: f64 = 3.5;
/// A fit outside these bounds says more about the file than about the tokenizer.
const MIN_CHARS_PER_TOKEN: f64 = 1.5;
const MAX_CHARS_PER_TOKEN: f64 = 8.0;

/// A calibration: characters per token, and how it was had.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    pub chars_per_token: f64,
    /// Calls the fit used; 0 for the default ratio.
    pub calls: usize,
}

impl Fit {
    /// A fixed ratio, not fit on anything.
    pub fn ratio_only(chars_per_token: f64) -> Fit {
        Fit {
            chars_per_token,
            calls: 0,
        }
    }

    /// Fits `tokens ~ chars / ratio + rest` on the points with a recorded count.
    pub fn of(points: &[(u64, u64)]) -> Fit {
        let pts: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| p.1 > 0 && p.0 > 0)
            .map(|&(c, t)| (c as f64, t as f64))
            .collect();
        let n = pts.len() as f64;
        let default = Fit::ratio_only(DEFAULT_CHARS_PER_TOKEN);
        if pts.len() < 2 {
            return default;
        }
        let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
        let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        if sxx <= 0.0 {
            return default;
        }
        let mut slope = sxy / sxx;
        if my - slope * mx < 0.0 {
            // A negative rest means nothing is outside the file: fit through the origin.
            let xy: f64 = pts.iter().map(|p| p.0 * p.1).sum();
            let xx: f64 = pts.iter().map(|p| p.0 * p.0).sum();
            slope = xy / xx;
        }
        if !(slope.is_finite() && slope > 0.0) {
            return default;
        }
        Fit {
            chars_per_token: (1.0 / slope).clamp(MIN_CHARS_PER_TOKEN, MAX_CHARS_PER_TOKEN),
            calls: pts.len(),
        }
    }

    /// The ratio of all the points together, with no rest: for requests that hold
    /// everything the API counted (a live agent's, whose system prompt and tools are in
    /// the record).
    pub fn through_origin(points: &[(u64, u64)]) -> Fit {
        let (mut chars, mut tokens, mut calls) = (0u64, 0u64, 0usize);
        for &(c, t) in points.iter().filter(|p| p.0 > 0 && p.1 > 0) {
            chars += c;
            tokens += t;
            calls += 1;
        }
        if calls == 0 {
            return Fit::ratio_only(DEFAULT_CHARS_PER_TOKEN);
        }
        Fit {
            chars_per_token: (chars as f64 / tokens as f64)
                .clamp(MIN_CHARS_PER_TOKEN, MAX_CHARS_PER_TOKEN),
            calls,
        }
    }

    /// The tokens `chars` characters make under this ratio.
    pub fn tokens(&self, chars: u64) -> u64 {
        (chars as f64 / self.chars_per_token).round() as u64
    }

    pub fn describe(&self) -> String {
        if self.calls == 0 {
            format!(
                "~ estimate: {:.1} chars per token (too few calls with usage to fit one)",
                self.chars_per_token
            )
        } else {
            format!(
                "~ estimate: {:.2} chars per token, fit on {} calls' recorded usage",
                self.chars_per_token, self.calls
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constant_rest_does_not_bend_the_ratio() {
        let pts: Vec<(u64, u64)> = (1..20).map(|i| (i * 4000, i * 1000 + 5000)).collect();
        let fit = Fit::of(&pts);
        assert!((fit.chars_per_token - 4.0).abs() < 1e-9, "{fit:?}");
        assert_eq!(fit.calls, 19);
        assert_eq!(fit.tokens(4000), 1000);
    }

    #[test]
    fn too_few_points_take_the_default() {
        assert_eq!(Fit::of(&[(100, 50)]).calls, 0);
        assert_eq!(Fit::of(&[(100, 50), (100, 60)]).calls, 0);
        let wild = Fit::of(&[(10, 1000), (20, 5000)]);
        assert_eq!(wild.chars_per_token, MIN_CHARS_PER_TOKEN);
    }
}
