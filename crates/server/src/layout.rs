//! The state folder's files (docs/service.md, "HTTP API"): the server writes entries,
//! the workers write result folders, and both find them by these paths.
//!
//! ```text
//! <state>/physiojudge.sqlite3             the SQLite store (when not PostgreSQL)
//! <state>/entries/<uuid>.<zip|tar.gz|tar> each entry as uploaded (the store records
//!                                         the path relative to <state>)
//! <state>/results/<submission>/<attempt>/ a worker's result folder for an attempt:
//!                                         result.json, logs/<stage>.log,
//!                                         private/exam.log (docs/judge.md)
//! <state>/incoming/                       uploads in progress and their checks
//!                                         (`incoming/<replica>/` for a named
//!                                         replica: each clears only its own)
//! ```

use std::path::Path;

use crate::error::ServerError;

/// Entries as uploaded.
pub const ENTRIES: &str = "entries";
/// Result folders, one per attempt.
pub use dispatch::RESULTS;
/// Uploads still arriving, and the scratch folders of their checks: nothing here
/// outlives a request, so whatever a crash left is removed at start.
pub const INCOMING: &str = "incoming";

/// The result folder of an attempt: where a worker writes `judge::evaluate`'s output
/// (a remote one sends it here) and where the server reads the logs.
pub use dispatch::result_dir;

/// Makes the folders and empties `incoming` (this server's own uploads in progress).
pub(crate) fn prepare(state_dir: &Path, incoming: &Path) -> Result<(), ServerError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| ServerError::Io { path, source }
    };
    for sub in [ENTRIES, RESULTS] {
        let p = state_dir.join(sub);
        std::fs::create_dir_all(&p).map_err(io(&p))?;
    }
    let incoming = incoming.to_path_buf();
    if incoming.exists() {
        // Checks unpack untrusted archives here: remove what they left without
        // following links and however deep (the judge's own remover).
        judge::workdir::remove_tree(&incoming, None).map_err(|e| ServerError::Io {
            path: incoming.clone(),
            source: std::io::Error::other(e.to_string()),
        })?;
    }
    std::fs::create_dir_all(&incoming).map_err(io(&incoming))?;
    Ok(())
}
