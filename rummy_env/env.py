"""The PettingZoo AEC environment ``rummy_v0`` over the rules engine.

Version history:
    v0: first release. Observation layout ``observation.layout(n)``, action layout
        ``actions.ACTION_RANGES`` (``Discrete(579)``). Since 500 Rum (unreleased) a 500 Rum table
        (``actions.table_kind(rules) == "rum500"``, RULES.md §10.4) has its own layouts,
        ``layout(n, "rum500")`` and ``action_ranges("rum500")`` (``Discrete(631)``);
        every other table is unchanged.

A turn is two phases: the draw (``draw stock`` / ``draw discard``), then the play
phase (any number of melds and lay-offs, then a discard that ends the turn). The
agent to move is ``agent_selection``; every other agent's action mask is all zeros.

Rewards (``episode="hand"``, the default): zero at every step until the hand ends;
then zero-sum: the seat that went out (or, for a dry or stalled hand scored by
lowest deadwood, the seat that collects) gets the hand's points and each other
seat minus what it paid, all times ``reward_scale``; a void hand pays 0. Under
``scoring="melds"`` (500 Rum, RULES.md §10.4) each seat gets its hand points (melded
minus held) minus the mean of the other seats' hand points, times ``reward_scale``
(zero-sum too). With
``episode="match"`` hands are dealt until a total reaches the target and the
reward, at the end only, is the match result: +1 win, -1 loss, and a split match
shares ``n - k`` among its ``k`` winners (``(n - k) / k`` each), so it stays zero-sum.

Terminal convention: when the hand (or match) ends every agent is terminated
(a stalled table is a rule of the game, RULES.md §6, not a truncation), and, as in
PettingZoo, each must then be stepped with ``None``. The one truncation: a match
(``episode="match"``) still undecided after ``max_hands`` hands (default
``MAX_HANDS`` = 1000) ends with every agent truncated and rewards 0.

Infos: every agent's ``infos[a]`` has the keys of ``INFO_KEYS`` with the same types
at every step, from ``reset`` on (no key that appears only at the end, no value that
is ``None`` at one step and an int at another), so off-policy buffers can batch
them; docs/env-infos.md lists them.
"""
from __future__ import annotations

from typing import Any

import copy
import math

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from . import engine, state_json
from .actions import action_text
from .cards import TEXT_OF, count_cards, sort_key
from .engine import GameState, IllegalActionError
from .observation import Encoder, action_mask
from .table import Table
from .rules import Rules


MAX_HANDS = 1000
"""Default ``max_hands``: hands after which an undecided ``episode="match"`` is truncated."""

INFO_KEYS: dict[str, str] = {
    "scores": "list[int] (n): match totals after the last finished hand",
    "hand_number": "int: 0-based number of the hand being played (or just finished)",
    "hand_over": "bool: the hand just ended (the next step deals the next one in a match)",
    "hand_result": "dict: outcome str ('' while playing, 'out', 'dry', 'stalled'), winner int (-1: none), "
                   "rummy bool, points list[int] (n), payoffs list[int] (n; list[float] at a 500 Rum table, "
                   "where they are each seat's points minus the mean of the others'); zeros while playing",
    "match_over": "bool: the match (or single-hand episode) is decided",
    "match_won": "list[bool] (n): the seats that won the match (all false until it is over)",
}
"""The keys of every agent's ``infos`` entry and their types: the same at every step
of every episode (docs/env-infos.md)."""


