"""The deck variants (RULES.md §10.1-10.3) through the env: property tests over random
legal play on every new preset and player count (hypothesis), PettingZoo's api_test and
seed_test on ``jokers`` (2 and 4 players) and ``two_decks`` (5 and 7), Gymnasium's env
checker, and the hidden-information contract.

Invariants checked at every step of random play: every card is present its number of
times (``decks`` per natural card, ``jokers * decks`` jokers; a melded joker counts as a
joker), the mask is exactly the legal list, every legal id's text reads back to that id,
every legal meld is a meld by an independent reading of the rules (jokers at most half,
distinct suits in a set, consecutive ranks in a run, K-A-2 only under ``around``), the
natural melds the hand holds are all listed when they leave a card to discard, hands
end within ``max_turns``, and positions round-trip through STATE JSON."""
import random
from collections import Counter

import numpy as np
import pytest

from extras import needs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rummy_env import Rules, SingleAgentEnv, engine, rummy_v0, state_json
from rummy_env.actions import action_text, table_kind
from rummy_env.cards import FULL_DECK, JOKER, LAYER_MASK, cards_of, count_cards, count_of, parse_card
from rummy_env.melds import MELD_MASK, melds_in
from rummy_env.observation import action_mask

VARIANT_TABLES = {  # preset, overrides -> player range
    ("rum500", (("jokers", 2),)): (2, 6),
    ("rum500", (("decks", 2),)): (2, 7),
    ("rum500", (("aces", "around"), ("jokers", 2), ("decks", 2))): (2, 7),
    ("jokers", ()): (2, 6),
    ("two_decks", ()): (5, 7),
    ("turnover", (("aces", "around"),)): (2, 6),
    ("jokers", (("decks", 2),)): (2, 6),  # the preset's own range (RULES.md §10.5), two decks or not
    ("two_decks", (("jokers", 2), ("aces", "around"))): (5, 7),
}


@st.composite
def variant_rules(draw):
    (preset, over), (lo, hi) = draw(st.sampled_from(sorted(VARIANT_TABLES.items())))
    n = draw(st.integers(lo, hi))
    extra = draw(st.fixed_dictionaries({}, optional={
        "must_discard_to_go_out": st.booleans(),
        "layoffs": st.booleans(),
        "ace_points": st.sampled_from([1, 11]),
        "max_turns": st.integers(1, 80),
        "dry_trigger": st.sampled_from(["on_empty", "on_request"]),
    }))
    return Rules.preset(preset, num_players=n, **dict(over), **extra)


# ---------------------------------------------------------------- an independent reading of §3-§4, §10.1-10.3

def _card(word: str) -> tuple[int, bool]:
    """(card, is_joker) of one word of meld text: ``5H`` or ``JK=5H``."""
    if word.startswith("JK="):
        return parse_card(word[3:]), True
    return parse_card(word), False


