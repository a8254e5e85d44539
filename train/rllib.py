"""``rummy train --backend rllib``: self-play PPO on Ray RLlib (the ``rllib`` extra).

RLlib PPO (new API stack). Each env runner steps many games at once in one
``SelfPlayVectorEnv`` (``train/vector_env.py``: the SB3 backend's batched games, encoder
and opponents), so RLlib sees a single-agent vector env whose steps are the learner's
decisions; the learner plays one random seat of each hand and the other seats are
played inside the env by frozen snapshots of it and by the scripted baselines, drawn
per seat per hand with the SB3 trainer's opponent-pool semantics. The driver adds each
snapshot to every runner's env (``RLlibTrainer.add_snapshot``) and keeps a copy of the
pool for checkpoints.

Run folder layout (as the SB3 trainer's where it applies)::

    config.toml, rummy_config.json   the config used and the resolved rules
    checkpoints/iter_<N>/            an RLlib Algorithm checkpoint + rummy_state.json,
                                     rummy_config.json, rummy_pool.pt (the snapshots;
                                     resume with --resume, export with ``rummy export``)
    eval_history.json, report.json, report.md, progress.jsonl

Ray stays on this machine unless ``--address`` is given: before Ray is imported,
``ray_environ(local=True)`` turns off usage stats, makes the node address 127.0.0.1
and points ``HOME`` at a folder holding an empty ``ray_bootstrap_config.yaml`` (which
skips Ray's cloud-metadata probe); ``ray.init`` runs without the dashboard.

Config mapping (``TrainConfig`` -> RLlib): ``n_steps * n_envs`` -> train batch (learner
decisions, as SB3's rollout), ``n_envs`` -> games stepped at once, shared among the env
runners (``--envs-per-env-runner`` overrides), ``batch_size`` -> minibatch, ``n_epochs`` -> epochs, ``learning_rate`` (constant),
``gamma``, ``gae_lambda``, ``clip_range``, ``ent_coef``, ``vf_coef``, ``max_grad_norm``,
``features``/``trunk``/``net_arch`` (the SB3 backend's network, ``CardPPOTorchRLModule``:
card features and a shared trunk, then separate tanh policy and value MLPs), ``snapshot_every``/``max_snapshots``/
``opponent_weights``/``latest_prob``/``snapshot_rotation`` (the pool), ``eval_*``,
``checkpoint_every``; ``timesteps`` counts the learner's own decisions; ``precision``
(bfloat16 matrix products where the CPU has them, decided on each machine: the learner's
update, the runners' forward passes and their snapshots, as on the SB3 backend, and the
warm start). No KL penalty (``use_kl_loss=False``), as SB3's PPO. ``workers`` is
SB3-only: ``--num-env-runners`` sets the parallel rollout workers.
"""
from __future__ import annotations

import argparse
import atexit
import importlib.util
import json
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rummy_env.rules import Rules
from rummy_env.table import Table

from .config import TrainConfig, check_features, check_rllib_network
from .report import append_history, summary_line, write_report

def _has_rllib() -> bool:
    # without importing ray (find_spec("ray.rllib") would import it): Ray reads its
    # environment at import time, see ray_environ
    spec = importlib.util.find_spec("ray")
    return spec is not None and any((Path(d) / "rllib").is_dir() for d in (spec.submodule_search_locations or ()))


if not _has_rllib():
    raise ModuleNotFoundError("No module named 'ray.rllib' (ray[rllib] is not installed)", name="ray")

DEFAULT_RUNNERS = 2
"""``--num-env-runners`` when not given: two, which on the reference 2-core machine sample
about 1.4x as fast as one (docs/rllib.md); each takes a CPU of Ray's."""
ROLLOUT_FRAGMENT_LENGTH = 100
"""Steps of each game per sample call, at most."""
MODULES = Path("learner_group") / "learner" / "rl_module"
LEARNER_ID = "default_policy"
"""The trained module's id (RLlib's ``DEFAULT_MODULE_ID``; ``rllib_modules.LEARNER``)."""
OLD_LEARNER_ID = "learner"
"""Its id in checkpoints of the multi-agent env runners (before the vector env)."""
POOL_FILE = "rummy_pool.pt"
"""The opponent pool's snapshots in a checkpoint (``OpponentPool.state()``, ``torch.save``)."""
STATE_FILE = "rummy_state.json"
CONFIG_NAME = "rummy_config.json"


