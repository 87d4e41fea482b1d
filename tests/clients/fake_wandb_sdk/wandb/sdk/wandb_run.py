"""The Run: what wandb.init() returns and wandb.log writes to."""
import collections.abc
import functools
import json
import os
import sys

import wandb
from wandb.sdk.lib import module


def _out(run_id, record):
    path = os.environ.get("FAKE_WANDB_OUT")
    if path:
        with open(path % {"run": run_id or "none"}, "a") as f:
            f.write(json.dumps(record) + "\n")


def _attach(func):
    """The SDK re-attaches a run used from another process; here it only
    checks the run is used where it was made."""
    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        if getattr(self, "_init_pid", None) not in (None, os.getpid()):
            raise wandb.UsageError("run used from another process")
        return func(self, *args, **kwargs)
    return wrapper


def _noop_on_finish(func):
    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        if not getattr(self, "_is_finished", False):
            return func(self, *args, **kwargs)
        raise wandb.UsageError(
            "Run (%s) is finished. The call to `%s` will be ignored. Please "
            "make sure that you are using an active run."
            % (self.id, func.__name__))
    return wrapper


class Summary(dict):
    """run.summary: the last value of each key, or what was set."""


class Metric(object):
    def __init__(self, name, step_metric=None, summary=None):
        self.name = name
        self.step_metric = step_metric
        self.summary = summary


class _Handler(object):
    """The SDK's internal process: partial history rows, by step."""

    def __init__(self, run):
        self._run = run
        self._step = 0
        self._row = {}

    def partial_history(self, row, step=None, flush=None):
        if step is not None:
            if step < self._step:
                sys.stderr.write("wandb: WARNING (User provided step: %d is "
                                 "less than current step: %d. Dropping "
                                 "entry: %r).\n" % (step, self._step, row))
                return
            if step > self._step:
                self.flush()
                self._step = step
        elif flush is None:
            flush = True
        self._row.update(row)
        if flush:
            self.flush()

    def flush(self):
        if self._row:
            numbers = {k: v for k, v in self._row.items()
                       if isinstance(v, (int, float))}
            _out(self._run.id, {"step": self._step, "row": numbers})
            self._run.summary.update(self._row)
            self._step += 1
        self._row = {}


class Run(object):
    def __init__(self, settings, config):
        self._settings = settings
        self._config = config
        self.summary = Summary()
        self._step = 0
        self._is_finished = False
        self._init_pid = os.getpid()
        self._handler = _Handler(self)
        self._metrics = {}

    def _on_start(self):
        _out(self.id, {"init": self.id, "sweep": self.sweep_id,
                       "config": dict(self._config), "pid": os.getpid()})
        # the object is about to be returned to the user: no new attributes
        self._freeze()

    def _freeze(self):
        self._frozen = True

    def __setattr__(self, attr, value):
        if getattr(self, "_frozen", None) and not hasattr(self, attr):
            raise Exception("Attribute %s is not supported on Run object."
                            % attr)
        object.__setattr__(self, attr, value)

    @property
    def id(self):
        return self._settings["run_id"]

    @property
    def sweep_id(self):
        return self._settings["sweep_id"]

    @property
    def config(self):
        return self._config

    @property
    def step(self):
        return self._step

    def _log(self, data, step=None, commit=None):
        if not isinstance(data, collections.abc.Mapping):
            raise ValueError("wandb.log must be passed a dictionary")
        if any(not isinstance(key, str) for key in data.keys()):
            raise ValueError("Key values passed to `wandb.log` must be "
                             "strings.")
        self._handler.partial_history(dict(data), step, commit)
        if step is not None and step > self._step:
            self._step = step
        if (step is None and commit is None) or commit:
            self._step += 1

    @_noop_on_finish
    @_attach
    def log(self, data, step=None, commit=None, sync=None):
        self._log(data, step=step, commit=commit)

    @_noop_on_finish
    @_attach
    def define_metric(self, name, step_metric=None, step_sync=None,
                      hidden=None, summary=None, goal=None, overwrite=None):
        if not isinstance(name, str) or not name:
            raise wandb.Error("define_metric() requires a non-empty name")
        m = Metric(name, step_metric, summary)
        self._metrics[name] = m
        _out(self.id, {"define_metric": name, "step_metric": step_metric,
                       "summary": summary})
        return m

    @_attach
    def finish(self, exit_code=None, quiet=None):
        if self._is_finished:
            return
        self._handler.flush()
        self._is_finished = True
        _out(self.id, {"finish": self.id,
                       "summary": {k: v for k, v in self.summary.items()
                                   if isinstance(v, (int, float))}})
        if wandb.run is self:
            module.unset_globals()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.finish(exit_code=0 if exc_type is None else 1)
        return False


def finish(exit_code=None, quiet=None):
    if wandb.run is not None:
        wandb.run.finish(exit_code=exit_code, quiet=quiet)
