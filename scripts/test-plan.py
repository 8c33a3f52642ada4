#!/usr/bin/env python3
"""The test binaries of a `cargo test --no-run --message-format=json` build, as a plan
for scripts/test.sh: one line per binary, `name<TAB>folder<TAB>executable`, the slowest
first (so the lanes finish together), the binaries that stop shared services last and
marked `alone`.

Reads cargo's JSON messages on standard input."""
import json
import os
import sys

# Binaries that take minutes, slowest first (measured in a full run; BENCHMARKS.md,
# "The test suite"). Starting them first keeps one lane from ending long after the others.
SLOW = [
    "judge::envs",
    "physiojudge::cli_evaluate",
    "web::browser",
    "server::schemathesis",
    "judge::library",
    "sandbox::hostile",
    "physiojudge::cli_platform",
    "worker::pool",
    "web::judged",
    "physiojudge::cli_runtimes",
    "physiojudge::cli_demo",
    "physiojudge::cli_serve_demo",
    "physiojudge::cli_matlab",
    "formats::wfdb_oracle",
]
# Binaries that stop and restart PostgreSQL or NATS, which every other binary that uses
# them would see fail: run after the others, one at a time.
ALONE = ["physiojudge::cli_fleet"]

plan = []
for line in sys.stdin:
    try:
        m = json.loads(line)
    except json.JSONDecodeError:
        continue
    if m.get("reason") != "compiler-artifact" or not m.get("profile", {}).get("test"):
        continue
    exe = m.get("executable")
    if not exe:
        continue
    package = m["package_id"]
    crate = m["target"]["name"]
    kinds = m["target"]["kind"]
    folder = os.path.dirname(m["manifest_path"])
    pkg = os.path.basename(folder)
    if "test" in kinds:
        name = f"{pkg}::{crate}"
    else:
        name = f"{pkg}::{crate}({'+'.join(kinds)})"
    plan.append((name, folder, exe))

def order(item):
    name = item[0]
    if name in ALONE:
        return (2, ALONE.index(name), name)
    if name in SLOW:
        return (0, SLOW.index(name), name)
    return (1, 0, name)

for name, folder, exe in sorted(plan, key=order):
    mark = "alone" if name in ALONE else "lane"
    print(f"{mark}\t{name}\t{folder}\t{exe}")
