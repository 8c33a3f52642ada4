"""A fleet under a rush (BENCHMARKS.md, "A fleet under a rush"), on the real binaries.

SUBMISSIONS uploads of the trivial entry, sent at once by TEAMS threads (one team
each, over keep-alive connections), judged by two `physiojudge worker --slots 1
--poll 3600` processes that take a job when rung over the machine's NATS JetStream:

  - one server: `serve --workers 0` on PostgreSQL, both workers on it;
  - two replicas: `serve --replica a` and `serve --replica b` on one PostgreSQL
    database and one state folder, no local slots; upload threads and workers split
    between them (thread i and worker i on replica i mod 2: the clients spread
    themselves, no proxy process in the way).

Measured: each upload's time (request to `201`), p50 and p99; the drain rate (all
submissions scored, from the first upload to the last score); the take answers the
servers counted (`/metrics`: 200 a job, 204 an empty take) and what the workers say
when stopped. In the same run, the same entry judged by `physiojudge evaluate` one at
a time on the same data: what the fleet's drain rate is held against.

Run by `scripts/bench-fleet.sh rush [SUBMISSIONS] [TEAMS]`; needs root, the runtime,
PostgreSQL (127.0.0.1:5432, user postgres) and NATS (127.0.0.1:4222). Sandbox slots 0
and 1 (PHYSIOJUDGE_BENCH_FIRST_SLOT=K: K and K + 1): run it under
`flock /tmp/physiojudge-sandbox.lock` on a shared machine, or on slots of its own.
PHYSIOJUDGE_BENCH_ONLY=server (or =replicas) runs one of the two set-ups.
"""

import http.client, io, json, os, re, shutil, statistics, subprocess, sys, tempfile
import threading, time, uuid, zipfile, datetime

pj, n, teams = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tmp = tempfile.mkdtemp(prefix="bench-rush-")
procs, databases = [], []
PG = "postgres://postgres@127.0.0.1:5432"
# The workers' sandbox slots: FIRST and FIRST + 1 (evaluate uses FIRST).
FIRST = int(os.environ.get("PHYSIOJUDGE_BENCH_FIRST_SLOT", "0"))


