"""The opponent pool: frozen snapshots of the learner plus the scripted baselines.

A snapshot is a frozen copy of the actor part of a MaskablePPO policy (features,
policy MLP, action head). Snapshots act in batches across all games of a rollout
(``act_batch``), sampling from their masked policy with a seeded numpy RNG.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from rummy_env.agents.masking import mask_logits



class ActorNet(nn.Module):
    """The actor of an SB3 MlpPolicy as one plain module: observation float32
    ``[B, obs_dim]`` -> logits float32 ``[B, N]`` (N: the table's action count, ``Table.num_actions``: 579 at a standard table) (no mask applied).

    Built from sizes and its table (``num_players``, ``kind``: ``CardFeatures``'; a
    checkpoint's ``spec`` holds them, so worker processes rebuild it from a state dict) or from a
    policy with ``ActorNet.from_policy``; layers mirror SB3's features extractor
    (``rummy_env.train.features.CardFeatures``: the card features when ``features="cards"``
    (with the joker planes: ``"cards+jokers"``), then
    a shared ``trunk`` layer when ``trunk > 0``; neither: the observation itself),
    ``mlp_extractor.policy_net`` (Linear + activation per hidden size) and ``action_net``;
    with ``discard_head=True`` (or ``"cards+stock"``: the head reads the stock steps) the
    features' ``CardDiscardHead`` adds its scores to the discard logits (``discard_logits``),
    as the policy does.

    Raises:
        ValueError: ``features`` is not one of ``features.FEATURES`` (or ``"cards+jokers"``
            at a table without jokers).
    """

    def __init__(self, obs_dim: int, net_arch: list[int], n_actions: int, activation: str = "Tanh",
                 features: str = "none", trunk: int = 0, num_players: int | None = None,
                 kind: str | None = None, discard_head: bool | str = False) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        from .config import check_features

        check_features(features)
        if features != "none" or trunk:
            import gymnasium as gym
            import numpy as np

            from .features import CardFeatures

            space = gym.spaces.Box(-np.inf, np.inf, (obs_dim,), np.float32)
            self.features: nn.Module = CardFeatures(space, cards=features != "none", trunk=trunk,
                                                    num_players=num_players, kind=kind,
                                                    jokers=features == "cards+jokers", plan=features == "cards+plan",
                                                    discard_head=discard_head)
            num_players, kind = self.features.num_players, self.features.kind
            last = self.features.features_dim
        else:
            if discard_head:
                raise ValueError("discard_head=True scores the discards from the card features: it needs features "
                                 "'cards', 'cards+jokers' or 'cards+plan'")
            self.features = nn.Identity()
            last = obs_dim
        for h in net_arch:
            layers += [nn.Linear(last, h), getattr(nn, activation)()]
            last = h
        self.policy_net = nn.Sequential(*layers)
        self.action_net = nn.Linear(last, n_actions)
        self.spec = {"obs_dim": obs_dim, "net_arch": list(net_arch), "n_actions": n_actions, "activation": activation,
                     "features": features, "trunk": trunk, "num_players": num_players, "kind": kind}
        if discard_head:  # only then, so the specs of nets without one stay as they were
            self.spec["discard_head"] = "cards+stock" if discard_head == "cards+stock" else True
        self.eval()
        for p in self.parameters():
            p.requires_grad_(False)

    @classmethod
    def from_policy(cls, policy: Any) -> "ActorNet":
        """Copy the actor weights of an SB3 ``(Maskable)ActorCriticPolicy`` with a flat Box
        observation, an MLP extractor and a ``FlattenExtractor`` or ``CardFeatures``."""
        from .features import CardFeatures, network_settings

        linears = [m for m in policy.mlp_extractor.policy_net if isinstance(m, nn.Linear)]
        acts = [type(m).__name__ for m in policy.mlp_extractor.policy_net if not isinstance(m, nn.Linear)]
        obs_dim = int(policy.observation_space.shape[0])
        fx = policy.features_extractor
        # the network's shape as the trainer reads a saved policy's kwargs (one reading for both)
        settings = network_settings({"features_extractor_class": type(fx),
                                     "features_extractor_kwargs": getattr(policy, "features_extractor_kwargs", None)})
        features, trunk, table = settings["features"], settings["trunk"], {}
        if isinstance(fx, CardFeatures):
            table = dict(num_players=fx.num_players, kind=fx.kind)  # the policy's own table, never its sizes
            if settings["discard_head"] != "dense":
                table["discard_head"] = True if settings["discard_head"] == "cards" else settings["discard_head"]
        net = cls(obs_dim, [m.out_features for m in linears], policy.action_net.out_features,
                  acts[0] if acts else "Tanh", features, trunk, **table)
        if isinstance(fx, CardFeatures):
            net.features.load_state_dict({k: v.detach().cpu().clone() for k, v in fx.state_dict().items()})
        net.policy_net.load_state_dict({k: v.detach().cpu().clone() for k, v in policy.mlp_extractor.policy_net.state_dict().items()})
        net.action_net.load_state_dict({k: v.detach().cpu().clone() for k, v in policy.action_net.state_dict().items()})
        return net

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        if self.__dict__.get("_bf16") is not None or self.discard_scorer is not None:
            return self.head(self.core(obs))
        return self.action_net(self.policy_net(self.features(obs)))

    def use_bf16(self, on: bool = True) -> "ActorNet":
        """Run the learned layers (trunk, policy MLP, action head) in bfloat16 from now on
        (``on=False``: back to float32); returns ``self``. A bfloat16 copy of those layers
        is kept beside the float32 weights, which stay what ``state_dict`` gives (a
        checkpoint's snapshots stay float32); the card features stay float32 and the
        logits come back float32. The arithmetic is that of the learner's rollouts under
        ``torch.autocast("cpu", torch.bfloat16)`` (``TrainConfig.precision``; the same
        casts of inputs, weights and biases, tanh in bfloat16): a snapshot plays the very
        logits the policy it froze played in its rollouts (tested). Its trunk layer costs
        about half the float32 one for 2-8 rows on a CPU with native bfloat16, measured
        alone; a real run's workers were no faster for it (docs/benchmarks.md, issue 26).
        Call it again after loading new weights."""
        self.__dict__["_bf16"] = None
        if on:
            import copy

            trunk = self.features.trunk if hasattr(self.features, "trunk") else nn.Identity()
            scorer = self.discard_scorer if self.discard_scorer is not None else nn.Identity()
            self.__dict__["_bf16"] = copy.deepcopy(nn.ModuleList([trunk, self.policy_net, self.action_net, scorer])
                                                   ).to(torch.bfloat16)
        return self

    @property
    def discard_scorer(self) -> nn.Module | None:
        """The features' ``CardDiscardHead`` (``discard_head=True``), else None."""
        return getattr(self.features, "discard_scorer", None)

    @property
    def core_key(self) -> tuple | None:
        """What the weight-free card features (``CardMeldFeatures``) depend on: nets with
        equal keys compute the same core features of an observation (``core``), so a batch
        of games against several snapshots computes them once (``act_snapshots``). ``None``
        when the net has no card features."""
        s = self.spec
        return (s["obs_dim"], s["num_players"], s["kind"], s["features"]) if s["features"] != "none" else None

    def core(self, obs: torch.Tensor) -> torch.Tensor:
        """The weight-free card features of float32 ``[B, obs_dim]`` observations
        (``[B, obs_dim + EXTRA]``, ``+ JOKER_EXTRA`` with ``"cards+jokers"``:
        ``CardMeldFeatures``), or the observations themselves without card features.
        After ``use_bf16`` computed under ``torch.autocast`` as the learner computes them
        (its matrix product in bfloat16: the same values, counts of 0/1 cards)."""
        if self.spec["features"] == "none":
            return obs
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.__dict__.get("_bf16") is not None):
            return self.features.core(obs)

    def head(self, core: torch.Tensor) -> torch.Tensor:
        """Logits ``[B, N]`` from ``core`` features: the learned layers (trunk, policy MLP,
        action head, and the discard head's scores added: ``add_discard_scores``);
        ``forward(obs) == head(core(obs))``."""
        from .features import add_discard_scores

        half = self.__dict__.get("_bf16")
        if half is not None:
            trunk, policy_net, action_net, scorer = half
            x = core.to(torch.bfloat16)
            logits = action_net(policy_net(trunk(x)))
            return add_discard_scores(logits, scorer(x) if self.discard_scorer is not None else None).float()
        x = self.features.trunk(core) if hasattr(self.features, "trunk") else core
        return self.discard_logits(self.action_net(self.policy_net(x)), core)

    def discard_logits(self, logits: torch.Tensor, core: torch.Tensor) -> torch.Tensor:
        """``logits`` ``[B, N]`` with the discard head's scores of ``core`` (``[B, obs_dim +
        EXTRA]``) added to the discard ids; unchanged without a discard head."""
        if self.discard_scorer is None:
            return logits
        from .features import add_discard_scores

        return add_discard_scores(logits, self.discard_scorer(core))


def act_snapshots(groups: list[tuple["SnapshotAgent", list[np.random.Generator]]], obs: np.ndarray,
                  masks: np.ndarray) -> np.ndarray:
    """Actions (int64 ``[B]``) of several snapshots, each answering its own rows: ``groups``
    is ``(agent, rngs)`` per snapshot in row order (agent ``i`` answers the next
    ``len(rngs)`` rows of ``obs`` float32 ``[B, obs_dim]`` and ``masks`` ``[B, N]``). The
    same actions as each agent's ``act_batch(obs[rows], masks[rows], rngs=rngs)``, with the
    weight-free card features computed in one pass for every row when the snapshots'
    ``core_key`` agree (one run's snapshots do): one pass of the features instead of one
    per snapshot (issue 26: a long run's full pool answered each snapshot on its own).

    Raises:
        ValueError: the groups' rows do not add up to ``B``."""
    if sum(len(r) for _, r in groups) != len(obs):
        raise ValueError(f"the groups answer {sum(len(r) for _, r in groups)} rows, the batch has {len(obs)}")
    keys = {a.net.core_key for a, _ in groups}
    shared = len(keys) == 1 and None not in keys
    out = np.empty(len(obs), dtype=np.int64)
    with torch.no_grad():
        core = groups[0][0].net.core(torch.as_tensor(obs, dtype=torch.float32)) if shared else None
        k = 0
        for agent, rngs in groups:
            j = k + len(rngs)
            logits = (mask_logits(agent.net.head(core[k:j]).numpy(), masks[k:j]) if shared
                      else masked_logits(agent.net, obs[k:j], masks[k:j]))
            out[k:j] = agent.sample(logits, rngs=rngs)
            k = j
    return out


def masked_logits(net: nn.Module, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Logits of ``net`` for a batch, illegal actions set to ``MASK_FILL`` (float32 ``[B, N]``)."""
    with torch.no_grad():
        logits = net(torch.as_tensor(obs, dtype=torch.float32)).numpy()
    return mask_logits(logits, masks)


class TrunkCache:
    """What ``act_snapshots_incremental`` remembers per seat of a batch of games: the card
    features ``x`` (float32 ``[rows, F]``) a snapshot's trunk last saw at that seat, the
    trunk's pre-activation ``h`` (float32 ``[rows, T]``) it computed from them, and the
    ``serial`` of that snapshot (``SnapshotAgent.serial``; -1: nothing remembered). A row is
    a seat of a game (``SelfPlayVecEnv``: game ``i``'s seat ``q`` is row ``i * n + q``).
    The arrays are allocated at the first use (their widths are the net's), and again,
    empty, when the widths change (a pool reloaded with nets of another shape)."""

    def __init__(self, rows: int) -> None:
        if not isinstance(rows, int) or rows < 1:
            raise ValueError(f"a TrunkCache needs rows >= 1, got {rows!r}")
        self.rows = rows
        self.x: torch.Tensor | None = None
        self.h: torch.Tensor | None = None
        self.serial = torch.full((rows,), -1, dtype=torch.long)

    def forget(self, lo: int, hi: int) -> None:
        """Forget rows ``lo .. hi - 1`` (a new hand: its first decision is computed whole)."""
        self.serial[lo:hi] = -1


def act_snapshots_incremental(groups: list[tuple["SnapshotAgent", list[np.random.Generator]]], obs: np.ndarray,
                              masks: np.ndarray, pool: "OpponentPool", cache: TrunkCache,
                              keys: np.ndarray) -> np.ndarray:
    """``act_snapshots`` in float32 with each row's trunk computed from its seat's last one
    (issue 26: a worker's snapshot forward passes were about half of its time, small
    batches of a few rows per snapshot, each call paying for the whole trunk).

    The first learned layer (``trunk``: ``tanh(W x + b)`` on the card features ``x``, 1,756
    wide at a standard 2-player table) is linear before its tanh, and a seat's features
    change in a few entries from one of its decisions to the next (about 40 of 1,756, a
    drawn card and its neighbours). So for row ``r`` (the seat ``keys[r]``, a row of
    ``cache``) whose last decision this hand was answered by the same snapshot,
    ``W x = W x_last + W (x - x_last)``: the product of the weights' columns at the entries
    that changed only, for every row and snapshot of the round in one
    ``embedding_bag`` over the pool's stacked trunks (``OpponentPool.stack``); a seat's first
    decision of a hand, or under another snapshot, starts from ``x_last = 0`` (``W x + b``
    whole, over the nonzero entries). Then each snapshot's policy MLP and action head on
    its rows, and Gumbel-max sampling with each row's generator (``SnapshotAgent.sample``).

    The logits are the float32 network's (``ActorNet.forward`` without ``use_bf16``) up
    to the order of the trunk's sums (within 1e-4 over a hand, tested), so the actions
    are ``act_snapshots``' for the same generators except where two noisy logits tie to
    that precision.

    Args:
        groups: ``(agent, rngs)`` per snapshot, in row order, as ``act_snapshots``; every
            agent in the pool's stack (``pool.in_stack``).
        obs: float32 ``[B, obs_dim]``; masks: ``[B, N]`` (nonzero = legal).
        keys: int ``[B]``: each row's seat in ``cache``, all distinct.

    Raises:
        ValueError: the groups' rows do not add up to ``B``, ``keys`` is not ``B`` distinct
            rows of ``cache``, or an agent is not in the stack."""
    b = len(obs)
    if sum(len(r) for _, r in groups) != b:
        raise ValueError(f"the groups answer {sum(len(r) for _, r in groups)} rows, the batch has {b}")
    keys = np.asarray(keys)
    if keys.shape != (b,) or (b and (keys.min() < 0 or keys.max() >= cache.rows)) or len(np.unique(keys)) != b:
        raise ValueError(f"keys must be {b} distinct rows of the cache (0..{cache.rows - 1}), got {keys!r}")
    if not all(pool.in_stack(a) for a, _ in groups):
        raise ValueError("every agent of an incremental batch must be a snapshot in the pool's stack")
    wt, bias, width = pool.stack()
    with torch.no_grad():
        core = groups[0][0].net.features.core(torch.as_tensor(obs, dtype=torch.float32))
        if cache.x is None or cache.x.shape[1] != core.shape[1] or cache.h.shape[1] != bias.shape[1]:
            # the first use, or a pool reloaded with nets of another width: nothing to remember
            cache.x = torch.zeros(cache.rows, core.shape[1])
            cache.h = torch.zeros(cache.rows, bias.shape[1])
            cache.serial.fill_(-1)
        lengths = torch.tensor([len(r) for _, r in groups])
        slot = torch.repeat_interleave(torch.tensor([a.slot for a, _ in groups]), lengths)
        serial = torch.repeat_interleave(torch.tensor([a.serial for a, _ in groups]), lengths)
        key = torch.from_numpy(keys.astype(np.int64))
        hit = (cache.serial[key] == serial)[:, None]
        delta = core - cache.x[key] * hit
        rows, cols = delta.nonzero(as_tuple=True)
        counts = torch.bincount(rows, minlength=b)
        pre = torch.where(hit, cache.h[key], bias[slot]) + torch.nn.functional.embedding_bag(
            cols + slot[rows] * width, wt, torch.cumsum(counts, 0) - counts, mode="sum",
            per_sample_weights=delta[rows, cols])
        cache.x[key], cache.h[key], cache.serial[key] = core, pre, serial
        act = torch.tanh(pre)
        logits = np.empty((b, masks.shape[1]), dtype=np.float32)
        k = 0
        for agent, rngs in groups:
            j = k + len(rngs)
            net = agent.net
            logits[k:j] = net.discard_logits(net.action_net(net.policy_net(act[k:j])), core[k:j]).numpy()
            k = j
    logits = mask_logits(logits, masks)
    if any(a.greedy for a, _ in groups):
        out = np.empty(b, dtype=np.int64)
        k = 0
        for agent, rngs in groups:
            out[k:k + len(rngs)] = agent.sample(logits[k:k + len(rngs)], rngs=rngs)
            k += len(rngs)
        return out
    return sample_rows(logits, [r for _, rngs in groups for r in rngs])


def sample_rows(logits: np.ndarray, rngs: list[np.random.Generator]) -> np.ndarray:
    """Gumbel-max actions (int64 ``[B]``) from masked logits float32 ``[B, N]``, row ``i``'s
    noise from ``rngs[i]`` (``gumbel_from_uniform`` of its ``random`` draws).

    Raises:
        ValueError: not one generator per row."""
    if len(rngs) != len(logits):
        raise ValueError(f"rngs must have one generator per row ({len(logits)}), got {len(rngs)}")
    u = np.empty(logits.shape)
    for row, r in zip(u, rngs):
        r.random(out=row)
    return (logits + gumbel_from_uniform(u)).argmax(axis=1)


def gumbel_from_uniform(u: np.ndarray) -> np.ndarray:
    """Standard Gumbel noise from uniform draws ``u`` in [0, 1) (float64, any shape),
    in place: ``-log(-log(1 - u))``, what ``Generator.gumbel`` computes from the same
    ``Generator.random`` draw, so a generator's stream gives the same noise either way
    (up to the last bit of the vectorised log). ``Generator.gumbel`` redraws the one
    value ``u = 0`` (probability 2**-53); here it gives a large finite noise (about
    708) instead of infinity, so a masked logit (``MASK_FILL``) still never wins.
    One vectorised pass instead of a ``gumbel`` call per row (issue 26: a worker's
    snapshot sampling)."""
    np.subtract(1.0, u, out=u)
    np.log(u, out=u)
    np.negative(u, out=u)
    np.maximum(u, np.finfo(np.float64).tiny, out=u)
    np.log(u, out=u)
    return np.negative(u, out=u)


class SnapshotAgent:
    """A frozen policy snapshot. ``act`` follows API.md's agent protocol (sampling);
    ``act_batch`` answers many games at once. ``greedy=True`` takes the most probable
    legal action instead of sampling."""

    def __init__(self, net: ActorNet, name: str = "snapshot", seed: int | None = None, greedy: bool = False) -> None:
        self.net = net
        self.name = name
        self.greedy = greedy
        self.rng = np.random.default_rng(seed)
        self.slot: int | None = None  # its place in its pool's stack (OpponentPool.stack), if any
        self.serial = -1  # its pool's count of snapshots added before it: TrunkCache tells them apart

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(seed)

    def act_batch(self, obs: np.ndarray, masks: np.ndarray, rng: np.random.Generator | None = None,
                  rngs: list[np.random.Generator] | None = None) -> np.ndarray:
        """Actions (int64 ``[B]``) for observations ``[B, obs_dim]`` and masks ``[B, A]``
        (bool or int8, nonzero = legal): one forward pass for the batch. Sampling adds
        Gumbel noise to the masked logits (Gumbel-max): drawn from ``rng`` (default the
        agent's own) for the whole batch, or with ``rngs`` (one generator per row) row
        ``i``'s from ``rngs[i]``, so a row's action does not depend on the other rows
        (what the batched training env uses: each game samples from its own stream);
        ``rngs`` wins when both are given."""
        return self.sample(masked_logits(self.net, obs, masks), rng, rngs)

    def sample(self, logits: np.ndarray, rng: np.random.Generator | None = None,
               rngs: list[np.random.Generator] | None = None) -> np.ndarray:
        """Actions (int64 ``[B]``) from masked logits float32 ``[B, N]``, as ``act_batch``
        draws them (the most probable with ``greedy``, else Gumbel-max)."""
        if self.greedy:
            return logits.argmax(axis=1)
        if rngs is not None:
            return sample_rows(logits, rngs)
        g = (rng or self.rng).gumbel(size=logits.shape)
        return (logits + g).argmax(axis=1)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(self.act_batch(observation[None], action_mask[None])[0])


class OpponentPool:
    """Samples opponents: each seat of each hand draws a kind by ``weights``; the
    "snapshot" kind picks the latest snapshot with probability ``latest_prob``, else a
    uniformly random stored one (with windows, ``rotate``: the window's one). Until the
    first snapshot exists, "snapshot" draws fall back to the other kinds.

    Args:
        weights: kind -> weight (kinds: snapshot, random, greedy, heuristic).
        max_snapshots: snapshots kept; the oldest is dropped first.
        latest_prob: probability of the newest snapshot within the snapshot kind.
        baselines: kind -> agent object for the scripted kinds.
        bf16: run the snapshots' learned layers in bfloat16 (``ActorNet.use_bf16``), as
            the learner's rollouts do when it trains in bfloat16 (their logits are then
            exactly those the policy played in its rollouts); default False: float32.
        stack: stack the snapshots for ``act_snapshots_incremental`` (float32 only; False:
            each snapshot's layers answer its own rows whole, ``act_snapshots``).

    The stack (``stack()``): with ``stack`` and not ``bf16``, every snapshot whose net has card
    features and a trunk layer (``ActorNet`` with ``features`` ``"cards"`` or
    ``"cards+jokers"`` and ``trunk > 0``, the default network) takes one of ``2 * max_snapshots`` slots, its trunk's weights
    copied there when it is added. A dropped snapshot keeps its slot while there are free
    ones, so the hands it was dealt into still go on incrementally; a new snapshot takes
    a free slot, else the slot of the snapshot dropped longest ago (whose remaining games,
    if any, are then answered whole). ``stackable`` says whether every stored snapshot has
    a slot (snapshots of one run do; nets of two specs in one pool do not all).
    """

    def __init__(self, weights: dict[str, float], max_snapshots: int, latest_prob: float,
                 baselines: dict[str, Any], bf16: bool = False, stack: bool = True) -> None:
        self.bf16 = bool(bf16)
        self.stacks = bool(stack) and not self.bf16
        self.weights = {k: float(w) for k, w in weights.items() if w > 0}
        self.max_snapshots = max_snapshots
        self.latest_prob = latest_prob
        self.baselines = baselines
        self.snapshots: list[SnapshotAgent] = []
        self.snapshot_steps: list[int] = []
        self.window: SnapshotAgent | None = None
        self.slotted: list[SnapshotAgent | None] = [None] * (2 * max_snapshots)
        self._retired: list[int] = []  # the slots of dropped snapshots, the longest dropped first
        self._serial = 0
        self._stack: tuple[torch.Tensor, torch.Tensor, int] | None = None
        self._stack_spec: dict | None = None

    def __getstate__(self) -> dict[str, Any]:
        """The pool without its stack's tensors (a copy of the slotted snapshots' trunk
        weights, most of its size): ``__setstate__`` copies them in again."""
        d = self.__dict__.copy()
        if d["_stack"] is not None:
            wt, bias, width = d["_stack"]
            d["_stack"] = ("rebuild", wt.shape[1], width)
        return d

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(d)
        if self._stack is not None and isinstance(self._stack[0], str):  # pickled by __getstate__
            _, t, width = self._stack
            n = len(self.slotted)
            wt, bias = torch.zeros(n * width, t), torch.zeros(n, t)
            for slot, agent in enumerate(self.slotted):
                if agent is not None:
                    linear = agent.net.features.trunk[0]
                    wt[slot * width:(slot + 1) * width] = linear.weight.detach().t()
                    bias[slot] = linear.bias.detach()
            self._stack = (wt, bias, width)

    def clear(self) -> None:
        """Drop every snapshot (and the window); the stack's slots are free again."""
        for a in self.slotted:
            if a is not None:
                a.slot = None
        self.snapshots, self.snapshot_steps, self.window = [], [], None
        self.slotted, self._retired = [None] * (2 * self.max_snapshots), []

    @property
    def stackable(self) -> bool:
        """True when there are snapshots and every one has a slot in the stack."""
        return bool(self.snapshots) and all(self.in_stack(a) for a in self.snapshots)

    def in_stack(self, agent: Any) -> bool:
        """Whether ``agent`` holds a slot of this pool's stack (``act_snapshots_incremental``
        can answer it): a stored snapshot, or a dropped one whose slot no newer snapshot
        has taken yet."""
        slot = getattr(agent, "slot", None)
        return slot is not None and self.slotted[slot] is agent

    def stack(self) -> tuple[torch.Tensor, torch.Tensor, int]:
        """The slotted snapshots' trunks: ``(wt, bias, F)``, ``wt`` float32
        ``[2 * max_snapshots * F, T]`` (slot ``s``'s weights transposed in rows ``s * F ..
        (s + 1) * F - 1``: one row per card feature), ``bias`` float32 ``[2 * max_snapshots, T]``,
        ``F`` the features' width (1,756 at a standard 2-player table), ``T`` the trunk's.

        Raises:
            ValueError: no snapshot has a slot."""
        if self._stack is None:
            raise ValueError("no snapshot of this pool is stacked (bf16 pool, or nets without a trunk layer)")
        return self._stack

    def _slot_in(self, agent: "SnapshotAgent") -> None:
        spec = agent.net.spec
        if not self.stacks or spec["features"] == "none" or not spec["trunk"]:
            return
        if not any(self.slotted):
            self._stack_spec = None
        if self._stack_spec is None:
            linear = agent.net.features.trunk[0]
            width, t = linear.in_features, linear.out_features
            n = len(self.slotted)
            self._stack = (torch.zeros(n * width, t), torch.zeros(n, t), width)
            self._stack_spec = spec
        elif spec != self._stack_spec:
            return
        if None in self.slotted:
            slot = self.slotted.index(None)
        else:  # the snapshot dropped longest ago gives up its slot: its games left go whole
            slot = self._retired.pop(0)
            self.slotted[slot].slot = None
        wt, bias, width = self._stack
        linear = agent.net.features.trunk[0]
        wt[slot * width:(slot + 1) * width] = linear.weight.detach().t()
        bias[slot] = linear.bias.detach()
        self.slotted[slot] = agent
        agent.slot = slot

    def add_snapshot(self, policy: Any, step: int) -> None:
        """Freeze ``policy`` (an SB3 policy) as a new snapshot taken at ``step``."""
        self.add_net(ActorNet.from_policy(policy), step)

    def add_net(self, net: ActorNet, step: int) -> None:
        """Add an already frozen actor as a snapshot taken at ``step`` (in bfloat16 with
        the pool's ``bf16``)."""
        if self.bf16:
            net.use_bf16()
        agent = SnapshotAgent(net, name=f"snapshot@{step}")
        agent.serial, self._serial = self._serial, self._serial + 1
        self.snapshots.append(agent)
        self.snapshot_steps.append(step)
        if len(self.snapshots) > self.max_snapshots:
            dropped = self.snapshots.pop(0)
            self.snapshot_steps.pop(0)
            if dropped is self.window:  # no longer stored: uniform draws until the next rotation
                self.window = None
            if dropped.slot is not None:  # it keeps its slot for the hands in play while it can
                self._retired.append(dropped.slot)
        if self.snapshots and self.snapshots[-1] is agent:  # kept (max_snapshots >= 1)
            self._slot_in(agent)

    def rotate(self, rng: np.random.Generator) -> None:
        """Start a new window (``TrainConfig.snapshot_rotation``): until the next call, the
        draws that do not pick the latest snapshot give one snapshot, drawn here uniformly
        from the stored ones (``None`` while none is stored, or after it is dropped: then
        each draw is uniform again). A hand's opponent has the same distribution as
        without windows (the latest with ``latest_prob``, else each stored one alike);
        only hands dealt in the same window share their older snapshot, so a round of
        games asks fewer distinct snapshots for a forward pass."""
        self.window = self.snapshots[int(rng.integers(len(self.snapshots)))] if self.snapshots else None

    def sample(self, rng: np.random.Generator) -> tuple[str, Any]:
        """(kind, agent) for one seat."""
        kinds = [k for k in self.weights if k != "snapshot" or self.snapshots]
        w = np.array([self.weights[k] for k in kinds])
        kind = kinds[int(rng.choice(len(kinds), p=w / w.sum()))]
        if kind == "snapshot":
            if rng.random() < self.latest_prob:
                return kind, self.snapshots[-1]
            pick = self.snapshots[int(rng.integers(len(self.snapshots)))]  # drawn either way: the same stream
            return kind, self.window if self.window is not None else pick
        return kind, self.baselines[kind]

    def state(self) -> dict[str, Any]:
        """What a checkpoint stores: the snapshots' weights and steps."""
        return {"steps": list(self.snapshot_steps),
                "specs": [s.net.spec for s in self.snapshots],
                "nets": [s.net.state_dict() for s in self.snapshots]}

    def load_state(self, state: dict[str, Any]) -> None:
        """Restore snapshots saved by ``state()``."""
        self.clear()
        for step, spec, sd in zip(state["steps"], state["specs"], state["nets"]):
            if "kind" not in spec and (spec.get("features") != "none" or spec.get("trunk")):
                # a checkpoint written before specs held their table: its snapshots' table is the
                # one its sizes belong to (the agent's lookup)
                from rummy_env.table import table_for

                n, kind = table_for(spec["obs_dim"], spec["n_actions"])
                spec = dict(spec, num_players=n, kind=kind)
            net = ActorNet(**spec)
            net.load_state_dict(sd)
            self.add_net(net, step)
