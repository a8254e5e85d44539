"""``CardFeatures``: meld-structure features computed from the observation inside the network.

A plain MLP on the flat observation has to discover from scratch which cards of a
hand lie in sets and runs, and which unseen cards would complete them; that is the
heart of every Rummy decision (RULES.md §4: a set is 3-4 cards of one rank, a run
3+ cards of one suit in sequence, aces low, high or either by the rules). This
module computes those facts exactly, with fixed tensor operations (products with
0/1 matrices, comparisons, no learned weights), and appends them to the
observation, so the policy and value MLPs start from them. Being plain torch ops it exports to ONNX unchanged,
and it reads only the observation (nothing hidden).

For each of the 52 cards it computes, for two hands ``X``, the hand and the hand
plus the upcard (what taking the upcard would give):

================  ==========================================================================
name              meaning (per card ``c``; counts are of cards other than ``c``)
================  ==========================================================================
``same_rank``     cards of ``c``'s rank in ``X`` (0-3)
``run_m2..p2``    4 planes: 1 if ``X`` holds the same-suit card 2 below, 1 below, 1 above, 2 above
``in_set``        1 if ``c`` is in ``X`` and ``X`` holds 2+ more of its rank (a set)
``in_run``        1 if ``c`` is in ``X`` and in a 3-card run window fully held by ``X``
================  ==========================================================================

and, once, for the cards not seen anywhere (not in hand, on the table, in the
discard pile or known to be held by an opponent): ``unseen_rank`` (unseen cards of
``c``'s rank), ``unseen_m2..p2`` (4 planes) and ``unseen`` itself. Aces join runs
at the low end, the high end or both, read from the ``rule_aces`` one-hot.

Then, for each ``X``, the cards that are nowhere placed yet (``loose``: in ``X``, in
no set and no run of ``X`` as above, and not accepted by a meld on the table when
the rules allow lay-offs) and how many there are, one-hot 0, 1, 2, 3, 4, 5+
(``loose_count``). A hand can go out when at most one card is loose (RULES.md §3, §5),
a decision a network otherwise has to count its way to; overlapping melds make
the count a lower bound of the true deadwood card count.

Output order: the observation, the 7 planes of the hand, the 7 of the hand plus the
upcard, the hand-plus-upcard plane itself, the 6 unseen planes (21 planes of 52),
the loose planes of the hand and of the hand plus upcard (2 x 52), their loose
counts (2 x 6).
Shapes: input float32 ``[B, obs_size(n)]``; output float32 ``[B, obs_size(n) + EXTRA]``
(``EXTRA = 52 * 23 + 12 = 1208`` features after the observation).

With ``jokers=True`` (``features="cards+jokers"``, a table with jokers only, RULES.md
§10.2) four planes follow, for the hand and for the hand plus the upcard: ``set_joker``
(``c`` is in ``X``, ``X`` holds another card of its rank and a joker: with the joker a
set of three) and ``run_joker`` (``c`` is in ``X``, ``X`` holds a same-suit card 1 or 2
away and a joker: with the joker a run of three), 0 when ``X`` holds no joker (the
upcard adds one when it is the joker), in the order ``set_joker`` of the hand, of the
hand plus upcard, ``run_joker`` of the hand, of the hand plus upcard:
``JOKER_EXTRA = 4 * 52 = 208`` more features.

With ``plan=True`` (``features="cards+plan"``, a standard table only) the meld plan of the
hand and of the hand plus the upcard follows (``plan_features.MeldPlanFeatures``: per hand
the planes ``melded``, ``placed`` and ``unplaced`` and the unplaced count one-hot 0-4, 5+):
``PLAN_EXTRA = 2 * (3 * 52 + 6) = 324`` more features.
"""
from __future__ import annotations

import gymnasium as gym
import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn

from rummy_env.observation import ACES_ORDER, num_card_planes, obs_size, offsets
from rummy_env.table import STOCK_SCALE, legacy_table

from .config import FEATURES, check_features  # noqa: F401 - re-exported
from .plan_features import PLAN_EXTRA, MeldPlanFeatures