def is_legal_meld(words: list[str], aces: str, max_jokers: int) -> bool:
    """A set (3-4 cards of one rank, distinct suits) or a run (3+ consecutive ranks of one
    suit, each rank once; K-A-2 only when aces is around, the ace low/high per aces
    otherwise), with at most half its cards jokers and at most ``max_jokers``."""
    cards = [_card(w) for w in words]
    ids = [c for c, _ in cards]
    jokers = sum(j for _, j in cards)
    if len(ids) < 3 or len(set(ids)) != len(ids) or jokers > len(ids) - jokers or jokers > max_jokers:
        return False
    ranks, suits = [c % 13 for c in ids], [c // 13 for c in ids]
    if len(set(ranks)) == 1:
        return len(ids) <= 4  # distinct cards of one rank are distinct suits
    if len(set(suits)) != 1 or len(ids) > 13:
        return False
    if len(ids) == 13:
        return True
    rs = set(ranks)
    starts = [r for r in rs if (r - 1) % 13 not in rs]
    if len(starts) != 1:
        return False  # not one cyclic interval
    lo = starts[0]
    wraps = lo + len(ids) - 1 > 12  # the interval passes K -> A
    if not wraps:
        return aces in ("low", "either", "around") or 0 not in rs  # an A at the low end needs the ace low
    ends_at_ace = (lo + len(ids) - 1) % 13 == 0  # ... Q K A: the ace played high
    if ends_at_ace:
        return aces in ("high", "either", "around")
    return aces == "around"  # K A 2: turns the corner


def check_position(env, state) -> None:
    rules = state.rules
    # every card its number of times
    cnt = Counter()
    for h in state.hands:
        cnt.update(count_cards(h))
    cnt.update(state.stock)
    cnt.update(state.discard)
    for m in state.melds:
        for c in m.cards():
            cnt[JOKER if m.jokers >> c & 1 else c] += 1
    assert all(cnt[c] == rules.decks for c in range(52)), {c: cnt[c] for c in range(52) if cnt[c] != rules.decks}
    assert cnt[JOKER] == rules.jokers * rules.decks
    assert set(cnt) <= set(range(53))
    legal = engine.legal_actions(state)
    if state.hand_over:
        return
    agent = env.agent_selection
    ob = env.observe(agent)
    assert np.array_equal(ob["action_mask"], action_mask(legal, size=state.num_actions))
    lay = state.variant
    hand = state.hands[state.current]
    held = Counter(count_cards(hand))
    texts = env.legal_action_texts()
    for a, env_text in zip(legal, texts):
        text = action_text(a, table_kind(rules))
        assert env_text == text == env.action_text(a) == action_text(a, state.num_actions)
        assert engine.action_id(state, text) == env.action_id(text) == a, text
    # the whole moves (a move with jokers is several decisions: joker as <card>, then the meld
    # or lay-off): each starts with a legal id, and their texts give their decisions back
    moves = engine.legal_moves(state)
    assert {a for _, a in moves} == set(legal)
    for text, a in moves:
        steps = engine.action_ids(state, text)
        assert steps[0] == a, text
        if len(steps) > 1:
            assert all(lay.joker_as <= x < lay.joker_as + 52 for x in steps[:-1]), text
            assert [x - lay.joker_as for x in steps[:-1]] == sorted(x - lay.joker_as for x in steps[:-1]), text
        if text.startswith("meld "):
            words = text.split()[1:]
            assert is_legal_meld(words, rules.aces, lay.max_jokers), text
            need = Counter(JOKER if w.startswith("JK=") else parse_card(w) for w in words)
            assert not need - held, (text, "not held")
    # completeness for natural melds: every set/run of distinct held natural cards that
    # leaves a card other than the one taken from the discard pile is listed
    if state.phase == engine.PLAY and state.bound < 0 and not state.named:  # (a dug card restricts the melds)
        f = state.drawn_from_discard
        for mid in melds_in(hand & LAYER_MASK & FULL_DECK, rules.aces):
            rest = held - Counter(cards_of(MELD_MASK[mid]))
            if any(c != f for c in rest):
                assert lay.meld_id[mid] in legal, action_text(lay.meld_id[mid], table_kind(rules))


def play_checked(rules: Rules, seed: int, json_every: int = 7) -> int:
    env = rummy_v0.raw_env(rules=rules)
    env.reset(seed=seed)
    rng = random.Random(seed)
    steps = 0
    while True:
        st_ = env.state
        check_position(env, st_)
        if st_.hand_over:
            break
        if steps % json_every == 0:
            d = state_json.to_json(st_)
            back = state_json.from_json(d)
            assert state_json.to_json(back) == d
            assert engine.legal_actions(back) == engine.legal_actions(st_)
        env.step(rng.choice(engine.legal_actions(st_)))
        steps += 1
        assert st_.turn <= rules.max_turns
    assert st_.result["outcome"] in ("out", "dry", "stalled")
    return steps


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant_rules(), st.integers(0, 10**6))
def test_random_play_keeps_every_invariant(rules, seed):
    """10 random variant tables in the suite; the ``slow`` twin below plays 40."""
    play_checked(rules, seed)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant_rules(), st.integers(0, 10**6))
def test_random_play_keeps_every_invariant_40_tables(rules, seed):
    play_checked(rules, seed)


@pytest.mark.parametrize("preset,n", [("jokers", 2), ("jokers", 6), ("two_decks", 5), ("two_decks", 7)])
def test_full_hands_at_each_new_preset(preset, n):
    # a few whole hands at the default max_turns (300) at each preset's ends of its range
    for seed in range(3):
        play_checked(Rules.preset(preset, num_players=n), seed, json_every=25)


# ---------------------------------------------------------------- PettingZoo and Gymnasium

@pytest.mark.parametrize("preset,n,over", [("jokers", 2, {}), ("jokers", 4, {}), ("two_decks", 5, {}), ("two_decks", 7, {}),
                                           ("rum500", 2, {"jokers": 2}), ("rum500", 7, {"decks": 2})])
