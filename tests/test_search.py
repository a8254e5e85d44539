"""The search baseline (``make_agent("search")``, ``rummy_env.agents.search``).

Expected values are computed by hand from RULES.md; the search's samples are checked
against the true position they were drawn for."""
from __future__ import annotations

import random

import numpy as np
import pytest

from rummy_env import engine, rummy_v0, state_json
from rummy_env.actions import DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, NUM_ACTIONS
from rummy_env.agents import make_agent
from rummy_env.agents.search import Knowledge, SampleError, SearchAgent, determinize, parse_options, rollout
from rummy_env.observation import PlayerView
from rummy_env.cards import FULL_DECK, parse_card
from rummy_env.observation import Encoder
from rummy_env.rules import Rules

CLASSIC = Rules.preset("classic")


def _mask(st: engine.GameState) -> np.ndarray:
    m = np.zeros(NUM_ACTIONS, dtype=np.int8)
    m[engine.legal_actions(st)] = 1
    return m


def _random_positions(count: int, seed: int, rules: Rules = CLASSIC, keep: float = 0.25,
                      heuristic: float = 0.0) -> list[engine.GameState]:
    """Positions reached by legal play (copies, each kept with probability ``keep``), every
    phase and seat: random moves, or with probability ``heuristic`` the heuristic's (so
    melds with jokers and second copies reach the table at a deck-variant table)."""
    from rummy_env.table import Table

    rng = random.Random(seed)
    table = Table.of(rules)
    enc = Encoder.of(table)
    heur = make_agent("heuristic", seed=0)
    out = []
    g = 0
    while len(out) < count:
        st = engine.new_game(rules, seed=seed * 1000 + g)
        g += 1
        while not st.hand_over and len(out) < count:
            legal = engine.legal_actions(st)
            if len(legal) > 1 and rng.random() < keep:
                out.append(st.copy())
            if heuristic and rng.random() < heuristic:
                m = np.zeros(table.num_actions, dtype=np.int8)
                m[legal] = 1
                engine.apply(st, heur.act(enc.encode(st, st.current), m))
            else:
                engine.apply(st, rng.choice(legal))
    return out


def _rotate(st: engine.GameState) -> tuple[list[int], list[int]]:
    """Hands and known cards of ``st`` seen from the mover: seat 0 = the mover."""
    n = st.rules.num_players
    order = [(st.current + k) % n for k in range(n)]
    return [st.hands[q] for q in order], [st.known[q] for q in order]


# ----------------------------------------------------------------- consistency of the samples

@pytest.mark.parametrize("rules", [CLASSIC, Rules.preset("turnover", num_players=3)], ids=["classic", "turnover3"])
@pytest.mark.parametrize("infer", [1, 4])
def test_samples_consistent_with_observation(rules, infer):
    enc = Encoder(rules.num_players)
    for st in _random_positions(25, seed=3 + infer, rules=rules):
        obs = enc.encode(st, st.current)
        k = Knowledge(PlayerView(obs, _mask(st)))
        hands, known = _rotate(st)
        table = 0
        for m in st.melds:
            table |= m.mask
        for i in range(4):
            s = determinize(k, random.Random(i), infer)
            assert s.hands[0] == hands[0]  # own hand
            assert s.current == 0 and s.phase == st.phase
            assert s.drawn_from_discard == st.drawn_from_discard
            assert s.discard[-1:] == st.discard[-1:]  # the upcard
            assert set(s.discard) == set(st.discard)  # the pile as observed
            s_table = 0
            for m in s.melds:
                s_table |= m.mask
            assert s_table == table and s.layoff_masks == st.layoff_masks  # the table and what it takes
            assert [h.bit_count() for h in s.hands] == [h.bit_count() for h in hands]
            assert len(s.stock) == len(st.stock)
            for q in range(1, rules.num_players):
                assert s.hands[q] & known[q] == known[q]  # known-held cards stay with their holder
            places = [*s.hands, sum(1 << c for c in s.stock), sum(1 << c for c in s.discard), s_table]
            union = 0
            for p in places:
                assert union & p == 0  # no card twice
                union |= p
            assert union == FULL_DECK and sum(p.bit_count() for p in places) == 52
            assert engine.legal_actions(s) == engine.legal_actions(st)  # the same choices
            state_json.from_json(state_json.to_json(s))  # a legal position


