//! Python's text forms of JSON values, to the character: the lesson's unit of size.
//!
//! The lesson measures a history as `len(str(messages))` and writes transcripts and the
//! summarizer's input with `json.dumps`; ctxlab must count and write the same text (see
//! docs/pipeline.md, "Units"). This module knows only `serde_json` values: it is a leaf that
//! `message` and `compact` both build on, and it must never import either.

mod counts;
pub mod json;
mod printable;
pub(crate) mod printable_table;
pub mod str_repr;

pub use json::{
    ascii_json, ascii_json_map, ascii_json_maps_prefix, py_strip, summary_literal, unicode_json,
    unicode_json_map, unicode_json_map_len, unicode_json_maps, write_ascii_json_map,
};
pub use printable::is_printable;
pub use str_repr::{
    py_float_repr, py_list_len, py_number, py_repr, py_str_len, py_str_list, py_value_len,
};
