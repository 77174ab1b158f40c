//! Where the plot's labels go so that none covers another or a bar: a label's box is
//! estimated from its text (the page's fonts are the reader's, so the estimate is a
//! generous one), a spike's value goes in the first row above the plot where it is clear
//! of the others, and a limit's label in the first place along its segment, above or below
//! its line, that no bar and no other label takes; failing that, in a row above the plot.

/// Width of a char as a share of the font size: above the 0.55 of the common sans-serif
/// digits, so two boxes that do not meet here do not meet on screen.
const CHAR_WIDTH_EM: f64 = 0.62;

/// A rectangle in the SVG's coordinates (y grows downwards).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LabelBox {
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

impl LabelBox {
    pub fn overlaps(&self, o: &LabelBox) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }

    #[cfg(test)]
    pub fn shifted(&self, dy: f64) -> LabelBox {
        LabelBox {
            y0: self.y0 + dy,
            y1: self.y1 + dy,
            ..*self
        }
    }
}

/// How a label's `x` is read (`text-anchor`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    Middle,
    End,
}

impl Anchor {
    pub fn name(self) -> &'static str {
        match self {
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }

    #[cfg(test)]
    pub fn parse(s: &str) -> Anchor {
        if s == "end" {
            Anchor::End
        } else {
            Anchor::Middle
        }
    }
}

/// The box `text` takes at `font_px` (digits and lower case reach 0.8 of it above the
/// baseline, a comma a quarter below), drawn at (`x`, `baseline`) with `anchor`.
pub fn text_box(x: f64, baseline: f64, text: &str, font_px: f64, anchor: Anchor) -> LabelBox {
    let w = text.chars().count() as f64 * font_px * CHAR_WIDTH_EM;
    let x0 = match anchor {
        Anchor::Middle => x - w / 2.0,
        Anchor::End => x - w,
    };
    LabelBox {
        x0,
        y0: baseline - font_px * 0.8,
        x1: x0 + w,
        y1: baseline + font_px * 0.25,
    }
}

/// Whether `b` meets none of `taken`.
pub fn clear(b: &LabelBox, taken: &[LabelBox]) -> bool {
    !taken.iter().any(|t| t.overlaps(b))
}

/// The first of `rows` rows (row 0 lowest) where a label centred at `x` with `text` is
/// clear of the labels already in it; None when all are taken. `row_box(row)` gives the
/// box of the label in that row.
pub fn free_row(
    rows: usize,
    taken: &[(usize, LabelBox)],
    row_box: impl Fn(usize) -> LabelBox,
) -> Option<usize> {
    (0..rows).find(|&r| {
        let b = row_box(r);
        taken.iter().all(|(tr, tb)| *tr != r || !tb.overlaps(&b))
    })
}

/// `233k`, `1.2M`: a value short enough for a crowded row.
pub fn short_number(v: usize) -> String {
    match v {
        0..=9_999 => v.to_string(),
        10_000..=999_999 => format!("{}k", v / 1_000),
        _ => format!("{:.1}M", v as f64 / 1_000_000.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_that_share_no_area_do_not_overlap() {
        let a = text_box(100.0, 20.0, "233,486", 11.0, Anchor::Middle);
        let b = text_box(121.0, 20.0, "466,000", 11.0, Anchor::Middle);
        assert!(a.overlaps(&b), "two 7-char labels 21 px apart meet");
        assert!(!a.overlaps(&b.shifted(-13.0)), "a row up they do not");
        assert_eq!(
            free_row(3, &[(0, a)], |r| b.shifted(-13.0 * r as f64)),
            Some(1)
        );
        assert_eq!(short_number(233_486), "233k");
        assert_eq!(short_number(2_334_860), "2.3M");
    }
}
