"""Binds the module's functions to a run, and unbinds them."""
import wandb
from wandb.sdk.lib import preinit


def set_global(run=None, config=None, log=None, summary=None,
               define_metric=None):
    if run:
        wandb.run = run
    if config is not None:
        wandb.config = config
    if log:
        wandb.log = log
    if summary is not None:
        wandb.summary = summary
    if define_metric:
        wandb.define_metric = define_metric


def unset_globals():
    Run = wandb.sdk.wandb_run.Run
    wandb.run = None
    wandb.config = preinit.PreInitObject("wandb.config")
    wandb.summary = preinit.PreInitObject("wandb.summary")
    wandb.log = preinit.PreInitCallable("wandb.log", Run.log)
    wandb.define_metric = preinit.PreInitCallable("wandb.define_metric",
                                                  Run.define_metric)
