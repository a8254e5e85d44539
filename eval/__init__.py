"""Evaluation: duplicate-deal tournaments (``eval.tournament``) and ``rummy eval`` (``eval.cli``).

For training code: ``from eval.tournament import evaluate`` plays a policy object
against a baseline and returns its win rate and mean points with 95% intervals.
"""
