"""Tests of the `sweep` package (examples/clients/python/): it installs
offline with pip into a fresh venv, from the checkout, and gives a trial
its run (params, checkpoint_dir, run_id), and agent() runs a function for
it; bad input is refused with a clear error. The old name, sweep_client,
still imports.

Run: /usr/bin/python3 tests/clients/test_package.py (CTest: clients.package).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PACKAGE = os.path.join(ROOT, "examples", "clients", "python")
sys.path.insert(0, PACKAGE)

import sweep  # noqa: E402


def make_venv(where, system_site_packages=False):
    """A venv of this interpreter with pip, or None (the reason printed)
    when this Python cannot make one (Debian without python3-venv)."""
    args = [sys.executable, "-m", "venv", where]
    if system_site_packages:
        args.insert(3, "--system-site-packages")
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    if p.returncode != 0:
        sys.stderr.write("cannot make a venv: %s\n" % p.stdout.strip())
        return None
    return os.path.join(where, "bin", "python")


def pip_install(python, *args):
    """pip install, offline: no index, nothing fetched."""
    env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([python, "-m", "pip", "install", "--no-index"] +
                          list(args), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)


class Install(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="sweep-venv-")
        cls.python = make_venv(os.path.join(cls.dir, "venv"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def setUp(self):
        if not self.python:
            self.skipTest("this Python cannot make a venv")

    def run_in_venv(self, code, **env):
        # from a folder of its own, so the checkout is not on sys.path
        return subprocess.run([self.python, "-c", code], cwd=self.dir,
                              env=dict(os.environ, **env),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)

    def test_pip_installs_it_offline_and_it_imports(self):
        p = pip_install(self.python, PACKAGE)
        self.assertEqual(p.returncode, 0, p.stdout)
        out = self.run_in_venv(
            "import sweep, sys; print(sweep.__file__); "
            "print(sweep.__version__); "
            "print(sorted(n for n in sweep.__all__ if not hasattr(sweep, n)))")
        self.assertEqual(out.returncode, 0, out.stderr)
        where, version, missing = out.stdout.splitlines()
        self.assertTrue(where.startswith(os.path.join(self.dir, "venv")),
                        where)
        self.assertEqual(version, sweep.__version__)
        self.assertEqual(missing, "[]")
        # the build leaves nothing in the checkout
        self.assertEqual(sorted(f for f in os.listdir(PACKAGE)
                                if f != "__pycache__"),
                         ["README.md", "_sweep_build.py", "pyproject.toml",
                          "sweep.py"])
        p = subprocess.run([self.python, "-m", "pip", "uninstall", "-y",
                            "sweep-client"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertNotEqual(self.run_in_venv("import sweep").returncode, 0)

    def test_editable_install_uses_the_checkout(self):
        p = pip_install(self.python, "-e", PACKAGE)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.addCleanup(subprocess.run, [self.python, "-m", "pip",
                                         "uninstall", "-y", "sweep-client"],
                        stdout=subprocess.DEVNULL)
        out = self.run_in_venv("import sweep; print(sweep.__file__)")
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(os.path.realpath(out.stdout.strip()),
                         os.path.realpath(os.path.join(PACKAGE, "sweep.py")))

    def test_the_sdist_holds_what_builds_it(self):
        import tarfile
        sys.path.insert(0, PACKAGE)
        import _sweep_build
        d = tempfile.mkdtemp(dir=self.dir)
        name = _sweep_build.build_sdist(d)
        with tarfile.open(os.path.join(d, name)) as t:
            names = sorted(m.name.split("/", 1)[1] for m in t.getmembers())
        self.assertEqual(names, ["PKG-INFO", "README.md", "_sweep_build.py",
                                 "pyproject.toml", "sweep.py"])
        p = pip_install(self.python, os.path.join(d, name))
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertEqual(self.run_in_venv("import sweep").returncode, 0)


class Run(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="sweep-run-")
        self.addCleanup(shutil.rmtree, self.dir)
        self.saved = dict(os.environ)
        self.addCleanup(self.restore)
        for k in list(os.environ):
            if k.startswith("SWEEP_") or k.startswith("WANDB_"):
                del os.environ[k]

    def restore(self):
        os.environ.clear()
        os.environ.update(self.saved)

    def params_file(self, text):
        path = os.path.join(self.dir, "params.json")
        with open(path, "w") as f:
            f.write(text)
        os.environ["SWEEP_PARAMS"] = path
        return path

    def test_outside_a_sweep(self):
        self.assertEqual(sweep.params(), {})
        self.assertIsNone(sweep.checkpoint_dir())
        self.assertIsNone(sweep.run_id())

    def test_the_run_is_the_environments(self):
        self.params_file('{"lr": 0.1, "opt": {"name": "adam", "b": [1, 2]}}')
        os.environ["SWEEP_CHECKPOINT_DIR"] = "/ck"
        os.environ["SWEEP_RUN_ID"] = "ab-1"
        p = sweep.params()
        self.assertEqual(p, {"lr": 0.1, "opt": {"name": "adam", "b": [1, 2]}})
        p["lr"] = 5  # a copy each call
        self.assertEqual(sweep.params()["lr"], 0.1)
        self.assertEqual(sweep.checkpoint_dir(), "/ck")
        self.assertEqual(sweep.run_id(), "ab-1")

    def test_bad_params_are_clear_errors(self):
        path = self.params_file("[1, 2]")
        with self.assertRaisesRegex(RuntimeError, "holds a list"):
            sweep.params()
        self.params_file("{nope")
        with self.assertRaisesRegex(RuntimeError, "is not JSON"):
            sweep.params()
        os.environ["SWEEP_PARAMS"] = path + ".missing"
        with self.assertRaisesRegex(RuntimeError, "cannot read SWEEP_PARAMS="
                                    + path + ".missing"):
            sweep.params()

    def test_agent_calls_the_function_once(self):
        self.params_file('{"lr": 0.5}')
        os.environ["SWEEP_RUN_ID"] = "ab-1"
        seen = []
        self.assertEqual(sweep.agent(lambda config: seen.append(config)), 1)
        self.assertEqual(seen, [{"lr": 0.5}])
        # wandb.agent's shape: a function of no argument, count, ids unused
        self.assertEqual(sweep.agent("ent/proj/abc", function=lambda:
                                     seen.append("w"), count=3), 1)
        self.assertEqual(seen[-1], "w")

        def train(config=None):  # W&B's idiom: called with nothing
            seen.append(config)
        sweep.agent("abc", function=train)
        self.assertIsNone(seen[-1])

        def stopped(config):
            raise sweep.StopRun("ab-1")
        self.assertEqual(sweep.agent(stopped), 1)  # a stop ends it, quietly

    def test_agent_refuses_bad_calls(self):
        with self.assertRaisesRegex(TypeError, "needs a function"):
            sweep.agent("abc")
        with self.assertRaisesRegex(ValueError, "count must be a positive"):
            sweep.agent(print, count=0)
        with self.assertRaisesRegex(ValueError, "count must be a positive"):
            sweep.agent(print, count=True)
        with self.assertRaisesRegex(RuntimeError, "not in a trial of `sweep "
                                    "run`"):
            sweep.agent(print)

    def test_stoprun_exits_quietly(self):
        self.assertTrue(issubclass(sweep.StopRun, SystemExit))
        p = subprocess.run([sys.executable, "-c",
                            "import sys; sys.path.insert(0, %r); import sweep;"
                            " raise sweep.StopRun('r')" % PACKAGE],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        self.assertEqual((p.returncode, p.stderr), (0, ""))


SW_BIN = os.environ.get("SW_BIN") or os.path.join(
    ROOT, "build", "debug", "orchestrator", "sweep")

DRIVER = """
import json, sys
import sweep
import objectives


