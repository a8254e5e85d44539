"""Scripted baseline agents: ``GreedyAgent``, ``EpsilonGreedyAgent`` (greedy with a share of
random moves) and ``HeuristicAgent`` (``RandomAgent`` is
``rummy_env.observation.RandomAgent``, re-exported by ``rummy_env.agents``).

Each reads only its observation and action mask (through ``rummy_env.observation.PlayerView``),
returns one legal action id per call, and is deterministic given ``seed(s)``. They
are written for speed (52-bit int masks, cached meld partitions) because they run
as training opponents millions of times.

The heuristic plays the strategy of the rule texts in ``shared/seeds``: meld early
unless going rummy is one draw away; lay off relentlessly; keep cards with two
possible homes; discard dead ranks before live ones; do not feed an opponent what it
is known to collect or can lay off; take the upcard only when it will be used; late
in a hand keep low cards.

At a 500 Rum table (RULES.md §10.4) both dig the discard pile when the deepest card
they would take joins a meld or a lay-off at once and the cards taken are worth more
than they cost (``_Scripted.dig_value``), and play a dug card before anything else.

At a deck-variant table (RULES.md §10.1-10.3: round-the-corner runs, jokers, two
decks) they plan with the natural cards as everywhere (``meld_analysis`` reads runs
that turn the corner), then use their jokers: a joker upcard is always taken; a meld
with jokers is laid down when it melds natural cards the plan leaves loose; a joker is
laid off when nothing better uses it (the heuristic: once the hand is nearly out or
late in the hand), and never discarded while another card can be (a held joker costs
15). A second copy of a card whose first copy is melded in the plan is discarded
first (``_Scripted._act_variant``). The holding heuristic (``HOLD_MELDS=1``) keeps its
melds and jokers in hand there too until the whole hand can go down in one turn
(``can_go_out``); unlike at the standard tables it still lays natural cards off on the
table's melds.

The meld arithmetic they use (best partition, lay-off closure, partial melds, run
windows) is ``rummy_env.meld_analysis``, beside the engine's own meld definitions.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from rummy_env.actions import DIG_BASE, DISCARD_BASE, DRAW_DISCARD, DRAW_STOCK, LAYOFF_BASE, MELD_BASE
from rummy_env.cards import FULL_DECK, JOKER, RANK_MASKS, SUIT_MASKS, card_points, cards_of, mask_points
from rummy_env.engine import meld_forms
from rummy_env.meld_analysis import WINDOWS, goes_out, meld_plan, next_high, next_low, partial_mask
from rummy_env.melds import MELD_MASK, melds_in
from rummy_env.observation import PlayerView, SeededAgent


# card arithmetic is the engine's own (rummy_env.cards): one definition of points and bits
_POINTS = {ap: tuple(card_points(c, ap) for c in range(52)) for ap in (1, 11)}


# ----------------------------------------------------------------- agents

class _Scripted(SeededAgent):
    """Shared plumbing of the scripted agents: seeding (the agents are deterministic;
    the seed only breaks exact ties), the decoded view, fallbacks."""

    name = "scripted"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The agent's legal action id for this observation.

        Args:
            observation: float32 ``(obs_size(n, kind),)`` as the env returns it.
            action_mask: int8 ``(N,)``, ``N = actions.num_actions(kind)`` (the table's action
                count), 1 = legal.

        Raises:
            ValueError: bad shapes, or no action is legal (the seat is not to move).
        """
        v = PlayerView(observation, action_mask)
        if not v.legal:
            raise ValueError("no legal action in the mask: this seat is not to move")
        if v.variant is not None:
            return self._act_variant(v)
        if v.can_draw_stock or v.can_draw_discard:
            if v.dig_actions:
                dig = self._dig(v)
                if dig is not None:
                    return dig
            if not v.can_draw_discard:
                return DRAW_STOCK
            if not v.can_draw_stock:
                return DRAW_DISCARD
            return DRAW_DISCARD if self._take_upcard(v) else DRAW_STOCK
        if v.bound >= 0:
            a = _play_bound(v)
            if a is not None:
                return a
        a = self._play(v)
        return a

    # how much a card taken by a dig and left in hand counts against the dig (1 = its points)
    DIG_COST = 1.0

    def dig_value(self, v: PlayerView, taken: int, base: int | None = None) -> float:
        """What taking ``taken`` (a 52-bit mask of discard-pile cards) is worth at a 500 Rum
        table (RULES.md §10.4: melded cards score for their maker, cards left in hand
        count against it), in points: the points the hand would meld or lay off with them
        beyond what it melds without them (``base``: those points, computed when None),
        minus ``DIG_COST`` times the points of the taken cards that would stay in hand."""
        ap = v.ace_points
        masks = v.layoff_masks if v.layoffs else None
        if base is None:
            _, m0, p0 = meld_plan(v.hand, v.aces, ap, masks)
            base = mask_points(m0 | p0, ap)
        _, m1, p1 = meld_plan(v.hand | taken, v.aces, ap, masks)
        used = m1 | p1
        return mask_points(used, ap) - base - self.DIG_COST * mask_points(taken & ~used, ap)

    def _dig(self, v: PlayerView) -> int | None:
        """The best legal dig if it is worth more than nothing and more than the upcard alone."""
        pile = v.pile
        best = None
        _, m0, p0 = meld_plan(v.hand, v.aces, v.ace_points, v.layoff_masks if v.layoffs else None)
        base = mask_points(m0 | p0, v.ace_points)  # what the hand melds without digging
        taken = (1 << pile[-1]) if pile else 0
        for depth in range(len(pile) - 2, -1, -1):
            c = pile[depth]
            taken |= 1 << c
            a = DIG_BASE + c
            if a not in v.dig_actions:
                continue
            val = self.dig_value(v, taken, base)
            if best is None or val > best[0]:
                best = (val, a)
        if best is None or best[0] <= 0:
            return None
        if v.upcard >= 0 and self.dig_value(v, 1 << v.upcard, base) >= best[0]:
            return None
        return best[1]

    def _take_upcard(self, v: PlayerView) -> bool:
        raise NotImplementedError

    def _play(self, v: PlayerView) -> int:
        raise NotImplementedError

    # ------------------------------------------------------------ deck variants (§10.1-10.3)

    # lay a joker off only late (the heuristic) or always (greedy)
    JOKER_LAYOFF_ALWAYS = True

    def _act_variant(self, v: PlayerView) -> int:
        """One action at a deck-variant table (module docstring; RULES.md §10.1-10.3)."""
        lay = v.variant
        if v.can_draw_stock or v.can_draw_discard:
            if not v.can_draw_discard:
                return DRAW_STOCK
            if v.upcard == JOKER or not v.can_draw_stock:
                return DRAW_DISCARD
            return DRAW_DISCARD if 0 <= v.upcard < JOKER and self._take_upcard(v) else DRAW_STOCK
        ap = v.ace_points
        pts = _POINTS[ap]
        ids, pm, placed = meld_plan(v.hand, v.aces, ap, v.layoff_masks if v.layoffs else None)
        loose = v.hand & ~pm & ~placed
        legal = set(v.legal)
        named = v.jokers_named
        # the moves with jokers whose next decision is legal (the steps of actions' docstring)
        forms = _joker_forms(v, legal)

        def value(item):  # a meld with jokers: the most loose points melded, then the fewest jokers
            (mid, jm), a = item
            nat = MELD_MASK[mid] & ~jm
            return (mask_points(nat & loose, ap), -jm.bit_count(), nat.bit_count(), -a)

        joker_lays = _joker_layoffs(v, legal)
        if named:  # finishing a move with jokers: the best legal way on
            if forms:
                return max(forms, key=value)[1]
            return joker_lays[0] if joker_lays else v.legal[0]
        if (ids or forms or joker_lays) and self.holds_melds(v) and not v.melds_scoring and not can_go_out(v):
            ids, forms, joker_lays = (), [], []  # keep melds and jokers in hand (natural lay-offs still go)
        for m in ids:  # the plan's natural melds
            a = lay.meld_id[m]
            if a in legal:
                return a
        for a in v.layoff_actions:
            c = (a - LAYOFF_BASE) // 3
            if not pm >> c & 1 or v.hand_twice >> c & 1:
                return a
        if forms:
            best = max(forms, key=value)
            if value(best)[0] > 0:
                return best[1]
        if joker_lays and (self.JOKER_LAYOFF_ALWAYS or loose.bit_count() <= 1 or v.stock_size <= self.late_stock()
                           or min(v.opp_hand_size) <= 2):
            return joker_lays[0]
        disc = v.discardable
        natural = disc & FULL_DECK
        if not natural:  # only a joker may go: use it on the table instead whenever that is legal
            if joker_lays or forms:
                return joker_lays[0] if joker_lays else max(forms, key=value)[1]
            if disc >> JOKER & 1:
                return lay.joker_discard
            return (v.meld_actions or v.layoff_actions or v.legal)[0]
        spare = natural & v.hand_twice & pm  # a second copy of a melded card is deadwood
        if spare:
            return DISCARD_BASE + max(cards_of(spare), key=lambda c: (pts[c], c))
        return DISCARD_BASE + self._variant_discard(v, natural, loose)

    def late_stock(self) -> int:
        """Stock size from which the hand counts as late (the heuristic's ``LATE_STOCK``)."""
        return 10

    def holds_melds(self, v: PlayerView) -> bool:
        """Whether this agent keeps its melds in hand until it can go out in one turn
        (the heuristic's ``HOLD_MELDS``; greedy never does)."""
        return False

    def _variant_discard(self, v: PlayerView, cand: int, loose: int) -> int:
        """The natural card to discard among ``cand`` (52-bit mask) at a deck-variant table."""
        pts = _POINTS[v.ace_points]
        pick = cand & loose & ~partial_mask(v.hand, v.aces) or cand & loose or cand
        return max(cards_of(pick), key=lambda c: (pts[c], c % 13, c))


