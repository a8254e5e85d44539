"""Rule options and the five presets (RULES.md §8 and §9).

``Rules`` is a frozen dataclass whose fields are the options of RULES.md §8, plus
``preset_name`` (the preset it was built from, or ``None``). Every value is checked on
construction: an unknown or out-of-range value raises ``ValueError`` naming the
field and the values it allows.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, fields
from typing import Any, Mapping

from .brief import brief

BY_PLAYERS = "by_players"

_CHOICES: dict[str, tuple] = {
    "aces": ("low", "high", "either", "around"),
    "ace_points": (1, 11),
    "scoring": ("winner_takes", "penalty", "melds"),
    "draw": ("top", "dig"),
    "recycle": ("shuffle", "turn_over"),
    "dry_trigger": ("on_empty", "on_request"),
    "dry_hand": ("void", "lowest_deadwood"),
}
_BOOLS = ("layoffs", "must_discard_to_go_out", "rummy_needs_no_discard")


def default_hand_size(num_players: int, decks: int = 1) -> int:
    """Cards dealt to each player (RULES.md §2): 2 -> 10, 3-4 -> 7, 5-6 -> 6; with two
    decks 10 at every player count (§10.3)."""
    if decks == 2:
        return 10
    return 10 if num_players == 2 else 7 if num_players <= 4 else 6


def deck_size(decks: int = 1, jokers: int = 0) -> int:
    """Cards in the shuffled deck (RULES.md §1, §10.2-10.3): 52 per deck plus ``jokers`` per deck."""
    return decks * (52 + jokers)


RUM500_DEAL = "rum500_deal"
"""``hand_size`` of the ``rum500`` preset: resolved on construction to 13 heads-up and 7
for 3-6 players (RULES.md §10.5), so the options written out deal the same game."""


def default_target(num_players: int) -> int:
    """Match target by player count (RULES.md §7, §10.3): 2 -> 100, 3 -> 150, 4-7 -> 200."""
    return 100 if num_players == 2 else 150 if num_players == 3 else 200


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass(frozen=True)
class Rules:
    """One table's rules: every option of RULES.md §8 (defaults are ``classic``).

    Fields:
        num_players: 2-6, or 2-7 with two decks (RULES.md §10.3).
        hand_size: cards dealt to each player, or ``None`` for the count by
            players (RULES.md §2), or ``RUM500_DEAL`` (the ``rum500`` preset's: set on
            construction to 13 heads-up and 7 for 3-6 players, §10.5; like
            ``target="by_players"``, ``replace(num_players=...)`` keeps the number);
            1-13, and at most ``(deck - 2) // num_players`` so an upcard and a stock
            remain (a deck of 52 cards per deck plus the jokers).
        aces: ``"low"``, ``"high"``, ``"either"`` (RULES.md §4) or ``"around"``
            (runs turn the corner, K-A-2; §10.1).
        ace_points: deadwood value of an ace, 1 or 11.
        layoffs: whether cards may be laid off on table melds.
        must_discard_to_go_out: the last card must be a discard (RULES.md §5).
        rummy_multiplier: points multiplier for going rummy (1 switches it off).
        rummy_needs_no_discard: going rummy only when the hand is emptied by
            melds and lay-offs alone.
        scoring: ``"winner_takes"``, ``"penalty"`` (RULES.md §5) or ``"melds"``
            (500 Rum: every seat scores what it melded minus what it holds, §10.4).
        jokers: jokers per deck, 0 or 2 (wild cards, RULES.md §10.2).
        decks: 1 or 2 (two decks shuffled together, every card twice, §10.3).
        draw: ``"top"`` (only the upcard) or ``"dig"`` (any card of the discard pile
            with every card above it, the deepest one to be melded that turn; §10.4).
        recycle: ``"shuffle"`` or ``"turn_over"`` (RULES.md §6).
        max_recycles: recycles allowed per hand, ``None`` = unlimited.
        dry_trigger: ``"on_empty"`` or ``"on_request"`` (RULES.md §6).
        dry_hand: scoring of a dry or stalled hand: ``"void"`` or ``"lowest_deadwood"``.
        max_turns: turns per hand before the table is stalled (>= 1).
        target: match target in points, ``None`` for a single hand, or
            ``"by_players"`` (resolved on construction to 100 / 150 / 200, RULES.md §7).
        preset_name: the preset name this was built from, or ``None``.

    Raises:
        ValueError: a field has a value outside the allowed ones (the message
            names the field and the allowed values), or two options clash (RULES.md
            §10.4: ``draw="dig"`` needs ``max_recycles=0``; ``scoring="melds"`` needs
            ``rummy_multiplier=1`` and ``dry_hand="void"``; the message names both).
    """

    num_players: int = 2
    hand_size: int | None = None
    aces: str = "low"
    ace_points: int = 1
    layoffs: bool = True
    must_discard_to_go_out: bool = False
    rummy_multiplier: int = 2
    rummy_needs_no_discard: bool = False
    scoring: str = "winner_takes"
    jokers: int = 0
    decks: int = 1
    draw: str = "top"
    recycle: str = "shuffle"
    max_recycles: int | None = 1
    dry_trigger: str = "on_empty"
    dry_hand: str = "void"
    max_turns: int = 300
    target: int | None | str = BY_PLAYERS
    preset_name: str | None = field(default=None, compare=True)

    def __post_init__(self) -> None:
        n = self.num_players
        decks, jokers = self.decks, self.jokers
        if not _is_int(decks) or decks not in (1, 2):
            raise ValueError(f"decks must be 1 or 2, got {brief(decks)}")
        if not _is_int(jokers) or jokers not in (0, 2):
            raise ValueError(f"jokers must be 0 or 2 (jokers per deck), got {brief(jokers)}")
        if not _is_int(n) or not 2 <= n <= (7 if decks == 2 else 6):
            if _is_int(n) and n == 7:
                raise ValueError("num_players=7 needs decks=2 (two decks for five to seven players, RULES.md §10.3); "
                                 "with one deck num_players is 2 to 6")
            raise ValueError(f"num_players must be an int from 2 to {7 if decks == 2 else 6}, got {brief(n)}")
        hs = self.hand_size
        if hs == RUM500_DEAL:
            hs = 13 if n == 2 else 7
            object.__setattr__(self, "hand_size", hs)
        if hs is not None:
            if not _is_int(hs) or not 1 <= hs <= 13:
                raise ValueError(f"hand_size must be null (by players) or an int from 1 to 13, got {brief(hs)}")
            room = deck_size(decks, jokers) - 2
            if hs * n > room:
                raise ValueError(
                    f"hand_size {hs} with {n} players deals {hs * n} cards, leaving no upcard and stock; "
                    f"allowed hand_size for {n} players: 1 to {min(13, room // n)}"
                )
        for name, choices in _CHOICES.items():
            v = getattr(self, name)
            if isinstance(v, bool) or type(v) is not type(choices[0]) or v not in choices:  # 11.0 is no 11
                raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}; got {brief(v)}")
        for name in _BOOLS:
            v = getattr(self, name)
            if not isinstance(v, bool):
                raise ValueError(f"{name} must be true or false, got {brief(v)}")
        if not _is_int(self.rummy_multiplier) or not 1 <= self.rummy_multiplier <= 10:
            raise ValueError(f"rummy_multiplier must be an int from 1 to 10, got {brief(self.rummy_multiplier)}")
        mr = self.max_recycles
        if mr is not None and (not _is_int(mr) or not 0 <= mr <= 1000):
            raise ValueError(f"max_recycles must be null (unlimited) or an int from 0 to 1000, got {brief(mr)}")
        if not _is_int(self.max_turns) or not 1 <= self.max_turns <= 100_000:
            raise ValueError(f"max_turns must be an int from 1 to 100000, got {brief(self.max_turns)}")
        if self.draw == "dig" and mr != 0:
            raise ValueError(f"draw='dig' needs max_recycles=0 (a dig table ends the hand when the stock is empty, "
                             f"RULES.md §10.4), got max_recycles={brief(mr)}")
        if self.scoring == "melds" and self.rummy_multiplier != 1:
            raise ValueError(f"scoring='melds' needs rummy_multiplier=1 (going rummy does not apply to 500 Rum, "
                             f"RULES.md §10.4), got rummy_multiplier={brief(self.rummy_multiplier)}")
        if self.scoring == "melds" and self.dry_hand != "void":
            raise ValueError(f"scoring='melds' needs dry_hand='void' (a dry or stalled 500 Rum hand is scored by "
                             f"melds like any other, RULES.md §10.4), got dry_hand={brief(self.dry_hand)}")
        t = self.target
        if t == BY_PLAYERS:
            object.__setattr__(self, "target", default_target(n))
        elif t is not None and (not _is_int(t) or not 1 <= t <= 100_000):
            raise ValueError(f"target must be null (a single hand), 'by_players' or an int from 1 to 100000, got {brief(t)}")
        pn = self.preset_name
        if pn is not None and (not isinstance(pn, str) or pn not in PRESET_OPTIONS):
            raise ValueError(f"preset_name must be one of {', '.join(PRESET_OPTIONS)} or null, got {brief(pn)}")
        if pn is not None and "PRESET_PLAYERS" in globals():  # every path (make, replace) keeps the range
            lo, hi = preset_players(pn, decks)
            if not lo <= n <= hi:
                raise ValueError(f"num_players: preset {brief(pn)} is for {lo}-{hi} players, not {n}; presets that "
                                 f"allow {n} players: {_presets_allowing(n)}")

    @property
    def cards_dealt(self) -> int:
        """Cards dealt to each player: ``hand_size`` or the count by players (RULES.md §2,
        ``default_hand_size``)."""
        return self.hand_size if self.hand_size is not None else default_hand_size(self.num_players, self.decks)

    @property
    def deck_size(self) -> int:
        """Cards in the shuffled deck: 52 per deck plus the jokers (RULES.md §10.2-10.3)."""
        return deck_size(self.decks, self.jokers)

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> "Rules":
        """Build preset ``name`` (RULES.md §9) with option ``overrides``.

        Raises:
            ValueError: unknown preset, unknown field, an out-of-range value, or a
                ``num_players`` outside the preset's range (the message names the
                presets that allow that count).
        """
        if not isinstance(name, str) or name not in PRESET_OPTIONS:
            raise ValueError(f"unknown rules preset {brief(name)}; presets: {', '.join(PRESET_OPTIONS)} "
                             "(a preset is named by a string)")
        allowed = set(OPTION_NAMES)
        for k in overrides:
            if k not in allowed:
                raise ValueError(f"unknown rule option {brief(k)}; options: {', '.join(OPTION_NAMES)}")
        opts = dict(PRESET_OPTIONS[name])
        lo, hi = preset_players(name, overrides.get("decks", opts.get("decks", 1)))
        n = overrides.get("num_players", lo)
        if _is_int(n) and not lo <= n <= hi:
            raise ValueError(
                f"num_players: preset {brief(name)} is for {lo}-{hi} players, not {n}; presets that allow {n} players: "
                f"{_presets_allowing(n)}"
            )
        opts["num_players"] = n
        opts.update(overrides)
        return cls(**opts, preset_name=name)

    @classmethod
    def make(cls, rules: "str | Rules | Mapping" = "classic", num_players: int | None = None,
             **overrides: Any) -> "Rules":
        """Rules from a preset name, a ``Rules`` or a STATE-style dict (``from_json``),
        with ``num_players`` (``None``: the base's own) and other option ``overrides``
        on top (RULES.md §8-§9). The one way every command and the env build rules.

        Raises:
            ValueError: unknown preset, unknown option or a bad value (including a
                player count the preset does not allow), or ``rules`` of another type.
        """
        if num_players is not None:
            overrides["num_players"] = num_players
        if isinstance(rules, Rules):
            return rules.replace(**overrides) if overrides else rules
        if isinstance(rules, str):
            return cls.preset(rules, **overrides)
        if isinstance(rules, Mapping):
            base = cls.from_json(rules)
            return base.replace(**overrides) if overrides else base
        raise ValueError(f"rules must be a preset name, a Rules or a dict of options, got {type(rules).__name__}")

    @classmethod
    def from_json(cls, spec: Any) -> "Rules":
        """Rules from the STATE form (API.md): a preset name, or an object of option
        fields, optionally with ``"preset"`` naming the base preset.

        Raises:
            ValueError: unknown preset or field, or a bad value.
        """
        if isinstance(spec, Rules):
            return spec
        if isinstance(spec, str):
            return cls.preset(spec)
        if isinstance(spec, Mapping):
            d = dict(spec)
            base = d.pop("preset", None)
            if base is not None:
                return cls.preset(base, **d)
            for k in d:
                if k not in OPTION_NAMES:
                    raise ValueError(f"unknown rule option {brief(k)}; options: {', '.join(OPTION_NAMES)}")
            return cls(**d)
        raise ValueError(f"rules must be a preset name or an object of options, got {type(spec).__name__}")

    def to_json(self) -> str | dict:
        """The STATE form: the preset name when the rules are exactly a preset,
        else ``{"preset": name, <changed fields>}`` or, with no preset, every field."""
        opts = self.options()
        if self.preset_name is not None:
            # the preset at this player count (with two decks when they widen its range to 7)
            own_decks = PRESET_OPTIONS[self.preset_name].get("decks", 1)
            over = {"num_players": self.num_players} | ({"decks": self.decks} if self.decks != own_decks else {})
            base = Rules.preset(self.preset_name, **over).options()
            diff = {k: v for k, v in opts.items() if base[k] != v}
            if self.decks != own_decks:
                diff["decks"] = self.decks
            if "num_players" not in diff and self.num_players != PRESET_PLAYERS[self.preset_name][0]:
                diff["num_players"] = self.num_players
            if not diff:
                return self.preset_name
            return {"preset": self.preset_name, **diff}
        return opts

    def options(self) -> dict[str, Any]:
        """Every option field (RULES.md §8) as a plain dict (``preset`` excluded)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "preset_name"}

    def replace(self, **changes: Any) -> "Rules":
        """A copy with some options changed (validated like the constructor)."""
        return dataclasses.replace(self, **changes)


