"""Warm start: behaviour cloning of a scripted teacher before self-play PPO.

A fresh policy has to discover from the final score alone that melds and low deadwood
win hands; cloning a teacher's decisions first gives PPO a sensible starting point
for self-play. Seeded hands are played (by the teacher in every seat, or by a mix of
the teacher and baselines: ``behaviour``) and every position is labelled with the
teacher's move; the policy is fitted by masked cross-entropy
(``-log pi(a | obs, mask)``) with Adam. The value network is fitted at the same time to
each decision's reward for its hand (``rummy_env.train.rewards.hand_rewards``), so PPO's first
advantages are not noise. Optional DAgger rounds (``collect_on_policy``) add the
positions the cloned policy reaches itself, labelled by the teacher. ``fit`` works on
any network given as a logits/values function, so the RLlib backend uses the same code.
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np
import torch

from rummy_env import engine
from rummy_env.actions import MELD_BASE, num_actions
from rummy_env.agents import BASELINES
from rummy_env.agents.masking import mask_logits
from rummy_env.observation import Encoder, action_mask
from rummy_env.rules import Rules

from .rewards import REWARDS, hand_rewards



class MaskRows:
    """The action masks of many positions kept one bit per action (``np.packbits``, little
    bit order): ``[N, ceil(n_actions / 8)]`` uint8 instead of ``[N, n_actions]`` bool, so a
    warm start holds its hundreds of thousands of positions in memory at any table (8x less
    than bools; the largest table has 905 actions, RULES.md §10).

    Indexing as a bool array would be: ``rows[i]`` -> ``[n_actions]``, ``rows[a:b]`` or
    ``rows[index_array]`` -> ``[k, n_actions]`` (unpacked copies), ``rows[rows_idx,
    actions]`` -> the bits ``[k]``; ``shape``, ``len``, iteration (unpacked rows) and
    ``select(idx)`` (a ``MaskRows`` of some rows) as well. ``fit`` and ``agreement`` unpack
    one minibatch at a time.
    """

    def __init__(self, n: int, n_actions: int, packed: np.ndarray | None = None) -> None:
        self.n_actions = n_actions
        self.packed = np.zeros((n, (n_actions + 7) // 8), dtype=np.uint8) if packed is None else packed

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.packed), self.n_actions)

    def __len__(self) -> int:
        return len(self.packed)

    def set_row(self, i: int, legal) -> None:
        """Row ``i`` becomes the mask of the legal ids ``legal``."""
        row = self.packed[i]
        row[:] = 0
        for a in legal:
            row[a >> 3] |= 1 << (a & 7)

    def __getitem__(self, key):
        if isinstance(key, tuple):
            rows, cols = key
            cols = np.asarray(cols)
            return ((self.packed[rows, cols >> 3] >> (cols & 7)) & 1).astype(bool)
        sub = self.packed[key]
        if sub.ndim == 1:
            return np.unpackbits(sub, count=self.n_actions, bitorder="little").astype(bool)
        return np.unpackbits(sub, axis=1, count=self.n_actions, bitorder="little").astype(bool)

    def __iter__(self):
        for i in range(len(self.packed)):
            yield self[i]

    def select(self, idx) -> "MaskRows":
        """The rows ``idx`` (a slice, index or boolean array) as a ``MaskRows``."""
        return MaskRows(0, self.n_actions, self.packed[idx])

    @staticmethod
    def concat(a: "MaskRows", b: "MaskRows") -> "MaskRows":
        """``a``'s rows then ``b``'s."""
        return MaskRows(0, a.n_actions, np.concatenate([a.packed, b.packed]))


def teachers(teacher: str, n: int, seed: int, teacher_weights: dict[str, float] | None = None) -> list[Any]:
    """One ``teacher`` agent per seat (seeded ``seed + seat``), the heuristic with
    ``teacher_weights`` applied."""
    from rummy_env.agents import make_agent

    if teacher_weights and teacher == "heuristic":
        from rummy_env.agents.scripted import HeuristicAgent

        return [HeuristicAgent(seed=seed + q, **teacher_weights) for q in range(n)]
    return [make_agent(teacher, seed=seed + q) for q in range(n)]


def greedy_student(forward: Callable) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """A network's most probable legal actions, ``forward`` as in ``fit``:
    ``(obs float32 [B, obs_dim], masks bool [B, N] (N: the table's action count, ``Table.num_actions``: 579 at a standard table)) -> int64 [B]``."""
    def act(obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            logits = mask_logits(forward(torch.as_tensor(obs))[0], torch.as_tensor(masks))
        return logits.argmax(1).numpy()
    return act


def collect_on_policy(rules: Rules, teacher: str, decisions: int, seed: int,
                      student: Callable[[np.ndarray, np.ndarray], np.ndarray],
                      reward_scale: float = 0.01, teacher_weights: dict[str, float] | None = None,
                      games: int = 256, reward: str = "points",
                      progress: Callable[[int], None] | None = None, packed: bool = False,
                      workers: int = 1, label_progress: Callable[[int], None] | None = None,
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """DAgger's data: the ``student`` (``(obs, masks) -> actions`` for a batch, e.g.
    ``greedy_student(forward)``) plays every seat of ``games`` seeded hands at once,
    one batched call per step of all games (at most one game per 1,000 decisions, so
    every game plays whole hands), and each position it reaches is labelled
    with the teacher's action there. This covers the positions the student's own
    mistakes lead to, which the teacher's games never show it (Ross et al., 2011).

    Returns the same arrays as ``collect`` (``actions`` are the teacher's; ``returns``
    the deciding seat's ``hand_rewards`` in the hand the student played);
    positions of hands unfinished when the budget runs out are dropped.
    ``progress(i)``, if given, is called after every batched step with the positions
    collected so far. ``packed``: the masks as a ``MaskRows`` (one bit per action).

    A slow teacher (``slow_teacher``: the search, about 15 ms a decision) labels after
    the play, only the positions of finished hands, in ``workers`` processes
    (``label_positions``: chunks of ``LABEL_CHUNK`` positions, chunk ``k`` by a teacher
    seeded ``part_seed(seed, k)``, so the labels do not depend on ``workers``;
    ``label_progress`` counts them); a scripted teacher labels during the play, one
    seeded agent per seat.
    """
    if reward not in REWARDS:
        raise ValueError(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")
    n = rules.num_players
    enc = Encoder.for_rules(rules)
    n_act = num_actions(rules)
    late = slow_teacher(teacher)
    agents = None if late else teachers(teacher, n, seed, teacher_weights)
    rng = np.random.default_rng(seed)
    # each game gets budget for a few whole hands (a 2-player hand is ~240 positions),
    # else a small budget spread over many games would finish no hand at all
    games = max(1, min(games, decisions // 1000))
    obs = np.empty((decisions + games, enc.size), dtype=np.float32)
    masks = MaskRows(decisions + games, n_act)
    actions = np.empty(decisions + games, dtype=np.int64)
    returns = np.zeros(decisions + games, dtype=np.float32)
    keep = np.zeros(decisions + games, dtype=bool)
    states = [engine.new_game(rules, seed=int(rng.integers(2**62))) for _ in range(games)]
    rows: list[list[tuple[int, int]]] = [[] for _ in range(games)]  # (row, seat) per game
    i = 0
    while i < decisions:
        start = i
        for g, st in enumerate(states):
            seat = st.current
            o = enc.encode(st, seat)
            legal = engine.legal_actions(st)
            m = action_mask(legal, size=n_act)
            obs[i], actions[i] = o, (-1 if late else agents[seat].act(o, m))
            masks.set_row(i, legal)
            rows[g].append((i, seat))
            i += 1
        moves = student(obs[start:i], masks[start:i])
        for g, st in enumerate(states):
            engine.apply(st, int(moves[g]))
            if st.hand_over:
                pay = hand_rewards(st, reward, reward_scale)
                for r, seat in rows[g]:
                    returns[r], keep[r] = pay[seat], True
                rows[g] = []
                states[g] = engine.new_game(rules, seed=int(rng.integers(2**62)))
        if progress:
            progress(i)
    kept = masks.select(keep)
    acts = actions[keep]
    if late:
        acts = label_positions(rules, teacher, obs[keep], kept, seed, workers, label_progress)
    return obs[keep], (kept if packed else kept[:]), acts, returns[keep]


LABEL_CHUNK = 1000
"""Positions per chunk of ``label_positions`` (each chunk has its own seeded teacher)."""


def slow_teacher(teacher: str) -> bool:
    """Whether ``teacher`` (a ``make_agent`` name) is the search, whose labels are computed
    after the play and in parallel (``label_positions``)."""
    return teacher.strip().lower().split(":")[0] == "search"


def _label_chunk(args: tuple) -> np.ndarray:
    teacher, seed, obs, packed, n_act = args
    from rummy_env.agents import make_agent

    agent = make_agent(teacher, seed=seed)
    rows = MaskRows(0, n_act, packed)
    return np.asarray([agent.act(obs[j], rows[j].astype(np.int8)) for j in range(len(obs))], dtype=np.int64)


def label_positions(rules: Rules, teacher: str, obs: np.ndarray, masks: "MaskRows", seed: int,
                    workers: int = 1, progress: Callable[[int], None] | None = None) -> np.ndarray:
    """The ``teacher``'s action at each position (an agent reads the observation and the
    mask alone, so positions need no game).

    Args:
        rules: the table (for the action count).
        teacher: a ``make_agent`` name.
        obs: float32 ``[N, obs_dim]``; masks: a ``MaskRows`` of ``N`` rows.
        seed: chunk ``k`` of ``LABEL_CHUNK`` positions is labelled by a teacher seeded
            ``part_seed(seed, k)``: the labels are the same for every ``workers``.
        workers: processes (spawned; 1 labels in this process).
        progress: called after each chunk with the positions labelled so far.

    Returns:
        int64 ``[N]``, legal under ``masks``.
    """
    n_act = num_actions(rules)
    jobs = [(teacher, part_seed(seed, k), obs[s:s + LABEL_CHUNK], masks.packed[s:s + LABEL_CHUNK], n_act)
            for k, s in enumerate(range(0, len(obs), LABEL_CHUNK))]
    parts: list[np.ndarray] = []

    def done(part: np.ndarray) -> None:
        parts.append(part)
        if progress:
            progress(sum(len(p) for p in parts))

    if workers <= 1 or len(jobs) <= 1:
        for j in jobs:
            done(_label_chunk(j))
    else:
        import concurrent.futures
        import multiprocessing

        with concurrent.futures.ProcessPoolExecutor(min(workers, len(jobs)),
                                                    mp_context=multiprocessing.get_context("spawn")) as ex:
            for part in ex.map(_label_chunk, jobs):
                done(part)
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


def part_seed(seed: int, k: int) -> int:
    """The seed of part ``k`` of a collection split over processes (``collect``'s
    ``workers``): part 0 keeps ``seed``, so one process plays what it always played."""
    return seed if k == 0 else seed + 1_000_003 * k


def _collect_part(args: tuple) -> tuple:
    rules_json, rest, kw = args
    return collect(Rules.from_json(rules_json), *rest, **kw)


def collect(rules: Rules, teacher: str, decisions: int, seed: int, reward_scale: float = 0.01,
            teacher_weights: dict[str, float] | None = None,
            behaviour: dict[str, float] | None = None, reward: str = "points",
            progress: Callable[[int], None] | None = None, packed: bool = False, workers: int = 1,
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Play seeded hands and label every position with ``teacher``'s action (an
    ``rummy_env.agents.make_agent`` name); ``teacher_weights`` override the ``heuristic``
    teacher's options (``rummy_env.agents.scripted.HeuristicAgent.TUNABLE``; other teachers
    have none).

    ``behaviour`` says who moves: per hand, each seat's moves come from an agent
    drawn with these weights (``"teacher"`` or a scripted baseline name), while the
    label stays the teacher's. ``None`` or ``{}``: the teacher plays every seat. Mixing
    in other players shows the student the positions the teacher alone never reaches
    (opponents' melds on the table, a hand that melded early), which it meets in play.
    ``progress(i)``, if given, is called after every hand with the decisions so far.
    ``packed``: the masks as a ``MaskRows`` (one bit per action) instead of a bool array.
    ``workers`` > 1 splits the budget into that many parts played at once (at most one
    part per 1,000 decisions, so each part plays whole hands), part 0 in
    this process and the others in spawned processes, part ``k`` seeded
    ``part_seed(seed, k)``; the samples are the parts' in order (deterministic for a
    given ``workers``, but other hands than one process plays; ``progress`` then counts
    part 0's decisions times ``workers``).

    Returns:
        ``obs`` float32 ``[N, obs_dim]``, ``masks`` bool ``[N, num_actions]``, ``actions`` int64 ``[N]``
        (the teacher's) and ``returns`` float32 ``[N]`` (the deciding seat's reward for
        the hand: ``rummy_env.train.rewards.hand_rewards`` with ``reward`` and ``reward_scale``),
        ``N <= decisions`` (a hand cut short by the budget is dropped).

    Raises:
        ValueError: an unknown agent name or ``reward``, or a bad ``behaviour`` table
            (``check_behaviour``).
    """
    if reward not in REWARDS:
        raise ValueError(f"reward must be one of {', '.join(REWARDS)}, got {reward!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    workers = max(1, min(workers, decisions // 1000))  # parts of at least 1,000 decisions (a few hands)
    if workers > 1:
        return _collect_parallel(rules, teacher, decisions, seed, reward_scale, teacher_weights, behaviour, reward,
                                 progress, packed, workers)
    n = rules.num_players
    enc = Encoder.for_rules(rules)
    n_act = num_actions(rules)
    agents = teachers(teacher, n, seed, teacher_weights)
    names, probs, movers = _behaviour(behaviour, n, seed)
    obs = np.empty((decisions, enc.size), dtype=np.float32)
    masks = MaskRows(decisions, n_act)
    actions = np.empty(decisions, dtype=np.int64)
    returns = np.zeros(decisions, dtype=np.float32)
    seats = np.empty(decisions, dtype=np.int64)
    rng = np.random.default_rng(seed)
    pick = np.random.default_rng([seed, 1])  # its own stream: the deals do not depend on the mix
    i = done = 0
    while i < decisions:
        st = engine.new_game(rules, seed=int(rng.integers(2**62)))
        who = pick.choice(len(names), size=n, p=probs) if movers else None
        while not st.hand_over and i < decisions:
            seat = st.current
            o = enc.encode(st, seat)
            legal = engine.legal_actions(st)
            m = action_mask(legal, size=n_act)
            a = agents[seat].act(o, m)
            obs[i], actions[i], seats[i] = o, a, seat
            masks.set_row(i, legal)
            if who is not None and names[who[seat]] != "teacher":
                a = movers[names[who[seat]]][seat].act(o, m)
            engine.apply(st, a)
            i += 1
        if st.hand_over:
            pay = hand_rewards(st, reward, reward_scale)
            returns[done:i] = pay[seats[done:i]]
            done = i
        if progress:
            progress(i)
    kept = masks.select(slice(0, done))
    return obs[:done], (kept if packed else kept[:]), actions[:done], returns[:done]


def _collect_parallel(rules, teacher, decisions, seed, reward_scale, teacher_weights, behaviour, reward, progress,
                      packed, workers):
    """``collect`` split into ``workers`` parts (see there)."""
    import concurrent.futures
    import multiprocessing

    check_behaviour(behaviour)  # a bad table fails here, before any process starts
    sizes = [decisions // workers + (1 if k < decisions % workers else 0) for k in range(workers)]
    kw = dict(reward_scale=reward_scale, teacher_weights=teacher_weights, behaviour=behaviour, reward=reward,
              packed=True)
    # spawn, not fork: this process has torch's thread pools running
    with concurrent.futures.ProcessPoolExecutor(workers - 1, mp_context=multiprocessing.get_context("spawn")) as ex:
        futures = [ex.submit(_collect_part, (rules.to_json(), (teacher, sizes[k], part_seed(seed, k)), kw))
                   for k in range(1, workers)]
        first = collect(rules, teacher, sizes[0], seed, **kw,
                        progress=(lambda i: progress(i * workers)) if progress else None)
        parts = [first] + [f.result() for f in futures]
    obs = np.concatenate([p[0] for p in parts])
    masks = MaskRows(0, parts[0][1].n_actions, np.concatenate([p[1].packed for p in parts]))
    actions = np.concatenate([p[2] for p in parts])
    returns = np.concatenate([p[3] for p in parts])
    return obs, (masks if packed else masks[:]), actions, returns


BEHAVIOURS = ("teacher", *BASELINES)


def check_behaviour(behaviour: dict[str, float] | None) -> None:
    """Check a ``behaviour`` table (see ``collect``).

    Raises:
        ValueError: not a table, a name outside ``BEHAVIOURS``, a weight that is not a
            finite number >= 0, or all weights zero.
    """
    if behaviour is None:
        return
    if not isinstance(behaviour, dict):
        raise ValueError(f"warm-start behaviour must be a table of weights (e.g. {{'teacher': 0.5, 'greedy': 0.5}}), "
                         f"got {behaviour!r}")
    if not behaviour:
        return
    for k, w in behaviour.items():
        if k not in BEHAVIOURS:
            raise ValueError(f"unknown warm-start behaviour {k!r}; allowed: {', '.join(BEHAVIOURS)}")
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
            raise ValueError(f"warm-start behaviour weight {k} must be a finite number >= 0, got {w!r}")
    total = sum(behaviour.values())
    if total <= 0:
        raise ValueError(f"warm-start behaviour weights are all zero: {behaviour!r}")
    if not math.isfinite(total):
        raise ValueError(f"warm-start behaviour weights are too large to add up: {behaviour!r}")


def _behaviour(behaviour: dict[str, float] | None, n: int, seed: int):
    """(names, probabilities, {name: one agent per seat}) of a behaviour table; no movers
    when the teacher plays every seat."""
    from rummy_env.agents import make_agent
    check_behaviour(behaviour)
    if not behaviour or set(k for k, w in behaviour.items() if w > 0) == {"teacher"}:
        return [], None, {}
    names = sorted(behaviour)
    w = np.asarray([float(behaviour[k]) for k in names])
    movers = {k: [make_agent(k, seed=seed + 100 + q) for q in range(n)] for k in names if k != "teacher"}
    return names, w / w.sum(), movers


Forward = Callable[[torch.Tensor], "tuple[torch.Tensor, torch.Tensor]"]


def sb3_forward(policy: Any) -> Forward:
    """The forward pass of an sb3-contrib ``MaskableActorCriticPolicy`` as
    ``obs float32 [B, obs_dim] -> (logits [B, N], values [B])``: features computed
    once when the policy and value networks share them (the default network's trunk).

    When the policy's features are the fixed card features (``train/features.py``
    ``CardFeatures`` with ``cards=True``, shared by both networks, the default network)
    the function also has ``fixed(obs) -> extra float32 [B, EXTRA]`` (the card features
    after the observation: no learned weights) and ``head(obs, extra) -> (logits,
    values)``, with ``head(obs, fixed(obs)) == forward(obs)``, so ``fit`` computes the
    fixed part once per sample instead of in every minibatch of every epoch. With a discard
    head (``CardFeatures(discard_head=True)``) its scores are added to the discard logits.
    """
    def heads(feats: torch.Tensor | tuple) -> tuple[torch.Tensor, torch.Tensor]:
        if policy.share_features_extractor:
            latent_pi, latent_vf = policy.mlp_extractor(feats)
        else:
            latent_pi = policy.mlp_extractor.forward_actor(feats[0])
            latent_vf = policy.mlp_extractor.forward_critic(feats[1])
        return policy.action_net(latent_pi), policy.value_net(latent_vf).squeeze(-1)

    ext = policy.features_extractor
    if getattr(ext, "discard_scorer", None) is not None:  # a discard head: its scores read the card features
        def scored(full: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            logits, values = heads(ext(full))
            return ext.scored(logits, full), values

        def forward(o: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return scored(ext.full_features(o))

        def head(o: torch.Tensor, extra: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return scored(torch.cat([o.float(), extra.float()], dim=1))

        forward.fixed, forward.head = ext.fixed, head  # type: ignore[attr-defined]
        return forward

    def forward(o: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return heads(policy.extract_features(o))

    if policy.share_features_extractor and getattr(ext, "has_fixed", False):  # CardFeatures with cards
        def head(o: torch.Tensor, extra: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return heads(ext.from_fixed(o, extra))

        forward.fixed, forward.head = ext.fixed, head  # type: ignore[attr-defined]
    return forward


def fixed_features(forward: Forward, obs: np.ndarray, chunk: int = 8192) -> torch.Tensor | None:
    """``forward.fixed`` of every row of ``obs`` (float32 ``[N, obs_dim]``), kept as uint8
    ``[N, EXTRA]`` (1,208 bytes a position at a standard heads-up table): the card features
    are small counts (same rank, run neighbours, melds, loose cards), exact in a byte.
    None when ``forward`` has no fixed part, or when a value is not a whole number in
    0..255 (then ``fit`` computes the features each minibatch, as without a cache)."""
    fixed = getattr(forward, "fixed", None)
    if fixed is None or not len(obs):
        return None
    out: torch.Tensor | None = None
    with torch.no_grad():
        for s in range(0, len(obs), chunk):
            x = fixed(torch.as_tensor(obs[s:s + chunk]))
            b = x.to(torch.uint8)
            if not torch.equal(b.float(), x):  # a fraction, a negative or a value above 255
                return None
            if out is None:
                out = torch.empty((len(obs), x.shape[1]), dtype=torch.uint8)
            out[s:s + len(b)] = b
    return out


def clone(policy: Any, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray, returns: np.ndarray,
          epochs: int, batch_size: int = 1024, lr: float = 1e-3, seed: int = 0) -> dict[str, float]:
    """``fit`` for an sb3-contrib ``MaskableActorCriticPolicy``: its policy to the
    teacher's actions, its value to ``returns``."""
    policy.set_training_mode(True)
    try:
        return fit(list(policy.parameters()), sb3_forward(policy), obs, masks, actions, returns,
                   epochs, batch_size=batch_size, lr=lr, seed=seed)
    finally:
        policy.set_training_mode(False)


def fit(params: list, forward: Forward, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray,
        returns: np.ndarray, epochs: int, batch_size: int = 1024, lr: float = 1e-3,
        seed: int = 0, progress: Callable[[int], None] | None = None,
        cache: torch.Tensor | None = None, bf16: bool = False, meld_weight: float = 1.0) -> dict[str, float]:
    """Behaviour cloning of any network given as ``forward(obs) -> (logits, values)``
    (see ``sb3_forward``) with Adam on ``params``: loss = masked cross-entropy of the
    teacher's action + 0.5 * squared error of the value against ``returns``.

    Args:
        obs: float32 ``[N, obs_dim]``; masks: bool ``[N, num_actions]`` or a ``MaskRows``;
            actions: int64 ``[N]`` (legal under ``masks``); returns: float32 ``[N]``.
        epochs: passes over the samples (shuffled by ``seed``).
        progress: called after every minibatch with the samples fitted so far (all epochs).
        cache: ``fixed_features(forward, obs)`` when the caller has it (``warm_start`` keeps
            it across DAgger rounds, whose samples grow by appending); None computes it here.
        bf16: the forward pass under ``torch.autocast("cpu", torch.bfloat16)``
            (``TrainConfig.precision``): the weights, gradients and Adam stay float32, the
            losses are computed in float32; the main job's fits 27% faster on a CPU with
            native bfloat16 (``precision.cpu_has_bf16``; docs/benchmarks.md).
        meld_weight: the cross-entropy's weight at positions where a meld or a lay-off is
            legal (any id from ``actions.MELD_BASE`` on: where the teacher chooses between
            putting cards down and keeping them, RULES.md §3), every other position's being
            1; the loss is the weighted mean (``TrainConfig.warmstart_meld_weight``).

    A ``forward`` with a fixed part (``sb3_forward`` of the card-feature network) has it
    computed once per sample before the first epoch (``fixed_features``: uint8, 1,208 bytes
    a position heads-up) instead of once per minibatch: the same numbers, the cloning's
    fit about 15% faster in the main job (docs/benchmarks.md); the rest of a minibatch's
    time is the network's own forward and backward pass and Adam.

    Raises:
        ValueError: ``cache`` is given and has not one row per sample, or ``forward`` has
            no fixed part to pair it with.

    Returns:
        ``{"policy_loss", "value_loss", "accuracy"}``: the last minibatch's losses and the
        share of the first 20,000 samples whose most probable legal action is the teacher's.
    """
    if cache is not None and not hasattr(forward, "head"):
        raise ValueError("a cache needs a forward with a fixed part (sb3_forward of the card-feature network)")
    if cache is not None and len(cache) != len(actions):
        raise ValueError(f"cache has {len(cache)} rows for {len(actions)} samples: give fixed_features(forward, obs)")
    opt = torch.optim.Adam(params, lr=lr)
    ret_t = torch.as_tensor(returns)
    gen = np.random.default_rng(seed)
    n = len(actions)
    obs_t = torch.as_tensor(obs)
    dense = isinstance(masks, np.ndarray)
    mask_t = torch.as_tensor(masks) if dense else None  # a MaskRows is unpacked one minibatch at a time
    act_t = torch.as_tensor(actions)
    if cache is None and epochs > 0:
        cache = fixed_features(forward, obs)  # the fixed features, once per sample
    loss_pi_v = loss_v_v = float("nan")
    for ep in range(epochs):
        order = gen.permutation(n)
        for start in range(0, n, batch_size):
            rows = order[start:start + batch_size]
            idx = torch.as_tensor(rows)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                logits, values = forward(obs_t[idx]) if cache is None else forward.head(obs_t[idx], cache[idx])
            logits, values = logits.float(), values.float()
            m = mask_t[idx] if dense else torch.as_tensor(masks[rows])
            if meld_weight == 1.0:  # the plain mean, as before the weight (the same floats)
                loss_pi = torch.nn.functional.cross_entropy(mask_logits(logits, m), act_t[idx])
            else:
                w = 1.0 + (meld_weight - 1.0) * m[:, MELD_BASE:].any(dim=1).float()
                ce = torch.nn.functional.cross_entropy(mask_logits(logits, m), act_t[idx], reduction="none")
                loss_pi = (ce * w).sum() / w.sum()
            loss_v = torch.nn.functional.mse_loss(values, ret_t[idx])
            loss = loss_pi + 0.5 * loss_v
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss_pi_v, loss_v_v = loss_pi.item(), loss_v.item()
            if progress:
                progress(ep * n + start + len(idx))
    acc = agreement(forward, obs[:20_000], masks[:20_000], actions[:20_000])
    return {"policy_loss": loss_pi_v, "value_loss": loss_v_v, "accuracy": acc}


def agreement(forward: Forward, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> float:
    """Share of positions whose most probable legal action under ``forward`` is ``actions``
    (obs float32 ``[N, obs_dim]``, masks bool ``[N, num_actions]``, actions int64 ``[N]``)."""
    act = greedy_student(forward)
    hits = sum(int((act(obs[s:s + 8192], masks[s:s + 8192]) == actions[s:s + 8192]).sum())
               for s in range(0, len(actions), 8192))
    return hits / max(1, len(actions))


class Ticker:
    """Progress lines for the warm start: ``[warm start] WHAT: done/total UNIT, elapsed``,
    at most one line every ``every`` seconds, printed when progress is reported (after
    each hand, batched step or minibatch, each well under a second), so a long
    collection or fit is not silent for much more than ``every`` seconds.

    Args:
        t0: ``time.perf_counter()`` at the start (elapsed time is counted from it).
        every: seconds between lines.
        enabled: False prints nothing (``bind`` then returns None).
    """

    def __init__(self, t0: float, every: float = 15.0, enabled: bool = True) -> None:
        self.t0, self.every, self.enabled = t0, every, enabled
        self.last = time.perf_counter()

    def bind(self, what: str, total: int, unit: str) -> Callable[[int], None] | None:
        """A ``progress(done)`` callback for one phase (None when disabled)."""
        if not self.enabled:
            return None

        def progress(done: int) -> None:
            now = time.perf_counter()
            if now - self.last >= self.every:
                self.last = now
                print(f"[warm start] {what}: {min(done, total):,}/{total:,} {unit}, {now - self.t0:.0f}s elapsed",
                      flush=True)

        return progress


WARM_START_KEYS = ("seed", "reward", "reward_scale", "init_policy", "warmstart_teacher", "warmstart_decisions", "warmstart_epochs",
                   "warmstart_dagger_rounds", "warmstart_dagger_decisions", "warmstart_dagger_epochs",
                   "warmstart_teacher_weights", "warmstart_behaviour", "warmstart_meld_weight")
"""The ``TrainConfig`` keys a warm start's result depends on: a warm start interrupted and
resumed (``warm_start(..., resume=...)``) must be continued with the same values."""


def clones_first(cfg: Any) -> bool:
    """Whether ``cfg``'s warm start first clones the teacher's own games: not when it starts
    from a loaded policy (``init_policy``: DAgger rounds only, expert iteration)."""
    return cfg.warmstart_decisions > 0 and not getattr(cfg, "init_policy", "").strip()


def num_fits(cfg: Any) -> int:
    """The fits of ``cfg``'s warm start: the cloning (unless ``init_policy``), then one per
    DAgger round."""
    return int(clones_first(cfg)) + cfg.warmstart_dagger_rounds


def _weights(params: list) -> list[torch.Tensor]:
    return [p.detach().clone() for p in params]


def load_weights(params: list, weights: list[torch.Tensor]) -> None:
    """Copy ``weights`` (tensors shaped as ``params``, in order) into the parameters ``params``."""
    with torch.no_grad():
        for p, w in zip(params, weights):
            p.copy_(w)


def warm_start(cfg: Any, rules: Rules, params: list, forward: Forward, verbose: int = 1,
               progress: dict[str, Any] | None = None,
               resume: dict[str, Any] | None = None) -> dict[str, float]:
    """The warm start of a ``TrainConfig`` (its ``warmstart_*`` keys, ``seed`` and
    ``reward_scale``) for the network ``forward`` whose weights are ``params`` (an SB3
    policy: ``sb3_forward``; the RLlib backend passes its learner module's).

    Collects ``warmstart_decisions`` teacher samples and fits them for
    ``warmstart_epochs``; then ``warmstart_dagger_rounds`` rounds of DAgger: the
    cloned policy plays ``warmstart_dagger_decisions`` positions itself, the teacher
    labels them (``collect_on_policy``), they join the samples, and the policy is
    fitted again for ``warmstart_dagger_epochs`` passes over all of them. When the
    network starts from a loaded policy (``cfg.init_policy``, ``clones_first`` false) the
    cloning is skipped: the loaded policy plays the first DAgger round (expert iteration
    with a search teacher: docs/training.md).

    Resumable (``rummy train``'s Ctrl-C): ``progress``, if given, is a dict kept up to
    date at every completed fit: ``fits_done`` (0 .. ``num_fits(cfg)``), ``weights`` (a
    list of ``fits_done + 1`` weight lists, float32 tensors shaped as ``params``: before
    the first fit, then after each), ``result`` (the result so far), ``collect_s``,
    ``fit_s`` and ``collect_workers`` (the processes that played the teacher's hands:
    ``cfg.workers``; a resume replays them with the same count). Its last weights are
    the network at the last completed fit (a fit that an interrupt cuts short is redone). ``resume`` is such a record (``fits_done`` >= 1, its
    last weights already in ``params``): the samples of the completed fits are rebuilt
    by replaying their seeded hands (the teacher's, then each DAgger round's with the
    weights that played it), which gives the same samples, and the warm start goes on
    from the next fit, so an interrupted and resumed warm start ends with the same weights
    as an uninterrupted one (same machine and torch build; torch's floats differ by CPU).

    Returns ``fit``'s result plus ``collect_s``, ``fit_s`` (seconds, the replays of a
    resume included), ``decisions``, ``samples`` (all samples of the last fit),
    ``dagger_K_agreement_before`` per round and ``parts_s`` (this call's seconds by part:
    ``teacher_play``, ``fit``, ``dagger_K_play``, ``dagger_K_fit``; a resume lists the
    parts it ran, replays included).

    Raises:
        ValueError: ``resume`` does not fit ``cfg`` (``fits_done`` outside 1 ..
            ``num_fits(cfg)``, or fewer weight lists than completed fits).
    """
    teacher, weights, seed = cfg.warmstart_teacher, cfg.warmstart_teacher_weights, cfg.seed
    from .precision import use_bf16

    bf16 = use_bf16(cfg.precision)
    total = num_fits(cfg)
    done = 0
    if resume is not None:
        done = resume.get("fits_done")
        if not isinstance(done, int) or isinstance(done, bool) or not 1 <= done <= total:
            raise ValueError(f"a resumed warm start must have 1 to {total} completed fits, got {done!r}")
        if len(resume.get("weights", [])) < done:
            raise ValueError(f"a resumed warm start after {done} fits needs the weights of each, "
                             f"got {len(resume.get('weights', []))}")
    prog = progress if progress is not None else {}
    prog.update(fits_done=done, weights=list(resume["weights"][:done + 1]) if resume else [_weights(params)],
                result=dict(resume.get("result", {})) if resume else {},
                collect_s=float(resume.get("collect_s", 0.0)) if resume else 0.0,
                fit_s=float(resume.get("fit_s", 0.0)) if resume else 0.0)
    if resume is not None and len(prog["weights"]) == done:  # the last weights are the network's own
        prog["weights"].append(_weights(params))

    def completed(res: dict[str, float]) -> None:
        prog.update(fits_done=prog["fits_done"] + 1, result=dict(res))
        prog["weights"].append(_weights(params))

    t0 = time.perf_counter()
    tick = Ticker(t0, enabled=bool(verbose))
    if verbose and done:
        print(f"[warm start] resuming after {done} of {total} fits: replaying the seeded hands of the completed "
              "ones to rebuild their samples", flush=True)
    # a resume replays the teacher's hands in as many parts as the interrupted run played them
    parts = int(resume.get("collect_workers", cfg.workers)) if resume else cfg.workers
    prog["collect_workers"] = parts
    first = int(clones_first(cfg))  # 1: fit 1 clones the teacher's games; 0: DAgger rounds only
    data = None
    parts_s: dict[str, float] = {}  # this call's time by part (a resume's replays included)
    if first:
        data = collect(rules, teacher, cfg.warmstart_decisions, seed, cfg.reward_scale, weights,
                       cfg.warmstart_behaviour, cfg.reward,
                       progress=tick.bind(f"playing {teacher} hands", cfg.warmstart_decisions, "decisions"),
                       packed=True, workers=parts)
        t1 = time.perf_counter()
        prog["collect_s"] += t1 - t0
        parts_s["teacher_play"] = round(t1 - t0, 1)
    cache = fixed_features(forward, data[0]) if data is not None else None  # kept across the rounds
    if first and done < 1:
        res = fit(params, forward, *data, cfg.warmstart_epochs, seed=seed, cache=cache, bf16=bf16,
                  meld_weight=cfg.warmstart_meld_weight,
                  progress=tick.bind("fitting", cfg.warmstart_epochs * len(data[2]), "samples (all epochs)"))
        prog["fit_s"] += time.perf_counter() - t1
        parts_s["fit"] = round(time.perf_counter() - t1, 1)
        completed(res)
    res = prog["result"]
    for r in range(cfg.warmstart_dagger_rounds):
        replay = first + r + 1 <= done  # this round's refit was completed before the interrupt
        t2 = time.perf_counter()
        if replay:  # its positions were played by the weights after the previous fit
            current = _weights(params)
            load_weights(params, prog["weights"][first + r])
        new = collect_on_policy(rules, teacher, cfg.warmstart_dagger_decisions, seed + 1000 * (r + 1),
                                greedy_student(forward), cfg.reward_scale, weights, reward=cfg.reward,
                                progress=tick.bind(f"DAgger round {r + 1}: the policy plays",
                                                   cfg.warmstart_dagger_decisions, "positions"), packed=True,
                                workers=cfg.workers,
                                label_progress=tick.bind(f"DAgger round {r + 1}: {teacher} labels",
                                                         cfg.warmstart_dagger_decisions, "positions (at most)"))
        if replay:
            load_weights(params, current)
        t3 = time.perf_counter()
        prog["collect_s"] += t3 - t2
        parts_s[f"dagger_{r + 1}_play"] = round(t3 - t2, 1)
        more = fixed_features(forward, new[0])  # the new positions' card features only
        cache = more if data is None else None if cache is None or more is None else torch.cat([cache, more])
        data = new if data is None else tuple(
            MaskRows.concat(a, b) if isinstance(a, MaskRows) else np.concatenate([a, b]) for a, b in zip(data, new))
        if replay:
            continue
        agree = agreement(forward, *new[:3])
        res = {**res, **fit(params, forward, *data, cfg.warmstart_dagger_epochs, seed=seed + r + 1, cache=cache, bf16=bf16,
                            meld_weight=cfg.warmstart_meld_weight,
                            progress=tick.bind(f"DAgger round {r + 1}: refitting",
                                               cfg.warmstart_dagger_epochs * len(data[2]), "samples (all epochs)")),
               f"dagger_{r + 1}_agreement_before": round(agree, 4)}
        prog["fit_s"] += time.perf_counter() - t3
        parts_s[f"dagger_{r + 1}_fit"] = round(time.perf_counter() - t3, 1)
        completed(res)
        if verbose:
            print(f"[warm start] DAgger round {r + 1}: the policy agreed with the teacher on {agree:.3f} of "
                  f"{len(new[2]):,} positions it reached itself; refitted on {len(data[2]):,}", flush=True)
    res = {**res, "collect_s": round(prog["collect_s"], 1), "fit_s": round(prog["fit_s"], 1),
           "decisions": cfg.warmstart_decisions if first else 0, "samples": len(data[2]), "parts_s": parts_s}
    if verbose:
        what = (f"cloned {cfg.warmstart_decisions:,} {teacher} decisions" if first else
                f"{cfg.warmstart_dagger_rounds} DAgger round(s) from the loaded policy, labelled by {teacher}")
        print(f"[warm start] {what} ({res['collect_s']}s to play, "
              f"{res['fit_s']}s to fit): accuracy {res['accuracy']:.3f}; by part: "
              + ", ".join(f"{k.replace('_', ' ')} {v}s" for k, v in parts_s.items()), flush=True)
    return res
