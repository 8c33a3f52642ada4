//! Reading what an entry asks for: a pip `requirements.txt`, or a PhysioNet 2017
//! `dependencies.txt` (Debian package names). Only plain requirements from the index
//! pass: a name, extras, version clauses and an environment marker. Everything that
//! would make pip fetch from elsewhere, read other files or build code (URLs, local
//! paths, editable installs, index and link options, `pkg @ url`) is refused with its
//! line number, before anything is looked up.
//!
//! What passes is rendered again from its parts ([`Requirement::pip_line`]), so pip is
//! only ever given text this module made.

/// The most requirement lines read (a real entry has a dozen).
pub const MAX_REQUIREMENTS: usize = 200;
/// The longest logical line accepted (continuations joined).
pub const MAX_LINE: usize = 1000;

/// One requirement that passed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// Its line in the file (the first, for a continued line).
    pub line: usize,
    /// The name as written (compare with [`runtime::normalise`]).
    pub name: String,
    pub extras: Vec<String>,
    /// Version clauses as `op version`, e.g. `==1.5.2`, `>=1`.
    pub clauses: Vec<String>,
    /// The environment marker after `;`, if any (pip evaluates it).
    pub marker: Option<String>,
}

impl Requirement {
    /// The requirement as pip is given it.
    pub fn pip_line(&self) -> String {
        let mut s = self.name.clone();
        if !self.extras.is_empty() {
            s.push('[');
            s.push_str(&self.extras.join(","));
            s.push(']');
        }
        s.push_str(&self.clauses.join(","));
        if let Some(m) = &self.marker {
            s.push_str(" ; ");
            s.push_str(m);
        }
        s
    }

    /// The exact version asked for (`==X` without a wildcard), if one is.
    pub fn pinned(&self) -> Option<&str> {
        self.clauses.iter().find_map(|c| {
            c.strip_prefix("===")
                .or_else(|| c.strip_prefix("=="))
                .filter(|v| !v.ends_with(".*"))
        })
    }

    /// The clauses as text (`any version` when there are none).
    pub fn wanted(&self) -> String {
        match self.clauses.is_empty() {
            true => "any version".into(),
            false => self.clauses.join(","),
        }
    }
}

/// A line's text for a message: at most 100 characters, quoted, with control, bidi
/// and other unprintable characters escaped (Rust's debug form), so that nothing in it
/// can redraw a terminal or reorder what a reader sees.
pub(crate) fn quote(text: &str) -> String {
    let cut: String = text.chars().take(100).collect();
    match cut.len() < text.len() {
        true => format!("{cut:?}…"),
        false => format!("{cut:?}"),
    }
}

/// Reads a requirements file; `file` names it in messages. Every problem is listed
/// (`file: line N: "text": why`), or every requirement returned.
pub fn parse_requirements(file: &str, text: &str) -> Result<Vec<Requirement>, Vec<String>> {
    let mut reqs = Vec::new();
    let mut problems = Vec::new();
    for (line, logical) in logical_lines(text) {
        if reqs.len() >= MAX_REQUIREMENTS {
            problems.push(format!(
                "{file}: line {line}: more than {MAX_REQUIREMENTS} requirements"
            ));
            break;
        }
        match parse_line(&logical) {
            Ok(None) => {}
            Ok(Some(mut r)) => {
                r.line = line;
                reqs.push(r);
            }
            Err(why) => problems.push(format!("{file}: line {line}: {}: {why}", quote(&logical))),
        }
    }
    match problems.is_empty() {
        true => Ok(reqs),
        false => Err(problems),
    }
}

/// Lines with `\` continuations joined, each with the number of its first line.
fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let (start, mut acc) = pending.take().unwrap_or((i + 1, String::new()));
        match raw.strip_suffix('\\') {
            Some(part) if acc.len() <= MAX_LINE => {
                acc.push_str(part);
                pending = Some((start, acc));
            }
            _ => {
                acc.push_str(raw);
                out.push((start, acc));
            }
        }
    }
    if let Some(p) = pending {
        out.push(p);
    }
    out
}

/// pip's comment rule: `#` at the start of a line or after whitespace.
fn strip_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'#' && (i == 0 || bytes[i - 1].is_ascii_whitespace()) {
            return &line[..i];
        }
    }
    line
}

