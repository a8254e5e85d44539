"""Issue 25, session 29: a clone's meld-or-hold errors lean one way (it puts cards down where its
teacher holds them: experiments/issue25_hold_by_stock.py); does lowering its meld and lay-off
logits by a constant at the positions where it may also discard win the teacher's strength
back? Not part of the package: a record of the experiment. From the repository's root:

    PYTHONPATH=experiments RUMMY_STUDENT=runs/cardstock/run/final_model.zip RUMMY_MELD_BIAS=1 \\
        rummy eval --agents issue25_meld_bias:agent heuristic --rules classic --deals 500 --seed 9702 --workers 2
    python experiments/issue25_meld_bias.py runs/cardstock/run/final_model.zip --bias 0 0.5 1 2 3 --hands 300

``agent`` plays the student (``RUMMY_STUDENT``, an SB3 zip) greedily on its logits, with
``RUMMY_MELD_BIAS`` (a number >= 0, default 1) taken off every meld and lay-off id (classic ids
54-578, ``rummy_env.actions``) whenever a discard is legal too (the play phase, RULES.md §3).
It reads the observation and the action mask only. The same shift is an edit of the policy's
last layer (the biases of those ids), so a network could ship with it.

The script counts, per bias, the biased student's disagreements with the teacher
(``heuristic:cutting``) by class (``issue25_hybrid.decision_class``) over ``hands`` classic hands
against ``heuristic`` (``issue25_disagreement.paired_moves``, seed 7), the ``hold`` ones split
into the student putting cards down where the teacher discards and the reverse.
"""
from __future__ import annotations

import argparse
import collections
import math
import os
import sys
from pathlib import Path
from unittest import mock

import numpy as np

from rummy_env.actions import DISCARD_BASE, MELD_BASE
from rummy_env.agents import make_agent
from rummy_env.agents.masking import mask_logits


class MeldBias:
    """The student with its meld and lay-off logits lowered by ``bias`` where a discard is legal.

    Args:
        student: an agent name with ``logits`` (``ppo:PATH``); default ``ppo:`` + ``RUMMY_STUDENT``.
        bias: the shift in logits (>= 0); default ``RUMMY_MELD_BIAS`` or 1.
        seed: unused (greedy play), accepted as every agent accepts it.

    Raises:
        ValueError: no student named and ``RUMMY_STUDENT`` unset, or a bias that is not a finite
            number >= 0.
    """

    def __init__(self, student: str | None = None, bias: float | None = None, seed: int | None = None) -> None:
        if student is None:
            path = os.environ.get("RUMMY_STUDENT")
            if not path:
                raise ValueError("set RUMMY_STUDENT to the student's SB3 zip (e.g. runs/cardstock/run/final_model.zip)")
            student = "ppo:" + str(Path(path))
        if bias is None:
            raw = os.environ.get("RUMMY_MELD_BIAS", "1")
            try:
                bias = float(raw)
            except ValueError:
                raise ValueError(f"RUMMY_MELD_BIAS must be a number >= 0, got {raw!r}") from None
        if not math.isfinite(bias) or bias < 0:
            raise ValueError(f"the meld bias must be a finite number >= 0, got {bias!r}")
        self.bias = float(bias)
        self.student = make_agent(student, seed=seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        """The legal id with the highest shifted logit (int)."""
        legal = np.asarray(action_mask).astype(bool)
        z = self.student.logits(observation).astype(np.float64)
        if legal[DISCARD_BASE:MELD_BASE].any():
            z[MELD_BASE:] -= self.bias
        return int(np.argmax(mask_logits(z, legal)))


def agent(seed: int | None = None) -> MeldBias:
    """``MeldBias`` from the environment (``RUMMY_STUDENT``, ``RUMMY_MELD_BIAS``)."""
    return MeldBias(seed=seed)


def disagreements(student_zip: str, bias: float, hands: int = 300) -> collections.Counter:
    """Counter of the biased student's disagreements with ``heuristic:cutting``: keys
    ``"draw"``, ``"discard"``, ``"meld"``, ``"puts down"`` (a ``hold`` decision where the student
    melds or lays off and the teacher discards), ``"holds"`` (the reverse), and ``"decisions"``
    (all of the student's decisions). ``student_zip`` an SB3 zip; the student plays as
    ``issue25_meld_bias:agent`` (this module, imported by name) with ``bias``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from issue25_disagreement import kind, paired_moves
    from issue25_hybrid import decision_class

    counts: collections.Counter = collections.Counter()
    env = {"RUMMY_STUDENT": str(student_zip), "RUMMY_MELD_BIAS": repr(float(bias))}
    with mock.patch.dict(os.environ, env):
        for _, t, a in paired_moves("issue25_meld_bias:agent", "heuristic:cutting", "heuristic", hands, seed=7):
            counts["decisions"] += 1
            if t != a:
                c = decision_class(t, a)
                counts[c if c != "hold" else "holds" if kind(a) == "discard" else "puts down"] += 1
    return counts


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("student", help="the student's SB3 zip")
    p.add_argument("--bias", type=float, nargs="+", default=[0.0, 1.0])
    p.add_argument("--hands", type=int, default=300)
    a = p.parse_args(argv)
    for b in a.bias:
        c = disagreements(a.student, b, a.hands)
        print(f"bias {b}: " + ", ".join(f"{k} {c[k]}" for k in ("decisions", "puts down", "holds", "discard", "meld",
                                                                  "draw")), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
