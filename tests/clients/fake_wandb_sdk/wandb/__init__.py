"""A stand-in for W&B's Python SDK, for sweep's tests (tests/clients/).

Written for these tests from what W&B's public source does (releases
0.15 to today), not copied from it: the parts a trainer touches, with the
SDK's own behaviour where it matters to sweep.mirror_wandb():

- a Run refuses new attributes once wandb.init() returns (its
  __setattr__ raises a plain Exception, "Attribute X is not supported on
  Run object.");
- wandb.log, wandb.config, wandb.summary, wandb.define_metric are
  preinit stand-ins until wandb.init() binds them to the run's own
  (wandb.log is then the bound method run.log), and finish() unbinds them;
- the settings (WANDB_RUN_ID, WANDB_SWEEP_PARAM_PATH, WANDB_MODE) are read
  from the environment once per process, until a teardown;
- steps are counted as the SDK and its internal handler count them.

FAKE_WANDB_API picks the shape of the module: "0.17" (the default: Run
only as wandb.sdk.wandb_run.Run, teardown only as wandb._teardown, a
disabled run's log an attribute of its own) or "latest" (wandb.Run,
wandb.teardown, a disabled run of a Run subclass). FAKE_WANDB_OUT names
a file ("%(run)s" for the run's id) that gets one JSON line per event.
"""
import os

from wandb.errors import Error, UsageError  # noqa: F401
from wandb import sdk  # noqa: F401
from wandb.sdk import wandb_run  # noqa: F401
from wandb.sdk.lib import preinit as _preinit

wandb_sdk = sdk
_LATEST = os.environ.get("FAKE_WANDB_API", "0.17") == "latest"

_teardown = wandb_sdk.teardown
if _LATEST:
    teardown = _teardown
    Run = wandb_sdk.wandb_run.Run
setup = wandb_sdk.setup
init = wandb_sdk.init
finish = wandb_sdk.finish
Config = wandb_sdk.wandb_config.Config

run = None
config = _preinit.PreInitObject("wandb.config")
summary = _preinit.PreInitObject("wandb.summary")
log = _preinit.PreInitCallable("wandb.log", wandb_sdk.wandb_run.Run.log)
define_metric = _preinit.PreInitCallable(
    "wandb.define_metric", wandb_sdk.wandb_run.Run.define_metric)
