"""Issue 25, session 26: which of the guided search's two searched decisions adds to its
guide? Not part of the package: a record of the experiment, played as ``MODULE:ATTR``
agents. From the repository's root:

    PYTHONPATH=experiments rummy eval --agents issue25_search_parts:draws search --rules classic \\
        --deals 100 --seed 9311 --workers 2
    PYTHONPATH=experiments rummy eval --agents issue25_search_parts:discards search --rules classic \\
        --deals 100 --seed 9312 --workers 2

``SearchAgent(guide="pretrained")`` as shipped (docs/search.md, "Policy-guided search"),
but only one of its two searched decisions is searched: ``draws`` searches the draw (stock
or upcard, RULES.md §3) and plays the guide's discard; ``discards`` plays the guide's draw
and searches the discard (the guide's top 3 and the base's). Against the plain search on
the same seeds the guide alone (``pretrained``) and the full guided search are the rows
to compare with.
"""
from __future__ import annotations

from rummy_env.agents.search import SearchAgent
from rummy_env.engine import DRAW


class PartSearch(SearchAgent):
    """The guided search with one decision searched (``part``: ``"draw"`` or ``"discard"``);
    the other is the guide's most probable legal action."""

    def __init__(self, seed: int | None = None, part: str = "draw", **kw) -> None:
        super().__init__(seed, guide="pretrained", **kw)
        self.part = part

    def search(self, v, cands: list[int], prior: int | None = None) -> int:
        """``SearchAgent.search`` for the decision of ``part`` (``v.phase``: the draw or the
        play phase, RULES.md §3); for the other one the ``prior`` (the guide's move) at once,
        with no values (``last_values`` empty)."""
        searched = "draw" if v.phase == DRAW else "discard"
        if searched != self.part and prior is not None:
            self.last_values = {}
            return prior
        return super().search(v, cands, prior)


def draws(seed: int | None = None) -> PartSearch:
    """The guided search that searches the draw only."""
    return PartSearch(seed, "draw")


def discards(seed: int | None = None) -> PartSearch:
    """The guided search that searches the discard only."""
    return PartSearch(seed, "discard")
