//! Host-side cost of one packet round trip: a no-op algorithm in another thread asks for
//! every packet of a 32-character, 65-row block over a Unix socket pair (as a sandboxed
//! entry does over its pipes) and reports once per trial. Prints the median over runs of
//! the wall time per packet round trip (both sides and the wake-ups between them), how
//! many times faster than real time (40 ms per packet) the block streams, and the serving
//! thread's own CPU time per packet (the host side alone).
//!
//! `cargo bench -p stream --bench round_trip [-- RUNS]`

use std::os::unix::net::UnixStream;
use std::time::Instant;

use stream::protocol::{Client, serve};
use stream::{Block, Session, SubjectBlocks};

/// The contest's 32-character block (65 rows), from the project's own generator.
fn block() -> Block {
    let params = synth::p300::P300Params::default();
    let b = synth::p300::block(&params, 1).expect("a generated block");
    Block::new("S01/block_1", p300::ROWS, b.samples, b.data).expect("a consistent block")
}

/// CPU time of the calling thread so far, from the scheduler's own account
/// (`/proc/thread-self/schedstat`, nanoseconds).
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(7);
    let block = block();
    let mut per_packet = Vec::new();
    let mut host_cpu = Vec::new();
    for _ in 0..runs {
        let mut session = Session::new(
            vec![SubjectBlocks {
                person_id: 1,
                name: "S01".into(),
                blocks: vec![block.clone()],
            }],
            1,
        )
        .expect("a valid session");
        let (host, alg) = UnixStream::pair().expect("a socket pair");
        let algorithm = std::thread::spawn(move || {
            let mut c = Client::connect(alg.try_clone().expect("dup"), alg).expect("hello");
            let mut packets = 0u64;
            loop {
                let p = c.get().expect("a packet");
                packets += 1;
                if p.data[64 * p.samples..].contains(&241.0) {
                    c.report(101).expect("a report");
                }
                if p.finished {
                    return packets;
                }
            }
        });
        let cpu0 = thread_cpu_ns();
        let t = Instant::now();
        let served = serve(&mut session, host.try_clone().expect("dup"), host).expect("served");
        let elapsed = t.elapsed();
        host_cpu.push((thread_cpu_ns() - cpu0) as f64 / 1e9);
        let packets = algorithm.join().expect("the algorithm thread");
        assert_eq!(packets, served.packets);
        per_packet.push(elapsed.as_secs_f64() / packets as f64);
        let last = host_cpu.len() - 1;
        host_cpu[last] /= packets as f64;
    }
    per_packet.sort_by(f64::total_cmp);
    host_cpu.sort_by(f64::total_cmp);
    let median = per_packet[per_packet.len() / 2];
    println!(
        "{} samples × 65 rows, {} packets per run, {runs} runs: median {:.2} µs per packet round trip \
         (min {:.2}, max {:.2}); the block streams {:.0}× faster than real time",
        block.samples(),
        block.samples().div_ceil(10),
        median * 1e6,
        per_packet[0] * 1e6,
        per_packet[per_packet.len() - 1] * 1e6,
        0.040 / median
    );
    println!(
        "host side alone (CPU time of the serving thread): median {:.2} µs per packet",
        host_cpu[host_cpu.len() / 2] * 1e6
    );
}
