"""Tests of the W&B side of the `sweep` package: a W&B trainer, unchanged
but for `sweep.mirror_wandb()`, run against a stand-in for W&B's SDK
(fake_wandb_sdk/: written from the SDK's public source, it freezes its
Run as the SDK does, binds wandb.log to run.log at init, reads
WANDB_SWEEP_PARAM_PATH with PyYAML and its settings once per process, and
counts steps as W&B does), in two shapes: 0.17's and the newest's.

- Against the fake server: wandb.log, run.log and wandb.run.log, with
  init before or after mirror_wandb(), each row once and no attribute
  set on the run; each committed row is reported at W&B's step
  (log() moves it on, step= forward, an older step ignored, commit=False
  held until the row is committed), only numbers, nested dicts flattened;
  a stop answer finishes the W&B run and exits 0.
- Through the real `sweep` binary, with the package installed offline in
  a fresh venv: docs/clients.md's W&B example as shown; wandb.config
  holds each run's parameters, nested groups
  included; the store holds exactly W&B's history; a stopping rule stops
  a run through its wandb.log; sweep.agent(sweep_id, function=train,
  count=5) serves run after run in one process as wandb.agent would,
  each with its own wandb.init and config.

Run: /usr/bin/python3 tests/clients/test_wandb.py (CTest: clients.wandb,
SW_BIN names the sweep binary). Needs PyYAML (W&B's SDK does).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PACKAGE = os.path.join(ROOT, "examples", "clients", "python")
sys.path.insert(0, HERE)

from fake_metrics_server import FakeMetricsServer  # noqa: E402
from test_package import make_venv, pip_install  # noqa: E402

try:
    import yaml  # noqa: F401
    HAVE_YAML = True
except ImportError:
    HAVE_YAML = False

# The stand-in for W&B's SDK: a package, written from the SDK's public
# source (fake_wandb_sdk/wandb/__init__.py says what it does as the SDK).
FAKE_SDK = os.path.join(HERE, "fake_wandb_sdk")

# A W&B trainer: only the mirror_wandb() line is sweep's.
TRAINER = '''
import os
import sys
import time

import wandb
import sweep; sweep.mirror_wandb()


def train():
    run = wandb.init(project="demo")
    cfg = wandb.config
    lr, depth = cfg["lr"], cfg["model"]["depth"]
    for epoch in range(cfg["epochs"]):
        loss = 1.0 / (1.0 + lr * depth * (epoch + 1))
        wandb.log({"train/loss": loss * 1.5}, commit=False)
        wandb.log({"loss": loss, "epoch": epoch, "note": "not a number",
                   "eval": {"acc": 1.0 - loss}})
        time.sleep(cfg.get("pause", 0))
    wandb.log({"final": lr * depth}, step=cfg["epochs"] + 10)
    wandb.log({"ignored": 1.0}, step=1)  # older: W&B drops it
    run.finish()


if os.environ.get("AS_AGENT"):
    n = sweep.agent("entity/project/abc123", function=train, count=5)
    print("agent served", n)
else:
    train()
'''


def history(path):
    """The stand-in's records of one run."""
    with open(path) as f:
        return [json.loads(line) for line in f]


def rows(records):
    """{(step, name): value} of the rows W&B committed."""
    out = {}
    for r in records:
        if "row" in r:
            for k, v in r["row"].items():
                out[(r["step"], k)] = v
    return out