# ----------------------------------------------------------------- blind to hidden state

def _play_to(env, seed: int, steps: int) -> None:
    env.reset(seed=seed)
    rng = random.Random(seed)
    for _ in range(steps):
        legal = env.unwrapped.legal_actions()
        env.step(rng.choice(legal))


def _swap_hidden(state: dict) -> dict | None:
    """The same position for seat ``current``: one unknown card of the next seat that
    has one swapped with a stock card that is another card (two decks hold a card twice), and
    the stock order reversed; ``None`` when every opponent card is known."""
    s = {k: (list(v) if isinstance(v, list) else v) for k, v in state.items()}
    cur = s["current_player"]
    n = len(s["hands"])
    known_all = s.get("known_cards") or [[]] * n
    # the first seat after the mover holding a card nobody saw it take
    found = next(((q, j) for q in ((cur + d) % n for d in range(1, n))
                  for j, c in enumerate(s["hands"][q]) if c not in set(known_all[q])), None)
    if found is None:  # every opponent card is known: nothing is hidden but the stock
        return None
    opp, i = found
    hand = list(s["hands"][opp])
    stock = list(s["stock"])
    j = next(j for j, c in enumerate(stock) if c != hand[i])
    hand[i], stock[j] = stock[j], hand[i]
    hands = [list(h) for h in s["hands"]]
    hands[opp] = hand
    s["hands"] = hands
    s["stock"] = stock[::-1]
    return s


def test_choice_blind_to_hidden_cards_and_stock_order():
    check_blind(lambda: SearchAgent(seed=7, samples=6, margin=0))


@pytest.mark.parametrize("rules", ["jokers", "two_decks"])
def test_choice_blind_to_hidden_cards_and_stock_order_at_deck_variant_tables(rules):
    # jokers and second copies in the hidden hands and the stock (RULES.md §10.2-10.3)
    check_blind(lambda: SearchAgent(seed=7, samples=4, margin=0), rules=rules, start=5, stop=60)


def check_blind(make, rules="classic", start=4, stop=40) -> None:
    """A searching agent (``make()``, a fresh seeded one per call) chooses the same action
    with the same values when an opponent's unknown card is swapped with a stock card and
    the stock reversed (same observation and mask): it reads neither; at least 4 of the
    positions are searched decisions."""
    searched = 0
    for steps in range(start, stop, 3):
        env = rummy_v0.raw_env(rules=rules)
        _play_to(env, 11, steps)
        if env.state.hand_over:
            break
        state = env.state_dict()
        agent = env.agent_selection
        before = env.observe(agent)
        swapped = _swap_hidden(state)
        if swapped is None:
            continue
        env.reset(seed=0, options={"state": swapped})
        assert env.state_dict()["hands"] != state["hands"] and env.state_dict()["stock"] != state["stock"]
        after = env.observe(agent)
        np.testing.assert_array_equal(before["observation"], after["observation"])
        np.testing.assert_array_equal(before["action_mask"], after["action_mask"])
        choices = []
        for obs in (before, after):
            a = make()
            choices.append((a.act(obs["observation"], obs["action_mask"]), a.last_values))
        assert choices[0] == choices[1]
        searched += bool(choices[0][1])  # a searched decision, not one delegated to the heuristic
    assert searched >= 4


# ----------------------------------------------------------------- legal whole hands, determinism

