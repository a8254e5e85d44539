"""Every hyper-parameter of ``rummy train`` in one documented dataclass.

Values come from the defaults below, then a TOML file (``--config FILE``), then
command-line flags; the config actually used is saved beside the run as
``config.toml`` (and ``rummy_config.json`` for the exporter).
"""
from __future__ import annotations

import dataclasses
import json
import math
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from rummy_env.agents import BASELINES

from .precision import PRECISIONS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


EVAL_MODES = ("auto", "matches", "hands")

CONFIG_DIR = Path(__file__).resolve().parent / "configs"
"""The configs shipped with the package (``rummy train --config NAME``), one TOML file each."""


def shipped_configs() -> list[str]:
    """The names of the shipped configs (``CONFIG_DIR``'s TOML files without ``.toml``), sorted."""
    return sorted(p.stem for p in CONFIG_DIR.glob("*.toml"))


def config_path(spec: str) -> Path:
    """The TOML file of ``--config SPEC``: ``SPEC`` itself when it is a file, else the shipped
    config of that name (``shipped_configs()``; e.g. ``scratch``, the from-scratch recipe).

    Raises:
        ValueError: ``SPEC`` is neither a file nor a shipped config's name (the message
            lists the shipped names).
    """
    p = Path(spec)
    if p.is_file():
        return p
    if spec in shipped_configs():
        return CONFIG_DIR / f"{spec}.toml"
    if p.is_dir():
        raise ValueError(f"--config {spec}: is a folder; give a TOML file (a run's config.toml) or a shipped "
                         f"config: {', '.join(shipped_configs())}")
    raise ValueError(f"--config {spec}: no such file, nor a shipped config (shipped: "
                     f"{', '.join(shipped_configs())}; or give a TOML file's path)")


def init_policy_path(spec: str) -> str:
    """The SB3 zip of an ``init_policy`` value: ``pretrained`` / ``pretrained:PRESET`` (the
    shipped policy of that table, ``rummy_env.agents.PRETRAINED``) or a path.

    Raises:
        ValueError: a preset with no shipped policy, or a path that is not a file.
    """
    import os

    from rummy_env.agents.shipped import shipped_zip

    spec = spec.strip()
    try:
        zip_path = shipped_zip(spec)
    except ValueError as e:
        raise ValueError(f"init_policy {spec!r}: {e}") from None
    if zip_path is not None:
        return zip_path
    if not os.path.isfile(spec):
        raise ValueError(f"init_policy {spec!r} is not a file: give an SB3 zip (a run's best_model.zip or a "
                         f"checkpoint's model.zip), pretrained or pretrained:PRESET")
    return spec
MAX_SEED = 2**32 - 1
"""The largest ``seed`` (numpy's ``np.random.seed``, which SB3 seeds, takes 0..2**32 - 1)."""


FEATURES = ("cards", "cards+jokers", "cards+plan", "none")
"""The ``features`` values of a network (``TrainConfig.features``): the card features,
the card features with the joker planes (a table with jokers only), the card features with
the hand's meld plan (a standard table only: ``plan_features.MeldPlanFeatures``), or none."""


DISCARD_HEADS = ("dense", "cards", "cards+stock")
"""The ``discard_head`` values (``TrainConfig.discard_head``)."""


def check_rllib_network(cfg: Any) -> None:
    """Raise ``ValueError`` when ``cfg`` (a ``TrainConfig``) asks for what the RLlib backend
    does not build: ``deadwood_shaping`` other than 0, ``discard_head`` other than ``"dense"``,
    or ``features`` "cards+plan" (checked before Ray is imported or started)."""
    if cfg.deadwood_shaping:
        raise ValueError(f"deadwood_shaping {cfg.deadwood_shaping!r} shapes the rewards of the SB3 backend's "
                         f"games only; set deadwood_shaping = 0 or use --backend sb3")
    if cfg.discard_head != "dense":
        raise ValueError(f"discard_head {cfg.discard_head!r} is a network of the SB3 backend only; the RLlib "
                         f"backend's network has the dense head: set discard_head = 'dense' or use --backend sb3")
    if cfg.features == "cards+plan":
        raise ValueError("features 'cards+plan' is a network of the SB3 backend only; the RLlib backend builds "
                         "'cards', 'cards+jokers' or 'none': set one of them or use --backend sb3")


