"""``SearchAgent``: a determinized Monte Carlo search (PIMC) on the observation alone.

At a decision that matters (the draw: stock or upcard; the discard) the agent

1. decodes its observation (``PlayerView``) and rebuilds what its seat knows: its own
   hand, the melds on the table (from the table cards and the lay-off planes), the
   discard pile, the cards each opponent is known to hold (taken from the discard
   pile and not played), every hand size and the stock size;
2. samples ``samples`` *determinizations*: full engine positions
   (``rummy_env.engine.GameState``) in which the unseen cards (neither in its hand, on
   the table, in the discard pile nor known to be held) are dealt uniformly at random
   to the opponents' unknown hand cards and to the stock (``determinize``);
3. plays every candidate action out in every sample (common random numbers: the
   same samples, and the same rollout seed per sample, for every candidate) with the
   engine and a fast bit-mask rollout policy for every seat (``rollout``), to the end
   of the hand or for ``depth`` turns followed by a deadwood evaluation;
4. picks the candidate with the best mean hand points for its seat (the engine's
   zero-sum payoffs, RULES.md §5-§6); candidates are pruned by successive halving
   (the worse half dropped after each round of samples). The base agent's choice
   is the prior: another candidate replaces it only when its mean advantage on the
   same samples exceeds ``margin`` standard errors (docs/search.md: plain PIMC,
   ``margin=0``, loses to ``heuristic``).

Everything else is answered at once, without search: a single legal action, and
the melds and lay-offs of the play phase, which follow the base agent
(``base``: by default the holding ``HeuristicAgent`` of ``BASES``, which keeps its
melds in hand until it can go out in one turn; ``base=heuristic`` melds the best
partition early, lays off, and holds back for going rummy when it is one draw away).
The discard candidates are the cards the heuristic would consider (deadwood that
no meld or lay-off uses; all discardable cards when there is none).

The agent never reads the env or a position it was not given: its samples are its
own, built from the observation, and the rollout policy plays on those samples.

Seats in a sample are relative: seat 0 is the observer, seat ``k`` the seat ``k``
places after it in turn order (``oppk`` in the observation layout).

At a deck-variant table (RULES.md §10.1-10.3: jokers, two decks, runs around the
corner) the same steps run on count masks: the seat's hand, the known cards and the
unseen cards are multisets (the joker ``cards.JOKER`` among them), the table's melds
carry their jokers (``variant_table_melds``), the base agent's deck-variant rules give
the prior and play the ``joker as <card>`` steps, melds and lay-offs, and the rollouts
play ``variant_turn`` for every seat (docs/search.md).

Approximations (what the observation does not say): the order of the discard pile
under the upcard (sorted by card number, jokers at the bottom; it matters only for
``recycle="turn_over"``), whether the mover melded this turn when it had melded before
(``melded_this_turn``, which matters only for going rummy), and ``max_turns`` (the
default 300; the turn count is read as ``turn_frac * 300``).
"""
from __future__ import annotations

import numbers
import random
import re
from functools import lru_cache, partial
from typing import Any

import numpy as np

# every engine import in one place (PlayerView / STATE JSON may move between modules)
from rummy_env import engine
from rummy_env.actions import DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, LAYOFF_BASE, MELD_BASE, TABLE_KINDS
from rummy_env.cards import (FULL_DECK, JOKER, LAYER, LAYER_MASK, TEXT_OF, cards_of, count_add, count_points, count_cards,
                             count_remove_set, count_size, mask_points)
from rummy_env.engine import DRAW, PLAY, GameState, IllegalActionError, Meld
from rummy_env.meld_analysis import best_partition, goes_out, meld_plan, partial_mask
from rummy_env.melds import (MELD_HI, MELD_KEY, MELD_KIND, MELD_LO, MELD_MASK, layoff_masks_after, meld_layoff_masks,
                             melds_in)
from rummy_env.observation import Encoder, PlayerView, action_masks_into
from rummy_env.rules import Rules, default_hand_size
from rummy_env.table import Table

from .masking import mask_logits
from .scripted import CUTTING, HOLDING, GreedyAgent, HeuristicAgent

DEFAULT_SAMPLES = 32
MAX_SAMPLES = 4096
"""The most determinizations per candidate (128 times the default: about 2 s a decision)."""
MAX_INFER = 256
"""The most draws per determinization (``infer``)."""
DEFAULT_DEPTH = 0
DEFAULT_MARGIN = 2.0
DEFAULT_POLICY = "greedy"
POLICIES = ("heuristic", "greedy", "holding")
SEARCH_POLICIES = POLICIES + ("guide",)
"""The ``policy`` option's values: a rollout policy of ``rollout``, or ``"guide"`` (``guide_rollouts``)."""
OPTION_NAMES = ("samples", "depth", "halving", "margin", "policy", "infer", "base", "guide", "top", "timing", "lead",
                "sure")
LEADS = ("guide", "base")
"""Whose move a guided search keeps unless beaten (``lead``): the guide's or the base agent's."""
DEFAULT_TOP = 3
BASES = {"heuristic": {}, "holding": HOLDING, "cutting": CUTTING}
"""The scripted agent whose moves the search keeps unless a candidate beats them
(``base``): the baseline heuristic, the holding heuristic that keeps its melds in
hand until it can go out in one turn (the training's teacher), or the cutting heuristic,
which holds until the stock is down to 22 cards and then melds early."""
DEFAULT_BASE = "holding"
_POINTS = {ap: tuple(mask_points(1 << c, ap) for c in range(52)) for ap in (1, 11)}


class SampleError(ValueError):
    """The observation is not one a legal position can give (its card counts disagree)."""


# ----------------------------------------------------------------- rules and table from the view

@lru_cache(maxsize=64)
def _rules(key: tuple) -> Rules:
    (n, dealt, aces, ap, layoffs, must, mult, no_disc, penalty, turn_over, mr, on_req, lowest, target,
     melds_scoring, dig, jokers, decks) = key
    return Rules(
        num_players=n, hand_size=None if dealt == default_hand_size(n, decks) else dealt, aces=aces, ace_points=ap,
        jokers=jokers, decks=decks,
        layoffs=layoffs, must_discard_to_go_out=must, rummy_multiplier=mult, rummy_needs_no_discard=no_disc,
        scoring="melds" if melds_scoring else "penalty" if penalty else "winner_takes",
        draw="dig" if dig else "top", recycle="turn_over" if turn_over else "shuffle",
        max_recycles=mr, dry_trigger="on_request" if on_req else "on_empty",
        dry_hand="lowest_deadwood" if lowest else "void", target=target,
    )


def rules_of_view(v: PlayerView) -> Rules:
    """The ``Rules`` the observation states (RULES.md §8, §10.1-10.4: the deck variants
    too; ``max_turns`` is not in the observation and is taken as its default, 300)."""
    t = int(round(v.target))
    return _rules((v.n, v.cards_dealt, v.aces, v.ace_points, v.layoffs, v.must_discard, v.rummy_multiplier,
                   v.rummy_needs_no_discard, v.penalty, v.turn_over, v.max_recycles, v.on_request,
                   v.lowest_deadwood, t if t > 0 else None, v.melds_scoring, v.dig,
                   2 if v.max_jokers else 0, 2 if v.two_decks else 1))


def _meld(mid: int) -> Meld:
    return Meld(MELD_MASK[mid], MELD_KIND[mid], MELD_KEY[mid], MELD_LO[mid], MELD_HI[mid])


