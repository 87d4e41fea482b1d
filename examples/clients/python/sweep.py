"""sweep_client: report a trial's metrics to `sweep`, and hear when to stop.

Standard library only, Python 3.7 or later. Copy this file next to your
trainer, or put examples/clients on sys.path, then:

    import sweep_client
    sweep_client.handle_sigterm()           # optional: SIGTERM asks to stop
    for epoch in range(epochs):
        ...
        if sweep_client.report(step=epoch, loss=loss, acc=acc):
            save_checkpoint()
            break                            # the sweep stopped this run

How it works (docs/clients.md has the whole story):

- Under `sweep`, the trial's environment holds SWEEP_METRICS_URL and
  SWEEP_TOKEN. report() checks the values, queues them, and wakes a
  background thread that POSTs everything queued as one JSON array. While
  the server answers promptly, report() waits for the answer to its own
  values (at most `wait` seconds, 2 by default) so that it can return the
  server's decision at once; while the server cannot be reached (an
  orchestrator restart, a `sweep resume` on another port) or is busy (503),
  report() returns at once and the thread keeps retrying with exponential
  backoff and jitter, honouring Retry-After, re-reading
  SWEEP_METRICS_URL_FILE after every failed connection. Nothing queued is
  dropped: batches stay under the server's body limit (1 MiB, halved again
  if the server answers 413), and at exit the client flushes for up to
  SWEEP_FLUSH_TIMEOUT seconds (10 by default), then writes whatever is still
  undelivered as `@metrics` lines on stdout, which the orchestrator reads
  from the trial's log too.
- Once any answer says {"stop": true}, report() and should_stop() return
  True for good.
- Without SWEEP_METRICS_URL (an older `sweep`, or a script run by hand),
  report() prints `@metrics {...}` lines on stdout and returns False (True
  after a SIGTERM when handle_sigterm() was called): a stopping rule then
  ends the trial by SIGTERM.
- Values must be numbers (int, float, bool, or numeric types such as NumPy
  scalars): anything else raises TypeError at the call. NaN and infinities
  are sent as json.dumps writes them (NaN, Infinity, -Infinity).
- A report the server refuses as malformed (400) is dropped, not retried,
  and MetricsRejected is raised from the next report() or flush(). A wrong
  token or URL (401, 403, 404, 405) cannot get better by retrying: the
  client says so once on stderr and falls back to stdout lines.

Delivery is exactly once. Every report carries a step: the one given, or
when none is, the one after the last (0 first), as wandb.log numbers its
steps. The server stores a run's value of a metric at a step once, so a
report sent again because its answer was lost in a crash is not stored
twice, and a stopping rule never counts it twice.
"""

import atexit
import http.client
import json
import math
import numbers
import os
import random
import signal
import sys
import threading
import time
import urllib.parse
import weakref

__all__ = [
    "Client",
    "MetricsRejected",
    "flush",
    "handle_sigterm",
    "report",
    "should_stop",
    "terminated",
]

MAX_BODY = 1 << 20  # the server's documented body limit
_PERMANENT = (401, 403, 404, 405)


class MetricsRejected(ValueError):
    """The server refused a report as malformed (HTTP 400); it was dropped."""


def _check_name(name):
    if not isinstance(name, str):
        raise TypeError("metric names must be strings, got %r" % (name,))
    if not name or name == "step":
        raise ValueError("metric name %r is not allowed" % (name,))
    for c in name:
        if ord(c) < 0x20 or ord(c) == 0x7F or 0xD800 <= ord(c) <= 0xDFFF:
            raise ValueError("metric name %r holds a control character or "
                             "a lone surrogate" % (name,))


def _number(name, value):
    """Returns `value` as what JSON should carry, or raises TypeError."""
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    hint = ""
    if hasattr(value, "item"):
        hint = " (a tensor or array? pass value.item())"
    raise TypeError("metric %r must be a number (int, float or bool), got %s%s"
                    % (name, type(value).__name__, hint))


def _encode(step, metrics):
    """The JSON text of one report, checked."""
    record = {}
    if step is not None:
        if isinstance(step, bool) or not isinstance(step, numbers.Integral):
            raise TypeError("step must be an integer, got %s"
                            % type(step).__name__)
        if step < 0:
            raise ValueError("step must be non-negative, got %d" % step)
        record["step"] = int(step)
    if not metrics:
        raise ValueError("report() needs at least one metric")
    for name, value in metrics.items():
        _check_name(name)
        record[name] = _number(name, value)
    return json.dumps(record, allow_nan=True)


