"""Evaluation: duplicate-deal tournaments (``rummy_env.eval.tournament``), the referee of
every call into an agent during play (``rummy_env.eval.referee``: the per-decision limit,
and the one-line ``AgentError`` of an agent that fails) and ``rummy eval``
(``rummy_env.eval.cli``).

For training code: ``from rummy_env.eval.tournament import evaluate`` plays a policy object
against a baseline and returns its win rate and mean points with 95% intervals.
"""
