"""A Gymnasium single-agent view of the game, for sb3-contrib's MaskablePPO.

One seat learns; the other seats are played by agent objects (API.md's agent
protocol: ``act(observation, action_mask) -> int``) or, with ``opponents=None``,
by uniformly random legal moves (``rummy_env.observation.RandomAgent``).
"""
from __future__ import annotations

from typing import Any, Sequence

import gymnasium as gym
import numpy as np

from . import engine
from .actions import NUM_ACTIONS
from .env import raw_env
from .observation import RandomAgent


class SingleAgentEnv(gym.Env):
    """The learner plays one seat of ``rummy_v0``; the other seats are played by ``opponents``.

    Args:
        rules: preset name, ``Rules`` or dict of options (as ``rummy_v0.env``).
        opponents: ``None`` (random legal moves), one agent for every other seat, or a
            sequence with one agent per other seat (in seat order, skipping the learner).
        learner_seat: the learner's seat, or ``None`` for a random seat each episode.
        seed: default seed for the first ``reset``.
        illegal_penalty: reward for a masked-out action (which ends the episode).
        **env_kw: passed to ``rummy_v0.raw_env`` (``episode``, ``reward_scale``, rule options).

    Spaces: ``observation_space`` is the observation ``Box`` (float32, ``(obs_size(n),)``),
    ``action_space`` is ``Discrete(579)``; ``action_masks()`` gives the learner's mask
    (bool, ``(579,)``). The reward is the learner's own (API.md).

    Raises:
        ValueError: bad rules, a bad ``learner_seat``, or the wrong number of opponents.
    """

    metadata = {"render_modes": ["ansi"]}

    def __init__(
        self,
        rules: Any = "classic",
        opponents: Any = None,
        learner_seat: int | None = None,
        seed: int | None = None,
        illegal_penalty: float = -1.0,
        render_mode: str | None = None,
        **env_kw: Any,
    ) -> None:
        self.env = raw_env(rules=rules, render_mode=render_mode, **env_kw)
        n = self.env.rules.num_players
        if learner_seat is not None and (not isinstance(learner_seat, int) or not 0 <= learner_seat < n):
            raise ValueError(f"learner_seat must be None or a seat 0..{n - 1}, got {learner_seat!r}")
        self.num_players = n
        self.learner_seat = learner_seat
        self.opponents = opponents
        self._check_opponents(opponents)
        self._random = RandomAgent()
        self.observation_space = self.env.observation_space("player_0")["observation"]
        self.action_space = self.env.action_space("player_0")
        self.illegal_penalty = float(illegal_penalty)
        self.render_mode = render_mode
        self._seed = seed
        self._rng = np.random.default_rng(seed)
        self.seat = 0
        self._done = True

    def _check_opponents(self, opponents: Any) -> None:
        if opponents is None or hasattr(opponents, "act"):
            return
        if not isinstance(opponents, Sequence) or len(opponents) != self.num_players - 1:
            raise ValueError(
                f"opponents must be None, one agent, or a list of {self.num_players - 1} agents "
                f"(one per other seat); got {opponents!r}"
            )
        for o in opponents:
            if not hasattr(o, "act"):
                raise ValueError(f"opponent {o!r} has no act(observation, action_mask) method")

    def _opponent(self, seat: int) -> Any:
        opp = self.opponents
        if opp is None:
            return self._random
        if hasattr(opp, "act"):
            return opp
        idx = seat if seat < self.seat else seat - 1
        return opp[idx]

    def set_opponents(self, opponents: Any) -> None:
        """Replace the opponents (takes effect at once; call between episodes)."""
        self._check_opponents(opponents)
        self.opponents = opponents

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Deal a new episode. ``seed`` fixes the deal, the learner's seat and the
        opponents' randomness. ``options={"state": STATE}`` starts from a position."""
        super().reset(seed=seed)
        if seed is None and self._seed is not None:
            seed, self._seed = self._seed, None
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        for _ in range(100):
            sub = [int(x) for x in self._rng.integers(2**31 - 1, size=3)]
            self.seat = self.learner_seat if self.learner_seat is not None else int(sub[0] % self.num_players)
            self._random.seed(sub[1])
            for k, opp in enumerate(self._all_opponents()):
                if hasattr(opp, "seed"):
                    opp.seed(sub[1] + 1 + k)
            self.env.reset(seed=sub[2], options=options)
            self._done = False
            self._play_opponents()
            if not self._done:
                break
            if options:
                raise ValueError("the position ends before the learner moves")
        return self._observation(), {"seat": self.seat}

    def _observation(self) -> np.ndarray:
        """The learner's observation (a fresh float32 array), through the env's public ``observe``."""
        return self.env.observe(self.env.possible_agents[self.seat])["observation"]

    def _all_opponents(self) -> list:
        opp = self.opponents
        if opp is None or hasattr(opp, "act"):
            return [] if opp is None else [opp]
        return list(opp)

    def _play_opponents(self) -> None:
        env = self.env
        st = env.state
        while env.agents and not env.terminations[env.agent_selection] and st.current != self.seat:
            seat = st.current
            seen = env.observe(env.possible_agents[seat])  # the mover's observation and mask
            a = self._opponent(seat).act(seen["observation"], seen["action_mask"])
            env.step(a)
        if not env.agents or env.terminations[env.agent_selection]:
            self._done = True

    def action_masks(self) -> np.ndarray:
        """The learner's action mask (bool, shape ``(579,)``): sb3-contrib's protocol."""
        if self._done:
            return np.zeros(NUM_ACTIONS, dtype=bool)
        return self.env.observe(self.env.possible_agents[self.seat])["action_mask"].astype(bool)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """The learner's action, then the opponents' moves until the learner is to move
        again or the episode ends. A masked-out action ends the episode with
        ``illegal_penalty`` and ``info["illegal_action"] = True``.

        Raises:
            ValueError: ``action`` is not an integer (a float, a string, None, ...).
            RuntimeError: the episode is over (call ``reset``).
        """
        if self._done:
            raise RuntimeError("the episode is over; call reset()")
        env = self.env
        try:
            a = engine.as_action_id(action)
        except engine.IllegalActionError:
            if isinstance(action, bool) or not isinstance(action, (int, np.integer, np.ndarray)):
                raise
            a = -1  # an integer outside 0..578: masked out like any illegal id
        st = env.state
        if st.current != self.seat or st.hand_over or a not in engine.legal_actions(st):  # the mask's 1s
            self._done = True
            info = {"illegal_action": True, "seat": self.seat}
            return self._observation(), self.illegal_penalty, True, False, info
        env.step(a)
        self._play_opponents()
        info: dict[str, Any] = {"seat": self.seat}
        reward = 0.0
        if self._done:
            agent = env.possible_agents[self.seat]
            reward = float(env.rewards[agent])
            info.update(env.infos[agent])
        return self._observation(), reward, self._done, False, info

    def state_dict(self) -> dict:
        """The current position in API.md's STATE form."""
        return self.env.state_dict()

    def render(self) -> str | None:
        """The table as text from the learner's seat (its hand only)."""
        from .env import render_text

        return render_text(self.env.state, self.seat)
