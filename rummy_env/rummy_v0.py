"""``rummy_v0``: the versioned entry point (PettingZoo naming). See ``rummy_env.env``."""
from .env import env, raw_env

__all__ = ["env", "raw_env"]