class raw_env(AECEnv):
    """Straight Rummy as a PettingZoo AEC environment (no wrappers).

    Args:
        rules: a preset name (``classic``, ``turnover``, ``deadwood``, ``stalemate``,
            ``practice``), a ``Rules``, or a dict of options.
        render_mode: ``None``, ``"human"`` (prints) or ``"ansi"`` (returns text).
        episode: ``"hand"`` (one hand per episode) or ``"match"`` (to the target).
        reward_scale: multiplies hand rewards (points); match rewards are not scaled;
            a finite number > 0.
        max_hands: with ``episode="match"``, a match still undecided after this many
            hands is truncated (every agent's ``truncations`` true, rewards 0): a table
            where no hand can score would otherwise never end. Default ``MAX_HANDS``.
        **rule_overrides: rule options applied on top of ``rules`` (e.g. ``num_players=4``).

    Spaces: ``observation_space(a)`` is ``Dict(observation=Box(0, inf, (obs_size(n, kind),),
    float32), action_mask=Box(0, 1, (N,), int8))`` (the Box's low is -inf at a 500 Rum
    table, whose match totals may be negative); ``action_space(a)`` is
    ``Discrete(N)``, with ``self.table = Table.of(rules)`` (``table.Table``: the kind, its
    features and layouts), ``kind = table.kind`` and ``N = table.num_actions``, the
    table's action count (579 at every standard table; the 500 Rum and deck-variant
    kinds append their own ids, docs/env.md). Illegal actions raise
    ``IllegalActionError`` (a ``ValueError``) and change nothing.

    Raises:
        ValueError: an unknown rules preset or option, render mode or episode kind.
    """

    metadata = {"render_modes": ["human", "ansi"], "name": "rummy_v0", "is_parallelizable": False}

    def __init__(
        self,
        rules: str | Rules | dict = "classic",
        render_mode: str | None = None,
        episode: str = "hand",
        reward_scale: float = 1.0,
        max_hands: int = MAX_HANDS,
        **rule_overrides: Any,
    ) -> None:
        super().__init__()
        self.rules = Rules.make(rules, **rule_overrides)
        self._base_rules = self.rules
        if render_mode not in (None, "human", "ansi"):
            raise ValueError(f"render_mode must be None, 'human' or 'ansi', got {render_mode!r}")
        if episode not in ("hand", "match"):
            raise ValueError(f"episode must be 'hand' or 'match', got {episode!r}")
        if (not isinstance(reward_scale, (int, float)) or isinstance(reward_scale, bool)
                or not math.isfinite(reward_scale) or not reward_scale > 0):
            raise ValueError(f"reward_scale must be a finite number > 0, got {reward_scale!r}")
        if not isinstance(max_hands, int) or isinstance(max_hands, bool) or max_hands < 1:
            raise ValueError(f"max_hands must be an int >= 1 (hands per match before it is truncated), "
                             f"got {max_hands!r}")
        self.max_hands = max_hands
        self.render_mode = render_mode
        self.episode = episode
        self.reward_scale = float(reward_scale)
        n = self.rules.num_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        self.table = table = Table.of(self.rules)  # what the env asks about its table
        self.kind = table.kind
        self.num_actions = table.num_actions
        self._encoder = Encoder.of(table)
        obs_space = spaces.Dict(
            {
                # match totals may go negative at a 500 Rum table (RULES.md §10.4)
                "observation": spaces.Box(low=table.obs_low, high=np.inf,
                                          shape=(table.obs_size,), dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(self.num_actions,), dtype=np.int8),
            }
        )
        act_space = spaces.Discrete(self.num_actions)
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: act_space for a in self.possible_agents}
        self.state: GameState | None = None
        self._seeder = np.random.default_rng()
        self._cache: tuple[int, np.ndarray] | None = None  # (seat, encoded observation)
        # whether ``infos`` hold a finished hand's result: kept here, not read back from
        # ``infos``, which ``last()`` hands to the caller, who may change or clear them
        self._infos_hand_over = False

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ reset / step
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a hand from ``seed``, or start from ``options["state"]`` (API.md STATE).

        A STATE whose stock is empty with the next player to draw (a frontend's snapshot
        right after the last stock card was drawn) is accepted under every
        ``dry_trigger`` and played as RULES.md §6 says: under ``on_empty`` the recycle
        (shuffled from this reset's seed) or the dry end happens now, before that
        player's draw (a dry end gives a finished episode: every agent terminated);
        under ``on_request`` when the player asks for the stock.

        Raises:
            ValueError: ``seed`` is not ``None`` or an int >= 0, ``options`` is not a
                dict, the STATE is not a legal position (the message says why), or its
                rules are for another player count or kind of table than this env's. A
                refused reset changes nothing: neither the position nor the env's RNG.
        """
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
            raise ValueError(f"seed must be None or an int >= 0, got {seed!r} ({type(seed).__name__})")
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be a dict (e.g. {{'state': STATE}}) or None, got {type(options).__name__}")
        # work on a copy of the RNG: it is kept only once the reset succeeds
        seeder = np.random.default_rng(int(seed)) if seed is not None else copy.deepcopy(self._seeder)
        deal_seed = int(seeder.integers(2**63 - 1))
        ended_now = False
        if options and "state" in options:
            st = state_json.from_json(options["state"], rules=self._base_rules, seed=deal_seed)
            if st.rules.num_players != self.rules.num_players:
                raise ValueError(
                    f"the position is for {st.rules.num_players} players but this env has "
                    f"{self.rules.num_players}; make the env with num_players={st.rules.num_players}"
                )
            if st.table.kind != self.kind:
                raise ValueError(
                    f"the position's rules are a {st.table.kind} table but this env is a {self.kind} table "
                    "(their observations and actions differ); make the env with the position's rules"
                )
            given_over = isinstance(options["state"], dict) and options["state"].get("hand_over") is True
            if given_over and (st.match_over or self.episode == "hand"):
                raise ValueError("the position's hand is already over; give a position with a move to make")
            if given_over:
                engine.next_hand(st)
            ended_now = st.hand_over  # a snapshot that ends dry at the start of the turn (§6)
            self.rules = st.rules
        else:
            self.rules = self._base_rules  # a position's own rules last until the next deal
            st = engine.new_game(self.rules, seed=deal_seed)
        self._seeder = seeder
        self.state = st
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._cache = None
        self._hands_played = 0
        self._set_infos()
        self.agent_selection = self.possible_agents[st.current]
        if ended_now:
            self._hand_ended()
        if self.render_mode == "human":
            self.render()

    def _set_infos(self) -> None:
        """Every agent's info: the same keys with the same types at every step
        (``INFO_KEYS``; docs/env-infos.md), so replay buffers can batch them."""
        st = self.state
        n = self.rules.num_players
        over = st.hand_over
        res = st.result if over else None
        winner = res["winner"] if res is not None and res["winner"] is not None else -1
        won = st.match_winners or ()
        info = {
            "scores": [int(x) for x in st.scores],
            "hand_number": int(st.hand_number),
            "hand_over": bool(over),
            "hand_result": {
                "outcome": res["outcome"] if res is not None else "",
                "winner": int(winner),
                "rummy": bool(res["rummy"]) if res is not None else False,
                "points": [int(x) for x in res["points"]] if res is not None else [0] * n,
                "payoffs": [self._payoff_type(x) for x in st.payoffs] if over else [self._payoff_type(0)] * n,
            },
            "match_over": bool(st.match_over),
            "match_won": [q in won for q in range(n)],
        }
        self.infos = {a: copy.deepcopy(info) for a in self.possible_agents}  # nothing shared between agents
        self._infos_hand_over = info["hand_over"]

    @property
    def _payoff_type(self) -> type:
        # INFO_KEYS: floats at every 500 Rum table, with deck variants or without ("rum500+jokers",
        # ...), where meld scoring's payoffs hold halves; asked of the env's kind, which no reset
        # changes, so the type stays the same at every step of every episode
        return float if self.table.rum500 else int

    def step(self, action: int | None) -> None:
        """Apply the selected agent's action (an id in ``0..N-1``, ``N = self.num_actions``).

        Raises:
            IllegalActionError (a ``ValueError``): the action is not legal; the
                message names its text and the reason; nothing changes.
            RuntimeError: before the first ``reset``.
        """
        if self.state is None:
            raise RuntimeError("call reset() before step()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        st = self.state
        if action is None:
            raise IllegalActionError(f"{agent} is to move and must send an action id, not None")
        engine.apply(st, action)
        self._cache = None
        self._cumulative_rewards[agent] = 0.0
        if st.hand_over:
            self._hand_ended()
        elif self._infos_hand_over:  # the first step of a match's next hand
            self._set_infos()
        self.agent_selection = self.possible_agents[st.current]
        if self.render_mode == "human":
            self.render()

    def _hand_ended(self) -> None:
        st = self.state
        self._set_infos()  # the finished hand's result, until the next hand's first step
        self._hands_played += 1
        if self.episode == "hand":
            pay = [p * self.reward_scale for p in st.payoffs]
        elif st.match_over:
            pay = engine.match_payoffs(st)
        elif self._hands_played >= self.max_hands:  # an undecided match is cut off
            for a in self.possible_agents:
                self.rewards[a] = 0.0
                self.truncations[a] = True
            self._accumulate_rewards()
            return
        else:
            engine.next_hand(st)
            return
        for i, a in enumerate(self.possible_agents):
            self.rewards[a] = float(pay[i])
            self.terminations[a] = True
        self._accumulate_rewards()

    # ------------------------------------------------------------------ observations
    def _obs(self, seat: int) -> np.ndarray:
        """The encoded observation of ``seat``, cached until the next step or reset.

        Internal: the cached array must never be handed out (``observe`` copies it)."""
        hit = self._cache
        if hit is not None and hit[0] == seat:
            return hit[1]
        obs = self._encoder.encode(self.state, seat)
        self._cache = (seat, obs)
        return obs

    def _mask(self, seat: int) -> np.ndarray:
        """A fresh int8 action mask of ``seat``: ``engine.legal_actions`` for the mover,
        all zeros for everyone else and once the hand is over."""
        st = self.state
        if seat == st.current and not st.hand_over:
            return action_mask(engine.legal_actions(st), size=self.num_actions)
        return np.zeros(self.num_actions, dtype=np.int8)

    def _seat(self, agent: str) -> int:
        try:
            seat = self.agent_name_mapping[agent]
        except KeyError:
            raise ValueError(f"unknown agent {agent!r}; agents: {', '.join(self.possible_agents)}") from None
        if self.state is None:
            self._started()  # raises: observe before reset
        return seat

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation": float32 (obs_size(n, kind),), "action_mask": int8 (N,)}`` for ``agent``;
        fresh arrays the caller may keep.

        Raises:
            ValueError: an unknown agent. RuntimeError: before the first ``reset``.
        """
        seat = self._seat(agent)
        return {"observation": self._obs(seat).copy(), "action_mask": self._mask(seat)}

    def observation_of(self, agent: str) -> np.ndarray:
        """``observe(agent)["observation"]`` without building the mask (a fresh array).

        Raises:
            ValueError: an unknown agent. RuntimeError: before the first ``reset``.
        """
        return self._obs(self._seat(agent)).copy()

    def action_mask_of(self, agent: str) -> np.ndarray:
        """``observe(agent)["action_mask"]`` without copying the observation (a fresh int8 array).

        Raises:
            ValueError: an unknown agent. RuntimeError: before the first ``reset``.
        """
        return self._mask(self._seat(agent))

    # ------------------------------------------------------------------ positions and text
    def _started(self) -> GameState:
        if self.state is None:
            raise RuntimeError("call reset() before using the env (observe, render, state_dict, ...)")
        return self.state

    def state_dict(self) -> dict[str, Any]:
        """The current position in API.md's STATE form.

        Raises:
            RuntimeError: before the first ``reset``.
        """
        return state_json.to_json(self._started())

    def action_text(self, action: int) -> str:
        """The text of an action id, e.g. ``'meld 4H 5H 6H'``.

        Raises:
            ValueError: not an id in ``0..N-1`` (``N = self.num_actions = actions.num_actions(kind)``).
        """
        return action_text(action, self.kind)

    def action_id(self, text: str) -> int:
        """The id of an action text (``layoff JC`` alone resolves to the one meld that takes
        it); for a move with jokers, the id of its next decision (``action_ids``).

        Raises:
            ValueError: the text names no action.
        """
        return engine.action_id(self._started(), text)

    def action_ids(self, text: str) -> list[int]:
        """The decisions that play the move ``text`` from this position, in order (one id,
        except a move with jokers at a jokers table: ``joker as <card>`` per joker, lowest
        card first, then the meld or lay-off id; ``engine.action_ids``). Step them in turn.

        Raises:
            ValueError: the text names no action, or does not continue the jokers named.
        """
        return engine.action_ids(self._started(), text)

    def legal_action_texts(self) -> list[str]:
        """The texts of the legal actions (ids) of the agent to move, one per mask bit."""
        return [action_text(a, self.kind) for a in engine.legal_actions(self._started())]

    def legal_moves(self) -> list[tuple[str, int]]:
        """The legal moves of the agent to move as ``(text, next id)``: whole moves at a
        jokers table (``meld 4H JK=5H 6H`` with the id of ``joker as 5H``), else one per
        legal id (``engine.legal_moves``)."""
        return engine.legal_moves(self._started())

    def legal_actions(self) -> list[int]:
        """The ids of the legal actions of the agent to move (the mask's ones)."""
        return list(engine.legal_actions(self._started()))

    # ------------------------------------------------------------------ rendering
    def render(self) -> str | None:
        """The table as text from the viewpoint of the agent to move (``ansi``) or printed (``human``)."""
        if self.render_mode is None:
            return None
        st = self._started()
        text = render_text(st, st.current)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def render_text(st: GameState, viewer: int) -> str:
    """A text picture of the table seen by ``viewer``: its hand, the melds, the upcard,
    the stock size, hand sizes and scores (nobody else's cards). At a deck-variant table
    (RULES.md §10.1-10.3) a card held twice is shown twice, a joker as ``JK`` and a
    melded one as ``JK=<card>``."""
    def cards(cs: list[int]) -> str:
        return " ".join(TEXT_OF[c] for c in cs) or "-"

    n = st.rules.num_players
    lines = [f"hand {st.hand_number + 1}, turn {st.turn + 1}: player_{st.current} to "
             + ("draw" if st.phase == engine.DRAW else "play")]
    lines.append(f"stock: {len(st.stock)} cards   upcard: {TEXT_OF[st.discard[-1]] if st.discard else '-'}"
                 f"   recycles: {st.recycles}")
    lines.append("melds: " + ("  |  ".join(" ".join(m.texts()) for m in st.melds) or "-"))
    for q in range(n):
        tag = "you" if q == viewer else f"{st.hands[q].bit_count()} cards"
        lines.append(f"player_{q} ({tag}): score {st.scores[q]}")
    lines.append(f"your hand (player_{viewer}): " + cards(sorted(count_cards(st.hands[viewer]), key=sort_key)))
    if st.hand_over:
        lines.append(f"hand over: {st.result}")
    return "\n".join(lines)


# ---------------------------------------------------------------- the wrapped env
# PettingZoo's wrappers forward every attribute read (agent_selection, agents,
# terminations, ...) through a chain of ``__getattr__`` calls, one per wrapper, which
# cost more than the game itself. The subclasses below keep the wrappers' behaviour
# (every rule they check is still checked, by the same code on the unusual paths) and
# read the hot attributes straight from the unwrapped env, which is where the
# wrappers' ``__getattr__`` would find them.

_FORWARDED = ("agent_selection", "agents", "rewards", "_cumulative_rewards", "terminations",
              "truncations", "infos")


def _forwarding(name: str, order_enforcing: bool) -> property:
    def get(self: Any) -> Any:
        if order_enforcing and not self._has_reset:
            # an AttributeError from a property falls back to __getattr__, which raises
            # PettingZoo's "cannot be accessed before reset"
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._raw, name)

    def put(self: Any, value: Any) -> None:
        setattr(self._raw, name, value)

    return property(get, put, doc=f"``{name}`` of the unwrapped env.")


