#!/usr/bin/env bash
# The abuse benchmark of issue 32 (BENCHMARKS.md, "Open to the public: the abuse
# benchmark"), against one real `physiojudge serve` on SQLite with its default limits:
#
#   bounds   measured one at a time on the quiet server: peak RSS (VmHWM) after one
#            256 MiB form field; bytes written for one refused archive bomb; how long
#            300 half-sent requests stay open; /healthz latency and another user's
#            answers while one participant holds 1,100 event-stream requests.
#   phases   HONEST clients (default 50) read the leaderboards (API and page), read a
#            judged submission and follow its event stream, while one client submits an
#            entry and follows it until it is judged; first alone ("quiet"), then with
#            an attacker mixing every attack above plus sign-in and sign-up bursts
#            ("attacked"), then alone again ("after"). Each phase reports the honest
#            requests' p50/p99, their failures, and the server's VmHWM and VmRSS.
#
# Traffic goes to 127.0.0.1 only: honest clients from 127.0.0.1, the attacker from
# other loopback addresses (127.0.1.x), as separate clients would be. Every loop is
# bounded by the phase's time. Needs root and the runtime (`physiojudge runtime setup`)
# to judge; JUDGE=0 runs with no worker (nothing judged: the leaderboard is empty).
# On a shared machine, run it under `flock /tmp/physiojudge-sandbox.lock`.
#
#   scripts/bench-abuse.sh [SECONDS_PER_PHASE] [HONEST]        (default 30 50)
#   PHYSIOJUDGE=target/debug/physiojudge scripts/bench-abuse.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
pj="${PHYSIOJUDGE:-$root/target/release/physiojudge}"
[ -x "$pj" ] || { echo "no physiojudge at $pj (cargo build --release -p physiojudge)" >&2; exit 2; }
exec python3 - "$pj" "${1:-30}" "${2:-50}" "${JUDGE:-1}" <<'PY'
import datetime, http.client, io, json, multiprocessing, os, random, re, selectors, shutil
import socket
import statistics, subprocess, sys, tarfile, tempfile, threading, time, urllib.parse, zipfile