@unittest.skipUnless(HAVE_YAML, "needs PyYAML, as W&B's SDK does")
class Mirror(unittest.TestCase):
    """The mirror in a trainer process, against the fake server."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sweep-wandb-")
        self.addCleanup(shutil.rmtree, self.dir)
        self.params = os.path.join(self.dir, "params.yaml")
        with open(self.params, "w") as f:
            f.write("wandb_version: 1\n\nlr:\n  value: 0.5\nepochs:\n"
                    "  value: 3\nmodel:\n  value: {\"depth\": 2}\n")

    def trainer(self, code, srv, **env):
        script = os.path.join(self.dir, "t.py")
        with open(script, "w") as f:
            f.write(textwrap.dedent(code))
        e = dict(os.environ, PYTHONPATH=os.pathsep.join([FAKE_SDK, PACKAGE]),
                 SWEEP_METRICS_URL=srv.url, SWEEP_TOKEN=srv.token,
                 SWEEP_RUN_ID="r-1", WANDB_RUN_ID="r-1",
                 WANDB_SWEEP_PARAM_PATH=self.params,
                 FAKE_WANDB_OUT=os.path.join(self.dir, "%(run)s.jsonl"))
        e.update(env)
        return subprocess.run([sys.executable, script], env=e, cwd=self.dir,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=120)

    def reported(self, srv):
        return {(r["step"], k): v for r in srv.records for k, v in r.items()
                if k != "step"}

    def test_reports_what_wandb_commits_at_its_step(self):
        srv = FakeMetricsServer().start()
        self.addCleanup(srv.stop)
        p = self.trainer(TRAINER, srv)
        self.assertEqual(p.returncode, 0, p.stderr)
        w = rows(history(os.path.join(self.dir, "r-1.jsonl")))
        got = self.reported(srv)
        # W&B keeps the nested dict whole; sweep gets it flattened
        self.assertEqual({k: v for k, v in got.items() if k[1] != "eval.acc"},
                         {k: v for k, v in w.items()})
        self.assertEqual(sorted(k for k in got if k[1] == "loss"),
                         [(0, "loss"), (1, "loss"), (2, "loss")])
        self.assertIn((0, "train/loss"), got)  # commit=False joined row 0
        self.assertAlmostEqual(got[(2, "eval.acc")], 1 - got[(2, "loss")])
        self.assertEqual(got[(13, "final")], 1.0)  # step= moved it on
        self.assertNotIn("ignored", {k[1] for k in got})
        self.assertNotIn("note", {k[1] for k in got})

    def test_a_stop_answer_finishes_the_wandb_run_and_exits_0(self):
        srv = FakeMetricsServer(stop_after=2).start()
        self.addCleanup(srv.stop)
        p = self.trainer(TRAINER, srv)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("run r-1 was stopped by the sweep", p.stderr)
        recs = history(os.path.join(self.dir, "r-1.jsonl"))
        self.assertEqual(recs[-1]["finish"], "r-1")
        self.assertEqual(sorted({s for s, _ in rows(recs)}), [0, 1])

    def test_without_stop_the_trainer_decides(self):
        srv = FakeMetricsServer(stop_after=1).start()
        self.addCleanup(srv.stop)
        p = self.trainer('''
            import wandb, sweep
            sweep.mirror_wandb(stop=False)
            sweep.mirror_wandb(stop=False)  # twice: wrapped once
            run = wandb.init()
            for i in range(3):
                wandb.log({"loss": float(i)})
            print(sweep.should_stop(), sweep._ours(type(run).log),
                  sweep._ours(type(run).log.__wrapped__))
            ''', srv)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), ["True", "True", "False"])
        self.assertEqual(srv.values("loss"), [0.0, 1.0, 2.0])

    def test_the_stand_in_refuses_new_run_attributes_as_the_sdk_does(self):
        # what broke the mirror with the real SDK: a frozen Run
        srv = FakeMetricsServer().start()
        self.addCleanup(srv.stop)
        p = self.trainer('''
            import wandb
            run = wandb.init()
            run._step = 0            # an attribute it has: allowed
            try:
                run._sweep_mirror = 1
            except Exception as e:
                print(type(e) is Exception, e)
            ''', srv)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "True Attribute _sweep_mirror is "
                         "not supported on Run object.")

    # every way a trainer logs, with init before or after mirror_wandb():
    # each committed row reported once, at W&B's step, nothing set on the run
    EVERY_WAY = '''
        import wandb, sweep
        if BEFORE:
            run = wandb.init()
        sweep.mirror_wandb()
        if not BEFORE:
            run = wandb.init()
        before = sorted(vars(run))
        wandb.define_metric("epoch")
        wandb.define_metric("val/*", step_metric="epoch", summary="min")
        for epoch in range(2):
            wandb.log({"loss": 1.0 + epoch})
            run.log({"acc": 0.5 + epoch}, commit=False)
            wandb.run.log({"val/loss": 2.0 + epoch, "epoch": epoch})
        wandb.summary["best"] = 7.0
        run.summary.update({"note": 1.0})
        assert sorted(vars(run)) == before, (before, sorted(vars(run)))
        run.finish()
        run = wandb.init(reinit=True)     # a second run, as an agent's
        wandb.log({"loss2": 9.0})       # (another name: one token here)
        run.log({"loss2": 8.0})
        wandb.finish()
        '''

    def every_way(self, before, api):
        srv = FakeMetricsServer().start()
        self.addCleanup(srv.stop)
        code = "BEFORE = %r\n" % before + textwrap.dedent(self.EVERY_WAY)
        out = os.path.join(self.dir, "%s-%s.jsonl" % (before, api))
        p = self.trainer(code, srv, FAKE_WANDB_API=api, FAKE_WANDB_OUT=out)
        self.assertEqual(p.returncode, 0, p.stderr)
        w = [rows(r) for r in self.runs_of(history(out))]
        self.assertEqual(len(w), 2)
        got = [(r["step"], k, v) for r in srv.records
               for k, v in sorted(r.items())
               if k not in ("step", "_timestamp")]
        want = [(s, k, v) for run in w for (s, k), v in sorted(run.items())]
        self.assertEqual(sorted(got), sorted(want))
        self.assertEqual(len(got), len(want))  # each once
        self.assertEqual(w[0][(3, "val/loss")], 3.0)  # W&B's step, not epoch
        self.assertEqual(w[1], {(0, "loss2"): 9.0, (1, "loss2"): 8.0})

    @staticmethod
    def runs_of(records):
        out = []
        for r in records:
            if "init" in r:
                out.append([])
            out[-1].append(r)
        return out

    def test_every_way_to_log_init_first(self):
        for api in ("0.17", "latest"):
            with self.subTest(api=api):
                self.every_way(True, api)

    def test_every_way_to_log_init_after(self):
        for api in ("0.17", "latest"):
            with self.subTest(api=api):
                self.every_way(False, api)

    def test_disabled_mode_reports_wandb_log(self):
        for api, run_log in (("0.17", False), ("latest", True)):
            with self.subTest(api=api):
                srv = FakeMetricsServer().start()
                self.addCleanup(srv.stop)
                p = self.trainer('''
                    import wandb, sweep
                    sweep.mirror_wandb()
                    run = wandb.init()
                    wandb.log({"loss": 1.0})
                    run.log({"loss": 2.0})
                    run.finish()
                    ''', srv, WANDB_MODE="disabled", FAKE_WANDB_API=api)
                self.assertEqual(p.returncode, 0, p.stderr)
                want = [1.0, 2.0] if run_log else [1.0]
                self.assertEqual(srv.values("loss"), want)
                self.assertEqual("run.log is not" in p.stderr, not run_log)

    def test_log_before_init_still_raises_wandbs_error(self):
        srv = FakeMetricsServer().start()
        self.addCleanup(srv.stop)
        p = self.trainer('''
            import wandb, sweep
            sweep.mirror_wandb()
            wandb.log({"loss": 1.0})
            ''', srv)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("You must call wandb.init() before wandb.log()",
                      p.stderr)
        self.assertEqual(srv.records, [])

    def test_without_wandb_the_error_is_clear(self):
        p = subprocess.run([sys.executable, "-c",
                            "import sys; sys.path.insert(0, %r); import sweep;"
                            " sweep.mirror_wandb()" % PACKAGE],
                           cwd=tempfile.gettempdir(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True,
                           env=dict(os.environ, PYTHONPATH=""))
        try:
            import wandb  # noqa: F401
            self.skipTest("a wandb is installed here")
        except ImportError:
            pass
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("sweep.mirror_wandb(): cannot import wandb", p.stderr)


SWEEP_FILE = '''
program: {trainer}
method: grid
parallel: 2
metric: {{name: loss, goal: minimize}}
parameters:
  lr: {{values: [0.5, 0.125]}}
  epochs: {{value: {epochs}}}
  pause: {{value: {pause}}}
  model:
    parameters:
      depth: {{values: [1, 2]}}
command: [{python}, "${{program}}"]
'''


@unittest.skipUnless(HAVE_YAML, "needs PyYAML, as W&B's SDK does")
class ThroughSweep(unittest.TestCase):
    """The real binary, the package installed offline in a fresh venv."""

    @classmethod
    def setUpClass(cls):
        cls.bin = os.environ.get("SW_BIN") or os.path.join(
            ROOT, "build", "debug", "orchestrator", "sweep")
        cls.dir = tempfile.mkdtemp(prefix="sweep-wandb-e2e-")
        # the trainer's venv sees this Python's PyYAML, as a W&B venv has it
        cls.python = make_venv(os.path.join(cls.dir, "venv"),
                               system_site_packages=True)
        if cls.python:
            p = pip_install(cls.python, PACKAGE)
            assert p.returncode == 0, p.stdout
        cls.lib = FAKE_SDK

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def setUp(self):
        if not self.python:
            self.skipTest("this Python cannot make a venv")
        if not os.access(self.bin, os.X_OK):
            self.skipTest("no sweep binary at %s" % self.bin)
        self.work = tempfile.mkdtemp(dir=self.dir)
        self.home = os.path.join(self.work, "home")
        self.out = os.path.join(self.work, "w-%(run)s.jsonl")

    def sweep(self, *args, **env):
        e = dict(os.environ, SWEEP_HOME=self.home, PYTHONPATH=self.lib,
                 FAKE_WANDB_OUT=self.out)
        e.update(env)
        return subprocess.run([self.bin] + list(args), env=e, cwd=self.work,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=240)

    def query(self, sql):
        p = self.sweep("query", sql, "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        return [json.loads(line) for line in p.stdout.splitlines()]

    def start(self, extra="", epochs=3, pause=0, **env):
        trainer = os.path.join(self.work, "train.py")
        with open(trainer, "w") as f:
            f.write(TRAINER)
        path = os.path.join(self.work, "sweep.yaml")
        with open(path, "w") as f:
            f.write(SWEEP_FILE.format(trainer=trainer, python=self.python,
                                      epochs=epochs, pause=pause) + extra)
        return self.sweep("run", path, "--quiet", **env)

    def check_runs(self):
        runs = self.query("SELECT id, sweep_id, params, state FROM runs "
                          "ORDER BY idx")
        self.assertEqual(len(runs), 4)
        metrics = self.query("SELECT run_id, step, name, value FROM metrics")
        for r in runs:
            recs = history(self.out % {"run": r["id"]})
            init = recs[0]
            self.assertEqual(init["init"], r["id"])
            self.assertEqual(init["sweep"], r["sweep_id"])
            self.assertEqual(init["config"], json.loads(r["params"]))
            self.assertEqual(recs[-1]["finish"], r["id"])
            stored = {(m["step"], m["name"]): m["value"] for m in metrics
                      if m["run_id"] == r["id"] and m["name"] != "eval.acc"}
            self.assertEqual(stored, rows(recs), r["id"])
        return runs

    def test_wandb_config_and_history_match_the_store(self):
        p = self.start()
        self.assertEqual(p.returncode, 0, p.stderr)
        runs = self.check_runs()
        self.assertEqual([r["state"] for r in runs], ["finished"] * 4)
        self.assertEqual(sorted((json.loads(r["params"])["lr"],
                                 json.loads(r["params"])["model"]["depth"])
                                for r in runs),
                         [(0.125, 1), (0.125, 2), (0.5, 1), (0.5, 2)])

    def test_the_agent_call_shape_serves_each_run(self):
        # wandb.agent(sweep_id, function=train, count=5): each of the 4
        # runs gets its own wandb.init, config and history, from at most
        # two processes (parallel 2) serving them in turn
        p = self.start(AS_AGENT="1")
        self.assertEqual(p.returncode, 0, p.stderr)
        runs = self.check_runs()
        served, pids = 0, set()
        for r in runs:
            pids.add(history(self.out % {"run": r["id"]})[0]["pid"])
            with open(os.path.join(self.home, "runs", r["id"],
                                   "stdout.log")) as f:
                for line in f:
                    if line.startswith("agent served "):
                        served += int(line.split()[2])
        self.assertEqual(served, 4)
        self.assertLessEqual(len(pids), 2)

    def test_a_stopping_rule_stops_a_run_through_wandb_log(self):
        # rungs at 2, 4 and 8 of 40 epochs: a stop decided at the last
        # rung still leaves 32 epochs (0.64 s) for it to reach the trial
        # on a loaded machine; without max_iter the last rung was 32
        p = self.start("early_terminate: {type: asha, min_iter: 2, eta: 2,"
                       " max_iter: 16}\n",
                       epochs=40, pause=0.02)
        self.assertEqual(p.returncode, 0, p.stderr)
        runs = self.query("SELECT id, state FROM runs ORDER BY idx")
        stopped = [r["id"] for r in runs if r["state"] == "stopped"]
        self.assertTrue(stopped, runs)
        for rid in stopped:
            recs = history(self.out % {"run": rid})
            self.assertEqual(recs[-1]["finish"], rid)
            self.assertLess(len(rows(recs)), 40 * 2)
            with open(os.path.join(self.home, "runs", rid,
                                   "stderr.log")) as f:
                self.assertIn("was stopped by the sweep", f.read())

    def docs_example(self):
        """docs/clients.md's W&B trainer, as the diff shows it after."""
        with open(os.path.join(ROOT, "docs", "clients.md")) as f:
            text = f.read()
        part = text[text.index("## Bring a W&B trainer"):]
        block = part[part.index("```diff\n") + 8:]
        block = block[:block.index("```")]
        return "".join(line[1:] + "\n" for line in block.splitlines()
                       if line[:1] in (" ", "+") or line == "")

    def test_the_docs_w_and_b_example_as_shown(self):
        # its W&B sweep file, with the trainer it names; run on both
        # shapes of the SDK (wandb.teardown public or not), 2 workers
        with open(os.path.join(self.work, "train.py"), "w") as f:
            f.write(self.docs_example())
        with open(os.path.join(self.work, "mymodel.py"), "w") as f:
            f.write("def train_one_epoch(lr, name):\n"
                    "    return lr * (2.0 if name == 'sgd' else 1.0)\n")
        path = os.path.join(self.work, "sweep.yaml")
        with open(path, "w") as f:
            f.write("program: train.py\nmethod: grid\nparallel: 2\n"
                    "metric: {name: loss, goal: minimize}\n"
                    "parameters:\n  lr: {values: [0.1, 0.2]}\n"
                    "  epochs: {value: 3}\n  optimizer:\n    parameters:\n"
                    "      name: {values: [sgd, adam]}\n"
                    "command: [%s, \"${program}\"]\n" % self.python)
        for api in ("0.17", "latest"):
            with self.subTest(api=api):
                self.home = os.path.join(self.work, "home-" + api)
                self.out = os.path.join(self.work, api + "-%(run)s.jsonl")
                p = self.sweep("run", path, "--quiet", FAKE_WANDB_API=api)
                self.assertEqual(p.returncode, 0, p.stderr)
                runs = self.query("SELECT id, params, state FROM runs")
                self.assertEqual([r["state"] for r in runs], ["finished"] * 4)
                metrics = self.query("SELECT run_id, step, name, value "
                                     "FROM metrics")
                for r in runs:
                    cfg = json.loads(r["params"])
                    recs = history(self.out % {"run": r["id"]})
                    self.assertEqual(recs[0]["config"], cfg)  # its own
                    want = cfg["lr"] * (2.0 if cfg["optimizer"]["name"] ==
                                        "sgd" else 1.0)
                    stored = {(m["step"], m["name"]): m["value"]
                              for m in metrics if m["run_id"] == r["id"]}
                    self.assertEqual(stored, rows(recs))
                    self.assertEqual(stored[(2, "loss")], want)


if __name__ == "__main__":
    unittest.main()
