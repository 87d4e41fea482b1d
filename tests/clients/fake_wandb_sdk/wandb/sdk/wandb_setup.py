"""The process's W&B settings: read from the environment once, at the
first setup, and kept until teardown() (as the SDK's singleton is)."""
import os

_instance = None


class _WandbSetup(object):
    def __init__(self):
        self._environ = dict(os.environ)
        self.settings = {
            "run_id": self._environ.get("WANDB_RUN_ID"),
            "sweep_id": self._environ.get("WANDB_SWEEP_ID"),
            "sweep_param_path": self._environ.get("WANDB_SWEEP_PARAM_PATH"),
            "mode": self._environ.get("WANDB_MODE", "online"),
        }


def setup(settings=None):
    global _instance
    if _instance is None:
        _instance = _WandbSetup()
    return _instance


def teardown(exit_code=None):
    global _instance
    _instance = None
