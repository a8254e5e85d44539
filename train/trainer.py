"""Self-play MaskablePPO: the loop behind ``rummy train``.

The learner (sb3-contrib ``MaskablePPO``, separate policy and value MLPs) plays a
random seat of each hand against opponents drawn from an ``OpponentPool`` of frozen
snapshots of itself and the scripted baselines. Every ``eval_every`` steps it is
evaluated against each baseline (``rummy_env.eval.tournament``: duplicate matches to
the target where the rules have one, else duplicate hands); the best model by mean
match (or hand) win rate is kept as ``best_model.zip``. Checkpoints (model, opponent
pool, trainer state, config) are written every ``checkpoint_every`` steps, at the
end, and on Ctrl-C; ``--resume`` continues from one with the step count intact.

Run folder layout::

    config.toml, rummy_config.json   the config used and the resolved rules
    tb/                              TensorBoard logs
    checkpoints/step_<N>/            model.zip, pool.pt, trainer_state.json, rummy_config.json
    checkpoints/warm_start/          the same + warm_start.pt, written on Ctrl-C during the warm start
    best_model.zip, final_model.zip  (+ rummy_config.json beside them)
    eval_history.json, learning_curve.png, report.json, report.md
"""
from __future__ import annotations

import json
import math
import shutil
import sys
import time
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback, ProgressBarCallback

from rummy_env.table import Table
from rummy_env.rules import Rules
from rummy_env.agents.ppo_agent import legacy_module_names

from .config import TrainConfig, check_features
from .features import network_settings  # noqa: F401 - read here, kept importable from trainer
from .precision import use_bf16
from .report import append_history, plot_learning_curve, score, summary_line, write_report
from .policy import FastMaskablePolicy, SelfPlayPPO
from .pool import ActorNet, OpponentPool, SnapshotAgent