def test_pettingzoo_api_and_seed_tests(preset, n, over):
    from pettingzoo.test import api_test, seed_test

    api_test(rummy_v0.env(rules=preset, num_players=n, **over), num_cycles=300)
    seed_test(lambda: rummy_v0.env(rules=preset, num_players=n, **over), num_cycles=100)


def test_spaces_per_kind():
    # the fixed Discrete(N) of each kind (actions.py's layout): jokers 632, two_decks 579
    for preset, n, size in [("jokers", 2, 632), ("two_decks", 5, 579), ("two_decks", 7, 579)]:
        env = rummy_v0.env(rules=preset, num_players=n)
        assert env.action_space("player_0").n == size
        space = env.observation_space("player_0")
        assert space["action_mask"].shape == (size,) and space["action_mask"].dtype == np.int8


def test_single_agent_env_passes_gymnasiums_checker_at_jokers():
    from gymnasium.utils.env_checker import check_env

    env = SingleAgentEnv(rules="jokers", seed=0)
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=1)
    assert obs.shape == env.observation_space.shape and env.action_masks().shape == (632,)


# ---------------------------------------------------------------- hidden information

@pytest.mark.parametrize("preset,n", [("jokers", 3), ("two_decks", 5)])
def test_observation_ignores_hidden_cards_and_stock_order(preset, n):
    env = rummy_v0.raw_env(rules=preset, num_players=n)
    rng = random.Random(3)
    checked = 0
    for seed in range(4):
        env.reset(seed=seed)
        for _ in range(rng.randrange(5, 60)):
            if env.state.hand_over:
                break
            env.step(rng.choice(engine.legal_actions(env.state)))
        if env.state.hand_over:
            continue
        pos = state_json.to_json(env.state)
        base = {a: env.observe(a)["observation"].copy() for a in env.possible_agents}
        for q in range(n):
            # an opponent's hidden cards (not known, not the card taken) swapped with stock cards
            known = Counter(pos["known_cards"][q])
            hidden = list((Counter(pos["hands"][q]) - known).elements())
            if pos["drawn_from_discard"] in hidden and q == pos["current_player"]:
                hidden.remove(pos["drawn_from_discard"])
            k = min(len(hidden), len(pos["stock"]), 3)
            if not k:
                continue
            out = rng.sample(hidden, k)
            into = rng.sample(pos["stock"], k)
            hands = [list(h) for h in pos["hands"]]
            stock = list(pos["stock"])
            for o, i in zip(out, into):
                hands[q][hands[q].index(o)] = i
                stock[stock.index(i)] = o
            changed = dict(pos, hands=hands, stock=stock)
            changed = {k2: v for k2, v in changed.items() if k2 not in ("result", "match_winners")}
            try:
                env.reset(options={"state": changed})
            except ValueError:
                continue  # the swap made the mover unable to finish (a copy of the taken card)
            for i, a in enumerate(env.possible_agents):
                if i != q:
                    assert np.array_equal(env.observe(a)["observation"], base[a]), (preset, q, a)
            checked += 1
        env.reset(options={"state": {k2: v for k2, v in pos.items() if k2 not in ("result", "match_winners")}})
    assert checked >= 4


# ---------------------------------------------------------------- train, export, ONNX, serve at a jokers table

@pytest.fixture(scope="module")
def jokers_run(tmp_path_factory):
    """A tiny `rummy train --rules jokers` run (warm start, snapshots, the card features
    told the table by num_players/kind) and its export."""
    for module in ("torch", "sb3_contrib", "onnx", "onnxscript", "onnxruntime"):  # train + export extras
        needs(module)
    from rummy_env.cli import main as rummy
    from rummy_env.train.config import TrainConfig
    from rummy_env.train.trainer import Trainer

    root = tmp_path_factory.mktemp("jokers_run")
    cfg = TrainConfig(rules="jokers", timesteps=256, out=str(root / "run"), n_envs=8, n_steps=16, batch_size=64,
                      n_epochs=1, workers=1, net_arch=[32], trunk=32, snapshot_every=128, eval_every=0,
                      checkpoint_every=10_000, final_eval_deals=2, eval_deals=2, eval_baselines=["random"],
                      progress=False, warmstart_decisions=400, warmstart_epochs=1, warmstart_dagger_rounds=1,
                      warmstart_dagger_decisions=300, warmstart_dagger_epochs=1)
    report = Trainer(cfg, verbose=0).learn()
    assert report["timesteps"] >= 256
    zip_path = root / "run" / "final_model.zip"
    assert rummy(["export", str(zip_path), "--out", str(root / "export")]) == 0
    return zip_path, root / "export"


