//! A labelled data folder in a challenge's native layout: its items (records or
//! patients) grouped by subject, a deterministic split into training / quiz / exam, and
//! the unlabelled copy of a split that an entry gets to see.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::JudgeError;
use crate::challenge::{LabelRules, Layout, Split};

/// One record (or patient) and every file that belongs to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub id: String,
    /// Items of one subject always land in the same split.
    pub subject: String,
    /// Paths of the item's files in the data folder, sorted by name.
    pub files: Vec<PathBuf>,
}

/// A labelled data folder.
#[derive(Debug, Clone)]
pub struct Dataset {
    pub layout: Layout,
    pub dir: PathBuf,
    /// In the folder's own order (`RECORDS`, `REFERENCE.csv`, or sorted names).
    pub items: Vec<Item>,
}

/// The three sides of a split, each in the data set's order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Splits {
    pub training: Vec<Item>,
    pub quiz: Vec<Item>,
    pub exam: Vec<Item>,
}

fn io(path: &Path, e: std::io::Error) -> JudgeError {
    JudgeError::data(Some(path), e)
}

fn data(msg: String) -> JudgeError {
    JudgeError::data(None, msg)
}

/// File names in `dir`, sorted.
fn names_in(dir: &Path) -> Result<Vec<String>, JudgeError> {
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| io(dir, e))? {
        let e = e.map_err(|e| io(dir, e))?;
        if let Some(n) = e.file_name().to_str() {
            names.push(n.to_string());
        }
    }
    names.sort();
    Ok(names)
}

/// Non-empty trimmed lines of a list file (`RECORDS`).
fn list_file(path: &Path) -> Result<Vec<String>, JudgeError> {
    let text = std::fs::read_to_string(path).map_err(|e| io(path, e))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}

/// A valid item name: a plain file name stem, nothing that could walk out of a folder.
fn check_name(name: &str, source: &Path) -> Result<(), JudgeError> {
    if name.is_empty()
        || name.starts_with('.')
        || name.contains(['/', '\\', '\0'])
        || name.chars().any(char::is_control)
    {
        return Err(data(format!(
            "{}: {name:?} is not a record name",
            source.display()
        )));
    }
    Ok(())
}

impl Dataset {
    /// Reads the folder's item list and finds every item's files.
    pub fn open(layout: Layout, dir: &Path) -> Result<Dataset, JudgeError> {
        if !dir.is_dir() {
            return Err(data(format!("{}: not a folder", dir.display())));
        }
        let all = names_in(dir)?;
        let ids: Vec<String> = match layout {
            Layout::Cpsc2021 => {
                let list = dir.join("RECORDS");
                if list.is_file() {
                    list_file(&list)?
                } else {
                    stems(&all, ".hea")
                }
            }
            Layout::Cinc2017 => {
                let reference = dir.join("REFERENCE.csv");
                let text = std::fs::read_to_string(&reference).map_err(|e| io(&reference, e))?;
                score::cinc2017::parse_reference(&text, &reference.display().to_string())
                    .map_err(|e| data(e.to_string()))?
                    .into_iter()
                    .map(|(r, _)| r)
                    .collect()
            }
            Layout::Physionet2022 => stems(&all, ".txt"),
            Layout::P300 => return Dataset::open_p300(dir),
        };
        if ids.is_empty() {
            return Err(data(format!(
                "{}: no records found for the {layout:?} layout",
                dir.display()
            )));
        }
        let mut items = Vec::with_capacity(ids.len());
        let mut seen = std::collections::HashSet::new();
        for id in ids {
            check_name(&id, dir)?;
            if !seen.insert(id.clone()) {
                return Err(data(format!("{}: {id} is listed twice", dir.display())));
            }
            let (prefix, must) = match layout {
                Layout::Physionet2022 => (format!("{id}_"), format!("{id}.txt")),
                _ => (format!("{id}."), format!("{id}.hea")),
            };
            let mut files: Vec<PathBuf> = all
                .iter()
                .filter(|n| n.starts_with(&prefix) || **n == must)
                .map(|n| dir.join(n))
                .collect();
            files.sort();
            if !files.iter().any(|f| f.ends_with(&must)) {
                return Err(data(format!(
                    "{}: record {id} has no {must}",
                    dir.display()
                )));
            }
            let subject = match layout {
                // data_<subject>_<n>
                Layout::Cpsc2021 => id
                    .strip_prefix("data_")
                    .and_then(|r| r.split_once('_'))
                    .map(|(s, _)| s.to_string())
                    .unwrap_or_else(|| id.clone()),
                // CirCor: a child seen in two campaigns has two patient files, each naming
                // the other in `#Additional ID`; both are one subject (else one could train
                // and the other be examined, with the same labels).
                Layout::Physionet2022 => {
                    let txt = dir.join(&must);
                    let text = std::fs::read_to_string(&txt).map_err(|e| io(&txt, e))?;
                    let other = text
                        .lines()
                        .filter_map(|l| l.trim().strip_prefix("#Additional ID:"))
                        .map(str::trim)
                        .find(|v| !v.is_empty() && *v != "nan");
                    match other {
                        Some(o) if o < id.as_str() => o.to_string(),
                        _ => id.clone(),
                    }
                }
                _ => id.clone(),
            };
            items.push(Item { id, subject, files });
        }
        Ok(Dataset {
            layout,
            dir: dir.to_path_buf(),
            items,
        })
    }

