"""Generate README.md's tables from the declared layouts, so the docs never drift.

``python -m rummy_env.docs`` rewrites the blocks between ``<!-- BEGIN name -->`` and
``<!-- END name -->`` in README.md; ``python -m rummy_env.docs --check`` exits 1 when
the README is out of date (``tests/test_docs.py`` runs the same check).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

from .actions import ACTION_RANGES, NUM_ACTIONS
from .observation import layout, obs_size
from .rules import OPTION_NAMES, PRESET_PLAYERS, PRESETS, Rules


def observation_table(num_players: int = 2) -> str:
    """Markdown table of the observation layout for ``num_players`` (oppK pieces repeat per other seat)."""
    rows = ["| piece | offset | size | meaning |", "| --- | --- | --- | --- |"]
    for name, off, size, meaning in layout(num_players):
        rows.append(f"| `{name}` | {off} | {size} | {meaning} |")
    rows.append("")
    rows.append("Total length by players: " + ", ".join(f"{n} → {obs_size(n)}" for n in range(2, 7))
                + ". All float32; card planes are indexed by card number `13*suit + rank` "
                "(suits C D H S, ranks A 2 … K).")
    return "\n".join(rows)


def action_table() -> str:
    """Markdown table of the action-id layout (``Discrete(NUM_ACTIONS)``)."""
    rows = ["| range | first id | count | meaning |", "| --- | --- | --- | --- |"]
    for name, start, count, meaning in ACTION_RANGES:
        rows.append(f"| {name} | {start} | {count} | {meaning} |")
    rows.append("")
    rows.append(f"`Discrete({NUM_ACTIONS})` for every rule set and player count.")
    return "\n".join(rows)


def _fmt(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)


def presets_table() -> str:
    """Markdown table of the five presets (RULES.md §9) against every option (§8)."""
    names = list(PRESETS)
    head = "| option | " + " | ".join(f"`{n}`" for n in names) + " |"
    rows = [head, "| --- |" + " --- |" * len(names)]
    rows.append("| players | " + " | ".join(f"{a}-{b}" if a != b else str(a)
                                           for a, b in (PRESET_PLAYERS[n] for n in names)) + " |")
    for opt in OPTION_NAMES:
        if opt == "num_players":
            continue
        vals = []
        for n in names:
            if opt == "target" and n in ("turnover", "stalemate"):
                vals.append("by players (100/150/200)")
            elif opt == "hand_size":
                vals.append("by players (10/7/6)")
            else:
                vals.append(_fmt(getattr(PRESETS[n], opt)))
        rows.append(f"| `{opt}` | " + " | ".join(vals) + " |")
    return "\n".join(rows)


BLOCKS = {"presets": presets_table, "observation": observation_table, "actions": action_table}


def render(text: str) -> str:
    """``text`` with every generated block replaced by its current content."""
    for name, fn in BLOCKS.items():
        pat = re.compile(rf"(<!-- BEGIN {name} -->\n)(?:.*?\n)?(<!-- END {name} -->)", re.S)
        text = pat.sub(lambda m, fn=fn: m.group(1) + fn() + "\n" + m.group(2), text)
    return text


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    path = Path(__file__).resolve().parent.parent / "README.md"
    text = path.read_text()
    new = render(text)
    if "--check" in argv:
        if new != text:
            print("README.md tables are out of date: run python -m rummy_env.docs", file=sys.stderr)
            return 1
        return 0
    path.write_text(new)
    return 0


__all__ = ["observation_table", "action_table", "presets_table", "render", "Rules"]

if __name__ == "__main__":
    sys.exit(main())
