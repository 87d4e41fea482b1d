"""What wandb.log and friends are before wandb.init(): each raises."""
import wandb


class PreInitObject(object):
    def __init__(self, name):
        object.__setattr__(self, "_name", name)

    def __getitem__(self, key):
        raise wandb.Error("You must call wandb.init() before %s[%r]"
                          % (self._name, key))

    __setitem__ = __getitem__

    def __getattr__(self, key):
        if key.startswith("_"):
            raise AttributeError(key)
        raise wandb.Error("You must call wandb.init() before %s.%s"
                          % (self._name, key))


def PreInitCallable(name, destination=None):  # noqa: N802 (the SDK's name)
    def preinit_wrapper(*args, **kwargs):
        raise wandb.Error("You must call wandb.init() before %s()" % name)

    preinit_wrapper.__name__ = str(name)
    if destination is not None:
        preinit_wrapper.__wrapped__ = destination
    return preinit_wrapper