# ---------------------------------------------------------------------------- Ray on loopback

def ray_environ(local: bool = True) -> dict[str, str]:
    """Set the environment Ray reads at import and start; call before ``import ray``.

    Always: ``RAY_USAGE_STATS_ENABLED=0``. With ``local=True`` (a Ray started by this
    process): ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0`` (the node address is 127.0.0.1,
    no UDP route probe) and, unless ``$HOME/ray_bootstrap_config.yaml`` exists, ``HOME``
    pointed at a new temporary folder holding one that contains ``{}`` (this skips the
    dashboard's cloud-metadata probe). Not for ``--address``: a node of a real cluster
    must advertise a routable address.

    Returns the variables set.
    """
    env = {"RAY_USAGE_STATS_ENABLED": "0"}
    if local:
        env["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
        home = os.environ.get("HOME")
        if not home or not (Path(home) / "ray_bootstrap_config.yaml").is_file():
            d = Path(tempfile.mkdtemp(prefix="rummy-ray-home-"))
            (d / "ray_bootstrap_config.yaml").write_text("{}\n")
            env["HOME"] = str(d)
            atexit.register(shutil.rmtree, d, ignore_errors=True)
    os.environ.update(env)
    return env


def loopback_address(address: str | None) -> bool:
    """``address`` (``host:port``, ``ray://host:port``) names a Ray on this machine's
    loopback (127.0.0.0/8, ``localhost``, ``::1``)."""
    from rummy_env.loopback import is_loopback

    if not address:
        return False
    return is_loopback(address.split("://", 1)[-1].rsplit(":", 1)[0])


def init_ray(address: str | None = None, num_cpus: int | None = None, object_store_mb: int = 512) -> Any:
    """``ray.init`` for training: a new local Ray on 127.0.0.1 without the dashboard
    (``address=None``), or join the cluster at ``address`` (``"auto"``, ``host:6379``
    or ``ray://host:10001``). A cluster on loopback (``127.0.0.1:PORT``: nodes started
    with ``--node-ip-address 127.0.0.1``, e.g. a test's two-node cluster) is joined as a
    local Ray is started: this driver's node address 127.0.0.1 too (``ray_environ(local=True)``),
    else Ray would rewrite the address to the machine's outside one."""
    local = address is None or loopback_address(address)
    if "ray" in sys.modules and local and os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER") != "0":
        raise RuntimeError("ray was imported before ray_environ(local=True); the node would not stay on loopback")
    ray_environ(local=local)
    import ray

    if ray.is_initialized():
        return ray
    kw: dict[str, Any] = dict(include_dashboard=False, configure_logging=True, logging_level="WARNING",
                              log_to_driver=True)
    if address is None:
        # "local": always a new Ray of our own, never one left by `ray start` on this machine
        kw.update(num_cpus=num_cpus, object_store_memory=object_store_mb * 2**20, _node_ip_address="127.0.0.1")
        os.environ.pop("RAY_ADDRESS", None)
    elif local:
        kw.update(_node_ip_address="127.0.0.1")
    ray.init(address=address or "local", **kw)
    return ray


# ---------------------------------------------------------------------------- the algorithm

def build_config(cfg: TrainConfig, rules: Rules, num_env_runners: int = 1, envs_per_env_runner: int | None = None,
                 runner_resources: dict[str, float] | None = None) -> Any:
    """The RLlib ``PPOConfig`` for a ``TrainConfig``. Each env runner steps
    ``envs_per_env_runner`` games at once in one ``SelfPlayVectorEnv`` (default
    ``runner_games(cfg, num_env_runners)``: the config's ``n_envs`` games shared among the
    runners), with the opponents inside the env; the train batch is ``n_steps * n_envs``
    learner decisions (SB3's rollout) in whole fragments. ``runner_resources``: custom Ray
    resources each env runner needs (``custom_resources_per_env_runner``), which places
    the runners on the nodes that advertise them (``ray start --resources``)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from . import rllib_modules as m

    refuse_sb3_only(cfg)
    weights = {k: float(v) for k, v in cfg.opponent_weights.items()}
    if weights.get("fixed", 0) > 0:
        raise ValueError("the rllib backend has no 'fixed' opponent kind (fixed_opponent); train against a "
                         "fixed agent with the sb3 backend")
    # the SB3 backend's network (train/features.py), the same config keys
    table = Table.of(rules)  # the table is told to the module, never read from the observation's size
    model = {"features": cfg.features, "trunk": cfg.trunk, "net_arch": list(cfg.net_arch),
             "num_players": table.num_players, "kind": table.kind, "precision": cfg.precision}
    games = envs_per_env_runner or runner_games(cfg, num_env_runners)
    batch = cfg.n_steps * cfg.n_envs
    register_env(m.ENV_NAME, m.make_vector_env)
    env_config = {"rules": rules.to_json(), "reward_scale": cfg.reward_scale, "reward": cfg.reward,
                  "opponent_weights": weights, "max_snapshots": cfg.max_snapshots, "latest_prob": cfg.latest_prob,
                  "rotate_steps": -(-cfg.snapshot_rotation // games), "seed": cfg.seed}
    return (
        PPOConfig()
        .framework("torch")
        # RLlib's env checker steps the env with unmasked random actions: skip it
        .environment(env=m.ENV_NAME, env_config=env_config, disable_env_checking=True)
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=games,
                     gym_env_vectorize_mode="vector_entry_point",
                     rollout_fragment_length=fragment_length(batch, num_env_runners * games),
                     num_cpus_per_env_runner=1, custom_resources_per_env_runner=dict(runner_resources or {}))
        .learners(num_learners=0)
        .rl_module(rl_module_spec=RLModuleSpec(module_class=m.CardPPOTorchRLModule, model_config=model))
        .training(lr=cfg.learning_rate, gamma=cfg.gamma, lambda_=cfg.gae_lambda, clip_param=cfg.clip_range,
                  entropy_coeff=cfg.ent_coef, vf_loss_coeff=cfg.vf_coef, grad_clip=cfg.max_grad_norm,
                  train_batch_size_per_learner=batch, minibatch_size=min(cfg.batch_size, batch),
                  num_epochs=cfg.n_epochs,
                  # SB3's PPO has no KL penalty: the clipped objective alone (RLlib's default adds one)
                  use_kl_loss=False)
        .callbacks(m.RummyCallbacks)
        .debugging(seed=cfg.seed, log_level="WARN")
    )


def runner_games(cfg: TrainConfig, num_env_runners: int) -> int:
    """Games each env runner steps at once by default: the config's ``n_envs`` shared
    among ``num_env_runners`` runners, rounded up."""
    return max(1, -(-cfg.n_envs // max(1, num_env_runners)))


def fragment_length(batch: int, num_games: int) -> int:
    """The rollout fragment (steps of each game, at most ``ROLLOUT_FRAGMENT_LENGTH``) that
    divides each game's share of the batch into whole fragments (RLlib requires the batch
    to be reachable in whole fragments); ``num_games``: the games of all runners."""
    per_runner = max(1, -(-batch // num_games))
    k = -(-per_runner // ROLLOUT_FRAGMENT_LENGTH)
    return -(-per_runner // k)


def _count(v: Any) -> int:
    """A count from Ray's metrics as an int: Ray reports NaN (and sometimes None) for a
    counter nothing has reached yet in the reporting window, e.g. ``num_episodes`` of an
    iteration in which no hand ended; those are 0 here."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return 0
    return int(f) if math.isfinite(f) else 0


