from wandb.sdk import wandb_config  # noqa: F401
from wandb.sdk import wandb_run  # noqa: F401
from wandb.sdk.wandb_setup import setup, teardown  # noqa: F401
from wandb.sdk.wandb_init import init  # noqa: F401
from wandb.sdk.wandb_run import finish  # noqa: F401
