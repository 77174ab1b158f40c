//! The id of a job the screen waits for, shared by the jobs (`work`) and the sessions
//! browser that asks for some of them; a leaf so neither imports the other for it.

/// Identifies one request for a job the screen waits for; a result whose id is no longer
/// awaited (the user moved on) is dropped.
pub type JobId = u64;
