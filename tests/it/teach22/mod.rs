//! Issue 22, "Teaching": the numbers that differ from the legend say why, the keys and the
//! legend a class needs, one message numbering, diff rows that keep their size column, and
//! the browser's replay of a recording that honours its events.

mod browser_replay;
mod diff_width;
mod export_plot;
mod keys_and_legend;
mod numbering;
mod numbers_explained;
