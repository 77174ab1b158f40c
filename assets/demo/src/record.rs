//! An orders row: id, customer, item, quantity, unit price in cents, country.

use crate::parser::{parse_line, ParseError};

#[derive(Debug, PartialEq, Eq)]
pub struct OrderRecord {
    pub id: u64,
    pub customer: String,
    pub item: String,
    pub quantity: u32,
    pub unit_price_cents: u64,
    pub country: String,
}

#[derive(Debug, PartialEq, Eq)]
pub enum RecordError {
    Parse(ParseError),
    FieldCount { expected: usize, found: usize },
    BadNumber { field: &'static str, value: String },
}

pub const FIELDS: usize = 6;

impl OrderRecord {
    pub fn from_line(line: &str) -> Result<OrderRecord, RecordError> {
        let f = parse_line(line).map_err(RecordError::Parse)?;
        if f.len() != FIELDS {
            return Err(RecordError::FieldCount { expected: FIELDS, found: f.len() });
        }
        let number = |field: &'static str, value: &str| {
            value.trim().parse::<u64>().map_err(|_| RecordError::BadNumber {
                field,
                value: value.to_string(),
            })
        };
        Ok(OrderRecord {
            id: number("id", &f[0])?,
            customer: f[1].clone(),
            item: f[2].clone(),
            quantity: number("quantity", &f[3])? as u32,
            unit_price_cents: number("unit_price_cents", &f[4])?,
            country: f[5].clone(),
        })
    }
}