ITERATION_PARTS = {"sample_s": "env_runner_sampling_timer", "learn_s": "learner_update_timer",
                   "sync_s": "synch_weights"}
"""The parts of a PPO iteration ``progress.jsonl`` reports, by RLlib's timer names
(``result["timers"]``, seconds, RLlib's running means): the env runners' sampling, the
learner's update, the weights' broadcast to the runners. RLlib's PPO runs them one
after the other, so they bound what more env runners can give (``projected_rate``)."""


def iteration_parts(result: dict[str, Any]) -> dict[str, float]:
    """``{"sample_s", "learn_s", "sync_s"}`` of an ``algo.train()`` result (seconds; a timer
    RLlib did not report is left out)."""
    timers = result.get("timers") or {}
    out = {}
    for key, name in ITERATION_PARTS.items():
        try:
            v = float(timers.get(name))
        except (TypeError, ValueError):
            continue
        if math.isfinite(v):
            out[key] = round(v, 4)
    return out


def projected_rate(learner_steps_per_iter: float, runner_rate: float, runners: int, learn_s: float,
                   sync_s: float = 0.0) -> float:
    """Learner timesteps/s of a run with ``runners`` env runners, each sampling
    ``runner_rate`` learner steps/s (measured: the iteration's learner steps over its
    ``sample_s`` with one runner), when an iteration of ``learner_steps_per_iter`` learner
    steps also takes ``learn_s`` for the update and ``sync_s`` for the weights (RLlib's
    synchronous PPO: sample, then learn, then broadcast; docs/rllib.md):
    ``S / (S / (runners * runner_rate) + learn_s + sync_s)``. It grows with the runners
    toward ``S / (learn_s + sync_s)``, the learner's bound.

    Raises:
        ValueError: a count or rate that is not positive, or a negative time.
    """
    if not (learner_steps_per_iter > 0 and runner_rate > 0 and runners >= 1):
        raise ValueError(f"steps per iteration, runner rate and runners must be positive, got "
                         f"{learner_steps_per_iter!r}, {runner_rate!r}, {runners!r}")
    if learn_s < 0 or sync_s < 0:
        raise ValueError(f"learn_s and sync_s are seconds >= 0, got {learn_s!r}, {sync_s!r}")
    s = float(learner_steps_per_iter)
    return s / (s / (runners * runner_rate) + learn_s + sync_s)


