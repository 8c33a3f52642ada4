//! Advice a team can follow literally: what brings the bulk of a set over the download
//! limit, and requirement files widened step by step until pip resolves them. Moved out
//! of the environment builder, which only calls these.

use super::*;
/// A resolved set's sizes and who asked for what: to name what brings the bulk.
pub(super) struct Bulk<'a> {
    /// The runtime's main packages ([`super::runtime_summary`]).
    pub(super) summary: String,
    pub(super) items: &'a [(Package, String)],
    /// Normalised name → its wheel's bytes.
    pub(super) size_of: &'a std::collections::BTreeMap<String, u64>,
    pub(super) requested: &'a std::collections::BTreeSet<String>,
    pub(super) requires: &'a std::collections::BTreeMap<String, Vec<String>>,
}

impl Bulk<'_> {
    /// Each requested package with the bytes of it and everything it brings into the
    /// set (its dependencies, transitively), the largest first.
    fn by_request(&self) -> Vec<(String, u64)> {
        let version = |n: &str| {
            self.items
                .iter()
                .find(|(p, _)| runtime::normalise(&p.name) == n)
                .map(|(p, _)| format!("{} {}", p.name, p.version))
                .unwrap_or_else(|| n.to_string())
        };
        let mut out: Vec<(String, u64)> = self
            .requested
            .iter()
            .map(|root| {
                let mut seen = std::collections::BTreeSet::new();
                let mut todo = vec![root.clone()];
                while let Some(n) = todo.pop() {
                    if !self.size_of.contains_key(&n) || !seen.insert(n.clone()) {
                        continue;
                    }
                    todo.extend(self.requires.get(&n).into_iter().flatten().cloned());
                }
                let bytes = seen.iter().filter_map(|n| self.size_of.get(n)).sum();
                (version(root), bytes)
            })
            .collect();
        out.sort_by_key(|a| std::cmp::Reverse(a.1));
        out
    }
}

fn mib(bytes: u64) -> u64 {
    bytes.div_ceil(1 << 20)
}

