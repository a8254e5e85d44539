"""Issue 25, session 28: at which stock sizes does a clone put cards down where its teacher
holds them (or the reverse)? Not part of the package: a record of the experiment. From the
repository's root:

    python experiments/issue25_hold_by_stock.py runs/cardhead/run/final_model.zip --hands 150

The student (an SB3 zip) plays ``hands`` classic hands against ``heuristic`` (seats
alternating by hand, hand ``h`` dealt with seed ``7000 + h``); at each of its decisions after
the draw the teacher (``heuristic:cutting``) is asked too, and a ``hold`` disagreement (one of
the two discards, the other melds or lays off: experiments/issue25_hybrid.py) is counted by
the stock's size at that moment. Printed: a line per (stock size, teacher's kind, student's
kind) with its count and the student's decisions after the draw at that stock size.
"""
from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from issue25_disagreement import kind, paired_moves  # noqa: E402
from issue25_hybrid import decision_class  # noqa: E402


def hold_by_stock(student: str, hands: int = 150, teacher: str = "heuristic:cutting",
                  opponent: str = "heuristic") -> tuple[collections.Counter, collections.Counter]:
    """``(disagreements, decisions)``: Counters keyed ``(stock, teacher_kind, student_kind)``
    and ``stock`` (see the module docstring); ``student`` an agent name. The hands are
    ``issue25_disagreement.paired_moves``' with seed 7."""
    differ, total = collections.Counter(), collections.Counter()
    for env, t, a in paired_moves(student, teacher, opponent, hands, seed=7):
        if kind(t) != "draw":
            stock = len(env.unwrapped.state.stock)
            total[stock] += 1
            if decision_class(t, a) == "hold":
                differ[stock, kind(t), kind(a)] += 1
    return differ, total


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("student", help="the student's SB3 zip")
    p.add_argument("--hands", type=int, default=150)
    a = p.parse_args(argv)
    differ, total = hold_by_stock("ppo:" + a.student, a.hands)
    for (stock, tk, sk), c in sorted(differ.items()):
        print(f"stock {stock:2d}: teacher {tk:8s} student {sk:8s} {c:4d} of {total[stock]}")
    print(f"in all: {sum(differ.values())} of {sum(total.values())} decisions after the draw")


if __name__ == "__main__":
    main(sys.argv[1:])