def learner_steps(result: dict[str, Any]) -> int:
    """The learner's decisions sampled so far (lifetime) from an ``algo.train()`` result:
    the env steps (every step of ``SelfPlayVectorEnv`` is one of the learner's decisions;
    the step that deals a new hand is a reset, not counted)."""
    return _count(result.get("env_runners", {}).get("num_env_steps_sampled_lifetime"))


class RLlibTrainer:
    """Owns the RLlib ``Algorithm``, the snapshot pool and the schedules of one run."""

    def __init__(self, cfg: TrainConfig, resume: str | None = None, num_env_runners: int = 1,
                 envs_per_env_runner: int | None = None, verbose: int = 1,
                 runner_resources: dict[str, float] | None = None) -> None:
        from . import rllib_modules as m

        cfg.validate()
        if num_env_runners < 1:
            raise ValueError(f"--num-env-runners must be >= 1, got {num_env_runners}")
        self.m = m
        self.cfg = cfg
        self.rules = Rules.make(cfg.rules, num_players=cfg.num_players)
        check_features(cfg.features, Table.of(self.rules))  # "cards+jokers" needs jokers: before any work
        check_rllib_network(cfg)
        self.run_dir = Path(cfg.out)
        self.verbose = verbose
        ck_state = check_checkpoint(resume, self.rules) if resume else None
        self.run_dir.mkdir(parents=True, exist_ok=True)
        cfg.save(self.run_dir, self.rules.to_json())
        import torch

        torch.set_num_threads(cfg.torch_threads)
        self.algo = build_config(cfg, self.rules, num_env_runners, envs_per_env_runner,
                                 runner_resources).build_algo()
        from .pool import OpponentPool

        # the driver's copy of the pool's snapshots (what checkpoints store and the env
        # runners get); the scripted opponents live in the runners' envs only
        self.pool = OpponentPool({"snapshot": 1.0}, cfg.max_snapshots, cfg.latest_prob, baselines={}, stack=False)
        if ck_state is not None:
            self.algo.restore_from_path(str(Path(resume).resolve()))
            self.state = ck_state
            self.pool.load_state(torch.load(Path(resume) / POOL_FILE, weights_only=True))  # check_checkpoint: it is there
        else:
            self.state = {"num_timesteps": 0, "iteration": 0, "next_snapshot": 0,
                          "next_eval": cfg.eval_every or float("inf"),
                          "next_checkpoint": cfg.checkpoint_every, "eval_history": [], "wall_time_s": 0.0}
            if cfg.warmstart_decisions > 0 and cfg.warmstart_teacher != "none":
                self.state["warm_start"] = self._warm_start()
        self._push_all()
        self._t0 = time.perf_counter()
        self._wall0 = float(self.state.get("wall_time_s", 0.0))

    def _learner_module(self) -> Any:
        return self.algo.learner_group._learner.module[self.m.LEARNER]  # num_learners=0: the local learner

    def _warm_start(self) -> dict[str, Any]:
        """Behaviour-clone the teacher into the learner module (train/warmstart.py), as
        the SB3 trainer does; ``_push_all`` then sends the weights to the EnvRunners."""
        from .warmstart import warm_start

        mod = self._learner_module()
        mod.train()
        try:  # the SB3 network's forward (features computed once), as sb3_forward is for SB3
            return warm_start(self.cfg, self.rules, list(mod.parameters()), mod.logits_and_values,
                              verbose=self.verbose)
        except KeyboardInterrupt:
            print("\ninterrupted during the warm start, before any PPO step: the RLlib backend saves no checkpoint "
                  "of a warm start (the SB3 backend does); run the command again to start over", flush=True)
            raise
        finally:
            mod.eval()

    # -- weights and the pool
    def _push_all(self) -> None:
        """Force the learner's weights (no weights sequence number: always applied) and the
        whole snapshot pool onto every EnvRunner (after a warm start or a restore)."""
        lg = self.algo.learner_group
        weights = {self.m.LEARNER: lg.get_state(components=[f"learner/rl_module/{self.m.LEARNER}"],
                                                inference_only=True)["learner"]["rl_module"][self.m.LEARNER]}
        pool = self.pool.state()

        def apply(runner: Any, _w=weights, _p=pool) -> None:
            module = getattr(runner, "module", None)
            if module is not None:  # a single-agent runner holds the module itself, not a MultiRLModule
                module.set_state(_w if hasattr(module, "keys") else _w[LEARNER_ID])
            if getattr(runner, "env", None) is not None:
                runner.env.unwrapped.load_pool(_p)

        self.algo.env_runner_group.foreach_env_runner(apply, local_env_runner=True)

    def add_snapshot(self, step: int) -> None:
        """Freeze the learner's actor as a snapshot taken at learner step ``step``, in the
        driver's pool and in every EnvRunner's env (the oldest dropped past ``max_snapshots``)."""
        net = self._learner_module().actor_net()
        self.pool.add_net(net, step)
        spec, sd = net.spec, net.state_dict()

        def apply(runner: Any, _spec=spec, _sd=sd, _step=step) -> None:
            if getattr(runner, "env", None) is not None:
                runner.env.unwrapped.add_snapshot(_spec, _sd, _step)

        self.algo.env_runner_group.foreach_env_runner(apply, local_env_runner=True)

    # -- evaluation
    def greedy_agent(self) -> Any:
        from .pool import SnapshotAgent

        return SnapshotAgent(self.actor(), name="learner", greedy=True)

    def actor(self) -> Any:
        """The learner's actor (obs -> logits) as a plain torch module (a copy)."""
        mod = self._learner_module() if self.algo.learner_group.is_local else None
        if mod is None:  # remote learners: rebuild from the weights
            mod = self.algo.get_module(self.m.LEARNER)
        return self.m.actor_of(mod)

    def wall_time(self) -> float:
        """Seconds of training so far, warm start and earlier segments of a resumed run included."""
        return self._wall0 + time.perf_counter() - self._t0

    def evaluate(self, deals: int, seed: int) -> dict[str, Any]:
        """The greedy learner against each of ``eval_baselines`` on ``deals`` duplicate match
        seeds (or hands: ``eval_mode``) from ``seed``: baseline -> ``evaluate`` result."""
        from rummy_env.eval.tournament import evaluate

        agent = self.greedy_agent()
        # one process: forking a process that runs Ray is not safe
        return {b: evaluate(agent, b, rules=self.rules, deals=deals, seed=seed, matches=self.cfg.eval_matches)
                for b in self.cfg.eval_baselines}

    def eval_row(self, t: int, res: dict[str, Any] | None = None, final: bool = False) -> dict[str, Any]:
        """Evaluate (unless ``res`` is given) and append the row to ``eval_history.json``."""
        if res is None:
            res = self.evaluate(self.cfg.eval_deals, seed=10_000 + self.cfg.seed)
        row = append_history(self.state["eval_history"], self.run_dir, t, self.wall_time(), res, final=final)
        if self.verbose and not final:
            print(f"[eval @ {t:,} steps, {self.wall_time():.0f}s] {summary_line(res)}", flush=True)
        return row

    # -- checkpoints
    def checkpoint(self) -> Path:
        st = self.state
        st["wall_time_s"] = self.wall_time()
        path = self.run_dir / "checkpoints" / f"iter_{st['iteration']}"
        tmp = path.with_name(path.name + ".tmp")
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        self.algo.save_to_path(str(tmp.resolve()))
        import torch

        torch.save(self.pool.state(), tmp / POOL_FILE)
        (tmp / STATE_FILE).write_text(json.dumps(st, indent=2, default=float))
        self.cfg.save(tmp, self.rules.to_json())
        (tmp / "config.toml").unlink()
        if path.exists():
            shutil.rmtree(path)
        tmp.rename(path)
        if self.verbose:
            print(f"[checkpoint] {path}", flush=True)
        return path

    # -- the loop
    def train_iteration(self) -> dict[str, Any]:
        st, cfg = self.state, self.cfg
        if st["num_timesteps"] >= st["next_snapshot"]:
            self.add_snapshot(st["num_timesteps"])
            st["next_snapshot"] = st["num_timesteps"] + cfg.snapshot_every
        t0 = time.perf_counter()
        result = self.algo.train()
        dt = time.perf_counter() - t0
        st["ppo_wall_s"] = st.get("ppo_wall_s", 0.0) + dt  # the PPO phase alone: sampling and updates
        st["iteration"] = (_count(result.get("training_iteration")) or st["iteration"] + 1)
        before = st["num_timesteps"]
        st["num_timesteps"] = max(before, learner_steps(result))
        er = result.get("env_runners", {})
        row = {"iteration": st["iteration"], "timesteps": st["num_timesteps"],
               "env_steps": _count(er.get("num_env_steps_sampled_lifetime")),
               "iter_s": round(dt, 2), "learner_steps_per_s": round((st["num_timesteps"] - before) / dt, 1),
               "env_steps_per_s": round(_count(er.get("num_env_steps_sampled")) / dt, 1),
               "episodes": _count(er.get("num_episodes")),
               "wall_time_s": round(self.wall_time(), 1)}
        row.update(iteration_parts(result))
        for k, v in er.items():
            if isinstance(k, str) and k.startswith(("win", "points")):
                # NaN (no hand of that kind ended this iteration) is left out: progress.jsonl stays JSON
                if isinstance(v, dict):
                    row.update({f"{k}/{kk}": round(float(vv), 4) for kk, vv in v.items() if math.isfinite(float(vv))})
                elif math.isfinite(float(v)):
                    row[k] = round(float(v), 4)
        with open(self.run_dir / "progress.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")
        if self.verbose:
            wins = {k: v for k, v in row.items() if k.startswith("win")}
            print(f"[iter {row['iteration']}] {row['timesteps']:,} learner steps, {row['iter_s']}s "
                  f"({row['env_steps_per_s']} env steps/s) {json.dumps(wins)}", flush=True)
        if st["num_timesteps"] >= st["next_eval"]:
            self.eval_row(st["num_timesteps"])
            st["next_eval"] = st["num_timesteps"] + cfg.eval_every
        if st["num_timesteps"] >= st["next_checkpoint"]:
            self.checkpoint()
            st["next_checkpoint"] = st["num_timesteps"] + cfg.checkpoint_every
        return row

    def learn(self, max_iterations: int | None = None) -> dict[str, Any]:
        """Train to ``cfg.timesteps`` learner steps (or ``max_iterations`` iterations),
        checkpoint, and write the final report. On Ctrl-C: checkpoint and re-raise."""
        n = 0
        try:
            while self.state["num_timesteps"] < self.cfg.timesteps and (max_iterations is None or n < max_iterations):
                self.train_iteration()
                n += 1
        except KeyboardInterrupt:
            path = self.checkpoint()
            print(f"\ninterrupted: checkpoint saved to {path}; resume with --resume {path}", flush=True)
            raise
        self.last_checkpoint = self.checkpoint()
        return self.final_report()

    def final_report(self) -> dict[str, Any]:
        """Evaluate the learner (greedy) on ``final_eval_deals`` per baseline; write
        ``report.json`` and ``report.md`` (the SB3 trainer's format)."""
        t = self.state["num_timesteps"]
        res = self.evaluate(self.cfg.final_eval_deals, seed=20_000 + self.cfg.seed)
        self.eval_row(t, res, final=True)
        wall = self.wall_time()
        ws, ppo_s = self.state.get("warm_start", {}), self.state.get("ppo_wall_s", 0.0)
        report = {"backend": "rllib", "timesteps": t, "iterations": self.state["iteration"],
                  "wall_time_s": round(wall, 1), "timesteps_per_s": round(t / wall, 1) if wall > 0 else None,
                  "ppo_wall_time_s": round(ppo_s, 1),
                  "ppo_timesteps_per_s": round(t / ppo_s, 1) if ppo_s > 0 else None,
                  "warm_start_s": round(ws.get("collect_s", 0.0) + ws.get("fit_s", 0.0), 1),
                  "warm_start_parts_s": ws.get("parts_s", {}),
                  "rules": self.rules.to_json(), "deals": self.cfg.final_eval_deals, "results": res,
                  "checkpoint": str(getattr(self, "last_checkpoint", "")),
                  "samples_by_node": self.samples_by_node()}
        if self.verbose:
            print("[nodes] env steps by Ray node (this process's runners): "
                  + ", ".join(f"{k[:12]} {v:,}" for k, v in report["samples_by_node"].items()), flush=True)
        write_report(self.run_dir, report, f"Evaluation after {t:,} timesteps ({wall / 60:.1f} min, RLlib PPO)", self.verbose)
        return report

    def samples_by_node(self) -> dict[str, int]:
        """The learner steps each Ray node's env runners have taken so far in this process
        (node id -> steps; ``SelfPlayVectorEnv.steps`` of every remote runner's env), so a
        multi-node run shows where its samples came from."""
        def where(runner: Any) -> tuple[str, int]:
            import ray

            env = getattr(runner, "env", None)
            return ray.get_runtime_context().get_node_id(), (env.unwrapped.steps if env is not None else 0)

        out: dict[str, int] = {}
        for node, steps in self.algo.env_runner_group.foreach_env_runner(where, local_env_runner=False):
            out[node] = out.get(node, 0) + _count(steps)
        return out

    def stop(self) -> None:
        self.algo.stop()


