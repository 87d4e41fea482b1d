"""wandb.config: a dict whose keys read as attributes too."""


class Config(dict):
    def __getattr__(self, key):
        if key.startswith("_"):
            raise AttributeError(key)
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key)
