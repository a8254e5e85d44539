"""``MeldPlanFeatures``: the meld plan of a hand (its best partition and lay-offs) inside the network.

``CardMeldFeatures``' loose cards (in no set and no 3-card run window of the hand) are a
lower bound of the cards a hand cannot put down: where melds overlap (a card in a set and
in a run) it counts none loose though one meld must give the card up. The holding
heuristics decide when to put melds down, which melds and which card to throw from the
exact plan (``meld_analysis.meld_plan``: the disjoint melds that leave the least deadwood,
RULES.md §3-§5, then what the table takes by lay-offs); a clone of ``heuristic:cutting``
put cards down where its teacher held them at 13% of the positions where the two counts
differ and at 2.4% where they agree (experiments/issue25_loose_plan.py, docs/training.md).

This module computes the plan with fixed tensor operations (no learned weights, ONNX
exportable), for a hand ``X`` of a standard table (RULES.md §1-§9; not the deck variants):

1. the melds ``X`` holds, from a catalogue of the sets of 3 and 4 and the runs of 3 to 5
   cards legal under the table's aces option (``rule_aces``): every longer run is two or
   three of them with the same cards and points, so nothing is lost;
2. the most points covered by at most ``SLOTS`` (3) pairwise disjoint held melds (exact for
   hands of up to 11 cards, which hold no more than 3 disjoint melds: the hand after its
   draw at every preset's standard table, 10 dealt heads-up, RULES.md §2; a ``hand_size``
   of 11 to 13 may hold 4, and the plan then covers 3 of them), among the ``TOP`` (14) held melds of most
   points (exact when the hand holds no more: a 7-card run in one suit holds 12, a run of 8
   holds 15), with the ace
   worth 11 with ``rule_ace_points_11``, else 1 (§5); among partitions of equal points the
   first in the candidates' order wins (held melds by points, ties to the lower catalogue
   index; not always ``best_partition``'s choice), the same in torch and in ONNX;
3. when the rules allow lay-offs (``rule_layoffs``), the rest of ``X`` laid off one card
   after another on the table's melds (the observation's ``layoff_set``/``_low``/``_high``
   planes) and on the partition's own melds (``melds.meld_layoff_masks``: a set's missing
   fourth card, a run's next card at either end), as ``meld_analysis.layoff_closure``.

Per hand it outputs the planes ``melded`` (cards of the partition), ``placed`` (laid off)
and ``unplaced`` (the rest of ``X``), then the unplaced count one-hot 0, 1, 2, 3, 4, 5+:
``3 * 52 + 6 = 162`` features, for the hand and for the hand plus the upcard (what taking
the upcard gives): ``PLAN_EXTRA = 324``. Shapes: ``forward`` input float32 ``[B, obs_dim]``,
output float32 ``[B, PLAN_EXTRA]``; every value is 0 or 1.
"""
from __future__ import annotations

import torch
from torch import nn

from rummy_env.cards import mask_points
from rummy_env.melds import (MELD_HI, MELD_KEY, MELD_KIND, MELD_LO, MELD_MASK, NUM_MELDS, SET, meld_allowed,
                               meld_layoff_masks)
from rummy_env.observation import ACES_ORDER, offsets

SLOTS = 3
"""Disjoint melds a partition may use (an 11-card hand holds at most 3)."""
TOP = 14
"""Held melds searched (those of most points; exact when the hand holds no more)."""
COUNTS = 6  # the unplaced count one-hot: 0, 1, 2, 3, 4, 5+
PER_HAND = 3 * 52 + COUNTS
PLAN_EXTRA = 2 * PER_HAND
CLOSURE_STEPS = 11  # a lay-off chain is at most as long as a hand


def plan_catalogue() -> list[int]:
    """The catalogue ids (``rummy_env.melds``) the plan searches: the sets of 3 and 4 and the
    runs of 3 to 5 cards (positions ``lo..hi`` with ``hi <= 13``), 197 ids in catalogue order."""
    return [m for m in range(NUM_MELDS)
            if MELD_KIND[m] == SET or 3 <= MELD_HI[m] - MELD_LO[m] + 1 <= 5]


def _bits(mask: int) -> torch.Tensor:
    return torch.tensor([(mask >> c) & 1 for c in range(52)], dtype=torch.float32)


