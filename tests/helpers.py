"""Shared helpers for the engine tests: build full 52-card positions by hand.

``position(...)`` takes the interesting cards of a position (hands, discard pile,
melds, optionally the stock) and places every other card in the stock, so a test
only lists what it is about. Expected values in the tests are computed by hand
from RULES.md, never read back from the engine.
"""
from __future__ import annotations

from typing import Any

import pytest

from rummy_env import engine, state_json
from rummy_env.cards import CARD_TEXT, parse_card

ALL_CARDS = list(CARD_TEXT)


def position(
    rules: Any,
    hands: list[list[str]],
    discard: list[str],
    melds: list[list[str]] = (),
    stock: list[str] | None = None,
    current: int = 0,
    phase: str = "draw",
    stock_top: list[str] = (),
    **extra: Any,
) -> engine.GameState:
    """A position from STATE JSON; with ``stock=None`` the stock is ``stock_top``
    (top first) followed by every unplaced card in deck order (AC 2C ... KC AD ...)."""
    placed = {parse_card(c) for h in hands for c in h} | {parse_card(c) for c in discard}
    placed |= {parse_card(c) for m in melds for c in m} | {parse_card(c) for c in stock_top}
    if stock is None:
        stock = list(stock_top) + [c for c in ALL_CARDS if parse_card(c) not in placed]
    obj = {
        "rules": rules,
        "hands": [list(h) for h in hands],
        "stock": list(stock),
        "discard": list(discard),
        "melds": [list(m) for m in melds],
        "current_player": current,
        "phase": phase,
    }
    obj.update(extra)
    return state_json.from_json(obj)


def rest_of_deck(*used: list[str]) -> list[str]:
    """Every card not in the given lists, in deck order."""
    taken = {parse_card(c) for group in used for c in group}
    return [c for c in ALL_CARDS if parse_card(c) not in taken]


def play(state: engine.GameState, *texts: str) -> engine.GameState:
    """Apply moves by text, each decision of which must be listed as legal first (a move
    with jokers is several: ``engine.action_ids``)."""
    for t in texts:
        for a in engine.action_ids(state, t):
            assert a in engine.legal_actions(state), f"{t!r} not legal; legal: {legal_texts(state)}"
            engine.apply(state, a)
    return state


def legal_texts(state: engine.GameState) -> list[str]:
    from rummy_env.actions import action_text

    return [action_text(a) for a in engine.legal_actions(state)]


def hand_text(state: engine.GameState, seat: int) -> set[str]:
    return set(state_json.to_json(state)["hands"][seat])


def table(preset: str, hands: list[list[str]], discard: list[str], melds: list[list[str]] = (),
          phase: str = "draw", over: dict | None = None, **kw: Any) -> engine.GameState:
    """Like ``position`` but on preset ``preset`` with ``hand_size`` chosen so the hand
    sizes add up: n x hand_size = cards in hands + cards in melds (- 1 in the play phase)."""
    n = len(hands)
    total = sum(len(h) for h in hands) + sum(len(m) for m in melds) - (1 if phase == "play" else 0)
    if total % n:
        raise AssertionError(f"hand sizes cannot add up: {total} cards for {n} players")
    rules = {"preset": preset, "num_players": n, "hand_size": total // n, **(over or {})}
    return position(rules, hands, discard, melds, phase=phase, **kw)


def assert_illegal(state: engine.GameState, text: str, *reasons: str) -> str:
    """Applying the action ``text`` raises ``IllegalActionError`` (a ``ValueError``) whose
    message names ``text`` and every one of ``reasons``, and leaves ``state`` as it was
    (its STATE JSON unchanged; API.md: bad input changes nothing). Returns the message."""
    before = state_json.to_json(state)
    with pytest.raises(engine.IllegalActionError) as e:
        for a in engine.action_ids(state, text):  # a move with jokers: its first illegal decision raises
            engine.apply(state, a)
            before = state_json.to_json(state)
    msg = str(e.value)
    assert isinstance(e.value, ValueError)
    for part in (text, *reasons):
        assert part in msg, (part, msg)
    assert state_json.to_json(state) == before
    return msg