class _FastForward:
    """Mixin: the hot AEC attributes read directly from the unwrapped env."""

    _raw: raw_env

    def _bind(self, env: AECEnv) -> None:
        self._raw = env.unwrapped


class _TerminateIllegalWrapper(_FastForward, wrappers.TerminateIllegalWrapper):
    """PettingZoo's ``TerminateIllegalWrapper`` (an illegal action ends the episode:
    the offender gets ``illegal_reward``, the others 0), with a direct path for a legal
    action of a live agent; everything else goes through PettingZoo's own code."""

    def __init__(self, env: AECEnv, illegal_reward: float) -> None:
        super().__init__(env, illegal_reward)
        self._bind(env)

    def observe(self, agent: str) -> Any:
        raw = self._raw
        obs = self.env.observe(agent)
        if agent == raw.agent_selection:
            # the wrapper's own copy of the mask that ``step`` checks: the dict and the
            # array go to the caller, who may change or clear them
            self._prev_obs = {"action_mask": obs["action_mask"].copy()}
            self._prev_info = {}  # read for observations without a mask only
        return obs

    def step(self, action: Any) -> None:
        raw = self._raw
        agent = raw.agent_selection
        prev = self._prev_obs
        if (prev is not None and type(action) is int and not self._terminated
                and not raw.terminations[agent] and not raw.truncations[agent]
                and prev["action_mask"][action]):
            self._prev_obs = None
            self._prev_info = None
            self.env.step(action)
            return
        super().step(action)

    def __str__(self) -> str:
        return str(self.env)