/// What an option line is told.
fn option_problem(line: &str) -> String {
    let opt = line.split([' ', '=', '\t']).next().unwrap_or(line);
    match opt {
        "-e" | "--editable" => {
            "editable installs are refused: the judge installs released wheels only".into()
        }
        "-i" | "--index-url" | "--extra-index-url" | "--no-index" | "-f" | "--find-links"
        | "--trusted-host" => format!(
            "{opt} is refused: packages come from the judge's index only (the organiser \
             chooses it)"
        ),
        "-r" | "--requirement" | "-c" | "--constraint" => {
            format!("{opt} is refused: list the packages in this file itself")
        }
        "--no-binary" => "--no-binary is refused: the judge installs wheels only".into(),
        _ => format!("the option {opt} is refused: write plain requirements (name and version)"),
    }
}

fn is_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 200
        && b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))
}

fn is_version(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 100
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b".*+!_-".contains(&c))
}

const OPS: [&str; 8] = ["===", "==", "!=", ">=", "<=", "~=", ">", "<"];

/// The words an environment marker may use (PEP 508), outside its quoted strings.
const MARKER_WORDS: [&str; 16] = [
    "python_version",
    "python_full_version",
    "os_name",
    "sys_platform",
    "platform_release",
    "platform_system",
    "platform_version",
    "platform_machine",
    "platform_python_implementation",
    "implementation_name",
    "implementation_version",
    "extra",
    "and",
    "or",
    "in",
    "not",
];

fn check_marker(m: &str) -> Result<(), String> {
    let mut chars = m.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                // A quoted string: anything but the quote, which must close it.
                if !chars.by_ref().any(|d| d == c) {
                    return Err("an environment marker with an unclosed string".into());
                }
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut word = c.to_string();
                while let Some(&d) = chars.peek() {
                    if !(d.is_ascii_alphanumeric() || d == '_') {
                        break;
                    }
                    word.push(d);
                    chars.next();
                }
                if !MARKER_WORDS.contains(&word.as_str()) {
                    return Err(format!(
                        "the environment marker names {}, which markers do not have",
                        quote(&word)
                    ));
                }
            }
            c if " ()<>=!~.".contains(c) || c.is_ascii_digit() => {}
            _ => return Err("the environment marker holds characters markers never have".into()),
        }
    }
    Ok(())
}

/// One logical line: `Ok(None)` for a blank or comment line.
fn parse_line(raw: &str) -> Result<Option<Requirement>, String> {
    if raw.len() > MAX_LINE {
        return Err(format!("longer than {MAX_LINE} characters"));
    }
    if raw
        .chars()
        .any(|c| c.is_control() && c != '\t' && c != '\r')
    {
        return Err("holds control characters".into());
    }
    let line = strip_comment(raw).trim();
    if line.is_empty() {
        return Ok(None);
    }
    if line.starts_with('-') {
        return Err(option_problem(line));
    }
    let (spec, marker) = match line.split_once(';') {
        Some((s, m)) => (s.trim(), Some(m.trim())),
        None => (line, None),
    };
    if spec.contains("://") || spec.contains(" @ ") || spec.contains('@') {
        return Err(
            "URLs and direct references (name @ url) are refused: name a package and \
             version from the index"
                .into(),
        );
    }
    if spec.starts_with(['.', '/', '~', '\\'])
        || spec.contains('/')
        || spec.contains('\\')
        || [".whl", ".zip", ".tar.gz", ".tgz", ".tar"]
            .iter()
            .any(|x| spec.ends_with(x))
    {
        return Err(
            "local paths and archives are refused: vendor the module's .py files into \
             the entry instead"
                .into(),
        );
    }
    if let Some(m) = marker {
        if m.is_empty() || m.len() > 300 {
            return Err("an empty or overlong environment marker".into());
        }
        check_marker(m)?;
    }
    let name_end = spec
        .find(|c: char| !(c.is_ascii_alphanumeric() || "-_.".contains(c)))
        .unwrap_or(spec.len());
    let name = &spec[..name_end];
    if !is_name(name) {
        return Err("not a requirement (a package name, then optional version clauses)".into());
    }
    let mut rest = spec[name_end..].trim_start();
    let mut extras = Vec::new();
    if let Some(after) = rest.strip_prefix('[') {
        let (inside, tail) = after
            .split_once(']')
            .ok_or("an extras list without its closing ]")?;
        for e in inside.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            if !is_name(e) {
                return Err(format!("{} is not an extra's name", quote(e)));
            }
            extras.push(e.to_string());
        }
        rest = tail.trim_start();
    }
    // PEP 508 also allows the clauses in parentheses.
    if let Some(inner) = rest.strip_prefix('(') {
        rest = inner
            .strip_suffix(')')
            .ok_or("a version list without its closing )")?
            .trim();
    }
    let mut clauses = Vec::new();
    for clause in rest.split(',').map(str::trim) {
        if clause.is_empty() {
            if rest.trim().is_empty() {
                break;
            }
            return Err("an empty version clause".into());
        }
        let op = OPS
            .iter()
            .find(|op| clause.starts_with(**op))
            .ok_or_else(|| format!("{} is not a version clause (==, >=, …)", quote(clause)))?;
        let version = clause[op.len()..].trim();
        if !is_version(version) {
            return Err(format!("{} is not a version", quote(version)));
        }
        clauses.push(format!("{op}{version}"));
    }
    Ok(Some(Requirement {
        line: 0,
        name: name.to_string(),
        extras,
        clauses,
        marker: marker.map(str::to_string),
    }))
}