def check_features(features: object, table: Any = None) -> None:
    """Raise ``ValueError`` unless ``features`` is one of ``FEATURES`` (and, with ``table``
    given, a ``Table``, ``"cards+jokers"`` only where ``table.jokers``, RULES.md §10.2)."""
    if features not in FEATURES:
        raise ValueError(f"features must be one of {', '.join(repr(f) for f in FEATURES)}, got {features!r}")
    if features == "cards+jokers" and table is not None and not table.jokers:
        raise ValueError(f"features 'cards+jokers' adds joker planes, and {table.describe()} has no jokers; "
                         "use 'cards' (RULES.md §10.2)")
    if features == "cards+plan" and table is not None and table.kind != "standard":
        raise ValueError(f"features 'cards+plan' adds the meld plan of a standard table's hand, and "
                         f"{table.describe()} is not a standard table; use 'cards' (RULES.md §10)")


@dataclass
class TrainConfig:
    """Self-play MaskablePPO configuration (CleanRL-style: one place for everything)."""

    # --- the table
    rules: str = "classic"
    """Rules preset the learner plays (RULES.md §9)."""
    num_players: int | None = None
    """Players at the table (None: the preset's smallest count)."""
    reward_scale: float = 0.01
    """Hand points are multiplied by this to give the reward (a 50-point hand = 0.5)."""
    reward: str = "points"
    """The learner's reward at the end of each hand (train/rewards.py ``hand_rewards``):
    "points" (its zero-sum payoff in points times reward_scale: the environment's own
    reward, what decides a match, RULES.md §5, §7) or "win" (+1 went out, -1 another
    seat did, 0 void hand). Chosen by match win rate: from the same warm start (the
    holding teacher), "win" gave a policy that wins 60.7% of hands but 39.7% of
    classic matches against heuristic (-5.7 points per hand, 300 duplicate matches),
    where "points" reached 57.5% of matches after 3M steps (docs/training.md).
    "match": an episode is a whole match to the rules' target (RULES.md §7; the totals in
    the observations), the reward 0 after every hand but the last and the match result
    at its end (+1 won, -1 lost, heads-up); the measure of an agent as the reward. A warm
    start's value targets under "match" are the result of a match its single hand decides,
    else 0. "points+match": match episodes too, each hand's "points" reward plus the match
    result at its end. reward_scale applies to the points only."""
    deadwood_shaping: float = 0.0
    """Weight of the potential-based deadwood shaping (``rewards.deadwood_potential``):
    each learner step's reward adds ``gamma * phi(s') - phi(s)`` with ``phi = -deadwood_shaping
    * reward_scale * (points in the learner's hand)``, 0 at the end of a hand, so a
    hand's shaped return is its unshaped one plus a constant of its deal and the best
    policy is unchanged; it rewards shedding points (melds, lay-offs, low discards) at
    once instead of at the hand's end. 0 (the default): none. SB3 backend only."""

    # --- run length and seeding
    timesteps: int = 1_000_000
    """Learner timesteps (learner decisions) to train for (1M since the 256-game rollout made
    PPO faster: the main job keeps its ten minutes; 500k before)."""
    seed: int = 0
    """Seeds the deals, the learner's seat, the opponent sampling, torch and PPO."""
    out: str = "runs/classic"
    """Run folder: checkpoints, TensorBoard logs, config, evaluation report, plots."""

    # --- parallel rollout
    n_envs: int = 256
    """Games stepped in lock-step (split over the ``workers``); the learner's and the
    opponents' moves are batched across them. 256 x 16 steps trains about 1.5x faster than
    64 x 64, the same 4,096 steps a rollout (larger forward passes; docs/benchmarks.md)."""
    workers: int = 2
    """Rollout processes (each with n_envs / workers games); 1 keeps everything in-process."""
    torch_threads: int = 2
    """torch intra-op threads in the learner process."""
    precision: str = "auto"
    """The network's matrix products in training (the warm start's fits, the rollouts'
    forward passes, the PPO update): "float32", "bfloat16" (``torch.autocast`` on the CPU:
    weights, gradients and Adam stay float32) or "auto": bfloat16 where the CPU
    multiplies it natively (``precision.cpu_has_bf16``: avx512_bf16 or amx_bf16), else float32. The
    snapshots, evaluations and shipped policies run in float32 whatever it is."""

    # --- PPO (sb3-contrib MaskablePPO)
    n_steps: int = 16
    """Rollout length per game before each update (batch = n_steps * n_envs); a hand that
    goes on past a rollout's end is bootstrapped by the value (GAE)."""
    batch_size: int = 2048
    """Minibatch size of the PPO update."""
    n_epochs: int = 2
    """Passes over each rollout batch."""
    learning_rate: float = 1e-4
    """Adam step size (linearly annealed to lr_final_frac of it)."""
    lr_final_frac: float = 0.2
    """Final learning rate as a fraction of learning_rate."""
    gamma: float = 0.995
    """Discount per learner decision (a hand is ~20-60 learner decisions)."""
    gae_lambda: float = 0.95
    """GAE lambda."""
    clip_range: float = 0.2
    """PPO clip range."""
    ent_coef: float = 0.002
    """Entropy bonus."""
    vf_coef: float = 0.5
    """Value loss weight."""
    max_grad_norm: float = 0.5
    """Gradient clipping."""
    net_arch: list[int] = field(default_factory=lambda: [128])
    """Hidden layer sizes of the policy and of the value network (separate networks,
    after the shared trunk)."""
    features: str = "cards"
    """Network input: "cards" appends meld-structure features computed from the
    observation (train/features.py: sets, run neighbours, unseen outs per card);
    "cards+jokers" adds the planes of the melds a held joker completes (a table with
    jokers only); "cards+plan" adds the meld plan of the hand and of the hand plus the
    upcard (the best partition's melds, the cards laid off, the rest and its count:
    train/plan_features.py; a standard table only; issue 25); "none" feeds the
    observation as it is."""
    trunk: int = 256
    """Width of one learned Linear+Tanh layer after the features, shared by the policy
    and the value network (0: none; net_arch's layers then start from the features)."""
    discard_head: str = "dense"
    """How the policy scores its discards: "dense", by the action head alone (one weight
    row per ``discard <card>`` id, the network of every policy shipped so far); "cards", a
    small network shared by the 52 cards (``features.CardDiscardHead``: each card scored from
    the card features at it and its seven neighbours) adds its score to each discard logit.
    "cards+stock", the same head also reading the stock's size as 52 steps
    (``stock_size > k``: a switch at one stock size, such as the cutting heuristic's end of
    holding at 22 cards, is one input to it; issue 25, docs/training.md).
    Both need card features ("cards", "cards+jokers" or "cards+plan") and the SB3 backend; training with
    "cards" runs at less than half the dense network's rate (``rummy bench train --snapshots``:
    3,477 against 8,031 learner timesteps/s on 2 cores; a real run, experiments/
    issue25_card_head_ppo.toml with its pool growing, 3,242/s in its PPO phase, where the
    dense fifth stage, issue25_cutting_pool.toml, ran 5,113/s with evaluations beside it:
    docs/training.md; "cards+stock" 2,917/s in the 0.7-min PPO phase of
    experiments/issue25_card_stock_clone.toml, too short a phase to compare). A dense policy
    given as ``init_policy`` gets a new head that starts at zero (it plays as it did until
    trained)."""

    # --- warm start (behaviour cloning before self-play; train/warmstart.py)
    warmstart_teacher: str = "heuristic"
    """The agent whose decisions are cloned before PPO starts ("none": no warm start): a
    baseline, ``heuristic:OPTIONS`` (e.g. ``heuristic:holding``), the search
    (``search`` / ``search:OPTIONS``: expert iteration, docs/training.md; the search takes
    about 15 ms a decision, so its DAgger labels are computed in ``workers`` processes), or
    a trained policy (``pretrained``, ``pretrained:PRESET``, ``ppo:PATH``: distillation into
    this config's network, which may be another shape than the teacher's; greedy moves,
    about 0.5 ms a decision)."""
    init_policy: str = ""
    """An SB3 zip (``PATH``, or ``pretrained`` / ``pretrained:PRESET``: a shipped policy) whose
    weights start the network instead of fresh ones; its network must be this config's
    (features, trunk, net_arch) at this table. The warm start then skips the cloning of
    the teacher's own games (``warmstart_decisions``) and runs its DAgger rounds only: the
    loaded policy plays, the teacher labels (expert iteration). "" (the default): none."""
    warmstart_decisions: int = 800_000
    """Teacher decisions collected for the warm start (0: no warm start)."""
    warmstart_epochs: int = 6
    """Passes over the warm-start samples."""
    warmstart_dagger_rounds: int = 2
    """DAgger rounds after the cloning (train/warmstart.py): the cloned policy plays,
    the teacher labels the positions it reaches, and the policy is refitted on all
    samples (0: plain behaviour cloning)."""
    warmstart_dagger_decisions: int = 200_000
    """Positions the policy plays per DAgger round."""
    warmstart_dagger_epochs: int = 2
    """Passes over all samples after each DAgger round."""
    warmstart_meld_weight: float = 1.0
    """The cloning loss's weight at the positions where a meld or a lay-off is legal (the
    teacher's choice between putting cards down and keeping them in hand, RULES.md §3, §5),
    the other positions' being 1 (train/warmstart.py ``fit``). A clone of the cutting
    heuristic lost more to its teacher in that choice than in any other (issue 25,
    docs/training.md)."""
    warmstart_teacher_weights: dict[str, float] = field(default_factory=dict)
    """Overrides of the heuristic teacher's options (agents/scripted.py
    HeuristicAgent.TUNABLE); {} (the default) clones the baseline heuristic itself,
    which wins 63.7% of classic matches against greedy (docs/agents.md). The shipped
    policy's config uses the holding teacher, {W_OUT = 24, W_WEAK = 6, HOLD_MELDS = 1}:
    it keeps its melds in hand until it can go out in one turn and wins 57.0% of
    matches against the baseline heuristic, but its clone loses big hands until PPO on
    the points reward has trained for millions of steps (30% of matches against
    heuristic after 250k steps, 59% after 4M), too long for the default run. Used
    only when warmstart_teacher is "heuristic"."""

    warmstart_behaviour: dict[str, float] = field(
        default_factory=lambda: {"teacher": 0.5, "greedy": 0.25, "heuristic": 0.25})
    """Who plays the warm start's hands (train/warmstart.py ``collect``): each hand,
    each seat's moves come from an agent drawn with these weights ("teacher" or a
    baseline: random, greedy, heuristic); every position is labelled with the
    teacher's action. Other players show the student positions the teacher alone
    never reaches (melds on the table, a hand that melded early). {}: the teacher
    plays every seat."""

    # --- opponent pool
    snapshot_every: int = 200_000
    """Learner timesteps between frozen snapshots of the policy added to the pool."""
    max_snapshots: int = 8
    """Snapshots kept (oldest dropped first)."""
    opponent_weights: dict[str, float] = field(
        default_factory=lambda: {"snapshot": 0.4, "random": 0.05, "greedy": 0.2, "heuristic": 0.35}
    )
    """Sampling weights of the opponent kinds, drawn per seat per hand; "snapshot"
    picks a stored snapshot (the latest with probability latest_prob, else uniform)."""
    latest_prob: float = 0.5
    """Within "snapshot": probability of the most recent snapshot."""
    snapshot_rotation: int = 0
    """Learner timesteps a window lasts (rounded up to whole vector steps of ``n_envs``;
    e.g. 16384: 4 rollouts of the default): within a window the snapshot draws that do
    not pick the latest snapshot give one snapshot per worker, drawn uniformly from the
    stored ones when the window starts. A hand's opponent has the same distribution
    either way; hands dealt in one window share their older snapshot, so fewer distinct
    snapshots answer a round of games (about 2.2 instead of 4.7 with a full pool: a real
    run 2-8% faster, and the main job 4 points lower against both baselines in one pair
    of runs, within their intervals). 0 (the default): every such draw is uniform over
    the stored snapshots. Both backends (on RLlib in each env runner's vector steps)."""
    fixed_opponent: str = ""
    """A ``make_agent`` spec (e.g. ``pretrained``, ``ppo:PATH``, ``MODULE:ATTR``) seated as the
    opponent kind "fixed" (give it a weight in opponent_weights); "" (the default): none.
    ``rummy benchmark best-response`` trains against one frozen agent this way. A trained
    policy (``pretrained``, ``pretrained:PRESET``, ``ppo:PATH``) plays greedily in the
    batched path of the snapshots, one forward pass a round for all its games
    (``subproc.fixed_agent``); any other agent plays one game at a time."""

    # --- evaluation and checkpoints
    eval_every: int = 250_000
    """Learner timesteps between evaluations (0: only at the end)."""
    eval_mode: str = "auto"
    """What an evaluation plays: "matches" (full matches to the target, duplicate: each
    match seed in both seat rotations over the same deals; the best model is chosen by
    the match win rate), "hands" (single duplicate hands; the hand win rate), or
    "auto" (matches when the rules have a target, RULES.md §7)."""
    eval_deals: int = 40
    """Duplicate deals (match seeds in match mode) per baseline at each evaluation."""
    final_eval_deals: int = 300
    """Duplicate deals (match seeds in match mode) per baseline in the final report."""
    eval_workers: int = 2
    """Processes that play the evaluations (results do not depend on it)."""
    eval_baselines: list[str] = field(default_factory=lambda: list(BASELINES))
    """Baselines evaluated against."""
    checkpoint_every: int = 500_000
    """Learner timesteps between checkpoints (one is also written at the end and on Ctrl-C)."""
    progress: bool = True
    """Show a progress bar."""

    def _check_fixed_fits(self) -> None:
        """Raise ``ValueError`` when ``fixed_opponent`` does not load (``make_agent``'s message)
        or cannot play this run's table (``agents.table_misfit``: a policy trained for
        another table, a guide of another table); rules that do not build are left to
        their own check (the ``Trainer``'s)."""
        from rummy_env.agents import make_agent, table_misfit
        from rummy_env.rules import Rules

        agent = make_agent(self.fixed_opponent)  # a bad spec fails here, with make_agent's message
        try:
            rules = Rules.make(self.rules, num_players=self.num_players)
        except (ValueError, TypeError):
            return
        why = table_misfit(agent, rules)
        if why:
            raise ValueError(f"fixed_opponent {self.fixed_opponent.strip()!r} cannot play this run's table: {why}")

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first bad field and what is allowed.

        Every field is first checked against its annotated type (``_check_type``: a
        float field takes a finite int or float, never a bool or a string; a table
        field a table), then against its range."""
        for f in fields(self):
            if f.name not in ("warmstart_behaviour", "warmstart_teacher_weights"):  # checked by their owners below
                _check_type(f.name, getattr(self, f.name), f.type)
        pos_int = ("timesteps", "n_envs", "workers", "torch_threads", "n_steps", "batch_size", "n_epochs",
                   "snapshot_every", "max_snapshots", "eval_deals", "final_eval_deals", "eval_workers",
                   "checkpoint_every")
        for name in pos_int:
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be an int >= 1, got {v!r}")
        if not 0 <= self.seed <= MAX_SEED:
            raise ValueError(f"seed must be an int in 0..{MAX_SEED} (numpy's seed range, 2**32 - 1), got {self.seed}")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}")
        if self.eval_mode not in EVAL_MODES:
            raise ValueError(f"eval_mode must be one of {', '.join(EVAL_MODES)}, got {self.eval_mode!r}")
        if not isinstance(self.eval_every, int) or self.eval_every < 0:
            raise ValueError(f"eval_every must be an int >= 0, got {self.eval_every!r}")
        if self.n_envs % self.workers:
            raise ValueError(f"n_envs ({self.n_envs}) must be a multiple of workers ({self.workers})")
        if (self.n_steps * self.n_envs) % self.batch_size:
            raise ValueError(
                f"batch_size ({self.batch_size}) must divide n_steps * n_envs ({self.n_steps * self.n_envs})")
        if not self.deadwood_shaping >= 0:
            raise ValueError(f"deadwood_shaping must be a finite number >= 0 (0: no shaping), "
                             f"got {self.deadwood_shaping!r}")
        for name in ("learning_rate", "reward_scale"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0, got {getattr(self, name)!r}")
        for name in ("gamma", "gae_lambda", "lr_final_frac", "latest_prob"):
            if not 0 <= getattr(self, name) <= 1:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)!r}")
        from .rewards import REWARDS

        if self.reward not in REWARDS:
            raise ValueError(f"reward must be one of {', '.join(REWARDS)}, got {self.reward!r}")
        kinds = ("snapshot", *BASELINES, "fixed")
        if not isinstance(self.fixed_opponent, str):
            raise ValueError(f"fixed_opponent must be a make_agent name (a string), got {self.fixed_opponent!r}")
        for k, w in self.opponent_weights.items():
            if k not in kinds:
                raise ValueError(f"opponent_weights: unknown kind {k!r}; kinds: {', '.join(kinds)}")
            if not isinstance(w, (int, float)) or w < 0:
                raise ValueError(f"opponent_weights[{k!r}] must be a number >= 0, got {w!r}")
        if sum(self.opponent_weights.values()) <= 0:
            raise ValueError("opponent_weights must have a positive total")
        if self.opponent_weights.get("fixed", 0) and not self.fixed_opponent.strip():
            raise ValueError("opponent_weights gives the kind 'fixed' a weight, but fixed_opponent names no agent")
        if self.fixed_opponent.strip():
            if not self.opponent_weights.get("fixed", 0):
                raise ValueError(f"fixed_opponent names {self.fixed_opponent.strip()!r}, but opponent_weights gives "
                                 f"the kind 'fixed' no weight, so it would never play: give it one (e.g. "
                                 f"--set 'opponent_weights={{fixed=1.0}}', or fixed = 0.2 under [opponent_weights]), "
                                 f"or leave fixed_opponent empty")
            self._check_fixed_fits()
        teacher = self.warmstart_teacher
        if not isinstance(teacher, str) or not (teacher in ("none", *BASELINES, "search", "pretrained") or (
                ":" in teacher and teacher.split(":")[0] in ("heuristic", "search", "pretrained", "ppo"))):
            raise ValueError(f"warmstart_teacher must be none, {', '.join(BASELINES)}, heuristic:OPTIONS, search, "
                             f"search:OPTIONS, pretrained, pretrained:PRESET or ppo:PATH, got {self.warmstart_teacher!r}")
        if self.warmstart_teacher != "none":
            from rummy_env.agents import make_agent

            make_agent(self.warmstart_teacher)  # a bad option fails here, with make_agent's message
        if not isinstance(self.init_policy, str):
            raise ValueError(f"init_policy must be a path to an SB3 zip, pretrained or pretrained:PRESET (a string), "
                             f"got {self.init_policy!r}")
        if self.init_policy.strip():
            init_policy_path(self.init_policy)  # a missing file or unknown preset fails here
            if self.warmstart_teacher != "none" and self.warmstart_dagger_rounds == 0:
                raise ValueError("init_policy skips the cloning of the teacher's games, so its warm start is the "
                                 "DAgger rounds: set warmstart_dagger_rounds >= 1, or warmstart_teacher = 'none' "
                                 "for PPO from the loaded weights")
        if not isinstance(self.warmstart_decisions, int) or self.warmstart_decisions < 0:
            raise ValueError(f"warmstart_decisions must be an int >= 0, got {self.warmstart_decisions!r}")
        if not isinstance(self.warmstart_teacher_weights, dict):
            raise ValueError(f"warmstart_teacher_weights must be a table of weights, got {self.warmstart_teacher_weights!r}")
        if self.warmstart_teacher_weights:
            from rummy_env.agents.scripted import HeuristicAgent

            HeuristicAgent(**self.warmstart_teacher_weights)  # names and values checked there
        from .warmstart import check_behaviour

        check_behaviour(self.warmstart_behaviour)  # a table of known names and finite weights
        for name in ("warmstart_dagger_rounds", "warmstart_dagger_decisions"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"{name} must be an int >= 0, got {v!r}")
        w = self.warmstart_meld_weight
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w <= 0:
            raise ValueError(f"warmstart_meld_weight must be a finite number > 0 (1: every position weighs the "
                             f"same), got {w!r}")
        if not isinstance(self.warmstart_dagger_epochs, int) or self.warmstart_dagger_epochs < 1:
            raise ValueError(f"warmstart_dagger_epochs must be an int >= 1, got {self.warmstart_dagger_epochs!r}")
        if not isinstance(self.warmstart_epochs, int) or self.warmstart_epochs < 1:
            raise ValueError(f"warmstart_epochs must be an int >= 1, got {self.warmstart_epochs!r}")
        for b in self.eval_baselines:
            if b not in BASELINES:
                raise ValueError(f"eval_baselines: unknown baseline {b!r}; baselines: {', '.join(BASELINES)}")
        if not isinstance(self.trunk, int) or isinstance(self.trunk, bool) or self.trunk < 0:
            raise ValueError(f"trunk must be an int >= 0, got {self.trunk!r}")
        if not isinstance(self.snapshot_rotation, int) or isinstance(self.snapshot_rotation, bool) \
                or self.snapshot_rotation < 0:
            raise ValueError(f"snapshot_rotation must be an int >= 0 (learner timesteps; 0: no windows), "
                             f"got {self.snapshot_rotation!r}")
        check_features(self.features)  # and "cards+jokers" / "cards+plan" at their tables: the trainer checks it
        if self.discard_head not in DISCARD_HEADS:
            raise ValueError(f"discard_head must be one of {', '.join(repr(h) for h in DISCARD_HEADS)}, "
                             f"got {self.discard_head!r}")
        if self.discard_head != "dense" and self.features == "none":
            raise ValueError(f"discard_head {self.discard_head!r} scores each discard from the card features: it needs features "
                             "'cards', 'cards+jokers' or 'cards+plan', not 'none'")
        if not self.net_arch or not all(isinstance(x, int) and x > 0 for x in self.net_arch):
            raise ValueError(f"net_arch must be a non-empty list of positive ints, got {self.net_arch!r}")

    # --- (de)serialisation
    @property
    def rotate_steps(self) -> int:
        """``snapshot_rotation`` in vector steps of ``n_envs`` games, rounded up (0: none)."""
        return -(-self.snapshot_rotation // self.n_envs)

    @property
    def eval_matches(self) -> bool | None:
        """``eval_mode`` as ``evaluate``'s ``matches`` argument (None: decided by the rules)."""
        return {"auto": None, "matches": True, "hands": False}[self.eval_mode]

    def to_dict(self) -> dict[str, Any]:
        """The config as a plain dict (``None`` fields left out, as TOML has no null)."""
        d = dataclasses.asdict(self)
        return {k: v for k, v in d.items() if v is not None}

    def to_toml(self) -> str:
        """The config as TOML text (what ``config.toml`` holds)."""
        lines, tables = [], []
        for k, v in self.to_dict().items():
            if isinstance(v, dict):
                tables.append((k, v))
            else:
                lines.append(f"{k} = {_toml_value(v)}")
        for k, v in tables:
            lines.append(f"\n[{k}]")
            lines += [f"{kk} = {_toml_value(vv)}" for kk, vv in v.items()]
        return "\n".join(lines) + "\n"

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TrainConfig":
        """Build from a dict; unknown keys raise ``ValueError`` listing the known ones."""
        names = {f.name for f in fields(cls)}
        bad = [k for k in d if k not in names]
        if bad:
            raise ValueError(f"unknown config key(s) {', '.join(bad)}; keys: {', '.join(sorted(names))}")
        cfg = cls(**d)
        cfg.validate()
        return cfg

    @classmethod
    def from_toml(cls, path: str | Path) -> "TrainConfig":
        """Read a TOML config file (keys as the fields of this class), or a shipped config
        by name (``config_path``: ``TrainConfig.from_toml("scratch")``).

        Raises:
            ValueError: no such file or shipped config, unreadable TOML or an unknown/bad key.
        """
        path = config_path(str(path))
        try:
            with open(path, "rb") as f:
                d = tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise ValueError(f"cannot read config {path}: {e}") from None
        return cls.from_dict(d)

    def save(self, run_dir: Path, rules_json: Any) -> None:
        """Write ``config.toml`` and ``rummy_config.json`` (config + resolved rules) into ``run_dir``."""
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.toml").write_text(self.to_toml())
        (run_dir / "rummy_config.json").write_text(
            json.dumps({"env": "rummy_v0", "rules": rules_json, "config": self.to_dict()}, indent=2))


