#!/usr/bin/env bash
# Lighthouse on the site's pages (issue 35's acceptance): a `physiojudge serve --demo`
# on loopback, once its CinC 2017 example entry is scored, then Lighthouse's desktop audit of the challenge page,
# its leaderboard, a scored submission's page (signed in as its team) and the
# organiser's console (signed in as the organiser), in Debian's Chromium, headless.
# Passes when every page has accessibility 100, best practices 100 and performance
# >= 95; prints each page's figures as a Markdown table (BENCHMARKS.md keeps them).
#
# Lighthouse is npm's `lighthouse` (12.x: the newest that runs on Node 20), installed
# by this script under target/lighthouse; Chromium is /usr/bin/chromium
# (apt-get install chromium). `serve --demo` judges in the sandbox: it needs root and
# the runtime (`physiojudge runtime setup`), and takes one sandbox slot (SLOT, default
# 56); run it under `flock /tmp/physiojudge-sandbox.lock` on a shared machine.
#
#   scripts/lighthouse.sh            (PHYSIOJUDGE=path/to/physiojudge, default
#                                     target/release/physiojudge, else target/debug)
# KEEP=1 keeps the reports (HTML and JSON) in the temporary folder it names.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pj="${PHYSIOJUDGE:-}"
if [ -z "$pj" ]; then
  for p in "$root/target/release/physiojudge" "$root/target/debug/physiojudge"; do
    [ -x "$p" ] && { pj="$p"; break; }
  done
fi
[ -n "$pj" ] && [ -x "$pj" ] || { echo "no physiojudge binary (cargo build --release -p physiojudge)" >&2; exit 2; }
chrome="${CHROME_PATH:-/usr/bin/chromium}"
[ -x "$chrome" ] || { echo "no Chromium at $chrome (apt-get install chromium)" >&2; exit 2; }
lh_dir="$root/target/lighthouse"
lh="$lh_dir/node_modules/.bin/lighthouse"
if [ ! -x "$lh" ]; then
  mkdir -p "$lh_dir"
  npm install --prefix "$lh_dir" --no-audit --no-fund --loglevel=error lighthouse@12 >&2
fi
# The Python runtime entries run on (set up once by `serve --demo` when missing), kept
# under target/ as the tests keep theirs.
export PHYSIOJUDGE_RUNTIME_DIR="${PHYSIOJUDGE_RUNTIME_DIR:-$root/target/tmp/runtime}"
exec python3 - "$pj" "$chrome" "$lh" "${SLOT:-56}" <<'PY'
import json, os, re, shutil, signal, socket, subprocess, sys, tempfile, time
import urllib.request

pj, chrome, lh, slot = sys.argv[1:5]
tmp = tempfile.mkdtemp(prefix="lighthouse-")
keep = os.environ.get("KEEP") == "1"

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
base = f"http://127.0.0.1:{port}"
server = subprocess.Popen(
    [pj, "serve", "--demo", "--state", os.path.join(tmp, "state"),
     "--listen", f"127.0.0.1:{port}", "--workers", "1", "--first-slot", slot],
    stdout=subprocess.PIPE, stderr=open(os.path.join(tmp, "serve.log"), "w"), text=True)

def stop():
    if server.poll() is None:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            server.kill()