def test_plays_legal_hands_and_is_deterministic():
    def play(seed: int) -> list[int]:
        env = rummy_v0.raw_env(rules="classic")  # raw_env raises on any illegal action
        env.reset(seed=seed)
        agents = {"player_0": make_agent("search:4", seed=1), "player_1": make_agent("heuristic", seed=2)}
        acts = []
        for _ in range(2000):
            name = env.agent_selection
            if env.terminations[name]:
                break
            ob = env.observe(name)
            a = agents[name].act(ob["observation"], ob["action_mask"])
            assert ob["action_mask"][a] == 1
            acts.append(a)
            env.step(a)
        assert all(env.terminations.values())
        return acts

    for seed in (1, 2):
        assert play(seed) == play(seed)


@pytest.mark.parametrize("policy", ["greedy", "heuristic", "holding"])
def test_rollout_policy_plays_only_legal_actions(policy):
    for seed in range(15):
        st = engine.new_game(CLASSIC, seed=seed)
        rollout(st, 0, 0, check=True, policy=policy)
        assert st.hand_over


# ----------------------------------------------------------------- hand-built positions

def _state(**kw) -> dict:
    used = {parse_card(c) for k in ("discard",) for c in kw[k]}
    used |= {parse_card(c) for h in kw["hands"] for c in h} | {parse_card(c) for m in kw["melds"] for c in m}
    from rummy_env.cards import CARD_TEXT
    stock = [CARD_TEXT[c] for c in range(52) if c not in used]
    return dict(rules="classic", stock=stock, current_player=0, **kw)


def test_does_not_discard_the_card_that_lets_the_opponent_go_out():
    # The opponent holds exactly 7H 7D, both known (taken from the discard pile), and
    # has melded before. 7S lies under the upcard, so only 7C makes its set: discarding
    # 7C lets it take the upcard, meld 7C 7D 7H and go out at once, charging our
    # deadwood 9H + 6D = 15 (no rummy bonus: it melded in an earlier turn, RULES.md §5).
    # After any other discard it cannot go out on its next turn.
    st = _state(
        hands=[["7C", "9H", "6D"], ["7H", "7D"]],
        discard=["7S", "4H"],
        melds=[["KC", "KD", "KH", "KS"], ["AS", "2S", "3S", "4S", "5S"], ["9C", "TC", "JC", "QC"],
               ["AD", "2D", "3D"]],
        phase="play", has_melded=[True, True], known_cards=[[], ["7H", "7D"]],
    )
    env = rummy_v0.raw_env(rules="classic")
    env.reset(seed=0, options={"state": st})
    ob = env.observe("player_0")
    agent = SearchAgent(seed=3, samples=16, margin=0, halving=0)
    a = agent.act(ob["observation"], ob["action_mask"])
    seven = DISCARD_BASE + parse_card("7C")
    assert agent.last_values[seven] == -15.0
    assert a != seven and agent.last_values[a] > -15.0


def test_takes_the_upcard_that_lets_it_go_out():
    # We hold 5H 6H 9C; the upcard 7H makes 5H 6H 7H, and discarding 9C goes out. 4H lies
    # under the upcard and 8H is on the table, so no stock card lets us go out this turn.
    st = _state(
        hands=[["5H", "6H", "9C"], ["2C", "3D", "JS"]],
        discard=["4H", "7H"],
        melds=[["8H", "9H", "TH"], ["QC", "QD", "QS"], ["AC", "AD", "AS"], ["5S", "6S", "7S", "8S", "9S"]],
        phase="draw", has_melded=[True, True],
    )
    env = rummy_v0.raw_env(rules="classic")
    env.reset(seed=0, options={"state": st})
    ob = env.observe("player_0")
    agent = SearchAgent(seed=3, samples=16, margin=0)
    assert agent.act(ob["observation"], ob["action_mask"]) == DRAW_DISCARD
    # going out now collects the opponent's deadwood (2 + 3 + 10 = 15; the samples put
    # other cards in its hand, but always 3 of them, each worth at least 1)
    assert agent.last_values[DRAW_DISCARD] >= 3.0
    assert agent.last_values[DRAW_DISCARD] > agent.last_values[DRAW_STOCK]