OPTION_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Rules) if f.name != "preset_name")

# Each preset: its options (everything else at the default) and its player range.
PRESET_OPTIONS: dict[str, dict[str, Any]] = {
    "classic": dict(target=100),
    "turnover": dict(recycle="turn_over", max_recycles=None, target=BY_PLAYERS),
    "deadwood": dict(
        target=250, rummy_multiplier=1, recycle="turn_over", max_recycles=None, dry_hand="lowest_deadwood"
    ),
    "stalemate": dict(target=BY_PLAYERS),
    "practice": dict(target=None, rummy_multiplier=1, dry_trigger="on_request"),
    "rum500": dict(scoring="melds", draw="dig", target=500, max_recycles=0, rummy_multiplier=1,
                   hand_size=RUM500_DEAL),
    "jokers": dict(recycle="turn_over", max_recycles=None, target=BY_PLAYERS, jokers=2),
    "two_decks": dict(recycle="turn_over", max_recycles=None, target=BY_PLAYERS, decks=2),
}
PRESET_PLAYERS: dict[str, tuple[int, int]] = {
    "classic": (2, 2),
    "turnover": (2, 6),
    "deadwood": (2, 6),
    "stalemate": (2, 4),
    "practice": (2, 2),
    "rum500": (2, 6),
    "jokers": (2, 6),
    "two_decks": (5, 7),
}



def _presets_allowing(n: int) -> str:
    """The presets whose range holds ``n`` players, then those that do with ``decks=2``
    (for the error message of a player count a preset refuses)."""
    ok = [p for p, (a, b) in PRESET_PLAYERS.items() if a <= n <= b]
    two = [p for p in PRESET_PLAYERS if p not in ok and preset_players(p, 2)[0] <= n <= preset_players(p, 2)[1]]
    text = ", ".join(ok) if ok else "none"
    return text + (f" ({', '.join(two)} with decks=2)" if two else "")


def preset_players(name: str, decks: Any = 1) -> tuple[int, int]:
    """The player range of preset ``name``: ``PRESET_PLAYERS``, a top of 6 raised to 7
    when the rules play two decks (RULES.md §10.3: two decks for five to seven players)."""
    lo, hi = PRESET_PLAYERS[name]
    return (lo, 7) if hi == 6 and decks == 2 else (lo, hi)


PRESETS: dict[str, Rules] = {name: Rules.preset(name) for name in PRESET_OPTIONS}
