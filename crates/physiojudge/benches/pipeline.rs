//! Pipeline overhead per record: `physiojudge evaluate` of a no-op per-record entry
//! (`next.sh` appends `REC,N`) over N generated CinC 2017 records, against the entry's
//! own run time — the same `bash next.sh REC` per record, run directly — measured side
//! by side, interleaved, several times. Needs root (the sandbox).
//!
//! `cargo bench -p physiojudge --bench pipeline [-- RECORDS [RUNS]]`

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const NEXT_SH: &str = "#!/bin/bash\necho \"$1,N\" >> answers.txt\n";

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let records = args.first().copied().unwrap_or(1000);
    let runs = args.get(1).copied().unwrap_or(3);
    if !nix::unistd::Uid::effective().is_root() {
        eprintln!("pipeline bench: needs root (the sandbox); skipped");
        return;
    }
    let ok = testkit::physiojudge!(["runtime", "setup"]);
    assert!(ok.status.success(), "{}", testkit::text(&ok));

    let tmp = tempfile::tempdir().expect("tempdir");
    let data = tmp.path().join("data");
    synth::write(synth::Challenge::Cinc2017, &data, 1, Some(records)).expect("synth");
    let names: Vec<String> = std::fs::read_to_string(data.join("RECORDS"))
        .expect("RECORDS")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let entry = tmp.path().join("entry");
    std::fs::create_dir(&entry).expect("entry");
    for (name, text) in [
        ("next.sh", NEXT_SH),
        ("setup.sh", "#!/bin/bash\ntrue\n"),
        ("answers.txt", "# none\n"),
        ("dependencies.txt", "# none\n"),
        ("AUTHORS.txt", "bench\n"),
        ("LICENSE.txt", "MIT\n"),
    ] {
        std::fs::write(entry.join(name), text).expect("write entry");
    }

    let (mut judged, mut own) = (Vec::new(), Vec::new());
    for run in 0..runs {
        // The entry alone: one bash per record, in a folder holding the record's files.
        let plain = tmp.path().join(format!("plain-{run}"));
        std::fs::create_dir(&plain).expect("plain");
        std::fs::copy(entry.join("next.sh"), plain.join("next.sh")).expect("copy");
        let t = Instant::now();
        for n in &names {
            let st = Command::new("/bin/bash")
                .args(["next.sh", n])
                .current_dir(&plain)
                .stdin(Stdio::null())
                .status()
                .expect("bash");
            assert!(st.success());
        }
        own.push(t.elapsed() / names.len() as u32);

        let out = tmp.path().join(format!("result-{run}"));
        let t = Instant::now();
        let o = testkit::physiojudge_command!()
            .args(["evaluate", "--challenge", "cinc2017", "--json", "--entry"])
            .arg(&entry)
            .arg("--data")
            .arg(&data)
            .arg("--out")
            .arg(&out)
            .output()
            .expect("evaluate");
        let elapsed = t.elapsed();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        judged.push(elapsed / names.len() as u32);
        eprintln!(
            "run {}: evaluate {} per record, entry alone {} per record",
            run + 1,
            ms(*judged.last().unwrap_or(&Duration::ZERO)),
            ms(*own.last().unwrap_or(&Duration::ZERO))
        );
    }
    let (j, e) = (median(&mut judged), median(&mut own));
    println!(
        "{records} records, {runs} runs (medians): evaluate {} per record; the entry alone {} \
         per record; pipeline overhead {} per record (target ≤ 10 ms)",
        ms(j),
        ms(e),
        ms(j.saturating_sub(e))
    );
}