def _retry_after(value):
    """Seconds from a Retry-After header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        secs = float(value)
    except ValueError:
        try:
            import email.utils
            when = email.utils.parsedate_to_datetime(value)
            secs = when.timestamp() - time.time()
        except (TypeError, ValueError, IndexError):
            return None
    if math.isnan(secs):
        return None
    return min(max(secs, 0.0), 300.0)


def _bad_url(url):
    """Why `url` cannot be posted to, or None."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # raises ValueError on a bad port
    except ValueError as e:
        return "bad URL %r: %s" % (url, e)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "bad URL %r: expected http://HOST:PORT/PATH" % (url,)
    return None


def _env_float(env, name, default):
    try:
        return float(env.get(name, default))
    except ValueError:
        return default


class _Item(object):
    __slots__ = ("seq", "text", "size")

    def __init__(self, seq, text):
        self.seq = seq
        self.text = text
        self.size = len(text.encode("utf-8"))


_clients = weakref.WeakSet()


class Client(object):
    """One reporter. The module functions use one built from the environment;
    build your own for tests or to report for several runs.

    url, token: where and how to report (default: SWEEP_METRICS_URL,
    SWEEP_TOKEN); url_file: a file holding the current URL, re-read when a
    connection fails (default: SWEEP_METRICS_URL_FILE). Without a URL the
    client prints `@metrics` lines on `stream` (default sys.stdout).
    wait: how long report() waits for the answer while the server is up;
    timeout: one request's socket timeout; max_body: the largest body sent;
    max_backoff: the longest pause between retries; max_buffered: values
    held at most during an outage before the oldest go to stdout.
    """

    def __init__(self, url=None, token=None, url_file=None, wait=2.0,
                 timeout=10.0, max_body=MAX_BODY, max_backoff=10.0,
                 max_buffered=100000, stream=None, env=None):
        env = os.environ if env is None else env
        self._url_file = url_file or env.get("SWEEP_METRICS_URL_FILE") or None
        self._url = url or env.get("SWEEP_METRICS_URL") or None
        if not self._url and self._url_file:
            self._url = self._read_url_file()
        self._token = token if token is not None else env.get("SWEEP_TOKEN", "")
        self._wait = wait
        self._timeout = timeout
        self._max_body = max_body
        self._max_backoff = max_backoff
        self._max_buffered = max_buffered
        self._stream = stream
        self._exit_timeout = _env_float(env, "SWEEP_FLUSH_TIMEOUT", 10.0)
        self._rng = random.Random()
        self._init_state()
        _clients.add(self)

    def _check_config(self):
        """Gives HTTP up at once when the URL or token cannot work."""
        why = _bad_url(self._url) if self._url else None
        if not why and any(c in self._token for c in "\r\n\0"):
            why = "SWEEP_TOKEN holds a line break or a NUL"
        if why:
            self._broken = why
            sys.stderr.write("sweep_client: %s: reporting on stdout "
                             "instead\n" % why)

    def _init_state(self):
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._queue = []        # _Item, oldest first, not yet sent
        self._inflight = []     # _Item being sent by the thread
        self._seq = 0           # the last seq given out
        self._next_step = 0     # the step a report without one gets
        self._stop = False
        self._signalled = False
        self._down = False      # the last attempt failed: don't wait
        self._broken = None     # why HTTP was given up for stdout
        self._errors = []       # MetricsRejected messages not yet raised
        self._thread = None
        self._closing = False
        self._conn = None
        self._conn_url = None
        self._split = 0         # after a 400: records per batch while bisecting
        self._warned_full = False
        self._check_config()

    # ---- the public side ------------------------------------------------

    def report(self, step=None, **metrics):
        """Reports `metrics` (numbers) at `step` (a non-negative int, or
        None: the step after the last one). Returns True when the run
        should stop."""
        if step is None:
            step = self._next_step
        text = _encode(step, metrics)
        self._next_step = int(step) + 1
        if not self._url:
            self._print(text)
            return self._stop
        with self._cond:
            if self._broken:
                self._print_locked([text])
                return self._stop
            self._seq += 1
            seq = self._seq
            self._queue.append(_Item(seq, text))
            self._trim_locked()
            self._start_locked()
            self._cond.notify_all()
            deadline = time.monotonic() + self._wait
            while (self._done_upto() < seq and not self._down and
                   not self._broken and not self._errors):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            self._raise_errors_locked()
            return self._stop

    def should_stop(self):
        """True once the server said stop (or SIGTERM came, see
        handle_sigterm)."""
        return self._stop

    def terminated(self):
        """True when the stop came from SIGTERM (see handle_sigterm)."""
        return self._signalled

    def flush(self, timeout=30.0):
        """Waits until every queued value is delivered, at most `timeout`
        seconds (None: no limit). Returns True when nothing is left."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._queue or self._inflight:
                if self._broken or not self._thread:
                    break
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                self._cond.wait(left)
            self._raise_errors_locked()
            return not self._queue and not self._inflight

    def close(self, timeout=None):
        """Flushes for up to `timeout` seconds (default SWEEP_FLUSH_TIMEOUT),
        writes what is still undelivered as `@metrics` lines on stdout, and
        ends the thread. Called at exit."""
        timeout = self._exit_timeout if timeout is None else timeout
        try:
            self.flush(timeout)
        except MetricsRejected as e:
            sys.stderr.write("sweep_client: %s\n" % e)
        with self._cond:
            left = [i.text for i in self._inflight + self._queue]
            self._inflight, self._queue = [], []
            self._closing = True
            self._cond.notify_all()
            if left:
                sys.stderr.write(
                    "sweep_client: %d report(s) not delivered to %s: written "
                    "to stdout as @metrics lines\n" % (len(left), self._url))
                self._print_locked(left)

    def _set_stop(self, signalled=False):
        """Marks the run as told to stop. Safe in a signal handler: no lock."""
        self._signalled = self._signalled or signalled
        self._stop = True

    # ---- helpers under the lock -----------------------------------------

    def _done_upto(self):
        """Every seq up to this one is delivered (or dropped, or printed)."""
        if self._inflight:
            return self._inflight[0].seq - 1
        if self._queue:
            return self._queue[0].seq - 1
        return self._seq

    def _raise_errors_locked(self):
        if self._errors:
            msg = "; ".join(self._errors)
            self._errors = []
            raise MetricsRejected(msg)

    def _trim_locked(self):
        """Past max_buffered values, the oldest go to stdout: never lost."""
        extra = len(self._queue) - self._max_buffered
        if extra <= 0:
            return
        if not self._warned_full:
            sys.stderr.write("sweep_client: more than %d reports waiting for "
                             "%s: the oldest go to stdout\n"
                             % (self._max_buffered, self._url))
            self._warned_full = True
        self._print_locked([i.text for i in self._queue[:extra]])
        del self._queue[:extra]

    def _start_locked(self):
        if self._thread is None or not self._thread.is_alive():
            self._closing = False
            self._thread = threading.Thread(target=self._run,
                                            name="sweep_client", daemon=True)
            self._thread.start()

    def _print(self, text):
        with self._lock:
            self._print_locked([text])

    def _print_locked(self, texts):
        out = self._stream or sys.stdout
        try:
            out.write("".join("@metrics %s\n" % t for t in texts))
            out.flush()
        except (OSError, ValueError):
            pass  # stdout closed: nowhere left to write

    # ---- the sending thread ---------------------------------------------

    def _take_batch_locked(self):
        """Moves the oldest records that fit one body into _inflight."""
        size, n = 2, 0
        limit = self._split or len(self._queue)
        for item in self._queue[:limit]:
            size += item.size + 1
            if n and size > self._max_body:
                break
            n += 1
        self._inflight = self._queue[:n]
        del self._queue[:n]
        return [i.text for i in self._inflight]

    def _run(self):
        try:
            self._send_all()
        finally:
            self._close_conn()

    def _send_all(self):
        failures = 0
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                if not self._queue or self._broken:
                    return
                batch = self._take_batch_locked()
            status, answer, header = self._post(batch)
            with self._cond:
                delay = self._settle_locked(batch, status, answer, header,
                                            failures)
                failures = failures + 1 if delay else 0
                self._cond.notify_all()
                until = time.monotonic() + delay
                while not self._closing and time.monotonic() < until:
                    self._cond.wait(until - time.monotonic())

    def _settle_locked(self, batch, status, answer, header, failures):
        """Acts on one answer; returns how long to wait before the next."""
        if status == 200:
            self._inflight = []
            self._down = False
            if not self._queue:
                self._split = 0
            try:
                self._stop = self._stop or bool(json.loads(answer)["stop"])
            except (ValueError, TypeError, KeyError):
                pass
            return 0
        if status in (400, 413) and len(batch) > 1:
            if status == 413:
                self._max_body = max(len(self._body(batch)) // 2, 64)
            else:
                self._split = max(len(batch) // 2, 1)
            self._requeue_locked()
            return 0
        if status == 400:
            self._inflight = []
            self._split = 0
            self._errors.append("the server refused %s: %s" % (
                batch[0], answer.strip() or status))
            return 0
        if status == 413:
            self._inflight = []
            self._errors.append("%s is too large for the server (413): "
                                "written to stdout" % batch[0][:80])
            self._print_locked(batch)
            return 0
        if status in _PERMANENT:
            self._give_up_locked(status, answer)
            return 0
        self._down = True
        self._requeue_locked()
        if status in (429, 503):
            ra = _retry_after(header)
            if ra is not None:
                return ra + self._rng.uniform(0, 0.1 + 0.1 * ra)
        if status is None and self._url_file:
            url = self._read_url_file()
            if url and url != self._url and not _bad_url(url):
                self._url = url
                return 0.01
        cap = min(self._max_backoff, 0.1 * (2 ** min(failures, 16)))
        return self._rng.uniform(cap / 2, cap)

    def _requeue_locked(self):
        self._queue[:0] = self._inflight
        self._inflight = []

    def _give_up_locked(self, status, answer):
        self._broken = "%s answered %s %s" % (self._url, status,
                                              answer.strip()[:200])
        sys.stderr.write("sweep_client: %s: reporting on stdout instead\n"
                         % self._broken)
        self._print_locked([i.text for i in self._inflight + self._queue])
        self._inflight, self._queue = [], []

    def _read_url_file(self):
        try:
            with open(self._url_file) as f:
                return f.readline().strip() or None
        except OSError:
            return None

    # ---- HTTP -----------------------------------------------------------

    @staticmethod
    def _body(batch):
        text = batch[0] if len(batch) == 1 else "[" + ",".join(batch) + "]"
        return text.encode("utf-8")

    def _connect(self):
        parts = urllib.parse.urlsplit(self._url)
        if parts.scheme == "https":
            cls = http.client.HTTPSConnection
        else:
            cls = http.client.HTTPConnection
        self._conn = cls(parts.hostname, parts.port, timeout=self._timeout)
        self._conn_url = self._url

    def _path(self):
        parts = urllib.parse.urlsplit(self._url)
        return (parts.path or "/") + ("?" + parts.query if parts.query else "")

    def _post(self, batch):
        """Sends one batch; returns (status or None, body text, Retry-After).
        A kept-alive connection the server closed meanwhile is retried once
        on a new one before it counts as a failure."""
        body = self._body(batch)
        headers = {"Authorization": "Bearer " + self._token,
                   "Content-Type": "application/json"}
        for _ in (0, 1):
            reused = self._conn is not None and self._conn_url == self._url
            try:
                if not reused:
                    self._close_conn()
                    self._connect()
                self._conn.request("POST", self._path(), body=body,
                                   headers=headers)
                resp = self._conn.getresponse()
                text = resp.read().decode("utf-8", "replace")
                if resp.will_close:
                    self._close_conn()
                return resp.status, text, resp.getheader("Retry-After")
            except (OSError, http.client.HTTPException, ValueError):
                self._close_conn()
                if not reused:
                    break
        return None, "", None

    def _close_conn(self):
        if self._conn is not None:
            try:
                self._conn.close()
            except OSError:
                pass
        self._conn = None

    def _after_fork(self):
        """In a forked child: the parent's thread and queue are not ours."""
        self._init_state()


