"""The policies shipped with the package (``agents/pretrained/``), one per table: where they
are and which one plays a table. ``rummy_env.agents`` re-exports these names; the search
imports them from here (its guide), so the package's ``__init__`` is not imported back.
"""
from __future__ import annotations

import os
from typing import Any

PRETRAINED = {"classic": "policy.zip", "rum500": "rum500/policy.zip", "jokers": "jokers/policy.zip"}
"""Shipped policies by the preset they were trained on (files in ``agents/pretrained/``)."""
FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pretrained")


def pretrained_path(preset: str = "classic") -> str:
    """The SB3 zip of the policy shipped for ``preset`` (``PRETRAINED``).

    Raises:
        ValueError: no policy is shipped for that preset (the message lists the shipped ones)."""
    file = PRETRAINED.get(str(preset).strip().lower())
    if file is None:
        raise ValueError(f"no policy is shipped for the {preset} table (shipped: {', '.join(PRETRAINED)})")
    return os.path.join(FOLDER, file)


def pretrained_for(rules: Any) -> str | None:
    """The preset whose shipped policy plays a table of ``rules`` (a ``Rules``), or ``None``.

    The table's own preset when a policy is shipped for it (``rules.preset_name``);
    else the first shipped preset whose table has this table's observation and action
    layouts (``Table.misfit``: e.g. the classic policy at a heads-up ``turnover``
    table, whose layouts are the classic ones). The frontends' default opponent
    (``rummy play``, ``rummy web``, ``rummy serve``, ``rummy export pretrained``) is
    ``pretrained:`` this preset."""
    from rummy_env.rules import Rules
    from rummy_env.table import Table

    table = Table.of(rules)
    own = getattr(rules, "preset_name", None)
    order = ([own] if own in PRETRAINED else []) + [p for p in PRETRAINED if p != own]
    for preset in order:
        theirs = Table.of(Rules.preset(preset))  # the table it was trained at (the preset's player count)
        if table.misfit(theirs.obs_size, theirs.num_actions) is None:
            return preset
    return None




def shipped_zip(spec: str) -> str | None:
    """The zip a ``pretrained`` / ``pretrained:PRESET`` name means (``pretrained`` alone:
    the classic policy), or ``None`` for any other name. The one reading of these names
    for ``make_agent``, ``init_policy``, the search's guide and ``rummy export``.

    Raises:
        ValueError: an unknown preset (the message lists the presets), a preset with no
            shipped policy (it lists the shipped ones), or a shipped file that is missing
            (a broken install)."""
    low = spec.strip().lower()
    if low != "pretrained" and not low.startswith("pretrained:"):
        return None
    if low.startswith("pretrained:") and not low.partition(":")[2].strip():
        raise ValueError(f"{spec.strip()!r} names no table after the colon: give pretrained (the classic policy) or "
                         f"pretrained:PRESET, one of {', '.join(PRETRAINED)}")
    preset = low.partition(":")[2].strip() or "classic"
    from rummy_env.rules import PRESETS

    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; presets: {', '.join(PRESETS)}; shipped policies: "
                         f"{', '.join(PRETRAINED)}")
    if preset not in PRETRAINED:
        raise ValueError(f"no policy is shipped for the {preset} table yet (shipped: {', '.join(PRETRAINED)})")
    path = pretrained_path(preset)
    if not os.path.isfile(path):
        raise ValueError(f"no pretrained policy is shipped for {preset} here: {path} is missing; train one with "
                         f"`rummy train --rules {preset}` and use 'ppo:PATH'")
    return path


def load_policy(spec: str) -> Any:
    """A trained policy by name, for the search's guide: ``pretrained`` (the classic one),
    ``pretrained:PRESET`` or ``ppo:PATH`` (``rummy_env.agents.ppo_agent.PPOAgent``).

    Raises:
        ValueError: another kind of name, no policy shipped for the preset (``shipped_zip``),
            or a file that does not load (``PPOAgent``'s message)."""
    from .ppo_agent import PPOAgent

    text = spec.strip()
    zip_path = shipped_zip(text)
    if zip_path is not None:
        return PPOAgent(zip_path)
    if text.lower().startswith("ppo:") and text[4:].strip():
        return PPOAgent(text[4:].strip())
    raise ValueError(f"{spec!r} is not a trained policy's name: pretrained, pretrained:PRESET or ppo:PATH")