def _hold_position(hand: list[str]) -> "engine.GameState":
    # seat 0 to play after drawing from the stock (11 cards); the opponent holds
    # AC AH 2H 3C 3H 4C 5C 6C 8C 9H (1+1+2+3+3+4+5+6+8+9 = 42 points); the table is empty
    opp = ["AC", "AH", "2H", "3C", "3H", "4C", "5C", "6C", "8C", "9H"]
    return state_json.from_json(_state(hands=[hand, opp], discard=["4H"], melds=[], phase="play",
                                       has_melded=[False, False]))


def test_holding_rollout_keeps_its_melds_until_it_can_go_out():
    # 7C 7D 7H is a set; AS 3D 5S 9D JC KH QS 2C are loose and no two of them make half a
    # meld. Eight cards stay after the set, so the holding rollout cannot go out this
    # turn (RULES.md §5): it keeps the set in hand and discards the highest loose card,
    # KH (10 points, the highest rank of the three tens). Greedy melds the set first.
    from rummy_env.agents.search import rollout_turn

    hand = ["7C", "7D", "7H", "AS", "3D", "5S", "9D", "JC", "KH", "QS", "2C"]
    s = _hold_position(hand)
    rollout_turn(s, check=True, hold=True)
    assert s.hands[0] == sum(1 << parse_card(c) for c in hand if c != "KH")
    assert s.melds == [] and s.discard[-1] == parse_card("KH")
    g = _hold_position(hand)
    rollout_turn(g, check=True)
    assert [m.mask for m in g.melds] == [sum(1 << parse_card(c) for c in ("7C", "7D", "7H"))]
    assert g.discard[-1] == parse_card("KH")


def test_timing_searches_putting_the_melds_down():
    # the hand of the holding test: the holding base discards KH and keeps 7C 7D 7H; with
    # timing=1 the set's meld is a candidate beside the discards (RULES.md §3)
    from rummy_env.actions import MELD_BASE
    from rummy_env.melds import meld_of_cards

    hand = ["7C", "7D", "7H", "AS", "3D", "5S", "9D", "JC", "KH", "QS", "2C"]
    opp = ["AC", "AH", "2H", "3C", "3H", "4C", "5C", "6C", "8C", "9H"]
    env = rummy_v0.raw_env(rules="classic")
    env.reset(seed=0, options={"state": _state(hands=[hand, opp], discard=["4H"], melds=[], phase="play",
                                               has_melded=[False, False])})
    ob = env.observe("player_0")
    v = PlayerView(ob["observation"], ob["action_mask"])
    seven_set = MELD_BASE + meld_of_cards(sum(1 << parse_card(c) for c in ("7C", "7D", "7H")), "low")
    assert SearchAgent(seed=1, timing=1).put_down(v) == seven_set
    agent = SearchAgent(seed=1, samples=8, timing=1, policy="holding")
    agent.act(ob["observation"], ob["action_mask"])
    assert seven_set in agent.last_values
    plain = SearchAgent(seed=1, samples=8)
    plain.act(ob["observation"], ob["action_mask"])
    assert seven_set not in plain.last_values and plain.last_values
    for bad in ("timing=2", "timing=-1", "timing=1.5", "timing=true"):
        with pytest.raises(ValueError, match="timing must be 0 or 1"):
            parse_options(bad)


def test_holding_rollout_stops_holding_once_it_has_melded_this_turn():
    # 7C 7D 7H and 2D 3D 4D are sets/runs, six loose cards stay: the holding rollout would
    # hold both; once the sevens are down this turn (the timing candidate's move) it has
    # put something on the table, so it lays 2D 3D 4D down too and discards KH (RULES.md §3)
    from rummy_env.actions import MELD_BASE
    from rummy_env.agents.search import rollout_turn
    from rummy_env.melds import meld_of_cards

    hand = ["7C", "7D", "7H", "2D", "3D", "4D", "AS", "5S", "JC", "KH", "QS"]
    s = _hold_position(hand)
    engine.apply(s, MELD_BASE + meld_of_cards(sum(1 << parse_card(c) for c in ("7C", "7D", "7H")), "low"))
    rollout_turn(s, check=True, hold=True)
    assert sorted(m.mask for m in s.melds) == sorted(sum(1 << parse_card(c) for c in cs)
                                                     for cs in (("7C", "7D", "7H"), ("2D", "3D", "4D")))
    assert s.discard[-1] == parse_card("KH")


