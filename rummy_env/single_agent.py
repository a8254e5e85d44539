"""A Gymnasium single-agent view of the game, for sb3-contrib's MaskablePPO.

One seat learns; the other seats are played by agent objects (API.md's agent
protocol: ``act(observation, action_mask) -> int``) or, with ``opponents=None``,
by uniformly random legal moves (``rummy_env.observation.RandomAgent``).
"""
from __future__ import annotations

import copy
import math
from typing import Any, Sequence

import gymnasium as gym
import numpy as np

from . import engine
from .env import raw_env
from .observation import RandomAgent


MAX_REDEALS = 100
"""Deals ``SingleAgentEnv.reset`` tries before it gives up on reaching the learner's seat."""


def _check_seed(seed: Any) -> None:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be None or an int >= 0, got {seed!r} ({type(seed).__name__})")


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

    Spaces: ``observation_space`` is the observation ``Box`` (float32, ``(obs_size(n, kind),)``),
    ``action_space`` is ``Discrete(N)`` (``N = actions.num_actions(kind)``, the table's action count);
    ``action_masks()`` gives the learner's mask (bool, ``(N,)``). The reward is the learner's own (API.md).

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
        if learner_seat is not None and (not isinstance(learner_seat, int) or isinstance(learner_seat, bool)
                                         or not 0 <= learner_seat < n):
            raise ValueError(f"learner_seat must be None or a seat 0..{n - 1} (an int), got {learner_seat!r}")
        if (not isinstance(illegal_penalty, (int, float)) or isinstance(illegal_penalty, bool)
                or not math.isfinite(illegal_penalty)):
            raise ValueError(f"illegal_penalty must be a finite number, got {illegal_penalty!r}")
        if seed is not None:
            _check_seed(seed)
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
        opponents' randomness. ``options={"state": STATE}`` starts from a position.

        The episode returned always has a move for the learner: a deal that ends before
        the learner's first move (possible with a small ``max_turns``) is dealt again,
        up to ``MAX_REDEALS`` times.

        Raises:
            ValueError: ``seed`` is not ``None`` or an int >= 0, the STATE is not a
                legal position or ends before the learner moves, or no deal of these
                rules reaches the learner's seat. A refused reset leaves the position,
                the learner's seat, the env's RNGs and the default random opponents'
                RNG as they were; opponent objects you passed in may already have been
                reseeded by it (their ``seed`` is called before the deal).
        """
        if seed is not None:
            _check_seed(seed)
        pending_seed = self._seed
        if seed is None and pending_seed is not None:
            seed = pending_seed
        rng = np.random.default_rng(int(seed)) if seed is not None else copy.deepcopy(self._rng)
        saved = dict(self.env.__dict__)  # the raw env's attributes, to undo a refused position
        saved_seat, saved_random = self.seat, copy.deepcopy(self._random)

        def undo() -> None:
            self.env.__dict__.clear()
            self.env.__dict__.update(saved)
            self.seat, self._done, self._random = saved_seat, True, saved_random

        done = True
        for _ in range(MAX_REDEALS):
            sub = [int(x) for x in rng.integers(2**31 - 1, size=3)]
            self.env.reset(seed=sub[2], options=options)  # raises before changing anything
            seat = self.learner_seat if self.learner_seat is not None else int(sub[0] % self.num_players)
            self.seat = seat
            self._random.seed(sub[1])
            for k, opp in enumerate(self._all_opponents()):
                if hasattr(opp, "seed"):
                    opp.seed(sub[1] + 1 + k)
            self._done = False
            self._play_opponents()
            done = self._done
            if not done:
                break
            if options:
                undo()
                raise ValueError("the position ends before the learner moves; give one where the learner "
                                 "has a move to make")
        if done:
            failed_seat = self.seat
            undo()
            raise ValueError(f"no deal of {MAX_REDEALS} reached the learner's seat {failed_seat} before the hand "
                             f"ended (max_turns={self.env.rules.max_turns}); raise max_turns or let the seat vary")
        super().reset(seed=seed)
        self._rng = rng
        if seed is not None and seed == pending_seed:
            self._seed = None
        return self._observation(), self._info(False)

    def _info(self, illegal: bool) -> dict[str, Any]:
        """The info dict: the same keys with the same types at every step
        (``seat``, ``illegal_action`` and the raw env's ``INFO_KEYS`` for the learner).

        A deep copy: its nested lists and dicts (``scores``, ``hand_result``, ...) are
        shared neither with the raw env nor with the infos of other calls, so a caller
        may keep or change them (Gymnasium's ``check_env`` asks it)."""
        return {"seat": self.seat, "illegal_action": illegal,
                **copy.deepcopy(self.env.infos[self.env.possible_agents[self.seat]])}

    def _observation(self) -> np.ndarray:
        """The learner's observation (a fresh float32 array), through the env's public
        ``observation_of`` (``observe`` without the mask)."""
        return self.env.observation_of(self.env.possible_agents[self.seat])

    def _all_opponents(self) -> list:
        opp = self.opponents
        if opp is None or hasattr(opp, "act"):
            return [] if opp is None else [opp]
        return list(opp)

    def _play_opponents(self) -> None:
        env = self.env
        st = env.state
        def over() -> bool:
            a = env.agent_selection
            return not env.agents or env.terminations[a] or env.truncations[a]

        while not over() and st.current != self.seat:
            seat = st.current
            seen = env.observe(env.possible_agents[seat])  # the mover's observation and mask
            a = self._opponent(seat).act(seen["observation"], seen["action_mask"])
            env.step(a)
        if over():
            self._done = True

    def action_masks(self) -> np.ndarray:
        """The learner's action mask (bool, shape ``(N,)``, ``N = action_space.n``): sb3-contrib's protocol."""
        if self._done:
            return np.zeros(self.action_space.n, dtype=bool)
        return self.env.action_mask_of(self.env.possible_agents[self.seat]).astype(bool)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        """The learner's action, then the opponents' moves until the learner is to move
        again or the episode ends. ``action`` is an int, a numpy integer, or a 0-d or
        1-element integer array (as Gymnasium's vector envs and SB3 pass it). A
        masked-out action (an integer outside the mask's ones, out of range included)
        ends the episode with ``illegal_penalty`` and ``info["illegal_action"] = True``.
        ``truncated`` is true only when an ``episode="match"`` reaches ``max_hands``.

        Raises:
            ValueError: ``action`` is not an integer (a bool, a float, a string, None,
                an array of another size or dtype); nothing changes.
            RuntimeError: the episode is over (call ``reset``).
        """
        if self._done:
            raise RuntimeError("the episode is over; call reset()")
        env = self.env
        if isinstance(action, np.ndarray):
            if action.dtype.kind not in "iu" or action.size != 1:
                raise ValueError(f"action must be an int, or a 0-d or 1-element integer array; got an array of "
                                 f"shape {action.shape} and dtype {action.dtype}")
            action = action.reshape(())
        try:
            a = engine.as_action_id(action, env.num_actions)
        except engine.IllegalActionError:
            if isinstance(action, bool) or not isinstance(action, (int, np.integer, np.ndarray)):
                raise
            a = -1  # an integer outside 0..N-1: masked out like any illegal id
        st = env.state
        if st.current != self.seat or st.hand_over or a not in engine.legal_actions(st):  # the mask's 1s
            self._done = True
            return self._observation(), self.illegal_penalty, True, False, self._info(True)
        env.step(a)
        self._play_opponents()
        agent = env.possible_agents[self.seat]
        reward = float(env.rewards[agent]) if self._done else 0.0
        truncated = bool(self._done and env.truncations[agent])
        terminated = bool(self._done and not truncated)
        return self._observation(), reward, terminated, truncated, self._info(False)

    def state_dict(self) -> dict:
        """The current position in API.md's STATE form."""
        return self.env.state_dict()

    def render(self) -> str | None:
        """The table as text from the learner's seat (its hand only)."""
        from .env import render_text

        return render_text(self.env.state, self.seat)
