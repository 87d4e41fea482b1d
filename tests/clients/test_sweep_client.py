"""Tests of examples/clients/python/sweep.py against the fake server.

Run: /usr/bin/python3 tests/clients/test_sweep_client.py (CTest: clients.python).
"""
import contextlib
import fractions
import io
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLIENTS = os.path.join(ROOT, "examples", "clients", "python")
sys.path.insert(0, CLIENTS)
sys.path.insert(0, HERE)

import sweep  # noqa: E402
from fake_metrics_server import FakeMetricsServer  # noqa: E402


def metrics_lines(text):
    """The reports in `@metrics` lines of `text`, less the `_timestamp`
    each carries (checked to be a time of this run)."""
    out = []
    for l in text.splitlines():
        if l.startswith("@metrics "):
            obj = json.loads(l[len("@metrics "):])
            at = obj.pop("_timestamp", None)
            assert at is None or abs(at - time.time()) < 600, at
            out.append(obj)
    return out


class Base(unittest.TestCase):
    server_args = {}

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sweep-client-")
        self.url_file = os.path.join(self.dir, "url")
        self.server = FakeMetricsServer(url_file=self.url_file,
                                        **self.server_args).start()
        self.out = io.StringIO()
        self.err = io.StringIO()
        self.clients = []
        stack = contextlib.ExitStack()
        stack.enter_context(contextlib.redirect_stderr(self.err))
        self.addCleanup(stack.close)

    def tearDown(self):
        for c in self.clients:
            c.close(0)
        self.server.stop()
        shutil.rmtree(self.dir)

    def client(self, **kw):
        args = dict(url=self.server.url, token=self.server.token,
                    url_file=self.url_file, env={}, stream=self.out,
                    max_backoff=0.5)
        args.update(kw)
        c = sweep.Client(**args)
        self.clients.append(c)
        return c


class Delivery(Base):
    def test_a_report_is_acknowledged_before_report_returns(self):
        c = self.client()
        self.assertFalse(c.report(step=1, loss=0.5, acc=1))
        self.assertFalse(c.report(loss=0.25))
        self.assertEqual(self.server.records,
                         [{"step": 1, "loss": 0.5, "acc": 1}, {"step": 2, "loss": 0.25}])
        self.assertEqual(self.out.getvalue(), "")

    def test_each_report_carries_when_it_was_logged(self):
        # a batch sent at once keeps each report's own time (_timestamp,
        # W&B's key), so the server need not stamp them all alike
        self.server.delay = 0.3
        c = self.client(wait=0)
        t0 = time.time()
        for i in range(3):
            c.report(step=i, loss=1.0 / (i + 1))
            time.sleep(0.05)
        c.flush(10)
        at = self.server.timestamps
        self.assertEqual(len(at), 3)
        self.assertTrue(t0 <= at[0] < at[1] < at[2] <= time.time(), at)
        self.assertGreaterEqual(at[2] - at[0], 0.09)

    def test_stop_is_returned_and_stays(self):
        self.server.stop_after = 3
        c = self.client()
        got = [c.report(step=i, loss=1.0 / i) for i in range(1, 6)]
        self.assertEqual(got, [False, False, True, True, True])
        self.assertTrue(c.should_stop())
        self.assertFalse(c.terminated())

    def test_nan_and_infinities_arrive(self):
        c = self.client()
        c.report(step=0, a=float("nan"), b=float("inf"), c=-float("inf"),
                 d=True, e=fractions.Fraction(1, 4), f=10 ** 20)
        r = self.server.records[0]
        self.assertTrue(math.isnan(r["a"]))
        self.assertEqual((r["b"], r["c"], r["d"], r["e"], r["f"]),
                         (math.inf, -math.inf, True, 0.25, 10 ** 20))

    def test_no_value_lost_across_an_outage_and_a_new_port(self):
        c = self.client()
        for i in range(1, 6):
            c.report(step=i, loss=float(i))
        old = self.server.url
        self.server.down()
        slowest = 0.0
        for i in range(6, 41):
            t = time.monotonic()
            self.assertFalse(c.report(step=i, loss=float(i)))
            slowest = max(slowest, time.monotonic() - t)
        self.assertLess(slowest, 0.5, "report() blocked during the outage")
        self.server.up()
        self.assertNotEqual(self.server.url, old)
        self.assertTrue(c.flush(30))
        self.assertEqual(self.server.values("loss"),
                         [float(i) for i in range(1, 41)])
        self.assertLess(len(self.server.sizes_ok), 40,
                        "the backlog was not batched")

    def test_retry_after_is_honoured(self):
        self.server.busy(2, retry_after=1)
        c = self.client()
        t = time.monotonic()
        self.assertFalse(c.report(step=1, loss=1.0))
        self.assertLess(time.monotonic() - t, 0.9)
        self.assertTrue(c.flush(30))
        self.assertGreaterEqual(time.monotonic() - t, 2.0)
        self.assertEqual(self.server.statuses, [503, 503, 200])
        self.assertEqual(self.server.values("loss"), [1.0])

    def test_a_slow_answer_holds_report_at_most_wait(self):
        self.server.delay = 2
        c = self.client(wait=0.3)
        t = time.monotonic()
        self.assertFalse(c.report(step=1, loss=1.0))
        self.assertLess(time.monotonic() - t, 1.5)
        self.assertTrue(c.flush(30))
        self.assertEqual(self.server.values("loss"), [1.0])

    def test_flush_gives_up_after_its_timeout(self):
        c = self.client()
        self.server.down()
        c.report(step=1, loss=1.0)
        t = time.monotonic()
        self.assertFalse(c.flush(0.5))
        self.assertLess(time.monotonic() - t, 2.0)

    def test_close_writes_what_is_undelivered_to_stdout(self):
        c = self.client()
        self.server.down()
        for i in range(3):
            c.report(step=i, loss=float(i))
        c.close(0.2)
        self.assertEqual(metrics_lines(self.out.getvalue()),
                         [{"step": i, "loss": float(i)} for i in range(3)])
        self.assertIn("3 report(s) not delivered", self.err.getvalue())


    @unittest.skipUnless(hasattr(os, "fork"), "needs fork")
    def test_a_forked_child_does_not_resend_the_parents_values(self):
        c = self.client()
        self.server.down()
        c.report(step=1, loss=1.0)
        pid = os.fork()
        if pid == 0:  # the child: an empty queue, no thread yet
            os._exit(0 if not c._queue and not c._inflight and
                     c._thread is None else 1)
        self.assertEqual(os.waitpid(pid, 0)[1], 0)
        self.server.up()
        self.assertTrue(c.flush(30))
        self.assertEqual(self.server.values("loss"), [1.0])


