//! Small helpers for what commands print.

use std::io;

/// A usage error found after argument parsing (an option value that contradicts
/// another): reported like clap's errors, with exit code 2.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Whether an error is (or wraps) a write to a closed pipe.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
pub fn csv_field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\"")).into()
    } else {
        s.into()
    }
}

/// `<prefix>-<n>` in the current folder for the smallest n not taken yet.
pub fn fresh_folder(prefix: &str) -> anyhow::Result<std::path::PathBuf> {
    (1..10_000)
        .map(|n| std::path::PathBuf::from(format!("{prefix}-{n}")))
        .find(|p| !p.exists())
        .ok_or_else(|| anyhow::anyhow!("no free folder name {prefix}-N here"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quoting() {
        assert_eq!(csv_field("(AFIB"), "(AFIB");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
