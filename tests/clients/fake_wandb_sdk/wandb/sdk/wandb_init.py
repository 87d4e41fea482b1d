"""wandb.init(): the run, its config (the sweep's parameters from
WANDB_SWEEP_PARAM_PATH, as the SDK reads them, with PyYAML) and the
module's functions bound to it."""
import os

import yaml

import wandb
from wandb.sdk import wandb_config, wandb_setup
from wandb.sdk.lib import module
from wandb.sdk.wandb_run import Run, Summary


def _sweep_config(path):
    if not path:
        return {}
    with open(path) as f:  # must exist, version 1, each "value"
        loaded = yaml.safe_load(f)
    if loaded.pop("wandb_version", None) not in (None, 1):
        raise ValueError("Unknown config version")
    return {k: v["value"] for k, v in loaded.items()}


class NoopRun(Run):
    """A disabled run, as the newest SDKs make it: a Run subclass."""

    def log(self, data, *args, **kwargs):
        self.summary.update(data)

    def finish(self, *args, **kwargs):
        if wandb.run is self:
            module.unset_globals()


def _disabled(settings, cfg):
    if os.environ.get("FAKE_WANDB_API", "0.17") == "latest":
        run = NoopRun(settings, cfg)
    else:  # 0.15 to 0.19: a Run whose methods are its own lambdas
        run = Run(settings, cfg)
        run.summary = Summary()
        run.log = lambda data, *_, **__: run.summary.update(data)
        run.finish = lambda *_, **__: module.unset_globals()
    module.set_global(run=run, config=run.config, log=run.log,
                      summary=run.summary, define_metric=run.define_metric)
    return run


def init(config=None, project=None, mode=None, reinit=None, **kwargs):
    wl = wandb_setup.setup()
    if wandb.run is not None and not reinit:
        return wandb.run
    settings = dict(wl.settings)
    cfg = wandb_config.Config(config or {})
    cfg.update(_sweep_config(settings["sweep_param_path"]))
    if (mode or settings["mode"]) == "disabled":
        return _disabled(settings, cfg)
    run = Run(settings, cfg)
    run._on_start()
    module.set_global(run=run, config=run.config, log=run.log,
                      summary=run.summary, define_metric=run.define_metric)
    return run
