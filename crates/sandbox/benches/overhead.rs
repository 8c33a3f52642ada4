//! Start-up overhead of one sandboxed run of `/bin/true`, against a plain fork+exec and
//! against bubblewrap, measured side by side in the same run (interleaved, so that the
//! machine's noise hits all three alike). Prints median and p90 of each. Needs root;
//! bubblewrap (`apt-get install bubblewrap`) is optional and only for the comparison.
//! Also prints the sandbox's overhead over a plain fork+exec, paired round by round (so
//! that a machine slowing down for a while moves both), and its ratio to bubblewrap.
//! Then the sandbox alone, run after run with nothing between (a slot's next program is
//! made during the run before: interleaved, it has the other methods' time to get ready,
//! back to back only the run's own), in blocks alternating with plain fork+exec.
//!
//! `cargo bench -p sandbox --bench overhead [-- RUNS]`

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use sandbox::{InitProgram, RunConfig, Verdict, run};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100);
    let cfg = RunConfig::new(
        vec!["/bin/true".into()],
        InitProgram {
            path: env!("CARGO_BIN_EXE_physiojudge-sandbox-init").into(),
            args: Vec::new(),
        },
    );
    let bwrap = Command::new("bwrap").arg("--version").output().is_ok();
    let bwrap_args = "--unshare-all --die-with-parent --new-session --ro-bind /usr /usr \
        --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 \
        --proc /proc --dev /dev --tmpfs /tmp /bin/true";
    let quiet = |c: &mut Command| {
        c.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
    };
    let (mut plain, mut ours, mut bw) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..runs + 5 {
        let t = Instant::now();
        let mut c = Command::new("/bin/true");
        quiet(&mut c);
        assert!(c.status().unwrap().success());
        let d_plain = t.elapsed();

        let t = Instant::now();
        let r = run(&cfg);
        let d_ours = t.elapsed();
        assert_eq!(r.result.verdict, Verdict::Ok, "{:?}", r.result);

        let d_bw = bwrap.then(|| {
            let t = Instant::now();
            let mut c = Command::new("bwrap");
            c.args(bwrap_args.split_whitespace());
            quiet(&mut c);
            assert!(c.status().unwrap().success());
            t.elapsed()
        });
        // The first runs warm the page cache and the cgroup hierarchies.
        if i >= 5 {
            plain.push(d_plain);
            ours.push(d_ours);
            bw.extend(d_bw);
        }
    }
    println!("{runs} runs of /bin/true each, interleaved");
    println!("| method | median | p90 |");
    println!("|---|---:|---:|");
    let mut extra: Vec<Duration> = ours
        .iter()
        .zip(&plain)
        .map(|(o, p)| o.saturating_sub(*p))
        .collect();
    extra.sort();
    let ratio = |a: &[Duration], b: &[Duration]| {
        let (mut a, mut b) = (a.to_vec(), b.to_vec());
        a.sort();
        b.sort();
        percentile(&a, 0.5).as_secs_f64() / percentile(&b, 0.5).as_secs_f64()
    };
    let to_bwrap = (!bw.is_empty()).then(|| ratio(&ours, &bw));
    for (name, v) in [
        ("plain fork+exec", &mut plain),
        ("physiojudge sandbox", &mut ours),
        ("bwrap (minimal binds, --unshare-all)", &mut bw),
    ] {
        if v.is_empty() {
            println!("| {name} | not installed | |");
            continue;
        }
        v.sort();
        println!(
            "| {name} | {} | {} |",
            ms(percentile(v, 0.5)),
            ms(percentile(v, 0.9))
        );
    }
    println!(
        "| sandbox minus plain, paired per round | {} | {} |",
        ms(percentile(&extra, 0.5)),
        ms(percentile(&extra, 0.9))
    );
    if let Some(r) = to_bwrap {
        println!("sandbox median / bwrap median: {r:.2}");
    }

    // Blocks of 20 back-to-back runs of each, alternating.
    let (mut plain, mut ours) = (Vec::new(), Vec::new());
    while ours.len() < runs {
        for _ in 0..20 {
            let t = Instant::now();
            let mut c = Command::new("/bin/true");
            quiet(&mut c);
            assert!(c.status().unwrap().success());
            plain.push(t.elapsed());
        }
        for _ in 0..20 {
            let t = Instant::now();
            let r = run(&cfg);
            ours.push(t.elapsed());
            assert_eq!(r.result.verdict, Verdict::Ok, "{:?}", r.result);
        }
    }
    println!(
        "{} runs each, back to back in alternating blocks of 20",
        ours.len()
    );
    println!("| method | median | p90 |");
    println!("|---|---:|---:|");
    for (name, v) in [
        ("plain fork+exec", &mut plain),
        ("physiojudge sandbox", &mut ours),
    ] {
        v.sort();
        println!(
            "| {name} | {} | {} |",
            ms(percentile(v, 0.5)),
            ms(percentile(v, 0.9))
        );
    }
}
