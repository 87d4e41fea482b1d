"""sweep: the trial's side of `sweep`, standard library only, Python 3.8+.

Install it into any interpreter or venv from a checkout (offline: it has
no dependencies, and builds with the backend beside it):

    python3 -m venv .venv && .venv/bin/pip install examples/clients/python

(Debian's own python3 refuses a plain pip install, PEP 668: README.md
beside this file says what works), or put this folder on PYTHONPATH, or
copy this one file next to your trainer. Then, in a trial that
`sweep run` started:

    import sweep
    cfg = sweep.params()                    # the run's parameters, nested
    sweep.handle_sigterm()                  # optional: SIGTERM asks to stop
    for epoch in range(cfg["epochs"]):
        ...
        if sweep.report(step=epoch, loss=loss, acc=acc):
            save_checkpoint(sweep.checkpoint_dir())
            break                            # the sweep stopped this run

A whole sweep from Python: `sweep.run(config, objective, parallel=4)`
drives the `sweep` binary, 4 long-lived workers calling objective(params)
for run after run; after Ctrl-C, the same call resumes the sweep. A
long-lived worker of your own, `sweep.agent(train)`, serves run after run
in one process (docs/clients.md, "Long-lived workers").

A W&B trainer needs one line after `import wandb`: `sweep.mirror_wandb()`
(every wandb.log is reported too, and the run ends when the sweep stops
it); `wandb.config` already holds the run's parameters, from the
WANDB_SWEEP_PARAM_PATH file `sweep` writes. docs/clients.md has the whole
story.

How reporting works:

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

__version__ = "0.1.0"

__all__ = [
    "Client",
    "MetricsRejected",
    "StopRun",
    "SweepFailed",
    "SweepInterrupted",
    "SweepResult",
    "agent",
    "checkpoint_dir",
    "flush",
    "handle_sigterm",
    "mirror_wandb",
    "params",
    "report",
    "run",
    "run_id",
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
    # when it was logged: a batch sent later keeps each report's own time
    record.setdefault("_timestamp", round(time.time(), 6))
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
            sys.stderr.write("sweep: %s: reporting on stdout "
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
            sys.stderr.write("sweep: %s\n" % e)
        with self._cond:
            left = [i.text for i in self._inflight + self._queue]
            self._inflight, self._queue = [], []
            self._closing = True
            self._cond.notify_all()
            if left:
                sys.stderr.write(
                    "sweep: %d report(s) not delivered to %s: written "
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
            sys.stderr.write("sweep: more than %d reports waiting for "
                             "%s: the oldest go to stdout\n"
                             % (self._max_buffered, self._url))
            self._warned_full = True
        self._print_locked([i.text for i in self._queue[:extra]])
        del self._queue[:extra]

    def _start_locked(self):
        if self._thread is None or not self._thread.is_alive():
            self._closing = False
            self._thread = threading.Thread(target=self._run,
                                            name="sweep", daemon=True)
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
        sys.stderr.write("sweep: %s: reporting on stdout instead\n"
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

# ---- the run: what the trial contract gives ---------------------------------


class StopRun(SystemExit):
    """The sweep stopped this run (its early-stopping rule, `sweep stop`).

    Raised from a mirrored wandb.log (see mirror_wandb); a SystemExit with
    status 0, so an uncaught one ends the script quietly, after the W&B run
    is finished and every value is flushed, and `except Exception` in a
    training loop does not swallow it. sweep.agent catches it."""

    def __init__(self, run=None):
        SystemExit.__init__(self, 0)
        self.run = run


def _environ():
    return os.environ


def params():
    """The run's parameters, nested as in the sweep file (a new dict each
    call): the JSON file SWEEP_PARAMS names. {} outside a sweep (no
    SWEEP_PARAMS). RuntimeError, naming the file, when it cannot be read or
    does not hold a JSON object."""
    path = _environ().get("SWEEP_PARAMS")
    if not path:
        return {}
    try:
        with open(path, encoding="utf-8") as f:
            value = json.load(f)
    except OSError as e:
        raise RuntimeError("sweep.params(): cannot read SWEEP_PARAMS=%s: %s"
                           % (path, e.strerror or e))
    except ValueError as e:
        raise RuntimeError("sweep.params(): SWEEP_PARAMS=%s is not JSON: %s"
                           % (path, e))
    if not isinstance(value, dict):
        raise RuntimeError("sweep.params(): SWEEP_PARAMS=%s holds a %s, not "
                           "an object of parameters"
                           % (path, type(value).__name__))
    return value


def checkpoint_dir():
    """The run's checkpoint folder (SWEEP_CHECKPOINT_DIR): the same on every
    attempt of the run, so a retried trial resumes from it. None outside a
    sweep."""
    return _environ().get("SWEEP_CHECKPOINT_DIR") or None


def run_id():
    """The run's id (SWEEP_RUN_ID), as `sweep ls` and `sweep show` name it;
    None outside a sweep."""
    return _environ().get("SWEEP_RUN_ID") or None


def _wants_config(function):
    """Whether `function` takes the config as W&B's agent never passes it:
    a positional parameter without a default (or *args)."""
    import inspect
    try:
        sig = inspect.signature(function)
    except (TypeError, ValueError):
        return True
    for p in sig.parameters.values():
        if p.kind == p.VAR_POSITIONAL:
            return True
        if (p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and
                p.default is p.empty):
            return True
    return False


def agent(sweep_id=None, function=None, count=None, entity=None,
          project=None):
    """Serves runs with `function`, one after another in this process:
    agent(train), or wandb.agent's shape, agent(sweep_id,
    function=train, count=N) (sweep_id, entity and project are accepted
    and unused: the runs are those of the sweep that started this
    process). `function` gets each run's parameters when it takes a
    positional argument (train(config)), else none (a W&B function, which
    reads wandb.config). When it returns (or raises StopRun: the sweep
    stopped the run), the run is done and the agent asks `sweep` for the
    next one, on the same devices, until `count` runs (None: until the
    sweep has no more). Returns how many runs it served."""
    if function is None and callable(sweep_id):
        function, sweep_id = sweep_id, None
    if not callable(function):
        raise TypeError("sweep.agent() needs a function: sweep.agent(train) "
                        "or sweep.agent(sweep_id, function=train)")
    if count is not None and (isinstance(count, bool) or
                              not isinstance(count, numbers.Integral) or
                              count < 1):
        raise ValueError("sweep.agent(): count must be a positive integer, "
                         "got %r" % (count,))
    if not run_id():
        raise RuntimeError("sweep.agent(): not in a trial of `sweep run` "
                           "(SWEEP_RUN_ID is unset): make this script the "
                           "sweep file's program and run `sweep run FILE`")
    served = 0
    while True:
        try:
            if _wants_config(function):
                function(params())
            else:
                function()
        except StopRun:
            pass
        served += 1
        flush(_client()._exit_timeout)
        if count is not None and served >= count:
            return served
        nxt = _next_run()
        if nxt is None:
            return served
        _become(nxt)


def _next_url(env):
    url = env.get("SWEEP_METRICS_URL") or ""
    f = env.get("SWEEP_METRICS_URL_FILE")
    if f:
        try:
            with open(f) as fh:
                url = fh.readline().strip() or url
        except OSError:
            pass
    if not url.endswith("/metrics") or _bad_url(url):
        return None
    return url[:-len("/metrics")] + "/next"


def _next_run():
    """Asks `sweep` for this worker's next run (POST .../next with the
    current run's token; docs/clients.md, "Long-lived workers"): the
    answer's run, or None when there is none (or no server to ask). A
    refusal (401, 403: the run asked from is not this worker's any more)
    exits with status 75; a server that cannot be reached is asked again
    for SWEEP_NEXT_TIMEOUT seconds (60), re-reading the URL file."""
    env = _environ()
    token = env.get("SWEEP_TOKEN", "")
    give_up = time.monotonic() + _env_float(env, "SWEEP_NEXT_TIMEOUT", 60.0)
    delay = 0.1
    while True:
        url = _next_url(env)
        if not url:
            return None
        parts = urllib.parse.urlsplit(url)
        cls = (http.client.HTTPSConnection if parts.scheme == "https"
               else http.client.HTTPConnection)
        try:
            conn = cls(parts.hostname, parts.port, timeout=600)
            try:
                conn.request("POST", parts.path, body=b"{}", headers={
                    "Authorization": "Bearer " + token,
                    "Content-Type": "application/json"})
                resp = conn.getresponse()
                status, text = resp.status, resp.read().decode("utf-8")
            finally:
                conn.close()
        except (OSError, http.client.HTTPException):
            status, text = None, ""
        if status == 200:
            try:
                return json.loads(text).get("run")
            except (ValueError, AttributeError):
                return None
        if status in (401, 403):
            sys.stderr.write("sweep: agent: %s refused the next run (%s): "
                             "exiting\n" % (url, status))
            sys.stderr.flush()
            os._exit(75)
        if status not in (None, 503) or time.monotonic() >= give_up:
            return None
        time.sleep(delay)
        delay = min(delay * 2, 5.0)


def _become(nxt):
    """This process serves run `nxt` now: its environment is the one the
    trial contract gives that run, its stdout and stderr go to that run's
    logs, and report() reports for it."""
    global _default
    with _default_lock:  # what the last run left goes to its own log
        old, _default = _default, None
    if old is not None:
        old.close(0)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    for fd, path in ((1, nxt.get("stdout")), (2, nxt.get("stderr"))):
        if path:
            out = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            os.dup2(out, fd)
            os.close(out)
    os.environ.update({str(k): str(v) for k, v in
                       (nxt.get("env") or {}).items()})
    _reset_wandb()


def _reset_wandb():
    """Makes W&B's SDK, if imported, read its settings (WANDB_RUN_ID,
    WANDB_SWEEP_PARAM_PATH) again at the next wandb.init(), as W&B's own
    agent does between runs: its settings are read once per process
    otherwise. wandb.teardown is public in the newest SDKs only;
    wandb._teardown is the same function in every release from 0.15."""
    wandb = sys.modules.get("wandb")
    teardown = getattr(wandb, "teardown", None) or getattr(
        wandb, "_teardown", None)
    if callable(teardown):
        try:
            teardown()
        except Exception as e:  # the next run matters more
            sys.stderr.write("sweep: agent: wandb teardown failed: %s\n" % e)


# ---- mirror_wandb: a W&B trainer, reporting -----------------------------------

_mirror_lock = threading.RLock()
_mirror_local = threading.local()
_mirror_states = []      # every row, in the order made: flushed at exit
_mirror_by_run = weakref.WeakKeyDictionary()  # Run -> _Mirror
_mirror_by_id = {}       # id(run) -> (run, _Mirror), runs without weakrefs
_mirror_global = None    # the row of logs made without a run
_mirror_wrappers = set()  # the functions mirror_wandb made


class _Mirror(object):
    """One W&B run's row, counted as W&B counts it: the current step (each
    committed log moves it on; step= moves it forward) and the values
    logged at it and not yet committed."""

    def __init__(self):
        self.step = 0
        self.row = {}


def _metric_items(data, prefix=""):
    """(name, number) for every number in a wandb.log dict, nested dicts
    flattened with '.'; what sweep cannot take (media, strings, 'step',
    names it refuses) is left to W&B alone."""
    import collections.abc
    for key, value in data.items():
        if not isinstance(key, str):
            continue
        name = prefix + key
        if isinstance(value, collections.abc.Mapping):
            for item in _metric_items(value, name + "."):
                yield item
            continue
        number = _metric_number(value)
        if number is None or name in ("step", "_step"):
            continue
        try:
            _check_name(name)
        except ValueError:
            continue
        if len(name.encode("utf-8", "replace")) <= 256:
            yield name, number


def _metric_number(value):
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    item = getattr(value, "item", None)
    size = getattr(value, "size", None)
    if callable(size):
        try:
            size = size()
        except Exception:
            size = None
    numel = getattr(value, "numel", None)
    if size is None and callable(numel):
        try:
            size = numel()
        except Exception:
            size = None
    if callable(item) and size == 1:
        try:
            return _metric_number(item())
        except Exception:
            return None
    return None


def _mirror_state(run):
    """The row of `run` (a wandb Run), or of the module's run without one.
    Kept here, keyed by the run object, never on it: W&B's Run refuses
    new attributes once wandb.init() returns (its __setattr__ raises)."""
    global _mirror_global
    with _mirror_lock:
        if run is None:
            if _mirror_global is None:
                _mirror_global = _Mirror()
                _mirror_states.append(_mirror_global)
            return _mirror_global
        try:
            state = _mirror_by_run.get(run)
        except TypeError:  # not weakly referable, or unhashable
            state = _mirror_by_id.get(id(run), (None, None))[1]
        if state is None:
            state = _Mirror()
            try:
                _mirror_by_run[run] = state
            except TypeError:  # held, so that its id stays its own
                _mirror_by_id[id(run)] = (run, state)
            _mirror_states.append(state)
        return state


def _mirror_commit(state):
    """Reports the row at its step; True when the sweep says stop."""
    row, state.row = state.row, {}
    if not row:
        return should_stop()
    try:
        return report(step=state.step, **row)
    except (TypeError, ValueError) as e:
        sys.stderr.write("sweep: mirror_wandb: %s\n" % e)
        return should_stop()


def _mirror_log(state, data, step, commit):
    """What wandb.log(data, step, commit) did to W&B's history, done to the
    run's row; True when the sweep says stop."""
    stop = False
    if step is not None:
        if isinstance(step, bool) or not isinstance(step, numbers.Integral):
            return should_stop()
        if step < state.step:
            return should_stop()  # W&B ignores it, with a warning
        if step > state.step:
            stop = _mirror_commit(state)
            state.step = int(step)
    state.row.update(_metric_items(data))
    if (step is None) if commit is None else commit:
        stop = _mirror_commit(state) or stop
        state.step += 1
    return stop


