"""A stand-in for sweep's metrics server, for testing the clients.

Standard library only. It implements the contract of docs/clients.md:
`POST` a JSON object or an array of them with `Authorization: Bearer
TOKEN`; answers 200 {"stop": false|true}, 400 (malformed JSON, a report
that is not an object, a non-numeric value, a bad step), 401 (missing or
unknown token), 403 (another run's token), 404 (another path), 405 (not
POST), 413 (body over `max_body`), and 503 with Retry-After on demand. It
can go down (closing every open connection, as a killed orchestrator
would) and come back on another port, rewriting the URL file the way a
`sweep resume` does, and it records every value it acknowledged, a
step's value of a metric once, as sweep's store keeps it: a report sent
again because its answer was lost (the server went down between taking
it and answering) is acknowledged again, not recorded twice.

Run by hand: python3 fake_metrics_server.py [--stop-after N] prints the
URL and token to use, then serves until Ctrl-C.
"""

import argparse
import json
import os
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PATH = "/v1/metrics"


def _bad_value(obj):
    """Why `obj` is not a report, or None."""
    if not isinstance(obj, dict):
        return "a report is a JSON object"
    step = obj.get("step")
    if "step" in obj and (isinstance(step, bool) or not isinstance(step, int)
                          or step < 0):
        return "step must be a non-negative integer"
    for k, v in obj.items():
        if k != "step" and (not isinstance(v, (int, float))):
            return "metric %r is not a number" % k
    return None


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self):
        super().setup()
        # The head and the body go out in two writes: without this, Nagle
        # holds the body for the client's delayed ACK (40 ms).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.fake._track(self.connection, True)

    def finish(self):
        try:
            super().finish()
        finally:
            self.server.fake._track(self.connection, False)

    def log_message(self, fmt, *args):
        pass

    def _answer(self, status, body, headers=()):
        self.server.fake._log(status)  # before the client can see it
        data = (body + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json"
                         if status == 200 else "text/plain")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._answer(405, "only POST is allowed", [("Allow", "POST")])

    do_PUT = do_GET

    def do_POST(self):
        fake = self.server.fake
        if self.path != PATH:
            self.close_connection = True
            return self._answer(404, "no such endpoint")
        length = int(self.headers.get("Content-Length") or 0)
        if length > fake.max_body:
            # Read the body first, so that the client reads the answer
            # rather than a reset connection.
            self.rfile.read(length)
            fake.sizes_refused.append(length)
            return self._answer(413, "body over %d bytes" % fake.max_body)
        body = self.rfile.read(length)
        auth = self.headers.get("Authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
        if token not in fake.tokens:
            return self._answer(401, "missing or unknown token")
        if fake.tokens[token] != fake.run:
            return self._answer(403, "this token writes to another run")
        status, text, headers = fake._take(body)
        self._answer(status, text, headers)


class FakeMetricsServer(object):
    """The server; start() it, read `url`, `token` and `records`."""

    def __init__(self, token="tok-run-1", run="run-1", stop_after=None,
                 max_body=1 << 20, url_file=None, reject_names=()):
        self.token = token
        self.run = run
        self.tokens = {token: run, "tok-run-2": "run-2"}
        self.stop_after = stop_after
        self.max_body = max_body
        self.url_file = url_file
        self.reject_names = set(reject_names)
        self.timestamps = []      # the `_timestamp` of each, as sent
        self.records = []         # every acknowledged report, in order,
                                  # less the values of a step it had
        self._seen = set()        # (step, name) of the values recorded
        self.statuses = []        # every answer's status, in order
        self.sizes_ok = []        # body sizes of the acknowledged requests
        self.sizes_refused = []   # body sizes answered 413
        self.delay = 0.0          # seconds to hold each answer
        self._lock = threading.Lock()
        self._busy = []           # Retry-After values of the next 503s
        self._conns = set()
        self._httpd = None
        self._thread = None
        self.port = None

    # ---- control --------------------------------------------------------

    @property
    def url(self):
        return "http://127.0.0.1:%d%s" % (self.port, PATH)

    def start(self, port=0):
        """Listens on `port` (0: a free one) and writes the URL file."""
        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.fake = self
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever,
                                        kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        if self.url_file:
            tmp = self.url_file + ".tmp"
            with open(tmp, "w") as f:
                f.write(self.url + "\n")
            os.replace(tmp, self.url_file)
        return self

    def down(self):
        """Stops as a killed server would: no listener, open connections
        reset."""
        if not self._httpd:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        with self._lock:
            for c in list(self._conns):
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        self._httpd = None

    def up(self):
        """Comes back on a new port (the URL file says which)."""
        old = self.port
        while True:
            self.start()
            if self.port != old:
                return self
            self.down()

    def busy(self, count, retry_after=1):
        """Answers the next `count` reports 503 with Retry-After."""
        with self._lock:
            self._busy.extend([retry_after] * count)

    def values(self, name):
        """The acknowledged values of one metric, in order."""
        with self._lock:
            return [r[name] for r in self.records if name in r]

    def stop(self):
        self.down()

    # ---- the handler's side --------------------------------------------

    def _track(self, conn, add):
        with self._lock:
            (self._conns.add if add else self._conns.discard)(conn)

    def _log(self, status):
        with self._lock:
            self.statuses.append(status)

    def _record(self, obj):
        """Records the values of a report that are new at its step (under
        the lock); a report without a step is recorded whole. Its
        `_timestamp`, as sweep's server takes it, is no value: it goes to
        self.timestamps."""
        obj = dict(obj)
        if "_timestamp" in obj:
            self.timestamps.append(obj.pop("_timestamp"))
        step = obj.get("step")
        if step is None:
            self.records.append(obj)
            return
        new = {k: v for k, v in obj.items()
               if k == "step" or (step, k) not in self._seen}
        if len(new) > 1 or len(obj) == 1:
            self._seen.update((step, k) for k in new if k != "step")
            self.records.append(new)

    def _take(self, body):
        """Checks and records one report; returns (status, text, headers)."""
        if self.delay:
            time.sleep(self.delay)
        with self._lock:
            if self._busy:
                return 503, "queue full", [("Retry-After",
                                            str(self._busy.pop(0)))]
        try:
            doc = json.loads(body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as e:
            return 400, "malformed JSON: %s" % e, []
        items = doc if isinstance(doc, list) else [doc]
        for obj in items:
            why = _bad_value(obj)
            if not why and self.reject_names & set(obj):
                why = "metric name refused"
            if why:
                return 400, why, []
        with self._lock:
            for obj in items:
                self._record(obj)
            self.sizes_ok.append(len(body))
            stop = (self.stop_after is not None and
                    len(self.records) >= self.stop_after)
        return 200, json.dumps({"stop": stop}), []


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--stop-after", type=int)
    p.add_argument("--url-file")
    a = p.parse_args()
    srv = FakeMetricsServer(stop_after=a.stop_after,
                            url_file=a.url_file).start(a.port)
    print("SWEEP_METRICS_URL=%s SWEEP_TOKEN=%s" % (srv.url, srv.token),
          flush=True)
    try:
        while True:
            time.sleep(1)
            print("%d values" % len(srv.records), flush=True)
    except KeyboardInterrupt:
        srv.stop()


if __name__ == "__main__":
    main()
