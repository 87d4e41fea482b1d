"""Tests of the example trainer (examples/train_mlp.py) and its reporting:
it stops when the server says so, reports on stdout without a server, and
saves and exits on SIGTERM, resuming from where it was.

Skipped when this Python lacks torch or scikit-learn
(`bash .ci/install-deps --examples` installs Debian's).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TRAINER = os.path.join(ROOT, "examples", "train_mlp.py")
sys.path.insert(0, HERE)

from fake_metrics_server import FakeMetricsServer  # noqa: E402

try:
    import sklearn  # noqa: F401
    import torch
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False


def metrics_lines(text):
    """The reports of `text`'s @metrics lines, less when they were logged
    (`_timestamp`: a rerun logs the same values later)."""
    out = [json.loads(l[len("@metrics "):]) for l in text.splitlines()
           if l.startswith("@metrics ")]
    for obj in out:
        obj.pop("_timestamp", None)
    return out


@unittest.skipUnless(HAVE_TORCH, "needs torch and scikit-learn")
class Trainer(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sweep-trainer-")
        self.addCleanup(shutil.rmtree, self.dir)
        self.ckpt = os.path.join(self.dir, "model.pt")

    def env(self, **kw):
        env = dict(os.environ, SWEEP_CHECKPOINT_DIR=self.dir)
        for k in ("SWEEP_METRICS_URL", "SWEEP_TOKEN",
                  "SWEEP_METRICS_URL_FILE"):
            env.pop(k, None)
        env.update(kw)
        return env

    def start(self, epochs, **env):
        return subprocess.Popen(
            [sys.executable, TRAINER, "--epochs", str(epochs)],
            env=self.env(**env), stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, universal_newlines=True)

    def epoch_saved(self):
        return torch.load(self.ckpt)["epoch"]

    def test_it_stops_when_the_server_says_so(self):
        srv = FakeMetricsServer(stop_after=2).start()
        self.addCleanup(srv.stop)
        p = self.start(6, SWEEP_METRICS_URL=srv.url, SWEEP_TOKEN=srv.token)
        out, err = p.communicate(timeout=240)
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("stopped this run after epoch 2", err)
        self.assertEqual([r["step"] for r in srv.records], [1, 2])
        self.assertEqual(set(srv.records[0]), {"step", "val_loss", "val_acc"})
        self.assertEqual(self.epoch_saved(), 2)
        self.assertEqual(metrics_lines(out), [])

    def test_without_a_server_it_prints_metrics_lines(self):
        p = self.start(2)
        out, err = p.communicate(timeout=240)
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual([r["step"] for r in metrics_lines(out)], [1, 2])

    def test_sigterm_saves_and_a_rerun_resumes(self):
        p = self.start(100000)
        first = p.stdout.readline()
        self.assertTrue(first.startswith("@metrics "), first)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=240)
        self.assertEqual(p.returncode, 143, err)
        self.assertIn("checkpoint saved", err)
        done = self.epoch_saved()
        self.assertGreaterEqual(done, 1)
        p = self.start(done + 2)
        out, err = p.communicate(timeout=240)
        self.assertEqual(p.returncode, 0, err)
        resumed = metrics_lines(out)
        self.assertEqual([r["step"] for r in resumed], [done + 1, done + 2])
        # The same values as a run never interrupted: the checkpoint holds
        # the epoch's order, its position in it and the RNG.
        os.remove(self.ckpt)
        p = self.start(done + 2)
        out, err = p.communicate(timeout=240)
        self.assertEqual(metrics_lines(out)[-2:], resumed)


if __name__ == "__main__":
    unittest.main(verbosity=2)
