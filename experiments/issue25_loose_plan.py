"""Issue 25, session 29: are a clone's meld-or-hold errors where its loose-card count is wrong?
Not part of the package: a record of the experiment. From the repository's root:

    python experiments/issue25_loose_plan.py runs/cardstock/run/final_model.zip --hands 300

The student (an SB3 zip) plays ``hands`` classic hands against ``heuristic`` (as
experiments/issue25_hold_by_stock.py: ``issue25_disagreement.paired_moves``, seed 7); at each of
its decisions after the draw where it may both meld (or lay off) and discard, the teacher
(``heuristic:cutting``) is asked too and the decision's class is counted (``issue25_hybrid``:
``hold`` when one of the two discards and the other puts cards down) by whether the network's
loose-card count (``CardMeldFeatures``: cards of the hand in no set and no 3-card run window and
not taken by the table) equals the cards the teacher's plan leaves in hand
(``meld_analysis.meld_plan``: the best partition and its lay-offs, RULES.md §3-§5). Printed: a
line per (class, agrees or differs) with its count, then the share of ``hold`` errors among the
positions where the two counts differ and where they agree.
"""
from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from issue25_disagreement import paired_moves  # noqa: E402
from issue25_hybrid import decision_class  # noqa: E402

from rummy_env.actions import DISCARD_BASE, MELD_BASE  # noqa: E402
from rummy_env.meld_analysis import meld_plan  # noqa: E402
from rummy_env.observation import PlayerView  # noqa: E402


def loose_count(observation: np.ndarray) -> int:
    """The network's loose-card count of the hand (``CardMeldFeatures``' loose plane) of a
    two-player standard observation."""
    import torch

    from rummy_env.train.features import CARD_PLANES, CardMeldFeatures

    f = _features(CardMeldFeatures)
    out = f(torch.as_tensor(np.asarray(observation, dtype=np.float32)[None]))[0]
    start = f.obs_dim + 52 * (CARD_PLANES - 2)  # the loose plane of the hand, then of the hand plus upcard
    return int(round(float(out[start:start + 52].sum())))


_CACHE: dict = {}


def _features(cls):
    if cls not in _CACHE:
        _CACHE[cls] = cls(548, 2, "standard")
    return _CACHE[cls]


def plan_count(observation: np.ndarray, action_mask: np.ndarray) -> int:
    """The cards ``meld_plan`` leaves in the hand (not melded, not laid off)."""
    v = PlayerView(observation, action_mask)
    _, melded, placed = meld_plan(v.hand, v.aces, v.ace_points, v.layoff_masks if v.layoffs else None)
    return (v.hand & ~melded & ~placed).bit_count()


def loose_and_plan(student: str, hands: int = 300) -> collections.Counter:
    """Counter keyed ``(class, "agree" | "differ")`` over the student's decisions where a meld or
    lay-off and a discard are both legal (see the module docstring); ``student`` an agent name."""
    counts: collections.Counter = collections.Counter()
    for env, t, a in paired_moves(student, "heuristic:cutting", "heuristic", hands, seed=7):
        o = env.observe(env.agent_selection)
        obs, mask = o["observation"], o["action_mask"]
        if not (mask[MELD_BASE:].any() and mask[DISCARD_BASE:MELD_BASE].any()):
            continue
        same = loose_count(obs) == plan_count(obs, mask)
        counts[decision_class(t, a), "agree" if same else "differ"] += 1
    return counts


def main(argv: list[str] | None = None) -> collections.Counter:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("student", help="the student's SB3 zip")
    p.add_argument("--hands", type=int, default=300)
    a = p.parse_args(argv)
    counts = loose_and_plan("ppo:" + a.student, a.hands)
    for key in sorted(counts):
        print(f"{key[0]:8s} {key[1]:7s} {counts[key]:5d}")
    for side in ("differ", "agree"):
        n = sum(c for (_, s), c in counts.items() if s == side)
        print(f"hold errors where the counts {side}: {counts['hold', side]} of {n} ({counts['hold', side] / max(n, 1):.1%})")
    return counts


if __name__ == "__main__":
    main(sys.argv[1:])
