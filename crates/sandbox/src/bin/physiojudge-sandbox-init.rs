//! The inside of a sandbox run, as its own program: the runner starts it with the run's
//! specification in its environment. The `physiojudge` binary does the same through a
//! hidden first argument; this one serves the crate's own tests and benchmarks.

fn main() {
    if std::env::var_os(sandbox::init::SPEC_ENV).is_none() {
        eprintln!("physiojudge-sandbox-init: started by the sandbox runner only");
        std::process::exit(2);
    }
    sandbox::init::main()
}
