//! Settings switched live and branches continued, on the real agent and the scripted tour
//! driven through `App::update`: `/config`'s strategy row, the event row that says from
//! which call the new settings apply, and "continue from call N".

mod continue_from;
mod harness;
mod switch;