/// A PhysioNet 2017 `dependencies.txt` line: a Debian package, what it means here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Debian {
    /// `python3` itself: the runtime is the interpreter.
    Python,
    /// A Debian package of a Python module the judge knows ([`DEBIAN_PYTHON`]): the pip
    /// package that module comes in (`python3-sklearn` is `scikit-learn`), resolved like
    /// a requirement without a version (a Debian version says nothing about a pip one).
    Pip {
        line: usize,
        debian: String,
        pip: String,
    },
    /// Headers, compilers and pip itself: nothing an entry's run needs here (the judge
    /// installs wheels, and the runtime has its Python).
    Ignored { line: usize, name: String },
    /// Anything else, `python3-X` the judge does not know included (a name anyone could
    /// register on the index is never guessed from it): a Debian package, installed
    /// from the runtime's release.
    System { line: usize, name: String },
}

/// Debian packages of Python modules, by the part after `python3-`/`python-`, and the
/// pip package each module comes in. Only these become pip requirements.
pub const DEBIAN_PYTHON: [(&str, &str); 40] = [
    ("numpy", "numpy"),
    ("scipy", "scipy"),
    ("sklearn", "scikit-learn"),
    ("skimage", "scikit-image"),
    ("pandas", "pandas"),
    ("matplotlib", "matplotlib"),
    ("pywt", "PyWavelets"),
    ("yaml", "PyYAML"),
    ("opencv", "opencv-python-headless"),
    ("serial", "pyserial"),
    ("h5py", "h5py"),
    ("joblib", "joblib"),
    ("tqdm", "tqdm"),
    ("requests", "requests"),
    ("six", "six"),
    ("statsmodels", "statsmodels"),
    ("sympy", "sympy"),
    ("networkx", "networkx"),
    ("numba", "numba"),
    ("pil", "pillow"),
    ("biopython", "biopython"),
    ("dateutil", "python-dateutil"),
    ("tables", "tables"),
    ("seaborn", "seaborn"),
    ("keras", "keras"),
    ("theano", "Theano"),
    ("lxml", "lxml"),
    ("bs4", "beautifulsoup4"),
    ("wfdb", "wfdb"),
    ("soundfile", "soundfile"),
    ("mne", "mne"),
    ("nibabel", "nibabel"),
    ("patsy", "patsy"),
    ("xlrd", "xlrd"),
    ("tz", "pytz"),
    ("psutil", "psutil"),
    ("future", "future"),
    ("setuptools", "setuptools"),
    ("cython", "Cython"),
    ("peakutils", "PeakUtils"),
];

/// Debian packages that are a known module's compiled or extra part
/// (`python3-sklearn-lib`): the same pip package.
const DEBIAN_PARTS: [&str; 4] = ["-lib", "-dbg", "-doc", "-data"];

/// Packages a `dependencies.txt` may name that the judge needs not install.
const DEBIAN_IGNORED: [&str; 12] = [
    "python-dev",
    "python3-dev",
    "python3-pip",
    "python-pip",
    "python3-minimal",
    "python3-venv",
    "python3-setuptools",
    "build-essential",
    "gcc",
    "g++",
    "make",
    "libpython3-dev",
];

