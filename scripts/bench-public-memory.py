#!/usr/bin/env python3
"""Peak RSS (VmHWM) of a real `physiojudge serve` under the bursts of docs/service.md,
"Running it in public": N concurrent sign-ins with wrong passwords, M concurrent
sign-ups, and one large form field. Traffic only to 127.0.0.1; every loop is bounded.

Usage: scripts/bench-public-memory.py PATH/TO/physiojudge [SIGNINS] [SIGNUPS]
HASH_WAIT_SECS=300 lets every request wait for its hash (default: serve's 5 s, past
which most of a burst is answered 503 on a loaded machine).
"""
import http.client, os, re, subprocess, sys, tempfile, threading, time, urllib.parse

exe = sys.argv[1]
signins = int(sys.argv[2]) if len(sys.argv) > 2 else 64
signups = int(sys.argv[3]) if len(sys.argv) > 3 else 32
# "unknown": sign in as a name that does not exist (no hash: the cost of the requests alone)
NAME = (b'{"name":"nobody","password":"wrong password"}' if sys.argv[4:] == ["unknown"]
        else b'{"name":"target","password":"wrong password"}')

def hwm(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return 0

def request(port, method, path, body=b"", headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, r.getheader("set-cookie") or "", data

def signup_form(port):
    s, cookie, page = request(port, "GET", "/signup")
    pre = re.search(r"pj_pre=([0-9a-f]+)", cookie).group(1)
    csrf = re.search(rb'name="csrf" value="([0-9a-f]+)"', page).group(1).decode()
    return pre, csrf

def signup(port, name, out):
    pre, csrf = signup_form(port)
    body = urllib.parse.urlencode({"csrf": csrf, "name": name, "password": "long enough pass"})
    s, _, _ = request(port, "POST", "/signup", body.encode(),
                      {"cookie": f"pj_pre={pre}", "content-type": "application/x-www-form-urlencoded"})
    out.append(s)

def signin(port, out):
    s, _, _ = request(port, "POST", "/api/v1/tokens", NAME,
                      {"content-type": "application/json"})
    out.append(s)

def burst(fn, n):
    out = []
    ts = [threading.Thread(target=fn, args=(out,)) for _ in range(n)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    return sorted(out)

state = tempfile.mkdtemp(prefix="pj-bench-public-")
port = 18000 + os.getpid() % 1000
p = subprocess.Popen([exe, "serve", "--state", state, "--workers", "0", "--listen", f"127.0.0.1:{port}",
                      "--login-tries-per-name", "0", "--login-tries-per-address", "0",
                      "--signups-per-address", "0",
                      "--hash-wait-secs", os.environ.get("HASH_WAIT_SECS", "5")],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for _ in range(100):
        try:
            request(port, "GET", "/healthz"); break
        except OSError:
            time.sleep(0.1)
    out = []
    signup(port, "target", out)
    base = hwm(p.pid)
    print(f"after start and one sign-up: VmHWM {base} MB")
    r = burst(lambda o: signin(port, o), signins)
    after = hwm(p.pid)
    print(f"{signins} concurrent sign-ins: +{after - base} MB (statuses {dict((s, r.count(s)) for s in set(r))})")
    n = [0]
    lock = threading.Lock()
    def one(o):
        with lock:
            n[0] += 1; i = n[0]
        signup(port, f"bench{i}", o)
    base = after
    r = burst(one, signups)
    after = hwm(p.pid)
    print(f"{signups} concurrent sign-ups: +{after - base} MB (statuses {dict((s, r.count(s)) for s in set(r))})")
finally:
    p.terminate(); p.wait()