def test_holding_rollout_goes_rummy_when_one_card_is_left():
    # 7C 7D 7H, 8S 9S TS JS and 2D 3D 4D meld, KH is the discard: the hand empties in one
    # turn with nothing melded before, so it goes rummy: the opponent's 42 points of
    # deadwood, doubled (rummy_multiplier 2, RULES.md §5) = 84.
    from rummy_env.agents.search import rollout_turn

    s = _hold_position(["7C", "7D", "7H", "8S", "9S", "TS", "JS", "2D", "3D", "4D", "KH"])
    rollout_turn(s, check=True, hold=True)
    assert s.hand_over and s.payoffs[0] == 84



# ----------------------------------------------------------------- options

def test_options_parse_and_reject():
    assert parse_options("") == {}
    assert parse_options("8") == {"samples": 8}
    assert parse_options("samples=8,depth=4,halving=0,margin=1.5,policy=heuristic,infer=3") == {
        "samples": 8, "depth": 4, "halving": 0, "margin": 1.5, "policy": "heuristic", "infer": 3}
    a = make_agent("search:samples=5,margin=0")
    assert isinstance(a, SearchAgent) and a.samples == 5 and a.margin == 0.0
    for bad, word in (("search:0", "samples"), ("search:budget=3", "budget"), ("search:depth=-1", "depth"),
                      ("search:halving=2", "halving"), ("search:policy=mcts", "policy"),
                      ("search:samples=x", "samples"), ("search:8,4", "needs a name"), ("search:margin=-1", "margin"),
                      ("search:infer=0", "infer")):
        with pytest.raises(ValueError, match=word):
            make_agent(bad)


@pytest.mark.parametrize("spec, words", [
    ("search:,samples=3", "have an empty item"),
    ("search:samples=3,", "have an empty item"),
    ("search:samples=3,,depth=1", "have an empty item"),
    ("search:samples=1_0", "samples must be an int, got '1_0'"),  # int() would read 10
    ("search:samples=+3", "samples must be an int, got '\\+3'"),
    ("search:samples=\u0663", "samples must be an int"),  # an Arabic-Indic three: int() would read 3
    ("search:margin=1_0", "margin must be a number, got '1_0'"),
    ("search:margin=0x1", "margin must be a number"),
])
def test_option_values_are_plain_ascii_numbers_and_items_are_never_empty(spec, words):
    with pytest.raises(ValueError, match=words):
        make_agent(spec)


@pytest.mark.parametrize("spec, words", [
    ("search:samples=4097", "search option samples must be an int from 1 to 4096, got 4097"),
    ("search:samples=100000000000000000000", "samples must be an int from 1 to 4096"),
    ("search:infer=257", "search option infer must be an int from 1 to 256, got 257"),
])
def test_budgets_that_would_never_finish_are_refused(spec, words):
    """A budget above the bounds (4096 samples a candidate, about 128 times the default's
    time; 256 draws a sample) is refused up front rather than searched for hours."""
    with pytest.raises(ValueError, match=words):
        make_agent(spec)
    assert SearchAgent(samples=4096, infer=256).samples == 4096  # the bounds themselves are allowed


def test_search_agent_arguments_of_the_wrong_type_are_refused_and_numpy_numbers_taken():
    with pytest.raises(ValueError, match=r"search option base must be one of heuristic, holding, cutting, got \[\]"):
        SearchAgent(base=[])
    with pytest.raises(ValueError, match="search option policy must be one of heuristic, greedy, holding, guide, got None"):
        SearchAgent(policy=None)
    with pytest.raises(ValueError, match="search options must be a string such as 'samples=32,margin=2', got None"):
        parse_options(None)
    a = SearchAgent(samples=np.int64(3), margin=np.float32(1.5))
    assert a.samples == 3 and type(a.samples) is int and a.margin == 1.5
    assert parse_options("margin=.5,samples=12") == {"margin": 0.5, "samples": 12}
    assert parse_options("margin=1e1") == {"margin": 10.0}