# ---------------------------------------------------------------------------- checkpoints

def check_checkpoint(path: str | os.PathLike, rules: Rules | None = None, resume: bool = True) -> dict[str, Any]:
    """Read ``rummy_state.json`` of an RLlib checkpoint folder (``checkpoints/iter_N``),
    checking it is one and, with ``rules``, that it was trained on them; with ``resume``
    (default), also that this version can resume it (the vector env's single module and
    ``rummy_pool.pt``; ``resume=False`` for an export, which needs the learner module only).

    Raises:
        ValueError: not a folder, not an RLlib checkpoint of this trainer, other rules, or
            (``resume``) a checkpoint of 0.1.0's multi-agent runners or one without its pool.
    """
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise ValueError(f"RLlib checkpoint {p} is not a checkpoint folder (a file; give a checkpoints/iter_N folder)")
    if not p.is_dir():
        raise ValueError(f"RLlib checkpoint {p} does not exist (give a checkpoints/iter_N folder)")
    missing = [f for f in (STATE_FILE, CONFIG_NAME, "learner_group") if not (p / f).exists()]
    if missing:
        raise ValueError(f"{p} is not an RLlib checkpoint of `rummy train --backend rllib`: missing {', '.join(missing)}")
    if resume and not (p / MODULES / LEARNER_ID).is_dir() and (p / MODULES / OLD_LEARNER_ID).is_dir():
        raise ValueError(f"{p} was written by the multi-agent env runners of rummy-env 0.1.0 (the snapshots were "
                         "modules of the checkpoint); this version cannot resume it, but `rummy export` still "
                         "exports its policy")
    if resume and not (p / POOL_FILE).is_file():
        raise ValueError(f"{p} is not a whole RLlib checkpoint of `rummy train --backend rllib`: missing {POOL_FILE} "
                         "(the opponent pool's snapshots)")
    try:
        state = json.loads((p / STATE_FILE).read_text())
        meta = json.loads((p / CONFIG_NAME).read_text())
        theirs = Rules.from_json(meta["rules"])
    except Exception as e:  # noqa: BLE001
        raise ValueError(f"checkpoint {p} is corrupt: {e}") from None
    if rules is not None and theirs != rules:
        raise ValueError(f"checkpoint {p} was trained on rules {meta['rules']!r}, this run uses {rules.to_json()!r}; "
                         "resume with the same --rules / num_players")
    return state


