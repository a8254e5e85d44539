"""Agents that play rummy_v0 from an observation and an action mask (API.md "Agents").

``make_agent(name, seed=None)`` builds one by name:

| name | agent |
| --- | --- |
| ``random`` | uniformly random legal action |
| ``greedy`` | takes only usable upcards, melds and lays off all, discards high |
| ``greedy:eps=E`` | greedy, but each decision is a uniformly random legal action with probability ``E`` (``rummy_env.agents.scripted.EpsilonGreedyAgent``; ``greedy:eps=0.5`` is a benchmark anchor) |
| ``heuristic`` | the rule texts' strategy (``rummy_env.agents.scripted.HeuristicAgent``) |
| ``heuristic:OPTIONS`` | the heuristic with its weights changed: ``heuristic:W_OUT=24,HOLD_MELDS=1`` (names in ``HeuristicAgent.TUNABLE``), or ``heuristic:holding`` (the holding heuristic: keeps its melds in hand until it can go out in one turn; the search's base and the shipped policy's teacher), or ``heuristic:cutting`` (the holding heuristic until the stock holds 22 cards, then it melds early: ``CUTTING``) |
| ``pretrained`` | the policy shipped as ``agents/pretrained/policy.zip`` |
| ``ppo:PATH`` | a MaskablePPO or PPO zip saved by SB3, played greedily |
| ``onnx:DIR`` | an exported policy (``rummy_env.agents.onnx_agent.OnnxAgent``) |
| ``pretrained:PRESET`` | the policy shipped for that table (``PRETRAINED``: ``classic``, ``rum500``, ``jokers``) |
| ``MODULE:ATTR`` | an outside agent: ``ATTR`` of the importable ``MODULE``, an object with ``act`` or a factory ``f(seed)`` returning one (``load_agent_spec``) |
| ``search`` | determinized Monte Carlo search on the observation (``rummy_env.agents.search.SearchAgent``); budget ``search:N`` (N samples) or ``search:samples=N,margin=M,depth=D,halving=H,policy=P,infer=I,base=B,guide=G,top=T`` (base ``holding``, the default, or ``heuristic``; ``guide`` a trained policy: docs/search.md) |

Every agent has ``act(observation, action_mask) -> int`` and ``seed(seed)``.
"""
from __future__ import annotations

import os
from typing import Any

from rummy_env.observation import PlayerView, RandomAgent

from .scripted import CUTTING, HOLDING, EpsilonGreedyAgent, GreedyAgent, HeuristicAgent

BASELINES = ("random", "greedy", "heuristic")  # the scripted baselines (training seeds them in this order)
AGENT_NAMES = (*BASELINES, "pretrained", "pretrained:PRESET", "ppo:PATH", "onnx:DIR", "search", "search:OPTIONS",
               "greedy:eps=E", "heuristic:OPTIONS", "MODULE:ATTR")
from .shipped import PRETRAINED, pretrained_for, pretrained_path  # noqa: E402 - the shipped policies
_PREFIXES = ("ppo", "onnx", "search", "pretrained", "heuristic", "greedy")  # NAME:... forms that are not MODULE:ATTR
PRETRAINED_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pretrained", "policy.zip")
"""Where the classic policy is shipped (``shipped.pretrained_path("classic")``; kept for
callers that read it; the code finds every shipped policy through ``agents.shipped``)."""
"""The shipped classic policy's zip (``make_agent("pretrained")`` reads this name: tests point it elsewhere)."""

_SCRIPTED = dict(zip(BASELINES, (RandomAgent, GreedyAgent, HeuristicAgent)))


def _allowed() -> str:
    return "allowed names: " + ", ".join(AGENT_NAMES)


