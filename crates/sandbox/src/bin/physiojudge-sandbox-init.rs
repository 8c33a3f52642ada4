//! The inside of a sandbox run, as its own program: the runner starts it with the run's
//! specification (JSON) as the only argument. The `physiojudge` binary does the same
//! through a hidden subcommand; this one serves the crate's own tests and benchmarks.

fn main() {
    let Some(spec) = std::env::args().nth(1) else {
        eprintln!("physiojudge-sandbox-init: started by the sandbox runner only");
        std::process::exit(2);
    };
    sandbox::init::main(&spec)
}
