"""Scripted baselines (agents/): rule-by-rule choices in prepared positions, the
observation-only contract, legality over many hands, make_agent errors, the PPO loader."""
from __future__ import annotations

import random

import numpy as np
import pytest

from extras import needs

from rummy_env.agents import AGENT_NAMES, GreedyAgent, HeuristicAgent, PlayerView, RandomAgent, make_agent
from rummy_env import Rules, engine, state_json
from rummy_env.actions import DRAW_DISCARD, DRAW_STOCK, NUM_ACTIONS, action_text
from rummy_env.cards import CARD_TEXT, mask_of, parse_card, parse_cards
from rummy_env.observation import Encoder, obs_size
from rummy_env.eval.tournament import play_game

ALL = [c for c in CARD_TEXT]


def position(hands, melds=(), discard=("2S",), phase="play", current=0, rules="classic", **extra):
    """A STATE dict with every card not named placed in the stock (top first, in card order)."""
    used = {c for h in hands for c in h} | {c for m in melds for c in m} | set(discard)
    stock = [c for c in ALL if c not in used]
    d = {"rules": rules, "hands": [list(h) for h in hands], "stock": stock, "discard": list(discard),
         "melds": [list(m) for m in melds], "current_player": current, "phase": phase}
    d.update(extra)
    return d


def observe(position, seat=None):
    st = state_json.from_json(position, seed=0)
    seat = st.current if seat is None else seat
    obs = Encoder(st.rules.num_players).encode(st, seat)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    mask[engine.legal_actions(st)] = 1
    return st, obs, mask


def text(a):
    return action_text(a)


# ----------------------------------------------------------------- PlayerView

def test_view_decodes_the_declared_layout():
    pos = position(
        [["2C", "3C", "5D", "5H", "8H", "KS", "4S", "6S", "7C", "9D", "TD"], ["AH", "AS", "AD"] + ["QH", "QS", "QD", "JH"]],
        melds=[["KC", "KD", "KH"]], discard=["2S", "3S"], has_melded=[False, True],
        known_cards=[[], ["JH"]], discards_by=[["3S"], []])
    # 11 + 7 in hands, 3 melded: 20 dealt - 18 + 1 drawn = 3
    st, obs, mask = observe(pos)
    v = PlayerView(obs, mask)
    assert v.n == 2 and v.phase == 1 and v.is_mover
    assert v.hand == mask_of(parse_cards(pos["hands"][0]))
    assert v.upcard == parse_card("3S") and v.discard_below == mask_of([parse_card("2S")])
    assert v.table == mask_of(parse_cards(["KC", "KD", "KH"]))
    assert v.layoff_set == mask_of([parse_card("KS")]) and v.layoff_low == v.layoff_high == 0
    assert v.opp_known == [mask_of([parse_card("JH")])]
    assert v.opp_discards == [0]
    assert v.opp_hand_size == [7] and v.opp_has_melded == [True] and not v.has_melded
    assert v.stock_size == 52 - 18 - 3 - 2
    assert v.aces == "low" and v.ace_points == 1 and v.layoffs and v.rummy_multiplier == 2
    assert v.max_recycles == 1 and v.cards_dealt == 10 and not v.on_request
    assert v.legal == sorted(engine.legal_actions(st))
    assert v.discardable == v.hand
    assert v.layoff_actions == [423 + 3 * parse_card("KS")]  # KS onto the set of kings
    assert v.drawn == -1