def learner_module_dir(ckpt: str | os.PathLike) -> Path:
    """The learner module's folder in an RLlib checkpoint: ``learner_group/learner/rl_module/
    default_policy`` (``learner`` in checkpoints of the multi-agent env runners, before
    the vector env).

    Raises:
        ValueError: neither folder exists."""
    for mid in (LEARNER_ID, OLD_LEARNER_ID):
        p = Path(ckpt) / MODULES / mid
        if p.is_dir():
            return p
    raise ValueError(f"{ckpt} has no learner module ({Path(ckpt) / MODULES / LEARNER_ID} is missing); give a "
                     "checkpoints/iter_N folder written by `rummy train --backend rllib`")


def load_actor(ckpt: str | os.PathLike) -> Any:
    """The learner's actor (obs -> logits torch module) from an RLlib checkpoint folder.
    Needs ray[rllib] importable (no Ray instance is started)."""
    from ray.rllib.core.rl_module.rl_module import RLModule

    from . import rllib_modules as m

    d = learner_module_dir(ckpt)
    try:
        module = RLModule.from_checkpoint(str(d.resolve()))
    except Exception as e:  # noqa: BLE001
        raise ValueError(f"cannot load the learner module from {d}: {type(e).__name__}: {e}") from None
    return m.actor_of(module)