def local(config):  # the script's own: found by its path
    return (config["x"] - 3) ** 2 + config["opt"]["b"]


if __name__ == "__main__":
    which = sys.argv[1]
    fn = {"main": local, "module": objectives.as_dict,
          "reports": objectives.reports, "pids": objectives.pids,
          "once": objectives.pids, "slow": objectives.slow}[which]
    res = sweep.run(CONFIG, fn, parallel=2, home="home", sweep_bin=BIN,
                    quiet=True, seed=3, workers=which != "once")
    print("RESULT " + json.dumps({"id": res.id, "best": res.best,
                                  "runs": res.runs}))
"""

OBJECTIVES = """
import os, time
import sweep


def as_dict(config):
    return {"loss": float(config["x"]), "aux": 1.0}


def reports(config):
    for step in range(3):
        sweep.report(step=step, loss=config["x"] * (3 - step))


def pids(config):
    return {"loss": float(config["x"]), "pid": os.getpid()}


def slow(config):  # a second a trial; says when the first one started
    open("started", "a").close()
    for step in range(4):
        time.sleep(0.25)
        sweep.report(step=step, loss=config["x"] * (4 - step))
"""

CONFIG = {"method": "grid", "metric": {"name": "loss", "goal": "minimize"},
          "parameters": {"x": {"values": [1, 2, 3, 4]},
                         "opt": {"parameters": {"b": {"values": [0, 1]}}}}}


class RunFromPython(unittest.TestCase):
    """sweep.run(config, objective) through the real binary, the package
    installed offline in a fresh venv."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="sweep-run-py-")
        cls.python = make_venv(os.path.join(cls.dir, "venv"))
        if cls.python:
            p = pip_install(cls.python, PACKAGE)
            assert p.returncode == 0, p.stdout

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def setUp(self):
        if not self.python:
            self.skipTest("this Python cannot make a venv")
        if not os.access(SW_BIN, os.X_OK):
            self.skipTest("no sweep binary at %s" % SW_BIN)
        self.work = tempfile.mkdtemp(dir=self.dir)
        with open(os.path.join(self.work, "driver.py"), "w") as f:
            f.write(DRIVER.replace("CONFIG", repr(CONFIG))
                    .replace("BIN", repr(SW_BIN)))
        with open(os.path.join(self.work, "objectives.py"), "w") as f:
            f.write(OBJECTIVES)
        # sweep.run() in this process: the sweep's folder is the test's,
        # never the checkout (a dirty tree would get a snapshot ref)
        self.addCleanup(os.chdir, os.getcwd())
        os.chdir(self.work)

    def drive(self, which):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("SWEEP_") and k != "PYTHONPATH"}
        p = subprocess.run([self.python, "driver.py", which], cwd=self.work,
                           env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True,
                           timeout=240)
        self.assertEqual(p.returncode, 0, p.stderr)
        line = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
        return json.loads(line[0][len("RESULT "):])

    def test_a_number_is_the_sweeps_metric(self):
        res = self.drive("main")
        runs = res["runs"]
        self.assertEqual(len(runs), 8)
        self.assertEqual({r["state"] for r in runs}, {"finished"})
        for r in runs:
            p = r["params"]
            self.assertEqual(r["value"], (p["x"] - 3) ** 2 + p["opt"]["b"])
        self.assertEqual(res["best"]["params"], {"x": 3, "opt": {"b": 0}})
        self.assertEqual(res["best"]["value"], 0)

    def test_a_dict_or_its_own_reports(self):
        res = self.drive("module")
        self.assertEqual(sorted(r["value"] for r in res["runs"]),
                         [1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0])
        res = self.drive("reports")
        self.assertEqual(sorted(r["value"] for r in res["runs"]),
                         [1, 1, 2, 2, 3, 3, 4, 4])  # the last report's

    def test_trials_are_served_by_long_lived_workers(self):
        # parallel 2: two worker processes serve the eight trials, or,
        # with workers=False, a process each
        for which, most in (("pids", 2), ("once", 8)):
            res = self.drive(which)
            self.assertEqual({r["state"] for r in res["runs"]}, {"finished"})
            self.assertEqual(len(res["runs"]), 8)
            p = subprocess.run([SW_BIN, "query", "SELECT DISTINCT value FROM "
                                "metrics WHERE name = 'pid' AND run_id LIKE '"
                                + res["id"] + "-%'", "--json"],
                               env=dict(os.environ, SWEEP_HOME=os.path.join(
                                   self.work, "home")),
                               stdout=subprocess.PIPE, universal_newlines=True)
            pids = p.stdout.splitlines()
            self.assertLessEqual(len(pids), most, which)
            self.assertGreaterEqual(len(pids), 1 if most == 2 else 8)

    def test_ctrl_c_leaves_it_resumable_and_the_script_resumes_it(self):
        # the script's process group gets SIGINT, as a terminal's Ctrl-C
        # sends it; the trials take a second each, the sweep eight
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("SWEEP_") and k != "PYTHONPATH"}
        with open(os.path.join(self.work, "err"), "w") as err:
            p = subprocess.Popen(
                [self.python, "driver.py", "slow"], cwd=self.work, env=env,
                stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
                preexec_fn=lambda: signal.signal(signal.SIGINT,
                                                 signal.SIG_DFL))
            try:
                started = os.path.join(self.work, "started")
                deadline = time.monotonic() + 120  # a loaded machine
                while not os.path.exists(started) and \
                        time.monotonic() < deadline and p.poll() is None:
                    time.sleep(0.05)
                self.assertTrue(os.path.exists(started))
                time.sleep(0.3)
                os.killpg(p.pid, signal.SIGINT)
                rc = p.wait(timeout=120)
            finally:
                if p.poll() is None:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
        with open(os.path.join(self.work, "err")) as f:
            text = f.read()
        self.assertEqual(rc, 130, text)
        self.assertNotIn("Traceback", text)
        said = [l for l in text.splitlines() if "interrupted" in l]
        self.assertEqual(len(said), 1, text)
        self.assertIn("run the script again to resume it", said[0])
        home = dict(os.environ, SWEEP_HOME=os.path.join(self.work, "home"))
        q = subprocess.run([SW_BIN, "query", "SELECT id, state FROM sweeps",
                            "--json"], env=home, stdout=subprocess.PIPE,
                           universal_newlines=True)
        first = [json.loads(l) for l in q.stdout.splitlines()]
        self.assertEqual([s["state"] for s in first], ["interrupted"])
        # the same script again: that sweep resumed, to its end
        res = self.drive("slow")
        self.assertEqual(res["id"], first[0]["id"])
        self.assertEqual(len(res["runs"]), 8)
        self.assertEqual({r["state"] for r in res["runs"]}, {"finished"})
        q = subprocess.run([SW_BIN, "query", "SELECT count(*) AS n FROM "
                            "sweeps", "--json"], env=home,
                           stdout=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(json.loads(q.stdout)["n"], 1)

    def test_bad_calls_are_refused_before_anything_runs(self):
        home = os.path.join(self.work, "nothing")
        with self.assertRaisesRegex(ValueError, "top level of a module"):
            sweep.run(CONFIG, lambda c: 1.0, home=home, sweep_bin=SW_BIN)
        with self.assertRaisesRegex(ValueError, "parallel must be"):
            sweep.run(CONFIG, None, parallel=0, home=home, sweep_bin=SW_BIN)
        with self.assertRaisesRegex(TypeError, "unknown option 'paralel'"):
            sweep.run(CONFIG, None, paralel=2, home=home, sweep_bin=SW_BIN)
        with self.assertRaisesRegex(TypeError, "config must be a dict"):
            sweep.run([1], None, home=home, sweep_bin=SW_BIN)
        with self.assertRaisesRegex(ValueError, "its own program"):
            sweep.run(dict(CONFIG, program="t.py"), make_venv, home=home,
                      sweep_bin=SW_BIN)
        with self.assertRaisesRegex(FileNotFoundError, "no `sweep` binary"):
            old = os.environ.get("PATH", "")
            os.environ["PATH"] = "/nonexistent"
            try:
                sweep.run(CONFIG, None, home=home)
            finally:
                os.environ["PATH"] = old
        self.assertFalse(os.path.exists(home))

    def test_an_invalid_config_says_why_and_changes_nothing(self):
        home = os.path.join(self.work, "home")
        bad = {"method": "grid", "parameters": {"x": {"min": 3, "max": 1}}}
        with self.assertRaises(sweep.SweepFailed) as cm:
            sweep.run(bad, None, home=home, sweep_bin=SW_BIN, quiet=True)
        self.assertEqual(cm.exception.returncode, 2)
        self.assertIn("config:sweep.json:", str(cm.exception))
        self.assertIn("parameters.x.min: min (3) must be less than max (1)",
                      str(cm.exception))
        self.assertFalse(os.path.exists(os.path.join(home, "runs")))

    def test_a_sweep_file_runs_its_own_command(self):
        path = os.path.join(self.work, "s.yaml")
        with open(path, "w") as f:
            f.write("method: grid\nmetric: {name: loss}\n"
                    "parameters: {x: {values: [2, 1]}}\n"
                    "command: [%s, -c, \"import json, os; p = json.load(open("
                    "os.environ['SWEEP_PARAMS'])); print('@metrics', "
                    "json.dumps({'loss': p['x']}))\"]\n" % sys.executable)
        res = sweep.run(path, home=os.path.join(self.work, "h"),
                        sweep_bin=SW_BIN, quiet=True)
        self.assertEqual(len(res.runs), 2)
        self.assertEqual(res.best["params"], {"x": 1})
        with self.assertRaisesRegex(ValueError, "pass no objective"):
            sweep.run(path, make_venv, sweep_bin=SW_BIN)

    def test_not_from_inside_a_trial(self):
        os.environ["SWEEP_RUN_ID"] = "ab-1"
        try:
            with self.assertRaisesRegex(RuntimeError, "inside a trial"):
                sweep.run(CONFIG, None, sweep_bin=SW_BIN)
        finally:
            del os.environ["SWEEP_RUN_ID"]


WORKER = """
import os, sys, time
import sweep


def train(config):
    attempt = os.environ["SWEEP_ATTEMPT"]
    print("run", sweep.run_id(), "pid", os.getpid(), "attempt", attempt,
          flush=True)
    sys.stderr.write("stderr of %s\\n" % sweep.run_id())
    for step in range(3):
        if sweep.report(step=step, loss=config["x"] * 10 + step):
            return  # stopped: the next run
        time.sleep(config.get("pause", 0))
    if config["x"] == config.get("kill", -1) and attempt == "1":
        os.kill(os.getpid(), 9)  # the worker dies mid-run
    if config["x"] == config.get("hang", -1):
        time.sleep(60)  # past the sweep's timeout


count = int(os.environ["COUNT"]) if os.environ.get("COUNT") else None
print("served", sweep.agent(train, count=count), flush=True)
"""


class Workers(unittest.TestCase):
    """sweep.agent(train) serving run after run in one process (the
    package installed offline in a fresh venv), through the real binary:
    each run keeps its own values, state, log, attempts, timeout and stop,
    and a worker that dies loses only its run."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="sweep-workers-")
        cls.python = make_venv(os.path.join(cls.dir, "venv"))
        if cls.python:
            p = pip_install(cls.python, PACKAGE)
            assert p.returncode == 0, p.stdout

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def setUp(self):
        if not self.python:
            self.skipTest("this Python cannot make a venv")
        if not os.access(SW_BIN, os.X_OK):
            self.skipTest("no sweep binary at %s" % SW_BIN)
        self.work = tempfile.mkdtemp(dir=self.dir)
        self.home = os.path.join(self.work, "home")
        with open(os.path.join(self.work, "worker.py"), "w") as f:
            f.write(WORKER)

    def sweep(self, *args, **extra):
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("SWEEP_") and k != "PYTHONPATH"}
        env["SWEEP_HOME"] = self.home
        env.update(extra)
        return subprocess.run([SW_BIN] + list(args), cwd=self.work, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=240)

    def query(self, sql):
        p = self.sweep("query", sql, "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        return [json.loads(l) for l in p.stdout.splitlines()]

    def start(self, xs, extra, parallel, **env):
        with open(os.path.join(self.work, "s.yaml"), "w") as f:
            f.write("method: grid\nmetric: {name: loss}\n"
                    "parameters:\n  x: {values: %s}\n%s"
                    "command: [%s, worker.py]\n"
                    % (json.dumps(xs), extra, self.python))
        return self.sweep("run", "s.yaml", "--parallel", str(parallel),
                          "--quiet", **env)

    def log_of(self, run, name="stdout.log"):
        with open(os.path.join(self.home, "runs", run, name)) as f:
            return f.read()

    def pids(self, run):
        """The process of each attempt of `run`, from its own log."""
        out = []
        for line in self.log_of(run).splitlines():
            w = line.split()
            if w[:1] == ["run"]:
                self.assertEqual(w[1], run, "another run's line in its log")
                out.append(int(w[3]))
        return out

    def test_twenty_runs_two_processes_and_a_worker_killed(self):
        p = self.start(list(range(20)),
                       "  kill: {value: 7}\n  pause: {value: 0.01}\n", 2)
        self.assertEqual(p.returncode, 0, p.stderr)
        runs = self.query("SELECT id, params, state, attempts FROM runs "
                          "ORDER BY idx")
        self.assertEqual([r["state"] for r in runs], ["finished"] * 20)
        metrics = self.query("SELECT run_id, step, name, value FROM metrics")
        pids = {}
        for r in runs:
            x = json.loads(r["params"])["x"]
            got = sorted((m["step"], m["value"]) for m in metrics
                         if m["run_id"] == r["id"])
            self.assertEqual(got, [(i, 10 * x + i) for i in range(3)],
                             r["id"])
            pids[r["id"]] = self.pids(r["id"])
            self.assertEqual(len(pids[r["id"]]), r["attempts"])
            self.assertIn("stderr of %s" % r["id"],
                          self.log_of(r["id"], "stderr.log"))
        killed = runs[7]["id"]
        self.assertEqual(runs[7]["attempts"], 2)
        self.assertEqual([r["attempts"] for r in runs if r["id"] != killed],
                         [1] * 19, "the other runs are untouched")
        outcomes = self.query("SELECT outcome FROM attempts WHERE run_id = "
                              "'%s' ORDER BY attempt" % killed)
        self.assertEqual([o["outcome"] for o in outcomes],
                         ["lost", "finished"])
        processes = {pid for ps in pids.values() for pid in ps}
        self.assertLessEqual(len(processes), 3, "two workers and a retry")
        self.assertNotIn(pids[killed][0], pids[killed][1:])
        # the store and the report see runs as with a process each
        p = self.sweep("report", "--json")
        self.assertEqual(p.returncode, 0, p.stderr)
        rep = json.loads(p.stdout)
        self.assertEqual((rep["runs"], rep["finished"], rep["attempts"]),
                         (20, 20, 21))

    def test_count_bounds_the_runs_a_worker_serves(self):
        p = self.start(list(range(6)), "", 1, COUNT="2")
        self.assertEqual(p.returncode, 0, p.stderr)
        runs = self.query("SELECT id, state FROM runs ORDER BY idx")
        self.assertEqual([r["state"] for r in runs], ["finished"] * 6)
        pids = [self.pids(r["id"])[0] for r in runs]
        self.assertEqual(len(set(pids)), 3)
        self.assertEqual(pids[0::2], pids[1::2])  # two runs each

    def test_sweep_killed_and_resumed_keeps_its_workers(self):
        # sweep is SIGKILLed while workers run handed-over runs; the
        # resumed sweep adopts them in their workers' processes, which go
        # on serving: every run once, every value once
        with open(os.path.join(self.work, "s.yaml"), "w") as f:
            f.write("method: grid\nmetric: {name: loss}\nparameters:\n"
                    "  x: {values: %s}\n  pause: {value: 0.1}\n"
                    "command: [%s, worker.py]\n"
                    % (json.dumps(list(range(12))), self.python))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("SWEEP_") and k != "PYTHONPATH"}
        env["SWEEP_HOME"] = self.home
        p = subprocess.Popen([SW_BIN, "run", "s.yaml", "--parallel", "2",
                              "--quiet"], cwd=self.work, env=env,
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        handed = []
        deadline = time.monotonic() + 60
        while not handed and time.monotonic() < deadline:
            time.sleep(0.05)
            runs = os.path.join(self.home, "runs")
            for run in os.listdir(runs) if os.path.isdir(runs) else []:
                if (os.path.exists(os.path.join(runs, run, "worker")) and
                        not os.path.exists(os.path.join(runs, run, "exit"))):
                    handed.append(run)
        p.kill()
        p.wait()
        before = set(os.listdir(os.path.join(self.home, "runs")))
        self.assertTrue(handed, "no run was handed to a worker")
        sweep_id = handed[0].rsplit("-", 1)[0]
        r = self.sweep("resume", sweep_id, "--quiet")
        self.assertEqual(r.returncode, 0, r.stderr)
        runs = self.query("SELECT id, state, attempts FROM runs")
        self.assertEqual(len(runs), 12)
        # one attempt each: a run caught in a hand-over at the kill either
        # was committed in its worker together with the end of the
        # worker's last run, or neither was (lifecycle.c, end_handed)
        self.assertEqual({(x["state"], x["attempts"]) for x in runs},
                         {("finished", 1)})
        counts = self.query("SELECT run_id, count(*) AS n FROM metrics "
                            "GROUP BY run_id")
        self.assertEqual({c["n"] for c in counts}, {3})
        # the two workers serve on, adopted: no worker is told the run it
        # asks from is not running (409) and exits
        processes = {pid for x in runs for pid in self.pids(x["id"])}
        self.assertLessEqual(len(processes), 2)
        # the process of the run handed over at the kill went on serving
        # runs the resumed sweep made
        later = [x["id"] for x in runs if x["id"] not in before]
        self.assertTrue(later, "the resumed sweep made no run")
        self.assertTrue(any(self.pids(handed[0])[-1] in self.pids(x)
                            for x in later),
                        "the worker of %s served no later run" % handed[0])

    def test_each_run_keeps_its_timeout_and_its_stop(self):
        # x=0 hangs past the timeout: it fails alone, and its worker with
        # it; asha stops 6, 7 and 8, worse than the best at their rung,
        # and their worker goes on to the next run
        p = self.start([5, 0, 6, 7, 8, 1], "  hang: {value: 0}\n"
                       "  pause: {value: 0.05}\n"
                       "timeout: 3\nearly_terminate: {type: asha, "
                       "min_iter: 2, eta: 2}\n", 1)
        self.assertEqual(p.returncode, 0, p.stderr)
        runs = self.query("SELECT id, state, reason, attempts FROM runs "
                          "ORDER BY idx")
        self.assertEqual([r["state"] for r in runs],
                         ["finished", "failed", "stopped", "stopped",
                          "stopped", "finished"])
        self.assertIn("timeout", runs[1]["reason"])
        for r in runs:
            self.assertEqual(r["attempts"], 1)
        # the hung run's worker died with it; the ones after share one
        self.assertNotEqual(self.pids(runs[1]["id"]),
                            self.pids(runs[2]["id"]))
        after = {self.pids(r["id"])[0] for r in runs[2:]}
        self.assertEqual(len(after), 1, "stopped runs hand over too")


class OldName(unittest.TestCase):
    def test_sweep_client_is_sweep(self):
        code = ("import sys; sys.path.insert(0, %r); import sweep_client, "
                "sweep; print(sweep_client is sweep, sweep.__file__)"
                % os.path.join(ROOT, "examples", "clients"))
        p = subprocess.run([sys.executable, "-c", code], cwd=tempfile.gettempdir(),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        same, where = p.stdout.split()
        self.assertEqual(same, "True")
        self.assertEqual(where, os.path.join(PACKAGE, "sweep.py"))

    def test_alone_it_says_where_the_client_went(self):
        d = tempfile.mkdtemp(prefix="sweep-old-")
        self.addCleanup(shutil.rmtree, d)
        shutil.copy(os.path.join(ROOT, "examples", "clients",
                                 "sweep_client.py"), d)
        p = subprocess.run([sys.executable, "-S", "-c", "import sweep_client"],
                           cwd=d, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("pip install examples/clients/python", p.stderr)


if __name__ == "__main__":
    unittest.main()
