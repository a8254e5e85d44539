"""Replay the golden transcripts (tests/golden/*.txt, written by make_golden.py) by
action text from the same seed: every action must be legal, taken by the seat named;
the deal, the position (STATE), the legal action ids and every seat's observation
checksum at each ``check:`` line, and the final result must match. Every kind of table
(``actions.TABLE_KINDS``) has a golden game."""
import copy
import hashlib
import json
from pathlib import Path

import pytest

from rummy_env import Rules, engine, state_json
from rummy_env.actions import TABLE_KINDS, table_kind
from rummy_env.cards import JOKER_POINTS, card_points, parse_card
from rummy_env.observation import Encoder

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
FILES = sorted(GOLDEN_DIR.glob("*.txt"))


def parse(path):
    """``(header, moves, checks, final)``: ``checks[i]`` is the checkpoint of the position
    after the first ``i`` moves."""
    header, moves, checks, final = {}, [], {}, None
    in_moves = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("final: "):
            final = json.loads(line[len("final: "):])
            in_moves = False
        elif line == "moves:":
            in_moves = True
        elif in_moves and line.startswith("check: "):
            checks[len(moves)] = json.loads(line[len("check: "):])
        elif in_moves:
            seat, text = line.split(" ", 1)
            moves.append((int(seat), text))
        else:
            key, value = line.split(": ", 1)
            header[key] = value
    return header, moves, checks, final


def rules_of(header) -> Rules:
    return Rules.from_json(json.loads(header["rules"]))


def check_position(state, enc, check, where):
    assert state_json.to_json(state) == check["state"], f"{where}: the position differs"
    assert list(engine.legal_actions(state)) == check["legal"], f"{where}: the legal action ids differ"
    got = [hashlib.sha256(enc.encode(state, seat).tobytes()).hexdigest()[:16]
           for seat in range(state.rules.num_players)]
    assert got == check["obs"], f"{where}: the observations differ (checksums {got})"


def replay(header, moves, checks, final):
    """Play the transcript; an ``AssertionError`` says where it departs from the engine."""
    rules = rules_of(header)
    state = engine.new_game(rules, seed=int(header["seed"]))
    enc = Encoder.for_rules(rules)
    j = state_json.to_json(state)
    assert {"hands": j["hands"], "discard": j["discard"], "stock": j["stock"]} == json.loads(header["deal"])
    assert moves and final is not None and 0 in checks and len(moves) in checks
    for i, (seat, text) in enumerate(moves):
        if i in checks:
            check_position(state, enc, checks[i], f"before move {i}")
        assert not state.hand_over, f"move {i} ({text}) after the hand ended"
        assert state.current == seat, f"move {i}: seat {state.current} to move, transcript says {seat}"
        a = engine.action_id(state, text)
        assert a in engine.legal_actions(state), f"move {i}: {text!r} is not legal"
        engine.apply(state, a)
    check_position(state, enc, checks[len(moves)], "at the end")
    assert state.hand_over
    j = state_json.to_json(state)
    got = {"result": j["result"], "scores": j["scores"], "turn": j["turn"], "recycles": j["recycles"],
           "hands": j["hands"], "match_winners": j.get("match_winners")}
    if "meld_points" in j:
        got["meld_points"] = j["meld_points"]
    assert got == final


def test_every_kind_of_table_has_a_golden_game():
    kinds = {table_kind(rules_of(parse(p)[0])) for p in FILES}
    assert kinds == set(TABLE_KINDS)
    assert len(TABLE_KINDS) == 16
    # the first four (the standard tables' mix of endings) are still there
    assert {"classic_2p", "turnover_3p", "deadwood_4p", "practice_2p"} <= {p.stem for p in FILES}


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_golden_replay(path):
    header, moves, checks, final = parse(path)
    assert header["policy"] in ("random", "eager")
    replay(header, moves, checks, final)


def test_a_changed_transcript_fails_its_replay():
    """The replay sees a move, a position and an observation that differ from the engine's."""
    header, moves, checks, final = parse(GOLDEN_DIR / "rum500_jokers_3p.txt")
    replay(header, moves, checks, final)
    # another legal move in place of the recorded one (the hand then goes another way)
    state = engine.new_game(rules_of(header), seed=int(header["seed"]))
    for seat, text in moves[:1]:
        engine.apply(state, engine.action_id(state, text))
    other = next(engine.action_text(a, table_kind(state.rules)) for a in engine.legal_actions(state)
                 if engine.action_text(a, table_kind(state.rules)) != moves[1][1])
    changed = list(moves)
    changed[1] = (changed[1][0], other)
    with pytest.raises(AssertionError):
        replay(header, changed, checks, final)
    mid = sorted(checks)[1]
    for edit in ("state", "legal", "obs"):
        bad = copy.deepcopy(checks)
        if edit == "state":
            bad[mid]["state"]["turn"] += 1
        elif edit == "legal":
            bad[mid]["legal"] = bad[mid]["legal"][1:]
        else:
            bad[mid]["obs"][0] = "0" * 16
        with pytest.raises(AssertionError, match="differ"):
            replay(header, moves, bad, final)


def _points(text: str, ace_points: int) -> int:
    """A card's points (RULES.md §1; a joker 15, §10.2)."""
    return JOKER_POINTS if text == "JK" else card_points(parse_card(text), ace_points)


def test_golden_results_by_hand():
    """Spot checks of the transcripts against RULES.md, independent of the engine's scorer."""
    for path in FILES:
        header, moves, checks, final = parse(path)
        rules = rules_of(header)
        r = final["result"]
        dw = [sum(_points(c, rules.ace_points) for c in h) for h in final["hands"]]
        n = rules.num_players
        if rules.scoring == "melds":  # §10.4: every seat scores its melds minus its hand
            assert r["points"] == [m - d for m, d in zip(final["meld_points"], dw)], path.stem
            # the melded points are the table's cards (a joker 15), every one melded this hand
            table = checks[len(moves)]["state"]["melds"]
            assert sum(final["meld_points"]) == sum(15 if c.startswith("JK=") else _points(c, rules.ace_points)
                                                    for m in table for c in m), path.stem
            assert r["rummy"] is False
        elif r["outcome"] == "out":
            w = r["winner"]
            assert dw[w] == 0 and final["hands"][w] == []
            mult = rules.rummy_multiplier if r["rummy"] else 1
            assert r["points"][w] == mult * sum(dw)
        elif rules.dry_hand == "lowest_deadwood":
            low = min(dw)
            if dw.count(low) == 1:
                assert r["winner"] == dw.index(low)
                assert r["points"][r["winner"]] == sum(d - low for d in dw)
            else:
                assert r["winner"] is None and r["points"] == [0] * n
        else:
            assert r["winner"] is None and r["points"] == [0] * n
        if rules.target is None:
            assert final["match_winners"] is not None