PER_HAND = 7   # same_rank, 4 run neighbours, in_set, in_run
UNSEEN = 6     # unseen_rank, 4 run neighbours, unseen
LOOSE_COUNTS = 6  # one-hot 0, 1, 2, 3, 4, 5+
EXTRA = 52 * (2 * PER_HAND + UNSEEN + 1 + 2) + 2 * LOOSE_COUNTS  # + 1: the hand plus upcard
JOKER_EXTRA = 4 * 52  # set_joker and run_joker of the hand and of the hand plus upcard (jokers=True)


def linear_maps() -> torch.Tensor:
    """float32 ``[3, 52, 5 * 52]``: per aces option (low, high, either), the 0/1 matrix
    that maps a 52-card plane ``x`` to ``[same_rank, m2, m1, p1, p2]`` (5 blocks of 52,
    block ``f`` entry ``c`` = feature ``f`` of card ``c``; RULES.md §4: runs never
    wrap, an ace is the rank below 2 when aces may be low and the rank above K when
    they may be high)."""
    w = torch.zeros(3, 52, 5 * 52)
    for a, aces in enumerate(ACES_ORDER):
        low_ok, high_ok = aces != "high", aces != "low"
        for c in range(52):
            s, r = divmod(c, 13)
            for s2 in range(4):
                if s2 != s:
                    w[a, s2 * 13 + r, c] = 1.0
            positions = ([0] if low_ok else []) + ([13] if high_ok else []) if r == 0 else [r]
            for f, k in enumerate((-2, -1, 1, 2), start=1):
                for p in positions:
                    q = p + k
                    if q < 0 or q > 13 or (q == 0 and not low_ok) or (q == 13 and not high_ok):
                        continue
                    w[a, s * 13 + q % 13, f * 52 + c] = 1.0
    return w


