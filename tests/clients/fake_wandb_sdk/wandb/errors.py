"""The SDK's errors: wandb.Error, and UsageError for a misuse."""


class Error(Exception):
    pass


class UsageError(Error):
    pass