def test_views_of_one_table_under_two_rule_sets_each_read_their_own_rules():
    """PlayerView keeps the rules it decoded per table, keyed by the observation's rule
    block: two rule sets of one table (same lengths) decoded in turn each read back their own."""
    hands = [["2C", "3C", "5D", "5H", "8H", "KS", "4S", "6S", "7C", "9D", "TD"], ["AH", "AS", "AD", "QH", "QS", "QD", "JH"]]
    other = Rules.preset("classic", aces="high", ace_points=11, layoffs=False, max_recycles=None).to_json()
    _, obs_a, mask_a = observe(position(hands, melds=[["KC", "KD", "KH"]], discard=["2S", "3S"], has_melded=[False, True]))
    _, obs_b, mask_b = observe(position(hands, melds=[["KC", "KD", "KH"]], discard=["2S", "3S"], has_melded=[False, True],
                                        rules=other))
    assert obs_a.shape == obs_b.shape and not np.array_equal(obs_a, obs_b)
    for _ in range(2):
        a, b = PlayerView(obs_a, mask_a), PlayerView(obs_b, mask_b)
        assert (a.aces, a.ace_points, a.layoffs, a.max_recycles) == ("low", 1, True, 1)
        assert (b.aces, b.ace_points, b.layoffs, b.max_recycles) == ("high", 11, False, None)
        assert a.hand == b.hand == mask_of(parse_cards(hands[0]))
    # the cache keys on the values, not the bytes: an int32 rule block of 1s and a float32 one
    # with the same bytes (1.4e-45 each) decode as their own values
    from rummy_env.table import offsets

    lo, hi = offsets(2)["rule_aces"].start, offsets(2)["rule_cards_dealt"].stop
    obs_i = obs_a.astype(np.int32)
    obs_i[lo:hi] = 1
    obs_f = obs_a.copy()
    obs_f[lo:hi] = np.ones(hi - lo, np.int32).view(np.float32)
    i, f = PlayerView(obs_i, mask_a), PlayerView(obs_f, mask_a)
    assert (i.aces, i.ace_points, i.layoffs, i.max_recycles) == ("low", 11, True, None)
    assert (f.aces, f.ace_points, f.layoffs, f.max_recycles) == ("either", 1, False, 0)


def test_view_rejects_bad_shapes():
    with pytest.raises(ValueError, match="observation has shape"):
        PlayerView(np.zeros(100, np.float32), np.zeros(NUM_ACTIONS, np.int8))
    with pytest.raises(ValueError, match="action_mask has shape"):
        PlayerView(np.zeros(obs_size(2), np.float32), np.zeros(10, np.int8))


def test_action_mask_marks_exactly_the_legal_ids():
    from rummy_env.observation import action_mask

    m = action_mask([0, 52, 578])
    assert m.dtype == np.int8 and m.shape == (NUM_ACTIONS,)
    assert np.flatnonzero(m).tolist() == [0, 52, 578] and int(m.sum()) == 3
    many = list(range(2, 54))  # 52 discards: the fancy-indexing path
    assert np.flatnonzero(action_mask(many, dtype=bool)).tolist() == many
    rows = np.zeros((2, NUM_ACTIONS), dtype=bool)
    action_mask([1], out=rows[1])
    assert np.flatnonzero(rows[1]).tolist() == [1] and not rows[0].any()


# ----------------------------------------------------------------- greedy, by its rule

def test_greedy_discards_its_highest_card_outside_partial_melds():
    # no meld; partials: 2C 3C, 5D 5H, 4S 6S, 9D TD; isolated: 7C (7), 8H (8), KS (10)
    pos = position([["2C", "3C", "5D", "5H", "8H", "KS", "4S", "6S", "7C", "9D", "TD"],
                    ["AH", "AS", "AD", "QH", "QS", "QD", "JH", "JC", "JD", "JS"]])
    _, obs, mask = observe(pos)
    assert text(GreedyAgent(0).act(obs, mask)) == "discard KS"


