#!/usr/bin/env bash
# What a remote worker costs per job against a local one (BENCHMARKS.md, "A fleet:
# a remote worker's cost per job"), on the real binaries over loopback:
#   - local: `physiojudge serve --workers 1` (the worker in the server's process);
#   - fleet: `physiojudge serve --workers 0 --queue nats://…` and a
#     `physiojudge worker --slots 1 --poll 3600` process, so that it takes a job only
#     when rung over NATS JetStream (the machine's, 127.0.0.1:4222; the stream
#     PHYSIOJUDGE_BENCH, reused by every run).
# Both on SQLite state folders and the same synthetic CinC 2017 data (40 records); the
# trivial entry submitted to each in turn (who goes first alternates), each once the
# one before is scored, so both workers are idle at every upload. Times are the
# submission's state history: queued -> running (the notice or the wake-up, and the
# take), running -> scored (for the remote worker: the entry's download, the judge,
# the result folder's upload and the report), and queued -> scored.
# Needs root and the runtime (`physiojudge runtime setup`); run it under
# `flock /tmp/physiojudge-sandbox.lock` on a shared machine (sandbox slots 0 and 1).
#
#   scripts/bench-fleet.sh [SUBMISSIONS]     (default 30, after 2 warm-up ones each)
#
# `rush` (BENCHMARKS.md, "A fleet under a rush"): SUBMISSIONS uploads at once against
# two remote workers, first behind one server, then behind two replicas on one
# PostgreSQL database and state folder; see scripts/bench-fleet-rush.py.
#
#   scripts/bench-fleet.sh rush [SUBMISSIONS] [TEAMS]   (default 1000 and 16)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pj="${PHYSIOJUDGE:-$root/target/release/physiojudge}"
[ -x "$pj" ] || { echo "no physiojudge at $pj (cargo build --release -p physiojudge)" >&2; exit 2; }
if [ "${1:-}" = rush ]; then
    exec python3 -u "$root/scripts/bench-fleet-rush.py" "$pj" "${2:-1000}" "${3:-16}"
fi
exec python3 - "$pj" "${1:-30}" <<'PY'
import datetime, http.client, io, json, os, shutil, statistics, subprocess, sys, tempfile
import time, zipfile

pj = sys.argv[1]
n = int(sys.argv[2])
tmp = tempfile.mkdtemp(prefix="bench-fleet-")
procs = []

