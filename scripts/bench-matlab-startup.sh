#!/bin/bash
# Per-record cost of a MATLAB-language entry on Octave vs a Python entry, side by side
# (BENCHMARKS.md, "MATLAB entries on Octave"). Each pair runs, in one-shot sandboxes
# (`physiojudge sandbox run`, as the per-record interface starts one per record):
#   octave-start   matlab -batch "exit(0)"                 (Octave start + our runner)
#   python-start   python3 -c "import numpy"               (the default Python runtime)
#   octave-record  our cinc2017-matlab entry's next.sh on one record
#   python-record  the Python cinc2017 entry's next.sh on the same record
# alternating which side goes first; prints every wall time (the sandbox's own figure),
# then the medians and the median of the per-pair ratios. Needs root, the Octave runtime
# (`runtime setup --octave`) and the default one (`runtime setup`).
# Usage: scripts/bench-matlab-startup.sh [PAIRS] [RECORD]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pj=${PHYSIOJUDGE:-$root/target/debug/physiojudge}
pairs=${1:-15}
record=${2:-A00001}
data=${PHYSIOJUDGE_DATA:-$root/../shared/data}/cinc2017
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for side in octave python; do
  mkdir -p "$work/$side"
  if [ $side = octave ]; then src=$root/entries/cinc2017-matlab; else src=$root/entries/cinc2017; fi
  cp -r "$src"/. "$work/$side/"
  rm -f "$work/$side/answers.txt"
  cp "$data/$record.hea" "$data/$record.mat" "$work/$side/"
done
wall() { # the run's wall time from the result record, the last line of --json output
  "$pj" sandbox run --json --mem 2048 --time 60 --wall-time 120 "$@" 2>/dev/null \
    | tail -1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["wall_time_s"])'
}
run() {
  case $1 in
    octave-start) wall --octave -- matlab -batch "exit(0)" ;;
    python-start) wall --runtime -- python3 -c "import numpy" ;;
    octave-record) wall --octave --rw "$work/octave:/w" --cwd /w -- bash next.sh "$record" ;;
    python-record) wall --runtime --rw "$work/python:/w" --cwd /w -- bash next.sh "$record" ;;
  esac
}
out=$work/times
for kind in start record; do
  for i in $(seq 1 "$pairs"); do
    if [ $((i % 2)) = 1 ]; then a=octave; b=python; else a=python; b=octave; fi
    ta=$(run $a-$kind); tb=$(run $b-$kind)
    echo "$kind $a $ta"; echo "$kind $b $tb"
    echo "$kind $a $ta" >> "$out"; echo "$kind $b $tb" >> "$out"
  done
done
python3 - "$out" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for kind in ("start", "record"):
    o = [float(t) for k, s, t in rows if k == kind and s == "octave"]
    p = [float(t) for k, s, t in rows if k == kind and s == "python"]
    ratios = [a / b for a, b in zip(o, p)]
    print(f"{kind}: octave median {statistics.median(o):.3f} s, python median "
          f"{statistics.median(p):.3f} s, octave/python median ratio "
          f"{statistics.median(ratios):.2f} ({len(o)} pairs)")
PY