_default = None
_default_lock = threading.Lock()


def _client():
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = Client()
    return _default


def report(step=None, **metrics):
    """Reports metrics at `step`; True when the run should stop."""
    return _client().report(step, **metrics)


def should_stop():
    """True once the sweep said stop (or SIGTERM came after
    handle_sigterm())."""
    return _client().should_stop()


def terminated():
    """True when the stop came from SIGTERM (see handle_sigterm)."""
    return _client().terminated()


def flush(timeout=30.0):
    """Waits until every reported value is delivered, at most `timeout`
    seconds; True when nothing is left."""
    return _client().flush(timeout)


def handle_sigterm():
    """Makes SIGTERM ask the trial to stop: should_stop() and report() then
    return True and terminated() tells why, so the training loop can save a
    checkpoint and exit. A second SIGTERM exits at once (status 143, queued
    values still flushed). Call from the main thread."""
    client = _client()

    def on_term(signum, frame):
        if client.terminated():
            raise SystemExit(128 + signum)
        client._set_stop(signalled=True)

    signal.signal(signal.SIGTERM, on_term)


def _at_exit():
    for client in list(_clients):
        if client._thread is not None:
            client.close()


def _after_fork_child():
    for client in list(_clients):
        client._after_fork()


atexit.register(_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_child)
