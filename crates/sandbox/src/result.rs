//! The result record of one run.

use serde::{Deserialize, Serialize};

/// Why a run ended. Exactly one applies; when several limits are hit, the first in this
/// order wins: internal error, forbidden syscall, stopped by the caller, memory, CPU
/// time, wall time, output, then the program's own ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Exited with status 0 within every limit.
    Ok,
    /// Exited with a non-zero status.
    RuntimeError,
    /// Killed by a signal that no limit explains.
    Signalled,
    /// Used more CPU time than allowed.
    TimeLimit,
    /// Ran longer (wall clock) than allowed.
    WallTimeLimit,
    /// Needed more memory than allowed (the cgroup's OOM killer fired).
    MemoryLimit,
    /// Wrote more to stdout/stderr (or to a file) than allowed.
    OutputLimit,
    /// Made a system call the filter forbids.
    ForbiddenSyscall,
    /// The sandbox failed; not the program's fault.
    InternalError,
    /// The caller stopped the run (`RunConfig::stop`); not the program's doing.
    Stopped,
}

impl Verdict {
    /// Whether the program, not the sandbox, is responsible for this ending.
    pub fn charged_to_entry(self) -> bool {
        !matches!(self, Verdict::InternalError | Verdict::Stopped)
    }
}

impl Verdict {
    /// The name used in the result record.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::RuntimeError => "runtime_error",
            Verdict::Signalled => "signalled",
            Verdict::TimeLimit => "time_limit",
            Verdict::WallTimeLimit => "wall_time_limit",
            Verdict::MemoryLimit => "memory_limit",
            Verdict::OutputLimit => "output_limit",
            Verdict::ForbiddenSyscall => "forbidden_syscall",
            Verdict::InternalError => "internal_error",
            Verdict::Stopped => "stopped",
        }
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The record of one run: one flat JSON object. Measurements that could not be taken are
/// `null`, never a made-up number.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub verdict: Verdict,
    /// Exit status when the program exited.
    pub exit_code: Option<i32>,
    /// Terminating signal when it was killed.
    pub signal: Option<i32>,
    /// CPU time of every process of the run (user + system), seconds.
    pub cpu_time_s: f64,
    /// Wall-clock time from start to the end of the last process, seconds.
    pub wall_time_s: f64,
    /// Peak memory of the whole run (cgroup), bytes.
    pub peak_memory_bytes: Option<u64>,
    /// User-space instructions, where a hardware counter exists.
    pub instructions: Option<u64>,
    pub stdout_bytes: u64,
    pub stderr_bytes: u64,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// A human explanation for anything but `ok` (which limit, which syscall, what
    /// failed inside the sandbox).
    pub message: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_is_one_flat_object_with_snake_case_verdicts() {
        let r = RunResult {
            verdict: Verdict::WallTimeLimit,
            exit_code: None,
            signal: Some(9),
            cpu_time_s: 0.001,
            wall_time_s: 1.0,
            peak_memory_bytes: None,
            instructions: None,
            stdout_bytes: 0,
            stderr_bytes: 3,
            stdout_truncated: false,
            stderr_truncated: false,
            message: Some("wall time limit of 1 s".into()),
        };
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["verdict"], "wall_time_limit");
        assert!(v["instructions"].is_null());
        assert!(
            v.as_object()
                .unwrap()
                .values()
                .all(|x| !x.is_object() && !x.is_array())
        );
        assert_eq!(Verdict::ForbiddenSyscall.to_string(), "forbidden_syscall");
        // The names in the record and in text agree for every verdict.
        for v in [
            Verdict::Ok,
            Verdict::RuntimeError,
            Verdict::Signalled,
            Verdict::TimeLimit,
            Verdict::WallTimeLimit,
            Verdict::MemoryLimit,
            Verdict::OutputLimit,
            Verdict::ForbiddenSyscall,
            Verdict::InternalError,
        ] {
            assert_eq!(serde_json::to_value(v).unwrap(), v.as_str());
        }
        assert!(!Verdict::InternalError.charged_to_entry());
        let back: RunResult = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
    }
}