pj = sys.argv[1]
phase_s, n_honest, judge = float(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
tmp = tempfile.mkdtemp(prefix="bench-abuse-")
CH, QUEUED = "cinc2017", "cpsc2021"

def run(*args):
    r = subprocess.run([pj, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"physiojudge {' '.join(args)}: {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r.stdout

def status(pid, key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) // 1024
    return 0

def wchar(pid):
    for line in open(f"/proc/{pid}/io"):
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0

def cpu(pid):
    """CPU seconds of the server's threads: all of them, and its password-hash ones."""
    tick = os.sysconf("SC_CLK_TCK")
    total = hashing = 0.0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            f = open(f"/proc/{pid}/task/{t}/stat").read()
        except OSError:
            continue
        name = f[f.index("(") + 1:f.rindex(")")]
        rest = f[f.rindex(")") + 2:].split()
        s = (int(rest[11]) + int(rest[12])) / tick
        total += s
        if name.startswith("password-hash"):
            hashing += s
    return total, hashing

def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else float("nan")

def ms(v):
    return f"{v * 1e3:.1f} ms"

# --- the server ------------------------------------------------------------------------
state = os.path.join(tmp, "state")
boss = run("admin", "--state", state, "user", "add", "boss", "--organiser").strip()
# Followers of the judged submission: organisers (they see every submission); several, as
# the live-stream cap is per user (16) and 50 honest clients follow at once.
followers = [run("admin", "--state", state, "user", "add", f"follower{i}", "--organiser").strip()
             for i in range(5)]
log = open(os.path.join(tmp, "serve.log"), "w")
proc = subprocess.Popen([pj, "serve", "--state", state, "--listen", "127.0.0.1:0",
                         "--workers", "1" if judge else "0"],
                        stdout=subprocess.PIPE, stderr=log, text=True)
line = proc.stdout.readline()
HOST, PORT = line.split("http://")[1].split("/")[0].split(":")
PORT = int(PORT)
PID = proc.pid

def conn(src="127.0.0.1", timeout=60):
    return http.client.HTTPConnection(HOST, PORT, timeout=timeout, source_address=(src, 0))

def call(method, path, token=None, body=None, ctype="application/json", src="127.0.0.1",
         headers=None, c=None):
    h = dict(headers or {})
    if token:
        h["Authorization"] = f"Bearer {token}"
    if body is not None:
        h["Content-Type"] = ctype
        if ctype == "application/json":
            body = json.dumps(body).encode()
    own = c is None
    c = c or conn(src)
    try:
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        return r.status, data, r
    finally:
        if own:
            c.close()

def ok(s, b, want=(200, 201)):
    assert s in want, (s, b[:400])
    return json.loads(b) if b else None

def zipped(files):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            z.writestr(name, data)
    return buf.getvalue()

# The demo's trivial cinc2017 entry (every record N).
ENTRY = zipped([("setup.sh", "#!/bin/bash\ntrue\n"),
                ("next.sh", '#!/bin/bash\necho "$1,N" >> answers.txt\n'),
                ("answers.txt", "# no submitted answers\n"), ("dependencies.txt", "# none\n"),
                ("AUTHORS.txt", "bench\n"), ("LICENSE.txt", "MIT\n")])

def user(name, password="correct horse battery"):
    b = ok(*call("POST", "/api/v1/users", boss,
                 {"name": name, "role": "participant", "password": password})[:2])
    return b["token"]

def wait_final(sub, token, limit=600):
    end = time.time() + limit
    while time.time() < end:
        b = ok(*call("GET", f"/api/v1/submissions/{sub}", token)[:2])
        if b["state"] in ("scored", "failed", "withdrawn"):
            return b
        time.sleep(0.2)
    sys.exit(f"submission {sub} not judged in {limit} s")

try:
    now = datetime.datetime.now(datetime.timezone.utc)
    for ch in (CH, QUEUED):
        data = os.path.join(tmp, "data-" + ch)
        run("synth", ch, "--seed", "1", "--out", data)
        ok(*call("POST", "/api/v1/challenges", boss, {"id": ch, "definition": ch,
                                                        "data": data})[:2])
        ok(*call("POST", f"/api/v1/challenges/{ch}/phases", boss,
                 {"name": "open", "opens": (now - datetime.timedelta(days=1)).isoformat(),
                  "closes": (now + datetime.timedelta(days=30)).isoformat(),
                  "scored_split": "exam", "show_exam": True, "rule": "best"})[:2])
    # Nothing of the second challenge is judged: the attacker's streams there stay live.
    ok(*call("POST", f"/api/v1/challenges/{QUEUED}/pause", boss, {})[:2], want=(200, 204))
    alice = user("alice")
    ok(*call("POST", "/api/v1/teams", alice, {"name": "Alpha", "challenge": CH})[:2])
    mallory = user("mallory", "mallory's password")
    ok(*call("POST", "/api/v1/teams", mallory, {"name": "Mallet", "challenge": QUEUED})[:2])
    sub = ok(*call("POST", f"/api/v1/challenges/{CH}/submissions", alice, ENTRY,
                   "application/octet-stream")[:2])["id"]
    if judge:
        done = wait_final(sub, alice)
        print(f"judged submission: {done['state']} {done.get('scores')}")
    target = ok(*call("POST", f"/api/v1/challenges/{QUEUED}/submissions", mallory, ENTRY,
                      "application/octet-stream")[:2])["id"]

    # Mallory's web session (the cookie is a token) and the upload form's CSRF token.
    s, page, _ = call("GET", f"/challenges/{QUEUED}/submit",
                      headers={"cookie": f"pj_session={mallory}"})
    m = re.search(rb'name="csrf" value="([^"]+)"', page)
    assert s == 200 and m, (s, page[:300])
    CSRF = m.group(1).decode()
    print(f"physiojudge: {pj}; pid {PID}; {os.cpu_count()} CPUs; "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"after setup: VmHWM {status(PID, 'VmHWM')} MB, VmRSS {status(PID, 'VmRSS')} MB")

    # --- the attacks, each a function the bounds and the attacker share -----------------
    BOUNDARY = "abusebenchboundary"

    def big_field(src, size=256 << 20):
        """The upload form with a good CSRF token first, then a `method` field of `size`
        bytes sent as it is made (never held whole here). Returns the status, or the
        error when the server closed first."""
        head = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n"
                f"{CSRF}\r\n--{BOUNDARY}\r\nContent-Disposition: form-data; "
                f"name=\"method\"\r\n\r\n").encode()
        tail = f"\r\n--{BOUNDARY}--\r\n".encode()
        c = conn(src, timeout=30)
        try:
            c.putrequest("POST", f"/challenges/{QUEUED}/submit")
            c.putheader("cookie", f"pj_session={mallory}")
            c.putheader("content-type", f"multipart/form-data; boundary={BOUNDARY}")
            c.putheader("content-length", str(len(head) + size + len(tail)))
            c.endheaders()
            c.send(head)
            chunk = b"m" * (1 << 20)
            for _ in range(size >> 20):
                c.send(chunk)
            c.send(tail)
            r = c.getresponse()
            r.read()
            return r.status
        except OSError as e:
            # The server answered 413 and closed while this was still sending; read the
            # answer if it is there.
            try:
                r = c.getresponse()
                return r.status
            except Exception:
                return type(e).__name__
        finally:
            c.close()

    def bomb():
        """A .tar.gz of 480 MiB of zeros whose last member leaves the folder."""
        class Zeros(io.RawIOBase):
            def __init__(self, n): self.n = n
            def readable(self): return True
            def readinto(self, b):
                k = min(len(b), self.n); b[:k] = bytes(k); self.n -= k; return k
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=9) as t:
            for name, size in (("zeros.bin", 480 << 20), ("../escape", 1)):
                info = tarfile.TarInfo(name); info.size = size
                t.addfile(info, Zeros(size))
        return buf.getvalue()

    BOMB = bomb()

    def send_bomb(src):
        s, b, _ = call("POST", f"/api/v1/challenges/{QUEUED}/submissions", mallory, BOMB,
                       "application/octet-stream", src=src)
        return s

    def half_open(n, src):
        socks = []
        for _ in range(n):
            k = socket.create_connection((HOST, PORT), source_address=(src, 0))
            k.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            socks.append(k)
        return socks

    STREAM_REQ = (f"GET /api/v1/submissions/{target}/events HTTP/1.1\r\nHost: x\r\n"
                  f"Authorization: Bearer {mallory}\r\nAccept: text/event-stream\r\n\r\n").encode()

    def streams(n, src):
        socks = []
        for _ in range(n):
            k = socket.create_connection((HOST, PORT), source_address=(src, 0))
            k.sendall(STREAM_REQ)
            socks.append(k)
        return socks

    def first_lines(socks, limit=10):
        """The status of each socket's answer (None: none within the limit)."""
        got, sel = {}, selectors.DefaultSelector()
        for k in socks:
            k.setblocking(False)
            sel.register(k, selectors.EVENT_READ)
        end = time.time() + limit
        while len(got) < len(socks) and time.time() < end:
            for key, _ in sel.select(timeout=0.2):
                k = key.fileobj
                try:
                    d = k.recv(256)
                except OSError:
                    d = b""
                got[k] = int(d.split()[1]) if d.startswith(b"HTTP/1.1 ") else "closed"
                sel.unregister(k)
        sel.close()
        return [got.get(k) for k in socks]

    def healthz_latencies(seconds, src="127.0.0.1"):
        out = []
        end = time.time() + seconds
        while time.time() < end:
            t = time.perf_counter()
            try:
                s, _, _ = call("GET", "/healthz", src=src)
                out.append((time.perf_counter() - t, s))
            except OSError as e:
                out.append((time.perf_counter() - t, type(e).__name__))
            time.sleep(0.05)
        return out

    # --- bounds, one at a time on the quiet server --------------------------------------
    print("\nbounds")
    h0 = status(PID, "VmHWM")
    st = big_field("127.0.1.1")
    h1 = status(PID, "VmHWM")
    print(f"  256 MiB form field: answer {st}; VmHWM {h0} -> {h1} MB (+{h1 - h0} MB)")

    w0, h0, c0, t0 = wchar(PID), status(PID, "VmHWM"), cpu(PID)[0], time.perf_counter()
    st = send_bomb("127.0.1.2")
    w1, h1, c1, t1 = wchar(PID), status(PID, "VmHWM"), cpu(PID)[0], time.perf_counter()
    print(f"  refused bomb ({len(BOMB)} bytes, 480 MiB inside): answer {st}; "
          f"bytes written by the server {w1 - w0} ({(w1 - w0) / len(BOMB):.2f}x its size); "
          f"VmHWM +{h1 - h0} MB; answered in {t1 - t0:.1f} s, server CPU {c1 - c0:.1f} s")

    t0 = time.time()
    socks = half_open(300, "127.0.1.3")
    sent = time.time() - t0
    sel = selectors.DefaultSelector()
    for k in socks:
        k.setblocking(False); sel.register(k, selectors.EVENT_READ)
    closed = []
    while len(closed) < len(socks) and time.time() - t0 < 30:
        for key, _ in sel.select(timeout=0.5):
            try:
                d = key.fileobj.recv(4096)
            except OSError:
                d = b""
            if not d:
                closed.append(time.time() - t0); sel.unregister(key.fileobj)
    sel.close()
    [k.close() for k in socks]
    print(f"  300 half-sent requests (sent in {sent:.2f} s): {len(closed)} closed by the server, "
          f"first after {min(closed):.1f} s, last after {max(closed):.1f} s "
          f"(header timeout 10 s)" if closed else "  300 half-sent requests: none closed in 30 s")

    socks = streams(1100, "127.0.1.4")
    other = []
    def other_user():
        end = time.time() + 5
        while time.time() < end:
            t = time.perf_counter()
            s, _, _ = call("GET", f"/api/v1/challenges/{CH}/leaderboard", alice)
            s2, _, _ = call("GET", f"/api/v1/submissions/{sub}", alice)
            other.append((time.perf_counter() - t, (s, s2)))
    th = threading.Thread(target=other_user); th.start()
    lat = healthz_latencies(5, "127.0.0.1")
    th.join()
    answers = first_lines(socks, 5)
    counts = {str(a): answers.count(a) for a in set(answers)}
    good = [d for d, s in lat if s == 200]
    print(f"  1,100 stream requests from one participant: answers {counts}; "
          f"/healthz meanwhile: {len(good)}/{len(lat)} answered 200, median {ms(statistics.median(good))}, "
          f"p99 {ms(pct(good, .99))}, max {ms(max(good))}; another user's leaderboard + submission: "
          f"{sum(1 for _, s in other if s == (200, 200))}/{len(other)} answered, "
          f"median {ms(statistics.median([d for d, _ in other]))}, max {ms(max(d for d, _ in other))}")
    [k.close() for k in socks]
    time.sleep(1)

    # --- honest clients and the attacker --------------------------------------------------
    def honest(i, until, rec):
        c = None
        follower = followers[i % len(followers)]
        kinds = ["api_board", "page_board", "submission", "follow"]
        n = i
        while time.time() < until:
            kind = kinds[n % len(kinds)]; n += 1
            t = time.perf_counter()
            try:
                if kind == "follow":
                    # A stream of its own connection: it ends after the final state.
                    s, b, _ = call("GET", f"/api/v1/submissions/{sub}/events", follower)
                else:
                    c = c or conn()
                    path, tok = {"api_board": (f"/api/v1/challenges/{CH}/leaderboard", None),
                                 "page_board": (f"/challenges/{CH}/leaderboard", None),
                                 "submission": (f"/api/v1/submissions/{sub}", follower)}[kind]
                    s, b, r = call("GET", path, tok, c=c)
                    if r.will_close:
                        c.close(); c = None
                rec.append((kind, time.perf_counter() - t, s))
            except (OSError, http.client.HTTPException) as e:
                rec.append((kind, time.perf_counter() - t, type(e).__name__))
                if c:
                    c.close(); c = None
            time.sleep(0.05)
        if c:
            c.close()

    def judged(until, rec):
        """One team submits and follows its entry until it is judged, again and again."""
        while judge and time.time() < until:
            t = time.perf_counter()
            s, b, _ = call("POST", f"/api/v1/challenges/{CH}/submissions", alice, ENTRY,
                           "application/octet-stream")
            up = time.perf_counter() - t
            if s != 201:
                rec.append(("judge_upload", up, s)); time.sleep(1); continue
            sid = json.loads(b)["id"]
            s, _, _ = call("GET", f"/api/v1/submissions/{sid}/events", alice)
            rec.append(("judge_upload", up, 201))
            rec.append(("judged", time.perf_counter() - t, s))

    def attacker(until, rec):
        stop = threading.Event()
        addr = iter(f"127.0.{b}.{a}" for b in range(2, 250) for a in range(1, 255))
        names = ["alice", "mallory", "boss"] + [f"follower{i}" for i in range(5)]
        def note(what, s):
            rec.append((what, s))
        def signins():
            while time.time() < until:
                src = next(addr)
                def one():
                    try:
                        s, _, _ = call("POST", "/api/v1/tokens", None,
                                       {"name": random.choice(names), "password": "guess"},
                                       src=src)
                        note("sign-in", s)
                    except OSError as e:
                        note("sign-in", type(e).__name__)
                ts = [threading.Thread(target=one) for _ in range(64)]
                [t.start() for t in ts]; [t.join() for t in ts]
        def signups():
            k = 0
            while time.time() < until:
                src = next(addr)
                def one(name):
                    try:
                        s, page, r = call("GET", "/signup", src=src)
                        pre = re.search(r"pj_pre=([0-9a-f]+)", r.getheader("set-cookie") or "")
                        csrf = re.search(rb'name="csrf" value="([0-9a-f]+)"', page)
                        body = urllib.parse.urlencode({"csrf": csrf.group(1).decode(), "name": name,
                                                       "password": "long enough pass"}).encode()
                        s, _, _ = call("POST", "/signup", None, body,
                                       "application/x-www-form-urlencoded", src=src,
                                       headers={"cookie": f"pj_pre={pre.group(1)}"})
                        note("sign-up", s)
                    except (OSError, AttributeError) as e:
                        note("sign-up", type(e).__name__)
                ts = []
                for _ in range(32):
                    k += 1
                    ts.append(threading.Thread(target=one, args=(f"bot{k}-{random.randrange(1 << 30)}",)))
                [t.start() for t in ts]; [t.join() for t in ts]
        def fields():
            while time.time() < until:
                note("256 MiB field", big_field(next(addr)))
        def bombs():
            while time.time() < until:
                note("bomb", send_bomb(next(addr)))
                time.sleep(1)
        def stream_flood():
            while time.time() < until:
                socks = streams(1100, next(addr))
                for a in first_lines(socks, 5):
                    note("stream", a)
                [k.close() for k in socks]
        def slow_heads():
            while time.time() < until:
                socks = half_open(300, next(addr))
                time.sleep(min(11, max(0, until - time.time())))
                [k.close() for k in socks]
                note("300 half-sent", "done")
        ts = [threading.Thread(target=f) for f in
              (signins, signups, fields, bombs, stream_flood, slow_heads)]
        [t.start() for t in ts]; [t.join() for t in ts]

    def phase(name, attack):
        until = time.time() + phase_s
        c0 = cpu(PID)
        rec, arec, jrec = [], [], []
        peak = [0]
        def sample():
            while time.time() < until + 1:
                peak[0] = max(peak[0], status(PID, "VmRSS")); time.sleep(0.2)
        ts = [threading.Thread(target=honest, args=(i, until, rec)) for i in range(n_honest)]
        ts.append(threading.Thread(target=judged, args=(until, jrec)))
        ts.append(threading.Thread(target=sample))
        # The attacker is a process of its own (forked: it shares the setup), so that
        # its hundreds of threads and sockets do not take this one's interpreter lock
        # from the honest clients.
        if attack:
            q = multiprocessing.get_context("fork").Queue()
            def attack_then_report():
                out = []
                attacker(until, out)
                q.put(out)
            ap = multiprocessing.get_context("fork").Process(target=attack_then_report)
            ap.start()
        [t.start() for t in ts]; [t.join() for t in ts]
        if attack:
            arec = q.get(timeout=120)
            ap.join()
        good = [d for _, d, s in rec if s == 200]
        bad = [s for _, _, s in rec if s != 200]
        by = {}
        for k, d, s in rec:
            if s == 200:
                by.setdefault(k, []).append(d)
        kinds = ", ".join(f"{k} {ms(statistics.median(v))}/{ms(pct(v, .99))}" for k, v in sorted(by.items()))
        jd = [d for k, d, s in jrec if k == "judged"]
        print(f"\n{name}: {len(rec)} honest requests, {len(bad)} not 200 "
              f"({ {str(s): bad.count(s) for s in set(bad)} }); "
              f"p50 {ms(statistics.median(good))}, p99 {ms(pct(good, .99))}, max {ms(max(good))}")
        print(f"  by kind (p50/p99): {kinds}")
        if jd:
            print(f"  submit-to-judged: {len(jd)} judged, median {statistics.median(jd):.1f} s")
        c1 = cpu(PID)
        print(f"  server CPU in the phase: {c1[0] - c0[0]:.1f} s, of which hashing "
              f"{c1[1] - c0[1]:.1f} s")
        print(f"  server: VmHWM {status(PID, 'VmHWM')} MB, peak VmRSS sampled {peak[0]} MB, "
              f"VmRSS now {status(PID, 'VmRSS')} MB, "
              f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
        if attack:
            summary = {}
            for w, s in arec:
                summary.setdefault(w, {}).setdefault(str(s), 0)
                summary[w][str(s)] += 1
            print(f"  attacker's answers: {summary}")
        time.sleep(12)  # the attacker's connections close (header timeout) before the next

    phase("quiet", False)
    phase("attacked", True)
    phase("after", False)
finally:
    proc.terminate(); proc.wait()
    shutil.rmtree(tmp, ignore_errors=True)
PY