class Batching(Base):
    server_args = {"max_body": 2000}

    def backlog(self, c, n):
        self.server.down()
        for i in range(n):
            c.report(step=i, validation_loss_of_a_rather_long_name=float(i),
                     another_fairly_long_metric_name_here=i * 2)
        self.server.up()
        self.assertTrue(c.flush(30))
        self.assertEqual(self.server.values("another_fairly_long_metric_"
                                            "name_here"),
                         [i * 2 for i in range(n)])

    def test_a_413_splits_batches_and_loses_nothing(self):
        c = self.client()
        self.backlog(c, 200)
        self.assertTrue(self.server.sizes_refused)
        self.assertLessEqual(max(self.server.sizes_ok), 2000)

    def test_batches_stay_under_max_body(self):
        c = self.client(max_body=1500)
        self.backlog(c, 200)
        self.assertEqual(self.server.sizes_refused, [])
        self.assertLessEqual(max(self.server.sizes_ok), 1500)
        self.assertLess(len(self.server.sizes_ok), 100)

    def test_one_report_over_the_limit_goes_to_stdout(self):
        c = self.client()
        big = {"m%04d" % i: float(i) for i in range(200)}
        with self.assertRaisesRegex(sweep.MetricsRejected, "413"):
            c.report(step=1, **big)
        self.assertFalse(c.report(step=2, loss=1.0))
        self.assertEqual(metrics_lines(self.out.getvalue()),
                         [dict(step=1, **big)])
        self.assertEqual(self.server.values("loss"), [1.0])


class Refusals(Base):
    server_args = {"reject_names": ["bad"]}

    def test_values_that_are_not_numbers_raise(self):
        c = self.client()

        class Tensor(object):
            def item(self):
                return 1.0

        for value in ("0.5", None, [1.0], {"a": 1}, b"1"):
            with self.assertRaisesRegex(TypeError, "must be a number"):
                c.report(step=1, loss=value)
        with self.assertRaisesRegex(TypeError, r"value\.item\(\)"):
            c.report(step=1, loss=Tensor())
        for step, exc in ((1.5, TypeError), (True, TypeError),
                          ("3", TypeError), (-1, ValueError)):
            with self.assertRaises(exc):
                c.report(step=step, loss=1.0)
        for name in ("", "a\nb", "x\x00", "\ud800"):
            with self.assertRaises(ValueError):
                c.report(step=1, **{name: 1.0})
        with self.assertRaises(ValueError):
            c.report(step=1)
        self.assertEqual(self.server.statuses, [])

    def test_a_400_raises_and_is_not_retried(self):
        c = self.client()
        with self.assertRaisesRegex(sweep.MetricsRejected,
                                    "name refused"):
            c.report(step=1, bad=1.0)
        self.assertEqual(self.server.statuses, [400])
        self.assertFalse(c.report(step=2, loss=2.0))
        self.assertEqual(self.server.values("loss"), [2.0])

    def test_a_bad_report_in_a_batch_spares_the_others(self):
        c = self.client()
        self.server.down()
        c.report(step=1, loss=1.0)
        c.report(step=2, bad=2.0)
        for i in range(3, 9):
            c.report(step=i, loss=float(i))
        self.server.up()
        with self.assertRaises(sweep.MetricsRejected):
            c.flush(30)
        self.assertTrue(c.flush(30))
        self.assertEqual(self.server.values("loss"),
                         [1.0] + [float(i) for i in range(3, 9)])
        self.assertLessEqual(self.server.statuses.count(400), 4)

    def test_a_wrong_token_falls_back_to_stdout(self):
        for token, status in (("nope", 401), ("tok-run-2", 403)):
            self.out = io.StringIO()
            c = self.client(token=token, stream=self.out)
            self.assertFalse(c.report(step=1, loss=1.0))
            c.flush(5)
            self.assertFalse(c.report(step=2, loss=2.0))
            self.assertEqual(metrics_lines(self.out.getvalue()),
                             [{"step": 1, "loss": 1.0},
                              {"step": 2, "loss": 2.0}])
            self.assertIn("answered %d" % status, self.err.getvalue())
        self.assertEqual(self.server.statuses, [401, 403])
        self.assertEqual(self.server.records, [])

    def test_a_bad_url_falls_back_to_stdout(self):
        c = self.client(url="ftp://example.org/x")
        c.report(step=1, loss=1.0)
        self.assertEqual(metrics_lines(self.out.getvalue()),
                         [{"step": 1, "loss": 1.0}])
        self.assertIn("bad URL", self.err.getvalue())


