"""Generate the environment page's tables from the declared layouts, so the docs never drift.

``python -m rummy_env.docs`` rewrites the blocks between ``<!-- BEGIN name -->`` and
``<!-- END name -->`` in ``docs/env.md`` (names: ``presets``, ``observation``,
``actions``, ``observation_rum500``, ``actions_rum500``, ``observation_variants``,
``actions_variants``); ``python -m rummy_env.docs --check`` exits 1 when the page is out of
date (``tests/test_docs.py`` runs the same check). Both need a source checkout: the
docs are not installed with the package.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from .actions import NUM_ACTIONS, TABLE_KINDS, action_ranges, num_actions
from .table import _RUM500_VARIANT_PIECES, _VARIANT_PIECES, kind_layout, kind_players, layout, obs_size
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


def rum500_observation_table(num_players: int = 2) -> str:
    """Markdown table of the pieces a 500 Rum table's observation adds after the standard
    layout (``layout(n, "rum500")``, RULES.md §10.4)."""
    base = obs_size(num_players)
    rows = ["| piece | offset | size | meaning |", "| --- | --- | --- | --- |"]
    for name, off, size, meaning in layout(num_players, "rum500"):
        if off >= base:
            rows.append(f"| `{name}` | {off} | {size} | {meaning} |")
    rows.append("")
    rows.append("Total length by players: " + ", ".join(f"{n} → {obs_size(n, 'rum500')}" for n in range(2, 7))
                + ". The first entries are the standard layout above, piece for piece.")
    return "\n".join(rows)


def action_table(kind: str = "standard") -> str:
    """Markdown table of a table kind's action-id layout (``Discrete(num_actions(kind))``)."""
    rows = ["| range | first id | count | meaning |", "| --- | --- | --- | --- |"]
    for name, start, count, meaning in action_ranges(kind):
        rows.append(f"| {name} | {start} | {count} | {meaning} |")
    rows.append("")
    if kind == "standard":
        rows.append(f"`Discrete({NUM_ACTIONS})` for every standard table (one deck, no jokers, runs that do not "
                    "turn the corner, the top-card draw: every preset but `rum500` and `jokers`), every rule set "
                    "and player count; the deck variants keep these ids and append their own "
                    "([below](#deck-variants-jokers-two-decks-round-the-corner-runs)).")
    else:
        rows.append(f"`Discrete({num_actions(kind)})` at every 500 Rum table (`draw = \"dig\"` or "
                    "`scoring = \"melds\"`) without deck variants; ids 0-578 mean what they mean at a standard "
                    "table. With deck variants a 500 Rum table has its kind's count, `actions.num_actions(kind)` "
                    "([below](#deck-variants-jokers-two-decks-round-the-corner-runs)).")
    return "\n".join(rows)


def _variant_kinds() -> list[str]:
    """The kinds with deck variants (an ``ActionLayout`` of their own), in ``TABLE_KINDS`` order."""
    return [k for k in TABLE_KINDS if kind_layout(k) is not None]


def variants_observation_table() -> str:
    """Markdown tables of the pieces the deck variants (RULES.md §10.1-10.3) add after the
    standard layout, per variant in layout order, and each kind's length by players."""
    rows = ["| variant | piece | size | meaning |", "| --- | --- | --- | --- |"]
    for feat, (own, opp) in _VARIANT_PIECES.items():
        for name, size, meaning in own:
            rows.append(f"| {feat} | `{name}` | {size} | {meaning} |")
        for name, size, meaning in opp:
            rows.append(f"| {feat} | `oppK_{name}` | {size} | per other seat K: {meaning} |")
        for name, size, meaning in _RUM500_VARIANT_PIECES.get(feat, ()):
            rows.append(f"| {feat}, at 500 Rum | `{name}` | {size} | {meaning} |")
    rows += ["", "| kind | length by players |", "| --- | --- |"]
    for kind in _variant_kinds():
        rows.append(f"| `{kind}` | " + ", ".join(f"{n} → {obs_size(n, kind)}" for n in kind_players(kind)) + " |")
    return "\n".join(rows)