def can_go_out(v: PlayerView) -> bool:
    """Whether the seat to play can put every card of its hand down this turn at a
    deck-variant table (RULES.md §3, §10.1-10.3): its natural cards split into melds
    (with jokers standing in, at most half of a meld, ``engine.meld_forms``), cards the
    table's melds take (``layoff_any``) and at most one discard, which may not be the
    card just taken from the discard pile; a joker left over is laid off when some meld
    is on the table or made this turn, or is the discard. Second copies of a card (two
    decks) go only as lay-offs or the discard. An estimate where lay-offs interact (a
    card laid off on a meld made the same turn, a lay-off that opens another one) and
    where ``must_discard`` forbids going out without a discard: the plan of the holding
    heuristic, not a legality check."""
    nat = v.hand & FULL_DECK
    takes = v.layoff_any if v.layoffs else 0
    drawn = (1 << v.drawn) if 0 <= v.drawn < JOKER else 0
    twice = v.hand_twice & ~takes
    disc = 1 - twice.bit_count()
    if disc < 0:
        return False
    aces, max_j, table = v.aces, v.max_jokers, bool(v.table)
    seen: dict = {}

    def go(rest: int, jokers: int, disc: int, melded: bool) -> bool:
        key = (rest, jokers, disc, melded)
        if key in seen:
            return seen[key]
        if not rest:
            ok = jokers == 0 or (v.layoffs and (table or melded)) or jokers <= disc
        else:
            low = rest & -rest
            ok = (bool(takes & low) and go(rest & ~low, jokers, disc, melded)) \
                or (disc > 0 and not low & drawn and go(rest & ~low, jokers, disc - 1, melded))
            if not ok:
                for mid, jm in meld_forms(rest, jokers, aces, max_j):
                    natural = MELD_MASK[mid] & ~jm
                    if natural & low and go(rest & ~natural, jokers - jm.bit_count(), disc, True):
                        ok = True
                        break
        seen[key] = ok
        return ok

    return go(nat, v.hand_jokers, disc, False)