def _mirror_stopped(wandb, run, stop):
    if not stop:
        return
    sys.stderr.write("sweep: run %s was stopped by the sweep: finishing "
                     "the W&B run and exiting\n" % (run_id() or "?"))
    finish = getattr(run, "finish", None) if run is not None else None
    if finish is None:
        finish = getattr(wandb, "finish", None)
    if callable(finish):
        try:
            finish()
        except Exception as e:  # the stop matters more than W&B's error
            sys.stderr.write("sweep: wandb finish failed: %s\n" % e)
    raise StopRun(run_id())


def _ours(fn):
    """Whether `fn` (a function, or a method bound to one) is a wrapper
    mirror_wandb made."""
    return getattr(fn, "__func__", fn) in _mirror_wrappers


def _log_run(wandb, original, args, bound_run):
    """The Run a wrapped log writes to, and the arguments after it."""
    if bound_run:
        return args[0], args[1:]
    run = getattr(original, "__self__", None)  # wandb.log is run.log
    if run is None or isinstance(run, type(sys)):
        run = getattr(wandb, "run", None)
    return run, args


def _wrap_log(wandb, original, bound_run):
    """wandb.log (bound_run False) or Run.log (bound_run True), reporting
    each committed row to sweep too."""
    import functools

    @functools.wraps(original)
    def log(*args, **kwargs):
        run, rest = _log_run(wandb, original, args, bound_run)
        outer = not getattr(_mirror_local, "inside", False)
        _mirror_local.inside = True
        try:
            result = original(*args, **kwargs)
        finally:
            if outer:
                _mirror_local.inside = False
        if not outer:
            return result
        data = rest[0] if rest else kwargs.get("data")
        step = rest[1] if len(rest) > 1 else kwargs.get("step")
        commit = rest[2] if len(rest) > 2 else kwargs.get("commit")
        import collections.abc
        if isinstance(data, collections.abc.Mapping):
            with _mirror_lock:
                stop = _mirror_log(_mirror_state(run), data, step, commit)
            if _mirror_stops[0]:
                _mirror_stopped(wandb, run, stop)
        return result
    _mirror_wrappers.add(log)
    return log