def test_export_of_a_jokers_policy_declares_its_layouts(jokers_run):
    import json

    import onnxruntime as ort

    _, export = jokers_run
    spec = json.loads((export / "spec.json").read_text())
    assert spec["actions"]["kind"] == "jokers" and spec["actions"]["num_actions"] == 632
    table = spec["actions"]["table"]
    # 579 discard JK, 580 + card: joker as <card> (580 = joker as AC, 631 = joker as KS)
    assert table[579]["text"] == "discard JK" and table[580]["text"] == "joker as AC"
    assert table[631]["text"] == "joker as KS" and len(table) == 632
    # the observation: the 2-player standard 548, the joker pieces 1 + 1 + 1 + 1 + 52 * 5 and
    # the other seat's 1 + 1 (762 before the jokers_named plane), + 52 jokers_named
    assert spec["cards"]["joker"]["text"] == "JK" and spec["observation"]["size"] == 548 + 264 + 2 == 814
    sess = ort.InferenceSession(str(export / "policy.onnx"), providers=["CPUExecutionProvider"])
    assert {i.name: i.shape for i in sess.get_inputs()} == {"observation": ["batch", 814], "action_mask": ["batch", 632]}
    # the card features read a 2-player layout (10 card planes: 8 + 2 for the one other seat)
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(str(jokers_run[0]), device="cpu")
    assert model.policy.features_extractor.core.planes == 10


def test_onnx_and_ppo_agents_agree_and_play_legal_jokers_hands(jokers_run):
    from rummy_env.agents import make_agent, table_misfit
    from rummy_env.eval.tournament import play_game

    zip_path, export = jokers_run
    onnx, ppo = make_agent(f"onnx:{export}"), make_agent(f"ppo:{zip_path}")
    env = rummy_v0.raw_env(rules="jokers")
    env.reset(seed=9)
    rng = random.Random(0)
    for _ in range(40):
        if env.state.hand_over:
            break
        ob = env.observe(env.agent_selection)
        a = onnx.act(ob["observation"], ob["action_mask"])
        assert a == ppo.act(ob["observation"], ob["action_mask"]) and ob["action_mask"][a]
        env.step(rng.choice(engine.legal_actions(env.state)))
    r = play_game(Rules.preset("jokers"), [onnx, make_agent("random", seed=1)], seed=4)
    assert r["outcome"] in ("out", "dry", "stalled")
    # the policy names its table when asked to play another (a 4-player standard table:
    # observations of 762 entries, 579 actions)
    why = table_misfit(onnx, Rules.preset("turnover", num_players=4))
    assert "2-player jokers table" in why and "762 entries" in why


def test_serve_answers_a_jokers_position_and_refuses_a_standard_one(jokers_run):
    needs("fastapi")
    httpx = needs("httpx")

    from rummy_env.frontends.serve import make_server
    from server_helpers import running_server

    _, export = jokers_run
    env = rummy_v0.raw_env(rules="jokers")
    env.reset(seed=3)
    rng = random.Random(2)
    for _ in range(25):
        env.step(rng.choice(engine.legal_actions(env.state)))
    legal = {action_text(a, "jokers") for a in engine.legal_actions(env.state)}
    with running_server(make_server(export, port=0, log_level="warning")) as addrs:
        assert all(a[0] == "127.0.0.1" for a in addrs)
        with httpx.Client(base_url=f"http://127.0.0.1:{addrs[0][1]}", timeout=10) as c:
            body = c.post("/act", json=state_json.to_json(env.state)).json()
            assert body["action"] in legal and {x["action"] for x in body["legal_actions"]} == legal
            classic = rummy_v0.raw_env()
            classic.reset(seed=2)
            r = c.post("/act", json=classic.state_dict())
            assert r.status_code == 422 and "standard table" in r.text


# ---------------------------------------------------------------- terminal play and the web table

def test_rummy_play_a_whole_jokers_hand_in_the_terminal():
    # always the first listed move (draw stock, then the first discard or meld): the hand
    # ends (out, dry or stalled) with jokers printed as JK and no traceback
    import os
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "rummy_env.cli", "play", "--rules", "jokers", "--opponent", "heuristic",
                        "--seed", "5"], input="1\n" * 700, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, OMP_NUM_THREADS="1", COLUMNS="100"))
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert "your hand:" in r.stdout and "rules: jokers" in r.stdout
    assert "hand over:" in r.stdout and "points this hand:" in r.stdout