    /// A folder per subject (its name the item and subject id), holding its `.npy`
    /// blocks; the blocks themselves are read when streamed or shown.
    fn open_p300(dir: &Path) -> Result<Dataset, JudgeError> {
        let subjects = stream::load::subject_dirs(dir).map_err(|e| data(e.to_string()))?;
        let mut items = Vec::with_capacity(subjects.len());
        for sub in subjects {
            let id = sub
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            check_name(&id, dir)?;
            let files: Vec<PathBuf> = names_in(&sub)?
                .into_iter()
                .filter(|n| n.ends_with(".npy") && !n.starts_with('.'))
                .map(|n| sub.join(n))
                .collect();
            if files.is_empty() {
                return Err(data(format!("{}: no block (.npy file)", sub.display())));
            }
            items.push(Item {
                subject: id.clone(),
                id,
                files,
            });
        }
        if items.is_empty() {
            return Err(data(format!(
                "{}: no subject folder (the P300 layout is <subject>/<block>.npy)",
                dir.display()
            )));
        }
        Ok(Dataset {
            layout: Layout::P300,
            dir: dir.to_path_buf(),
            items,
        })
    }

    /// Splits the subjects: ordered by a keyed hash of their name (so the split does not
    /// depend on file order and differs between challenges), then cut into runs whose
    /// sizes are the fractions rounded, every non-zero fraction getting at least one
    /// subject while there are enough.
    pub fn split(&self, split: &Split, key: &str) -> Result<Splits, JudgeError> {
        let mut subjects: Vec<&str> = self.items.iter().map(|i| i.subject.as_str()).collect();
        subjects.sort_unstable();
        subjects.dedup();
        let n = subjects.len();
        let wanted = [split.training, split.quiz, split.exam];
        let non_zero = wanted.iter().filter(|f| **f > 0.0).count();
        if n < non_zero {
            return Err(data(format!(
                "{}: {n} subject(s) cannot fill {non_zero} splits",
                self.dir.display()
            )));
        }
        let mut counts = wanted.map(|f| {
            if f > 0.0 {
                ((f * n as f64).round() as usize).max(1)
            } else {
                0
            }
        });
        // Rounding can over- or under-shoot by a subject or two: the exam absorbs it,
        // then the others give back, never below one.
        while counts.iter().sum::<usize>() > n {
            let i = (0..3).rev().find(|&i| counts[i] > 1).unwrap_or(2);
            counts[i] -= 1;
        }
        counts[2] += n - counts.iter().sum::<usize>();
        subjects.sort_by_key(|s| (fnv1a(key, s), *s));
        let side: BTreeMap<&str, usize> = subjects
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let i = if k < counts[0] {
                    0
                } else if k < counts[0] + counts[1] {
                    1
                } else {
                    2
                };
                (*s, i)
            })
            .collect();
        let mut out = Splits::default();
        for item in &self.items {
            let dest = match side.get(item.subject.as_str()) {
                Some(0) => &mut out.training,
                Some(1) => &mut out.quiz,
                _ => &mut out.exam,
            };
            dest.push(item.clone());
        }
        Ok(out)
    }
}

fn stems(names: &[String], ext: &str) -> Vec<String> {
    names
        .iter()
        .filter_map(|n| n.strip_suffix(ext))
        .filter(|s| !s.is_empty() && !s.starts_with('.'))
        .map(str::to_string)
        .collect()
}