def _wrap_finish(wandb, original, bound_run):
    """Run.finish or wandb.finish: the row still open is reported first."""
    import functools

    @functools.wraps(original)
    def finish(*args, **kwargs):
        run, _ = _log_run(wandb, original, args, bound_run and args)
        with _mirror_lock:
            _mirror_commit(_mirror_state(run))
        return original(*args, **kwargs)
    _mirror_wrappers.add(finish)
    return finish


def _wrap_init(wandb, original):
    """wandb.init: the functions it binds on the module (wandb.log is the
    new run's log) and the class of the run it returns are wrapped too."""
    import functools

    @functools.wraps(original)
    def init(*args, **kwargs):
        run = original(*args, **kwargs)
        with _mirror_lock:
            _mirror_patch(wandb, type(run) if run is not None else None)
            if run is not None and "log" in getattr(run, "__dict__", {}):
                _mirror_warn_own_log()
        return run
    _mirror_wrappers.add(init)
    return init


_mirror_stops = [True]
_mirror_warned = []


def _mirror_warn_own_log():
    """W&B's disabled mode (before 0.20) gives its run a log of its own:
    wandb.log is still mirrored, run.log cannot be."""
    if not _mirror_warned:
        _mirror_warned.append(True)
        sys.stderr.write("sweep: mirror_wandb: this W&B run has a log() of "
                         "its own (WANDB_MODE=disabled): wandb.log is "
                         "reported, run.log is not; use WANDB_MODE=offline "
                         "to report both\n")


