//! The inside of sandbox runs, as its own program: the runner executes it once per slot,
//! as the slot's spawner, which forks every run's program. The `physiojudge` binary does
//! the same through a hidden first argument; this one serves the crate's own tests and
//! benchmarks.

fn main() {
    if std::env::var_os(sandbox::spec::SPAWNER_ENV).is_none() {
        eprintln!("physiojudge-sandbox-init: started by the sandbox runner only");
        std::process::exit(2);
    }
    sandbox::init::main()
}