def test_greedy_declines_an_upcard_it_cannot_use_and_takes_one_it_can():
    hand = ["2C", "3C", "5D", "5H", "8H", "KS", "4S", "6S", "7C", "9D"]
    opp = ["AH", "AS", "AD", "QH", "QS", "QD", "JH", "JC", "JD", "JS"]
    # upcard TH: no TH partner of rank, 8H is two away but 9H is not held: no meld
    _, obs, mask = observe(position([hand, opp], discard=["TH"], phase="draw"))
    assert GreedyAgent(0).act(obs, mask) == DRAW_STOCK
    assert HeuristicAgent(0).act(obs, mask) == DRAW_STOCK
    # upcard 5S completes 4S 5S 6S: take it
    _, obs, mask = observe(position([hand, opp], discard=["5S"], phase="draw"))
    assert GreedyAgent(0).act(obs, mask) == DRAW_DISCARD
    assert HeuristicAgent(0).act(obs, mask) == DRAW_DISCARD
    # upcard KH joins nothing in the hand, but the table's set of kings takes it
    hand2 = ["2C", "3C", "5D", "5H", "8H", "4S", "6S", "7C", "9D", "TD"]
    opp2 = ["AH", "AS", "AD", "QH", "QS", "QD", "JH"]
    pos = position([hand2, opp2], melds=[["KC", "KD", "KS"]], discard=["KH"], phase="draw", has_melded=[False, True])
    _, obs, mask = observe(pos)
    assert GreedyAgent(0).act(obs, mask) == DRAW_DISCARD
    assert HeuristicAgent(0).act(obs, mask) == DRAW_DISCARD


def test_greedy_melds_then_lays_off_then_discards():
    hand = ["4H", "5H", "6H", "KS", "2C", "9D", "TC", "3S", "8C", "QD", "AC"]
    opp = ["AH", "AS", "AD", "QH", "QS", "JH", "JC"]
    pos = position([hand, opp], melds=[["KC", "KD", "KH"]], has_melded=[False, True])
    st, obs, mask = observe(pos)
    g = GreedyAgent(0)
    a = g.act(obs, mask)
    assert text(a) == "meld 4H 5H 6H"
    engine.apply(st, a)
    enc = Encoder(2)
    m2 = np.zeros(NUM_ACTIONS, np.int8)
    m2[engine.legal_actions(st)] = 1
    a = g.act(enc.encode(st, 0), m2)
    assert text(a) == "layoff KS set"


# ----------------------------------------------------------------- heuristic, by its rules

def test_heuristic_keeps_a_card_with_two_homes():
    # 9H has two homes (9C: a set; 8H: a run) and ties for the highest value with 9C;
    # every other card is low.  Scores (outs x 8 + weak x 2 - points + danger):
    #   7D: no outs, weak 1 (rank) + 3 (runs) -> 8 - 7 + 1 (live for the opponent) = 2
    #   AC: weak 1 (rank) + 1 (A-2-3) -> 4 - 1 + 1 = 4;  9H: outs 9D 9S 7H TH -> 32 - 9 + 1
    pos = position([["9H", "9C", "8H", "2D", "3D", "5S", "6S", "4C", "4H", "AC", "7D"],
                    ["AH", "AS", "AD", "QH", "QS", "QD", "JH", "JC", "JD", "JS"]])
    _, obs, mask = observe(pos)
    a = HeuristicAgent(0).act(obs, mask)
    assert text(a) == "discard 7D"


def test_heuristic_does_not_feed_a_known_collection():
    # The opponent took 8S from the discard pile. Isolated cards: 8D and 2D (7D 9D 3D
    # are in the discard pile, so neither can join a run). Greedy throws its highest
    # isolated card, 8D. The heuristic scores 8D: weak 1 (rank) -> 2 - 8 + 10 (same rank
    # as a card the opponent collects) + 1 (live for the opponent) = 5, and 2D: 2 - 2 + 1
    # = 1, so it keeps the 8D and throws the 2D.
    hand = ["5D", "5H", "KH", "KS", "4S", "6S", "8D", "2D", "9C", "JC", "3H"]
    opp = ["8S", "AS", "AD", "QH", "QS", "QD", "JH", "AC", "JD", "JS"]
    pos = position([hand, opp], discard=["7D", "9D", "3D"], known_cards=[[], ["8S"]])
    _, obs, mask = observe(pos)
    assert text(GreedyAgent(0).act(obs, mask)) == "discard 8D"
    assert text(HeuristicAgent(0).act(obs, mask)) == "discard 2D"