def _run_classes(wandb, extra):
    """W&B's Run class (wandb.Run, or wandb.sdk.wandb_run.Run before 0.20)
    and `extra` (the class of a run init returned) when it is one."""
    found = []
    for cls in (getattr(wandb, "Run", None),
                getattr(getattr(getattr(wandb, "sdk", None), "wandb_run",
                                None), "Run", None), extra):
        if isinstance(cls, type) and cls not in found and \
                callable(getattr(cls, "log", None)):
            found.append(cls)
    return found


def _mirror_patch(wandb, extra=None):
    """Wraps log and finish of the Run classes (a method set on the class,
    never on a run) and the module's wandb.log / wandb.finish / wandb.init
    as they are bound now. Under _mirror_lock."""
    owners = [(cls, True) for cls in _run_classes(wandb, extra)]
    for owner, bound in owners + [(wandb, False)]:
        names = ("log", "finish") + (() if bound else ("init",))
        for name in names:
            fn = (vars(owner).get(name) if bound
                  else getattr(owner, name, None))
            if not callable(fn) or _ours(fn):
                continue
            if name == "init":
                setattr(owner, name, _wrap_init(wandb, fn))
            else:
                wrap = _wrap_log if name == "log" else _wrap_finish
                setattr(owner, name, wrap(wandb, fn, bound))


