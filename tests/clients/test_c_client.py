"""Tests of the C client (examples/clients/sweep_report.c) against the fake
server, through tests/clients/c_probe.c and examples/clients/report_example.c.

CTest (clients.c) sets SW_C_PROBE and SW_REPORT_EXAMPLE to the binaries.
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from fake_metrics_server import FakeMetricsServer  # noqa: E402

PROBE = os.environ.get("SW_C_PROBE")
EXAMPLE = os.environ.get("SW_REPORT_EXAMPLE")


def metrics_lines(text):
    return [json.loads(l[len("@metrics "):]) for l in text.splitlines()
            if l.startswith("@metrics ")]


class Result(object):
    def __init__(self, proc, out, err):
        self.code = proc.returncode
        self.out = out
        self.err = err
        self.calls = []  # (action, rc, elapsed ms, message)
        for line in err.splitlines():
            parts = line.split(" ", 3)
            if (len(parts) >= 3 and parts[1].lstrip("-").isdigit() and
                    parts[2].isdigit()):
                self.calls.append((parts[0], int(parts[1]), float(parts[2]),
                                   parts[3] if len(parts) > 3 else ""))

    def rcs(self):
        return [c[1] for c in self.calls]


@unittest.skipUnless(PROBE and EXAMPLE, "run through CTest (clients.c)")
class CClient(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sweep-c-client-")
        self.url_file = os.path.join(self.dir, "url")
        self.server = FakeMetricsServer(url_file=self.url_file,
                                        reject_names=["bad"]).start()

    def tearDown(self):
        self.server.stop()
        shutil.rmtree(self.dir)

    def env(self, **kw):
        env = dict(os.environ)
        env.update(SWEEP_METRICS_URL=self.server.url,
                   SWEEP_TOKEN=self.server.token,
                   SWEEP_METRICS_URL_FILE=self.url_file)
        for k, v in kw.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        return env

    def start(self, args, **env):
        return subprocess.Popen([PROBE] + args, env=self.env(**env),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                universal_newlines=True)

    def probe(self, args, **env):
        p = self.start(args, **env)
        out, err = p.communicate(timeout=120)
        r = Result(p, out, err)
        self.assertEqual(r.code, 0, err)
        return r

    def test_reports_arrive_with_their_values(self):
        r = self.probe(['1:loss=0.5,acc=0.875', '-:x=-2.5e-300',
                        '2:a=nan,b=inf,c=-inf', '3:we"ird\\name=1'])
        self.assertEqual(r.rcs(), [0, 0, 0, 0])
        rec = self.server.records
        self.assertEqual(rec[0], {"step": 1, "loss": 0.5, "acc": 0.875})
        self.assertEqual(rec[1], {"step": 2, "x": -2.5e-300})
        self.assertTrue(math.isnan(rec[2]["a"]))
        self.assertEqual((rec[2]["b"], rec[2]["c"]), (math.inf, -math.inf))
        self.assertEqual(rec[3], {"step": 3, 'we"ird\\name': 1})
        self.assertEqual(r.out, "")

    def test_stop_is_returned_and_stays(self):
        self.server.stop_after = 2
        r = self.probe(["%d:loss=%d" % (i, i) for i in range(1, 5)])
        self.assertEqual(r.rcs(), [0, 1, 1, 1])

    def test_bad_arguments_are_refused_before_sending(self):
        r = self.probe(["1:step=1", "1:=1", "1:a\x01b=1", "1:"])
        self.assertEqual(r.rcs(), [-1, -1, -1, -1])
        self.assertEqual(self.server.statuses, [])

    def test_no_value_lost_across_an_outage_and_a_new_port(self):
        p = self.start(["%d:loss=%d" % (i, i) if i % 2 else "sleep:20"
                        for i in range(1, 301)] + ["flush:30"])
        time.sleep(0.5)
        self.server.down()
        time.sleep(1.5)
        self.server.up()
        out, err = p.communicate(timeout=120)
        r = Result(p, out, err)
        self.assertEqual(r.code, 0, err)
        self.assertEqual(self.server.values("loss"),
                         [float(i) for i in range(1, 301, 2)])
        self.assertEqual(r.calls[-1][:2], ("flush", 0))
        pending = [c for c in r.calls if c[1] == -2]
        self.assertTrue(pending, "the outage was not seen")
        slowest = max(c[2] for c in r.calls if c[0] != "flush")
        self.assertLess(slowest, 1600, "a report blocked past its budget")
        self.assertLess(len(self.server.sizes_ok), 150, "no batching")
        self.assertEqual(out, "")

    def test_retry_after_is_honoured(self):
        self.server.busy(2, retry_after=1)
        r = self.probe(["budget:0", "1:loss=1", "flush:30"])
        self.assertEqual(r.rcs(), [0, -2, 0])
        self.assertGreaterEqual(r.calls[2][2], 1500)
        self.assertEqual(self.server.statuses, [503, 503, 200])
        self.assertEqual(self.server.values("loss"), [1.0])

    def test_a_hung_server_holds_a_report_only_briefly(self):
        self.server.delay = 4
        r = self.probe(["budget:0", "1:loss=1"], SWEEP_FLUSH_TIMEOUT="0")
        self.assertEqual(r.rcs(), [0, -2])
        self.assertLess(r.calls[1][2], 3000)
        self.assertEqual(metrics_lines(r.out), [{"step": 1, "loss": 1}])

    def test_a_413_splits_the_batch(self):
        self.server.max_body = 600
        self.server.down()
        args = ["budget:0"] + ["%d:a_long_metric_name_for_the_test=%d" % (i, i)
                               for i in range(60)]
        p = self.start(args + ["sleep:1500", "flush:30"])
        time.sleep(0.8)
        self.server.up()
        out, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(
            self.server.values("a_long_metric_name_for_the_test"),
            list(range(60)))
        self.assertTrue(self.server.sizes_refused)
        self.assertLessEqual(max(self.server.sizes_ok), 600)

    def test_a_400_is_an_error_and_not_retried(self):
        r = self.probe(["1:bad=1", "2:loss=2"])
        self.assertEqual(r.rcs(), [-3, 0])
        self.assertIn("metric name refused", r.calls[0][3])
        self.assertEqual(self.server.statuses, [400, 200])

    def test_a_wrong_token_falls_back_to_stdout(self):
        r = self.probe(["1:loss=1", "2:loss=2"], SWEEP_TOKEN="nope")
        self.assertEqual(r.rcs(), [-4, 0])
        self.assertEqual(metrics_lines(r.out), [{"step": 1, "loss": 1},
                                                {"step": 2, "loss": 2}])
        self.assertEqual(self.server.statuses, [401])

    def test_without_a_url_reports_are_stdout_lines(self):
        r = self.probe(["3:loss=0.41,acc=0.87", "-:x=nan"],
                       SWEEP_METRICS_URL=None, SWEEP_METRICS_URL_FILE=None)
        self.assertEqual(r.rcs(), [0, 0])
        self.assertEqual(r.out, '@metrics {"step": 3, "loss": 0.41, '
                                '"acc": 0.87}\n'
                                '@metrics {"step": 4, "x": NaN}\n')

    def test_a_bad_url_falls_back_to_stdout(self):
        r = self.probe(["1:loss=1"], SWEEP_METRICS_URL="https://h:1/x",
                       SWEEP_METRICS_URL_FILE=None)
        self.assertEqual(r.rcs(), [-4])
        self.assertEqual(metrics_lines(r.out), [{"step": 1, "loss": 1}])

    def test_urls(self):
        port = self.server.port
        for url in ("http://h:99999/x", "http://[::1/x", "http://:80/x",
                    "ftp://h/x", "http://h:8a/x", "http://h:/x"):
            r = self.probe(["1:loss=1"], SWEEP_METRICS_URL=url,
                           SWEEP_METRICS_URL_FILE=None)
            self.assertEqual(r.rcs(), [-4], url)
        r = self.probe(["1:loss=1"], SWEEP_METRICS_URL_FILE=None,
                       SWEEP_METRICS_URL="http://127.0.0.1:%d" % port)
        self.assertEqual(r.rcs(), [-4])
        self.assertIn("answered 404", r.err)
        r = self.probe(["1:loss=2"], SWEEP_METRICS_URL_FILE=None,
                       SWEEP_METRICS_URL="HTTP://localhost:%d/v1/metrics"
                       % port)
        self.assertEqual(r.rcs(), [0])
        self.assertEqual(self.server.values("loss"), [2.0])

    def test_exit_writes_what_is_undelivered_to_stdout(self):
        self.server.down()
        r = self.probe(["budget:0", "1:loss=1", "2:loss=2"],
                       SWEEP_FLUSH_TIMEOUT="0.5")
        self.assertEqual(metrics_lines(r.out), [{"step": 1, "loss": 1},
                                                {"step": 2, "loss": 2}])
        self.assertIn("2 report(s) not delivered", r.err)

    def test_the_example_stops_when_told(self):
        self.server.stop_after = 3
        p = subprocess.run([EXAMPLE, "--lr=0.1", "--steps=50", "--ms=1"],
                           env=self.env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True,
                           timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("stopped by the sweep at step 3", p.stderr)
        self.assertEqual([r["step"] for r in self.server.records], [1, 2, 3])


if __name__ == "__main__":
    unittest.main(verbosity=2)