/// The refusal of a set over the download limit: what brings the bulk first, then the
/// largest wheels, one a line.
pub(super) fn too_big(bulk: &Bulk, bytes: u64, policy: &PackagesDef) -> Vec<String> {
    let by_request = bulk.by_request();
    let mut out = vec![format!(
        "the environment needs {} MiB of wheels, more than this challenge's download limit \
         of {} MiB{}",
        mib(bytes),
        policy.download_mb,
        match by_request.first() {
            Some((name, b)) => format!(
                "; {name} brings {} MiB of it (with its dependencies)",
                mib(*b)
            ),
            None => String::new(),
        }
    )];
    let mut largest: Vec<(&Package, u64)> = bulk
        .items
        .iter()
        .filter_map(|(p, _)| Some((p, *bulk.size_of.get(&runtime::normalise(&p.name))?)))
        .collect();
    largest.sort_by_key(|a| std::cmp::Reverse(a.1));
    out.push(format!(
        "the largest wheels: {}",
        largest
            .iter()
            .take(5)
            .map(|(p, b)| format!("{} {} ({} MiB)", p.name, p.version, mib(*b)))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    if by_request
        .first()
        .is_some_and(|(n, _)| n.starts_with("torch "))
    {
        out.push(
            "torch's Linux wheels on the package index carry CUDA libraries (the judge runs \
             on CPUs): the organiser may raise the challenge's packages.download_mb"
                .into(),
        );
    }
    out.push(format!(
        "use the runtime's packages ({}) where you can, or a smaller package",
        bulk.summary
    ));
    out
}

/// Checks advice before it is shown: whether pip resolves `lines` (the entry's
/// requirements with the advice applied) with the runtime at `python`, made consistent
/// with the runtime as an environment would be. `Ok(Ok(set))`: what would be installed;
/// `Ok(Err(text))`: pip's refusal.
pub fn verify(
    settings: &EnvSettings,
    python: &Path,
    lines: &[String],
    scratch: &Path,
    stop: Option<&AtomicBool>,
    log: &mut dyn FnMut(&str),
) -> Result<Result<Vec<Package>, String>, EnvError> {
    std::fs::create_dir_all(scratch).map_err(|e| judge_err("scratch folder", e))?;
    let helper = scratch.join("index.py");
    std::fs::write(&helper, INDEX_PY).map_err(|e| judge_err("index helper", e))?;
    Ok(
        resolve_set(settings, python, &helper, lines, scratch, stop, log)?
            .map(|r| r.items.into_iter().map(|(p, _)| p).collect()),
    )
}

/// The whole file as the judge advises it, checked by pip: each advised requirement
/// starts at its narrowest (the pin's release series); while pip refuses the set, the
/// advised packages its message names (else all) are widened a step (the same major
/// version, then any later release). The problem shown: the file to copy, or pip's
/// reason for the widest set.
#[allow(clippy::too_many_arguments)]
pub(super) fn advise(
    settings: &EnvSettings,
    python: &Path,
    python_name: &str,
    helper: &Path,
    reqs: &[Requirement],
    problems: &[WheelProblem],
    scratch: &Path,
    stop: Option<&AtomicBool>,
    log: &mut dyn FnMut(&str),
) -> Result<String, EnvError> {
    let mut level: Vec<usize> = vec![0; reqs.len()];
    let advice_of = |r: &Requirement| problems.iter().find(|p| p.name == r.name);
    let lines_at = |level: &[usize]| -> Vec<String> {
        reqs.iter()
            .zip(level)
            .map(|(r, &l)| match advice_of(r) {
                Some(p) => p.advice[l.min(p.advice.len() - 1)].clone(),
                None => r.pip_line(),
            })
            .collect()
    };
    let checked = |lines: &[String], set: &Resolved| {
        format!(
            "the requirements as the judge advises them, checked (pip resolves them for \
             {}{}):\n{}",
            python_name,
            match set.items.is_empty() {
                true => String::new(),
                false => format!(", installing {}", named(&set.items)),
            },
            lines.join("\n")
        )
    };
    let mut said = match resolve_set(
        settings,
        python,
        helper,
        &lines_at(&level),
        scratch,
        stop,
        log,
    )? {
        Ok(set) => return Ok(checked(&lines_at(&level), &set)),
        Err(said) => said,
    };
    loop {
        let widenable: Vec<usize> = (0..reqs.len())
            .filter(|&i| advice_of(&reqs[i]).is_some_and(|p| level[i] + 1 < p.advice.len()))
            .collect();
        let named_by_pip: Vec<usize> = widenable
            .iter()
            .copied()
            .filter(|&i| {
                let n = runtime::normalise(&reqs[i].name);
                said.lines()
                    .any(|l| l.split_whitespace().any(|w| runtime::normalise(w) == n))
            })
            .collect();
        let candidates = match named_by_pip.is_empty() {
            false => named_by_pip,
            true => widenable,
        };
        if candidates.is_empty() {
            return Ok(format!(
                "the judge found no advice that pip resolves: with {} pip says:\n{said}",
                lines_at(&level).join(", ")
            ));
        }
        // One package widened at a time first, so that the others keep their era's
        // release series (scipy<1.10 still has what peakutils imports).
        for &i in &candidates {
            let mut one = level.clone();
            one[i] += 1;
            let lines = lines_at(&one);
            if let Ok(set) = resolve_set(settings, python, helper, &lines, scratch, stop, log)? {
                log(&format!("advice resolved with {} widened", reqs[i].name));
                return Ok(checked(&lines, &set));
            }
        }
        log(&format!(
            "advice not resolved by pip; widened: {}",
            candidates
                .iter()
                .map(|&i| reqs[i].name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
        for i in candidates {
            level[i] += 1;
        }
        said = match resolve_set(
            settings,
            python,
            helper,
            &lines_at(&level),
            scratch,
            stop,
            log,
        )? {
            Ok(set) => return Ok(checked(&lines_at(&level), &set)),
            Err(said) => said,
        };
    }
}