def run(*args):
    r = subprocess.run([pj, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"physiojudge {' '.join(args)}: {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r.stdout

def load():
    return "load average %.1f %.1f %.1f" % os.getloadavg()

def at(h):
    return datetime.datetime.fromisoformat(h["at"].replace("Z", "+00:00")).timestamp()

class Server:
    def __init__(self, name, args):
        self.state = os.path.join(tmp, name)
        self.token = run("admin", "--state", self.state, "user", "add", "boss",
                         "--organiser").strip()
        self.proc = subprocess.Popen(
            [pj, "serve", "--state", self.state, "--listen", "127.0.0.1:0", *args],
            stdout=subprocess.PIPE, stderr=open(os.path.join(tmp, name + ".log"), "w"),
            text=True)
        procs.append(self.proc)
        line = self.proc.stdout.readline()
        self.base = "http://" + line.split("http://")[1].split("/")[0]
        host, port = self.base[7:].split(":")
        self.conn = http.client.HTTPConnection(host, int(port))

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

    def setup(self, data):
        s, b = self.call("POST", "/api/v1/challenges", self.token,
                         {"id": "cinc2017", "definition": "cinc2017", "data": data})
        assert s == 201, (s, b)
        now = datetime.datetime.now(datetime.timezone.utc)
        s, b = self.call("POST", "/api/v1/challenges/cinc2017/phases", self.token,
                         {"name": "open", "opens": (now - datetime.timedelta(days=1)).isoformat(),
                          "closes": (now + datetime.timedelta(days=30)).isoformat(),
                          "scored_split": "exam", "show_exam": True, "rule": "best"})
        assert s == 201, (s, b)
        s, b = self.call("POST", "/api/v1/users", self.token,
                         {"name": "alice", "role": "participant", "password": "correct horse"})
        assert s == 201, (s, b)
        self.alice = b["token"]
        s, b = self.call("POST", "/api/v1/teams", self.alice,
                         {"name": "Alpha", "challenge": "cinc2017"})
        assert s == 201, (s, b)

    def judge(self, archive):
        s, b = self.call("POST", "/api/v1/challenges/cinc2017/submissions", self.alice,
                         archive, "application/octet-stream")
        assert s == 201, (s, b)
        sub = b["id"]
        while True:
            s, b = self.call("GET", f"/api/v1/submissions/{sub}", self.token)
            assert s == 200, (s, b)
            if b["state"] in ("scored", "failed", "error", "withdrawn"):
                break
            time.sleep(0.02)
        assert b["state"] == "scored", b
        hist = b["organiser"]["history"]
        q = at(next(h for h in hist if h["to"] == "queued"))
        r = at(next(h for h in hist if h["to"] == "running"))
        return r - q, at(hist[-1]) - r, at(hist[-1]) - q

def zipped(files):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in files:
            z.writestr(name, text)
    return buf.getvalue()

trivial = zipped([("setup.sh", "#!/bin/bash\ntrue\n"),
                  ("next.sh", '#!/bin/bash\necho "$1,N" >> answers.txt\n'),
                  ("answers.txt", "# no submitted answers\n"), ("dependencies.txt", "# none\n"),
                  ("AUTHORS.txt", "bench\n"), ("LICENSE.txt", "MIT\n")])
queue = "nats://127.0.0.1:4222/PHYSIOJUDGE_BENCH"
try:
    data = os.path.join(tmp, "data")
    run("synth", "cinc2017", "--seed", "1", "--out", data)
    print(f"physiojudge: {pj}; {os.cpu_count()} CPUs; {load()}")
    local = Server("local", ["--workers", "1", "--first-slot", "0"])
    fleet = Server("fleet", ["--workers", "0", "--queue", queue])
    for s in (local, fleet):
        s.setup(data)
    st, b = fleet.call("POST", "/api/v1/workers", fleet.token, {"name": "remote"})
    assert st == 201, (st, b)
    worker = subprocess.Popen(
        [pj, "worker", "--server", fleet.base, "--queue", queue, "--token", b["token"],
         "--slots", "1", "--first-slot", "1", "--state", os.path.join(tmp, "worker"),
         "--poll", "3600"],
        stdout=subprocess.PIPE, stderr=open(os.path.join(tmp, "worker.log"), "w"), text=True)
    procs.append(worker)
    print(worker.stdout.readline().strip())
    # NATS is dialled in the background: give it a moment before timing notices.
    time.sleep(2)
    got = {"local": [], "fleet": []}
    for i in range(n + 2):
        order = (("local", local), ("fleet", fleet))
        for name, srv in (order if i % 2 == 0 else order[::-1]):
            t = srv.judge(trivial)
            if i >= 2:
                got[name].append(t)
    print(f"\n{n} submissions each, alternating ({load()}):")
    med = {}
    for name in ("local", "fleet"):
        cols = list(zip(*got[name]))
        med[name] = [statistics.median(c) for c in cols]
        print(f"  {name}: queued -> running median {med[name][0]*1e3:.1f} ms "
              f"(max {max(cols[0])*1e3:.1f}); running -> scored median {med[name][1]*1e3:.0f} ms "
              f"({min(cols[1])*1e3:.0f}-{max(cols[1])*1e3:.0f}); queued -> scored median "
              f"{med[name][2]*1e3:.0f} ms")
    for k, what in enumerate(("queued -> running", "running -> scored", "queued -> scored")):
        print(f"  fleet / local, {what}: ratio of medians {med['fleet'][k] / med['local'][k]:.2f}, "
              f"difference {(med['fleet'][k] - med['local'][k])*1e3:+.1f} ms")
finally:
    for p in procs:
        if p.poll() is None:
            p.terminate()
            p.wait()
    shutil.rmtree(tmp, ignore_errors=True)
PY