def variants_action_table() -> str:
    """Markdown table of each deck-variant kind's action ranges beyond the standard 579
    (``action_ranges(kind)``; RULES.md §10.1-10.4: a 500 Rum one's digs come first)."""
    rows = ["| kind | N | ranges after the 579 standard ids (first id, count) |", "| --- | --- | --- |"]
    for kind in _variant_kinds():
        extra = [f"{name} ({first}, {count})" for name, first, count, _ in action_ranges(kind)[4:]]
        rows.append(f"| `{kind}` | `Discrete({num_actions(kind)})` | {', '.join(extra) or 'none'} |")
    rows += ["", "| range | meaning (in the `around+jokers` layout) |", "| --- | --- |"]
    for name, _first, _count, meaning in action_ranges("around+jokers")[4:]:
        rows.append(f"| {name} | {meaning} |")
    return "\n".join(rows)


def _fmt(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return str(v).lower()
    return str(v)


def presets_table() -> str:
    """Markdown table of the presets (RULES.md §9, §10.5) against every option (§8)."""
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
            elif opt == "target" and n in ("jokers", "two_decks"):
                vals.append("by players (100/150/200)")
            elif opt == "hand_size":
                vals.append("by players (13/7)" if n == "rum500" else "10" if n == "two_decks"
                            else "by players (10/7/6)")
            else:
                vals.append(_fmt(getattr(PRESETS[n], opt)))
        rows.append(f"| `{opt}` | " + " | ".join(vals) + " |")
    return "\n".join(rows)


BLOCKS = {"presets": presets_table, "observation": observation_table, "actions": action_table,
          "observation_rum500": rum500_observation_table, "actions_rum500": lambda: action_table("rum500"),
          "observation_variants": variants_observation_table, "actions_variants": variants_action_table}


def render(text: str) -> str:
    """``text`` with every generated block replaced by its current content."""
    for name, fn in BLOCKS.items():
        pat = re.compile(rf"(<!-- BEGIN {name} -->\n)(?:.*?\n)?(<!-- END {name} -->)", re.S)
        text = pat.sub(lambda m, fn=fn: m.group(1) + fn() + "\n" + m.group(2), text)
    return text


#: the page holding the generated blocks, relative to the repository root
PAGE = Path("docs") / "env.md"


def missing_blocks(text: str) -> list[str]:
    """Names of ``BLOCKS`` whose ``<!-- BEGIN name -->`` / ``<!-- END name -->`` pair is not in ``text``."""
    return [name for name in BLOCKS
            if not re.search(rf"<!-- BEGIN {name} -->\n(?:.*?\n)?<!-- END {name} -->", text, re.S)]


def main(argv: list[str] | None = None) -> int:
    """``python -m rummy_env.docs [--check] [--root DIR]``: rewrite (or check) the tables of ``docs/env.md``.

    Returns 0 when the page was written or is current, 1 when ``--check`` finds it out
    of date, 2 when the page is missing or lacks a block (nothing is written then).
    ``--root`` defaults to the checkout this module lives in.
    """
    parser = argparse.ArgumentParser(prog="python -m rummy_env.docs", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the page is out of date; write nothing")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the repository root holding docs/env.md (default: this checkout)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    root = args.root
    path = root / PAGE
    if not path.is_file():
        print(f"rummy_env.docs: {path} not found (the docs live in a source checkout, not in the installed package)",
              file=sys.stderr)
        return 2
    text = path.read_text(encoding="utf-8")
    missing = missing_blocks(text)
    if missing:
        print(f"rummy_env.docs: {path} lacks the generated block(s) {missing}: each needs a "
              "'<!-- BEGIN name -->' line followed later by '<!-- END name -->'", file=sys.stderr)
        return 2
    new = render(text)
    if args.check:
        if new != text:
            print(f"{path}: the generated tables are out of date: run python -m rummy_env.docs", file=sys.stderr)
            return 1
        return 0
    path.write_text(new, encoding="utf-8")
    return 0


__all__ = ["observation_table", "rum500_observation_table", "action_table", "variants_observation_table",
           "variants_action_table", "presets_table", "render", "missing_blocks", "PAGE", "Rules"]

if __name__ == "__main__":
    sys.exit(main())