@lru_cache(maxsize=4096)
def table_melds(table: int, layoff_masks: tuple[int, int, int], aces: str) -> tuple[int, ...]:
    """Catalogue ids of melds that exactly cover the table cards ``table`` and whose
    lay-off masks (``melds.layoff_masks_after``: set, run low end, run high end) are
    ``layoff_masks`` (RULES.md §3: melds are never split, so the table is some such cover).

    When several covers fit, the first found is returned (they take the same cards
    now); when none fits the lay-off masks (cannot happen for an observation of a
    legal position), a cover with the fewest melds is returned.

    Raises:
        SampleError: no cover of ``table`` by legal melds exists.
    """
    best: list[tuple[int, ...]] = []

    def rec(rest: int, chosen: tuple[int, ...]) -> bool:
        if not rest:
            if layoff_masks_after(chosen, 0, 0, 0, aces) == layoff_masks:
                best[:] = [chosen]
                return True
            if not best:
                best.append(chosen)
            return False
        low = rest & -rest
        for m in melds_in(rest, aces):
            if MELD_MASK[m] & low and rec(rest & ~MELD_MASK[m], chosen + (m,)):
                return True
        return False

    rec(table, ())
    if not best:
        raise SampleError("the table cards cannot be split into melds")
    return best[0]


def _count_mask(once: int, twice: int = 0, jokers: int = 0) -> int:
    """The count mask (``cards.count_add``) of the cards of ``once`` (52-bit: held at least
    once), ``twice`` (held twice) and ``jokers`` jokers."""
    h = once | (twice << LAYER)
    for _ in range(jokers):
        h = count_add(h, JOKER)
    return h


