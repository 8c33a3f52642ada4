//! Writes every challenge's default set (or `CHALLENGE COUNT DIR SEED`) and says how long
//! each took: `cargo run -p synth --example time_synth`.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [c, n, dir, seed] = &args[..] {
        let t = std::time::Instant::now();
        let s = synth::write(
            c.parse().unwrap(),
            dir.as_ref(),
            seed.parse().unwrap(),
            Some(n.parse().unwrap()),
        )
        .unwrap();
        println!("{:?} {s}", t.elapsed());
        return;
    }
    let base = std::env::temp_dir().join(format!("synth-time-{}", std::process::id()));
    for c in synth::Challenge::ALL {
        let dir = base.join(c.id());
        let t = std::time::Instant::now();
        let s = synth::write(c, &dir, 1, None).unwrap();
        println!("{:?} {s}", t.elapsed());
    }
    println!("{}", base.display());
}