/// The pip package of a Debian Python package, if the judge knows its module.
pub fn debian_pip(name: &str) -> Option<&'static str> {
    let module = name
        .strip_prefix("python3-")
        .or_else(|| name.strip_prefix("python-"))?;
    let module = DEBIAN_PARTS
        .iter()
        .find_map(|p| module.strip_suffix(p))
        .unwrap_or(module);
    DEBIAN_PYTHON
        .iter()
        .find(|(d, _)| *d == module)
        .map(|(_, pip)| *pip)
}

/// Reads a `dependencies.txt` (`name` or `name = version` a line, `#` comments).
pub fn parse_debian(file: &str, text: &str) -> Result<Vec<Debian>, Vec<String>> {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for (i, raw) in text.lines().enumerate().take(MAX_REQUIREMENTS * 5) {
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        let name = line.split(['=', ' ', '\t']).next().unwrap_or("").trim();
        let debian_name = !name.is_empty()
            && name.len() <= 100
            && name
                .bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || b"+-.".contains(&c));
        if !debian_name {
            problems.push(format!(
                "{file}: line {}: {}: not a Debian package name",
                i + 1,
                quote(line)
            ));
            continue;
        }
        let line = i + 1;
        out.push(match (name, debian_pip(name)) {
            ("python3" | "python", _) => Debian::Python,
            (n, _) if DEBIAN_IGNORED.contains(&n) => Debian::Ignored {
                line,
                name: n.to_string(),
            },
            (_, Some(pip)) => Debian::Pip {
                line,
                debian: name.to_string(),
                pip: pip.to_string(),
            },
            _ => Debian::System {
                line,
                name: name.to_string(),
            },
        });
    }
    match problems.is_empty() {
        true => Ok(out),
        false => Err(problems),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn one(line: &str) -> Result<Requirement, String> {
        parse_requirements("r", line)
            .map(|mut v| v.remove(0))
            .map_err(|p| p.join("\n"))
    }

    #[test]
    fn plain_requirements_pass_and_render_again() {
        let text = "# comment\nnumpy==1.22.0  # pinned\n\nscikit_learn[alldeps] >= 1.0, <2\n\
                    peakutils\nwfdb ; python_version >= '3'\nscipy (>=1.5)\nfoo\\\n==1.0\n";
        let r = parse_requirements("requirements.txt", text).unwrap();
        let lines: Vec<(usize, String)> = r.iter().map(|r| (r.line, r.pip_line())).collect();
        assert_eq!(
            lines,
            [
                (2, "numpy==1.22.0".to_string()),
                (4, "scikit_learn[alldeps]>=1.0,<2".into()),
                (5, "peakutils".into()),
                (6, "wfdb ; python_version >= '3'".into()),
                (7, "scipy>=1.5".into()),
                (8, "foo==1.0".into()),
            ]
        );
        assert_eq!(r[0].pinned(), Some("1.22.0"));
        assert_eq!(r[1].pinned(), None);
        assert_eq!(r[2].wanted(), "any version");
        assert_eq!(one("numpy==1.*").unwrap().pinned(), None);
    }

    #[test]
    fn hostile_lines_are_refused_with_their_line_number() {
        let cases = [
            ("-e git+https://github.com/x/y.git#egg=y", "editable"),
            (
                "--index-url https://evil.example/simple",
                "--index-url is refused",
            ),
            ("-i https://evil.example/simple", "-i is refused"),
            (
                "--extra-index-url=https://evil.example/",
                "--extra-index-url is refused",
            ),
            ("--find-links /tmp/wheels", "--find-links is refused"),
            ("-f ./wheels", "-f is refused"),
            ("--trusted-host evil.example", "--trusted-host is refused"),
            ("-r other.txt", "-r is refused"),
            ("pkg @ https://evil.example/pkg.whl", "direct references"),
            ("pkg@file:///etc/passwd", "direct references"),
            ("https://evil.example/pkg-1.0.tar.gz", "URLs"),
            ("./vendor/pkg", "local paths"),
            ("/abs/pkg-1.0-py3-none-any.whl", "local paths"),
            ("pkg.whl", "local paths"),
            ("--no-binary :all:", "wheels only"),
            ("--pre", "the option --pre"),
            ("numpy=>1", "not a version clause"),
            ("numpy==1.0 extra words", "not a version"),
            ("numpy; os.system('x')", "markers do not have"),
            ("numpy; python_version >= '3", "unclosed string"),
            ("num\u{7}py", "control characters"),
            ("[x]", "not a requirement"),
        ];
        for (line, why) in cases {
            let text = format!("numpy\n\n{line}\n");
            let p = parse_requirements("requirements.txt", &text).unwrap_err();
            assert_eq!(p.len(), 1, "{line}: {p:?}");
            assert!(
                p[0].starts_with("requirements.txt: line 3: ") && p[0].contains(why),
                "{line}: {}",
                p[0]
            );
        }
    }

    #[test]
    fn what_is_quoted_cannot_redraw_a_terminal() {
        let p = parse_requirements("r", "numpy>=99 \r\x1b[2K\x1b[32mok\u{202e}\n").unwrap_err();
        assert!(!p[0].contains(['\x1b', '\r', '\u{202e}']), "{p:?}");
        assert!(p[0].contains("\\u{1b}[32mok"), "{p:?}");
    }

    #[test]
    fn the_count_of_requirements_is_bounded() {
        let text = "a\n".repeat(MAX_REQUIREMENTS + 5);
        let p = parse_requirements("r", &text).unwrap_err();
        assert!(p[0].contains("more than"), "{p:?}");
    }

    #[test]
    fn debian_lines_map_to_pip_names_or_the_system() {
        let text = "# x\npython3\npython3-sklearn = 0.18-5~pn0\npython3-pywt\noctave\nBad Name\n";
        let p = parse_debian("dependencies.txt", text).unwrap_err();
        assert_eq!(p.len(), 1);
        assert!(p[0].contains("line 6"), "{p:?}");
        let d = parse_debian(
            "d",
            "python3\npython3-sklearn = 0.18\npython3-pywt\noctave\n",
        )
        .unwrap();
        assert_eq!(d[0], Debian::Python);
        assert_eq!(
            d[1],
            Debian::Pip {
                line: 2,
                debian: "python3-sklearn".into(),
                pip: "scikit-learn".into()
            }
        );
        assert!(matches!(&d[2], Debian::Pip { pip, .. } if pip == "PyWavelets"));
        assert!(matches!(&d[3], Debian::System { name, line: 4 } if name == "octave"));
        // Only modules the judge knows become pip packages; the rest stay Debian's.
        let d = parse_debian(
            "d",
            "python-dev\npython3-sklearn-lib\npython3-foo\nbuild-essential\npython-numpy\n",
        )
        .unwrap();
        assert!(matches!(&d[0], Debian::Ignored { name, line: 1 } if name == "python-dev"));
        assert!(matches!(&d[1], Debian::Pip { pip, line: 2, .. } if pip == "scikit-learn"));
        assert!(matches!(&d[2], Debian::System { name, line: 3 } if name == "python3-foo"));
        assert!(matches!(&d[3], Debian::Ignored { line: 4, .. }));
        assert!(matches!(&d[4], Debian::Pip { pip, .. } if pip == "numpy"));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Any text at all: an answer, never a panic; what passes renders to a line
        /// that passes again as the same requirement.
        #[test]
        fn never_panics_and_what_passes_is_stable(text in "(?s).{0,400}") {
            if let Ok(reqs) = parse_requirements("r", &text) {
                for r in reqs {
                    let again = one(&r.pip_line()).unwrap();
                    prop_assert_eq!(again.pip_line(), r.pip_line());
                    prop_assert!(!r.pip_line().contains("://"));
                    prop_assert!(!r.pip_line().starts_with('-'));
                }
            }
            let _ = parse_debian("d", &text);
        }

        /// Requirement-like text, to reach the deeper branches.
        #[test]
        fn requirement_like_text_never_panics(
            text in "[a-z0-9_.\\-\\[\\],;<>=!~*() '@/:#\\\\\n]{0,200}"
        ) {
            if let Ok(reqs) = parse_requirements("r", &text) {
                for r in reqs {
                    prop_assert!(one(&r.pip_line()).is_ok());
                }
            }
        }
    }
}
