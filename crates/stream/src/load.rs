//! Blocks from disk, in the organiser layout: one folder per subject, one `.npy` file per
//! block (`S01/block_1.npy`, `S01/block_2.npy`, …), each a 2-D array of rows × samples
//! with the trigger row last.
//!
//! Values are streamed as `f32` (the protocol's type): a float64 file is rounded to the
//! nearest `f32`, and every value must be finite, so an algorithm never receives a NaN
//! the organiser did not see. Blocks of a subject play in the natural order of their
//! names (`block_2` before `block_10`); subjects are listed in the same order and numbered
//! from 1 (the `personID`), as the contest's 2022 loader does.

use std::path::{Path, PathBuf};

use crate::block::{Block, BlockError};
use crate::session::SubjectBlocks;

/// What is wrong with the data on disk: the file or folder and the problem.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Npy(#[from] formats::npy::NpyError),
    #[error("{file}: a block must be a 2-D array (rows × samples), found shape {shape:?}")]
    Shape { file: String, shape: Vec<usize> },
    #[error("{file}: row {row}, sample {sample}: {value:?} is not a finite number")]
    NotFinite {
        file: String,
        row: usize,
        sample: usize,
        value: f64,
    },
    #[error("{file}: row {row}, sample {sample}: {value:?} is beyond the range of float32")]
    OutOfRange {
        file: String,
        row: usize,
        sample: usize,
        value: f64,
    },
    #[error(transparent)]
    Block(#[from] BlockError),
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: no block (.npy file) in this subject folder")]
    NoBlocks { path: String },
    #[error("{path}: no subject folder")]
    NoSubjects { path: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> LoadError + '_ {
    move |source| LoadError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// The block in the `.npy` file at `path`, called `name` in logs and errors.
pub fn block(path: &Path, name: &str) -> Result<Block, LoadError> {
    let array = formats::npy::read(path)?;
    let file = path.display().to_string();
    let [rows, samples] = array.shape[..] else {
        return Err(LoadError::Shape {
            file,
            shape: array.shape,
        });
    };
    let mut data = Vec::with_capacity(array.data.len());
    for (i, &v) in array.data.iter().enumerate() {
        let (row, sample) = (i / samples.max(1), i % samples.max(1));
        if !v.is_finite() {
            return Err(LoadError::NotFinite {
                file,
                row,
                sample,
                value: v,
            });
        }
        let f = v as f32;
        if !f.is_finite() {
            return Err(LoadError::OutOfRange {
                file,
                row,
                sample,
                value: v,
            });
        }
        data.push(f);
    }
    Ok(Block::new(name, rows, samples, data)?)
}

/// Sorts names naturally: runs of digits compare as numbers (`block_2` < `block_10`).
fn natural_key(name: &str) -> Vec<(String, u128)> {
    let mut key = Vec::new();
    let mut text = String::new();
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            let mut n: u128 = c.to_digit(10).map_or(0, u128::from);
            while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
                n = n.saturating_mul(10).saturating_add(u128::from(d));
                chars.next();
            }
            key.push((std::mem::take(&mut text), n));
        } else {
            text.push(c);
        }
    }
    key.push((text, 0));
    key
}

fn sorted_entries(dir: &Path, want_dirs: bool) -> Result<Vec<(String, PathBuf)>, LoadError> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        // Links are followed: the data folder is the organiser's, who may link it in.
        let kind = std::fs::metadata(&path).map_err(io(&path))?.file_type();
        let wanted = match want_dirs {
            true => kind.is_dir() && !name.starts_with('.'),
            false => kind.is_file() && name.ends_with(".npy"),
        };
        if wanted {
            found.push((name, path));
        }
    }
    found.sort_by(|a, b| {
        natural_key(&a.0)
            .cmp(&natural_key(&b.0))
            .then(a.0.cmp(&b.0))
    });
    Ok(found)
}