def _mirror_at_exit():
    with _mirror_lock:
        for state in _mirror_states:
            _mirror_commit(state)


def mirror_wandb(wandb=None, stop=True):
    """Makes every wandb.log (and run.log) report its numbers to sweep too,
    at the step W&B counts, one line after `import wandb`. With stop True,
    when the sweep stops the run, that log finishes the W&B run and raises
    StopRun (exit status 0); with stop False, check sweep.should_stop().
    `wandb`: the module (default: the imported one). Calling it again
    changes nothing but `stop`. Returns the module."""
    if wandb is None:
        wandb = sys.modules.get("wandb")
    if wandb is None:
        try:
            import wandb
        except ImportError:
            raise ImportError("sweep.mirror_wandb(): cannot import wandb: "
                              "install it, or pass the module")
    with _mirror_lock:
        _mirror_stops[0] = bool(stop)
        run = getattr(wandb, "run", None)
        _mirror_patch(wandb, type(run) if run is not None else None)
        if run is not None and "log" in getattr(run, "__dict__", {}):
            _mirror_warn_own_log()
        if not getattr(_mirror_at_exit, "registered", False):
            atexit.register(_mirror_at_exit)
            _mirror_at_exit.registered = True
    return wandb

# ---- run: a sweep from Python, through the `sweep` binary ---------------------


class SweepFailed(RuntimeError):
    """`sweep run` did not do its job (its exit status, and what it said on
    stderr): an invalid sweep file (status 2), or another failure (1)."""

    def __init__(self, message, returncode, sweep_id=None):
        RuntimeError.__init__(self, message)
        self.returncode = returncode
        self.sweep_id = sweep_id


class SweepResult(object):
    """What sweep.run() gives back: the sweep's `id`, its `runs` (as `sweep
    ls ID --json` lists them: run, state, value, params, ...), `best`
    (the best of them by the sweep's metric, or None) and `home`."""

    def __init__(self, sweep_id, runs, best, home):
        self.id = sweep_id
        self.runs = runs
        self.best = best
        self.home = home

    def __repr__(self):
        return "SweepResult(id=%r, runs=%d, best=%r)" % (
            self.id, len(self.runs), self.best and self.best.get("run"))