def test_heuristic_holds_for_rummy_and_never_throws_a_card_the_table_takes():
    # Nothing melded yet; the hand holds 2C-5C and 9D 9S 9H 9C (8 cards in melds), KH
    # (the table's set of kings takes it), 6D and 3S. After one discard only one card
    # would be unplaced: going rummy is one draw away, so the heuristic holds back
    # and discards among 6D and 3S only, never KH (the opponent could lay it off on the
    # kings): 6D scores 2*4 (weak: rank + 3 runs) - 6 + 1 = 3, 3S (2S is in the pile,
    # so only 3S 4S 5S and the rank remain) 2*2 - 3 + 1 = 2: it throws the 3S.
    hand = ["2C", "3C", "4C", "5C", "9D", "9S", "9H", "9C", "KH", "6D", "3S"]
    opp = ["AH", "AS", "AD", "QH", "QS", "QD", "JH"]
    pos = position([hand, opp], melds=[["KC", "KD", "KS"]], has_melded=[False, True])
    _, obs, mask = observe(pos)
    assert text(HeuristicAgent(0).act(obs, mask)) == "discard 3S"
    # greedy melds at once
    assert text(GreedyAgent(0).act(obs, mask)).startswith("meld")
    # with the opponent down to 2 cards it is too risky: the heuristic melds
    opp_short = ["AH", "AS"]
    pos = position([hand, opp_short], melds=[["KC", "KD", "KS"], ["4H", "5H", "6H", "7H", "8H"]],
                   has_melded=[False, True])
    _, obs, mask = observe(pos)
    assert text(HeuristicAgent(0).act(obs, mask)).startswith("meld")


def test_heuristic_goes_out_when_it_can():
    # 11 cards: three melds and KS: meld everything and discard KS, going rummy
    hand = ["2C", "3C", "4C", "9D", "9S", "9H", "5H", "6H", "7H", "8H", "KS"]
    opp = ["AH", "AS", "AD", "QH", "QS", "QD", "JH", "JC", "JD", "JS"]
    st, obs, mask = observe(position([hand, opp]))
    h = HeuristicAgent(0)
    enc = Encoder(2)
    while not st.hand_over:
        m = np.zeros(NUM_ACTIONS, np.int8)
        m[engine.legal_actions(st)] = 1
        engine.apply(st, h.act(enc.encode(st, 0), m))
    assert st.result["winner"] == 0 and st.result["rummy"]
    # rummy doubles: opponent deadwood 1+1+1+10*7 = 73 -> 146
    assert st.result["points"] == [146, 0]


def test_holding_heuristic_keeps_melds_in_hand_until_it_can_go_out():
    # The same hand as above with the opponent down to 2 cards: the baseline melds,
    # HOLD_MELDS=1 keeps both melds (and the KH lay-off) in hand because it cannot go
    # out this turn (6D and 3S would stay unplaced). With the opponent at 2 cards points
    # weigh double (LATE_WEIGHT): 6D scores 2*4 - 2*6 + 1 = -3, 3S 2*2 - 2*3 + 1 = -1,
    # so it throws the 6D.
    hand = ["2C", "3C", "4C", "5C", "9D", "9S", "9H", "9C", "KH", "6D", "3S"]
    pos = position([hand, ["AH", "AS"]], melds=[["KC", "KD", "KS"], ["4H", "5H", "6H", "7H", "8H"]],
                   has_melded=[False, True])
    _, obs, mask = observe(pos)
    assert text(HeuristicAgent(0).act(obs, mask)).startswith("meld")
    assert text(HeuristicAgent(0, HOLD_MELDS=1).act(obs, mask)) == "discard 6D"
    # with only 3S unplaced it goes out: melds, lays off KH on the kings, throws 3S
    hand = ["2C", "3C", "4C", "5C", "6C", "9D", "9S", "9H", "9C", "KH", "3S"]
    st, obs, mask = observe(position([hand, ["AH", "AS"]],
                                     melds=[["KC", "KD", "KS"], ["4H", "5H", "6H", "7H", "8H"]],
                                     has_melded=[False, True]))
    h, enc, played = HeuristicAgent(0, HOLD_MELDS=1), Encoder(2), []
    while not st.hand_over:
        m = np.zeros(NUM_ACTIONS, np.int8)
        m[engine.legal_actions(st)] = 1
        a = h.act(enc.encode(st, 0), m)
        played.append(text(a))
        engine.apply(st, a)
    assert played == ["meld 2C 3C 4C 5C 6C", "meld 9C 9D 9H 9S", "layoff KH set", "discard 3S"]
    assert st.result["winner"] == 0
    with pytest.raises(ValueError, match="HOLD_MELDS"):
        HeuristicAgent(HOLD_MELDS=2)