class CardMeldFeatures(nn.Module):
    """The fixed feature computation (no learned weights): ``[B, obs_dim] -> [B, obs_dim + EXTRA]``.

    The linear features (same rank, run neighbours) are one matrix product of the
    plane, placed in the block of the observation's ``rule_aces`` one-hot, with the
    three aces options' 0/1 matrices stacked; ``in_set`` and ``in_run`` are products of them.
    """

    def __init__(self, obs_dim: int, num_players: int | None = None, kind: str | None = None,
                 jokers: bool = False, plan: bool = False) -> None:
        super().__init__()
        if num_players is None:  # a file of release 0.1 (standard or 500 Rum only), saved without its table
            n, kind = legacy_table(obs_dim)
        else:
            n, kind = num_players, kind or "standard"
            if obs_size(n, kind) != obs_dim:
                raise ValueError(f"an observation of {obs_dim} entries is not that of a {n}-player {kind} table "
                                 f"({obs_size(n, kind)} entries)")
        off = offsets(n, kind)  # the standard pieces keep their places at every kind of table
        self.obs_dim = obs_dim
        self.out_dim = obs_dim + EXTRA
        self.planes = num_card_planes(n)
        self.aces = off["rule_aces"].start  # low, high, either
        self.stock_at = off["stock_size"].start  # the stock's size / STOCK_SCALE (CardDiscardHead's stock steps)
        self.seen = [0, 1, 2, 4] + [off[f"opp{k}_known"].start // 52 for k in range(1, n)]
        self.layoff_planes = [off[k].start // 52 for k in ("layoff_set", "layoff_low", "layoff_high")]
        self.layoffs = off["rule_layoffs"].start
        # aces="around" (RULES.md §10.1) reads as "either" here: runs through the ace at both ends
        self.around = off["rule_around"].start if "rule_around" in off else -1
        # [aces * 52, 5 * 52]: (aces one-hot (x) plane) @ maps = the plane's linear features
        # under the row's aces option, in one matrix product
        self.register_buffer("maps", linear_maps().reshape(3 * 52, 5 * 52).contiguous(), persistent=False)
        not_ace = torch.ones(52)
        not_ace[::13] = 0.0
        self.register_buffer("not_ace", not_ace, persistent=False)
        self.register_buffer("count_values", torch.arange(LOOSE_COUNTS - 1, dtype=torch.float32), persistent=False)
        self.jokers = bool(jokers)
        if self.jokers:
            if "hand_jokers" not in off:
                raise ValueError(f"joker features need a table with jokers; a {kind} table has none (RULES.md §10.2)")
            self.hand_jokers, self.upcard_joker = off["hand_jokers"].start, off["upcard_joker"].start
            self.out_dim += JOKER_EXTRA
        self.plan = bool(plan)
        if self.plan:
            if kind != "standard":
                raise ValueError(f"meld-plan features need a standard table; a {kind} table is not one (RULES.md §10)")
            self.plan_features = MeldPlanFeatures(obs_dim, n)
            self.out_dim += PLAN_EXTRA

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        obs = obs.float()
        b = obs.shape[0]
        planes = obs[:, : 52 * self.planes].reshape(b, self.planes, 52)
        hand = planes[:, 0]
        hand_up = hand + planes[:, 1]                        # disjoint planes: the sum is the union
        unseen = 1.0 - planes[:, self.seen].sum(dim=1)       # hand, upcard, pile, table, known: disjoint
        x = torch.stack([hand, hand_up, unseen], dim=1)      # [B, 3, 52]
        aces = obs[:, self.aces:self.aces + 3]
        if self.around >= 0:
            aces = aces + torch.nn.functional.pad(obs[:, self.around:self.around + 1], (2, 0))
        aces = aces.reshape(b, 1, 3, 1)
        lin = ((aces * x[:, :, None, :]).reshape(b * 3, 3 * 52) @ self.maps).reshape(b, 3, 5, 52)
        same, m2, m1, p1, p2 = lin.unbind(dim=2)             # each [B, 3, 52]
        xh = x[:, :2]
        in_set = xh * (same[:, :2] >= 2).float()
        in_run = xh * ((m2 * m1 + p1 * p2 + m1 * p1 * self.not_ace)[:, :2] > 0).float()
        hand_feats = torch.cat([lin[:, :2], in_set[:, :, None], in_run[:, :, None]], dim=2).reshape(b, -1)
        unseen_feats = torch.cat([lin[:, 2], unseen[:, None]], dim=1).reshape(b, -1)
        takes = planes[:, self.layoff_planes].sum(dim=1).clamp(max=1.0) * obs[:, self.layoffs:self.layoffs + 1]
        loose = xh * (1.0 - torch.maximum(in_set, in_run)) * (1.0 - takes[:, None])   # [B, 2, 52]
        n_loose = loose.sum(dim=2, keepdim=True)                                        # [B, 2, 1]
        counts = torch.cat([(n_loose == self.count_values).float(),
                            (n_loose >= LOOSE_COUNTS - 1).float()], dim=2)             # [B, 2, 6]
        out = [obs, hand_feats, hand_up, unseen_feats, loose.reshape(b, -1), counts.reshape(b, -1)]
        if self.jokers:
            held = (obs[:, self.hand_jokers:self.hand_jokers + 1] > 0).float()              # [B, 1]
            held_up = torch.maximum(held, obs[:, self.upcard_joker:self.upcard_joker + 1])
            has = torch.stack([held, held_up], dim=1)                                       # [B, 2, 1]
            set_j = xh * (same[:, :2] >= 1).float() * has
            run_j = xh * ((m2 + m1 + p1 + p2)[:, :2] > 0).float() * has
            out.append(torch.cat([set_j, run_j], dim=1).reshape(b, -1))
        if self.plan:
            out.append(self.plan_features(obs))
        return torch.cat(out, dim=1)


DISCARD_HIDDEN = (64, 32)
"""Hidden widths of ``CardDiscardHead``'s scorer (shared by the 52 cards)."""
STOCK_STEPS = STOCK_SCALE
"""``CardDiscardHead(stock_steps=True)``'s steps: ``stock_size > k`` for ``k`` in 0..51 (a
two-deck stock beyond 52 cards sets them all)."""
DISCARD_HEAD_KINDS = {True: False, "cards": False, "cards+stock": True}
"""``CardFeatures(discard_head=...)`` values that build a head, and whether it reads the stock steps."""
CARD_PLANES = 2 * PER_HAND + 1 + UNSEEN + 2  # CardMeldFeatures' planes of 52 after the observation (23)
PLAN_COUNTS = 6  # MeldPlanFeatures' unplaced count one-hot per hand


def card_neighbours() -> torch.Tensor:
    """int64 ``[52, 8]``: for card ``c`` (suit ``c // 13``, rank ``c % 13``) ``c`` itself, the
    three other cards of its rank in suit order, then the cards of its suit two below, one
    below, one above and two above, counted around the corner (the king is below the ace:
    whether a run may turn there is the ``rule_aces`` input's to tell, RULES.md §4, §10.1)."""
    nb = torch.empty(52, 8, dtype=torch.long)
    for c in range(52):
        s, r = divmod(c, 13)
        nb[c, 0] = c
        nb[c, 1:4] = torch.tensor([t * 13 + r for t in range(4) if t != s])
        nb[c, 4:] = torch.tensor([s * 13 + (r + d) % 13 for d in (-2, -1, 1, 2)])
    return nb


class CardDiscardHead(nn.Module):
    """A discard scorer shared by the 52 cards (``discard_head = "cards"``): what it learns
    about a card it knows for every card, where a dense action head learns each
    ``discard <card>`` logit on its own (issue 25: a clone of ``heuristic:cutting`` with the
    dense head threw another card than its teacher at a fifth of its own discards; fitted to
    the teacher's discards, this head chose its card at 91% of held-out positions and the
    dense shape at 71%: experiments/issue25_card_discards.py, docs/training.md).

    Card ``c``'s score reads, from ``CardMeldFeatures``' output, every card plane (the
    observation's ``num_card_planes(n)`` and the 23 feature planes, plus the 4 joker planes with
    ``jokers``, the 6 meld-plan planes with ``plan``) at ``c`` and at its seven neighbours
    (``card_neighbours``), the rest of the observation (scalars, the table's rules, at the
    deck-variant tables their extra pieces), the two loose-card counts (and the two unplaced
    counts of the plan), with ``stock_steps`` the stock's size as ``STOCK_STEPS``
    steps (``stock_size > k``, 0/1: a head that must switch at one stock size, as a
    player who holds his melds until the stock runs low does, reads the switch from one
    input instead of carving it out of the scaled size) and ``c``'s rank (one-hot), through
    ``Linear, ReLU, Linear, ReLU, Linear`` (``DISCARD_HIDDEN`` wide, then 1). The policy adds
    the scores to the ``discard <card>`` logits (``add_discard_scores``). The last layer
    starts at zero, so a new head leaves the logits as they were (a dense policy loaded
    into a network with the head plays as before until trained).

    Shapes: input float32 ``[B, core.out_dim]`` (``CardMeldFeatures``' output), output
    float32 ``[B, 52]``.
    """

    def __init__(self, core: "CardMeldFeatures", hidden: tuple[int, ...] = DISCARD_HIDDEN,
                 stock_steps: bool = False) -> None:
        super().__init__()
        self.obs_dim, self.planes = core.obs_dim, core.planes
        self.stock_steps, self.stock_at = bool(stock_steps), core.stock_at
        self.register_buffer("steps_at", torch.arange(STOCK_STEPS, dtype=torch.float32) + 0.5, persistent=False)
        self.feature_planes = CARD_PLANES + (4 if core.jokers else 0) + (6 if core.plan else 0)
        self.plan = core.plan
        self.register_buffer("nb", card_neighbours(), persistent=False)
        self.register_buffer("ranks", torch.eye(13)[torch.arange(52) % 13], persistent=False)
        width = (8 * (self.planes + self.feature_planes) + (self.obs_dim - 52 * self.planes) + 2 * LOOSE_COUNTS
                 + (2 * PLAN_COUNTS if self.plan else 0) + (STOCK_STEPS if self.stock_steps else 0) + 13)
        layers: list[nn.Module] = []
        for h in hidden:
            layers += [nn.Linear(width, h), nn.ReLU()]
            width = h
        last = nn.Linear(width, 1)
        nn.init.zeros_(last.weight)
        nn.init.zeros_(last.bias)
        self.net = nn.Sequential(*layers, last)

    def _parts(self, full: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The card planes ``[B, P, 52]`` (the observation's, the features', the joker ones)
        and the rest ``[B, R]`` (the observation after its card planes, the loose counts, the
        stock steps with ``stock_steps``)."""
        b, o = full.shape[0], self.obs_dim
        counts_at = o + 52 * CARD_PLANES
        planes = [full[:, : 52 * self.planes].reshape(b, self.planes, 52),
                  full[:, o:counts_at].reshape(b, CARD_PLANES, 52)]
        start = counts_at + 2 * LOOSE_COUNTS
        if self.plan:  # the plan of the hand, then of the hand plus upcard: 3 planes and 6 counts each
            per = 3 * 52 + PLAN_COUNTS
            hands = full[:, start:start + 2 * per].reshape(b, 2, per)
            planes.append(hands[:, :, : 3 * 52].reshape(b, 6, 52))
        elif self.feature_planes > CARD_PLANES:  # the joker planes, after the loose counts
            planes.append(full[:, start:start + 4 * 52].reshape(b, 4, 52))
        rest = [full[:, 52 * self.planes:o], full[:, counts_at:counts_at + 2 * LOOSE_COUNTS]]
        if self.plan:
            rest.append(hands[:, :, 3 * 52:].reshape(b, 2 * PLAN_COUNTS))
        if self.stock_steps:  # the size is k / STOCK_SCALE: the step at k + 0.5 is exact
            stock = full[:, self.stock_at:self.stock_at + 1] * STOCK_SCALE
            rest.append((stock > self.steps_at).to(full.dtype))
        return torch.cat(planes, 1), torch.cat(rest, 1)

    def inputs(self, full: torch.Tensor) -> torch.Tensor:
        """Float32 ``[B, 52, D]``: each card's input row (see the class docstring): the planes
        at its eight neighbours (plane-major), the rest, its rank."""
        b = full.shape[0]
        planes, rest = self._parts(full)
        near = planes[:, :, self.nb].permute(0, 2, 1, 3).reshape(b, 52, -1)            # [B, 52, P * 8]
        return torch.cat([near, rest[:, None, :].expand(b, 52, rest.shape[1]),
                          self.ranks.to(full.dtype).expand(b, 52, 13)], 2)

    def forward(self, full: torch.Tensor) -> torch.Tensor:
        """``self.net(self.inputs(full))`` ``[B, 52]``, computed without building the inputs:
        the first layer's product split into the planes at the neighbours (gathered once, a
        card's eight in a row), the rest of the observation (once per row, not per card) and
        the rank (once per card), then summed (forward and backward in half the time of the
        inputs' way on batches of 2,048)."""
        b = full.shape[0]
        planes, rest = self._parts(full)
        p = planes.shape[1]
        at = torch.nn.functional.pad(planes, (0, 1)).transpose(1, 2)                   # [B, 53, P]
        near = at[:, self.nb.reshape(-1)].reshape(b, 52, 8 * p)                       # slot-major
        first = self.net[0]
        w = first.weight
        w_near = w[:, : 8 * p].reshape(-1, p, 8).transpose(1, 2).reshape(-1, 8 * p)  # inputs() is plane-major
        w_rest, w_rank = w[:, 8 * p: 8 * p + rest.shape[1]], w[:, 8 * p + rest.shape[1]:]
        h = (near @ w_near.t() + (rest @ w_rest.t() + first.bias)[:, None, :]
             + (self.ranks.to(w.dtype) @ w_rank.t()).to(near.dtype))
        return self.net[1:](h).squeeze(-1)


def add_discard_scores(logits: torch.Tensor, scores: torch.Tensor | None) -> torch.Tensor:
    """``logits`` float ``[B, N]`` with ``scores`` ``[B, 52]`` added to the ``discard <card>``
    ids (``actions.DISCARD_BASE`` + card, the same ids at every kind of table); ``scores``
    None: ``logits`` unchanged."""
    if scores is None:
        return logits
    from rummy_env.actions import DISCARD_BASE

    pad = (DISCARD_BASE, logits.shape[1] - DISCARD_BASE - 52)
    return logits + torch.nn.functional.pad(scores.to(logits.dtype), pad)


class CardFeatures(BaseFeaturesExtractor):
    """SB3 features extractor: the observation, optionally followed by ``CardMeldFeatures``
    (``cards=True``), optionally followed by one learned ``Linear + Tanh`` layer of width
    ``trunk`` shared by the policy and the value network (``trunk=0``: none).

    Pass ``policy_kwargs=dict(features_extractor_class=CardFeatures,
    features_extractor_kwargs=dict(cards=True, trunk=256))`` to ``MaskablePPO``.
    ``features_dim`` is ``trunk`` if set, else ``obs_dim + EXTRA`` with cards (548 + 1208
    = 1756 for 2 players), else ``obs_dim``.

    ``num_players`` / ``kind`` name the table (``Table.num_players``, ``Table.kind``); every
    policy trained since the deck variants saves both in its ``features_extractor_kwargs``.
    Without them (a file of release 0.1, which had only the standard and 500 Rum tables)
    the table is that release's table of this observation size (``table.legacy_table``).
    The deck-variant pieces after the standard layout pass through unchanged; ``jokers=True``
    adds the joker planes (``CardMeldFeatures``, a table with jokers only), ``plan=True`` the
    meld plan (``features="cards+plan"``, a standard table only).

    ``discard_head=True`` or ``"cards"`` (``TrainConfig.discard_head = "cards"``), or
    ``"cards+stock"`` (the head also reads the stock steps), also holds a
    ``CardDiscardHead`` (``discard_scorer``), which ``forward`` does not use: the policy adds
    ``discard_scores(full)`` to its logits (``add_discard_scores``; ``full``: the card features,
    ``full_features``). Its weights are the extractor's, so they are saved, loaded and copied
    with it.

    Raises:
        ValueError: the observation space is not a flat Box of the table, ``trunk < 0``, or
            ``jokers``, ``plan`` or ``discard_head`` without ``cards``, ``discard_head`` not one of
            False, None, True, ``"cards"``, ``"cards+stock"``, ``jokers`` at a table without jokers,
            ``plan`` at a table that is not standard, or ``plan`` with ``jokers``.
    """

    def __init__(self, observation_space: gym.spaces.Box, cards: bool = True, trunk: int = 0,
                 num_players: int | None = None, kind: str | None = None, jokers: bool = False,
                 discard_head: bool | str = False, plan: bool = False) -> None:
        if len(observation_space.shape) != 1:
            raise ValueError(f"CardFeatures needs a flat observation, got shape {observation_space.shape}")
        if not isinstance(trunk, int) or trunk < 0:
            raise ValueError(f"trunk must be an int >= 0, got {trunk!r}")
        obs_dim = int(observation_space.shape[0])
        if num_players is None:  # a file of release 0.1 (standard or 500 Rum only), saved without its table
            num_players, kind = legacy_table(obs_dim)
        kind = kind or "standard"
        if jokers and not cards:
            raise ValueError("jokers=True adds planes to the card features: it needs cards=True")
        if plan and not cards:
            raise ValueError("plan=True adds the meld plan to the card features: it needs cards=True")
        if plan and jokers:
            raise ValueError("plan=True is for standard tables, jokers=True for tables with jokers: not both")
        core: nn.Module = CardMeldFeatures(obs_dim, num_players, kind, jokers, plan) if cards else nn.Identity()
        width = core.out_dim if cards else obs_dim
        super().__init__(observation_space, trunk or width)
        self.num_players, self.kind = num_players, kind  # the table, told (ActorNet.from_policy copies it)
        self.core = core
        self.trunk = nn.Sequential(nn.Linear(width, trunk), nn.Tanh()) if trunk else nn.Identity()
        if discard_head not in (False, None) and discard_head not in DISCARD_HEAD_KINDS:
            raise ValueError(f"discard_head must be False, True, 'cards' or 'cards+stock', got {discard_head!r}")
        if discard_head and not cards:
            raise ValueError("discard_head=True scores the discards from the card features: it needs cards=True")
        # not part of forward (the features the MLPs read): the policy adds its scores to the logits
        self.discard_scorer = (CardDiscardHead(core, stock_steps=DISCARD_HEAD_KINDS[discard_head])
                               if discard_head else None)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """``observations`` float32 ``[B, obs_dim]``, or with ``cards`` ``[B, obs_dim + EXTRA]``
        (``+ JOKER_EXTRA`` with the joker planes): observations followed by their card
        features (``fixed``), as the PPO update's rollout buffer holds them
        (``policy.FixedFeaturesRolloutBuffer``), which skips computing them again; the
        output is the same either way. Returns float32 ``[B, features_dim]``."""
        x = observations.float()
        if self.has_fixed and x.shape[1] == self.core.out_dim:
            return self.trunk(x)
        return self.trunk(self.core(x))

    def full_features(self, observations: torch.Tensor) -> torch.Tensor:
        """Float32 ``[B, core.out_dim]``: the observations followed by their card features
        (given as they are when they already are: ``[B, obs_dim + EXTRA]``)."""
        x = observations.float()
        if self.has_fixed and x.shape[1] == self.core.out_dim:
            return x
        return self.core(x)

    def discard_scores(self, full: torch.Tensor) -> torch.Tensor | None:
        """The ``discard_scorer``'s float32 ``[B, 52]`` scores of ``full`` (``full_features``),
        None without a discard head."""
        return None if self.discard_scorer is None else self.discard_scorer(full)

    def scored(self, logits: torch.Tensor, full: torch.Tensor) -> torch.Tensor:
        """``logits`` ``[B, N]`` with the discard head's scores of ``full`` added to the discard
        ids (``add_discard_scores``); unchanged without a discard head."""
        return add_discard_scores(logits, self.discard_scores(full))

    @property
    def has_fixed(self) -> bool:
        """True with ``cards=True``: the card features are a weightless part (``fixed``)."""
        return isinstance(self.core, CardMeldFeatures)

    def fixed(self, observations: torch.Tensor) -> torch.Tensor:
        """The card features after the observation, float32 ``[B, EXTRA]`` (no learned
        weights; ``cards=True`` only): ``forward(o) == from_fixed(o, fixed(o))``."""
        return self.core(observations.float())[:, self.core.obs_dim:]

    def from_fixed(self, observations: torch.Tensor, extra: torch.Tensor) -> torch.Tensor:
        """``forward(observations)`` given ``extra = fixed(observations)`` (any dtype that
        holds its values exactly, e.g. the warm start's uint8 cache)."""
        return self.trunk(torch.cat([observations.float(), extra.float()], dim=1))


def network_settings(policy_kwargs: dict) -> dict:
    """The config keys that shape a policy's network (``features``, ``discard_head``,
    ``trunk``, ``net_arch``: TrainConfig's names and values) read from an SB3 policy's
    ``policy_kwargs`` as ``rummy train`` writes them (``Trainer``: the features extractor's
    kwargs; a live policy's are its ``features_extractor_class`` and
    ``features_extractor_kwargs``: ``ActorNet.from_policy`` reads them here too). A policy
    without ``CardFeatures`` has ``features = "none"`` and trunk 0; ``CardFeatures``' own
    defaults hold for the kwargs not given (``cards=True``). Returns a dict of those four keys
    (``net_arch``: the policy head's layer widths, a list of ints, empty when not given);
    keys of ``policy_kwargs`` it does not know are ignored, so it raises nothing."""
    cls = policy_kwargs.get("features_extractor_class")
    card = isinstance(cls, type) and issubclass(cls, CardFeatures)
    fx = dict(policy_kwargs.get("features_extractor_kwargs") or {}) if card else {}
    arch = policy_kwargs.get("net_arch") or []
    pi = list(arch.get("pi", [])) if isinstance(arch, dict) else list(arch)
    if not card or not fx.get("cards", True):
        features = "none"
    elif fx.get("jokers"):
        features = "cards+jokers"
    elif fx.get("plan"):
        features = "cards+plan"
    else:
        features = "cards"
    head = fx.get("discard_head", False)
    return {"features": features, "discard_head": "cards" if head is True else (head or "dense"),
            "trunk": int(fx.get("trunk", 0) or 0), "net_arch": pi}