@lru_cache(maxsize=4096)
def variant_table_melds(once: int, twice: int, joker_cards: int, jokers: int, aces: str, max_jokers: int,
                        want: tuple) -> tuple[tuple[int, int], ...]:
    """The melds of a deck-variant table (RULES.md §10.1-10.3) from what an observation
    shows of it: ``(catalogue meld id, joker mask)`` pairs that hold exactly the natural
    cards ``once`` (52-bit, on the table at least once) and ``twice`` (twice), and
    ``jokers`` jokers standing for the cards of ``joker_cards`` (each of them at least
    once; with two decks two jokers may stand for one card in two melds), at most
    ``min(max_jokers, size // 2)`` jokers a meld (§10.2), whose lay-off masks
    (``engine``'s natural and joker masks: ``want`` = ``((set, low, high), (set, low, high))``)
    are the observed ones.

    When several covers fit, the first found is returned; when none fits the lay-off
    masks (a legal position always has one; the search is cut after 20,000 steps), the
    first cover found.

    Raises:
        SampleError: no cover of the table by legal melds exists.
    """
    first: list[tuple[tuple[int, int], ...]] = []
    found: list[tuple[tuple[int, int], ...]] = []
    steps = [0, 0]  # steps taken, covers found
    has_jokers = max_jokers > 0

    def masks_of(chosen: tuple[tuple[int, int], ...]) -> tuple:
        melds = []
        for mid, jm in chosen:
            m = _meld(mid)
            m.jokers = jm
            melds.append(m)
        return engine._variant_layoff_masks(melds, aces, has_jokers)

    dead: set[tuple[int, int, int]] = set()  # what is left there has no cover at all
    (w_set, w_low, w_high), (j_set, j_low, j_high) = want

    def fits(mid: int, jm: int) -> bool:
        # each meld's lay-off masks are part of the table's (their union): a cheap cut
        t = meld_layoff_masks(MELD_KIND[mid], MELD_KEY[mid], MELD_MASK[mid], MELD_LO[mid], MELD_HI[mid], aces)
        if t[0] & ~w_set or t[1] & ~w_low or t[2] & ~w_high:
            return False
        if has_jokers and 2 * (jm.bit_count() + 1) <= MELD_MASK[mid].bit_count() + 1:  # room for a joker
            return not (t[0] & ~j_set or t[1] & ~j_low or t[2] & ~j_high)
        return True

    def rec(nat: int, jfirst: int, extra: int, chosen: tuple[tuple[int, int], ...]) -> bool:
        steps[0] += 1
        nat0 = nat & LAYER_MASK
        todo = nat0 | jfirst
        if not todo:
            if extra:
                return False
            steps[1] += 1
            if masks_of(chosen) == want:
                found.append(chosen)
                return True
            if not first:
                first.append(chosen)
            return False
        if steps[0] > 20000:
            return bool(first)
        key = (nat, jfirst, extra)
        if key in dead:
            return False
        covers = steps[1]
        c = (todo & -todo).bit_length() - 1
        jok = jfirst | (joker_cards if extra else 0)
        # the longest melds first: a table is mostly whole melds, and a shorter one leaves cards behind
        for mid in sorted(melds_in(nat0 | jok, aces), key=lambda i: -MELD_MASK[i].bit_count()):
            mm = MELD_MASK[mid]
            if not mm >> c & 1:
                continue
            size = mm.bit_count()
            cap = min(max_jokers, size // 2)
            forced = mm & ~nat0
            if forced & ~jok or forced.bit_count() > cap:
                continue
            optional = mm & nat0 & jok
            for k in range(0, cap - forced.bit_count() + 1):
                for e in ([0] if k == 0 else engine._subsets(optional, k)):
                    jm = forced | e  # c is covered: a natural card where not in jm (forced holds the rest)
                    second = jm & ~jfirst
                    if second.bit_count() > extra or not fits(mid, jm):
                        continue
                    if rec(count_remove_set(nat, mm & ~jm), jfirst & ~jm, extra - second.bit_count(),
                           chosen + ((mid, jm),)):
                        return True
                    if steps[0] > 20000 and first:
                        return True
        if covers == steps[1]:
            dead.add(key)
        return False

    extra = jokers - joker_cards.bit_count()
    if extra < 0:
        raise SampleError(f"the observation shows {joker_cards.bit_count()} cards jokers stand for on the table "
                          f"but only {jokers} melded jokers")
    rec(once | (twice << LAYER), joker_cards, extra, ())
    if found:
        return found[0]
    if first:
        return first[0]
    raise SampleError("the table cards cannot be split into melds")


# ----------------------------------------------------------------- determinization

class Knowledge:
    """What the observing seat knows, decoded once per decision (card sets are 52-bit masks).

    Attributes:
        view: the ``PlayerView``. rules: ``Rules`` from the observation.
        hand: the seat's hand (a count mask at a deck-variant table).
        discard: the discard pile bottom first (the cards under the upcard in card
            order, then the upcard). melds: the table's melds (``engine.Meld``, with
            their jokers at a deck-variant table; ``determinize`` copies them).
        unseen: list of the card numbers nobody has shown (neither in the seat's hand,
            on the table, in the discard pile nor known to be held by an opponent); at a
            deck-variant table with repeats (two copies, the jokers as ``cards.JOKER``).
        hidden: per seat (0 = the observer, with 0), how many of its cards are unseen.
        hand_sizes: per seat, cards in hand. known: per seat, the cards known to be
            held (count masks at a deck-variant table). discards_by: per seat, what it
            discarded this hand (bit 52: a joker).

    Raises:
        SampleError: the card counts of the observation do not add up (the unseen cards
            are not exactly the opponents' unknown cards plus the stock).
    """

    __slots__ = ("view", "rules", "discard", "melds", "unseen", "hidden", "hand_sizes", "known", "turn",
                 "melded_this_turn", "hand", "discards_by")

    def __init__(self, v: PlayerView) -> None:
        self.view = v
        self.rules = rules_of_view(v)
        n = v.n
        self.turn = int(round(v.turn_frac * self.rules.max_turns))
        if v.variant is not None:
            self._init_variant(v)
            return
        self.hand = v.hand
        self.discards_by = [0] + list(v.opp_discards)
        up = (1 << v.upcard) if v.upcard >= 0 else 0
        # the pile's order is in the observation at a 500 Rum table only (RULES.md §10.4)
        self.discard = list(v.pile) if v.pile is not None else (
            cards_of(v.discard_below) + ([v.upcard] if v.upcard >= 0 else []))
        self.melds = [_meld(m) for m in table_melds(v.table, v.layoff_masks, v.aces)] if v.table else []
        known = [0] + list(v.opp_known)
        seen = v.hand | v.table | v.discard_below | up
        for k in known:
            seen |= k
        self.unseen = cards_of(FULL_DECK & ~seen)
        self.hand_sizes = [v.hand.bit_count()] + list(v.opp_hand_size)
        self.hidden = [0] + [v.opp_hand_size[q] - v.opp_known[q].bit_count() for q in range(n - 1)]
        self.known = known
        if min(self.hidden) < 0 or sum(self.hidden) + v.stock_size != len(self.unseen):
            raise SampleError(
                f"the observation's card counts disagree: {len(self.unseen)} unseen cards, but the opponents "
                f"hide {self.hidden[1:]} and the stock holds {v.stock_size}")
        self._set_melded_this_turn(v)

    def _set_melded_this_turn(self, v: PlayerView) -> None:
        # a seat that melded nothing before this turn melded this turn when it has meld
        # points (500 Rum, §10.4), or, where a draw takes one card, when it holds fewer than
        # dealt + 1; the card it took from the discard pile has left its hand only if it
        # melded it this turn (RULES.md §3)
        d = v.drawn
        gone = d >= 0 and (v.hand_jokers == 0 if d == JOKER else not v.hand >> d & 1)
        if v.melds_scoring:
            now = v.meld_points > 0.5
        else:
            now = not v.dig and self.hand_sizes[0] != v.cards_dealt + 1
        self.melded_this_turn = v.phase == PLAY and ((not v.has_melded and now) or gone)

    def _init_variant(self, v: PlayerView) -> None:
        """What the seat knows at a deck-variant table (RULES.md §10.1-10.3): the hands and
        known cards as count masks, the unseen cards as a list with repeats (a card twice
        with two decks, the joker ``cards.JOKER`` as often as it is unseen), the table's melds
        with their jokers (``variant_table_melds``)."""
        n = v.n
        table = Table.of(self.rules)
        self.hand = _count_mask(v.hand, v.hand_twice, v.hand_jokers)
        self.known = [0] + [_count_mask(v.opp_known[q], v.opp_known_twice[q], v.opp_known_jokers[q])
                            for q in range(n - 1)]
        self.discards_by = [0] + [v.opp_discards[q] | (int(v.opp_discarded_joker[q]) << JOKER) for q in range(n - 1)]
        if v.pile is not None:  # a 500 Rum table shows the pile's order
            self.discard = list(v.pile)
        else:  # the order under the upcard is not observed: jokers at the bottom, then by card number
            self.discard = ([JOKER] * v.discard_jokers + sorted(cards_of(v.discard_below) + cards_of(v.discard_below_twice))
                            + ([v.upcard] if v.upcard >= 0 else []))
        self.hand_sizes = [count_size(self.hand)] + list(v.opp_hand_size)
        natural_table = v.table.bit_count() + v.table_twice.bit_count()
        table_jokers = table.num_cards - sum(self.hand_sizes) - v.stock_size - len(self.discard) - natural_table
        if table_jokers < 0:
            raise SampleError(f"the observation's card counts disagree: the hands, the stock, the discard pile and "
                              f"the table hold {table.num_cards - table_jokers} cards, the deck {table.num_cards}")
        want = (v.layoff_masks, (v.joker_layoff_set, v.joker_layoff_low, v.joker_layoff_high))
        ids = variant_table_melds(v.table, v.table_twice, v.table_jokers, table_jokers, v.aces, v.max_jokers,
                                  want) if v.table or v.table_jokers else ()
        self.melds = []
        for mid, jm in ids:
            m = _meld(mid)
            m.jokers = jm
            self.melds.append(m)
        left = [0] * (JOKER + 1)
        for c in table.deck():
            left[c] += 1
        seen = list(self.discard)
        for h in [self.hand, *self.known[1:]]:
            seen += count_cards(h)
        seen += cards_of(v.table) + cards_of(v.table_twice) + [JOKER] * table_jokers
        for c in seen:
            left[c] -= 1
        if min(left) < 0:
            bad = " ".join(TEXT_OF[c] for c in range(JOKER + 1) if left[c] < 0)
            raise SampleError(f"the observation shows more copies of {bad} than the deck holds")
        self.unseen = [c for c in range(JOKER + 1) for _ in range(left[c])]
        self.hidden = [0] + [v.opp_hand_size[q] - count_size(self.known[q + 1]) for q in range(n - 1)]
        if min(self.hidden) < 0 or sum(self.hidden) + v.stock_size != len(self.unseen):
            raise SampleError(
                f"the observation's card counts disagree: {len(self.unseen)} unseen cards, but the opponents "
                f"hide {self.hidden[1:]} and the stock holds {v.stock_size}")
        self._set_melded_this_turn(v)


def determinize(k: Knowledge, rng: random.Random, infer: int = 1) -> GameState:
    """One full engine position consistent with what the seat knows.

    The unseen cards are shuffled with ``rng`` and dealt to each opponent's unknown
    hand cards (after its known cards) and then to the stock; everything public is
    copied from the observation. Seat 0 is the observer and is to move.

    With ``infer`` > 1, opponents are taken to keep their cards in partial melds and
    to throw loose high cards (as the scripted agents do): ``infer`` deals are drawn
    and the one whose opponents (those that have discarded this hand) hold the fewest
    points outside any partial meld is kept. Every deal is consistent with the
    observation either way; ``infer`` = 1 is the uniform draw.

    Returns:
        a ``GameState`` (52 cards, each once) whose observation for seat 0 has the
        same cards, table, discard pile, hand sizes and stock size.
    """
    v = k.view
    rules = k.rules
    n = v.n
    cards = list(k.unseen)
    aces, ap = rules.aces, rules.ace_points
    pts = _POINTS[ap]
    best_key = None
    hands: list[int] = []
    stock: list[int] = []
    variant = v.variant is not None
    for _ in range(max(1, infer)):
        rng.shuffle(cards)
        hs = [k.hand] + [0] * (n - 1)
        i = 0
        key = 0
        for q in range(1, n):
            h = k.known[q]
            if variant:  # count masks: a card may come twice, the joker more often
                for c in cards[i:i + k.hidden[q]]:
                    h = count_add(h, c)
            else:
                for c in cards[i:i + k.hidden[q]]:
                    h |= 1 << c
            i += k.hidden[q]
            hs[q] = h
            if infer > 1 and v.opp_discards[q - 1]:
                nat = h & FULL_DECK
                loose = nat & ~partial_mask(nat, aces)
                key += sum(pts[c] for c in cards_of(loose))
        if best_key is None or key < best_key:
            best_key, hands, stock = key, hs, cards[i:]
    return GameState(
        rules, rng=random.Random(rng.getrandbits(64)), hands=hands, stock=list(stock), discard=list(k.discard),
        melds=[m.copy() for m in k.melds],
        layoff_masks=v.layoff_masks, current=0, phase=v.phase,
        drawn_from_discard=v.drawn, has_melded=[v.has_melded] + list(v.opp_has_melded),
        melded_this_turn=k.melded_this_turn, recycles=v.recycles, turn=k.turn,
        scores=[int(round(v.score))] + [int(round(x)) for x in v.opp_score],
        dealer=(-1 - k.turn) % n,  # the dealer that has seat 0 move at this turn (RULES.md §2-§3)
        known=list(k.known), discards_by=list(k.discards_by),
        joker_masks=(v.joker_layoff_set, v.joker_layoff_low, v.joker_layoff_high) if variant else (0, 0, 0),
        named=v.jokers_named if variant else 0,
        meld_points=[int(round(v.meld_points))] + [int(round(x)) for x in v.opp_meld_points], bound=v.bound)


# ----------------------------------------------------------------- the rollout policy

def _fast_apply(s: GameState, a: int) -> None:
    """``engine.apply`` of an action the rollout policy knows to be legal (a draw that
    the position allows, or a discard of a held card other than the one taken from
    the discard pile): the engine's own transition, without recomputing the legal
    list (``rollout(check=True)`` verifies that claim against ``legal_actions``)."""
    s._legal = (a,)
    engine.apply(s, a)


def _upcard_useful(hand: int, up: int, s: GameState, aces: str, ap: int) -> bool:
    ub = 1 << up
    _, melded, placed = meld_plan(hand | ub, aces, ap, s.layoff_masks if s.rules.layoffs else None)
    return bool((melded | placed) & ub)


def _checked(s: GameState, a: int, check: bool) -> None:
    if check:
        s._legal = None
        assert a in engine.legal_actions(s), f"rollout chose illegal {engine.action_text(a, s.table.kind)}"
        engine.apply(s, a)
    else:
        _fast_apply(s, a)


def rollout_turn(s: GameState, check: bool = False, hold: bool = False) -> None:
    """Play one decision sequence of the seat to move with the rollout policy: the draw
    (the upcard when it joins a meld of the best partition or can be laid off, RULES.md
    §3), or the whole play phase (meld the best partition, lay off every card the table
    takes, discard the highest-value card outside any partial meld; going out when the
    hand empties, §5).

    With ``hold`` (``policy="holding"``) a seat that has put nothing on the table this
    hand (in an earlier turn or this one) keeps its melds and lay-offs in hand until it can go out this turn (what stays
    after them is at most one card it may discard, or none where that is allowed; RULES.md
    §5: going rummy scores ``rummy_multiplier`` times), as the holding heuristic does, and
    meanwhile discards the highest-value card outside its melds, lay-offs and partial
    melds; at a ``scoring="melds"`` table (500 Rum) it melds as the greedy policy does.

    With ``check`` every action is verified against ``engine.legal_actions`` first."""
    rules = s.rules
    aces, ap = rules.aces, rules.ace_points
    p = s.current
    if s.phase == DRAW:
        stock_ok = bool(s.stock) or rules.dry_trigger == "on_request"
        if s.discard and (not stock_ok or _upcard_useful(s.hands[p], s.discard[-1], s, aces, ap)):
            _checked(s, DRAW_DISCARD, check)
        else:
            _checked(s, DRAW_STOCK, check)
        return
    hand = s.hands[p]
    if hold and not (s.has_melded[p] or s.melded_this_turn) and not s.table.melds_scoring:
        _, melded, placed = meld_plan(hand, aces, ap, s.layoff_masks if rules.layoffs else None)
        f = s.drawn_from_discard
        rest = hand & ~(melded | placed)
        if not goes_out(rest, f, rules.must_discard_to_go_out):
            cand = rest & ~(1 << f) if f >= 0 else rest
            # hold: discard a deadwood card, melds and lay-offs stay in hand (with none to
            # discard, only the card just taken left over, it plays greedy's turn below)
            if cand:
                cand = cand & ~partial_mask(hand, aces) or cand
                _checked(s, DISCARD_BASE + _highest(cand, _POINTS[ap]), check)
                return
    _, ids = best_partition(hand, aces, ap)
    for m in ids:  # meld early (the checked engine path: melds are few)
        try:
            engine.apply(s, MELD_BASE + m)
        except IllegalActionError:
            break
        if s.hand_over:
            return
    if rules.layoffs:
        while True:
            hand = s.hands[p]
            takes_set, takes_low, takes_high = s.layoff_masks
            x = hand & (takes_set | takes_low | takes_high)
            if not x:
                break
            c = (x & -x).bit_length() - 1
            end = 0 if takes_set >> c & 1 else 1 if takes_low >> c & 1 else 2
            try:
                engine.apply(s, LAYOFF_BASE + 3 * c + end)
            except IllegalActionError:
                break
            if s.hand_over:
                return
    hand = s.hands[p]
    f = s.drawn_from_discard
    cand = hand & ~(1 << f) if f >= 0 else hand
    if not cand:  # only the card taken from the discard pile is left: the engine knows its way out
        s._legal = None
        engine.apply(s, engine.legal_actions(s)[0])
        return
    cand = cand & ~partial_mask(hand, aces) or cand
    _checked(s, DISCARD_BASE + _highest(cand, _POINTS[ap]), check)


def _highest(cand: int, pts: Any) -> int:
    """The card of ``cand`` (a non-empty 52-bit mask) with the most points, the higher rank on a tie."""
    best, bk = -1, (-1, -1)
    while cand:
        low = cand & -cand
        c = low.bit_length() - 1
        cand ^= low
        key = (pts[c], c % 13)
        if key >= bk:
            best, bk = c, key
    return best


class _SeatView:
    """The attributes of ``PlayerView`` that ``HeuristicAgent`` reads, filled from a
    sampled position for its seat to move (the seat's own information only: its hand,
    the public table and discard pile, the other seats' known cards and hand sizes)."""

    __slots__ = ("hand", "upcard", "discard_below", "drawn", "table", "layoff_masks", "layoff_set", "layoff_low", "layoff_high",
                 "layoff_any",
                 "opp_known_all", "opp_hand_size", "has_melded", "stock_size", "aces", "ace_points", "layoffs",
                 "must_discard", "rummy_multiplier", "rummy_needs_no_discard", "legal", "discardable",
                 "meld_actions", "layoff_actions", "melds_scoring", "dig_actions", "bound", "pile")

    two_decks = False  # the tables without deck variants (a deck-variant table plays variant_turn)

    def __init__(self, s: GameState) -> None:
        r = s.rules
        p = s.current
        self.hand = s.hands[p]
        self.upcard = s.discard[-1] if s.discard else -1
        below = 0
        for c in s.discard:
            below |= 1 << c
        self.discard_below = below & ~(1 << self.upcard) if self.upcard >= 0 else below
        self.drawn = s.drawn_from_discard
        t = 0
        for m in s.melds:
            t |= m.mask
        self.table = t
        self.layoff_masks = s.layoff_masks
        self.layoff_set, self.layoff_low, self.layoff_high = s.layoff_masks
        self.layoff_any = self.layoff_set | self.layoff_low | self.layoff_high
        kn = 0
        for q, k in enumerate(s.known):
            if q != p:
                kn |= k
        self.opp_known_all = kn
        self.opp_hand_size = [h.bit_count() for q, h in enumerate(s.hands) if q != p]
        self.has_melded = s.has_melded[p]
        self.stock_size = len(s.stock)
        self.aces, self.ace_points, self.layoffs = r.aces, r.ace_points, r.layoffs
        self.must_discard, self.rummy_multiplier = r.must_discard_to_go_out, r.rummy_multiplier
        self.rummy_needs_no_discard = r.rummy_needs_no_discard
        self.melds_scoring = s.table.melds_scoring
        self.dig_actions = []  # rollouts draw the top card only
        self.bound = s.bound
        self.pile = s.discard
        if s.phase == PLAY:
            legal = engine.legal_actions(s)
            self.legal = legal
            d = self.hand & ~(1 << self.drawn) if self.drawn >= 0 else self.hand
            self.discardable = d
            self.meld_actions = [a for a in legal if MELD_BASE <= a < LAYOFF_BASE]
            self.layoff_actions = [a for a in legal if a >= LAYOFF_BASE]


_ROLLOUT_HEUR = HeuristicAgent(0)


def heuristic_turn(s: GameState, check: bool = False) -> None:
    """One decision of the seat to move by ``HeuristicAgent``'s rules, read from the
    sampled position (its seat's information only; no observation is encoded)."""
    v = _SeatView(s)
    if s.phase == DRAW:
        stock_ok = bool(s.stock) or s.rules.dry_trigger == "on_request"
        a = DRAW_DISCARD if s.discard and (not stock_ok or _ROLLOUT_HEUR._take_upcard(v)) else DRAW_STOCK
        _checked(s, a, check)
        return
    a = _ROLLOUT_HEUR._play(v)
    if check:
        assert a in engine.legal_actions(s)
    engine.apply(s, a) if a >= MELD_BASE else _fast_apply(s, a)


_VARIANT_ROLLOUT = {"greedy": GreedyAgent(0), "heuristic": HeuristicAgent(0), "holding": HeuristicAgent(0, **BASES["holding"])}


@lru_cache(maxsize=64)
def _encoder(table: Table) -> Encoder:
    return Encoder.of(table)


class _VariantSeatView:
    """The attributes of ``PlayerView`` that ``GreedyAgent``'s deck-variant rules
    (``_Scripted._act_variant``, ``GreedyAgent._take_upcard``) read, filled from a sampled
    position for its seat to move: its own hand, the public table and the seats' hand
    sizes (what its observation says, without encoding and decoding one)."""

    def __init__(self, s: GameState, legal: list[int]) -> None:
        r = s.rules
        p = s.current
        h = s.hands[p]
        lay = s.variant
        self.variant = lay
        self.hand = h & FULL_DECK
        self.hand_twice = (h >> LAYER) & FULL_DECK
        jokers = 0
        while h >> (JOKER + LAYER * jokers) & 1:
            jokers += 1
        self.hand_jokers = jokers
        self.upcard = s.discard[-1] if s.discard else -1
        self.drawn = s.drawn_from_discard
        self.aces, self.ace_points, self.layoffs = r.aces, r.ace_points, r.layoffs
        self.layoff_set, self.layoff_low, self.layoff_high = s.layoff_masks
        self.layoff_masks = s.layoff_masks
        self.layoff_any = self.layoff_set | self.layoff_low | self.layoff_high
        self.joker_layoff_set, self.joker_layoff_low, self.joker_layoff_high = s.joker_masks
        self.jokers_named = s.named
        self.stock_size = len(s.stock)
        self.opp_hand_size = [count_size(x) for q, x in enumerate(s.hands) if q != p]
        self.legal = legal
        PlayerView._classify_variant(self, legal, lay)  # type: ignore[arg-type]  # the same lists as a view's


def variant_turn(s: GameState, policy: str = "greedy") -> None:
    """One decision of the seat to move at a deck-variant table (RULES.md §10.1-10.3), by
    the deck-variant rules of the scripted agent ``policy`` (``GreedyAgent``, ``HeuristicAgent``
    or, for ``"holding"``, the holding heuristic: ``_Scripted._act_variant``), a ``joker as <card>`` step being one
    decision. It reads only that seat's information: ``greedy`` a ``_VariantSeatView`` of
    the sampled position, ``heuristic`` (which reads more of it) the seat's own encoded
    observation (``Encoder.encode``)."""
    legal = engine.legal_actions(s)
    if len(legal) == 1:
        engine.apply(s, legal[0])
        return
    if policy == "greedy":
        v: Any = _VariantSeatView(s, legal)
    else:
        t = s.table
        mask = np.zeros(t.num_actions, dtype=np.int8)
        mask[legal] = 1
        v = PlayerView(_encoder(t).encode(s, s.current), mask)
    engine.apply(s, _VARIANT_ROLLOUT[policy]._act_variant(v))


def _variant_leaf_value(s: GameState, seat: int) -> float:
    """``leaf_value`` at a deck-variant table: a hand's deadwood is its points (a joker
    15, RULES.md §10.2) minus those of the distinct natural cards its meld plan melds or
    lays off (second copies and jokers count as deadwood: an estimate)."""
    rules = s.rules
    aces, ap = rules.aces, rules.ace_points
    lay = s.layoff_masks if rules.layoffs else None
    used = []
    for h in s.hands:
        _, melded, placed = meld_plan(h & FULL_DECK, aces, ap, lay)
        used.append(mask_points(melded | placed, ap))
    if s.table.melds_scoring:
        own = [s.meld_points[q] + 2 * used[q] - count_points(h, ap) for q, h in enumerate(s.hands)]
    else:
        own = [used[q] - count_points(h, ap) for q, h in enumerate(s.hands)]  # minus the deadwood
    n = len(own)
    return sum(own[seat] - own[q] for q in range(n) if q != seat) / (n - 1)


def leaf_value(s: GameState, seat: int) -> float:
    """A truncated rollout's value for ``seat``: the mean over the other seats of
    (their deadwood - the seat's), deadwood after the best meld partition (RULES.md §1, §5);
    under ``scoring="melds"`` (§10.4) of (the seat's points so far - theirs), a hand's
    points being what it melded plus what its best partition would meld minus the rest
    (at a deck-variant table, ``_variant_leaf_value``)."""
    if s.variant is not None:
        return _variant_leaf_value(s, seat)
    rules = s.rules
    aces, ap = rules.aces, rules.ace_points
    if s.table.melds_scoring:  # 500 Rum (§10.4): melded so far + meldable - the rest of the hand
        own = []
        for q, h in enumerate(s.hands):
            melded = best_partition(h, aces, ap)[0]
            own.append(s.meld_points[q] + 2 * melded - mask_points(h, ap))
        n = len(own)
        return sum(own[seat] - own[q] for q in range(n) if q != seat) / (n - 1)
    dw = [mask_points(h, ap) - best_partition(h, aces, ap)[0] for h in s.hands]
    n = len(dw)
    return sum(dw[q] - dw[seat] for q in range(n) if q != seat) / (n - 1)


def rollout(s: GameState, seat: int = 0, depth: int = 0, check: bool = False, policy: str = "greedy") -> float:
    """Play ``s`` on with the rollout policy (every seat) and return ``seat``'s payoff.

    ``depth`` > 0 stops after that many more completed turns and returns
    ``leaf_value``; 0 plays to the end of the hand (RULES.md §5-§6). At a deck-variant
    table every seat plays ``variant_turn`` (``check`` is moot: each action goes through
    the engine's checked ``apply``). ``s`` is changed in place."""
    stop = s.turn + depth if depth else None
    if s.variant is not None:
        while not s.hand_over:
            if stop is not None and s.turn >= stop and s.phase == DRAW:
                return leaf_value(s, seat)
            variant_turn(s, policy)
        return float(s.payoffs[seat])
    turn = heuristic_turn if policy == "heuristic" else partial(rollout_turn, hold=policy == "holding")
    while not s.hand_over:
        if stop is not None and s.turn >= stop and s.phase == DRAW:
            return leaf_value(s, seat)
        turn(s, check)
    return float(s.payoffs[seat])


def guide_rollouts(states: list[GameState], logits_batch: Any, seat: int = 0) -> list[float]:
    """Play every position of ``states`` (changed in place) to the end of its hand with a
    trained policy's most probable legal move at every seat, and return ``seat``'s payoff in
    each (points, RULES.md §5-§6; §10.4 at 500 Rum). The positions step in lockstep: each step
    encodes the seat to move of every unfinished one (``Encoder.encode_many``) and asks
    ``logits_batch`` (float32 ``[B, obs_dim]`` -> ``[B, >= num_actions]``, e.g.
    ``PPOAgent.logits_batch``) once for all of them; each move goes through the engine's
    checked ``apply``. The positions share one table (one encoder)."""
    if not states:
        return []
    enc = _encoder(states[0].table)
    n_act = states[0].num_actions
    obs = np.zeros((len(states), enc.size), np.float32)
    masks = np.zeros((len(states), n_act), bool)
    active = [s for s in states if not s.hand_over]
    while active:
        k = len(active)
        enc.encode_many(active, [s.current for s in active], obs)
        action_masks_into([engine.legal_actions(s) for s in active], masks[:k])
        lg = mask_logits(np.asarray(logits_batch(obs[:k]), dtype=np.float32)[:, :n_act], masks[:k])
        for s, a in zip(active, lg.argmax(1).tolist()):
            engine.apply(s, a)
        active = [s for s in active if not s.hand_over]
    return [float(s.payoffs[seat]) for s in states]


# ----------------------------------------------------------------- the agent

class SearchAgent:
    """Determinized Monte Carlo search over the draw and the discard (see the module).

    Args:
        seed: seeds the sampling (the agent is deterministic given it).
        samples: determinizations per candidate at full budget (1 to ``MAX_SAMPLES``, 4096).
        depth: turns each rollout plays before a deadwood evaluation; 0 plays the hand out.
        halving: prune candidates by successive halving (1) or give every candidate
            every sample (0).
        margin: standard errors (>= 0) by which a candidate's paired mean advantage
            must beat the heuristic's choice to replace it.
        policy: rollout policy, ``"greedy"`` (bit-mask, fast), ``"holding"`` (greedy, but a
            seat that has put nothing down holds its melds until it can go out),
            ``"heuristic"``, or ``"guide"``: the guide's most probable legal move at every seat
            (``guide_rollouts``; needs a guide and ``depth`` 0; every candidate gets every
            sample, no successive halving).
        infer: draws per determinization (1 to ``MAX_INFER``, 256; see ``determinize``).
        base: the agent whose choices the search keeps unless beaten, and that plays
            the melds and lay-offs: ``"heuristic"``, ``"holding"`` or ``"cutting"`` (``BASES``).
        guide: a trained policy that guides the search (policy-guided search,
            docs/search.md): a ``make_agent`` name of a policy with action logits
            (``pretrained``, ``pretrained:PRESET``, ``ppo:PATH``); "" (default): none.
            With a guide, the guide's most probable legal action is the prior (it replaces
            ``base``'s), the guide plays the melds, lay-offs and digs, and the discards
            searched are its ``top`` most probable legal ones plus the base's choice.
        top: discards searched with a guide (>= 1, default 3).
        timing: 1 searches putting the melds down now (``put_down``) beside the discards
            when the base (or the guide) would hold them; 0 (default) does not.
        lead: with a guide, whose move is the prior and plays what is not searched (the
            melds, lay-offs, digs): ``"guide"`` (default) or ``"base"``, the base agent's,
            the guide then only naming the discards searched beside the base's. ``"base"``
            needs a guide.
        sure: with a guide, a probability in (0, 1]: a decision to be searched (the draw, the
            discard) at which the guide's most probable legal move (its softmax over the
            legal actions) is a candidate and has at least this probability is that move,
            played without a search (with ``lead="base"`` too, over the base's); ``None``
            (default): every such decision is searched. Needs a guide.

    ``act(observation, action_mask) -> int`` reads only those two arrays.

    Raises:
        ValueError: a budget option out of range (the message names it and the allowed values).
    """

    table_kinds = TABLE_KINDS
    """The kinds of table it plays (``actions.table_kind``; ``agents.table_misfit`` reads it): every one."""

    name = "search"

    def __init__(self, seed: int | None = None, samples: int = DEFAULT_SAMPLES, depth: int = DEFAULT_DEPTH,
                 halving: int = 1, margin: float = DEFAULT_MARGIN, policy: str = DEFAULT_POLICY,
                 infer: int = 1, base: str = DEFAULT_BASE, guide: str = "", top: int = DEFAULT_TOP,
                 timing: int = 0, lead: str = "guide", sure: float | None = None) -> None:
        for nm, val, lo, hi in (("samples", samples, 1, MAX_SAMPLES), ("depth", depth, 0, None),
                                ("halving", halving, 0, 1), ("infer", infer, 1, MAX_INFER), ("top", top, 1, None),
                                ("timing", timing, 0, 1)):
            if isinstance(val, bool) or not isinstance(val, numbers.Integral) or val < lo \
                    or (hi is not None and val > hi):
                allowed = ("0 or 1" if hi == 1 else f"an int from {lo} to {hi}" if hi is not None
                           else f"an int >= {lo}")
                raise ValueError(f"search option {nm} must be {allowed}, got {val!r}")
        samples, depth, halving, infer, top, timing = map(int, (samples, depth, halving, infer, top, timing))
        if isinstance(margin, bool) or not isinstance(margin, numbers.Real) or not 0 <= margin < float("inf"):
            raise ValueError(f"search option margin must be a finite number >= 0, got {margin!r}")
        for nm, val, allowed in (("policy", policy, SEARCH_POLICIES), ("base", base, tuple(BASES)), ("lead", lead, LEADS)):
            if not isinstance(val, str) or val not in allowed:
                raise ValueError(f"search option {nm} must be one of {', '.join(allowed)}, got {val!r}")
        if not isinstance(guide, str):
            raise ValueError(f"search option guide must be a policy name (pretrained, pretrained:PRESET, ppo:PATH), "
                             f"got {guide!r}")
        if lead == "base" and not guide.strip():
            raise ValueError("search option lead=base names the base agent's move as the prior of a guided search: "
                             "it needs guide=POLICY (e.g. 'search:guide=pretrained,lead=base'); without a guide the "
                             "base's move is the prior already")
        if sure is not None and (isinstance(sure, bool) or not isinstance(sure, numbers.Real)
                                 or not 0 < sure <= 1):
            raise ValueError(f"search option sure must be a probability in (0, 1], got {sure!r}")
        if policy == "guide" and not guide.strip():
            raise ValueError("search option policy=guide plays the rollouts with the guide's moves: it needs "
                             "guide=POLICY (e.g. 'search:guide=pretrained,policy=guide')")
        if policy == "guide" and depth:
            raise ValueError(f"search option policy=guide plays every rollout to the end of the hand: depth must be 0 "
                             f"with it, got {depth}")
        if sure is not None and not guide.strip():
            raise ValueError("search option sure is the guide's probability above which its move is played without "
                             "a search: it needs guide=POLICY (e.g. 'search:guide=pretrained,sure=0.99')")
        self.sure = None if sure is None else float(sure)
        self.lead = lead
        self.guide = guide.strip()
        self._guide = _guide_policy(self.guide) if self.guide else None
        if self._guide is not None:  # the guide's table is the search's: table_misfit reads these
            self.obs_shape = getattr(self._guide, "obs_shape", None)
            self.n_actions = getattr(self._guide, "n_actions", None)
        self.top = top
        self.timing = timing
        self.base = base
        self.samples, self.depth, self.halving, self.margin = samples, depth, halving, float(margin)
        self.policy = policy
        self.infer = infer
        self._heur = HeuristicAgent(seed, **BASES[base])
        self._rng = random.Random(seed)
        self.last_values: dict[int, float] = {}

    def seed(self, seed: int | None = None) -> None:
        """Reseed the sampling (``None``: fresh entropy)."""
        self._rng = random.Random(seed)
        self._heur.seed(seed)

    # -- the decision
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The chosen legal action id.

        Args:
            observation: float32 ``(obs_size(n, kind),)``; action_mask: int8 ``(N,)``
                (``Table.num_actions``: 579 at a standard table, 631 at 500 Rum, the
                kind's count at a deck-variant table), 1 = legal.

        Raises:
            ValueError: bad shapes, or no action is legal (the seat is not to move).
            SampleError: an observation whose card counts no legal position gives.
        """
        v = PlayerView(observation, action_mask)
        legal = v.legal
        self.last_values = {}
        if not legal:
            raise ValueError("no legal action in the mask: this seat is not to move")
        if len(legal) == 1:
            return legal[0]
        if self._guide is not None:
            return self._guided(v, observation, action_mask)
        if v.variant is not None:
            return self._act_variant(v)
        if v.phase == DRAW and v.dig_actions:  # 500 Rum: a dig the heuristic wants is played (§10.4)
            dig = self._heur._dig(v)
            if dig is not None:
                return dig
        if v.bound >= 0:  # a dug card to play: the heuristic's way
            return self._heur.act(observation, action_mask)
        if v.phase == DRAW:
            cands = [DRAW_STOCK, DRAW_DISCARD]
            prior = DRAW_DISCARD if self._heur._take_upcard(v) else DRAW_STOCK
        else:
            prior = self._heur._play(v)
            if prior >= MELD_BASE:  # melds and lay-offs follow the heuristic
                return prior
            cands = self.discard_candidates(v)
            if prior not in cands:
                cands.append(prior)
            self._add_put_down(v, cands)
            if len(cands) == 1:
                return cands[0]
        return self.search(v, cands, prior)

    def put_down(self, v: PlayerView) -> int | None:
        """With ``timing=1``, the move that starts putting the hand's melds down now when
        the base would hold them (RULES.md §3, §5: melds on the table stop a rummy and let
        the others lay off, but take their points out of the hand): the first meld of the
        best partition, else a lay-off of a card the melds leave, else ``None`` (nothing
        to put down, or a table whose melds score, §10.4, or a deck-variant table).

        Returns: an action id (``MELD_BASE + meld id`` or ``LAYOFF_BASE + 3 * card + end``,
        legal in ``v``'s mask) or ``None``."""
        if v.melds_scoring or v.variant is not None:
            return None
        ids, melded, placed = meld_plan(v.hand, v.aces, v.ace_points, v.layoff_masks if v.layoffs else None)
        for m in ids:
            if MELD_BASE + m in v.meld_actions:
                return MELD_BASE + m
        for a in v.layoff_actions:
            if placed >> ((a - LAYOFF_BASE) // 3) & 1:
                return a
        return None

    def _add_put_down(self, v: PlayerView, cands: list[int]) -> None:
        """With ``timing=1``, append ``put_down(v)`` to the candidates when there is one."""
        put = self.put_down(v) if self.timing else None
        if put is not None:
            cands.append(put)

    def _base_move(self, v: PlayerView) -> int:
        """The base agent's action in the play phase (its deck-variant rules at such a table)."""
        return self._heur._act_variant(v) if v.variant is not None else self._heur._play(v)

    def _act_variant(self, v: PlayerView) -> int:
        """A decision at a deck-variant table (RULES.md §10.1-10.3): the base agent's
        deck-variant move is the prior; the draw (stock or a natural upcard) and a natural
        discard are searched, everything else (a joker upcard, the ``joker as <card>`` steps,
        melds, lay-offs, a joker's discard, a dug card to play) is the base agent's."""
        prior = self._heur._act_variant(v)
        if v.bound >= 0 or v.jokers_named:
            return prior
        if v.phase == DRAW:
            if prior not in (DRAW_STOCK, DRAW_DISCARD) or not (v.can_draw_stock and v.can_draw_discard) \
                    or v.upcard == JOKER:
                return prior
            return self.search(v, [DRAW_STOCK, DRAW_DISCARD], prior)
        if not DISCARD_BASE <= prior < MELD_BASE:
            return prior
        cands = self.discard_candidates(v)
        if prior not in cands:
            cands.append(prior)
        return cands[0] if len(cands) == 1 else self.search(v, cands, prior)

    def _guided(self, v: PlayerView, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """A decision of the policy-guided search: the guide's most probable legal action is
        the prior (with ``lead="base"``, the base agent's move); a draw from the stock or the
        upcard and a discard are searched (both draws; the guide's ``top`` discards and the
        base's), anything else (a meld, a lay-off, a dig, a dug card to play) is the prior's.
        With ``sure``, a decision to be searched whose candidates hold the guide's move, the
        guide at least that sure of it, is that move, unsearched."""
        legal = v.legal
        shape = getattr(self._guide, "obs_shape", None)
        if shape is not None and tuple(np.shape(observation)) != tuple(shape):
            from rummy_env.observation import describe_table

            raise ValueError(f"the search's guide {self.guide!r} was trained for "
                             f"{describe_table(shape[0], getattr(self._guide, 'n_actions', None))}, this observation "
                             f"is from {describe_table(len(observation), len(action_mask))}: give a guide trained "
                             f"for this table (pretrained:PRESET, ppo:PATH)")
        lg = np.asarray(self._guide.logits(observation), dtype=np.float64)[: len(action_mask)]
        order = sorted(legal, key=lambda a: (-lg[a], a))
        prior = order[0] if self.lead == "guide" else self._heur.act(observation, action_mask)

        def searched(cands: list[int]) -> int:  # a sure guide's move among the candidates goes unsearched
            if len(cands) == 1:
                return cands[0]
            if self.sure is not None and order[0] in cands and guide_probability(lg, legal) >= self.sure:
                return order[0]
            return self.search(v, cands, prior)

        if v.phase == DRAW:
            if prior not in (DRAW_STOCK, DRAW_DISCARD) or v.bound >= 0:
                return prior
            return searched([a for a in (DRAW_STOCK, DRAW_DISCARD) if a in legal])
        if v.bound >= 0 or not DISCARD_BASE <= prior < MELD_BASE:
            return prior
        cands = [a for a in order if DISCARD_BASE <= a < MELD_BASE][: self.top]
        base = prior if self.lead == "base" else self._base_move(v)  # led by the base: its move is the prior
        if DISCARD_BASE <= base < MELD_BASE and base not in cands:
            cands.append(base)
        self._add_put_down(v, cands)
        return searched(cands)

    def discard_candidates(self, v: PlayerView) -> list[int]:
        """Discard ids worth searching: the discardable cards that the best meld partition
        and the lay-offs leave as deadwood (all discardable cards when none is). At a
        deck-variant table natural cards only (a joker's discard is the base agent's call),
        a second copy of a melded card counting as deadwood."""
        _, melded, placed = meld_plan(v.hand, v.aces, v.ace_points, v.layoff_masks if v.layoffs else None)
        dead = v.hand & ~(melded | placed)
        natural = v.discardable & FULL_DECK
        if v.variant is not None:
            dead |= v.hand_twice
        cand = natural & dead or natural
        return [DISCARD_BASE + c for c in cards_of(cand)]

    def search(self, v: PlayerView, cands: list[int], prior: int | None = None) -> int:
        """Mean payoff of each candidate over shared determinizations; the best one.

        With ``policy="guide"`` every candidate is played out on every sample by the guide
        (``guide_rollouts``, all of them in lockstep). Otherwise, successive halving
        (``halving=1``): rounds of samples, the worse half of the
        candidates dropped after each (never ``prior``), so the ``samples`` budget goes
        to the close ones. With a ``prior`` (the heuristic's choice), another candidate
        replaces it only when its mean advantage over the prior on the same samples
        exceeds ``margin`` standard errors of that paired difference."""
        k = Knowledge(v)
        rng = random.Random(self._rng.getrandbits(64))
        if self.policy == "guide":  # every candidate on every sample, all rollouts in lockstep
            played = [p for _ in range(self.samples) for p in self._played(k, rng, cands)]
            gvals: dict[int, list[float]] = {a: [] for a in cands}
            for (a, _), r in zip(played, guide_rollouts([st for _, st in played], self._guide.logits_batch)):
                gvals[a].append(r)
            return self.choose(gvals, list(cands), prior)
        total = self.samples
        if self.halving and len(cands) > 2:
            rounds = max(1, (len(cands) - 1).bit_length())
            per_round = max(1, total // rounds)
        else:
            rounds, per_round = 1, total
        vals: dict[int, list[float]] = {a: [] for a in cands}
        alive = list(cands)
        done = 0
        value = self.value
        for r in range(rounds):
            m = per_round if r < rounds - 1 else max(1, total - done)
            for _ in range(m):
                for a, st in self._played(k, rng, alive):
                    vals[a].append(value(st))
            done += m
            if r < rounds - 1 and len(alive) > 2:
                alive.sort(key=lambda a: (a != prior, -sum(vals[a]) / len(vals[a]), a))
                alive = alive[: max(2, (len(alive) + 1) // 2)]
        return self.choose(vals, alive, prior)

    def _played(self, k: "Knowledge", rng: random.Random, cands: list[int]) -> list[tuple[int, GameState]]:
        """One determinization of ``k`` (``determinize`` with ``rng``) and, per candidate of
        ``cands``, a copy of it with that candidate played (RULES.md §3-§4, the engine's checked
        ``apply``): ``(action, position)`` pairs in ``cands``' order, common to every candidate."""
        base = determinize(k, rng, self.infer)
        engine.legal_actions(base)  # once per sample: the copies share the cached list
        out = []
        for a in cands:
            st = base.copy()
            engine.apply(st, a)
            out.append((a, st))
        return out

    def value(self, s: GameState) -> float:
        """One sample's value of a candidate: ``s`` (the sample with the candidate played,
        changed in place) played on by ``rollout`` with this search's ``depth`` and rollout
        ``policy``; the searching seat's (seat 0's) hand points (RULES.md §5-§6). A subclass
        may value the finished sample otherwise (``experiments/issue25_match_value.py``)."""
        return rollout(s, 0, self.depth, policy=self.policy)

    def choose(self, vals: dict[int, list[float]], alive: list[int], prior: int | None) -> int:
        """The search's choice from its samples: ``vals`` maps each candidate action id
        to its payoffs (points, one per sample, the samples shared by every candidate
        and in the same order), ``alive`` the candidates still in the running. Sets
        ``last_values`` (each candidate's mean payoff) and returns the best of ``alive``
        (ties to the lower id), except that with a ``prior`` among the candidates the
        best replaces it only when its mean paired advantage over the prior exceeds
        ``margin`` standard errors of that difference (a single shared sample keeps the
        prior)."""
        self.last_values = {a: sum(x) / len(x) for a, x in vals.items()}
        best = max(alive, key=lambda a: (self.last_values[a], -a))
        if prior is None or best == prior or prior not in vals:  # a prior that was not a candidate
            return best
        d = np.asarray(vals[best]) - np.asarray(vals[prior])
        if len(d) < 2:
            return prior
        se = float(d.std(ddof=1)) / len(d) ** 0.5
        return best if d.mean() > self.margin * se else prior


def guide_probability(logits: np.ndarray, legal: list[int]) -> float:
    """The probability of the most probable legal action under a policy's ``logits``
    (float ``(N,)``): its softmax over the ``legal`` ids (a non-empty list) alone, computed
    stably (the highest legal logit subtracted first). In (0, 1]. The guided search's
    ``sure`` compares it (docs/search.md).

    Raises:
        ValueError: ``legal`` is empty (numpy's max of no values)."""
    x = np.asarray(logits, dtype=np.float64)[legal]
    return float(1.0 / np.exp(x - x.max()).sum())


@lru_cache(maxsize=8)
def _guide_policy(spec: str) -> Any:
    """The guide of ``SearchAgent(guide=spec)``, loaded once per spec (a greedy policy is
    stateless: agents share it).

    Raises:
        ValueError: the policy does not load (``make_agent``'s message), or it has no
            action logits (a scripted agent, the search, an outside agent)."""
    from .shipped import load_policy

    low = spec.lower()
    if not (low == "pretrained" or low.startswith(("pretrained:", "ppo:"))):
        raise ValueError(f"search option guide must be a trained policy (pretrained, pretrained:PRESET, ppo:PATH), "
                         f"got {spec!r}")
    try:
        agent = load_policy(spec)
    except ValueError as e:
        raise ValueError(f"search option guide {spec!r}: {e}") from None
    if not callable(getattr(agent, "logits", None)):
        raise ValueError(f"search option guide {spec!r}: the agent has no action logits (logits(observation)); "
                         f"guides are trained policies: pretrained, pretrained:PRESET, ppo:PATH")
    return agent


def parse_options(text: str) -> dict[str, Any]:
    """Options of ``make_agent("search:...")`` as a dict: ``"N"`` (samples) or
    ``"samples=N,margin=M,depth=D,halving=H,policy=P,infer=I,base=B,guide=G,top=T,timing=0|1,lead=L,sure=P"`` (any
    subset; the ranges and meanings are ``SearchAgent``'s; a ``guide`` path cannot hold a comma).

    Raises:
        ValueError: an unknown option or a value that is not an int in range (the
            message names the option and the allowed values).
    """
    if not isinstance(text, str):
        raise ValueError(f"search options must be a string such as 'samples=32,margin=2', got {text!r}")
    out: dict[str, Any] = {}
    text = text.strip()
    if not text:
        return out
    parts = [p.strip() for p in text.split(",")]
    for i, p in enumerate(parts):
        if not p:
            raise ValueError(f"search options {text!r} have an empty item (a comma at an end, or two in a row); "
                             f"give NAME=VALUE items separated by single commas (e.g. 'samples=32,margin=2')")
        if "=" in p:
            key, _, val = p.partition("=")
            key = key.strip().lower()
        elif i == 0 and p.lower() in OPTION_NAMES:
            raise ValueError(f"search option {p!r} needs a value: {p.lower()}=VALUE (e.g. 'search:samples=32,base=cutting')")
        elif i == 0:
            key, val = "samples", p
        else:
            raise ValueError(f"search option {p!r} needs a name: options are {', '.join(OPTION_NAMES)} "
                             f"(e.g. 'search:samples=32,depth=0')")
        if key not in OPTION_NAMES:
            raise ValueError(f"unknown search option {key!r}; options: {', '.join(OPTION_NAMES)} "
                             f"(samples 1 to {MAX_SAMPLES}, margin >= 0, depth >= 0, halving 0 or 1, policy {' or '.join(SEARCH_POLICIES)}, infer 1 to {MAX_INFER}, "
                             f"base {' or '.join(BASES)}, guide a trained policy, top >= 1, timing 0 or 1, "
                             f"lead {' or '.join(LEADS)}, sure a probability in (0, 1])")
        if key in out:
            raise ValueError(f"search option {key!r} is given twice")
        if key in ("policy", "base", "lead"):
            out[key] = val.strip().lower()
            continue
        if key == "guide":  # a policy name (a path keeps its case)
            if not val.strip():
                raise ValueError("search option guide needs a trained policy: pretrained, pretrained:PRESET or "
                                 "ppo:PATH (e.g. 'search:guide=pretrained')")
            out[key] = val.strip()
            continue
        val = val.strip()
        try:  # plain ASCII numbers only: int() and float() would also take 1_0, +3 or other scripts' digits
            if key in ("margin", "sure"):
                if not re.fullmatch(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|-?(inf|infinity|nan)", val, re.I | re.A):
                    raise ValueError
                iv: int | float = float(val)
            else:
                if not re.fullmatch(r"-?\d+", val, re.A):
                    raise ValueError
                iv = int(val)
        except ValueError:
            kind = "a number" if key == "margin" else "a probability in (0, 1]" if key == "sure" else "0 or 1" if key in ("halving", "timing") else "an int"
            raise ValueError(f"search option {key} must be {kind}, got {val.strip()!r}") from None
        out[key] = iv
    if "lead" in out and not out.get("guide"):
        raise ValueError("search option lead names whose move a guided search keeps: it needs guide=POLICY "
                         "(e.g. 'search:guide=pretrained,lead=base')")
    if "sure" in out and not out.get("guide"):
        raise ValueError("search option sure is the guide's probability above which its move is played without a "
                         "search: it needs guide=POLICY (e.g. 'search:guide=pretrained,sure=0.99')")
    if "top" in out and not out.get("guide"):
        raise ValueError("search option top counts the guide's discards: it needs guide=POLICY "
                         "(e.g. 'search:guide=pretrained,top=2')")
    SearchAgent(None, **out)  # range checks with the constructor's messages
    return out


def make_search_agent(options: str = "", seed: int | None = None) -> SearchAgent:
    """``SearchAgent`` seeded with ``seed`` and the options of ``parse_options(options)``.

    Raises:
        ValueError: an unknown option or a value out of range (``parse_options``).
    """
    return SearchAgent(seed, **parse_options(options))


__all__ = ["SearchAgent", "guide_probability", "Knowledge", "determinize", "rollout", "rollout_turn", "leaf_value",
           "table_melds", "variant_table_melds", "variant_turn", "rules_of_view", "parse_options",
           "make_search_agent", "SampleError"]
