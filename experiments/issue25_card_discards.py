"""Issue 25, session 27: is the network's shape what keeps a clone of `heuristic:cutting` from
its teacher? Not part of the package: a record of the experiment. From the repository's root:

    python experiments/issue25_card_discards.py --decisions 300000 --epochs 6 --seed 5 --out runs/cd
    PYTHONPATH=experiments RUMMY_CARD_DISCARDS=runs/cd rummy eval \\
        --agents issue25_card_discards:percard heuristic --rules classic --deals 200 --seed 9601 --workers 2
    (and ``issue25_card_discards:flat`` on seed 9602; ``heuristic:cutting`` itself on 9601 and 9602)

The clones of the cutting heuristic (experiments/issue25_cutting_clone.toml and
issue25_cutting_clone_wide.toml) agree with it on 86-87% of the positions they reach
themselves, and most of what they get wrong is the discard (about a quarter of their
discards). The shipped network reads the card features (``CardMeldFeatures``, 52 planes a
feature) through fully connected layers, so what it learns about one card it must learn
again for each of the 52. This script fits two discard scorers on the same positions (the
teacher's discards, RULES.md §3: one card from the hand after the play phase) and gives their
agreement with the teacher on held-out positions (the last 20% of the hands played):

- ``flat``: the shipped shape: the observation and its card features, a Linear of 256
  (tanh), a Linear of 128 (tanh), a Linear to 52 discard logits;
- ``percard``: the package's discard head (``discard_head = "cards"``, train/features.py
  ``CardDiscardHead``): one small network shared by the 52 cards, which scores card ``c``
  from the card planes at ``c`` and at its seven neighbours (the three other cards of its
  rank, the cards one and two below and above it in its suit), the rest of the
  observation, the loose counts and ``c``'s rank.

Then the agents ``percard`` and ``flat`` play as `heuristic:cutting` does except for the
discard, which is the scorer's most probable legal discard: a scorer that agrees with the
teacher should keep its teacher's strength. Classic tables only. The positions are `heuristic:cutting`'s discards in hands where each
seat is the teacher (0.5), `greedy` (0.25) or `heuristic` (0.25) (``warmstart.collect``).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from rummy_env.actions import DISCARD_BASE, MELD_BASE
from rummy_env.observation import obs_size
from rummy_env.rules import Rules

OBS = obs_size(2)                           # 548 at a 2-player classic table
EXTRA_ALL = OBS + 52 * 23 + 12              # the observation and its card features (train/features.py)


def PerCard() -> nn.Module:
    """The package's discard head (``train/features.py`` ``CardDiscardHead``, as ``discard_head
    = "cards"`` builds it): ``[B, OBS + EXTRA]`` to ``[B, 52]``. Its last layer starts at
    zero; here it is fitted alone, so it starts as torch initialises a Linear."""
    from rummy_env.train.features import CardDiscardHead

    head = CardDiscardHead(_core())
    head.net[-1].reset_parameters()
    return head


class Flat(nn.Module):
    """The shipped network's shape (trunk 256, head [128], tanh): ``[B, OBS + EXTRA]`` to ``[B, 52]``."""

    def __init__(self) -> None:
        super().__init__()
        self.f = nn.Sequential(nn.Linear(EXTRA_ALL, 256), nn.Tanh(),
                               nn.Linear(256, 128), nn.Tanh(), nn.Linear(128, 52))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.f(x)


SCORERS = {"percard": PerCard, "flat": Flat}


def _core():
    from rummy_env.train.features import CardMeldFeatures
    return CardMeldFeatures(OBS, 2, "standard")


def agreement(model: nn.Module, X: torch.Tensor, M: torch.Tensor, Y: torch.Tensor, idx: np.ndarray) -> float:
    """Share of the positions ``idx`` where the scorer's most probable legal discard is the teacher's."""
    hits = 0
    with torch.no_grad():
        for i in range(0, len(idx), 4096):
            j = torch.as_tensor(idx[i:i + 4096])
            hits += int((model(X[j]).masked_fill(~M[j], -1e9).argmax(1) == Y[j]).sum())
    return hits / max(len(idx), 1)