def test_cutting_heuristic_stops_holding_when_the_stock_is_down_to_cut_stock():
    # The holding position above (both melds and the KH lay-off kept in hand, 6D and 3S
    # unplaced, the opponent at 2 cards): 52 - 13 in hands - 8 melded - 1 discarded = 30
    # cards in the stock. heuristic:cutting (CUT_STOCK = 22) holds as the holding heuristic
    # does while the stock holds 23 cards or more and melds from 22 on; the holding
    # heuristic holds at any stock size.
    from rummy_env.agents import CUTTING, make_agent

    hand = ["2C", "3C", "4C", "5C", "9D", "9S", "9H", "9C", "KH", "6D", "3S"]
    melds = [["KC", "KD", "KS"], ["4H", "5H", "6H", "7H", "8H"]]
    full = position([hand, ["AH", "AS"]], melds=melds, has_melded=[False, True])
    assert len(full["stock"]) == 30
    for stock_size, cut in ((30, False), (23, False), (22, True), (5, True)):
        pos = dict(full)
        moved = full["stock"][stock_size:]  # from the bottom of the stock to under the upcard
        pos["stock"], pos["discard"] = full["stock"][:stock_size], moved + full["discard"]
        _, obs, mask = observe(pos)
        cutting = text(make_agent("heuristic:cutting", 0).act(obs, mask))
        holding = text(make_agent("heuristic:holding", 0).act(obs, mask))
        assert holding.startswith("discard"), (stock_size, holding)
        assert cutting.startswith("meld") == cut, (stock_size, cutting)
        if not cut:
            assert cutting == holding
    # once cut, it stays cut: a stock made again from the discard pile (RULES.md §6), 30 cards
    # again, or a seat that has put cards down already, melds at once
    _, obs, mask = observe({**full, "recycles": 1})
    assert text(make_agent("heuristic:cutting", 0).act(obs, mask)).startswith("meld")
    assert text(make_agent("heuristic:holding", 0).act(obs, mask)).startswith("discard")
    # a seat that melded the kings earlier (8 cards: 10 dealt - 3 + 1 drawn; the opponent 5,
    # after the hearts), stock 30: 2C-4C and the nines would leave 6D and 3S, so it cannot
    # go out this turn
    pos = position([["2C", "3C", "4C", "9D", "9S", "9H", "6D", "3S"], ["AH", "AS", "AD", "QH", "QS"]],
                   melds=melds, has_melded=[True, True])
    _, obs, mask = observe(pos)
    assert len(pos["stock"]) == 30
    assert text(make_agent("heuristic:cutting", 0).act(obs, mask)).startswith("meld")
    assert text(make_agent("heuristic:holding", 0).act(obs, mask)).startswith("discard")
    assert CUTTING == {"HOLD_MELDS": 1, "W_OUT": 24.0, "W_WEAK": 6.0, "CUT_STOCK": 22}
    assert make_agent("heuristic:cutting,CUT_STOCK=10", 0).CUT_STOCK == 10
    assert make_agent("heuristic:cutting", 0).HOLD_MELDS == 1 and make_agent("heuristic:holding", 0).CUT_STOCK == 0
    with pytest.raises(ValueError, match="CUT_STOCK counts cards: a whole number"):
        make_agent("heuristic:cutting,CUT_STOCK=2.5")
    with pytest.raises(ValueError, match=r"CUT_STOCK=5 \(the stock size at which a holder stops holding\) needs HOLD_MELDS=1"):
        make_agent("heuristic:CUT_STOCK=5")  # an option that would change nothing is refused
    assert make_agent("heuristic:CUT_STOCK=5,HOLD_MELDS=1", 0).CUT_STOCK == 5
    with pytest.raises(ValueError, match="option 'cuting' is not NAME=VALUE; 'holding', 'cutting' or pairs"):
        make_agent("heuristic:cuting")
    for spec in ("heuristic:cutting,cutting", "heuristic:holding,cutting", "heuristic:CUT_STOCK=10,cutting"):
        with pytest.raises(ValueError, match="the named set 'cutting' comes first and once"):
            make_agent(spec)


