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
from rummy_env.train.export import export_policy  # noqa: E402


@pytest.fixture(scope="module")
def shipped(tmp_path_factory):
    from sb3_contrib import MaskablePPO

    out = tmp_path_factory.mktemp("pretrained_onnx")
    export_policy(PRETRAINED_PATH, out)
    return {"model": MaskablePPO.load(PRETRAINED_PATH, device="cpu"), "export": out}


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
    np.testing.assert_allclose(ml[legal], ref[legal], rtol=0, atol=1e-5)
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


def test_shipped_policy_evaluation_is_unchanged_to_the_digit():
    """The shipped classic policy against the heuristic on fixed deals gives the numbers it
    gives on the code before the jokers layout changed (issue 24: the 579 standard ids and
    the classic observation layout unchanged). Measured with the same call on fd8bb8c
    (``ppo:`` of the run's final_model.zip this zip was slimmed from; the policies shipped
    before have their own numbers) and on this code: 30 duplicate hands, each in both seat
    rotations (60 games), 24 won, none void, -59 points in all."""
    a = evaluate("pretrained", "heuristic", rules="classic", deals=30, seed=2026, matches=False)
    assert (a["games"], a["wins"], a["voids"]) == (60, 24.0, 0)
    assert a["mean_points"] == pytest.approx(-59 / 60, abs=1e-12)
    assert a["win_rate"] == 24 / 60