def test_web_table_plays_the_deck_variants():
    """Issue 25: the web table plays every heads-up table (it refused the deck variants before)."""
    from rummy_env.frontends.web import WebTable, opponent_factory

    make, name = opponent_factory("heuristic")
    for rules in ("jokers", {"preset": "classic", "decks": 2}, {"preset": "classic", "aces": "around"}):
        t = WebTable(make, name, rules=rules, seed=3)
        v = t.new_match({})["view"]
        assert v["agent"] == "heuristic" and len(v["hand"]) == 10 and v["to_move"] in ("you", "computer")


def test_search_refuses_a_deck_variant_table_up_front_and_at_act():
    from rummy_env.agents import make_agent, table_misfit

    agent = make_agent("search", seed=0)
    assert "jokers table" in table_misfit(agent, Rules.preset("jokers"))
    assert table_misfit(agent, Rules.preset("classic")) is None
    env = rummy_v0.raw_env(rules="two_decks")
    env.reset(seed=1)
    ob = env.observe(env.agent_selection)
    with pytest.raises(ValueError, match="two_decks table"):
        agent.act(ob["observation"], ob["action_mask"])


# ---------------------------------------------------------------- the variant pieces of an observation, by hand

def test_observation_shows_copies_and_jokers_where_they_are():
    # two decks with jokers, 5 players, 5 cards dealt. Seat 0 (to draw) holds 5H 5H JK 2C 9S;
    # seat 1 melded 4H JK=5H 6H (so holds 2 cards). The pile, bottom first: 7C JK 7C 9D.
    from test_state_variants import state_obj

    from rummy_env.cards import CARD_TEXT
    from rummy_env.observation import JOKER_SCALE, offsets

    rules = {"preset": "two_decks", "num_players": 5, "jokers": 2, "hand_size": 5}
    obj = state_obj(rules, [["5H", "5H", "JK", "2C", "9S"], ["KD", "KC"], None, None, None],
                    ["7C", "JK", "7C", "9D"], melds=[["4H", "JK=5H", "6H"]], has_melded=[False, True, False, False, False])
    env = rummy_v0.raw_env(rules=Rules.make(rules))
    env.reset(options={"state": obj})
    o = env.observe("player_0")["observation"]
    off = offsets(5, "jokers+two_decks")

    def cards(piece):
        return sorted(CARD_TEXT[int(c)] for c in np.flatnonzero(o[off[piece]] > 0.5))

    assert cards("hand") == ["2C", "5H", "9S"]              # natural cards, at least one copy
    assert cards("hand_twice") == ["5H"]
    assert o[off["hand_jokers"]][0] == 1 / JOKER_SCALE         # one joker held
    assert cards("upcard") == ["9D"] and o[off["upcard_joker"]][0] == 0
    assert cards("discard_below") == ["7C"] and cards("discard_below_twice") == ["7C"]
    assert o[off["discard_jokers"]][0] == 1 / JOKER_SCALE      # the JK under the upcard
    assert cards("table") == ["4H", "6H"]                     # the joker's 5H is not a natural 5H
    assert cards("table_jokers") == ["5H"]
    # 4H JK=5H 6H takes 3H / 7H at its ends, naturally or as a joker (1 joker in 3 cards:
    # one more makes 2 of 4, at most half)
    assert cards("layoff_low") == cards("joker_layoff_low") == ["3H"]
    assert cards("layoff_high") == cards("joker_layoff_high") == ["7H"]
    assert cards("joker_layoff_set") == [] and cards("table_twice") == []
    assert o[off["rule_two_decks"]][0] == 1
    # the seat after seat 0 (opp1) is seat 1: no known cards, 2 in hand
    assert o[off["opp1_known_jokers"]][0] == 0 and cards("opp1_known_twice") == []