class Stdout(unittest.TestCase):
    def test_without_a_url_reports_are_stdout_lines(self):
        out = io.StringIO()
        c = sweep.Client(env={}, stream=out)
        self.assertFalse(c.report(step=3, loss=0.41, acc=0.87))
        self.assertFalse(c.report(loss=float("nan")))
        text = re.sub(r', "_timestamp": [0-9.]+', "", out.getvalue())
        self.assertEqual(text,
                         '@metrics {"step": 3, "loss": 0.41, "acc": 0.87}\n'
                         '@metrics {"step": 4, "loss": NaN}\n')

    def test_the_url_file_alone_is_enough(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        f = os.path.join(d, "url")
        srv = FakeMetricsServer(url_file=f).start()
        self.addCleanup(srv.stop)
        c = sweep.Client(env={"SWEEP_METRICS_URL_FILE": f,
                                     "SWEEP_TOKEN": srv.token})
        self.addCleanup(c.close, 0)
        c.report(step=1, loss=1.0)
        self.assertEqual(srv.values("loss"), [1.0])


SCRIPT = """
import os, sys, time
sys.path.insert(0, %r)
import sweep
sweep.handle_sigterm()
print("ready", flush=True)
for i in range(int(sys.argv[1])):
    if sweep.report(step=i, loss=float(i)):
        break
    time.sleep(float(sys.argv[2]))
sys.exit(143 if sweep.terminated() else 0)
""" % CLIENTS


class Process(unittest.TestCase):
    """The module-level API in a real process: exit flush, SIGTERM."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sweep-client-")
        self.addCleanup(shutil.rmtree, self.dir)
        self.script = os.path.join(self.dir, "trial.py")
        with open(self.script, "w") as f:
            f.write(SCRIPT)

    def start(self, env, *args):
        full = dict(os.environ)
        for k in ("SWEEP_METRICS_URL", "SWEEP_TOKEN",
                  "SWEEP_METRICS_URL_FILE", "SWEEP_FLUSH_TIMEOUT"):
            full.pop(k, None)
        full.update(env)
        return subprocess.Popen([sys.executable, self.script] +
                                [str(a) for a in args], env=full,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                universal_newlines=True)

    def test_exit_flushes_what_is_queued(self):
        srv = FakeMetricsServer().start()
        self.addCleanup(srv.stop)
        srv.busy(1, retry_after=1)
        p = self.start({"SWEEP_METRICS_URL": srv.url,
                        "SWEEP_TOKEN": srv.token}, 3, 0)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(srv.values("loss"), [0.0, 1.0, 2.0])
        self.assertEqual(metrics_lines(out), [])

    def test_exit_without_a_server_writes_stdout_lines(self):
        srv = FakeMetricsServer().start()
        url = srv.url
        srv.stop()
        t = time.monotonic()
        p = self.start({"SWEEP_METRICS_URL": url, "SWEEP_TOKEN": "t",
                        "SWEEP_FLUSH_TIMEOUT": "1"}, 3, 0)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        self.assertLess(time.monotonic() - t, 20)
        self.assertEqual(metrics_lines(out),
                         [{"step": i, "loss": float(i)} for i in range(3)])
        self.assertIn("not delivered", err)

    def test_sigterm_asks_the_loop_to_stop(self):
        p = self.start({}, 1000, 0.02)
        self.assertEqual(p.stdout.readline(), "ready\n")
        p.stdout.readline()
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 143, err)
        self.assertLess(len(metrics_lines(out)), 999)


if __name__ == "__main__":
    unittest.main(verbosity=2)
