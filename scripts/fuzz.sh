#!/usr/bin/env bash
# Runs every cargo-fuzz target for SECONDS each (default 60). Needs cargo-fuzz
# (`cargo install cargo-fuzz`); on a stable toolchain RUSTC_BOOTSTRAP=1 lets it use the
# sanitizer flags. Crashes land in fuzz/artifacts/<target>/.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=${1:-60}
export RUSTC_BOOTSTRAP=1
for target in $(cargo fuzz list); do
  echo "== $target ($seconds s)"
  cargo fuzz run "$target" -- -max_total_time="$seconds" -rss_limit_mb=2048 2>&1 | grep -E "^(#[0-9]+.*DONE|==[0-9]+==|SUMMARY|Done)" || true
  [ -z "$(ls -A "artifacts/$target" 2>/dev/null)" ] || { echo "fuzz: $target found crashes in fuzz/artifacts/$target"; exit 1; }
done