# ----------------------------------------------------------------- observation only

def _resample_hidden(position, seat, rng):
    """The same position with the cards `seat` cannot see (other hands except their
    known cards, and the stock) shuffled among those places."""
    d = dict(position)
    n = len(d["hands"])
    known = d.get("known_cards", [[] for _ in range(n)])
    pool = list(d["stock"])
    sizes = []
    for q in range(n):
        if q == seat:
            sizes.append(None)
            continue
        hidden = [c for c in d["hands"][q] if c not in known[q]]
        pool += hidden
        sizes.append(len(hidden))
    rng.shuffle(pool)
    hands = []
    for q in range(n):
        if q == seat:
            hands.append(list(d["hands"][q]))
        else:
            hands.append(list(known[q]) + pool[: sizes[q]])
            pool = pool[sizes[q]:]
    d["hands"] = hands
    d["stock"] = pool
    return d


@pytest.mark.parametrize("players,preset", [(2, "classic"), (3, "turnover"), (4, "deadwood")])
def test_agents_see_only_the_observation(players, preset):
    rules = Rules.preset(preset, num_players=players)
    rng = random.Random(5)
    enc = Encoder(players)
    checked = 0
    for seed in range(3):
        st = engine.new_game(rules, seed=seed)
        players_ = [HeuristicAgent(1), GreedyAgent(2)] + [RandomAgent(3 + i) for i in range(players - 2)]
        while not st.hand_over:
            p = st.current
            obs = enc.encode(st, p)
            mask = np.zeros(NUM_ACTIONS, np.int8)
            mask[engine.legal_actions(st)] = 1
            if st.turn % 3 == 0:
                alt = state_json.from_json(_resample_hidden(state_json.to_json(st), p, rng), seed=1)
                obs2 = enc.encode(alt, p)
                mask2 = np.zeros(NUM_ACTIONS, np.int8)
                mask2[engine.legal_actions(alt)] = 1
                assert np.array_equal(obs, obs2) and np.array_equal(mask, mask2)
                for cls in (HeuristicAgent, GreedyAgent, RandomAgent):
                    assert cls(9).act(obs, mask) == cls(9).act(obs2, mask2)
                checked += 1
            engine.apply(st, players_[p % len(players_)].act(obs, mask))
    assert checked > 10


def test_agents_receive_only_numpy_arrays():
    seen = []

    class Spy(GreedyAgent):
        def act(self, observation, action_mask):
            seen.append((type(observation), observation.dtype, type(action_mask), action_mask.dtype))
            return super().act(observation, action_mask)

    play_game(Rules.preset("classic"), [Spy(0), Spy(1)], seed=3)
    assert seen and all(s == (np.ndarray, np.float32, np.ndarray, np.int8) for s in seen)


# ----------------------------------------------------------------- legality everywhere

