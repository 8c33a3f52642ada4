//! `physiojudge runtime setup|info` and `sandbox run --runtime`: the pinned Python runtime
//! is really built from PyPI (once per checkout, in target/tmp) and really works inside
//! the sandbox, at the locked versions.

use testkit::{physiojudge, text};

#[test]
fn runtime_is_built_once_and_imports_its_locked_versions_in_the_sandbox() {
    let o = physiojudge!(&["runtime", "setup"]);
    assert!(o.status.success(), "{}", text(&o));
    // The second call finds it built.
    let o = physiojudge!(&["runtime", "setup"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("building"), "{}", text(&o));

    let o = physiojudge!(&["runtime", "info"]);
    let info = text(&o);
    assert!(info.contains("status: ready"), "{info}");
    assert!(info.contains("scikit-learn==1.9.1"), "{info}");

    if !testkit::root("runtime in the sandbox") {
        return;
    }
    let script = "import sys, numpy, scipy, sklearn, wfdb\n\
                  print(sys.prefix, numpy.__version__, scipy.__version__, sklearn.__version__, wfdb.__version__)\n\
                  from sklearn.linear_model import LogisticRegression\n\
                  X = numpy.arange(20.0).reshape(10, 2); y = (X[:, 0] > 9).astype(int)\n\
                  print(LogisticRegression().fit(X, y).score(X, y))\n\
                  try:\n    import site; open(site.getsitepackages()[0] + '/x', 'w'); print('wrote')\n\
                  except OSError:\n    print('read-only')\n";
    let o = physiojudge!(&[
        "sandbox",
        "run",
        "--runtime",
        "--mem",
        "1024",
        "--json",
        "--",
        "python",
        "-c",
        script,
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "/runtime 2.4.6 1.17.1 1.9.1 4.3.1", "{out}");
    assert_eq!(lines[1], "1.0", "{out}");
    assert_eq!(lines[2], "read-only", "{out}");
    assert!(lines[3].contains(r#""verdict":"ok""#), "{out}");
}

#[test]
fn sandbox_run_without_a_runtime_says_how_to_get_one() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none");
    let o = testkit::output(
        testkit::physiojudge_command!()
            .args(["sandbox", "run", "--runtime", "--", "true"])
            .env("PHYSIOJUDGE_RUNTIME_DIR", &missing),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("physiojudge runtime setup"),
        "{}",
        text(&o)
    );
}

/// matplotlib drawing text in the sandbox finds its fonts: no "Fontconfig error" in
/// every log of an entry that imports it (the host's /etc/fonts is shown read-only).
#[test]
fn matplotlib_draws_text_without_a_fontconfig_error() {
    if !testkit::root("matplotlib in the sandbox") {
        return;
    }
    let o = physiojudge!(&["runtime", "setup"]);
    assert!(o.status.success(), "{}", text(&o));
    if !std::path::Path::new("/etc/fonts").is_dir() {
        eprintln!("matplotlib in the sandbox: skipped: this host has no /etc/fonts");
        return;
    }
    let script = "import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n\
                  fig = plt.figure(); plt.plot([1, 2]); plt.title('x')\n\
                  fig.savefig('/tmp/x.png'); print('drawn')\n";
    let o = physiojudge!(&[
        "sandbox",
        "run",
        "--runtime",
        "--slot",
        "3",
        "--mem",
        "1024",
        "--",
        "python",
        "-c",
        script,
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("drawn"), "{}", text(&o));
    assert!(!text(&o).contains("Fontconfig"), "{}", text(&o));
}
