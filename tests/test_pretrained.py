"""The shipped policy (agents/pretrained/): loads, plays legal moves, and its ONNX export
gives the same actions and the same tournament results as the SB3 policy."""
from __future__ import annotations

import numpy as np
import pytest

from extras import needs

needs("sb3_contrib")
needs("onnxruntime")

from rummy_env.agents import PRETRAINED_PATH, make_agent  # noqa: E402
from rummy_env.eval.tournament import evaluate  # noqa: E402
from rummy_env.observation import obs_size  # noqa: E402
from test_export import play_observations, session, torch_logits  # noqa: E402


@pytest.fixture(scope="module")
def shipped(classic_onnx_cache):
    """The shipped zip loaded by SB3 and its export (the web's cache folder of it: the same
    ``export_policy`` call, made once per test process)."""
    from sb3_contrib import MaskablePPO

    from rummy_env.frontends.web import exported_pretrained

    return {"model": MaskablePPO.load(PRETRAINED_PATH, device="cpu"), "export": exported_pretrained(classic_onnx_cache)}


def test_shipped_policy_is_for_classic_two_players(shipped):
    assert shipped["model"].observation_space.shape == (obs_size(2),)
    import json

    spec = json.loads((shipped["export"] / "spec.json").read_text())
    assert spec["rules"]["preset"] == "classic"


def test_export_of_the_shipped_policy_matches_on_1000_observations(shipped):
    model = shipped["model"]
    obs, masks = play_observations(model, 1000, seed=5)
    ml, act = session(shipped["export"]).run(["masked_logits", "action"], {"observation": obs, "action_mask": masks})
    ref = torch_logits(model, obs)
    legal = masks != 0
    # float32 sums in another order (onnxruntime's kernels and torch's pick them by CPU): each
    # logit is a sum of ~2,000 products and reaches |50|, so its last bits move by ~1e-5
    # relative and a few 1e-5 absolute near 0 from one CPU to another; 1e-4 of each is still
    # far below any gap between two moves that decides the action, which is compared exactly
    np.testing.assert_allclose(ml[legal], ref[legal], rtol=1e-4, atol=1e-4)
    # the chosen actions: the graph's, its masked logits' argmax, and torch's over the legal ones
    np.testing.assert_array_equal(act, np.where(legal, ml, -np.inf).argmax(axis=1))
    np.testing.assert_array_equal(act, np.where(legal, ref, -np.inf).argmax(axis=1))
    sb3_actions, _ = model.predict(obs, action_masks=legal, deterministic=True)
    np.testing.assert_array_equal(act, sb3_actions)


@pytest.mark.slow  # the export's actions are checked on 1,000 observations above (fast)
def test_shipped_policy_and_its_export_give_the_same_tournament(shipped):
    a = evaluate("pretrained", "greedy", rules="classic", deals=20, seed=3)
    b = evaluate(f"onnx:{shipped['export']}", "greedy", rules="classic", deals=20, seed=3)
    assert a["games"] == b["games"] == 40
    assert (a["wins"], a["voids"], a["mean_points"]) == (b["wins"], b["voids"], b["mean_points"])


def test_make_agent_pretrained_plays_legal_moves():
    from rummy_env import rummy_v0

    agent = make_agent("pretrained")
    env = rummy_v0.raw_env()
    env.reset(seed=11)
    while not env.terminations["player_0"]:
        o = env.observe(env.agent_selection)
        a = agent.act(o["observation"], o["action_mask"])
        assert o["action_mask"][a] == 1
        env.step(a)


def test_shipped_policy_evaluation_is_unchanged_to_the_digit(shipped):
    """A regression pin and a relation: the shipped classic policy (the plan clone of issue 25)
    against the heuristic on fixed deals gives the numbers measured when it was shipped (the
    same call at that commit): 30 duplicate hands, each in both seat rotations (60 games), 31
    won, none void, +14 points in all; and its ONNX export (what the web table and the server
    play) gives the same games. A change of the engine, the observation, the plan features,
    the policy's loading or the export that changes one decision shows here."""
    a = evaluate("pretrained", "heuristic", rules="classic", deals=30, seed=2026, matches=False)
    assert (a["games"], a["wins"], a["voids"]) == (60, 31.0, 0)
    assert a["mean_points"] == pytest.approx(14 / 60, abs=1e-12)
    assert a["win_rate"] == 31 / 60
    b = evaluate(f"onnx:{shipped['export']}", "heuristic", rules="classic", deals=30, seed=2026, matches=False)
    assert (b["wins"], b["voids"], b["mean_points"]) == (a["wins"], a["voids"], a["mean_points"])
