//! Splits one CSV line into fields, following RFC 4180 quoting:
//! a field may be wrapped in double quotes, a quoted field may contain commas,
//! and a double quote inside a quoted field is written twice ("").

use std::fmt;

#[derive(Debug, PartialEq, Eq)]
pub enum ParseError {
    UnterminatedQuote,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::UnterminatedQuote => write!(f, "unterminated quoted field"),
        }
    }
}

pub fn parse_line(line: &str) -> Result<Vec<String>, ParseError> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut in_quotes = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if in_quotes => {
                in_quotes = false;
            }
            '"' if field.is_empty() => in_quotes = true,
            ',' if !in_quotes => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    if in_quotes {
        return Err(ParseError::UnterminatedQuote);
    }
    fields.push(field);
    Ok(fields)
}