@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_every_agent_plays_only_legal_actions(players):
    variants = [Rules.preset("turnover", num_players=players),
                Rules.preset("deadwood", num_players=players, aces="either", ace_points=11),
                Rules.preset("turnover", num_players=players, must_discard_to_go_out=True, aces="high"),
                Rules.preset("deadwood", num_players=players, layoffs=False, dry_trigger="on_request",
                             rummy_needs_no_discard=True, rummy_multiplier=2)]
    if players == 2:
        variants += [Rules.preset("classic"), Rules.preset("practice")]
    kinds = [HeuristicAgent, GreedyAgent, RandomAgent]
    for vi, rules in enumerate(variants):
        for seed in range(4):
            ags = [kinds[(s + seed) % 3](seed * 10 + s) for s in range(players)]
            g = play_game(rules, ags, seed=1000 * vi + seed)  # raises on an illegal action
            assert g["decisions"] > 0


def test_agents_are_deterministic_given_their_seed():
    rules = Rules.preset("classic")
    for name in ("random", "greedy", "heuristic"):
        a = play_game(rules, [make_agent(name, seed=4), make_agent("random", seed=5)], seed=11)
        b = play_game(rules, [make_agent(name, seed=4), make_agent("random", seed=5)], seed=11)
        assert a == b


# ----------------------------------------------------------------- make_agent

def test_make_agent_names_and_errors(tmp_path):
    assert isinstance(make_agent("random"), RandomAgent)
    assert isinstance(make_agent("greedy", seed=1), GreedyAgent)
    assert isinstance(make_agent("heuristic"), HeuristicAgent)
    with pytest.raises(ValueError, match="unknown agent 'bogus'.*random, greedy, heuristic, pretrained"):
        make_agent("bogus")
    with pytest.raises(ValueError, match="not found.*nope.zip"):
        make_agent(f"ppo:{tmp_path}/nope.zip")
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"this is not a zip")
    with pytest.raises(ValueError, match="not an SB3 policy zip"):
        make_agent(f"ppo:{bad}")
    with pytest.raises(ValueError, match="does not exist"):
        make_agent(f"onnx:{tmp_path}/missing_dir")
    with pytest.raises(ValueError, match="needs a path"):
        make_agent("ppo:")
    assert "ppo:PATH" in AGENT_NAMES


def test_make_agent_pretrained_missing(monkeypatch, tmp_path):
    from rummy_env import agents

    monkeypatch.setattr(agents.shipped, "FOLDER", str(tmp_path))  # a broken install: no shipped files
    with pytest.raises(ValueError, match="pretrained.*missing"):
        make_agent("pretrained")


def test_ppo_agent_loads_and_acts_greedily(tmp_path):
    needs("sb3_contrib")
    from sb3_contrib import MaskablePPO

    from rummy_env import SingleAgentEnv

    env = SingleAgentEnv(rules="classic", seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=16, seed=0, device="cpu")
    path = tmp_path / "p.zip"
    model.save(path)
    agent = make_agent(f"ppo:{path}")
    st, obs, mask = observe(position([["2C", "3C", "5D", "5H", "8H", "KS", "4S", "6S", "7C", "9D", "TD"],
                                      ["AH", "AS", "AD", "QH", "QS", "QD", "JH", "JC", "JD", "JS"]]))
    a = agent.act(obs, mask)
    assert mask[a] == 1
    lg = agent.logits(obs)
    assert a == int(np.argmax(np.where(mask.astype(bool), lg, -np.inf)))
    g = play_game(Rules.preset("classic"), [agent, GreedyAgent(0)], seed=2)
    assert g["decisions"] > 0


def test_builtin_opponents_name_the_search_where_it_plays():
    from rummy_env.agents import builtin_opponents
    from rummy_env.rules import Rules

    for preset in ("classic", "rum500", "jokers", "two_decks"):  # the search plays every table now
        assert builtin_opponents(Rules.preset(preset)) == ["heuristic", "greedy", "random", "search"]