def fit(model: nn.Module, X, M, Y, train: np.ndarray, held: np.ndarray, epochs: int, seed: int,
        name: str = "") -> list[dict]:
    """Adam (lr 1e-3, batches of 1,024) on the masked cross-entropy; per epoch the agreement on
    as many training positions as held-out ones, and on the held-out positions."""
    torch.manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    rows, t0 = [], time.time()
    for ep in range(epochs):
        order = train[np.random.default_rng(seed + ep).permutation(len(train))]
        for i in range(0, len(order), 1024):
            j = torch.as_tensor(order[i:i + 1024])
            loss = nn.functional.cross_entropy(model(X[j]).masked_fill(~M[j], -1e9), Y[j])
            opt.zero_grad()
            loss.backward()
            opt.step()
        row = dict(epoch=ep + 1, train=agreement(model, X, M, Y, train[: len(held)]),
                   held_out=agreement(model, X, M, Y, held), seconds=round(time.time() - t0, 1))
        print(f"{name} epoch {row['epoch']}: train {row['train']:.4f}, held-out {row['held_out']:.4f} "
              f"({row['seconds']:.0f} s)", flush=True)
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--decisions", type=int, default=500_000, help="teacher-labelled positions to play (all phases)")
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--out", default="runs/cd", help="folder for percard.pt, flat.pt and results.json")
    a = p.parse_args(argv)
    from rummy_env.train.warmstart import collect
    torch.set_num_threads(2)
    obs, masks, actions, _ = collect(Rules.preset("classic"), "heuristic:cutting", a.decisions, a.seed,
                                     behaviour={"teacher": 0.5, "greedy": 0.25, "heuristic": 0.25})
    keep = (actions >= DISCARD_BASE) & (actions < MELD_BASE)
    core = _core()
    with torch.no_grad():
        X = torch.cat([core(torch.as_tensor(obs[keep][i:i + 8192])) for i in range(0, int(keep.sum()), 8192)])
    M = torch.as_tensor(np.asarray(masks)[keep][:, DISCARD_BASE:MELD_BASE].astype(bool))
    Y = torch.as_tensor(actions[keep] - DISCARD_BASE)
    n = len(Y)
    cut = int(n * 0.8)  # positions are in the order played: the held-out ones are whole later hands
    train, held = np.arange(cut), np.arange(cut, n)
    print(f"{n:,} discard positions of {a.decisions:,}; {cut:,} to fit, {n - cut:,} held out", flush=True)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    res = dict(decisions=a.decisions, positions=n, held_out=n - cut, epochs=a.epochs, seed=a.seed)
    for name, cls in SCORERS.items():
        model = cls()
        res[name] = fit(model, X, M, Y, train, held, a.epochs, a.seed, name)
        torch.save(model.state_dict(), out / f"{name}.pt")
    (out / "results.json").write_text(json.dumps(res, indent=1))
    return res


class ScorerDiscards:
    """`heuristic:cutting` whose discards are a fitted scorer's most probable legal discard
    (its draws, melds, lay-offs and when to meld stay the heuristic's). Acts on the
    observation and mask alone."""

    def __init__(self, name: str, seed: int | None = None, folder: str | None = None) -> None:
        from rummy_env.agents import make_agent
        self.cut = make_agent("heuristic:cutting", seed=seed)
        self.core = _core()
        self.model = SCORERS[name]()
        path = Path(folder or os.environ.get("RUMMY_CARD_DISCARDS", "runs/cd")) / f"{name}.pt"
        self.model.load_state_dict(torch.load(path))
        self.model.eval()
        self.name = f"cutting+{name}"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        a = self.cut.act(observation, action_mask)
        if not DISCARD_BASE <= a < MELD_BASE:
            return a
        legal = torch.as_tensor(np.asarray(action_mask[DISCARD_BASE:MELD_BASE]).astype(bool))
        with torch.no_grad():
            x = self.core(torch.as_tensor(np.asarray(observation, dtype=np.float32)[None]))
            logits = self.model(x)[0].masked_fill(~legal, -1e9)
        return DISCARD_BASE + int(logits.argmax())


def percard(seed: int | None = None) -> ScorerDiscards:
    """The cutting heuristic with the per-card scorer's discards (``RUMMY_CARD_DISCARDS``/percard.pt)."""
    return ScorerDiscards("percard", seed)


def flat(seed: int | None = None) -> ScorerDiscards:
    """The cutting heuristic with the flat scorer's discards (``RUMMY_CARD_DISCARDS``/flat.pt)."""
    return ScorerDiscards("flat", seed)


if __name__ == "__main__":
    main(sys.argv[1:])
