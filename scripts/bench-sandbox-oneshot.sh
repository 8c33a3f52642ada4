#!/usr/bin/env bash
# One-shot sandbox runs as whole processes: `physiojudge sandbox run -- /bin/true`
# against bubblewrap running the same program, alternating run by run, timed from the
# caller's side (spawn until reaped). Prints medians, p90s and the ratio of medians
# (BENCHMARKS.md, "Sandbox one-shot runs"). Needs root and bwrap (apt-get install
# bubblewrap); takes the physiojudge binary as $PHYSIOJUDGE (default: the release build).
#
#   scripts/bench-sandbox-oneshot.sh [RUNS] [-- EXTRA PHYSIOJUDGE BINARIES TO COMPARE]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runs="${1:-200}"
shift || true
[ "${1:-}" = "--" ] && shift
pj="${PHYSIOJUDGE:-$root/target/release/physiojudge}"
command -v bwrap >/dev/null || { echo "bwrap is not installed (apt-get install bubblewrap)" >&2; exit 2; }
[ -x "$pj" ] || { echo "no physiojudge at $pj (cargo build --release -p physiojudge)" >&2; exit 2; }
exec python3 - "$runs" "$pj" "$@" <<'PY'
import os, statistics, subprocess, sys, time

runs = int(sys.argv[1])
binaries = sys.argv[2:]
bwrap = ("bwrap --unshare-all --die-with-parent --new-session --ro-bind /usr /usr "
         "--symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 "
         "--proc /proc --dev /dev --tmpfs /tmp /bin/true").split()
methods = [("plain /bin/true", ["/bin/true"])]
for i, b in enumerate(binaries):
    name = "physiojudge sandbox run" + ("" if i == 0 else f" ({b})")
    methods.append((name, [b, "sandbox", "run", "--", "/bin/true"]))
methods.append(("bwrap", bwrap))
times = {name: [] for name, _ in methods}

def once(argv):
    t = time.perf_counter()
    r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    d = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"{argv[0]} failed ({r.returncode}): {r.stderr.decode(errors='replace')}")
    return d

for i in range(runs + 5):
    # Who goes first turns with every round.
    order = methods[i % len(methods):] + methods[:i % len(methods)]
    for name, argv in order:
        d = once(argv)
        if i >= 5:  # the first rounds warm the page cache and the cgroup hierarchies
            times[name].append(d)

def p(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]

load = os.getloadavg()
print(f"{runs} rounds, interleaved; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
print("| method | median | p90 | ÷ bwrap (medians) |")
print("|---|---:|---:|---:|")
bw = statistics.median(times["bwrap"])
for name, _ in methods:
    v = times[name]
    m = statistics.median(v)
    print(f"| {name} | {m*1e3:.2f} ms | {p(v, 0.9)*1e3:.2f} ms | {m/bw:.2f} |")
PY
