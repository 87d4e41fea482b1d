"""What the Python client costs a training loop, against the fake server.

Prints, in one run: report() latency while the server answers, beside a
bare keep-alive http.client POST of the same body (the reference: the
server's own cost); report() latency while the server is down; and how
long a backlog built during an outage takes to drain once it is back, in
how many requests. Not a test: nothing is asserted.

Usage: /usr/bin/python3 tests/bench/bench_clients.py [N [C_PROBE]]
With C_PROBE (build/release/tests/clients_probe), also the C client's mean
time per report, one connection each, beside its process doing nothing.
"""
import http.client
import subprocess
import json
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples", "clients", "python"))
sys.path.insert(0, os.path.join(ROOT, "tests", "clients"))

import sweep  # noqa: E402
from fake_metrics_server import PATH, FakeMetricsServer  # noqa: E402


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100.0 * len(xs)))] * 1e3


def line(what, xs):
    print("%-34s p50 %7.3f ms   p99 %7.3f ms   max %7.3f ms"
          % (what, pct(xs, 50), pct(xs, 99), max(xs) * 1e3))


def bare_posts(srv, n):
    conn = http.client.HTTPConnection("127.0.0.1", srv.port)
    headers = {"Authorization": "Bearer " + srv.token,
               "Content-Type": "application/json"}
    times = []
    for i in range(n):
        body = json.dumps({"step": i, "loss": 1.0 / (i + 1), "acc": 0.5})
        t = time.perf_counter()
        conn.request("POST", PATH, body=body, headers=headers)
        conn.getresponse().read()
        times.append(time.perf_counter() - t)
    conn.close()
    return times


def client_reports(c, n, start=0):
    times = []
    for i in range(start, start + n):
        t = time.perf_counter()
        c.report(step=i, loss=1.0 / (i + 1), acc=0.5)
        times.append(time.perf_counter() - t)
    return times


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    d = tempfile.mkdtemp()
    url_file = os.path.join(d, "url")
    srv = FakeMetricsServer(url_file=url_file).start()
    c = sweep.Client(url=srv.url, token=srv.token, url_file=url_file,
                            env={}, max_backoff=1.0)
    print("%d reports of 2 metrics each, fake server on 127.0.0.1" % n)
    line("bare http.client POST (reference)", bare_posts(srv, n))
    line("report(), server up", client_reports(c, n))
    srv.down()
    line("report(), server down", client_reports(c, n, n))
    before = len(srv.sizes_ok)
    srv.up()
    t = time.perf_counter()
    ok = c.flush(120)
    print("backlog of %d reports: delivered=%s in %.3f s, %d requests"
          % (n, ok, time.perf_counter() - t, len(srv.sizes_ok) - before))
    print("values stored %d, reported %d" % (len(srv.records) - n, 2 * n))
    c.close(0)
    if len(sys.argv) > 2:
        c_client(srv, n, sys.argv[2])
    srv.stop()


def c_client(srv, n, probe):
    env = dict(os.environ, SWEEP_METRICS_URL=srv.url, SWEEP_TOKEN=srv.token)
    walls = []
    for args in (["sleep:0"] * n,
                 ["%d:loss=%r,acc=0.5" % (i, 1.0 / (i + 1)) for i in range(n)]):
        t = time.perf_counter()
        subprocess.run([probe] + args, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
        walls.append(time.perf_counter() - t)
    print("C sweep_report(), server up        mean %7.3f ms per report "
          "(the probe alone: %.3f s for %d no-ops)"
          % ((walls[1] - walls[0]) / n * 1e3, walls[0], n))


if __name__ == "__main__":
    main()