# ---------------------------------------------------------------------------- entry point

def parse_resources(items: list[str]) -> dict[str, float]:
    """``--env-runner-resource NAME=AMOUNT`` flags as ``{NAME: AMOUNT}``.

    Raises:
        ValueError: an item without ``=``, an empty name, a name Ray reserves (CPU, GPU,
            memory, object_store_memory), an amount that is not a finite number > 0, or a
            name given twice.
    """
    out: dict[str, float] = {}
    for it in items:
        name, sep, amount = str(it).partition("=")
        name = name.strip()
        if not sep or not name:
            raise ValueError(f"--env-runner-resource {it!r}: give NAME=AMOUNT (a custom Ray resource the nodes for "
                             "env runners advertise with ray start --resources, e.g. rummy_runner=1)")
        if name in ("CPU", "GPU", "memory", "object_store_memory"):
            raise ValueError(f"--env-runner-resource {it!r}: {name} is not a custom resource (each env runner takes "
                             "1 CPU already); name one the nodes advertise with ray start --resources")
        try:
            v = float(amount)
        except ValueError:
            v = float("nan")
        if not math.isfinite(v) or v <= 0:
            raise ValueError(f"--env-runner-resource {it!r}: the amount must be a number > 0")
        if name in out:
            raise ValueError(f"--env-runner-resource {name} is given twice")
        out[name] = v
    return out


