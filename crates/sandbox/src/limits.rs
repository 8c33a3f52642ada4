//! Resource limits of one run.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What one run may use. The defaults suit one record of a typical challenge entry in
/// Python: generous enough for numpy/scipy start-up, small enough that a runaway entry
/// costs little.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// CPU time of all processes together.
    pub cpu_time: Duration,
    /// Wall-clock time, a backstop for programs that sleep or block.
    pub wall_time: Duration,
    /// Memory of all processes together (cgroup), swap excluded.
    pub memory_bytes: u64,
    /// Processes and threads alive at once.
    pub pids: u64,
    /// Largest file the program may write.
    pub file_size_bytes: u64,
    /// Open file descriptors per process.
    pub open_files: u64,
    /// Bytes kept of stdout and of stderr each; the rest is discarded and flagged.
    pub output_bytes: u64,
    /// Size of the private `/tmp`.
    pub tmp_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            cpu_time: Duration::from_secs(60),
            wall_time: Duration::from_secs(120),
            memory_bytes: 2 << 30,
            pids: 64,
            file_size_bytes: 256 << 20,
            open_files: 256,
            output_bytes: 1 << 20,
            tmp_bytes: 256 << 20,
        }
    }
}
