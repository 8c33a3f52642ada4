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

/// An outcome that calls for an exit status of its own (`status` of a failed or errored
/// submission): its message goes to stderr, its code is the process's.
#[derive(Debug)]
pub struct Exit {
    pub code: u8,
    pub message: String,
}

impl Exit {
    pub fn new(code: u8, message: String) -> Exit {
        Exit { code, message }
    }
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Exit {}

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

/// A new, empty folder for one run's output, `<data home>/<kind>/<prefix><UTC time>`
/// (`runtime::data_home`, e.g. `~/.local/share/physiojudge/demo/20260131T120005Z`), with
/// `-2`, `-3`, … appended when a run in the same second took the name. Creating it is what
/// reserves it, so concurrent runs never share one.
pub fn run_folder(kind: &str, prefix: &str) -> anyhow::Result<std::path::PathBuf> {
    let parent = runtime::data_home().join(kind);
    std::fs::create_dir_all(&parent)
        .map_err(|e| anyhow::anyhow!("creating {}: {e} (or pass --out)", parent.display()))?;
    let stamp = utc_stamp(std::time::SystemTime::now());
    for n in 1..10_000 {
        let name = match n {
            1 => format!("{prefix}{stamp}"),
            _ => format!("{prefix}{stamp}-{n}"),
        };
        let dir = parent.join(name);
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => anyhow::bail!("creating {}: {e} (or pass --out)", dir.display()),
        }
    }
    anyhow::bail!(
        "no free folder name {prefix}{stamp}-N in {}",
        parent.display()
    )
}

/// `t` as the ISO 8601 basic UTC form `YYYYMMDDTHHMMSSZ` (a file name without colons).
fn utc_stamp(t: std::time::SystemTime) -> String {
    utc_stamp_secs(
        t.duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    )
}

/// [`utc_stamp`] of a time in seconds since the Unix epoch.
pub fn utc_stamp_secs(secs: u64) -> String {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's civil_from_days).
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_stamps() {
        let at = |s| utc_stamp(std::time::UNIX_EPOCH + std::time::Duration::from_secs(s));
        assert_eq!(at(0), "19700101T000000Z");
        assert_eq!(at(951_782_400), "20000229T000000Z");
        assert_eq!(at(1_709_251_199), "20240229T235959Z");
        assert_eq!(at(1_767_225_600), "20260101T000000Z");
        assert_eq!(at(4_107_542_400), "21000301T000000Z");
    }

    #[test]
    fn csv_quoting() {
        assert_eq!(csv_field("(AFIB"), "(AFIB");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
