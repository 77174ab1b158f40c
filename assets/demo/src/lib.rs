//! csvlite: split CSV lines into fields and build order records from them.

pub mod parser;
pub mod record;

pub use parser::{parse_line, ParseError};
pub use record::OrderRecord;