/// FNV-1a over `key`, a separator and `s`: stable across platforms and releases
/// (unlike `DefaultHasher`), which a published split needs.
fn fnv1a(key: &str, s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes().chain([0u8]).chain(s.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// An item's files as an entry may see them: with `rules`, withheld files left out and
/// label lines stripped (quiz and exam); without, whole (a train stage's data). Each is
/// (file name, content).
pub fn shown_files(
    item: &Item,
    rules: Option<&LabelRules>,
) -> Result<Vec<(String, Vec<u8>)>, JudgeError> {
    let mut shown = Vec::with_capacity(item.files.len());
    for src in &item.files {
        let Some(name) = src.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if let Some(r) = rules
            && r.withhold.iter().any(|w| name.ends_with(w.as_str()))
        {
            continue;
        }
        let raw = std::fs::read(src).map_err(|e| io(src, e))?;
        let strip = rules.and_then(|r| r.strip.iter().find(|s| name.ends_with(&s.suffix)));
        let content = match strip {
            Some(rule) => strip_lines(&raw, &rule.prefixes),
            None => raw,
        };
        shown.push((name.to_string(), content));
    }
    Ok(shown)
}

/// Writes `items` as [`shown_files`] gives them into `dest` (which must exist), with a
/// `RECORDS` list for layouts that have one; P300 subjects each in their own folder.
pub fn materialise(
    layout: Layout,
    items: &[Item],
    dest: &Path,
    rules: Option<&LabelRules>,
) -> Result<(), JudgeError> {
    for item in items {
        let folder = match layout {
            Layout::P300 => {
                let f = dest.join(&item.id);
                std::fs::create_dir_all(&f).map_err(|e| io(&f, e))?;
                f
            }
            _ => dest.to_path_buf(),
        };
        for (name, content) in shown_files(item, rules)? {
            let to = folder.join(name);
            std::fs::write(&to, content).map_err(|e| io(&to, e))?;
        }
    }
    if matches!(layout, Layout::Cpsc2021 | Layout::Cinc2017) {
        let list: String = items.iter().map(|i| format!("{}\n", i.id)).collect();
        let to = dest.join("RECORDS");
        std::fs::write(&to, &list).map_err(|e| io(&to, e))?;
    }
    Ok(())
}

/// Drops the lines that start (after blanks) with one of `prefixes`, keeping every other
/// byte as it was (line endings included).
pub fn strip_lines(raw: &[u8], prefixes: &[String]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
    for line in raw.split_inclusive(|&b| b == b'\n') {
        let body = line
            .iter()
            .position(|b| !b" \t".contains(b))
            .map_or(&line[line.len()..], |p| &line[p..]);
        if !prefixes.iter().any(|p| body.starts_with(p.as_bytes())) {
            out.extend_from_slice(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::challenge::Challenge;

    fn shared(test: &str, sub: &str) -> Option<PathBuf> {
        testkit::shared_data(test).map(|d| d.join(sub))
    }

    #[test]
    fn strip_keeps_line_endings_and_other_lines() {
        let raw = b"a 1\r\n# class\r\n  #indented\nb\n#last";
        assert_eq!(strip_lines(raw, &["#".into()]), b"a 1\r\nb\n");
        assert_eq!(strip_lines(b"", &["#".into()]), b"");
    }

    #[test]
    fn split_is_deterministic_complete_and_keeps_subjects_together() {
        let items: Vec<Item> = (0..40)
            .map(|i| Item {
                id: format!("data_{}_{}", i / 4, i % 4),
                subject: format!("{}", i / 4),
                files: vec![],
            })
            .collect();
        let d = Dataset {
            layout: Layout::Cpsc2021,
            dir: PathBuf::from("x"),
            items,
        };
        let split = Split {
            training: 0.2,
            quiz: 0.3,
            exam: 0.5,
        };
        let a = d.split(&split, "k").unwrap();
        assert_eq!(a, d.split(&split, "k").unwrap());
        assert_ne!(a, d.split(&split, "other").unwrap());
        assert_eq!(a.training.len() + a.quiz.len() + a.exam.len(), 40);
        assert_eq!((a.training.len(), a.quiz.len(), a.exam.len()), (8, 12, 20));
        for (x, y) in [
            (&a.training, &a.quiz),
            (&a.quiz, &a.exam),
            (&a.training, &a.exam),
        ] {
            assert!(x.iter().all(|i| y.iter().all(|j| i.subject != j.subject)));
        }
        // Too few subjects for three sides: a clear error.
        let two = Dataset {
            items: d.items[..8].to_vec(),
            ..d.clone()
        };
        assert!(two.split(&split, "k").is_err());
        // Small counts: every non-zero side still gets a subject.
        let three = Dataset {
            items: d.items[..12].to_vec(),
            ..d
        };
        let s = three.split(&split, "k").unwrap();
        assert!(!s.training.is_empty() && !s.quiz.is_empty() && !s.exam.is_empty());
    }

    #[test]
    fn p300_subjects_are_folders_of_blocks_and_stay_folders() {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        for (sub, block) in [("S2", "block_1"), ("S10", "block_1"), ("S10", "block_2")] {
            std::fs::create_dir_all(data.join(sub)).unwrap();
            std::fs::write(data.join(sub).join(format!("{block}.npy")), b"x").unwrap();
        }
        std::fs::write(data.join("S2/notes.txt"), b"not a block").unwrap();
        std::fs::create_dir(data.join("S3")).unwrap();
        let e = Dataset::open(Layout::P300, &data).unwrap_err().to_string();
        assert!(e.contains("S3: no block"), "{e}");
        std::fs::remove_dir(data.join("S3")).unwrap();
        let d = Dataset::open(Layout::P300, &data).unwrap();
        let ids: Vec<_> = d
            .items
            .iter()
            .map(|i| (i.id.as_str(), i.files.len()))
            .collect();
        assert_eq!(ids, [("S2", 1), ("S10", 2)]);
        let out = tmp.path().join("out");
        std::fs::create_dir(&out).unwrap();
        materialise(Layout::P300, &d.items, &out, None).unwrap();
        assert!(out.join("S10/block_2.npy").is_file());
        assert!(!out.join("S2/notes.txt").exists());
        let empty = tmp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        let e = Dataset::open(Layout::P300, &empty).unwrap_err().to_string();
        assert!(e.contains("no subject folder"), "{e}");
    }

    #[test]
    fn real_cpsc_folder_hides_labels() {
        let Some(dir) = shared("real_cpsc_folder_hides_labels", "cpsc2021") else {
            return;
        };
        let c = Challenge::built_in("cpsc2021").unwrap();
        let d = Dataset::open(c.layout, &dir).unwrap();
        assert_eq!(d.items.len(), 23);
        let subjects: std::collections::BTreeSet<_> = d.items.iter().map(|i| &i.subject).collect();
        assert_eq!(subjects.len(), 9);
        let s = d.split(&c.split, &c.id).unwrap();
        assert_eq!(s.training.len(), 0);
        assert!(!s.quiz.is_empty() && !s.exam.is_empty());
        let out = tempfile::tempdir().unwrap();
        materialise(c.layout, &s.exam, out.path(), Some(&c.labels)).unwrap();
        let names = names_in(out.path()).unwrap();
        assert!(names.iter().all(|n| !n.ends_with(".atr")), "{names:?}");
        assert_eq!(
            list_file(&out.path().join("RECORDS")).unwrap().len(),
            s.exam.len()
        );
        for n in names.iter().filter(|n| n.ends_with(".hea")) {
            let text = std::fs::read_to_string(out.path().join(n)).unwrap();
            assert!(!text.contains('#'), "{n}: {text}");
            assert!(!text.contains("fibrillation"));
        }
    }

    #[test]
    fn real_circor_folder_hides_murmur_and_outcome() {
        let Some(dir) = shared(
            "real_circor_folder_hides_murmur_and_outcome",
            "circor2022/training_data",
        ) else {
            return;
        };
        let c = Challenge::built_in("physionet2022").unwrap();
        let d = Dataset::open(c.layout, &dir).unwrap();
        assert_eq!(d.items.len(), 46);
        assert_eq!(
            d.items.iter().map(|i| i.files.len()).sum::<usize>(),
            46 + 3 * 121
        );
        let s = d.split(&c.split, &c.id).unwrap();
        let out = tempfile::tempdir().unwrap();
        materialise(c.layout, &s.quiz, out.path(), Some(&c.labels)).unwrap();
        for n in names_in(out.path()).unwrap() {
            assert!(!n.ends_with(".tsv"));
            if n.ends_with(".txt") {
                let text = std::fs::read_to_string(out.path().join(&n)).unwrap();
                assert!(
                    !text.contains("Murmur") && !text.contains("Outcome"),
                    "{text}"
                );
                assert!(text.contains("#Age:"), "{text}");
            }
        }
        let whole = tempfile::tempdir().unwrap();
        materialise(c.layout, &s.training, whole.path(), None).unwrap();
        let any = names_in(whole.path()).unwrap();
        assert!(any.iter().any(|n| n.ends_with(".tsv")));
    }

    #[test]
    fn real_cinc_folder_lists_from_the_reference() {
        let Some(dir) = shared("real_cinc_folder_lists_from_the_reference", "cinc2017") else {
            return;
        };
        let d = Dataset::open(Layout::Cinc2017, &dir).unwrap();
        assert_eq!(d.items.len(), 48);
        assert!(d.items.iter().all(|i| i.files.len() == 2));
    }

    #[test]
    fn a_listed_record_without_header_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("RECORDS"), "data_1_1\n").unwrap();
        let e = Dataset::open(Layout::Cpsc2021, dir.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("data_1_1") && e.contains(".hea"), "{e}");
        std::fs::write(dir.path().join("RECORDS"), "../etc/passwd\n").unwrap();
        assert!(Dataset::open(Layout::Cpsc2021, dir.path()).is_err());
    }
}
