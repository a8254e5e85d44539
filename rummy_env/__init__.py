"""rummy-env: straight Rummy for reinforcement learning.

``Rules`` and ``PRESETS`` (RULES.md §8-§9), ``Table`` (the kind of table some rules
make: its features and layouts), the PettingZoo environment ``rummy_v0`` and the
Gymnasium single-agent wrapper ``SingleAgentEnv``.
"""
from .rules import PRESETS, Rules
from .table import Table

__version__ = "0.1.0"
__all__ = ["Rules", "PRESETS", "Table", "rummy_v0", "SingleAgentEnv", "__version__"]


def __getattr__(name):  # lazy: the engine alone must not import gymnasium/pettingzoo
    if name == "rummy_v0":
        import importlib

        return importlib.import_module(".rummy_v0", __name__)
    if name == "SingleAgentEnv":
        from .single_agent import SingleAgentEnv

        return SingleAgentEnv
    raise AttributeError(name)
