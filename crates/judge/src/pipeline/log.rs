//! A stage's log: capped, marked when cut, every line of the judge's own escaped.

use std::path::Path;

use super::io;
use crate::{JudgeError, shown};

/// Each stage's log is capped here (as in the PhysioNet sandbox).
pub const LOG_CAP: usize = 1 << 20;

/// A log capped at [`LOG_CAP`], marked when cut.
pub(super) struct StageLog {
    buf: Vec<u8>,
    cut: bool,
}

impl StageLog {
    pub(super) fn new() -> StageLog {
        StageLog {
            buf: Vec::new(),
            cut: false,
        }
    }

    pub(super) fn push(&mut self, bytes: &[u8]) {
        let room = LOG_CAP.saturating_sub(self.buf.len());
        if bytes.len() > room {
            self.cut = true;
        }
        self.buf.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// One line of the judge's own, which may quote what the entry chose (names,
    /// requirement lines, messages): shown escaped and capped (`crate::shown`).
    pub(super) fn line(&mut self, text: &str) {
        self.push(format!("{}\n", shown::line(text)).as_bytes());
    }

    pub(super) fn run(&mut self, what: &str, run: &sandbox::Run) {
        let r = &run.result;
        self.line(&format!(
            "== {what}: {}{} (cpu {:.3} s, wall {:.3} s, peak memory {})",
            r.verdict,
            r.message
                .as_ref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default(),
            r.cpu_time_s,
            r.wall_time_s,
            r.peak_memory_bytes
                .map_or("unknown".into(), |b| format!("{} KiB", b / 1024))
        ));
        for (name, bytes) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
            if !bytes.is_empty() {
                self.line(&format!("-- {name}"));
                // At most the log's cap is shown: escape no more than that.
                let bytes = &bytes[..bytes.len().min(LOG_CAP)];
                self.push(shown::block(bytes).as_bytes());
                if !bytes.ends_with(b"\n") {
                    self.push(b"\n");
                }
            }
        }
    }

    pub(super) fn save(mut self, path: &Path) -> Result<(), JudgeError> {
        if self.cut {
            self.buf.extend_from_slice(b"\n[log cut at 1 MiB]\n");
        }
        std::fs::write(path, &self.buf).map_err(|e| io(path, e))
    }
}