/// The blocks of the subject folder `dir`, in play order.
pub fn subject(dir: &Path, person_id: u32) -> Result<SubjectBlocks, LoadError> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string());
    let files = sorted_entries(dir, false)?;
    if files.is_empty() {
        return Err(LoadError::NoBlocks {
            path: dir.display().to_string(),
        });
    }
    let blocks = files
        .iter()
        .map(|(file, path)| {
            let stem = file.strip_suffix(".npy").unwrap_or(file);
            block(path, &format!("{name}/{stem}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(SubjectBlocks {
        person_id,
        name,
        blocks,
    })
}

/// The subject folders directly under `dir` (hidden ones aside), in natural order.
pub fn subject_dirs(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    Ok(sorted_entries(dir, true)?
        .into_iter()
        .map(|(_, p)| p)
        .collect())
}

/// Every subject under `dir`, numbered from 1 in order.
pub fn subjects(dir: &Path) -> Result<Vec<SubjectBlocks>, LoadError> {
    let dirs = subject_dirs(dir)?;
    if dirs.is_empty() {
        return Err(LoadError::NoSubjects {
            path: dir.display().to_string(),
        });
    }
    dirs.iter()
        .enumerate()
        .map(|(i, d)| subject(d, i as u32 + 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, rel: &str, rows: usize, cols: usize, data: &[f32]) {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        formats::npy::write_f32(&path, rows, cols, data).unwrap();
    }

    /// Two EEG rows and a trigger row holding one whole trial.
    fn trial_block() -> Vec<f32> {
        let cols = 40;
        let mut d = vec![0.5f32; 3 * cols];
        let trig = &mut d[2 * cols..];
        trig.fill(0.0);
        trig[0] = 105.0;
        for k in 0..3 {
            trig[2 + k] = (k + 1) as f32;
        }
        trig[6] = 200.0;
        trig[30] = 241.0;
        d
    }

    #[test]
    fn natural_order_and_numbering() {
        let tmp = tempfile::tempdir().unwrap();
        let d = trial_block();
        for rel in [
            "S10/block_1.npy",
            "S2/block_10.npy",
            "S2/block_2.npy",
            "S2/notes.txt",
        ] {
            write(tmp.path(), rel, 3, 40, &d);
        }
        std::fs::create_dir(tmp.path().join(".hidden")).unwrap();
        // Linked folders and blocks count as what they point to.
        let elsewhere = tempfile::tempdir().unwrap();
        write(elsewhere.path(), "S3/block_1.npy", 3, 40, &d);
        std::os::unix::fs::symlink(elsewhere.path().join("S3"), tmp.path().join("S3")).unwrap();
        let subjects = subjects(tmp.path()).unwrap();
        let names: Vec<_> = subjects
            .iter()
            .map(|s| (s.person_id, s.name.as_str(), s.blocks.len()))
            .collect();
        assert_eq!(names, [(1, "S2", 2), (2, "S3", 1), (3, "S10", 1)]);
        let blocks: Vec<_> = subjects[0].blocks.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(blocks, ["S2/block_2", "S2/block_10"]);
        assert_eq!(subjects[0].blocks[0].row(0)[0], 0.5);
        assert_eq!(subjects[0].blocks[0].trials().unwrap()[0].code, 105);
    }

    #[test]
    fn bad_data_is_named() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("x.npy");
        formats::npy::write_f32(&path, 1, 3, &[1.0, 2.0, 3.0]).unwrap();
        let e = block(&path, "x").unwrap_err().to_string();
        assert!(e.contains("at least one EEG row"), "{e}");

        let mut d = trial_block();
        d[41] = f32::NAN;
        formats::npy::write_f32(&path, 3, 40, &d).unwrap();
        let e = block(&path, "x").unwrap_err().to_string();
        assert!(
            e.contains("x.npy: row 1, sample 1: NaN is not a finite"),
            "{e}"
        );

        let empty = tmp.path().join("S1");
        std::fs::create_dir(&empty).unwrap();
        let e = subjects(tmp.path()).unwrap_err().to_string();
        assert!(e.contains("S1: no block"), "{e}");
        let e = subjects(&empty).unwrap_err().to_string();
        assert!(e.contains("no subject folder"), "{e}");
    }

    #[test]
    fn float64_is_rounded_and_range_checked() {
        // A hand-made float64 file: version 1.0 header, shape (2, 1).
        let f64_file = |values: [f64; 2]| {
            let header = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 1), }";
            let mut h = header.to_string();
            while !(10 + h.len() + 1).is_multiple_of(64) {
                h.push(' ');
            }
            h.push('\n');
            let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
            bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
            bytes.extend_from_slice(h.as_bytes());
            values
                .iter()
                .for_each(|v| bytes.extend_from_slice(&v.to_le_bytes()));
            bytes
        };
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("b.npy");
        std::fs::write(&path, f64_file([0.1, 7.0])).unwrap();
        let b = block(&path, "b").unwrap();
        assert_eq!((b.row(0)[0], b.triggers()[0]), (0.1f32, 7.0));
        std::fs::write(&path, f64_file([0.1, 1e300])).unwrap();
        let e = block(&path, "b").unwrap_err().to_string();
        assert!(
            e.contains("row 1, sample 0: 1e300 is beyond the range of float32"),
            "{e}"
        );
    }
}
