#!/usr/bin/env bash
# Prep of deep-learning environments (BENCHMARKS.md, "TensorFlow and torch"): for each
# requirement set, `physiojudge evaluate` of a CPSC 2021 entry (our example with an
# `import` of the framework first, as a participant's model code would have) twice, with
# an environment cache of its own that starts empty (first prep: resolve, download,
# sandboxed install, import check; second: the cached environment), then in the same run
# `python3 -m venv` + `pip install --only-binary :all: -r requirements.txt` with an empty
# pip cache. Prints the prep stage's wall time (result.json), the venv's, and the disk
# each environment takes (`du -sxm`; the judge's environments are hard links into its
# content store, so one count over several environments is what they cost together).
# Needs root, the index, and physiojudge built (`cargo build -p physiojudge`).
#
#   scripts/bench-dl-envs.sh SCRATCH SET...
#   SET = NAME:REQUIREMENTS:PRELUDE, requirement lines separated by `;`, e.g.
#   scripts/bench-dl-envs.sh /var/tmp/dl 'tf:tensorflow==2.21.0:import tensorflow'
# A NAME that ends in `+` is evaluated once only (a second set sharing the previous
# one's files: its first prep and what it adds to the disk).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$1"
shift
pj="${PHYSIOJUDGE:-$root/target/debug/physiojudge}"
[ -x "$pj" ] || { echo "no physiojudge at $pj (cargo build -p physiojudge)" >&2; exit 2; }
data="${PHYSIOJUDGE_DATA:-$root/../shared/data}/cpsc2021"
mkdir -p "$scratch"
export PHYSIOJUDGE_ENV_CACHE="$scratch/cache"
exec python3 - "$pj" "$root" "$data" "$scratch" "$@" <<'PY'
import json, os, shutil, subprocess, sys, time

pj, root, data, scratch = sys.argv[1:5]
sets = sys.argv[5:]
cache = os.environ["PHYSIOJUDGE_ENV_CACHE"]

def load():
    return open("/proc/loadavg").read().split()[0]

def du(*paths):
    out = subprocess.run(["du", "-sxm", *paths], capture_output=True, text=True).stdout
    return out.strip().splitlines()

def evaluate(entry, out):
    t = time.perf_counter()
    r = subprocess.run([pj, "evaluate", "--challenge", "cpsc2021", "--entry", entry,
                        "--data", data, "--out", out], capture_output=True, text=True)
    wall = time.perf_counter() - t
    res = json.load(open(os.path.join(out, "result.json")))
    prep = next(s for s in res["stages"] if s["stage"] == "prep")
    env = res.get("environment") or {}
    log = open(os.path.join(out, "logs/prep.log"), errors="replace").read()
    return {"verdict": res.get("verdict"), "prep_s": prep["wall_time_s"], "wall_s": wall,
            "cached": env.get("cached"), "key": env.get("key"),
            "packages": len(env.get("packages", [])), "log": log, "rc": r.returncode,
            "stderr": r.stderr[-2000:]}

def env_dirs():
    d = os.path.join(cache, "envs")
    return set(os.listdir(d)) if os.path.isdir(d) else set()

built = []
for spec in sets:
    name, reqs, prelude = spec.split(":", 2)
    once = name.endswith("+")
    entry = os.path.join(scratch, name.strip("+") + "-entry")
    shutil.rmtree(entry, ignore_errors=True)
    shutil.copytree(os.path.join(root, "entries/cpsc2021"), entry)
    code = open(os.path.join(entry, "entry_2021.py")).read()
    with open(os.path.join(entry, "entry_2021.py"), "w") as f:
        f.write(prelude.replace(";", "\n") + "\n" + code)
    with open(os.path.join(entry, "requirements.txt"), "w") as f:
        f.write(reqs.replace(";", "\n") + "\n")
    print(f"== {name}: {reqs!r}, load {load()} at {time.strftime('%H:%M:%S')} UTC", flush=True)
    before = env_dirs()
    runs = [evaluate(entry, os.path.join(scratch, name.strip("+") + f"-out{i}"))
            for i in ([1] if once else [1, 2])]
    for i, r in enumerate(runs, 1):
        print(f"  evaluate {i}: {r['verdict']}, prep {r['prep_s']:.1f} s (whole evaluate "
              f"{r['wall_s']:.1f} s), cached {r['cached']}, {r['packages']} package(s), "
              f"load {load()}", flush=True)
        for line in r["log"].splitlines():
            if any(w in line for w in ("content store:", "installed:", "downloaded",
                                       "refused", "limit", "runtime:", "MiB", "import")):
                print("   |", line[:400])
        if r["verdict"] != "scored":
            print("   | stderr:", r["stderr"])
    new = sorted(env_dirs() - before)
    dirs = [os.path.join(cache, "envs", d) for d in new]
    built += dirs
    if dirs:
        print("  disk, this environment:", du(*dirs))
        print("  disk, every environment so far in one count:", du(*built))
    if once:
        continue
    venv = os.path.join(scratch, name + "-venv")
    pipcache = os.path.join(scratch, name + "-pipcache")
    t = time.perf_counter()
    ok = (subprocess.run(["/usr/bin/python3", "-m", "venv", venv]).returncode == 0 and
          subprocess.run([os.path.join(venv, "bin/pip"), "install", "--quiet",
                          "--disable-pip-version-check", "--only-binary", ":all:",
                          "--cache-dir", pipcache, "-r",
                          os.path.join(entry, "requirements.txt")]).returncode == 0)
    venv_s = time.perf_counter() - t
    print(f"  venv + pip install: {'ok' if ok else 'FAILED'} {venv_s:.1f} s, load {load()}; "
          f"disk {du(venv)}", flush=True)
    shutil.rmtree(venv, ignore_errors=True)
    shutil.rmtree(pipcache, ignore_errors=True)
print("cache:", du(cache), flush=True)
PY