_TYPE_WORDS = {"int": "an int", "float": "a finite number", "str": "a string", "bool": "true or false"}
_TYPE_PLURALS = {"int": "ints", "float": "finite numbers", "str": "strings", "bool": "booleans"}


def _is(v: Any, t: str) -> bool:
    """``v`` is a value of the scalar type named ``t`` (bools are no numbers; floats finite)."""
    if t == "bool":
        return isinstance(v, bool)
    if t == "int":
        return isinstance(v, int) and not isinstance(v, bool)
    if t == "float":
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
    if t == "str":
        return isinstance(v, str)
    raise AssertionError(f"no check for type {t}")  # pragma: no cover - a new annotation


def _check_type(name: str, v: Any, annotation: str) -> None:
    """Raise ``ValueError`` when ``v`` is not of the field's annotated type
    (``int``, ``float``, ``str``, ``bool``, ``X | None``, ``list[X]``, ``dict[str, X]``)."""
    t = annotation.replace(" ", "")
    if t.endswith("|None"):
        if v is None:
            return
        t = t[: -len("|None")]
    if t.startswith("list["):
        inner = t[5:-1]
        if not isinstance(v, list) or not all(_is(x, inner) for x in v):
            raise ValueError(f"{name} must be a list of {_TYPE_PLURALS[inner]}, got {v!r}")
        return
    if t.startswith("dict[str,"):
        inner = t[len("dict[str,"):-1]
        if not isinstance(v, dict):
            raise ValueError(f"{name} must be a table of {_TYPE_PLURALS[inner]} (TOML {{key = value, ...}}), got {v!r}")
        for k, x in v.items():
            if not isinstance(k, str):
                raise ValueError(f"{name}'s keys must be names (strings), got the key {k!r}")
            if not _is(x, inner):
                raise ValueError(f"{name}[{k!r}] must be {_TYPE_WORDS[inner]}, got {x!r}")
        return
    if not _is(v, t):
        raise ValueError(f"{name} must be {_TYPE_WORDS[t]}" + (" or none" if annotation.endswith("None") else "")
                         + f", got {v!r}")


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {v!r} as TOML")