def test_single_legal_action_answers_without_search():
    st = _random_positions(1, seed=5)[0]
    enc = Encoder(2)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    only = engine.legal_actions(st)[0]
    mask[only] = 1
    a = SearchAgent(seed=0)
    assert a.act(enc.encode(st, st.current), mask) == only and a.last_values == {}


def test_base_option_picks_the_kept_agent():
    from rummy_env.agents import make_agent

    a = make_agent("search:base=holding")
    assert a.base == "holding" and a._heur.HOLD_MELDS == 1 and a._heur.W_OUT == 24.0
    assert make_agent("search").base == "holding" and make_agent("search:base=heuristic")._heur.HOLD_MELDS == 0
    cut = make_agent("search:base=cutting")._heur
    assert (cut.HOLD_MELDS, cut.W_OUT, cut.W_WEAK, cut.CUT_STOCK) == (1, 24.0, 6.0, 22)
    assert a._heur.CUT_STOCK == 0
    with pytest.raises(ValueError, match="base must be one of heuristic, holding, cutting, got 'teacher'"):
        make_agent("search:base=teacher")


# ----------------------------------------------------------------- the deck-variant tables (RULES.md §10.1-10.3)

VARIANT_TABLES = {
    "jokers": Rules.preset("jokers"),
    "two_decks5": Rules.preset("two_decks"),
    "around_jokers_two_decks3": Rules.preset("turnover", jokers=2, decks=2, aces="around", num_players=3),
    "rum500_jokers": Rules.preset("rum500", jokers=2),
}


@pytest.mark.parametrize("name", list(VARIANT_TABLES))
def test_variant_samples_give_the_observation_they_were_drawn_from(name):
    from rummy_env.cards import JOKER, cards_of, count_cards
    from rummy_env.table import Table

    rules = VARIANT_TABLES[name]
    table = Table.of(rules)
    enc = Encoder.of(table)
    melded_jokers = 0
    for st in _random_positions(40, seed=5, rules=rules, keep=0.2, heuristic=0.5):
        obs = enc.encode(st, st.current)
        m = np.zeros(table.num_actions, dtype=np.int8)
        m[engine.legal_actions(st)] = 1
        k = Knowledge(PlayerView(obs, m))
        for i in range(3):
            s = determinize(k, random.Random(i), 1 + i)
            # what seat 0 of the sample sees is exactly what the mover saw, and it may do the same
            np.testing.assert_array_equal(enc.encode(s, 0), obs)
            assert engine.legal_actions(s) == engine.legal_actions(st)
            assert s.hands[0] == st.hands[st.current] and len(s.stock) == len(st.stock)
            cards = [c for h in s.hands for c in count_cards(h)] + list(s.stock) + list(s.discard)
            for meld in s.melds:
                cards += cards_of(meld.mask & ~meld.jokers) + [JOKER] * meld.jokers.bit_count()
            assert sorted(cards) == sorted(table.deck())  # every card of the deck once per copy
            melded_jokers += sum(meld.jokers.bit_count() for meld in s.melds)
            state_json.from_json(state_json.to_json(s))  # a legal position
    if rules.jokers:
        assert melded_jokers > 0  # the positions reached melds with jokers


def _cards(text: str) -> int:
    m = 0
    for t in text.split():
        m |= 1 << parse_card(t)
    return m