def _joker_forms(v: PlayerView, legal: set) -> list:
    """The melds with jokers this view may be building (RULES.md §10.2): ``((catalogue
    meld id, joker mask), next id)`` for every form of the hand whose jokers start with
    the ones named (``v.jokers_named``, in ascending card order) and whose next decision
    (``joker as <card>``, or the meld id once every joker is named) is legal."""
    lay = v.variant
    if not v.hand_jokers or lay.joker_as < 0:
        return []
    out = []
    for mid, jm in meld_forms(v.hand & FULL_DECK, v.hand_jokers, v.aces, lay.max_jokers):
        if jm and lay.meld_id[mid] >= 0:
            a = lay.joker_step(jm, v.jokers_named, lay.meld_id[mid])
            if a in legal:  # -1 (not this move) is never legal
                out.append(((mid, jm), a))
    return out


def _joker_layoffs(v: PlayerView, legal: set) -> list[int]:
    """The next decision of each legal joker lay-off (RULES.md §10.2): ``joker as <card>``
    when no joker is named yet, the lay-off id once the joker is named for that card."""
    lay = v.variant
    if not v.hand_jokers or lay.joker_as < 0 or not v.layoffs:
        return []
    out = []
    for end, mask in enumerate((v.joker_layoff_set, v.joker_layoff_low, v.joker_layoff_high)):
        for c in cards_of(mask):
            a = lay.joker_step(1 << c, v.jokers_named, LAYOFF_BASE + 3 * c + end)
            if a in legal and a not in out:
                out.append(a)
    return out


