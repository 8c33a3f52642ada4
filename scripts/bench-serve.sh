#!/usr/bin/env bash
# The service's performance figures of issue 24 (BENCHMARKS.md, "The service"), measured
# on the real `physiojudge serve` binary over loopback:
#   1. upload of a 10 MB entry until `201` (a server without workers);
#   2. idle worker to `running` after `201`, over submissions sent one at a time to a
#      server with one worker (times from the submission's state history);
#   3. the judge's wall time per submission through the service (`running` to `scored`
#      in the history) against `physiojudge evaluate` of the same entry on the same
#      data, alternating.
# Needs root and the runtime (`physiojudge runtime setup`); run it under
# `flock /tmp/physiojudge-sandbox.lock` on a shared machine. Everything it makes is in a
# temporary folder, removed at the end.
#
#   scripts/bench-serve.sh [UPLOADS] [SUBMISSIONS] [PAIRS]     (default 50 100 10)
# PARTS=1 (or 23, …) runs only those parts; part 1 starts no sandbox.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pj="${PHYSIOJUDGE:-$root/target/release/physiojudge}"
[ -x "$pj" ] || { echo "no physiojudge at $pj (cargo build --release -p physiojudge)" >&2; exit 2; }
exec python3 - "$pj" "$root" "${1:-50}" "${2:-100}" "${3:-10}" <<'PY'
import datetime, http.client, io, json, os, shutil, statistics, subprocess, sys, tempfile
import time, zipfile

pj, root = sys.argv[1], sys.argv[2]
n_uploads, n_subs, n_pairs = (int(x) for x in sys.argv[3:6])
parts = os.environ.get("PARTS", "123")
tmp = tempfile.mkdtemp(prefix="bench-serve-")

def run(*args, **kw):
    r = subprocess.run([pj, *args], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"physiojudge {' '.join(args)}: {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r.stdout

def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))]

def summary(v, unit=1e3, u="ms"):
    return (f"median {statistics.median(v)*unit:.1f} {u}, p90 {pct(v, .9)*unit:.1f} {u}, "
            f"p95 {pct(v, .95)*unit:.1f} {u}, max {max(v)*unit:.1f} {u}, min {min(v)*unit:.1f} {u} "
            f"(n = {len(v)})")

def load():
    return "load average %.1f %.1f %.1f" % os.getloadavg()

servers = []  # stopped at the end, whatever happens

class Server:
    def __init__(self, name, workers):
        self.state = os.path.join(tmp, name)
        self.token = run("admin", "--state", self.state, "user", "add", "boss",
                         "--organiser").strip()
        self.proc = subprocess.Popen(
            [pj, "serve", "--state", self.state, "--listen", "127.0.0.1:0",
             "--workers", str(workers)],
            stdout=subprocess.PIPE, stderr=open(os.path.join(tmp, name + ".log"), "w"),
            text=True)
        servers.append(self)
        line = self.proc.stdout.readline()
        self.host, self.port = line.split("http://")[1].split("/")[0].split(":")
        self.conn = http.client.HTTPConnection(self.host, int(self.port))

    def call(self, method, path, token, body=None, ctype="application/json"):
        headers = {"Authorization": f"Bearer {token}"}
        if body is not None:
            headers["Content-Type"] = ctype
            if ctype == "application/json":
                body = json.dumps(body).encode()
        self.conn.request(method, path, body=body, headers=headers)
        r = self.conn.getresponse()
        data = r.read()
        return r.status, (json.loads(data) if data else None)

    def setup(self, data, challenge="cinc2017"):
        s, b = self.call("POST", "/api/v1/challenges", self.token,
                         {"id": challenge, "definition": challenge, "data": data})
        assert s == 201, (s, b)
        now = datetime.datetime.now(datetime.timezone.utc)
        s, b = self.call("POST", f"/api/v1/challenges/{challenge}/phases", self.token,
                         {"name": "open", "opens": (now - datetime.timedelta(days=1)).isoformat(),
                          "closes": (now + datetime.timedelta(days=30)).isoformat(),
                          "scored_split": "exam", "show_exam": True, "rule": "best"})
        assert s == 201, (s, b)
        s, b = self.call("POST", "/api/v1/users", self.token,
                         {"name": "alice", "role": "participant", "password": "correct horse"})
        assert s == 201, (s, b)
        self.alice = b["token"]
        s, b = self.call("POST", "/api/v1/teams", self.alice,
                         {"name": "Alpha", "challenge": challenge})
        assert s == 201, (s, b)
        self.challenge = challenge

    def submit(self, archive):
        t = time.perf_counter()
        s, b = self.call("POST", f"/api/v1/challenges/{self.challenge}/submissions",
                         self.alice, archive, "application/octet-stream")
        d = time.perf_counter() - t
        assert s == 201, (s, b)
        return d, b["id"]

    def wait(self, sub, states=("scored", "failed", "error", "withdrawn")):
        while True:
            s, b = self.call("GET", f"/api/v1/submissions/{sub}", self.token)
            assert s == 200, (s, b)
            if b["state"] in states:
                return b
            time.sleep(0.02)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()

