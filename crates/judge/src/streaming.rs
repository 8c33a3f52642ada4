//! The stream interface (the P300 speller): the entry's `config.toml`, our Python client
//! package, and one streaming session of a split's subjects through the sandbox.
//!
//! The entry is the contest's layout: `AlgorithmImplement/` and `config.toml`. By
//! default our client package (`entries/p300client`, shown read-only at `/judge`) runs
//! it: `python3 -m physiojudge_stream.train /entry /data /model` in the train stage (the
//! class's `train(data_dir, model_dir)`, if it has one) and
//! `python3 -m physiojudge_stream.run /entry /model` for a session, speaking the
//! protocol of docs/stream.md on the process's stdin and stdout. An entry in another
//! language names its own commands in `config.toml` (`command`, `train`).

use std::path::Path;

use serde::Deserialize;

/// Our Python client package, written to `/judge/physiojudge_stream/` for every stream
/// entry (so that the protocol on the wire is always ours, whatever an entry ships).
pub const CLIENT: [(&str, &str); 4] = [
    (
        "physiojudge_stream/__init__.py",
        include_str!("../../../entries/p300client/physiojudge_stream/__init__.py"),
    ),
    (
        "physiojudge_stream/protocol.py",
        include_str!("../../../entries/p300client/physiojudge_stream/protocol.py"),
    ),
    (
        "physiojudge_stream/run.py",
        include_str!("../../../entries/p300client/physiojudge_stream/run.py"),
    ),
    (
        "physiojudge_stream/train.py",
        include_str!("../../../entries/p300client/physiojudge_stream/train.py"),
    ),
];

/// What an entry's `config.toml` may say. `unitImage` (the contest's compute image) is
/// accepted and ignored: every entry runs on the judge's runtime.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntryConfig {
    #[serde(rename = "unitImage", default)]
    pub unit_image: Option<String>,
    /// The session's command (run in `/entry`), instead of our Python client.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// The train stage's command (run in `/entry`), instead of our Python client's.
    #[serde(default)]
    pub train: Option<Vec<String>>,
}

impl EntryConfig {
    /// Reads `config.toml`; the error says what is wrong (the caller names the file).
    pub fn parse(text: &str) -> Result<EntryConfig, String> {
        let c: EntryConfig = toml::from_str(text).map_err(|e| {
            let mut m = e.message().to_string();
            if let Some(span) = e.span() {
                let line = text.as_bytes()[..span.start.min(text.len())]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
                    + 1;
                m = format!("line {line}: {m}");
            }
            m
        })?;
        for (key, argv) in [("command", &c.command), ("train", &c.train)] {
            if let Some(argv) = argv {
                if argv.is_empty() || argv[0].is_empty() {
                    return Err(format!("{key} is empty: it must name a program"));
                }
                if argv.iter().any(|a| a.contains('\0')) {
                    return Err(format!("{key}: an argument holds a NUL byte"));
                }
            }
        }
        Ok(c)
    }

    /// The session's command.
    pub fn run_argv(&self) -> Vec<String> {
        self.command.clone().unwrap_or_else(|| {
            [
                "python3",
                "-m",
                "physiojudge_stream.run",
                "/entry",
                "/model",
            ]
            .map(String::from)
            .to_vec()
        })
    }

    /// The train stage's command.
    pub fn train_argv(&self) -> Vec<String> {
        self.train.clone().unwrap_or_else(|| {
            [
                "python3",
                "-m",
                "physiojudge_stream.train",
                "/entry",
                "/data",
                "/model",
            ]
            .map(String::from)
            .to_vec()
        })
    }
}

/// Writes [`CLIENT`] under `dir`.
pub fn write_client(dir: &Path) -> std::io::Result<()> {
    for (name, text) in CLIENT {
        let to = dir.join(name);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(to, text)?;
    }
    Ok(())
}

/// The CPU a session's algorithm and its server share: one of this process's allowed
/// CPUs, chosen by slot so that concurrent sessions spread out.
pub fn session_cpu(slot: u32) -> Option<usize> {
    let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).ok()?;
    let allowed: Vec<usize> = (0..nix::sched::CpuSet::count())
        .filter(|&c| set.is_set(c).unwrap_or(false))
        .collect();
    allowed.get(slot as usize % allowed.len().max(1)).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_defaults_commands_and_errors() {
        let c = EntryConfig::parse("unitImage = \"python:3.9\"\n").unwrap();
        assert_eq!(
            c.run_argv()[..3],
            ["python3", "-m", "physiojudge_stream.run"]
        );
        assert_eq!(c.train_argv()[2], "physiojudge_stream.train");
        let c = EntryConfig::parse("command = [\"./speller\", \"--fast\"]\n").unwrap();
        assert_eq!(c.run_argv(), ["./speller", "--fast"]);
        let e = EntryConfig::parse("unitImage = \"x\"\ncomand = [\"a\"]\n").unwrap_err();
        assert!(e.starts_with("line 2: unknown field `comand`"), "{e}");
        let e = EntryConfig::parse("command = []\n").unwrap_err();
        assert!(e.contains("command is empty"), "{e}");
        let e = EntryConfig::parse("train = \"python3 train.py\"\n").unwrap_err();
        assert!(e.contains("line 1"), "{e}");
    }

    #[test]
    fn the_client_package_is_complete() {
        let tmp = tempfile::tempdir().unwrap();
        write_client(tmp.path()).unwrap();
        for f in ["__init__.py", "protocol.py", "run.py", "train.py"] {
            let p = tmp.path().join("physiojudge_stream").join(f);
            assert!(std::fs::metadata(&p).unwrap().len() > 0, "{}", p.display());
        }
    }

    #[test]
    fn a_session_cpu_is_an_allowed_one() {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let a = session_cpu(0).unwrap();
        assert!(a < nix::sched::CpuSet::count());
        if cpus > 1 {
            assert_ne!(session_cpu(0), session_cpu(1));
        }
    }
}
