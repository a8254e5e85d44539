"""Issue 25, session 28: which of a clone's decisions cost it its teacher's strength? Not part
of the package: a record of the experiment. From the repository's root:

    PYTHONPATH=experiments RUMMY_STUDENT=runs/cardhead/run/final_model.zip rummy eval \\
        --agents issue25_hybrid:hold heuristic --rules classic --deals 500 --seed 9702 --workers 2
    (and ``issue25_hybrid:draw``, ``:discard``, ``:meld``, ``:student`` and ``:teacher``)

The agents are the cutting heuristic (``heuristic:cutting``, the teacher) with one class of
its decisions taken by a student policy (``RUMMY_STUDENT``, an SB3 zip). At each decision
both are asked (they act on the same observation and mask) and the decision falls in one
class:

- ``draw``: the teacher draws (RULES.md §3): from the stock or the discard pile;
- ``hold``: one of them discards and the other melds or lays off: whether to put cards down
  now or keep them in hand (§3, §5: going rummy pays double);
- ``discard``: both discard: which card;
- ``meld``: both meld or lay off: which meld or lay-off.

The agent named after a class plays the student's move in that class and the teacher's
elsewhere; ``student`` plays the student's move everywhere (the student itself, as the
classes cover every decision) and ``teacher`` never (the teacher itself). On the same
match seeds each agent's loss against ``teacher`` is what the student's decisions of that
class cost. Classic two-player tables (the teacher's action ids).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from issue25_disagreement import kind  # noqa: E402,F401 - the kinds of a classic action id

from rummy_env.agents import make_agent  # noqa: E402

CLASSES = ("draw", "hold", "discard", "meld")


def decision_class(teacher_move: int, student_move: int) -> str:
    """The class (``CLASSES``) of a decision where the teacher plays ``teacher_move`` and the
    student ``student_move`` (see the module docstring)."""
    t, s = kind(teacher_move), kind(student_move)
    if t == "draw":
        return "draw"
    if (t == "discard") != (s == "discard"):
        return "hold"
    return "discard" if t == "discard" else "meld"


class Hybrid:
    """The teacher with the student's moves in ``classes`` (a subset of ``CLASSES``).

    Args:
        classes: the decision classes the student takes.
        student: an agent name (``make_agent``); default ``ppo:`` + ``RUMMY_STUDENT``.
        teacher: an agent name, default ``heuristic:cutting``.
        seed: passed to both agents.

    Raises:
        ValueError: a class not in ``CLASSES``, or no student named and ``RUMMY_STUDENT`` unset.
    """

    def __init__(self, classes, student: str | None = None, teacher: str = "heuristic:cutting",
                 seed: int | None = None) -> None:
        bad = set(classes) - set(CLASSES)
        if bad:
            raise ValueError(f"unknown decision classes {sorted(bad)}; the classes are {', '.join(CLASSES)}")
        if student is None:
            path = os.environ.get("RUMMY_STUDENT")
            if not path:
                raise ValueError("set RUMMY_STUDENT to the student's SB3 zip (e.g. runs/cardhead/run/final_model.zip)")
            student = "ppo:" + str(Path(path))
        self.classes = frozenset(classes)
        self.teacher = make_agent(teacher, seed=seed)
        self.student = make_agent(student, seed=seed)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        t = self.teacher.act(observation, action_mask)
        s = self.student.act(observation, action_mask)
        return s if decision_class(t, s) in self.classes else t


def _factory(classes):
    def make(seed: int | None = None) -> Hybrid:
        return Hybrid(classes, seed=seed)
    return make


draw, hold, discard, meld = (_factory([c]) for c in CLASSES)
student = _factory(CLASSES)
teacher = _factory(())