def make_agent(name: str, seed: int | None = None) -> Any:
    """Build an agent by name (see the module table).

    Args:
        name: ``"random"``, ``"greedy"``, ``"greedy:eps=E"`` (``greedy_eps``),
            ``"heuristic"``, ``"heuristic:OPTIONS"``
            (``heuristic_options``), ``"search"``,
            ``"search:OPTIONS"``, ``"pretrained"``, ``"pretrained:PRESET"``, ``"ppo:PATH"``,
            ``"onnx:DIR"`` or ``"MODULE:ATTR"`` (an outside agent, ``load_agent_spec``).
            ``OPTIONS`` of the search: ``N`` (determinizations per candidate,
            >= 1, default 32) or ``samples=N,margin=M,depth=D,halving=H,
            policy=P,infer=I,base=B,guide=G,top=T,timing=0|1,lead=L`` in any subset
            (``margin`` >= 0, default 2: standard errors by which a candidate must beat the
            base agent's choice; ``base`` ``holding`` (default: the heuristic that holds its
            melds until it can go out), ``heuristic`` or ``cutting``; ``guide``, ``top`` and
            ``lead``: the policy-guided search, docs/search.md;
            ``depth`` >= 0 turns per rollout before a deadwood evaluation, 0 = to
            the end of the hand, the default; ``halving`` 1 (default) or 0;
            ``policy`` ``greedy`` (default) or ``heuristic``; ``infer`` >= 1,
            default 1). See docs/search.md.
        seed: seeds the agent (scripted agents are deterministic given it).

    Returns:
        an object with ``act(observation, action_mask) -> int`` and ``seed(seed)``.

    Raises:
        ValueError: an unknown name (the message lists the allowed ones), a bad
            search option (the message names it and its allowed values), a
            missing or corrupt policy file (the message names it), a preset with no
            shipped policy, or a ``MODULE:ATTR`` that does not load (``load_agent_spec``).
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"agent name must be a non-empty string, got {name!r}; {_allowed()}")
    key = name.strip()
    low = key.lower()
    if low in _SCRIPTED:
        return _SCRIPTED[low](seed)
    if low.startswith("greedy:"):
        return EpsilonGreedyAgent(seed, eps=greedy_eps(key[7:], name))
    if low.startswith("heuristic:"):
        opts = heuristic_options(key[10:], name)
        try:
            return HeuristicAgent(seed, **opts)
        except ValueError as e:  # a value out of range: the agent's message, named
            raise ValueError(f"agent {name!r}: {e}") from None
    if low == "search" or low.startswith("search:"):
        from .search import make_search_agent

        return make_search_agent(key[7:], seed)
    if low == "pretrained" or low.startswith("pretrained:"):
        return _load_pretrained(key[11:].strip() if ":" in key else "classic", seed, name)
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
    if is_outside_agent(key):
        return load_agent_spec(key, seed)
    raise ValueError(f"unknown agent {name!r}; {_allowed()}")


def is_outside_agent(name: Any) -> bool:
    """Whether ``name`` is a ``MODULE:ATTR`` spec (an outside agent, ``load_agent_spec``)
    rather than a built-in name: a string with a ``:`` whose prefix is not one of the
    built-in ``NAME:...`` forms (``ppo``, ``onnx``, ``search``, ``pretrained``,
    ``heuristic``, ``greedy``). The evaluator plays such agents in a worker process of their own."""
    if not isinstance(name, str) or ":" not in name:
        return False
    return name.strip().split(":", 1)[0].strip().lower() not in _PREFIXES


def agent_problem(agent: Any) -> str | None:
    """Why ``agent`` is not an agent object, or ``None`` when it is one: it needs a
    callable ``act(observation, action_mask)``, and a ``seed`` attribute, when it has
    one, must be a callable ``seed(seed)`` (the evaluator reseeds every agent before
    each game). Reading either attribute must not raise."""
    for attr in ("act", "seed"):
        try:
            value = getattr(agent, attr, None)
        except Exception as e:  # noqa: BLE001 - a property of the agent's own that fails
            return f"reading its {attr} attribute raised {type(e).__name__}: {e}"
        if attr == "act" and not callable(value):
            return "it has no act(observation, action_mask) method"
        if attr == "seed" and value is not None and not callable(value):
            return f"its seed attribute is not a method seed(seed) (its type: {type(value).__name__})"
    return None


def greedy_eps(text: str, name: str = "") -> float:
    """The share of random moves of a ``greedy:eps=E`` agent (``EpsilonGreedyAgent``).

    Raises:
        ValueError: anything but ``eps=E`` with ``E`` a number in [0, 1].
    """
    where = f"agent {name or 'greedy:' + text!r}"
    k, eq, v = text.strip().partition("=")
    if k.strip().lower() != "eps" or not eq or not v.strip():
        raise ValueError(f"{where}: greedy takes one option, eps=E (the share of random moves, 0 to 1), "
                         f"e.g. greedy:eps=0.5")
    try:
        eps = float(v)
    except ValueError:
        raise ValueError(f"{where}: eps must be a number in [0, 1], got {v.strip()!r}") from None
    if not 0.0 <= eps <= 1.0:
        raise ValueError(f"{where}: eps must be a number in [0, 1], got {v.strip()!r}")
    return eps


NAMED_OPTIONS = {"holding": HOLDING, "cutting": CUTTING}
"""The named option sets ``heuristic:NAME`` accepts (first, before any ``NAME=VALUE`` pairs)."""


def heuristic_options(text: str, name: str = "") -> dict[str, float]:
    """The weights of a ``heuristic:OPTIONS`` agent: comma-separated ``NAME=VALUE`` pairs of
    ``HeuristicAgent.TUNABLE`` (numbers), optionally after ``holding`` (``HOLDING``) or
    ``cutting`` (``CUTTING``), whose values the pairs then change: ``heuristic:holding,W_OUT=30``.

    Raises:
        ValueError: empty options, a pair without ``=``, a repeated or unknown name, or a
            value that is not a number (values are checked by ``HeuristicAgent``).
    """
    text = text.strip()
    where = f"agent {name or 'heuristic:' + text!r}"
    if not text:
        raise ValueError(f"{where}: 'heuristic:' needs options: 'holding', 'cutting' or NAME=VALUE pairs "
                         f"(names: {', '.join(HeuristicAgent.TUNABLE)})")
    parts = [p for p in text.split(",")]
    base: dict[str, float] = {}
    if parts[0].strip().lower() in NAMED_OPTIONS:
        base, parts = dict(NAMED_OPTIONS[parts[0].strip().lower()]), parts[1:]
    out: dict[str, float] = {}
    for part in parts:
        if part.strip().lower() in NAMED_OPTIONS:
            raise ValueError(f"{where}: the named set {part.strip()!r} comes first and once, before any "
                             f"NAME=VALUE pairs (e.g. heuristic:cutting,W_OUT=30); one of "
                             f"{', '.join(NAMED_OPTIONS)}")
        k, eq, v = part.partition("=")
        k, v = k.strip().upper(), v.strip()
        if not eq or not k or not v:
            raise ValueError(f"{where}: option {part.strip()!r} is not NAME=VALUE; 'holding', 'cutting' or pairs such as "
                             f"W_OUT=24,HOLD_MELDS=1 (names: {', '.join(HeuristicAgent.TUNABLE)})")
        if k not in HeuristicAgent.TUNABLE:
            raise ValueError(f"{where}: unknown heuristic option {k!r}; options: {', '.join(HeuristicAgent.TUNABLE)}")
        if k in out:
            raise ValueError(f"{where}: option {k} is given twice")
        try:
            out[k] = float(v)
        except ValueError:
            raise ValueError(f"{where}: option {k} must be a number, got {v!r}") from None
    return {**base, **out}


def _load_pretrained(preset: str, seed: int | None, name: str) -> Any:
    """``pretrained:PRESET``: the shipped policy of that table (``PRETRAINED``)."""
    from .shipped import shipped_zip

    try:
        path = shipped_zip(f"pretrained:{preset}")
    except ValueError as e:
        hint = (f"; train one with `rummy train --rules {preset.lower()}` and use 'ppo:PATH'"
                if "no policy is shipped" in str(e) else "")
        raise ValueError(f"agent {name!r}: {e}{hint}") from None
    return _load_ppo(path, seed, name)


def load_agent_spec(spec: str, seed: int | None = None) -> Any:
    """Load an outside agent from a ``MODULE:ATTR`` spec (API.md "Agents").

    ``MODULE`` is imported (it must be importable: installed, or on ``PYTHONPATH``) and
    ``ATTR`` (dotted names allowed: ``pkg.mod:Class.make``) looked up in it. If the
    attribute is an object with a callable ``act(observation, action_mask) -> int`` it is
    the agent (``seed(seed)`` is called on it when it has one and ``seed`` is given);
    otherwise it must be callable, a class or a factory, and ``ATTR(seed)`` must return
    such an object. The agent must pass ``agent_problem`` (a ``seed`` attribute, when
    present, is a method): the evaluator calls ``seed()`` before every game.

    The module's import, the factory and ``seed()`` run here, in the caller's process:
    an exception of theirs, ``sys.exit`` included, becomes the ``ValueError`` below
    (``KeyboardInterrupt`` still stops the caller, as Ctrl-C during a slow import must).

    Args:
        spec: ``"MODULE:ATTR"``.
        seed: passed to the factory, or to the object's ``seed`` method.

    Returns:
        the agent object.

    Raises:
        ValueError: a malformed spec, a module that cannot be imported (the message
            names it and the import error), a missing attribute (names the attributes
            found), an attribute that is neither an agent nor a factory, a factory
            that raises (or exits) or returns no agent, an agent with a ``seed``
            attribute that is not a method, or a ``seed()`` that raises.
    """
    import importlib

    mod_name, sep, attr = spec.partition(":")
    mod_name, attr = mod_name.strip(), attr.strip()
    ident = r"[A-Za-z_][A-Za-z0-9_]*"
    import re

    if not sep or not re.fullmatch(rf"{ident}(\.{ident})*", mod_name) or not re.fullmatch(rf"{ident}(\.{ident})*", attr):
        raise ValueError(f"agent {spec!r}: an outside agent is written MODULE:ATTR, a dotted module name and "
                         f"an attribute (e.g. 'my_agents:MyAgent'); {_allowed()}")
    try:
        mod = importlib.import_module(mod_name)
    except KeyboardInterrupt:  # Ctrl-C during a slow import stops the command
        raise
    except Exception as e:  # noqa: BLE001 - ImportError or an error raised while importing it
        raise ValueError(f"agent {spec!r}: cannot import module {mod_name!r} ({_raised(e)}); "
                         f"is it installed or on PYTHONPATH?") from None
    except BaseException as e:  # noqa: BLE001 - sys.exit (or another BaseException) while importing it
        raise ValueError(f"agent {spec!r}: importing module {mod_name!r} {_raised(e, verb=True)}") from None
    obj: Any = mod
    for i, part in enumerate(attr.split(".")):
        if not hasattr(obj, part):
            where = mod_name if i == 0 else f"{mod_name}:{'.'.join(attr.split('.')[:i])}"
            public = sorted(n for n in dir(obj) if not n.startswith("_"))[:20]
            raise ValueError(f"agent {spec!r}: {where} has no attribute {part!r}"
                             f"{' (it has: ' + ', '.join(public) + ')' if public else ''}")
        obj = getattr(obj, part)
    if not isinstance(obj, type) and callable(getattr(obj, "act", None)):
        agent, made = obj, attr
    else:
        if not callable(obj):
            raise ValueError(f"agent {spec!r}: {attr} is a {type(obj).__name__}, neither an agent (an object with "
                             f"act(observation, action_mask)) nor a factory f(seed) returning one")
        try:
            agent = obj(seed)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: BLE001 - the user's factory failed, or called sys.exit
            raise ValueError(f"agent {spec!r}: calling {attr}({seed!r}) {_raised(e, verb=True)}") from None
        made = f"{attr}({seed!r})"
        if not callable(getattr(agent, "act", None)):
            raise ValueError(f"agent {spec!r}: {made} returned a {type(agent).__name__}, which has no "
                             f"act(observation, action_mask) method")
    why = agent_problem(agent)
    if why is not None:
        raise ValueError(f"agent {spec!r}: {made} is not an agent: {why}")
    if seed is not None and obj is agent and getattr(agent, "seed", None) is not None:
        try:
            agent.seed(seed)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: BLE001 - the agent's seed() failed, or called sys.exit
            raise ValueError(f"agent {spec!r}: {attr}.seed({seed!r}) {_raised(e, verb=True)}") from None
    return agent


def _raised(e: BaseException, verb: bool = False) -> str:
    """What an outside agent's code did, for a one-line message: ``called sys.exit(3)``
    or ``raised RuntimeError: text`` (without the verb: ``SystemExit: 3``)."""
    try:
        text = " ".join(str(e).split())[:200]
    except Exception:  # noqa: BLE001 - an exception whose str() fails
        text = ""
    if verb and isinstance(e, SystemExit):
        return f"called sys.exit({text})"
    head = f"{type(e).__name__}: {text}" if text else type(e).__name__
    return f"raised {head}" if verb else head


def table_misfit(agent: Any, rules: Any) -> str | None:
    """Why ``agent`` cannot play a table of ``rules`` (a ``Rules``), or ``None`` when it can
    or does not say (a scripted agent reads any table). An agent that plays some kinds
    only says so (``table_kinds``, e.g. the search); a trained policy says what it was
    trained on (``PPOAgent.obs_shape`` / ``n_actions``, ``OnnxAgent.obs_dim`` /
    ``num_actions``), which ``Table.misfit`` compares with the table's observation size
    and action count (``rummy_env.table.Table``: they follow from its player count and
    kind; a 500 Rum table's differ from a standard one's, RULES.md §10.4). The answer
    names both tables. Every check of "does this agent fit this table" (the cli, the
    terminal play, the web table, the benchmark) asks this function."""
    from rummy_env.table import Table

    table = Table.of(rules)
    kinds = getattr(agent, "table_kinds", None)
    if kinds is not None and table.kind not in kinds:
        return f"it plays {' and '.join(kinds)} tables only, this is {table.describe()}"
    dim = getattr(agent, "obs_dim", None)
    if dim is None:
        shape = getattr(agent, "obs_shape", None)
        dim = shape[0] if isinstance(shape, tuple) and len(shape) == 1 else None
    acts = getattr(agent, "num_actions", None)
    if not isinstance(acts, int):
        acts = getattr(agent, "n_actions", None)
    guide = getattr(agent, "guide", None)  # a guided search's sizes are its guide's
    return table.misfit(dim, acts, subject=f"its guide {guide!r}" if isinstance(guide, str) and guide else "it")


def builtin_opponents(rules: Any) -> list[str]:
    """The built-in agents that play a table of ``rules`` (a ``Rules``), strongest first:
    ``"heuristic"``, ``"greedy"``, ``"random"`` and ``"search"`` where it fits
    (``table_misfit``; each of them plays every kind of table today). The
    alternatives the frontends name when an opponent does not fit a table."""
    from .search import SearchAgent

    out = ["heuristic", "greedy", "random"]
    return out + (["search"] if table_misfit(SearchAgent, rules) is None else [])


def _load_ppo(path: str, seed: int | None, name: str) -> Any:
    from .ppo_agent import PPOAgent

    try:
        return PPOAgent(path, seed=seed)
    except ValueError as e:
        raise ValueError(f"agent {name!r}: {e}; {_allowed()}") from None


__all__ = ["make_agent", "load_agent_spec", "is_outside_agent", "agent_problem", "heuristic_options", "HOLDING", "pretrained_path", "pretrained_for", "table_misfit", "builtin_opponents", "PRETRAINED", "AGENT_NAMES", "BASELINES", "CUTTING", "NAMED_OPTIONS", "PlayerView", "RandomAgent", "GreedyAgent", "EpsilonGreedyAgent", "HeuristicAgent", "greedy_eps"]