_RUN_OPTIONS = {"seed": "--seed", "name": "--name", "backend": "--backend",
                "gpus": "--gpus", "listen": "--listen", "quiet": "--quiet"}


def _objective_ref(objective):
    """Where a trial finds `objective`: "module:qualname", or
    "/path/script.py:qualname" for the script run as __main__; and the
    folder to put on PYTHONPATH for it (or None)."""
    qualname = getattr(objective, "__qualname__", "")
    module = getattr(objective, "__module__", None)
    if not qualname or "<" in qualname or not module:
        raise ValueError("sweep.run(): the objective must be a function "
                         "defined at the top level of a module (a trial "
                         "imports it), not %r" % (objective,))
    mod = sys.modules.get(module)
    path = getattr(mod, "__file__", None)
    if module == "__main__":
        if not path:
            raise ValueError("sweep.run(): the objective is defined in an "
                             "interactive session; define it in a file")
        return "%s:%s" % (os.path.abspath(path), qualname), None
    root = None
    if path:
        root = os.path.dirname(os.path.abspath(path))
        depth = module.count(".") + (os.path.basename(path).startswith(
            "__init__.") and 1 or 0)
        for _ in range(depth):
            root = os.path.dirname(root)
    return "%s:%s" % (module, qualname), root


def _load_objective(ref):
    import importlib
    import importlib.util
    where, _, qualname = ref.rpartition(":")
    if where.endswith(".py"):
        sys.path.insert(0, os.path.dirname(where))
        spec = importlib.util.spec_from_file_location("__sweep_objective__",
                                                      where)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod
        spec.loader.exec_module(mod)
    else:
        mod = importlib.import_module(where)
    fn = mod
    for part in qualname.split("."):
        fn = getattr(fn, part)
    return fn


def _serve_objective(ref, metric, once=False):
    """The trials of sweep.run(): a long-lived worker (sweep.agent) that
    calls objective(params()) for run after run (once: for this run only);
    a number it returns is reported as `metric`, a dict as its metrics,
    None as nothing (it reported itself)."""
    fn = _load_objective(ref)

    def trial(config):
        try:
            result = fn(config)
        except StopRun:
            result = None
        if isinstance(result, dict):
            report(**result)
        elif result is not None:
            report(**{metric: _number(metric, result)})

    if once:
        trial(params())
        flush(_client()._exit_timeout)
    else:
        agent(trial)
    return 0


def _run_args(config_path, parallel, options):
    args = ["run", config_path]
    if parallel is not None:
        if (isinstance(parallel, bool) or
                not isinstance(parallel, numbers.Integral) or parallel < 1):
            raise ValueError("sweep.run(): parallel must be a positive "
                             "integer, got %r" % (parallel,))
        args += ["--parallel", str(int(parallel))]
    for key, value in sorted(options.items()):
        if key not in _RUN_OPTIONS:
            raise TypeError("sweep.run(): unknown option %r (options: %s)"
                            % (key, ", ".join(sorted(_RUN_OPTIONS))))
        if key == "quiet":
            if value:
                args.append("--quiet")
        elif value is not None:
            args += [_RUN_OPTIONS[key], str(value)]
    return args