def test_rummy_play_takes_players_for_a_seven_player_two_decks_table():
    needs("torch")  # the default opponent, the shipped policy, is loaded to find it does not fit
    needs("sb3_contrib")
    import os
    import subprocess
    import sys

    # the default opponent (the shipped classic policy) does not fit: heuristic plays every
    # other seat, and the table says so once
    r = subprocess.run([sys.executable, "-m", "rummy_env.cli", "play", "--rules", "two_decks", "--players", "7",
                        "--seed", "5"], input="1\n" * 2500, capture_output=True, text=True,
                       timeout=120, env=dict(os.environ, OMP_NUM_THREADS="1", COLUMNS="120"))
    assert r.returncode == 0, r.stderr
    assert "player_6: " in r.stdout and "player_7" not in r.stdout
    assert r.stdout.count("no shipped policy plays this table") == 1
    bad = subprocess.run([sys.executable, "-m", "rummy_env.cli", "play", "--rules", "classic", "--players", "3"],
                         input="", capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "preset 'classic' is for 2-2 players, not 3" in bad.stderr


@pytest.mark.parametrize("rules,taken,second,meld", [
    # two decks: seat 0 takes the 7H from the pile and melds a 7H; whether it holds the
    # dealt second 7H (or a 3S instead) must not show in the others' observations
    ({"preset": "two_decks", "num_players": 5, "hand_size": 5}, "7H", "7H", "meld 7H 8H 9H"),
    # jokers: it takes the joker upcard and melds a joker; a second joker held or not
    ({"preset": "jokers", "hand_size": 5}, "JK", "JK", "meld JK=7H 8H 9H"),
])
def test_what_others_know_does_not_depend_on_hidden_copies(rules, taken, second, meld):
    from test_state_variants import state_obj

    seen = []
    for hidden in (second, "3S"):
        r = Rules.make(rules)
        others = [None] * (r.num_players - 1)
        obj = state_obj(rules, [["8H", "9H", hidden, "KC", "2D"]] + others, ["QD", taken])
        env = rummy_v0.raw_env(rules=r)
        env.reset(options={"state": obj})
        for text in ("draw discard", meld, "discard KC"):
            for a in env.action_ids(text):  # a meld with a joker: joker as <card>, then the meld
                env.step(a)
        seen.append([env.observe(a)["observation"] for a in env.possible_agents[1:]])
    for a, b in zip(*seen):
        assert np.array_equal(a, b)


# ---------------------------------------------------------------- digs at 500 Rum with the variants, by brute force

def _plays_bound(st, c, depth):
    """Whether some sequence of at most ``depth`` melds and lay-offs, each legal when the
    dig rule is ignored, plays ``c`` (the natural card, or a joker when ``c`` is JOKER)
    with the turn still able to end: an independent reading of RULES.md §10.4."""
    if depth == 0:
        return False
    saved, st.bound, st._legal = st.bound, -1, None
    moves = [t for t, _ in engine.legal_moves(st) if not t.startswith("discard")]  # whole moves, jokers too
    st.bound, st._legal = saved, None
    p = st.current
    for text in moves:
        s2 = st.copy()
        s2.bound, s2._legal = -1, None
        for a in engine.action_ids(s2, text):
            engine.apply(s2, a)
        if count_of(s2.hands[p], c) < count_of(st.hands[p], c):  # the move played c (or a joker)
            if s2.hand_over or engine.legal_actions(s2):
                return True
        elif not s2.hand_over and _plays_bound(s2, c, depth - 1):
            return True
    return False


@pytest.mark.parametrize("over", [dict(jokers=2, hand_size=7), dict(decks=2, hand_size=7, num_players=3)])
def test_digs_at_500_rum_with_variants_match_a_brute_force(over):
    # every dig the draw phase could name (the topmost copy of each card under the upcard)
    # is legal exactly when a short search finds a way to play the dug card this turn
    from rummy_env.cards import count_add

    rules = Rules.preset("rum500", **over)
    checked = 0
    for seed in range(12):
        st = engine.new_game(rules, seed)
        rng = random.Random(seed)
        while not st.hand_over:
            legal = engine.legal_actions(st)
            if st.phase == engine.DRAW and len(st.discard) > 1:
                lay, disc = st.variant, st.discard
                seen = {disc[-1]}
                for i in range(len(disc) - 2, -1, -1):
                    c = disc[i]
                    if c in seen:
                        continue
                    seen.add(c)
                    s2 = st.copy()
                    for x in disc[i:]:
                        s2.hands[s2.current] = count_add(s2.hands[s2.current], x)
                    del s2.discard[i:]
                    s2.phase, s2.bound, s2._legal = engine.PLAY, c, None
                    dig = lay.joker_dig if c == JOKER else lay.dig_base + c
                    assert (dig in legal) == _plays_bound(s2, c, 3), (seed, c)
                    checked += 1
            engine.apply(st, rng.choice(legal))
    assert checked > 200