try:
    org = part = None
    scored = []
    submissions = {}
    deadline = time.time() + 1800
    # The demo says what it made, line by line, and when every submission is final.
    for line in server.stdout:
        if time.time() > deadline:
            sys.exit("serve --demo did not finish judging in 30 minutes")
        m = re.match(r"demo organiser token: (\S+)", line)
        if m:
            org = m.group(1)
        m = re.match(r"demo participant (\S+) \(team [^)]*\) token: (\S+)", line)
        if m and part is None:
            part = m.group(2)
        m = re.match(r"demo submission (\S+) \((\S+), team", line)
        if m:
            submissions.setdefault(m.group(2), []).append(m.group(1))
        if line.startswith("demo seeded:"):
            break
    else:
        sys.exit(f"serve --demo stopped: see {tmp}/serve.log")
    if not (org and part and submissions.get("cinc2017")):
        sys.exit("serve --demo did not print its tokens and submissions")
    # The participant's first CinC 2017 submission (the example entry): audited once it
    # is scored (the other challenges' entries may still be judged meanwhile).
    sub = submissions["cinc2017"][0]
    while True:
        if time.time() > deadline or server.poll() is not None:
            sys.exit(f"the CinC 2017 example was not judged: see {tmp}/serve.log")
        req = urllib.request.Request(f"{base}/api/v1/submissions/{sub}",
                                     headers={"Authorization": f"Bearer {part}"})
        state = json.load(urllib.request.urlopen(req))["state"]
        if state == "scored":
            break
        if state in ("failed", "withdrawn"):
            sys.exit(f"the CinC 2017 example ended {state}: see {tmp}/serve.log")
        time.sleep(2)
    pages = [
        ("challenge page", "/challenges/cinc2017", None),
        ("leaderboard", "/challenges/cinc2017/leaderboard", part),
        ("submission page", f"/submissions/{sub}", part),
        ("organiser console", "/organiser", org),
        ("console: a challenge", "/organiser/challenges/cinc2017", org),
        ("console: phases", "/organiser/challenges/cinc2017/phases", org),
    ]
    flags = ("--headless=new --no-sandbox --disable-gpu --disable-background-networking "
             "--disable-component-update --disable-sync --no-first-run")
    rows, bad = [], []
    for name, path, token in pages:
        out = os.path.join(tmp, re.sub(r"\W+", "-", name))
        cmd = [lh, base + path, "--preset=desktop", "--quiet",
               "--only-categories=performance,accessibility,best-practices",
               f"--chrome-flags={flags}", "--output=json", "--output=html",
               f"--output-path={out}"]
        if token:
            cmd.append("--extra-headers=" + json.dumps({"Cookie": f"pj_session={token}"}))
        subprocess.run(cmd, check=True, env={**os.environ, "CHROME_PATH": chrome})
        with open(out + ".report.json") as f:
            report = json.load(f)
        cats = report["categories"]
        score = {k: round(100 * (cats[k]["score"] or 0)) for k in
                 ("performance", "accessibility", "best-practices")}
        fcp = report["audits"]["first-contentful-paint"]["numericValue"]
        lcp = report["audits"]["largest-contentful-paint"]["numericValue"]
        rows.append((name, path, score, fcp, lcp))
        if score["accessibility"] < 100 or score["best-practices"] < 100 or score["performance"] < 95:
            failing = [a for a, v in report["audits"].items()
                       if v.get("score") is not None and v["score"] < 1
                       and v.get("scoreDisplayMode") in ("binary", "numeric")]
            bad.append(f"{name}: {score}; audits below 1: {', '.join(sorted(failing))}")
    ua = re.search(r"(?:Headless)?Chrome/[\d.]+", report["environment"]["hostUserAgent"])
    print(f"Lighthouse {report['lighthouseVersion']}, desktop preset, "
          f"{ua.group(0) if ua else 'Chromium'}; {os.cpu_count()} CPUs, "
          "load average %.1f %.1f %.1f" % os.getloadavg())
    print()
    print("| page | path | performance | accessibility | best practices | FCP | LCP |")
    print("|---|---|---|---|---|---|---|")
    for name, path, s, fcp, lcp in rows:
        shown = re.sub(r"/submissions/[0-9a-f-]+", "/submissions/ID", path)
        print(f"| {name} | `{shown}` | {s['performance']} | {s['accessibility']} | "
              f"{s['best-practices']} | {fcp:.0f} ms | {lcp:.0f} ms |")
    if bad:
        print("\n" + "\n".join(bad), file=sys.stderr)
        sys.exit(1)
finally:
    stop()
    if keep:
        print(f"reports kept in {tmp}", file=sys.stderr)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
PY