def at(h):
    return datetime.datetime.fromisoformat(h["at"].replace("Z", "+00:00")).timestamp()

def zipped(files, stored=()):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            z.writestr(name, data, compress_type=zipfile.ZIP_STORED if name in stored else None)
    return buf.getvalue()

data = os.path.join(tmp, "data")
run("synth", "cinc2017", "--seed", "1", "--out", data)
# The demo's trivial cinc2017 entry (every record N).
trivial = [("setup.sh", "#!/bin/bash\ntrue\n"),
           ("next.sh", '#!/bin/bash\necho "$1,N" >> answers.txt\n'),
           ("answers.txt", "# no submitted answers\n"), ("dependencies.txt", "# none\n"),
           ("AUTHORS.txt", "bench\n"), ("LICENSE.txt", "MIT\n")]
try:
    print(f"physiojudge: {pj}; {os.cpu_count()} CPUs; {load()}")
    # 1. Uploads: a trivial entry plus 10 MB of incompressible bytes, stored.
    if "1" in parts:
        big = zipped(trivial + [("weights.bin", os.urandom(10 * 1000 * 1000))], stored={"weights.bin"})
        srv = Server("uploads", 0)
        srv.setup(data)
        for _ in range(3):  # warm-up
            srv.submit(big)
        ups = [srv.submit(big)[0] for _ in range(n_uploads)]
        srv.stop()
        print(f"\n1. upload of a {len(big)/1e6:.1f} MB zip to 201 ({load()}): {summary(ups)}")

    if "2" in parts or "3" in parts:
        # 2. Idle worker to running, one submission at a time; 3. judge cost.
        srv = Server("queue", 1)
        srv.setup(data)
        small = zipped(trivial)
        lags, lags_client, totals = [], [], []
        for i in range(n_subs + 2 if "2" in parts else 0):
            sent = time.time()
            d, sub = srv.submit(small)
            got = time.time()
            b = srv.wait(sub)
            assert b["state"] == "scored", b
            hist = b["organiser"]["history"]
            queued = next(h for h in hist if h["to"] == "queued")
            running = next(h for h in hist if h["to"] == "running")
            if i >= 2:
                lags.append(at(running) - at(queued))
                lags_client.append(at(running) - got)
                totals.append(at(hist[-1]) - at(queued))
    if "2" in parts:
        print(f"\n2. idle worker to running ({load()}):")
        print(f"   queued -> running, history times: {summary(lags)}")
        print(f"   201 received by the client -> running: {summary(lags_client)}")
        print(f"   queued -> scored (trivial entry, {data}): {summary(totals)}")
        print(f"   over 1 s: {sum(1 for x in lags if x > 1)} of {len(lags)}")

    if "3" in parts:
        example = os.path.join(root, "entries", "cinc2017")
        ex_zip = io.BytesIO()
        with zipfile.ZipFile(ex_zip, "w", zipfile.ZIP_DEFLATED) as z:
            for d, _, fs in os.walk(example):
                for f in fs:
                    if f.endswith(".pyc") or "__pycache__" in d:
                        continue
                    p = os.path.join(d, f)
                    z.write(p, os.path.relpath(p, example))
        ex_zip = ex_zip.getvalue()
        svc, ev = [], []
        for i in range(n_pairs + 1):
            for side in (("svc", "ev") if i % 2 == 0 else ("ev", "svc")):
                if side == "svc":
                    _, sub = srv.submit(ex_zip)
                    b = srv.wait(sub)
                    assert b["state"] == "scored", b
                    hist = b["organiser"]["history"]
                    running = next(h for h in hist if h["to"] == "running")
                    d = at(hist[-1]) - at(running)
                    if i > 0:
                        svc.append(d)
                else:
                    out = os.path.join(tmp, f"eval-{i}")
                    t = time.perf_counter()
                    run("evaluate", "--challenge", "cinc2017", "--entry", example, "--data", data,
                        "--out", out, "--slot", "1", "--json")
                    d = time.perf_counter() - t
                    shutil.rmtree(out, ignore_errors=True)
                    if i > 0:
                        ev.append(d)
        ratios = [s / e for s, e in zip(svc, ev)]
        print(f"\n3. the example cinc2017 entry on {data} ({load()}):")
        print(f"   service, running -> scored: {summary(svc, 1, 's')}")
        print(f"   physiojudge evaluate, whole process: {summary(ev, 1, 's')}")
        print(f"   service / evaluate: ratio of medians {statistics.median(svc)/statistics.median(ev):.3f}, "
              f"median of paired ratios {statistics.median(ratios):.3f}")
    if "2" in parts or "3" in parts:
        srv.stop()
finally:
    for s in servers:
        s.stop()
    shutil.rmtree(tmp, ignore_errors=True)
PY
