"""Property tests over random legal play (hypothesis): every preset and player count in
its range, with random option overrides. Invariants (DESIGN.md): the 52 cards are each in
exactly one place; hands + melds = players x dealt (+1 while the mover is in the play
phase); every hand ends within max_turns turns; every listed legal action applies; the
listed melds, lay-offs and discards agree with an independent reading of RULES.md §3-§4;
positions round-trip through STATE JSON."""
import random
from itertools import combinations

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rummy_env import Rules, engine, state_json
from rummy_env.actions import DISCARD_BASE, LAYOFF_BASE, MELD_BASE, NUM_ACTIONS, action_text
from rummy_env.cards import FULL_DECK, parse_card

PLAYER_RANGES = {"classic": (2, 2), "turnover": (2, 6), "deadwood": (2, 6), "stalemate": (2, 4), "practice": (2, 2)}


@st.composite
def rule_sets(draw):
    preset = draw(st.sampled_from(sorted(PLAYER_RANGES)))
    lo, hi = PLAYER_RANGES[preset]
    n = draw(st.integers(lo, hi))
    over = draw(st.fixed_dictionaries({}, optional={
        "aces": st.sampled_from(["low", "high", "either"]),
        "ace_points": st.sampled_from([1, 11]),
        "layoffs": st.booleans(),
        "must_discard_to_go_out": st.booleans(),
        "rummy_needs_no_discard": st.booleans(),
        "rummy_multiplier": st.integers(1, 3),
        "scoring": st.sampled_from(["winner_takes", "penalty"]),
        "recycle": st.sampled_from(["shuffle", "turn_over"]),
        "max_recycles": st.one_of(st.none(), st.integers(0, 2)),
        "dry_trigger": st.sampled_from(["on_empty", "on_request"]),
        "dry_hand": st.sampled_from(["void", "lowest_deadwood"]),
        "max_turns": st.integers(1, 60),
        "hand_size": st.integers(1, min(12, 50 // n)),
    }))
    return Rules.preset(preset, num_players=n, **over)


# ---------------------------------------------------------------- an independent reading of the rules

def _positions(rank, aces):
    """Run positions a card of this rank (0 = A .. 12 = K) may take: an ace is 0 (low), 13 (high)."""
    if rank != 0:
        return [rank]
    return {"low": [0], "high": [13], "either": [0, 13]}[aces]


def is_meld(cards, aces):
    """RULES.md §3-§4 read directly: a set of 3-4 of one rank, or a run of 3+ consecutive
    cards of one suit (aces per the option, never wrapping)."""
    if len(cards) < 3 or len(set(cards)) != len(cards):
        return False
    ranks = [c % 13 for c in cards]
    suits = [c // 13 for c in cards]
    if len(set(ranks)) == 1:
        return len(cards) <= 4
    if len(set(suits)) != 1:
        return False
    if len(cards) == 13:
        return True  # the whole suit, whichever end the ace takes
    for ace_pos in {"low": [0], "high": [13], "either": [0, 13]}[aces]:
        pos = sorted(ace_pos if r == 0 else r for r in ranks)
        if pos == list(range(pos[0], pos[0] + len(pos))):
            return True
    return False


def melds_in_hand(hand_cards, aces):
    """Every meld (as a frozenset) inside the hand, by brute force over ranks and suits."""
    out = set()
    by_rank = {}
    for c in hand_cards:
        by_rank.setdefault(c % 13, []).append(c)
    for cs in by_rank.values():
        if len(cs) >= 3:
            for k in (3, 4):
                for combo in combinations(cs, k):
                    out.add(frozenset(combo))
    for suit in range(4):
        ranks = {c % 13 for c in hand_cards if c // 13 == suit}
        pos = set()
        for r in ranks:
            pos.update(_positions(r, aces))
        for lo in range(14):
            for hi in range(lo + 2, 14):
                if all(p in pos for p in range(lo, hi + 1)):
                    cards = frozenset(suit * 13 + p % 13 for p in range(lo, hi + 1))
                    if len(cards) == hi - lo + 1:
                        out.add(cards)
    return out


def run_ends(meld_cards):
    """Positions (lo, hi) of a run as STATE prints it (rank order; an ace printed first
    is low, printed last is high)."""
    pos = [0 if c % 13 == 0 and i == 0 else 13 if c % 13 == 0 else c % 13 for i, c in enumerate(meld_cards)]
    return pos[0], pos[-1]


def layoff_fits(card, meld_cards, end, aces):
    """Does ``card`` extend this table meld at ``end`` (RULES.md §3)?"""
    is_set = len({c % 13 for c in meld_cards}) == 1
    if end == "set":
        return is_set and len(meld_cards) == 3 and card % 13 == meld_cards[0] % 13
    if is_set or card // 13 != meld_cards[0] // 13:
        return False
    lo, hi = run_ends(meld_cards)
    want = lo - 1 if end == "low" else hi + 1
    return want in _positions(card % 13, aces)


# ---------------------------------------------------------------- the invariants

def card_places(j):
    cards = [c for h in j["hands"] for c in h] + j["stock"] + j["discard"] + [c for m in j["melds"] for c in m]
    return cards


def check_position(s, j):
    rules = s.rules
    n, k = rules.num_players, rules.cards_dealt
    # 52 cards, each exactly once
    cards = card_places(j)
    assert len(cards) == 52 and len(set(cards)) == 52
    masks = list(s.hands) + [sum(1 << c for c in s.stock), sum(1 << c for c in s.discard)]
    masks += [m.mask for m in s.melds]
    total = 0
    for m in masks:
        assert total & m == 0
        total |= m
    assert total == FULL_DECK
    # hands + melds = players x dealt (+1 for the mover in the play phase)
    in_hands = sum(len(h) for h in j["hands"]) + sum(len(m) for m in j["melds"])
    if not s.hand_over:
        assert in_hands == n * k + (1 if s.phase == engine.PLAY else 0)
        assert 0 <= s.turn < rules.max_turns
        assert all(len(h) >= 1 for h in j["hands"])
    else:
        assert in_hands in (n * k, n * k + 1)
    for m in j["melds"]:
        assert is_meld([parse_card(c) for c in m], rules.aces), m
    # STATE round trip
    t = state_json.from_json(j)
    assert state_json.to_json(t) == j
    assert engine.legal_actions(t) == engine.legal_actions(s)


def check_legal_list(s, legal):
    rules = s.rules
    hand = [c for c in range(52) if s.hands[s.current] >> c & 1]
    if s.phase == engine.DRAW:
        assert legal and set(legal) <= {0, 1}
        assert (1 in legal) == bool(s.discard)
        assert (0 in legal) == (bool(s.stock) or rules.dry_trigger == "on_request")
        return
    f = s.drawn_from_discard
    discards = sorted(a - DISCARD_BASE for a in legal if DISCARD_BASE <= a < MELD_BASE)
    # every card in hand may be discarded but the one just taken from the pile
    assert discards == [c for c in hand if c != f]
    melds = {frozenset(parse_card(t) for t in action_text(a).split()[1:]) for a in legal if MELD_BASE <= a < LAYOFF_BASE}
    possible = melds_in_hand(hand, rules.aces)
    assert melds <= possible
    for m in possible - melds:
        rest = set(hand) - m
        # only a meld leaving no discardable card may be missing
        assert not (rest - {f}) or rules.must_discard_to_go_out and not rest, (sorted(m), sorted(rest))
    table = [[parse_card(c) for c in m] for m in state_json.to_json(s)["melds"]]
    layoffs = {a for a in legal if a >= LAYOFF_BASE}
    for card in hand:
        for end, name in enumerate(("set", "low", "high")):
            a = LAYOFF_BASE + 3 * card + end
            fits = rules.layoffs and any(layoff_fits(card, m, name, rules.aces) for m in table)
            if a in layoffs:
                assert fits, action_text(a)
            elif fits:
                # only a lay-off leaving no discardable card may be missing
                rest = set(hand) - {card}
                assert not (rest - {f}) or rules.must_discard_to_go_out and not rest, action_text(a)
    assert all((a - LAYOFF_BASE) // 3 in hand for a in layoffs)


def check_every_legal_action_applies(s, legal):
    for a in legal:
        t = s.copy()
        engine.apply(t, a)
        if not t.hand_over:
            assert engine.legal_actions(t), f"no legal action after {action_text(a)}"


def check_illegal_rejected(s, legal, rng):
    before = state_json.to_json(s)
    for a in rng.sample(range(NUM_ACTIONS), 6):
        if a in legal:
            continue
        try:
            engine.apply(s, a)
        except engine.IllegalActionError as e:
            assert action_text(a) in str(e)
        else:
            raise AssertionError(f"illegal {action_text(a)} was applied")
    assert state_json.to_json(s) == before


def play_hand(s, rng, deep=True):
    steps = 0
    turns_at_start = s.turn
    while not s.hand_over:
        legal = engine.legal_actions(s)
        assert legal, state_json.to_json(s)
        if deep:
            check_position(s, state_json.to_json(s))
            check_legal_list(s, legal)
            check_every_legal_action_applies(s, legal)
            check_illegal_rejected(s, legal, rng)
        a = rng.choice(legal)
        if a >= DISCARD_BASE and a < MELD_BASE:
            assert a - DISCARD_BASE != s.drawn_from_discard
        engine.apply(s, a)
        steps += 1
        assert s.turn - turns_at_start <= s.rules.max_turns
    # the end of the hand
    check_position(s, state_json.to_json(s))
    assert s.turn <= s.rules.max_turns
    r = s.result
    assert r["outcome"] in ("out", "dry", "stalled")
    assert sum(s.payoffs) == 0
    assert all(p >= 0 for p in r["points"])
    if r["outcome"] == "out":
        assert s.hands[r["winner"]] == 0
    elif r["outcome"] == "stalled":
        assert s.turn == s.rules.max_turns
    if r["winner"] is None:
        assert r["points"] == [0] * s.rules.num_players
    assert engine.legal_actions(s) == []
    return steps


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rule_sets(), seed=st.integers(0, 2**32 - 1))
def test_random_hands_keep_every_invariant(rules, seed):
    """80 random hands in the suite; the ``slow`` twin below plays 250."""
    random_hand_checked(rules, seed)


@pytest.mark.slow
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rule_sets(), seed=st.integers(0, 2**32 - 1))
def test_random_hands_keep_every_invariant_250_hands(rules, seed):
    random_hand_checked(rules, seed)


def random_hand_checked(rules, seed):
    rules = rules.replace(max_turns=min(rules.max_turns, 40))
    s = engine.new_game(rules, seed=seed)
    play_hand(s, random.Random(seed), deep=True)


@settings(max_examples=500, deadline=None)
@given(rules=rule_sets(), seed=st.integers(0, 2**32 - 1))
def test_full_length_hands_end_within_max_turns(rules, seed):
    s = engine.new_game(rules, seed=seed)
    rng = random.Random(seed)
    play_hand(s, rng, deep=False)


@settings(max_examples=40, deadline=None)
@given(rules=rule_sets(), seed=st.integers(0, 2**32 - 1))
def test_matches_to_a_small_target(rules, seed):
    target = 40
    rules = rules.replace(target=target, max_turns=min(rules.max_turns, 80))
    s = engine.new_game(rules, seed=seed)
    rng = random.Random(seed)
    n = rules.num_players
    for hand in range(30):
        assert s.hand_number == hand and s.dealer == (n - 1 + hand) % n and s.current == (s.dealer + 1) % n
        before = list(s.scores)
        play_hand(s, rng, deep=False)
        assert [b + p for b, p in zip(before, s.result["points"])] == s.scores
        if s.match_over:
            break
        assert max(s.scores) < target
        engine.next_hand(s)
    else:
        return  # many void hands in a row: nothing more to check
    assert max(s.scores) >= target
    best = (min if rules.scoring == "penalty" else max)(s.scores)
    assert s.match_winners == [q for q in range(n) if s.scores[q] == best]


@settings(max_examples=40, deadline=None)
@given(rules=rule_sets(), seed=st.integers(0, 2**32 - 1))
def test_a_seed_fixes_the_whole_hand(rules, seed):
    rules = rules.replace(max_turns=min(rules.max_turns, 60))
    a, b = engine.new_game(rules, seed=seed), engine.new_game(rules, seed=seed)
    ra, rb = random.Random(seed), random.Random(seed)
    while not a.hand_over:
        x, y = ra.choice(engine.legal_actions(a)), rb.choice(engine.legal_actions(b))
        assert x == y
        engine.apply(a, x)
        engine.apply(b, y)
    assert state_json.to_json(a) == state_json.to_json(b)