def test_variant_table_melds_by_hand():
    from rummy_env.agents.search import variant_table_melds
    from rummy_env.melds import meld_of_cards

    # a joker table: 4H JK=5H 6H and 7C 7D 7S. The run takes 3H low and 7H high, the set
    # takes 7H; each has room for one more joker (at most half jokers), so a joker may
    # be laid off as the same cards (RULES.md §10.2)
    nat = (_cards("7H"), _cards("3H"), _cards("7H"))
    got = variant_table_melds(_cards("4H 6H 7C 7D 7S"), 0, _cards("5H"), 1, "low", 2, (nat, nat))
    assert sorted(got) == sorted([(meld_of_cards(_cards("4H 5H 6H"), "low"), _cards("5H")),
                                  (meld_of_cards(_cards("7C 7D 7S"), "low"), 0)])
    # two decks: 4H..9H once is one run of six or two runs of three; the lay-off masks
    # tell them apart (two runs: 3H and 6H at the low ends, 7H and TH at the high ends)
    two = ((0, _cards("3H 6H"), _cards("7H TH")), (0, 0, 0))
    got = variant_table_melds(_cards("4H 5H 6H 7H 8H 9H"), 0, 0, 0, "low", 0, two)
    assert sorted(got) == sorted([(meld_of_cards(_cards("4H 5H 6H"), "low"), 0),
                                  (meld_of_cards(_cards("7H 8H 9H"), "low"), 0)])
    one = ((0, _cards("3H"), _cards("TH")), (0, 0, 0))
    assert variant_table_melds(_cards("4H 5H 6H 7H 8H 9H"), 0, 0, 0, "low", 0, one) == (
        (meld_of_cards(_cards("4H 5H 6H 7H 8H 9H"), "low"), 0),)
    # two equal runs lie on the table: 4H 5H 6H twice
    run = meld_of_cards(_cards("4H 5H 6H"), "low")
    masks = ((0, _cards("3H"), _cards("7H")), (0, 0, 0))
    assert variant_table_melds(_cards("4H 5H 6H"), _cards("4H 5H 6H"), 0, 0, "low", 0, masks) == ((run, 0), (run, 0))
    with pytest.raises(SampleError, match="cannot be split into melds"):
        variant_table_melds(_cards("4H 6H 9S"), 0, 0, 0, "low", 0, masks)


@pytest.mark.parametrize("rules", ["jokers", "two_decks"])
def test_plays_legal_deck_variant_hands_and_is_deterministic(rules):
    def play(seed: int) -> tuple[list[int], int]:
        env = rummy_v0.raw_env(rules=rules)  # raw_env raises on any illegal action
        env.reset(seed=seed)
        names = env.possible_agents
        agents = {nm: make_agent("search:4" if i == 0 else "heuristic", seed=i) for i, nm in enumerate(names)}
        acts, searched = [], 0
        for _ in range(3000):
            name = env.agent_selection
            if env.terminations[name] or env.truncations[name]:
                break
            ob = env.observe(name)
            a = agents[name].act(ob["observation"], ob["action_mask"])
            assert ob["action_mask"][a] == 1
            searched += bool(name == names[0] and agents[name].last_values)
            acts.append(a)
            env.step(a)
        assert all(env.terminations.values()) or all(env.truncations.values())
        return acts, searched

    first = play(1)
    assert first == play(1) and first[1] >= 3


def test_choose_replaces_the_prior_only_by_the_margin():
    """Paired payoffs of candidates 11 and 10 (the prior) on three shared samples:
    differences 3, 4, 5 have mean 4 and standard error 1/sqrt(3) = 0.577, so 11 beats the
    prior by far more than margin 2; differences 3, -4, 5 have mean 1.33 and standard error
    2.73, so the prior stays; one sample alone never replaces the prior."""
    agent = SearchAgent(0, margin=2)
    assert agent.choose({10: [1, 2, 3], 11: [4, 6, 8]}, [10, 11], prior=10) == 11
    assert agent.last_values == {10: 2.0, 11: 6.0}
    assert agent.choose({10: [1, 2, 3], 11: [4, -2, 8]}, [10, 11], prior=10) == 10
    assert agent.choose({10: [1], 11: [9]}, [10, 11], prior=10) == 10
    # no prior: the best mean, ties to the lower id; only the candidates still alive count
    assert agent.choose({12: [5, 5], 13: [5, 5]}, [12, 13], prior=None) == 12
    assert agent.choose({12: [1, 1], 13: [9, 9]}, [12], prior=None) == 12