def refuse_sb3_only(cfg: TrainConfig) -> None:
    """Raise ``ValueError`` for config keys only the sb3 backend has: ``init_policy``, a
    search or ``heuristic:OPTIONS`` warm-start teacher, a discard head. Checked before Ray starts."""
    from rummy_env.agents import BASELINES as baselines

    check_rllib_network(cfg)

    if cfg.init_policy.strip():
        raise ValueError("the rllib backend cannot start from an SB3 policy (init_policy); start from one with "
                         "the sb3 backend")
    if cfg.warmstart_teacher.startswith(("search", "heuristic:")):
        raise ValueError(f"the rllib backend's warm start takes a baseline teacher ({', '.join(baselines)}), "
                         f"not {cfg.warmstart_teacher!r}; use the sb3 backend")


def main(cfg: TrainConfig, args: argparse.Namespace) -> int:
    """Run ``rummy train --backend rllib`` (the TrainConfig plus ``args.num_env_runners``,
    ``args.address``, ``args.resume``). Returns 0."""
    refuse_sb3_only(cfg)
    address = getattr(args, "address", None) or None
    n_runners = getattr(args, "num_env_runners", None)
    n_runners = DEFAULT_RUNNERS if n_runners is None else int(n_runners)
    n_envs = getattr(args, "envs_per_env_runner", None)
    n_envs = None if n_envs is None else int(n_envs)
    resources = parse_resources(getattr(args, "env_runner_resource", None) or [])
    if n_runners < 1:
        raise ValueError(f"--num-env-runners must be >= 1, got {n_runners}")
    if n_envs is not None and n_envs < 1:
        raise ValueError(f"--envs-per-env-runner must be >= 1, got {n_envs}")
    resume = getattr(args, "resume", None)
    if resume:
        check_checkpoint(resume, Rules.make(cfg.rules, num_players=cfg.num_players))
    started = "ray" not in sys.modules or not sys.modules["ray"].is_initialized()
    ray = init_ray(address, num_cpus=(n_runners + 1) if address is None else None)
    trainer = None
    try:
        trainer = RLlibTrainer(cfg, resume=resume, num_env_runners=n_runners, envs_per_env_runner=n_envs,
                               runner_resources=resources)
        trainer.learn(max_iterations=getattr(args, "max_iterations", None))
    finally:
        if trainer is not None:
            trainer.stop()
        if started:
            ray.shutdown()
    return 0