class _AssertOutOfBoundsWrapper(_FastForward, wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's ``AssertOutOfBoundsWrapper`` with a direct path for a plain ``int``
    in ``0..N-1`` (which ``Discrete.contains`` accepts; ``N = raw_env.num_actions``)."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._bind(env)

    def step(self, action: Any) -> None:
        if type(action) is int and 0 <= action < self._raw.num_actions:
            self.env.step(action)
            return
        raw = self._raw
        agent = raw.agent_selection
        if action is None and (raw.terminations[agent] or raw.truncations[agent]):
            self.env.step(action)  # the dead step
            return
        # our own check, not PettingZoo's ``assert`` (gone under ``python -O``); a clear
        # IllegalActionError (a ValueError) for a bool, a float, a string, None or an
        # id out of range, raised before anything changes
        self.env.step(engine.as_action_id(action, raw.num_actions))


class _OrderEnforcingWrapper(_FastForward, wrappers.OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` (errors before ``reset``) with the hot
    attributes read directly from the unwrapped env."""

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._bind(env)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """``AECEnv.last`` with the reads made on the unwrapped env (same result)."""
        if not self._has_reset:
            return super().last(observe)  # PettingZoo's error
        raw = self._raw
        agent = raw.agent_selection
        assert agent is not None
        obs = self.env.observe(agent) if observe else None
        return (obs, raw._cumulative_rewards[agent], raw.terminations[agent], raw.truncations[agent],
                raw.infos[agent])

    def __str__(self) -> str:
        return str(self.env)


for _name in _FORWARDED:
    for _cls, _oe in ((_TerminateIllegalWrapper, False), (_AssertOutOfBoundsWrapper, False),
                      (_OrderEnforcingWrapper, True)):
        setattr(_cls, _name, _forwarding(_name, _oe))
del _name, _cls, _oe


def env(**kwargs: Any) -> AECEnv:
    """``raw_env`` with PettingZoo's usual wrappers: an illegal action ends the episode
    with -1 for the offender and 0 for the others (``TerminateIllegalWrapper``), actions
    are bounds-checked, and the call order is enforced. Arguments as ``raw_env``.

    The wrappers are subclasses of PettingZoo's (``isinstance`` checks hold) that read
    the AEC attributes straight from the unwrapped env instead of through a chain of
    ``__getattr__`` calls; their behaviour is PettingZoo's."""
    e = raw_env(**kwargs)
    e = _TerminateIllegalWrapper(e, illegal_reward=-1)
    e = _AssertOutOfBoundsWrapper(e)
    e = _OrderEnforcingWrapper(e)
    return e