def run(*args):
    r = subprocess.run([pj, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"physiojudge {' '.join(args)}: {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r.stdout


def load():
    return "load average %.1f %.1f %.1f" % os.getloadavg()


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


class Api:
    def __init__(self, base, token):
        host, port = base[len("http://"):].split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=120)
        self.token = token

    def call(self, method, path, body=None, ctype="application/json", token=None):
        headers = {"Authorization": f"Bearer {token or self.token}"}
        if body is not None:
            headers["Content-Type"] = ctype
            if ctype == "application/json":
                body = json.dumps(body).encode()
        self.conn.request(method, path, body=body, headers=headers)
        r = self.conn.getresponse()
        data = r.read()
        if r.headers.get_content_type() == "application/json" and data:
            return r.status, json.loads(data)
        return r.status, data.decode(errors="replace")


def serve(name, state, db, queue, extra):
    log = open(os.path.join(tmp, name + ".log"), "w")
    p = subprocess.Popen([pj, "serve", "--state", state, "--database", db, "--listen",
                          "127.0.0.1:0", "--workers", "0", "--queue", queue, *extra],
                         stdout=subprocess.PIPE, stderr=log, text=True)
    procs.append(p)
    line = p.stdout.readline()
    return p, "http://" + line.split("http://")[1].split("/")[0]


def worker(base, queue, token, slot):
    p = subprocess.Popen([pj, "worker", "--server", base, "--queue", queue, "--token", token,
                          "--slots", "1", "--first-slot", str(slot), "--state",
                          os.path.join(tmp, f"worker-{uuid.uuid4().hex[:8]}"), "--poll", "3600"],
                         stdout=subprocess.PIPE,
                         stderr=open(os.path.join(tmp, f"worker-{slot}.log"), "a"), text=True)
    procs.append(p)
    first = p.stdout.readline()
    assert "taking jobs from" in first, first
    return p


def takes(metrics):
    got = {}
    for status in ("200", "204"):
        m = re.search(r'physiojudge_http_requests_total\{method="POST",'
                      r'route="/api/v1/queue/take",status="' + status + r'"\} (\d+)', metrics)
        got[status] = int(m.group(1)) if m else 0
    return got


def rush(label, replicas, archive, data):
    db_name = f"bench_rush_{uuid.uuid4().hex[:12]}"
    subprocess.run(["createdb", "-h", "127.0.0.1", "-U", "postgres", db_name], check=True)
    databases.append(db_name)
    db = f"{PG}/{db_name}"
    state = os.path.join(tmp, label)
    boss = run("admin", "--state", state, "--database", db, "user", "add", "boss",
               "--organiser").strip()
    queue = "nats://127.0.0.1:4222/PHYSIOJUDGE_RUSH"
    names = ["a", "b"] if replicas else [None]
    servers = []
    for r in names:
        extra = ["--replica", r] if r else []
        servers.append(serve(f"{label}-{r or 'server'}", state, db, queue, extra))
    bases = [b for _, b in servers]
    org = Api(bases[0], boss)
    s, b = org.call("POST", "/api/v1/challenges",
                    {"id": "cinc2017", "definition": "cinc2017", "data": data})
    assert s == 201, (s, b)
    now = datetime.datetime.now(datetime.timezone.utc)
    s, b = org.call("POST", "/api/v1/challenges/cinc2017/phases",
                    {"name": "open", "opens": (now - datetime.timedelta(days=1)).isoformat(),
                     "closes": (now + datetime.timedelta(days=30)).isoformat(),
                     "scored_split": "exam", "show_exam": True, "rule": "best"})
    assert s == 201, (s, b)
    tokens = []
    for i in range(teams):
        s, b = org.call("POST", "/api/v1/users", {"name": f"p{i}", "role": "participant"})
        assert s == 201, (s, b)
        t = b["token"]
        s, b = org.call("POST", "/api/v1/teams", {"name": f"Team {i}", "challenge": "cinc2017"},
                        token=t)
        assert s == 201, (s, b)
        tokens.append(t)
    workers = []
    for i in range(2):
        s, b = org.call("POST", "/api/v1/workers", {"name": f"remote-{i}"})
        assert s == 201, (s, b)
        workers.append(worker(bases[i % len(bases)], queue, b["token"], FIRST + i))
    time.sleep(2)  # NATS is dialled in the background.

    times = []
    lock = threading.Lock()
    per = [n // teams + (1 if i < n % teams else 0) for i in range(teams)]

    def upload(i):
        api = Api(bases[i % len(bases)], tokens[i])
        mine = []
        for _ in range(per[i]):
            t0 = time.monotonic()
            s, b = api.call("POST", "/api/v1/challenges/cinc2017/submissions", archive,
                            "application/octet-stream")
            mine.append(time.monotonic() - t0)
            assert s == 201, (s, b)
        with lock:
            times.extend(mine)

    start = time.monotonic()
    threads = [threading.Thread(target=upload, args=(i,)) for i in range(teams)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    uploaded = time.monotonic() - start
    watch = Api(bases[-1], boss)
    while True:
        s, m = watch.call("GET", "/metrics")
        assert s == 200, (s, m)
        done = {k: int(v) for k, v in re.findall(
            r'physiojudge_submissions\{state="(\w+)"\} (\d+)', m)}
        if done.get("scored", 0) + done.get("failed", 0) + done.get("error", 0) >= n:
            break
        time.sleep(0.2)
    drained = time.monotonic() - start
    assert done.get("scored", 0) == n, done
    counted = {"200": 0, "204": 0}
    for base in bases:
        s, m = Api(base, boss).call("GET", "/metrics")
        for k, v in takes(m).items():
            counted[k] += v
    said = []
    for p in workers:
        p.terminate()
        out, _ = p.communicate(timeout=60)
        said += [l.strip() for l in out.splitlines() if l.startswith("takes:")]
    for p, _ in servers:
        p.terminate()
        p.wait()
    return {"label": label, "uploaded_s": uploaded, "drained_s": drained,
            "p50_ms": pct(times, 0.5) * 1e3, "p99_ms": pct(times, 0.99) * 1e3,
            "max_ms": max(times) * 1e3, "rate": n / drained, "takes": counted, "said": said}


def zipped(files):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in files:
            z.writestr(name, text)
    return buf.getvalue()


files = [("setup.sh", "#!/bin/bash\ntrue\n"),
         ("next.sh", '#!/bin/bash\necho "$1,N" >> answers.txt\n'),
         ("answers.txt", "# no submitted answers\n"), ("dependencies.txt", "# none\n"),
         ("AUTHORS.txt", "bench\n"), ("LICENSE.txt", "MIT\n")]
try:
    data = os.path.join(tmp, "data")
    run("synth", "cinc2017", "--seed", "1", "--out", data)
    entry = os.path.join(tmp, "entry")
    os.makedirs(entry)
    for name, text in files:
        with open(os.path.join(entry, name), "w") as f:
            f.write(text)
    archive = zipped(files)
    print(f"physiojudge: {pj}; {os.cpu_count()} CPUs; {n} submissions, {teams} teams; {load()}")
    seq = []
    for i in range(30):
        t0 = time.monotonic()
        run("evaluate", "--challenge", "cinc2017", "--entry", entry, "--data", data,
            "--slot", str(FIRST), "--out", os.path.join(tmp, f"eval-{i}"))
        seq.append(time.monotonic() - t0)
    seq_rate = 1 / statistics.mean(seq)
    print(f"sequential evaluate, 30 runs: median {statistics.median(seq)*1e3:.0f} ms, "
          f"{seq_rate:.2f} jobs/s ({load()})")
    # PHYSIOJUDGE_BENCH_ONLY=server or =replicas: one of the two set-ups.
    only = os.environ.get("PHYSIOJUDGE_BENCH_ONLY")
    for replicas in (False, True):
        if only and only != ("replicas" if replicas else "server"):
            continue
        r = rush("replicas" if replicas else "server", replicas, archive, data)
        t = r["takes"]
        print(f"{r['label']}: uploads p50 {r['p50_ms']:.0f} ms, p99 {r['p99_ms']:.0f} ms "
              f"(max {r['max_ms']:.0f}), all sent in {r['uploaded_s']:.1f} s; drained in "
              f"{r['drained_s']:.1f} s = {r['rate']:.2f} jobs/s = {r['rate']/seq_rate:.2f}x "
              f"sequential evaluate; takes: {t['200']} jobs, {t['204']} empty "
              f"({t['204']/max(1, t['200']):.3f} empty per job) ({load()})")
        for l in r["said"]:
            print(f"  worker {l}")
finally:
    for p in procs:
        if p.poll() is None:
            p.terminate()
            p.wait()
    for d in databases:
        subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", "--if-exists", d])
    shutil.rmtree(tmp, ignore_errors=True)