def _sweep_json(binary, env, *args):
    import subprocess
    p = subprocess.run([binary] + list(args), env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        return None
    return [json.loads(line) for line in p.stdout.splitlines() if line]


def _prepend_path(env, folder):
    if folder:
        old = env.get("PYTHONPATH")
        env["PYTHONPATH"] = folder + (os.pathsep + old if old else "")


def run(config, objective=None, parallel=None, home=None, sweep_bin=None,
        workers=True, resume=True, **options):
    """Runs a sweep to its end with the `sweep` binary (on PATH, or
    `sweep_bin`) and returns a SweepResult. `config`: a sweep file's
    contents (a dict, W&B's format) or the path of one. `objective`: a
    top-level function each trial calls with its parameters; a number it
    returns is reported as the sweep's metric, a dict as metrics. Without
    it, the config's own program or command runs. `parallel`: trials at
    once; `home`: the sweep home (default $SWEEP_HOME, else ./.sweep);
    options: seed, name, backend, gpus, listen, quiet, as `sweep run`
    takes them. workers: the trials are served by long-lived worker
    processes (`parallel` of them, each calling objective for run after
    run, as sweep.agent does); False: a process per trial. resume: a
    sweep this same call started before (the same config, folder, home,
    name and seed) and left unfinished (Ctrl-C, a crash) is resumed, not
    started again; False: always a new sweep. SweepFailed when `sweep
    run` fails (an invalid config: its problems, returncode 2);
    SweepInterrupted (a SystemExit, status 130) after Ctrl-C, the sweep
    left resumable."""
    import re
    import shutil
    import tempfile
    if run_id():
        raise RuntimeError("sweep.run() inside a trial of sweep %s: guard "
                           "the call with `if __name__ == \"__main__\":`"
                           % (_environ().get("SWEEP_ID") or "?"))
    if isinstance(config, (str, bytes)) or hasattr(config, "__fspath__"):
        with open(config, encoding="utf-8") as f:
            text = f.read()
        try:
            config = json.loads(text)
        except ValueError:
            config, path = None, os.path.abspath(os.fsdecode(config))
    if config is not None and not isinstance(config, dict):
        raise TypeError("sweep.run(): config must be a dict or a file path, "
                        "got %s" % type(config).__name__)
    if objective is not None and not callable(objective):
        raise TypeError("sweep.run(): objective must be a function, got %s"
                        % type(objective).__name__)
    binary = sweep_bin or shutil.which("sweep")
    if not binary:
        raise FileNotFoundError("sweep.run(): no `sweep` binary on PATH: "
                                "build it (README.md) or pass sweep_bin=")
    env = dict(os.environ)
    if home is not None:
        env["SWEEP_HOME"] = os.path.abspath(os.fspath(home))
    tmp = tempfile.mkdtemp(prefix="sweep-run-")
    try:
        if config is not None:
            config = dict(config)
            if objective is not None:
                if config.get("command") or config.get("program"):
                    raise ValueError("sweep.run(): the config has its own "
                                     "program or command; pass no objective "
                                     "to run it, or drop them")
                ref, root = _objective_ref(objective)
                metric = (config.get("metric") or {}).get("name") \
                    if isinstance(config.get("metric"), dict) else None
                config["command"] = [sys.executable, "-m", "sweep",
                                     "objective", ref, metric or "objective"]
                if not workers:
                    config["command"].append("--once")
                _prepend_path(env, root)
                _prepend_path(env, os.path.dirname(os.path.abspath(
                    __file__)))
            path = os.path.join(tmp, "%s.json" % re.sub(
                r"[^A-Za-z0-9_.-]", "_", str(options.get("name") or "sweep")))
            with open(path, "w", encoding="utf-8") as f:
                json.dump(config, f, allow_nan=True, indent=2)
        elif objective is not None:
            raise ValueError("sweep.run(): with a sweep file that is not "
                             "JSON, the file's own command runs: pass no "
                             "objective")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        args = [binary] + _run_args(path, parallel, options)
        sweep_id = _resumable(binary, env, text, options) if resume else None
        if sweep_id is not None:
            args = [binary] + _resume_args(sweep_id, parallel, options)
        # the config's file is ours and goes: its messages name it `config`
        code, sweep_id, err, interrupted = _drive(args, env, tmp + os.sep,
                                                  sweep_id)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if interrupted and code == 130 and sweep_id is not None:
        sys.stderr.write("sweep %s interrupted: run the script again to "
                         "resume it (or `sweep resume %s`)\n"
                         % (sweep_id, sweep_id))
        raise SweepInterrupted(sweep_id, env.get("SWEEP_HOME") or
                               os.path.abspath(".sweep"))
    if code != 0 or sweep_id is None:
        raise SweepFailed("sweep %s failed (exit %d): %s"
                          % (args[1], code, "".join(err[-20:]).strip()),
                          code, sweep_id)
    runs = _sweep_json(binary, env, "ls", sweep_id, "--json") or []
    best = _sweep_json(binary, env, "best", sweep_id, "--top", "1", "--json")
    return SweepResult(sweep_id, runs, best[0] if best else None,
                       env.get("SWEEP_HOME") or os.path.abspath(".sweep"))


class SweepInterrupted(SystemExit):
    """sweep.run() was interrupted (Ctrl-C): the sweep `sweep_id` is left
    `interrupted`, as `sweep run` leaves it, and the same sweep.run() call
    resumes it. A SystemExit with status 130, so an uncaught one ends the
    script with one line and no traceback."""

    def __init__(self, sweep_id, home):
        SystemExit.__init__(self, 130)
        self.sweep_id = sweep_id
        self.home = home


def _resumable(binary, env, text, options):
    """The id of the sweep this sweep.run() call started before and that
    was left unfinished (interrupted, or running when its `sweep` died):
    the same config, from the same folder, with the same name and seed
    when given; None when there is none (or no store yet)."""
    rows = _sweep_json(binary, env, "query",
                       "SELECT id, name, seed, cwd, config FROM sweeps "
                       "WHERE state IN ('interrupted', 'running') "
                       "ORDER BY created_at DESC", "--json") or []
    for row in rows:
        if row.get("config") != text or row.get("cwd") != os.getcwd():
            continue
        if options.get("name") is not None and \
                row.get("name") != str(options["name"]):
            continue
        if options.get("seed") is not None and \
                str(row.get("seed")) != str(options["seed"]):
            continue
        return row.get("id")
    return None


def _resume_args(sweep_id, parallel, options):
    """`sweep resume` with what of sweep.run()'s options it takes (the
    sweep keeps its seed, name and backend)."""
    args = ["resume", sweep_id]
    if parallel is not None:
        args += ["--parallel", str(int(parallel))]
    for key in ("gpus", "listen"):
        if options.get(key) is not None:
            args += [_RUN_OPTIONS[key], str(options[key])]
    if options.get("quiet"):
        args.append("--quiet")
    return args


def _drive(args, env, ours, sweep_id):
    """Runs `sweep run` or `sweep resume` (args), its output on ours with
    our temporary folder named `config:`; returns (exit status, sweep id,
    stderr lines, interrupted). In the main thread, Ctrl-C is passed on
    to it once per press, as a terminal passes it to `sweep run` (one
    press: no new trials, the running ones finish, the sweep is left
    interrupted; a second: they are stopped), and its exit is awaited."""
    import re
    import subprocess
    err, interrupted = [], []
    main = threading.current_thread() is threading.main_thread()

    def pump_err(stream):
        for line in stream:
            line = line.replace(ours, "config:")
            err.append(line)
            if interrupted and re.match(r"sweep \w+: sweep [0-9a-f]+ "
                                        r"interrupted", line):
                continue  # said once, below, in the package's words
            sys.stderr.write(line)
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, universal_newlines=True,
                            start_new_session=main)
    old = None

    def on_int(signum, frame):
        interrupted.append(True)
        try:
            proc.send_signal(signal.SIGINT)
        except OSError:
            pass
    if main:
        old = signal.signal(signal.SIGINT, on_int)
    try:
        t = threading.Thread(target=pump_err, args=(proc.stderr,),
                             daemon=True)
        t.start()
        for line in proc.stdout:
            sys.stdout.write(line.replace(ours, "config:"))
            m = re.match(r"sweep ([0-9a-f]+):", line)
            if m and sweep_id is None:
                sweep_id = m.group(1)
        proc.wait()
        t.join()
    finally:
        if main:
            signal.signal(signal.SIGINT, old)
        if proc.poll() is None:  # an exception of ours: don't leave it
            proc.send_signal(signal.SIGINT)
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    return proc.returncode, sweep_id, err, bool(interrupted)


def _main(argv):
    """python -m sweep objective REF METRIC [--once]: the worker (or with
    --once, the one trial) of sweep.run()."""
    if len(argv) in (3, 4) and argv[0] == "objective" and \
            argv[3:] in ([], ["--once"]):
        import sweep as module  # one copy of the client, not __main__'s
        return module._serve_objective(argv[1], argv[2], once=len(argv) == 4)
    sys.stderr.write("usage: python -m sweep objective MODULE:FUNCTION "
                     "METRIC [--once] (what sweep.run() gives its trials)\n")
    return 2


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

if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