CHECKPOINT_FILES = ("model.zip", "pool.pt", "trainer_state.json", "rummy_config.json")
WARM_START_FILE = "warm_start.pt"
"""A checkpoint taken during the warm start also holds the weights at its completed fits."""
EXACT_FILE = "exact_resume.pkl"
"""A checkpoint taken between two rollouts also holds what makes its resume continue the very
same run: every game in play (``SelfPlayVecEnv.get_state``, per worker), the learner's last
observations and episode starts, and the torch, numpy and Python generators."""


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, or made for other rules or shapes."""


def greedy_agent(model: MaskablePPO, name: str = "learner") -> SnapshotAgent:
    """The current policy, frozen, acting greedily (most probable legal action)."""
    return SnapshotAgent(ActorNet.from_policy(model.policy), name=name, greedy=True)


def evaluate_vs_baselines(agent: Any, rules: Rules, baselines: list[str], deals: int, seed: int,
                          workers: int = 1, matches: bool | None = None,
                          progress: Any = None) -> dict[str, dict[str, Any]]:
    """Duplicate results of ``agent`` against each baseline (``rummy_env.eval.tournament.evaluate``):
    ``deals`` match seeds played as full matches when ``matches`` (None: when the rules
    have a target), else ``deals`` single hands; each in both seat rotations.
    ``progress(k)``: called as chunks of ``k`` deals finish."""
    from rummy_env.eval.tournament import evaluate

    return {b: evaluate(agent, b, rules=rules, deals=deals, seed=seed, workers=workers, matches=matches,
                        progress=progress) for b in baselines}


def _lr_schedule(cfg: TrainConfig):
    lr0, frac = cfg.learning_rate, cfg.lr_final_frac

    def schedule(progress_remaining: float) -> float:
        return lr0 * (frac + (1 - frac) * progress_remaining)

    return schedule


# ---------------------------------------------------------------- checkpoints

def save_checkpoint(path: Path, model: MaskablePPO, pool: OpponentPool, state: dict[str, Any],
                    cfg: TrainConfig, rules: Rules, warm_start_weights: list | None = None,
                    exact: dict[str, Any] | None = None) -> Path:
    """Write a checkpoint folder atomically (a temp folder renamed into place).

    ``warm_start_weights``: a warm start's weights at its completed fits (``warm_start``'s
    ``progress["weights"]``), written as ``warm_start.pt`` for a checkpoint taken during
    the warm start (``state["warm_start_progress"]``). ``exact``: the games and generators
    of a checkpoint taken between two rollouts (``Trainer.exact_state``), written as
    ``exact_resume.pkl``."""
    tmp = path.with_name(path.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    model.save(tmp / "model.zip")
    torch.save(pool.state(), tmp / "pool.pt")
    if warm_start_weights is not None:
        torch.save(warm_start_weights, tmp / WARM_START_FILE)
    if exact is not None:
        import pickle

        (tmp / EXACT_FILE).write_bytes(pickle.dumps(exact, protocol=pickle.HIGHEST_PROTOCOL))
    (tmp / "trainer_state.json").write_text(json.dumps(state, indent=2))
    cfg.save(tmp, rules.to_json())
    (tmp / "config.toml").unlink()
    if path.exists():
        shutil.rmtree(path)
    tmp.rename(path)
    return path


_STATE_COUNTERS = ("num_timesteps", "next_snapshot", "next_eval", "next_checkpoint")


def _check_trainer_state(state: Any) -> int:
    """Check a checkpoint's ``trainer_state.json`` (as ``Trainer.state`` writes it) and
    return its ``num_timesteps``.

    Raises:
        ValueError: not an object; ``num_timesteps`` not an int >= 0; a schedule
            (``next_snapshot``, ``next_eval``, ``next_checkpoint``) not a number >= 0
            (``next_eval`` may be Infinity: no evaluations); ``eval_history`` not a list;
            ``best_score`` not null or a finite number; ``wall_time_s`` not a finite
            number >= 0. The message names the field, its value and what is allowed.
    """
    from rummy_env.brief import brief

    if not isinstance(state, dict):
        raise ValueError(f"it must be a JSON object, got {type(state).__name__}")
    for key in _STATE_COUNTERS:
        if key not in state:
            raise ValueError(f"{key} is missing")
        v = state[key]
        if key == "num_timesteps":
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"num_timesteps must be an int >= 0 (learner timesteps trained), got {brief(v)}")
        elif (not isinstance(v, (int, float)) or isinstance(v, bool) or math.isnan(v) or v < 0
              or (math.isinf(v) and key != "next_eval")):
            raise ValueError(f"{key} must be a number >= 0 (a learner timestep)"
                             + (" or Infinity (no evaluations)" if key == "next_eval" else "") + f", got {brief(v)}")
    if not isinstance(state.get("eval_history", []), list):
        raise ValueError(f"eval_history must be a list of evaluations, got {brief(state['eval_history'])}")
    best = state.get("best_score")
    if best is not None and (not isinstance(best, (int, float)) or isinstance(best, bool) or not math.isfinite(best)):
        raise ValueError(f"best_score must be null or a finite number, got {brief(best)}")
    wall = state.get("wall_time_s", 0.0)
    if not isinstance(wall, (int, float)) or isinstance(wall, bool) or not math.isfinite(wall) or wall < 0:
        raise ValueError(f"wall_time_s must be a finite number of seconds >= 0, got {brief(wall)}")
    ws = state.get("warm_start_progress")
    if ws is not None:
        done = ws.get("fits_done") if isinstance(ws, dict) else None
        if not isinstance(done, int) or isinstance(done, bool) or done < 0:
            raise ValueError(f"warm_start_progress.fits_done must be an int >= 0 (the warm start's completed fits), "
                             f"got {brief(done)}")
        if state["num_timesteps"] != 0:
            raise ValueError(f"warm_start_progress is written only before PPO's first step, but num_timesteps is "
                             f"{state['num_timesteps']:,}")
    return state["num_timesteps"]


def load_checkpoint(path: str | Path, cfg: TrainConfig, rules: Rules) -> dict[str, Any]:
    """Read and check a checkpoint folder (or its ``model.zip``).

    Returns ``{"model_path", "pool", "state"}``.

    Raises:
        CheckpointError: missing files, corrupt contents (a ``trainer_state.json`` that
            ``_check_trainer_state`` refuses, or whose ``num_timesteps`` is not its
            model's), rules / observation size that differ from this run's, or a network
            (``features``, ``trunk``, ``net_arch``, ``discard_head``) other than this config's.
    """
    p = Path(path)
    if p.is_file() and p.name == "model.zip":
        p = p.parent
    if p.exists() and not p.is_dir():
        raise CheckpointError(f"checkpoint {path} is not a checkpoint folder (a file; give a checkpoints/step_N "
                              "folder or its model.zip)")
    if not p.is_dir():
        raise CheckpointError(f"checkpoint {path} does not exist (give a checkpoints/step_N folder)")
    missing = [f for f in CHECKPOINT_FILES if not (p / f).is_file()]
    if missing:
        raise CheckpointError(f"checkpoint {p} is incomplete: missing {', '.join(missing)}")
    part = "trainer_state.json"
    try:
        state = json.loads((p / "trainer_state.json").read_text())
        part = "rummy_config.json"
        meta = json.loads((p / "rummy_config.json").read_text())
        part = "model.zip"
        with zipfile.ZipFile(p / "model.zip") as z:
            if z.testzip() is not None:
                raise ValueError("a member of model.zip fails its CRC check")
            data = json.loads(z.read("data"))
        part = "pool.pt (the opponent pool's snapshots)"
        pool_state = torch.load(p / "pool.pt", weights_only=True)
        part = "trainer_state.json"
        steps = _check_trainer_state(state)
        ws_weights = None
        if state.get("warm_start_progress") is not None:
            from .warmstart import num_fits

            same_rounds = meta.get("config", {}).get("warmstart_dagger_rounds") == cfg.warmstart_dagger_rounds
            if same_rounds and state["warm_start_progress"]["fits_done"] > num_fits(cfg):  # else: other settings, below
                raise ValueError(f"warm_start_progress.fits_done is {state['warm_start_progress']['fits_done']}, "
                                 f"but this config's warm start has {num_fits(cfg)} fits")
            part = WARM_START_FILE + " (the warm start's weights)"
            ws_weights = torch.load(p / WARM_START_FILE, weights_only=True)
            done = state["warm_start_progress"]["fits_done"]
            if (not isinstance(ws_weights, list) or len(ws_weights) != done + 1
                    or not all(isinstance(w, list) for w in ws_weights)):
                raise ValueError(f"it must hold {done + 1} weight lists (before the first fit and after each of "
                                 f"the {done} completed)")
    except Exception as e:  # noqa: BLE001 - any failure here means a corrupt checkpoint
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CheckpointError(f"checkpoint {p} is corrupt or not a rummy-env checkpoint: {part} cannot be read "
                              f"({first})") from None
    saved = meta.get("config") if isinstance(meta.get("config"), dict) else {}
    if saved:  # a config saved before discard_head existed trained the dense head
        saved = {"discard_head": "dense", **saved}
    differ = [f"{k} {saved[k]!r} (this config: {getattr(cfg, k)!r})" for k in ("features", "trunk", "net_arch",
              "discard_head") if k in saved and saved[k] != getattr(cfg, k)]
    if differ:  # the model is the checkpoint's: a config naming another network would be written but not trained
        raise CheckpointError(f"checkpoint {p} was trained with another network: {', '.join(differ)}; resume with "
                              f"the run's own config (--config RUN/config.toml) or the same --set values")
    model_steps = data.get("num_timesteps")
    if isinstance(model_steps, int) and model_steps != steps:
        raise CheckpointError(f"checkpoint {p} is corrupt: trainer_state.json says num_timesteps {steps:,}, its "
                              f"model.zip {model_steps:,} (a checkpoint writes both at the same step)")
    theirs = Rules.from_json(meta["rules"])
    if theirs != rules:
        raise CheckpointError(
            f"checkpoint {p} was trained on rules {meta['rules']!r}, this run uses {rules.to_json()!r}; "
            "resume with the same --rules / num_players")
    shape = data.get("observation_space", {}).get("_shape") if isinstance(data.get("observation_space"), dict) else None
    table = Table.of(rules)
    want = table.obs_size
    if shape is not None and (len(shape) != 1 or table.misfit(int(shape[0])) is not None):
        raise CheckpointError(f"checkpoint {p} has observation shape {shape}, expected [{want}]")
    if ws_weights is not None:
        from .warmstart import WARM_START_KEYS

        ours, saved = cfg.to_dict(), meta.get("config", {})
        if saved:  # a checkpoint saved before warmstart_meld_weight existed weighed every position the same
            saved = {"warmstart_meld_weight": 1.0, **saved}
        changed = [k for k in WARM_START_KEYS if k in saved and saved[k] != ours.get(k)]
        if changed:
            raise CheckpointError(
                f"checkpoint {p} was taken during a warm start with other settings: "
                + ", ".join(f"{k} {saved[k]!r} (this run: {ours.get(k)!r})" for k in changed)
                + "; resume with the same config, or start a new run")
    exact = None
    if (p / EXACT_FILE).is_file():
        import pickle

        try:
            exact = pickle.loads((p / EXACT_FILE).read_bytes())
            if not isinstance(exact, dict) or not {"env", "last_obs", "episode_starts", "rng"} <= set(exact):
                raise ValueError("keys missing")
        except Exception as e:  # noqa: BLE001
            raise CheckpointError(f"checkpoint {p} is corrupt: {EXACT_FILE} (the games in play) cannot be read "
                                  f"({type(e).__name__}: {e}); delete it to resume with new deals") from None
    return {"model_path": p / "model.zip", "pool": pool_state, "state": state, "steps": steps,
            "warm_start_weights": ws_weights, "exact": exact}


# ---------------------------------------------------------------- the callback

def planned_timesteps(remaining: int, rollout: int) -> int:
    """The learner timesteps ``learn`` really makes to reach ``remaining`` more: SB3
    collects whole rollouts of ``rollout`` (= n_steps * n_envs) steps, so the count is
    ``remaining`` rounded up to a multiple of ``rollout`` (800,000 at 64 x 64 -> 802,816)."""
    return -(-remaining // rollout) * rollout


def evaluation_postfix(results: dict[str, dict[str, Any]]) -> str:
    """The progress bar's postfix for one evaluation: per baseline the match win rate
    (``"heuristic 0.55"``), or, when the evaluation played single hands (``mode`` is not
    ``"matches"``), the hand win rate marked ``h`` (``"heuristic h0.41"``); the results
    are ``rummy_env.eval.tournament.evaluate`` dicts. ``"eval: "`` leads, the baselines
    follow in the results' order."""
    parts = [f"{b} {r['match_win_rate']:.2f}" if r.get("mode") == "matches" else f"{b} h{r['hand_win_rate']:.2f}"
             for b, r in results.items()]
    return "eval: " + ", ".join(parts)


class RolloutProgressBar(ProgressBarCallback):
    """SB3's progress bar with the total it will really reach (``planned_timesteps``),
    so the bar ends full instead of at 802,816/800,000, and the last evaluation's win
    rates as its postfix (``show_evaluation``). When stderr is not a terminal (a log
    file) a plain tqdm line is written at most every 20 s instead of the rich bar,
    which writes nothing there."""

    postfix: str | None = None

    def show_evaluation(self, results: dict[str, dict[str, Any]]) -> None:
        """Show ``evaluation_postfix(results)`` after the bar (kept until the next evaluation)."""
        self.postfix = evaluation_postfix(results)
        if getattr(self, "pbar", None) is not None:
            self.pbar.set_postfix_str(self.postfix, refresh=True)

    def _on_training_start(self) -> None:
        from stable_baselines3.common import callbacks as sb3_callbacks

        rollout = self.model.n_steps * self.training_env.num_envs
        remaining = self.locals["total_timesteps"] - self.model.num_timesteps
        self.total = planned_timesteps(remaining, rollout)
        desc = f"timesteps (whole rollouts of {rollout:,})"
        if sys.stderr.isatty():
            self.pbar = sb3_callbacks.tqdm(total=self.total, unit="step", desc=desc)
        else:  # a log file (nohup, CI): plain lines at most every 20 s, never silent for long
            import tqdm

            self.pbar = tqdm.tqdm(total=self.total, unit="step", desc=desc, mininterval=20, ascii=True,
                                  file=sys.stderr)
        if self.postfix:
            self.pbar.set_postfix_str(self.postfix, refresh=False)


class SelfPlayCallback(BaseCallback):
    """Logs self-play results, adds snapshots, evaluates, keeps the best model and
    writes checkpoints on schedule."""

    def __init__(self, trainer: "Trainer") -> None:
        super().__init__()
        self.t = trainer
        self._stats: dict[str, list[float]] = {}
        self._rollout_t0 = time.perf_counter()

    def _on_step(self) -> bool:
        for info in self.locals.get("infos", ()):
            if "win" in info:
                for key in ("all", info["opponent"].split("+")[0] if self.t.rules.num_players == 2 else info["opponent"]):
                    self._stats.setdefault(f"win/{key}", []).append(info["win"])
                    self._stats.setdefault(f"points/{key}", []).append(info["points"])
                # learner decisions per episode: a hand, or a match under a match reward
                length = "match_length" if "hands" in info else "hand_length"
                self._stats.setdefault(length, []).append(info["episode"]["l"])
                if "hands" in info:
                    self._stats.setdefault("match_hands", []).append(info["hands"])
        self.t.on_step(self.num_timesteps)
        return True

    def _on_rollout_end(self) -> None:
        for k, v in self._stats.items():
            self.logger.record(f"selfplay/{k}", float(np.mean(v)))
        self._stats = {}
        venv = self.t.venv
        dt = time.perf_counter() - self._rollout_t0
        self.logger.record("perf/opponent_decisions", venv.opponent_decisions)
        self.logger.record("perf/opponent_time_s", venv.opponent_time)
        self.logger.record("perf/wall_s", dt)

    def _on_training_start(self) -> None:
        # the learning curve's first point: the policy as the warm start left it (here, once
        # learn has set up the logger the evaluation records to)
        if self.model.num_timesteps == 0 and self.t.cfg.eval_every > 0:
            self.t._evaluate_before_ppo()

    def _on_rollout_start(self) -> None:
        self.t.on_rollout_start()


# ---------------------------------------------------------------- the trainer

def _settings_text(settings: dict) -> str:
    return ", ".join(f"{k} = {v!r}" if isinstance(v, str) else f"{k} = {v}" for k, v in settings.items())


class StopRequested(KeyboardInterrupt):
    """Ctrl-C (or SIGTERM) during PPO: the run stopped between two rollouts, after writing
    an exact checkpoint (``path``)."""

    def __init__(self, path: Path) -> None:
        super().__init__(str(path))
        self.path = path


class Trainer:
    """Builds the env, model and pool from a ``TrainConfig`` and runs ``learn``.

    Resuming (``resume``) from a checkpoint written between two rollouts (every scheduled
    and final checkpoint, and the one Ctrl-C writes) continues the very same run: the games
    in play, the pool, the schedules, the optimizer and the generators are the
    checkpoint's, so on the same machine the resumed run's weights equal those of the run
    that was not interrupted. A checkpoint without its games (one written at a second Ctrl-C,
    in the middle of a rollout) resumes with new deals.

    Raises:
        ValueError: a bad config; ``CheckpointError`` for a bad ``resume``.
    """

    progress_bar: "RolloutProgressBar | None" = None
    """The bar of the running ``learn`` (None without ``progress``): evaluations show on it."""

    def __init__(self, cfg: TrainConfig, resume: str | None = None, verbose: int = 1) -> None:
        cfg.validate()
        self.cfg = cfg
        self.rules = Rules.make(cfg.rules, num_players=cfg.num_players)
        self.table = Table.of(self.rules)
        check_features(cfg.features, self.table)  # "cards+jokers" needs jokers: before any work
        self.run_dir = Path(cfg.out)
        self.verbose = verbose
        ck = load_checkpoint(resume, cfg, self.rules) if resume else None
        self._exact = ck["exact"] if ck else None
        self._stop_signal = False
        self._checkpoint_due = False
        self._fresh_dir = not self.run_dir.exists()  # a run folder made here is removed if init fails
        self.run_dir.mkdir(parents=True, exist_ok=True)
        torch.set_num_threads(cfg.torch_threads)
        torch.distributions.Distribution.set_default_validate_args(False)  # masks are checked by the env
        self.venv = self._make_venv()
        pk = dict(net_arch=dict(pi=list(cfg.net_arch), vf=list(cfg.net_arch)))
        if cfg.features != "none" or cfg.trunk:
            from .features import CardFeatures

            pk["features_extractor_class"] = CardFeatures
            table = self.table  # the table is told, never guessed from the observation's size
            pk["features_extractor_kwargs"] = dict(cards=cfg.features != "none", trunk=cfg.trunk,
                                                   num_players=table.num_players, kind=table.kind)
            if cfg.features == "cards+jokers":  # only then, so the other tables' zips keep their kwargs
                pk["features_extractor_kwargs"]["jokers"] = True
            if cfg.features == "cards+plan":  # likewise
                pk["features_extractor_kwargs"]["plan"] = True
            if cfg.discard_head != "dense":  # likewise
                pk["features_extractor_kwargs"]["discard_head"] = True if cfg.discard_head == "cards" else cfg.discard_head
        common = dict(n_steps=cfg.n_steps, batch_size=cfg.batch_size, n_epochs=cfg.n_epochs, gamma=cfg.gamma,
                      gae_lambda=cfg.gae_lambda, clip_range=cfg.clip_range, ent_coef=cfg.ent_coef,
                      vf_coef=cfg.vf_coef, max_grad_norm=cfg.max_grad_norm, learning_rate=_lr_schedule(cfg),
                      tensorboard_log=str(self.run_dir / "tb"), seed=cfg.seed, device="cpu", verbose=0)
        self._t0 = time.perf_counter()  # wall time counts the warm start too
        if ck:
            try:
                with legacy_module_names():
                    self.model = SelfPlayPPO.load(ck["model_path"], env=self.venv, device="cpu", **{
                        k: v for k, v in common.items() if k not in ("seed", "device")})
            except Exception as e:  # noqa: BLE001
                self.venv.close()
                raise CheckpointError(f"cannot load {ck['model_path']}: {e}") from None
            self.state = ck["state"]
            self.pool_state = ck["pool"]
            cfg.save(self.run_dir, self.rules.to_json())
            ws = self.state.pop("warm_start_progress", None)
            if ws is not None:  # taken during the warm start: go on from its last completed fit
                resume_ws = {**ws, "weights": ck["warm_start_weights"]}
                if ws["fits_done"] == 0:
                    resume_ws = None  # nothing was fitted: the warm start starts over (the weights are the initial ones)
                self._run_warm_start(resume_ws)
        else:
            self.model = SelfPlayPPO(FastMaskablePolicy, self.venv, policy_kwargs=pk, **common)
            self.state = {"num_timesteps": 0, "next_snapshot": 0, "next_eval": cfg.eval_every or math.inf,
                          "next_checkpoint": cfg.checkpoint_every, "eval_history": [], "best_score": None,
                          "wall_time_s": 0.0}
            self.pool_state = None
            if cfg.init_policy.strip():
                self._load_init_policy()
            # written once the network is known to fit: a refused init_policy leaves a run folder as it was
            cfg.save(self.run_dir, self.rules.to_json())
            if cfg.init_policy.strip() and cfg.warmstart_teacher != "none":
                if verbose:
                    print(f"[plan] start from {cfg.init_policy}, then {cfg.warmstart_dagger_rounds} DAgger round(s) of "
                          f"{cfg.warmstart_dagger_decisions:,} positions it plays, labelled by {cfg.warmstart_teacher}"
                          f" (expert iteration), then PPO to {cfg.timesteps:,} learner timesteps; the run writes to "
                          f"{self.run_dir}/", flush=True)
                self._run_warm_start(None)
            elif cfg.init_policy.strip():
                if verbose:
                    print(f"[plan] PPO from {cfg.init_policy} to {cfg.timesteps:,} learner timesteps; the run writes to "
                          f"{self.run_dir}/", flush=True)
            elif cfg.warmstart_decisions > 0 and cfg.warmstart_teacher != "none":
                if verbose:
                    print(f"[plan] first a warm start: clone {cfg.warmstart_decisions:,} {cfg.warmstart_teacher} "
                          f"decisions (+{cfg.warmstart_dagger_rounds} DAgger round(s); the default 800,000 take "
                          "over 5 minutes on 2 cores, whatever --timesteps is; --set warmstart_decisions=0 skips "
                          f"it), then PPO to {cfg.timesteps:,} learner timesteps; the run writes to {self.run_dir}/",
                          flush=True)
                self._run_warm_start(None)
            elif verbose:
                print(f"[plan] PPO to {cfg.timesteps:,} learner timesteps (no warm start); the run writes to "
                      f"{self.run_dir}/", flush=True)
        if self._exact is not None and not self._continue_games(self._exact):
            self._exact = None
        self._restore_pool(to_workers=self._exact is None)
        # rollouts on one torch thread (the workers, or the in-process games, use the other
        # core; a second thread in small forward passes only stalls when a core is busy),
        # the PPO update on torch_threads (SelfPlayPPO)
        self.model.update_threads = cfg.torch_threads
        self.model.policy.bf16 = use_bf16(cfg.precision)  # the rollouts and the update (FastMaskablePolicy)
        self._wall0 = float(self.state.get("wall_time_s", 0.0))
        self._side_s = 0.0  # seconds of evaluations and checkpoints inside learn (not PPO's time)

    # -- construction helpers
    def _run_warm_start(self, resume: dict[str, Any] | None) -> None:
        """The warm start (``train/warmstart.py``), resumed from ``resume`` (a checkpoint's
        ``warm_start_progress`` with its weights) if given; on Ctrl-C the weights at its last
        completed fit are saved as the checkpoint ``checkpoints/warm_start`` and the
        interrupt goes on."""
        from .warmstart import num_fits, sb3_forward, warm_start

        params = list(self.model.policy.parameters())
        prog: dict[str, Any] = {}
        try:
            self.state["warm_start"] = warm_start(self.cfg, self.rules, params, sb3_forward(self.model.policy),
                                                  verbose=self.verbose, progress=prog, resume=resume)
        except KeyboardInterrupt:
            if "weights" not in prog:  # interrupted before the warm start began: nothing to keep
                self.venv.close()
                raise
            from .warmstart import load_weights

            load_weights(params, prog["weights"][-1])  # the fit in progress is redone on resume
            keep = ("fits_done", "result", "collect_s", "fit_s", "collect_workers")
            self.state["warm_start_progress"] = {k: prog[k] for k in keep}
            path = self.run_dir / "checkpoints" / "warm_start"
            save_checkpoint(path, self.model, self.pool, self.state, self.cfg, self.rules,
                            warm_start_weights=prog["weights"])
            self.state.pop("warm_start_progress")
            self.venv.close()
            how = ("the samples of the completed fits are rebuilt by replaying their seeded hands, then the warm "
                   "start goes on from the next fit" if prog["fits_done"] else
                   "no fit was complete yet, so the warm start starts over")
            print(f"\ninterrupted during the warm start, after {prog['fits_done']} of {num_fits(self.cfg)} fits: "
                  f"checkpoint saved to {path}; resume with --resume {path} ({how})", flush=True)
            raise

    def _load_init_policy(self) -> None:
        """Copy the weights of ``cfg.init_policy``'s policy into the new model (the optimizer
        and PPO's counters start fresh).

        Raises:
            ValueError: the zip does not load, or its network differs from this config's
                (the message names the first parameter whose name or shape differs)."""
        from .config import init_policy_path

        from rummy_env.agents import pretrained_for

        path = init_policy_path(self.cfg.init_policy)

        def refuse(msg: str) -> None:
            self.venv.close()
            if self._fresh_dir:  # nothing of this run is kept: the folder held only its config
                shutil.rmtree(self.run_dir, ignore_errors=True)
            raise ValueError(msg)

        try:
            with legacy_module_names():
                src = MaskablePPO.load(path, device="cpu")
        except Exception as e:  # noqa: BLE001 - a corrupt or foreign zip
            refuse(f"init_policy {self.cfg.init_policy!r}: cannot load {path}: {e}")
        mine, theirs = self.model.policy.state_dict(), src.policy.state_dict()
        trained, here = network_settings(src.policy_kwargs), network_settings(self.model.policy_kwargs)
        settings = ("" if trained == here else
                    f" (it was trained with {_settings_text(trained)}; this config has {_settings_text(here)})")
        own = pretrained_for(self.rules)
        hint = (f"; 'pretrained' is the classic policy, the one shipped for this table is 'pretrained:{own}'"
                if own and own != "classic" and self.cfg.init_policy.strip().lower() == "pretrained" else "")
        theirs_head = any("discard_scorer." in k for k in theirs)
        if theirs_head and not any("discard_scorer." in k for k in mine):
            refuse(f"init_policy {self.cfg.init_policy!r} has a discard head (discard_head = 'cards' or "
                   f"'cards+stock') and this config's network has none: set discard_head as it was trained"
                   f"{settings}{hint}")
        for k, v in mine.items():
            if "discard_scorer." in k and not theirs_head:
                theirs[k] = v  # a dense policy gets a new discard head, which starts at zero (plays as before)
                continue
            if k not in theirs or tuple(theirs[k].shape) != tuple(v.shape):
                got = tuple(theirs[k].shape) if k in theirs else "missing"
                refuse(f"init_policy {self.cfg.init_policy!r} does not fit this run: its parameter {k} is {got}, "
                       f"this config's network at the {self.cfg.rules} table has {tuple(v.shape)}; the policy must "
                       f"have been trained at this table with the same features, trunk and net_arch{hint}{settings}")
        self.model.policy.load_state_dict(theirs)

    def _make_venv(self):
        cfg = self.cfg
        if cfg.workers == 1:
            from .subproc import make_pool
            from .vec_env import SelfPlayVecEnv

            # the snapshots in float32, stacked (OpponentPool: their incremental trunks, issue 26)
            self.pool = make_pool(cfg.opponent_weights, cfg.max_snapshots, cfg.latest_prob, cfg.fixed_opponent,
                                  seed=cfg.seed)
            return SelfPlayVecEnv(self.rules, self.pool, cfg.n_envs, seed=cfg.seed, reward_scale=cfg.reward_scale,
                                  reward=cfg.reward, rotate_steps=cfg.rotate_steps, shaping=cfg.deadwood_shaping,
                                  gamma=cfg.gamma)
        from .subproc import MultiProcSelfPlayVecEnv

        # the learner's copy of the pool (what checkpoints store): the workers' copies play
        self.pool = OpponentPool(cfg.opponent_weights, cfg.max_snapshots, cfg.latest_prob, {}, stack=False)
        return MultiProcSelfPlayVecEnv(self.rules, cfg.n_envs, cfg.workers, cfg.seed, cfg.reward_scale,
                                       cfg.opponent_weights, cfg.max_snapshots, cfg.latest_prob, cfg.reward,
                                       cfg.fixed_opponent, rotate_steps=cfg.rotate_steps,
                                       shaping=cfg.deadwood_shaping, gamma=cfg.gamma)

    def _add_snapshot_net(self, net: ActorNet, step: int) -> None:
        self.pool.add_net(net, step)
        if hasattr(self.venv, "add_snapshot"):
            self.venv.add_snapshot(net, step)

    def _restore_pool(self, to_workers: bool = True) -> None:
        """The checkpoint's snapshots into the learner's pool and, with ``to_workers``, into the
        games' pools (without: the games' own saved pools came back with them)."""
        if not self.pool_state:
            return
        if not to_workers and self.cfg.workers == 1:
            return  # one pool, the games' own: restored with the games
        for step, spec, sd in zip(self.pool_state["steps"], self.pool_state["specs"], self.pool_state["nets"]):
            net = ActorNet(**spec)
            net.load_state_dict(sd)
            if to_workers:
                self._add_snapshot_net(net, step)
            else:
                self.pool.add_net(net, step)

    def exact_state(self) -> dict[str, Any]:
        """What an exact resume needs beyond the model and the pool (call it between two
        rollouts): the games (``get_state`` of the env), the learner's last observations
        and episode starts, and the torch, numpy and Python generators' states."""
        import random

        return {"env": self.venv.get_state(), "last_obs": np.array(self.model._last_obs),
                "episode_starts": np.array(self.model._last_episode_starts),
                "rng": {"torch": torch.get_rng_state(), "numpy": np.random.get_state(), "python": random.getstate()}}

    def _continue_games(self, exact: dict[str, Any]) -> bool:
        """Put the checkpoint's games back in play and its last observations into the model;
        False (and a line saying why) when they cannot be (another ``workers`` or ``n_envs``):
        the run then resumes with new deals."""
        try:
            self.venv.set_state(exact["env"])
        except ValueError as e:
            if self.verbose:
                print(f"[resume] new deals: the checkpoint's games do not fit this run ({e})", flush=True)
            return False
        if self.cfg.workers == 1:
            self.pool = self.venv.pool  # the games' own pool, saved with them
        self.model._last_obs = np.array(exact["last_obs"])
        self.model._last_episode_starts = np.array(exact["episode_starts"])
        if self.verbose:
            print(f"[resume] the checkpoint's {self.cfg.n_envs} games go on where they were (exact resume)", flush=True)
        return True

    # -- output
    def say(self, msg: str) -> None:
        """Print one line of the run's log (when ``verbose``) on a line of its own: above
        the progress bar while one is drawn (``tqdm.write``), never glued onto it."""
        if not self.verbose:
            return
        bar = self.progress_bar
        if bar is not None and getattr(bar, "pbar", None) is not None and not getattr(bar.pbar, "disable", False):
            import tqdm

            if not sys.stderr.isatty():  # a log file: end the bar's line (it has no newline of its own)
                bar.pbar.fp.write("\n")
                bar.pbar.fp.flush()
                print(msg, flush=True)
            else:  # a terminal: tqdm clears the bar, prints above it and redraws it
                tqdm.tqdm.write(msg, file=sys.stdout)
                sys.stdout.flush()
        else:
            print(msg, flush=True)

    # -- scheduled work
    def on_step(self, t: int) -> None:
        """Called after every vector step at learner timestep ``t``: snapshot, evaluate and
        checkpoint when their schedules come due."""
        st = self.state
        st["num_timesteps"] = t
        if t >= st["next_snapshot"]:
            self._add_snapshot_net(ActorNet.from_policy(self.model.policy), t)
            st["next_snapshot"] = t + self.cfg.snapshot_every
        side0 = time.perf_counter()
        if t >= st["next_eval"]:
            self.evaluate(t, self.cfg.eval_deals)
            st["next_eval"] = t + self.cfg.eval_every
        if t >= st["next_checkpoint"]:
            self._checkpoint_due = True  # written between two rollouts (on_rollout_start): exact
        self._side_s += time.perf_counter() - side0  # not PPO's time (ppo_timesteps_per_s)

    def on_rollout_start(self) -> None:
        """Called before each rollout, when every game waits for the learner: the scheduled
        checkpoint (exact), or, after Ctrl-C, an exact checkpoint and ``StopRequested``."""
        if not (self._checkpoint_due or self._stop_signal):
            return
        side0 = time.perf_counter()
        st = self.state
        if self._checkpoint_due:
            st["next_checkpoint"] = self.model.num_timesteps + self.cfg.checkpoint_every
            self._checkpoint_due = False
        path = self.checkpoint(exact=True)
        self._side_s += time.perf_counter() - side0
        if self._stop_signal:
            raise StopRequested(path)

    def wall_time(self) -> float:
        """Seconds of training so far, warm start included, across resumes."""
        return self._wall0 + time.perf_counter() - self._t0

    def evaluate(self, t: int, deals: int) -> dict[str, Any]:
        """Duplicate-deal evaluation against each baseline; logs, records, keeps the best."""
        agent = greedy_agent(self.model)
        res = evaluate_vs_baselines(agent, self.rules, self.cfg.eval_baselines, deals, seed=10_000 + self.cfg.seed,
                                    workers=self.cfg.eval_workers, matches=self.cfg.eval_matches)
        self._record(t, res)
        sc = score(res)
        kind = next(iter(res.values()))["mode"] if res else None
        if self.state.get("best_kind") != kind:  # a resumed run that evaluated the other kind before
            self.state["best_score"], self.state["best_kind"] = None, kind
        if self.state["best_score"] is None or sc > self.state["best_score"]:
            self.state["best_score"] = sc
            self.model.save(self.run_dir / "best_model.zip")
        if self.progress_bar is not None:
            self.progress_bar.show_evaluation(res)
        self.say(f"[eval @ {t:,} steps, {self.wall_time():.0f}s] {summary_line(res)}")
        return res

    def _record(self, t: int, res: dict[str, dict[str, Any]], final: bool = False) -> None:
        """Append one evaluation to ``eval_history.json`` and TensorBoard."""
        for b, r in res.items():
            self.model.logger.record(f"eval/win_rate_vs_{b}", r["win_rate"])
            self.model.logger.record(f"eval/points_per_hand_vs_{b}", r["points_per_hand"])
            self.model.logger.record(f"eval/hand_win_rate_vs_{b}", r["hand_win_rate"])
        append_history(self.state["eval_history"], self.run_dir, t, self.wall_time(), res, final=final)

    def checkpoint(self, exact: bool = False) -> Path:
        """Write ``checkpoints/step_N`` (model, pool, trainer state, rules) and return its path;
        ``exact`` (between two rollouts only): with the games and generators
        (``exact_state``), so that its resume continues the very same run."""
        self.state["wall_time_s"] = self.wall_time()
        # the model's own count (an interrupt may fall between its step and the callback's)
        self.state["num_timesteps"] = self.model.num_timesteps
        path = self.run_dir / "checkpoints" / f"step_{self.state['num_timesteps']}"
        extra = None
        if exact:
            try:
                extra = self.exact_state()
            except (ValueError, OSError, EOFError) as e:  # an opponent that does not pickle, a worker gone
                self.say(f"[checkpoint] without its games ({type(e).__name__}: {e}): its resume deals new hands")
        save_checkpoint(path, self.model, self.pool, self.state, self.cfg, self.rules, exact=extra)
        self.say(f"[checkpoint] {path}")
        return path

    # -- the run
    def learn(self) -> dict[str, Any]:
        """Train to ``cfg.timesteps``; on Ctrl-C save a checkpoint and re-raise."""
        cfg = self.cfg
        remaining = cfg.timesteps - self.state["num_timesteps"]
        cb = SelfPlayCallback(self)
        self.progress_bar = RolloutProgressBar() if cfg.progress else None
        if remaining <= 0:
            # a resumed checkpoint that already reaches --timesteps: nothing to train, so the
            # checkpoint is left as it is; the final model and report are still written
            from stable_baselines3.common.logger import configure

            self.model.set_logger(configure(str(self.run_dir / "tb" / "final"), ["tensorboard"]))
            if self.verbose:
                print(f"[resume] the checkpoint has {self.state['num_timesteps']:,} timesteps, already "
                      f"--timesteps {cfg.timesteps:,}: nothing to train; writing final_model.zip and the report",
                      flush=True)
        steps0, self._side_s = self.state["num_timesteps"], 0.0
        learn0 = time.perf_counter()
        if self._exact is not None:  # the generators as the checkpoint left them, right before its next rollout
            import random

            rng = self._exact["rng"]
            torch.set_rng_state(rng["torch"])
            np.random.set_state(rng["numpy"])
            random.setstate(rng["python"])
        handlers = self._catch_stop_signals()
        try:
            if remaining > 0:
                self.model.learn(total_timesteps=remaining, callback=[cb, self.progress_bar] if cfg.progress else cb,
                                 reset_num_timesteps=self.state["num_timesteps"] == 0, tb_log_name="ppo")
        except StopRequested as stop:
            self.say(f"interrupted: exact checkpoint saved to {stop.path}; resume with --resume {stop.path}")
            self.venv.close()
            raise
        except KeyboardInterrupt:
            path = self.checkpoint()
            print(f"\ninterrupted: checkpoint saved to {path} (in the middle of a rollout: its resume deals new "
                  f"hands); resume with --resume {path}", flush=True)
            self.venv.close()
            raise
        finally:
            self._restore_signals(handlers)
        if remaining > 0:
            self.state["num_timesteps"] = self.model.num_timesteps
            ppo = self.state.setdefault("ppo", {"wall_s": 0.0, "timesteps": 0})
            ppo["wall_s"] += time.perf_counter() - learn0 - self._side_s
            ppo["timesteps"] += self.model.num_timesteps - steps0
            self.checkpoint(exact=True)
        self.model.save(self.run_dir / "final_model.zip")
        report = self.final_report()
        self.venv.close()
        files = ["final_model.zip"] + (["best_model.zip"] if (self.run_dir / "best_model.zip").is_file() else [])
        files += ["report.md", "report.json", "eval_history.json"]
        files += ["learning_curve.png"] if (self.run_dir / "learning_curve.png").is_file() else []
        self.say(f"[done] wrote {', '.join(files)} in {self.run_dir}/ (checkpoints in {self.run_dir}/checkpoints/, "
                 f"TensorBoard logs in {self.run_dir}/tb/)")
        return report

    def _catch_stop_signals(self) -> dict:
        """SIGINT and SIGTERM during PPO: the first asks the run to stop before its next
        rollout (``on_rollout_start`` writes an exact checkpoint; a rollout takes seconds), a
        second stops it at once. Returns the previous handlers ({} off the main thread,
        where signals cannot be caught)."""
        import signal
        import threading

        if threading.current_thread() is not threading.main_thread():
            return {}

        def handler(signum, frame):  # noqa: ARG001
            if self._stop_signal:
                raise KeyboardInterrupt
            self._stop_signal = True
            self.say("\n[stop] finishing this rollout, then an exact checkpoint (Ctrl-C again stops at once)")

        return {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}

    @staticmethod
    def _restore_signals(handlers: dict) -> None:
        import signal

        for sig, h in handlers.items():
            signal.signal(sig, h)

    def _evaluate_before_ppo(self) -> None:
        """Evaluate the policy as the warm start left it, at step 0 (the learning curve's
        first point), on ``eval_deals``; its time is not PPO's."""
        t0 = time.perf_counter()
        self.say(f"[eval @ 0 steps] the {'warm-started' if 'warm_start' in self.state else 'initial'} policy "
                 f"before PPO: {self.cfg.eval_deals} duplicate deals per baseline")
        self.evaluate(0, self.cfg.eval_deals)
        self._side_s += time.perf_counter() - t0

    def final_report(self) -> dict[str, Any]:
        """Evaluate the final model on ``final_eval_deals`` against each baseline and write
        ``report.json``, ``report.md`` and ``learning_curve.png``."""
        t = self.model.num_timesteps
        cfg = self.cfg
        agent = greedy_agent(self.model)
        deals = cfg.final_eval_deals
        unit = "match seeds" if (cfg.eval_matches if cfg.eval_matches is not None
                                 else self.rules.target is not None) else "deals"
        self.say(f"[final evaluation] {deals} duplicate {unit} against each of {', '.join(cfg.eval_baselines)} "
                 f"(both seat rotations, {cfg.eval_workers} worker(s)); a line per baseline, and one every 20 s meanwhile")
        res: dict[str, dict[str, Any]] = {}
        for b in cfg.eval_baselines:
            t0 = time.perf_counter()
            done, said = [0], [t0]

            def progress(k: int, b: str = b, t0: float = t0) -> None:  # never silent for long (README)
                done[0] += k
                now = time.perf_counter()
                if now - said[0] >= 20 and done[0] < deals:
                    said[0] = now
                    self.say(f"[final evaluation] vs {b}: {done[0]}/{deals} {unit} played, {now - t0:.0f}s")

            res.update(evaluate_vs_baselines(agent, self.rules, [b], deals, seed=20_000 + cfg.seed,
                                             workers=cfg.eval_workers, matches=cfg.eval_matches, progress=progress))
            self.say(f"[final evaluation] vs {b} ({time.perf_counter() - t0:.0f}s): {summary_line({b: res[b]})}")
        self._record(t, res, final=True)
        wall = self.wall_time()
        ppo = self.state.get("ppo", {})
        ws = self.state.get("warm_start", {})
        report = {"timesteps": t, "wall_time_s": round(wall, 1),
                  "timesteps_per_s": round(t / wall, 1) if wall > 0 else None,
                  "ppo_wall_time_s": round(ppo.get("wall_s", 0.0), 1),
                  "ppo_timesteps_per_s": (round(ppo["timesteps"] / ppo["wall_s"], 1)
                                          if ppo.get("wall_s", 0) > 0 else None),
                  "warm_start_s": round(ws.get("collect_s", 0.0) + ws.get("fit_s", 0.0), 1),
                  "warm_start_parts_s": ws.get("parts_s", {}),
                  "rules": self.rules.to_json(), "deals": deals, "results": res}
        write_report(self.run_dir, report, f"Evaluation after {t:,} timesteps ({wall / 60:.1f} min)", self.verbose)
        self._plot_curve()
        return report

    def _plot_curve(self) -> None:
        plot_learning_curve(self.state["eval_history"], self.cfg.eval_baselines, self.run_dir / "learning_curve.png",
                            f"rummy_v0 {self.cfg.rules}: self-play MaskablePPO")


def train(cfg: TrainConfig, resume: str | None = None, verbose: int = 1) -> dict[str, Any]:
    """Run one training to completion and return the final report (see ``Trainer``)."""
    return Trainer(cfg, resume=resume, verbose=verbose).learn()
