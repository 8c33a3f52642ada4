//! How a program serves as its own sandbox init: the inside of a run is this very
//! binary, started again with [`INIT_ARG`] as its first argument (so nothing else needs
//! installing beside it).
//!
//! A binary that does this calls [`hook`] first thing in `main` — before it parses
//! arguments, starts threads or installs signal handlers — and passes [`this_program`]
//! as the [`crate::InitProgram`] of its runs. At exit it calls [`crate::shutdown`] to
//! remove the cgroups made ahead for runs that never came.

use crate::InitProgram;

/// The first argument that makes a binary the inside of a sandbox run (not a user
/// command: keep it out of help texts).
pub const INIT_ARG: &str = "__sandbox-init";

/// If this process was started as the inside of a sandbox run, becomes it (and never
/// returns); otherwise does nothing.
pub fn hook() {
    if std::env::args_os().nth(1).is_some_and(|a| a == INIT_ARG) {
        crate::init::main();
    }
}

/// This binary, started with [`INIT_ARG`], as the init program of sandbox runs.
pub fn this_program() -> std::io::Result<InitProgram> {
    Ok(InitProgram {
        path: std::env::current_exe()?,
        args: vec![INIT_ARG.to_string()],
    })
}
