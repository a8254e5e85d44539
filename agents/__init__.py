"""Agents that play rummy_v0 from an observation and an action mask (API.md "Agents").

``make_agent(name, seed=None)`` builds one by name:

| name | agent |
| --- | --- |
| ``random`` | uniformly random legal action |
| ``greedy`` | takes only usable upcards, melds and lays off all, discards high |
| ``heuristic`` | the rule texts' strategy (``rummy_env.agents.scripted.HeuristicAgent``) |
| ``pretrained`` | the policy shipped as ``agents/pretrained/policy.zip`` |
| ``ppo:PATH`` | a MaskablePPO or PPO zip saved by SB3, played greedily |
| ``onnx:DIR`` | an exported policy (``rummy_env.agents.onnx_agent.OnnxAgent``) |
| ``search`` | determinized Monte Carlo search on the observation (``rummy_env.agents.search.SearchAgent``); budget ``search:N`` (N samples) or ``search:samples=N,margin=M,depth=D,halving=H,policy=P,infer=I,base=B`` (base ``holding``, the default, or ``heuristic``) |

Every agent has ``act(observation, action_mask) -> int`` and ``seed(seed)``.
"""
from __future__ import annotations

import os
from typing import Any

from rummy_env.observation import PlayerView, RandomAgent

from .scripted import GreedyAgent, HeuristicAgent

BASELINES = ("random", "greedy", "heuristic")  # the scripted baselines (training seeds them in this order)
AGENT_NAMES = (*BASELINES, "pretrained", "ppo:PATH", "onnx:DIR", "search", "search:OPTIONS")
PRETRAINED_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pretrained", "policy.zip")

_SCRIPTED = dict(zip(BASELINES, (RandomAgent, GreedyAgent, HeuristicAgent)))


def _allowed() -> str:
    return "allowed names: " + ", ".join(AGENT_NAMES)


def make_agent(name: str, seed: int | None = None) -> Any:
    """Build an agent by name (see the module table).

    Args:
        name: ``"random"``, ``"greedy"``, ``"heuristic"``, ``"search"``,
            ``"search:OPTIONS"``, ``"pretrained"``, ``"ppo:PATH"`` or ``"onnx:DIR"``.
            ``OPTIONS`` of the search: ``N`` (determinizations per candidate,
            >= 1, default 32) or ``samples=N,margin=M,depth=D,halving=H,
            policy=P,infer=I,base=B`` in any subset (``margin`` >= 0, default 2:
            standard errors by which a candidate must beat the base agent's choice;
            ``base`` ``holding`` (default: the heuristic that holds its melds until
            it can go out) or ``heuristic``;
            ``depth`` >= 0 turns per rollout before a deadwood evaluation, 0 = to
            the end of the hand, the default; ``halving`` 1 (default) or 0;
            ``policy`` ``greedy`` (default) or ``heuristic``; ``infer`` >= 1,
            default 1). See docs/search.md.
        seed: seeds the agent (scripted agents are deterministic given it).

    Returns:
        an object with ``act(observation, action_mask) -> int`` and ``seed(seed)``.

    Raises:
        ValueError: an unknown name (the message lists the allowed ones), a bad
            search option (the message names it and its allowed values), or a
            missing or corrupt policy file (the message names it).
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"agent name must be a non-empty string, got {name!r}; {_allowed()}")
    key = name.strip()
    low = key.lower()
    if low in _SCRIPTED:
        return _SCRIPTED[low](seed)
    if low == "search" or low.startswith("search:"):
        from .search import make_search_agent

        return make_search_agent(key[7:], seed)
    if low == "pretrained":
        if not os.path.isfile(PRETRAINED_PATH):
            raise ValueError(f"agent 'pretrained': the shipped policy {PRETRAINED_PATH} is missing; "
                             f"train one or use 'ppo:PATH'; {_allowed()}")
        return _load_ppo(PRETRAINED_PATH, seed, name)
    if low.startswith("ppo:"):
        path = key[4:]
        if not path:
            raise ValueError(f"agent {name!r}: 'ppo:' needs a path to an SB3 zip; {_allowed()}")
        return _load_ppo(path, seed, name)
    if low.startswith("onnx:"):
        path = key[5:]
        if not path:
            raise ValueError(f"agent {name!r}: 'onnx:' needs the directory of an exported policy; {_allowed()}")
        if not os.path.exists(path):
            raise ValueError(f"agent {name!r}: {path!r} does not exist; {_allowed()}")
        if not os.path.isdir(path):
            raise ValueError(f"agent {name!r}: {path!r} is a file; 'onnx:' takes the folder that "
                             f"`rummy export` wrote (policy.onnx + spec.json); {_allowed()}")
        try:
            from .onnx_agent import OnnxAgent
        except ImportError as e:
            raise ValueError(f"agent {name!r}: the ONNX agent is not available ({e}); {_allowed()}") from None
        try:
            return OnnxAgent(path, seed=seed)
        except ValueError:
            raise
        except Exception as e:  # noqa: BLE001 - a corrupt export: report it as ValueError
            raise ValueError(f"agent {name!r}: cannot load the exported policy in {path!r}: {e}") from None
    raise ValueError(f"unknown agent {name!r}; {_allowed()}")


def table_misfit(agent: Any, rules: Any) -> str | None:
    """Why ``agent`` cannot play a table of ``rules`` (a ``Rules``), or ``None`` when it can
    or does not say (a scripted agent reads any table). A trained policy says what it
    was trained on (``PPOAgent.obs_shape`` / ``n_actions``, ``OnnxAgent.obs_dim`` /
    ``num_actions``); the observation size and the action count of a table follow from
    its player count and kind (``rummy_env.observation.table_for``: a 500 Rum table's
    differ from a standard one's, RULES.md §10.4). The answer names both tables."""
    from rummy_env.actions import num_actions, table_kind
    from rummy_env.observation import describe_table, obs_size

    kind = table_kind(rules)
    kinds = getattr(agent, "table_kinds", None)
    if kinds is not None and kind not in kinds:
        return f"it plays {' and '.join(kinds)} tables only, this is a {rules.num_players}-player {kind} table"
    want_dim, want_acts = obs_size(rules.num_players, kind), num_actions(kind)
    dim = getattr(agent, "obs_dim", None)
    if dim is None:
        shape = getattr(agent, "obs_shape", None)
        dim = shape[0] if isinstance(shape, tuple) and len(shape) == 1 else None
    acts = getattr(agent, "num_actions", None)
    if not isinstance(acts, int):
        acts = getattr(agent, "n_actions", None)
    here = f"a {rules.num_players}-player {kind} table"
    if isinstance(dim, int) and dim != want_dim:
        theirs = describe_table(dim, acts if isinstance(acts, int) else None)
        return f"it was trained for {theirs}, this is {here} (observations of {want_dim} entries)"
    if isinstance(acts, int) and acts != want_acts:
        return f"it chooses among {acts} actions ({describe_table(dim, acts) if isinstance(dim, int) else 'another table'}), {here} has {want_acts}"
    return None


def _load_ppo(path: str, seed: int | None, name: str) -> Any:
    from .ppo_agent import PPOAgent

    try:
        return PPOAgent(path, seed=seed)
    except ValueError as e:
        raise ValueError(f"agent {name!r}: {e}; {_allowed()}") from None


__all__ = ["make_agent", "table_misfit", "AGENT_NAMES", "BASELINES", "PlayerView", "RandomAgent", "GreedyAgent", "HeuristicAgent"]
