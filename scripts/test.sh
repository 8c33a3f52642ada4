#!/usr/bin/env bash
# The one command that runs every test on a fresh machine.
#
# It installs what the tests need (the Python oracle venv with wfdb-python 4.3.1 and
# scipy, pinned in tests/oracle/requirements.txt; schemathesis, pinned in
# tests/schemathesis/requirements.txt), then runs the whole workspace's tests
# with the shared data and the oracle *required*: a test that would skip for lack of
# either fails instead, so a green run means everything really ran.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

venv="$root/.oracle-venv"
req="$root/tests/oracle/requirements.txt"
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$req" | cut -d' ' -f1)
if [ ! -x "$venv/bin/python" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "test.sh: installing the Python oracle into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
  echo "$want" > "$stamp"
fi

# Schemathesis, for the server's API test against its OpenAPI document
# (crates/server/tests/schemathesis.rs), pinned in tests/schemathesis/requirements.txt.
# Its venv lives under target/ (ignored by git, and rebuilt after a `cargo clean`).
st_venv="$root/target/schemathesis-venv"
st_req="$root/tests/schemathesis/requirements.txt"
st_stamp="$st_venv/.requirements.sha256"
st_want=$(sha256sum "$st_req" | cut -d' ' -f1)
if [ ! -x "$st_venv/bin/schemathesis" ] || [ "$(cat "$st_stamp" 2>/dev/null)" != "$st_want" ]; then
  echo "test.sh: installing schemathesis into $st_venv" >&2
  rm -rf "$st_venv"
  mkdir -p "$root/target"
  python3 -m venv "$st_venv"
  "$st_venv/bin/pip" install --quiet --disable-pip-version-check -r "$st_req"
  echo "$st_want" > "$st_stamp"
fi
export PHYSIOJUDGE_SCHEMATHESIS="$st_venv/bin/schemathesis"
export PHYSIOJUDGE_REQUIRE_SCHEMATHESIS=1

# Debian's Chromium and its chromedriver, for the web site's browser tests
# (crates/web/tests/browser.rs); installed only when missing. No test tool downloads a
# browser of its own.
if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null; then
  echo "test.sh: installing chromium and chromium-driver" >&2
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y chromium chromium-driver
  else
    sudo apt-get install -y chromium chromium-driver
  fi
fi

# The era runtimes the tests use (docs/runtimes.md): Debian root file systems built by
# mmdebstrap, kept in a folder reused while intact (a runtime whose lock changed gets a
# new folder). Building one takes a few minutes; a warm cache costs nothing. The folder
# is outside the clone, so that a fresh clone on the same machine (CI's) reuses it.
if ! command -v mmdebstrap >/dev/null; then
  echo "test.sh: installing mmdebstrap" >&2
  if [ "$(id -u)" = 0 ]; then apt-get install -y mmdebstrap; else sudo apt-get install -y mmdebstrap; fi
fi
export PHYSIOJUDGE_RUNTIMES_DIR="${PHYSIOJUDGE_RUNTIMES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/physiojudge/test-runtimes}"
# Every test binary, and the physiojudge binary the tests run, built once: `cargo test`
# builds the binary too, with the features the tests unify to. A plain `cargo build -p
# physiojudge` here resolved fewer features (BENCHMARKS.md, "Build and binary") and
# compiled nine packages, and everything that depends on them, a second time.
cargo test --workspace --locked --no-run
for release in bullseye bookworm trixie; do
  "$root/target/debug/physiojudge" runtime setup --release "$release"
done
# The Octave runtime MATLAB-language entries run on (docs/matlab.md), cached alike.
"$root/target/debug/physiojudge" runtime setup --octave

export PHYSIOJUDGE_ORACLE_PYTHON="$venv/bin/python"
export PHYSIOJUDGE_REQUIRE_ORACLE=1
export PHYSIOJUDGE_REQUIRE_DATA=1
export PHYSIOJUDGE_DATA="${PHYSIOJUDGE_DATA:-$root/../shared/data}"

# With arguments (a filter, `-- --nocapture`, ...), cargo runs the tests as usual, one
# binary after another.
if [ "$#" -gt 0 ]; then
  exec cargo test --workspace --locked "$@"
fi

# Without: build every test binary once, then run them in parallel lanes. Most of the
# suite's time is spent waiting (on entries in sandboxes, on a browser, on services), so
# lanes cut the wall time (BENCHMARKS.md, "The test suite") while each binary keeps its
# own tests' shared set-up. Binaries that stop PostgreSQL or NATS run last, alone.
# Each binary runs in its package's folder, as cargo runs it.
lanes="${PHYSIOJUDGE_TEST_LANES:-3}"
logs="$root/target/test-logs"
rm -rf "$logs" && mkdir -p "$logs"
cargo test --workspace --locked --no-run --message-format=json-render-diagnostics \
  > "$logs/build.json"
python3 "$root/scripts/test-plan.py" < "$logs/build.json" > "$logs/plan"

run_one() { # name folder executable
  local started=$SECONDS rc=0
  (cd "$2" && "$3") > "$logs/$1.log" 2>&1 || rc=$?
  printf '%s\t%s\t%s\n' "$rc" "$((SECONDS - started))" "$1" >> "$logs/done"
  if [ "$rc" = 0 ]; then
    printf 'test.sh: ok     %4ss  %s\n' "$((SECONDS - started))" "$1"
  else
    printf 'test.sh: FAILED %4ss  %s\n' "$((SECONDS - started))" "$1"
  fi
}

suite_started=$SECONDS
(
  started=$SECONDS rc=0
  cargo test --workspace --locked --doc > "$logs/doc-tests.log" 2>&1 || rc=$?
  printf '%s\t%s\t%s\n' "$rc" "$((SECONDS - started))" "doc-tests" >> "$logs/done"
  printf 'test.sh: %-6s %4ss  doc-tests\n' "$([ "$rc" = 0 ] && echo ok || echo FAILED)" \
    "$((SECONDS - started))"
) &
while IFS=$'\t' read -r mark name folder exe; do
  [ "$mark" = lane ] || continue
  while [ "$(jobs -rp | wc -l)" -ge "$lanes" ]; do wait -n || true; done
  run_one "$name" "$folder" "$exe" &
done < "$logs/plan"
wait
while IFS=$'\t' read -r mark name folder exe; do
  [ "$mark" = alone ] && run_one "$name" "$folder" "$exe"
done < "$logs/plan"

failed=$(awk -F'\t' '$1 != 0 { print $3 }' "$logs/done")
echo "test.sh: $(wc -l < "$logs/done") test binaries in $((SECONDS - suite_started)) s," \
  "$lanes lanes; logs in $logs"
if [ -n "$failed" ]; then
  for name in $failed; do
    echo "=== $name ($logs/$name.log)"
    tail -n 200 "$logs/$name.log"
  done
  echo "test.sh: failed: $(echo $failed)" >&2
  exit 1
fi