def _upcard_joins_meld(v: PlayerView) -> bool:
    u = v.upcard
    if u < 0:
        return False
    ub = 1 << u
    for m in melds_in(v.hand | ub, v.aces):
        if MELD_MASK[m] & ub:
            return True
    return False


def _play_bound(v: PlayerView) -> int | None:
    """While a dug card is in hand (RULES.md §10.4): the largest legal meld that holds
    it, else a legal lay-off of it; ``None`` when neither is legal yet (another meld or
    lay-off must come first)."""
    b = 1 << v.bound
    melds = [a for a in v.meld_actions if MELD_MASK[a - MELD_BASE] & b]
    if melds:
        return max(melds, key=lambda a: (MELD_MASK[a - MELD_BASE].bit_count(), a))
    lays = [a for a in v.layoff_actions if (a - LAYOFF_BASE) // 3 == v.bound]
    return lays[0] if lays else None


class GreedyAgent(_Scripted):
    """Greedy baseline.

    Draw: takes the upcard only when it completes or extends a meld with cards in
    hand, or can be laid off on the table; otherwise draws from the stock.
    Play: melds (the largest legal meld first) and lays off everything it can, then
    discards its highest-value card that is not part of a partial meld (a pair, or a
    same-suit card one or two ranks away); when every card is in a partial meld, the
    highest-value card. Ties go to the higher rank, then the higher suit.
    """

    name = "greedy"

    def _take_upcard(self, v: PlayerView) -> bool:
        if v.upcard < 0:
            return False
        if v.layoffs and v.layoff_any >> v.upcard & 1:
            return True
        return _upcard_joins_meld(v)

    def _play(self, v: PlayerView) -> int:
        if v.meld_actions:
            ap = v.ace_points
            best = max(v.meld_actions, key=lambda a: (MELD_MASK[a - MELD_BASE].bit_count(),
                                                      mask_points(MELD_MASK[a - MELD_BASE], ap), a))
            return best
        if v.layoff_actions:
            return v.layoff_actions[0]
        disc = v.discardable
        if not disc:  # only a lay-off or meld could be legal; covered above
            return v.legal[0]
        cand = disc & ~partial_mask(v.hand, v.aces) or disc
        pts = _POINTS[v.ace_points]
        c = max(cards_of(cand), key=lambda c: (pts[c], c % 13, c))
        return DISCARD_BASE + c


class EpsilonGreedyAgent(GreedyAgent):
    """Greedy with a fixed share of random moves (``greedy:eps=E``): before each decision
    the agent's own generator draws a number in [0, 1); below ``eps`` the agent plays a
    uniformly random legal action (drawn from the same generator), otherwise greedy's
    move. It reads only the observation and the mask, and is deterministic given
    ``seed(s)``. ``eps=0`` plays as ``greedy``, ``eps=1`` uniformly at random; between
    them it is a rung of the benchmark's anchors between ``random`` and ``greedy``.
    """

    name = "greedy-eps"

    def __init__(self, seed: int | None = None, eps: float = 0.5) -> None:
        """``eps``: the share of decisions played at random.

        Raises:
            ValueError: ``eps`` is not a number in [0, 1].
        """
        super().__init__(seed)
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0.0 <= float(eps) <= 1.0:
            raise ValueError(f"greedy option eps is the share of random moves, a number in [0, 1], got {eps!r}")
        self.eps = float(eps)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """A uniformly random legal action with probability ``eps``, else greedy's action.

        Raises:
            ValueError: bad shapes, or no action is legal (the seat is not to move).
        """
        if self._rng.random() < self.eps:
            legal = np.flatnonzero(action_mask)
            if legal.size == 0:
                raise ValueError("no legal action in the mask: this seat is not to move")
            return int(legal[self._rng.randrange(legal.size)])
        return super().act(observation, action_mask)


class HeuristicAgent(_Scripted):
    """The rule texts' strategy (``shared/seeds``), on the observation only.

    - Takes the upcard only when it will be used this turn: it joins a meld of the
      best partition of the hand, or it can be laid off (RULES texts: never on vague
      hope).
    - Melds the best partition (least deadwood) early and lays off every other card
      the table takes, unless going rummy is one draw away (nothing melded yet, at
      most one unplaced card left after this discard, opponents not about to go out):
      then it holds everything back and only discards.
    - Discards the card with the fewest ways of becoming useful: scores each
      candidate by its live "outs" (cards still unseen that would complete a meld
      with it; a card with two homes has more), minus its points (weighted double
      late in the hand, when the stock is small or an opponent is close to going
      out), plus a danger term for cards an opponent is known to collect (same rank
      or a near card of the same suit as a card it took from the discard pile) or can
      lay off on the table; dead cards (no meld can still form through them) go first.
    """

    name = "heuristic"

    # weights of the discard score (points are the unit)
    W_OUT = 8.0
    W_WEAK = 2.0
    W_ACC = 12.0
    W_KNOWN_RANK = 10.0
    W_KNOWN_NEAR = 8.0
    W_OPP_LIVE = 1.0
    W_DEAD = 2.0
    W_NEAR_TABLE = 1.5
    LATE_STOCK = 10
    LATE_WEIGHT = 2.0
    HOLD_FOR_RUMMY = True
    HOLD_MELDS = 0
    CUT_STOCK = 0
    EXCLUDE_KNOWN = True
    # at a 500 Rum table (RULES.md §10.4; chosen by duplicate matches against greedy):
    # a card kept for its outs is worth more (every meld scores), and a dug card left in
    # hand is charged half its points (it may still meld before the hand ends)
    W_OUT_MELDS = 24.0
    W_WEAK_MELDS = 6.0
    DIG_COST = 0.5
    TUNABLE = ("W_OUT", "W_WEAK", "W_ACC", "W_KNOWN_RANK", "W_KNOWN_NEAR", "W_OPP_LIVE", "W_DEAD",
               "W_NEAR_TABLE", "LATE_STOCK", "LATE_WEIGHT", "HOLD_MELDS", "CUT_STOCK", "W_OUT_MELDS", "W_WEAK_MELDS",
               "DIG_COST")

    def __init__(self, seed: int | None = None, **weights: float) -> None:
        """``weights`` override the class's discard weights for this agent (names in
        ``TUNABLE``, e.g. ``W_OUT=24``); the baseline ``heuristic`` uses none.
        ``HOLD_MELDS=1`` switches the meld timing: the agent keeps its melds and
        lay-offs in hand until it can go out in one turn (melding early lets opponents
        lay off on the melds, which speeds their going out; RULES.md §3). This
        variant wins far more hands than the baseline (it is the training teacher).
        ``CUT_STOCK=N`` (with ``HOLD_MELDS=1``) stops the holding once the stock holds
        ``N`` cards or fewer: from then on (a stock made again from the pile too) it melds and lays off
        as the baseline does,
        cutting what an opponent's going rummy would cost it (``heuristic:cutting``:
        ``N = 22``, chosen at the classic two-player table, whose stock starts at 31;
        0, the default: it holds to the end of the hand).

        Raises:
            ValueError: an unknown weight name, a value that is not a finite number >= 0, a
                fraction for ``LATE_STOCK`` or ``CUT_STOCK`` (card counts), ``HOLD_MELDS``
                other than 0 or 1, or ``CUT_STOCK`` > 0 without ``HOLD_MELDS=1``.
        """
        super().__init__(seed)
        for k, v in weights.items():
            if k not in self.TUNABLE:
                raise ValueError(f"unknown heuristic weight {k!r}; weights: {', '.join(self.TUNABLE)}")
            if k == "HOLD_MELDS":
                if isinstance(v, bool) or not isinstance(v, numbers.Real) or v not in (0, 1):
                    raise ValueError(f"heuristic option HOLD_MELDS is 0 (meld early) or 1 (hold melds "
                                     f"until going out), got {v!r}")
            elif isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v < 0:
                raise ValueError(f"heuristic weight {k} must be a finite number >= 0, got {v!r}")
            kind = type(getattr(type(self), k))
            if kind is int and v != int(v):
                raise ValueError(f"heuristic weight {k} counts cards: a whole number, got {v!r}")
            setattr(self, k, kind(v))
        if self.CUT_STOCK and not self.HOLD_MELDS:
            raise ValueError(f"heuristic option CUT_STOCK={self.CUT_STOCK} (the stock size at which a holder stops "
                             f"holding) needs HOLD_MELDS=1: with HOLD_MELDS=0 the agent never holds and CUT_STOCK "
                             f"would change nothing; set HOLD_MELDS=1, or CUT_STOCK=0")

    JOKER_LAYOFF_ALWAYS = False

    def late_stock(self) -> int:
        """Stock size from which the hand counts as late (``LATE_STOCK``)."""
        return self.LATE_STOCK

    def holds_melds(self, v: PlayerView) -> bool:
        """``HOLD_MELDS`` (RULES.md §3: melds on the table let opponents lay off; going
        rummy scores ``rummy_multiplier`` times); with ``CUT_STOCK`` > 0, only until the
        stock holds ``CUT_STOCK`` cards or fewer for the first time: not once the stock
        has been made again from the discard pile (§6) or the seat has put cards down this hand."""
        if not self.HOLD_MELDS:
            return False
        return not (self.CUT_STOCK and (v.stock_size <= self.CUT_STOCK or v.recycles > 0 or v.has_melded))

    def _variant_discard(self, v: PlayerView, cand: int, loose: int) -> int:
        """The discard score of the standard tables (``_choose_discard``) among the loose
        natural cards (RULES.md §10.1-10.3: the analysis reads runs that turn the corner)."""
        return self._choose_discard(v, cand & loose or cand, loose)

    def _take_upcard(self, v: PlayerView) -> bool:
        u = v.upcard
        if u < 0:
            return False
        ub = 1 << u
        _, melded, placed = meld_plan(v.hand | ub, v.aces, v.ace_points, v.layoff_masks if v.layoffs else None)
        return bool((melded | placed) & ub)

    def _play(self, v: PlayerView) -> int:
        hand = v.hand
        aces = v.aces
        ids, pm, placed = meld_plan(hand, aces, v.ace_points, v.layoff_masks if v.layoffs else None)
        dead_wood = hand & ~pm
        unplaced = dead_wood & ~placed
        nu = unplaced.bit_count()

        hold = False
        if pm or placed:
            if goes_out(unplaced, v.drawn, v.must_discard):
                pass
            elif self.holds_melds(v) and not v.melds_scoring:  # under meld scoring a held meld only risks its points
                hold = True
            elif self.HOLD_FOR_RUMMY and not v.has_melded and v.rummy_multiplier > 1:
                need = 0 if v.rummy_needs_no_discard else 1
                if nu - 1 <= need and min(v.opp_hand_size) >= 3 and v.stock_size >= 4:
                    hold = True
        if not hold:
            for m in ids:
                a = MELD_BASE + m
                if a in v.meld_actions:
                    return a
            if v.layoff_actions:
                pts = _POINTS[v.ace_points]
                best = None
                for a in v.layoff_actions:
                    c = (a - LAYOFF_BASE) // 3
                    if dead_wood >> c & 1:
                        key = (pts[c], -a)
                        if best is None or key > best[0]:
                            best = (key, a)
                if best is not None:
                    return best[1]
        disc = v.discardable
        if not disc:
            return (v.meld_actions or v.layoff_actions or v.legal)[0]
        cand = disc & unplaced or disc & dead_wood or disc
        return DISCARD_BASE + self._choose_discard(v, cand, unplaced)

    def _choose_discard(self, v: PlayerView, cand: int, free: int) -> int:
        aces = v.aces
        pts = _POINTS[v.ace_points]
        up = (1 << v.upcard) if v.upcard >= 0 else 0
        avail = FULL_DECK & ~(v.hand | v.table | v.discard_below | up)
        if v.two_decks:  # a card is out of reach only once both copies are seen (RULES.md §10.3)
            ones = twos = 0
            for p in (v.hand, v.hand_twice, v.table, v.table_twice, v.discard_below, v.discard_below_twice, up):
                twos |= ones & p
                ones |= p
            avail = FULL_DECK & ~twos
        known = v.opp_known_all
        mine = avail & ~known if self.EXCLUDE_KNOWN else avail  # cards we could still draw
        takes = v.layoff_any if v.layoffs else 0
        late = v.stock_size <= self.LATE_STOCK or min(v.opp_hand_size) <= 2
        wp = self.LATE_WEIGHT if late else 1.0
        w_out, w_weak = (self.W_OUT_MELDS, self.W_WEAK_MELDS) if v.melds_scoring else (self.W_OUT, self.W_WEAK)
        windows = WINDOWS[aces]
        near_takes = 0
        if takes:
            for c in cards_of(takes):
                near_takes |= next_low(c, aces) | next_high(c, aces)
            near_takes &= ~takes
        best = None
        for c in cards_of(cand):
            b = 1 << c
            r = c % 13
            rank = RANK_MASKS[r] & ~b
            outs = 0
            weak = 0.0
            live_rank = rank & mine
            if rank & free:
                outs |= live_rank
            elif live_rank.bit_count() >= 2:
                weak += 1
            opp_live = (rank & avail).bit_count() >= 2
            for w in windows[c]:
                infree = w & free
                missing = w & ~free
                if infree:
                    if missing & mine == missing:
                        outs |= missing
                elif w & mine == w:
                    weak += 1
                if w & avail == w:
                    opp_live = True
            score = w_out * outs.bit_count() + w_weak * weak - wp * pts[c]
            danger = 0.0
            if takes & b:
                danger += self.W_ACC
            if known:
                if known & rank:
                    danger += self.W_KNOWN_RANK
                s = c // 13
                kn = known & SUIT_MASKS[s]
                if kn:
                    for w in windows[c]:
                        if w & kn:
                            danger += self.W_KNOWN_NEAR
                            break
            if near_takes & b:
                danger += self.W_NEAR_TABLE
            if opp_live:
                danger += self.W_OPP_LIVE
            elif not outs and not takes & b:
                danger -= self.W_DEAD
            score += danger
            key = (score, -pts[c], -r, -c)
            if best is None or key < best[0]:
                best = (key, c)
        return best[1]


HOLDING = {"HOLD_MELDS": 1, "W_OUT": 24.0, "W_WEAK": 6.0}
"""The holding heuristic's options (``heuristic:holding``): it keeps its melds and lay-offs
in hand until it can go out in one turn (RULES.md §3, §6: going rummy pays double), and
weighs live outs and weak windows as the shipped policy's teacher does."""

CUTTING = {**HOLDING, "CUT_STOCK": 22}
"""The cutting heuristic's options (``heuristic:cutting``): the holding heuristic until the
stock holds 22 cards or fewer, then it melds and lays off as the baseline does (a holder's
going rummy then costs it less, RULES.md §5-§6). 22 was chosen at the classic two-player
table (stock 31 after the deal) among 16-26 and 31 by duplicate matches against the holding
heuristic (docs/agents.md); at a table with a smaller stock it cuts sooner."""

__all__ = ["GreedyAgent", "EpsilonGreedyAgent", "HeuristicAgent", "HOLDING", "CUTTING"]
