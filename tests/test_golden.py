"""Replay the golden transcripts (tests/golden/*.txt, written by make_golden.py) by
action text from the same seed: every action must be legal, taken by the seat named,
and the deal and the final result must match."""
import json
from pathlib import Path

import pytest

from rummy_env import Rules, engine, state_json

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
FILES = sorted(GOLDEN_DIR.glob("*.txt"))


def parse(path):
    header, moves, final = {}, [], None
    in_moves = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        if line.startswith("final: "):
            final = json.loads(line[len("final: "):])
            in_moves = False
        elif line == "moves:":
            in_moves = True
        elif in_moves:
            seat, text = line.split(" ", 1)
            moves.append((int(seat), text))
        else:
            key, value = line.split(": ", 1)
            header[key] = value
    return header, moves, final


def test_the_four_golden_games_exist():
    assert {p.stem for p in FILES} == {"classic_2p", "turnover_3p", "deadwood_4p", "practice_2p"}


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_golden_replay(path):
    header, moves, final = parse(path)
    rules = Rules.from_json(json.loads(header["rules"]))
    state = engine.new_game(rules, seed=int(header["seed"]))
    j = state_json.to_json(state)
    assert {"hands": j["hands"], "discard": j["discard"], "stock": j["stock"]} == json.loads(header["deal"])
    assert moves and final is not None
    for i, (seat, text) in enumerate(moves):
        assert not state.hand_over, f"move {i} ({text}) after the hand ended"
        assert state.current == seat, f"move {i}: seat {state.current} to move, transcript says {seat}"
        a = engine.action_id(state, text)
        assert a in engine.legal_actions(state), f"move {i}: {text!r} is not legal"
        engine.apply(state, a)
    assert state.hand_over
    j = state_json.to_json(state)
    got = {"result": j["result"], "scores": j["scores"], "turn": j["turn"], "recycles": j["recycles"],
           "hands": j["hands"], "match_winners": j.get("match_winners")}
    assert got == final


def test_golden_results_by_hand():
    """Spot checks of the transcripts against RULES.md, independent of the engine's scorer."""
    from rummy_env.cards import card_points, parse_card

    for path in FILES:
        header, moves, final = parse(path)
        rules = Rules.from_json(json.loads(header["rules"]))
        r = final["result"]
        dw = [sum(card_points(parse_card(c), rules.ace_points) for c in h) for h in final["hands"]]
        n = rules.num_players
        if r["outcome"] == "out":
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
