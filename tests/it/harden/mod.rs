//! Issue 8, "trustworthy under faults, hostile servers, hostile workspaces and bad input":
//! one file per concern, each test failing on the code before its fix. Their helpers live in
//! `crate::common` (`scratch`, `models`, `stub_server`, `pty`).

mod agent_panic;
mod browser_rows;
mod closed_stdout;
mod embedded_demo;
#[cfg(target_os = "linux")]
mod environ;
#[cfg(target_os = "linux")]
mod escapees;
mod exit_codes;
mod pipeline_stream;
mod secrets;
mod session_files;
mod session_fuzz;
#[cfg(target_os = "linux")]
mod session_memory;
mod settings;
mod signals;
mod special_files;
mod stale_temps;
mod store_links;
mod terminal_escapes;