class MeldPlanFeatures(nn.Module):
    """The meld plan of the hand and of the hand plus the upcard (see the module docstring).

    Args:
        obs_dim: the observation's size; ``num_players``: the table's player count (a
            standard table: ``offsets(num_players)`` gives the pieces read).

    Raises:
        ValueError: ``obs_dim`` is not a standard table's observation of ``num_players``.
    """

    def __init__(self, obs_dim: int, num_players: int) -> None:
        super().__init__()
        from rummy_env.observation import obs_size

        if obs_size(num_players) != obs_dim:
            raise ValueError(f"meld-plan features need a standard table's observation ({obs_size(num_players)} "
                             f"entries for {num_players} players), got {obs_dim} entries; the deck variants "
                             f"and 500 Rum have none (RULES.md §10)")
        off = offsets(num_players)
        self.obs_dim = obs_dim
        self.aces = off["rule_aces"].start
        self.ap11 = off["rule_ace_points_11"].start
        self.layoffs = off["rule_layoffs"].start
        self.table_planes = [off[k].start // 52 for k in ("layoff_set", "layoff_low", "layoff_high")]
        ids = plan_catalogue()
        r = len(ids)
        masks = torch.stack([_bits(MELD_MASK[m]) for m in ids])                       # [R, 52]
        pts = {ap: torch.tensor([mask_points(MELD_MASK[m], ap) for m in ids], dtype=torch.float32) for ap in (1, 11)}
        legal = torch.tensor([[float(meld_allowed(m, a)) for m in ids] for a in ACES_ORDER])   # [3, R]
        acc = torch.zeros(3, 3, r + 1, 52)  # aces option, (set, low, high), meld (R: none), card
        for a, aces in enumerate(ACES_ORDER):
            for i, m in enumerate(ids):
                for t, mask in enumerate(meld_layoff_masks(MELD_KIND[m], MELD_KEY[m], MELD_MASK[m], MELD_LO[m],
                                                           MELD_HI[m], aces)):
                    acc[a, t, i] = _bits(mask)
        # the next card of a run's end once a card was laid there (meld_analysis.next_low /
        # next_high), as shifts by one card: card c + 1 opens c below it unless c + 1 is an ace
        # (c a king of the suit before) or a 2 under aces="high"; c - 1 opens c above it for c
        # a 2..K (an ace opens nothing), and a king opens its suit's ace unless aces="low"
        rank = torch.arange(52) % 13
        below_ok = torch.stack([((rank <= 11) & ~((rank == 0) & (aces == "high"))).float() for aces in ACES_ORDER])
        above_ok = (rank >= 2).float()
        king_ace = torch.tensor([float(aces != "low") for aces in ACES_ORDER])
        zero = torch.zeros(1, 52)
        self.register_buffer("masks", torch.cat([masks, zero]), persistent=False)        # [R + 1, 52]: R = none
        self.register_buffer("sizes", masks.sum(1), persistent=False)
        self.register_buffer("pts1", pts[1], persistent=False)
        self.register_buffer("pts11", pts[11], persistent=False)
        self.register_buffer("legal", legal, persistent=False)
        self.register_buffer("acc", acc.reshape(9 * (r + 1), 52), persistent=False)
        self.register_buffer("below_ok", below_ok, persistent=False)                     # [3, 52]
        self.register_buffer("above_ok", above_ok, persistent=False)                     # [52]
        self.register_buffer("king_ace", king_ace[:, None], persistent=False)            # [3, 1]
        self.register_buffer("tie_break", torch.arange(r, dtype=torch.float32) * 1e-3, persistent=False)  # [R]
        self.register_buffer("count_values", torch.arange(COUNTS - 1, dtype=torch.float32), persistent=False)
        self.none = r

    def partition(self, x: torch.Tensor, aces: torch.Tensor, ap11: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The best partition of hands ``x`` (float 0/1 ``[B, 52]``) under ``aces`` (one-hot
        ``[B, 3]``, ``ACES_ORDER``) and ``ap11`` (``[B, 1]``, 1: an ace counts 11): ``(ids,
        points)``, int64 ``[B, SLOTS]`` plan-catalogue indices (``plan_catalogue()``; the
        catalogue's size, 197, for an empty slot) and float32 ``[B]`` points covered."""
        b = x.shape[0]
        held = (x @ self.masks[:-1].t() == self.sizes) & ((aces @ self.legal) > 0.5)      # [B, R]
        value = self.pts1 + ap11 * (self.pts11 - self.pts1)                                # [B, R]
        # held melds first, by points, ties to the lower catalogue index: the tie-break term
        # (< 0.2 < 1 point) makes every score distinct, so torch's topk and ONNX's TopK give the
        # same candidates in the same order (torch.topk orders equal values arbitrarily)
        score = torch.where(held, value + 1.0, torch.zeros_like(value)) - self.tie_break    # [B, R]
        _, top = torch.topk(score, TOP, dim=1)                                             # [B, K]
        ok = held.gather(1, top)
        cand = torch.where(ok, top, torch.full_like(top, self.none))
        cand = torch.cat([cand, torch.full((b, 1), self.none, dtype=cand.dtype, device=x.device)], 1)  # [B, K + 1]
        val = torch.cat([torch.where(ok, value.gather(1, top), torch.zeros_like(value[:, :TOP])),
                         torch.zeros(b, 1, dtype=x.dtype, device=x.device)], 1)
        m = self.masks[cand]                                                               # [B, K + 1, 52]
        apart = (m @ m.transpose(1, 2)) < 0.5                                              # [B, K + 1, K + 1]
        neg = torch.tensor(-1e4, dtype=val.dtype, device=x.device)
        pair = torch.where(apart, val[:, :, None] + val[:, None, :], neg)                 # [B, i, j]
        triple = pair[:, :, :, None] + val[:, None, None, :]
        triple = torch.where(apart[:, :, None, :] & apart[:, None, :, :], triple, neg)    # [B, i, j, k]
        best, flat = triple.reshape(b, -1).max(dim=1)
        n = cand.shape[1]
        i, j, k = flat // (n * n), (flat // n) % n, flat % n
        ids = torch.stack([cand.gather(1, t[:, None])[:, 0] for t in (i, j, k)], 1)       # [B, 3]
        return ids, best

    def plan(self, x: torch.Tensor, aces: torch.Tensor, ap11: torch.Tensor, table: torch.Tensor,
             layoffs: torch.Tensor) -> torch.Tensor:
        """``[B, PER_HAND]`` for hands ``x`` (see the module docstring); ``table`` float ``[B, 3, 52]``
        the table's lay-off planes, ``layoffs`` ``[B, 1]`` (1: lay-offs allowed)."""
        b = x.shape[0]
        ids, _ = self.partition(x, aces, ap11)
        melded = self.masks[ids].sum(1)                                                    # disjoint: 0/1
        a = aces.argmax(1)                                                                 # [B]
        kinds = torch.arange(3, device=x.device)
        at = (a[:, None, None] * 3 + kinds[None, :, None]) * (self.none + 1) + ids[:, None, :]   # [B, 3 kinds, 3 slots]
        own = self.acc[at].amax(2)                                                         # [B, 3, 52]
        st, low, high = (torch.maximum(table[:, t], own[:, t]) * layoffs for t in range(3))
        below_ok = aces @ self.below_ok                                                    # [B, 52]
        king_ace = aces @ self.king_ace                                                    # [B, 1]
        rest = x * (1.0 - melded)
        placed = torch.zeros_like(x)
        for _ in range(CLOSURE_STEPS):
            new = rest * torch.clamp(st + low + high, max=1.0)
            on_low = new * low
            on_high = new * high * (1.0 - low)
            placed = placed + new
            rest = rest - new
            opened_low = torch.nn.functional.pad(on_low[:, 1:], (0, 1)) * below_ok
            kings = on_high.reshape(b, 4, 13)[:, :, 12:] * king_ace[:, :, None]          # [B, 4, 1]
            opened_high = (torch.nn.functional.pad(on_high[:, :-1], (1, 0)) * self.above_ok
                           + torch.nn.functional.pad(kings, (0, 12)).reshape(b, 52))
            low = torch.clamp(low * (1.0 - on_low) + opened_low, max=1.0)
            high = torch.clamp(high * (1.0 - on_high) + opened_high, max=1.0)
            st = st * (1.0 - new)
        n = rest.sum(1, keepdim=True)
        counts = torch.cat([(n == self.count_values).to(x.dtype), (n >= COUNTS - 1).to(x.dtype)], 1)
        return torch.cat([melded, placed, rest, counts], 1)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """float32 ``[B, obs_dim]`` -> float32 ``[B, PLAN_EXTRA]``: the plan of the hand, then of
        the hand plus the upcard."""
        obs = obs.float()
        b = obs.shape[0]
        hand, upcard = obs[:, :52], obs[:, 52:104]
        aces = obs[:, self.aces:self.aces + 3]
        ap11 = obs[:, self.ap11:self.ap11 + 1]
        table = obs[:, : 52 * (max(self.table_planes) + 1)].reshape(b, -1, 52)[:, self.table_planes]
        layoffs = obs[:, self.layoffs:self.layoffs + 1]
        # both plans in one pass over 2B rows (every operation is row by row, so the features are
        # the same): half the operator calls of two passes; about a tenth off one observation's
        # plan as measured (load ~4.5), most of its time being the lay-off steps' many small ops
        both = self.plan(torch.cat([hand, torch.clamp(hand + upcard, max=1.0)]), aces.repeat(2, 1),
                         ap11.repeat(2, 1), table.repeat(2, 1, 1), layoffs.repeat(2, 1))
        return torch.cat([both[:b], both[b:]], 1)


__all__ = ["MeldPlanFeatures", "PLAN_EXTRA", "SLOTS", "TOP", "plan_catalogue"]
