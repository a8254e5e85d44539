"""``rummy train``: self-play training from the command line.

Precedence: defaults < ``--config FILE`` (TOML) < ``--set key=value`` < explicit flags.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from .config import MAX_SEED, TrainConfig, check_rllib_network, tomllib


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The flags of ``rummy train`` (see ``train/config.py`` for every key)."""
    d = TrainConfig()
    p.add_argument("--rules", help=f"rules preset (default {d.rules})")
    p.add_argument("--num-players", type=int, help="players at the table (default: the preset's smallest)")
    p.add_argument("--timesteps", type=int, help=f"learner timesteps (default {d.timesteps:,})")
    p.add_argument("--out", help=f"run folder (default {d.out})")
    p.add_argument("--seed", type=int, help=f"seed (default {d.seed})")
    p.add_argument("--backend", choices=("sb3", "rllib"), default="sb3", help="training backend (default sb3)")
    p.add_argument("--resume", metavar="CKPT", help="continue from a checkpoint folder (run/checkpoints/step_N; with --backend rllib, "
                        "run/checkpoints/iter_N)")
    p.add_argument("--config", metavar="FILE|NAME", help="TOML file of config keys (see train/config.py), or a "
                   "shipped config by name: scratch (PPO from fresh weights, no teacher: docs/training.md)")
    p.add_argument("--set", metavar="KEY=VALUE", action="append", default=[],
                   help="override any config key, VALUE in TOML syntax (e.g. --set net_arch=[128,128])")
    p.add_argument("--n-envs", type=int, help=f"games per rollout (default {d.n_envs})")
    p.add_argument("--workers", type=int, help=f"rollout processes (default {d.workers})")
    p.add_argument("--eval-every", type=int, help=f"timesteps between evaluations (default {d.eval_every:,}; 0 = end only)")
    p.add_argument("--eval-deals", type=int, help=f"duplicate deals per baseline per evaluation (default {d.eval_deals})")
    p.add_argument("--final-eval-deals", type=int, help=f"duplicate deals per baseline at the end (default {d.final_eval_deals})")
    p.add_argument("--checkpoint-every", type=int, help=f"timesteps between checkpoints (default {d.checkpoint_every:,})")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    # RLlib-only flags (issue: scale out)
    p.add_argument("--num-env-runners", type=int, default=None, help="RLlib: parallel rollout workers (default 2)")
    p.add_argument("--address", default=None, help="RLlib: address of an existing Ray cluster (default: local Ray)")
    p.add_argument("--env-runner-resource", action="append", metavar="NAME=AMOUNT", default=[],
                   help="RLlib: a custom Ray resource each env runner needs, to place the runners on the nodes "
                        "that advertise it (ray start --resources '{\"NAME\": N}'); repeatable")
    p.add_argument("--envs-per-env-runner", type=int, default=None,
                   help="RLlib: games each env runner steps together (one batched env; default: the config's "
                        "n_envs shared among the runners)")


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """The ``TrainConfig`` the flags describe.

    Raises:
        ValueError: an unreadable config file, an unknown key or a bad value.
    """
    if args.seed is not None and not 0 <= args.seed <= MAX_SEED:
        raise ValueError(f"--seed must be an int in 0..{MAX_SEED} (numpy's seed range, 2**32 - 1), got {args.seed}")
    d: dict[str, Any] = {}
    if args.config:
        d.update(TrainConfig.from_toml(args.config).to_dict())
    for item in args.set:
        if "=" not in item:
            raise ValueError(f"--set expects KEY=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        try:
            d[k.strip()] = tomllib.loads(f"v = {v}")["v"]
        except tomllib.TOMLDecodeError:
            d[k.strip()] = v
    flags = {"rules": args.rules, "num_players": args.num_players, "timesteps": args.timesteps, "out": args.out,
             "seed": args.seed, "n_envs": args.n_envs, "workers": args.workers, "eval_every": args.eval_every,
             "eval_deals": args.eval_deals, "final_eval_deals": args.final_eval_deals,
             "checkpoint_every": args.checkpoint_every}
    d.update({k: v for k, v in flags.items() if v is not None})
    if args.no_progress:
        d["progress"] = False
    cfg = TrainConfig.from_dict(d)
    if cfg.out == TrainConfig().out and "out" not in d:
        cfg.out = f"runs/{cfg.rules}"
    return cfg


def check_out_folder(path: str) -> None:
    """Fail before any work when ``--out PATH`` cannot hold a run folder, creating nothing.

    The nearest existing ancestor of ``path`` must be a folder in which a folder can
    be made (probed with a temporary folder, removed at once); ``path`` itself, if it
    exists, must be a folder.

    Raises:
        ValueError: an empty path, a path that is (or lies under) a file, or a place
            where nothing can be written.
    """
    if not path or not str(path).strip():
        raise ValueError("--out must name a run folder, got an empty path")
    p = Path(path).absolute()
    if p.exists() and not p.is_dir():
        raise ValueError(f"--out {path}: is a file, not a folder; give a run folder")
    anc = p
    while not anc.exists():
        anc = anc.parent
    if not anc.is_dir():
        raise ValueError(f"--out {path}: {anc} is a file, so no run folder can be made under it")
    try:
        probe = tempfile.mkdtemp(prefix=".rummy-probe-", dir=anc)
    except OSError as e:
        raise ValueError(f"--out {path}: cannot create a run folder in {anc} ({e.strerror or e})") from None
    os.rmdir(probe)


def _raise_interrupt(signum, frame):  # noqa: ARG001
    raise KeyboardInterrupt


def main(args: argparse.Namespace) -> int:
    """Run ``rummy train``; returns the exit code.

    Raises:
        ValueError: a bad config, flag or checkpoint (the ``rummy`` dispatcher prints it, exit 2).
    """
    # torch's OpenMP threads spin between ops by default and steal the rollout workers'
    # cores; passive waiting keeps a 2-core machine busy with useful work.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    # SIGTERM (a job scheduler, `kill`) stops training like Ctrl-C: a checkpoint first
    signal.signal(signal.SIGTERM, _raise_interrupt)
    cfg = config_from_args(args)
    check_out_folder(cfg.out)
    if args.backend != "rllib":
        given = [flag for flag, v in (("--address", getattr(args, "address", None)),
                                      ("--num-env-runners", getattr(args, "num_env_runners", None)),
                                      ("--envs-per-env-runner", getattr(args, "envs_per_env_runner", None)),
                                      ("--env-runner-resource", getattr(args, "env_runner_resource", None) or None))
                 if v is not None]
        if given:
            raise ValueError(f"{', '.join(given)}: RLlib-only flag(s); add --backend rllib (the sb3 backend runs on "
                             "this machine: --workers sets its rollout processes)")
    if args.backend == "rllib":
        check_rllib_network(cfg)  # before asking for the extra: it would be refused with it too
        try:
            from . import rllib
        except ImportError as e:
            raise ValueError(f"--backend rllib needs the rllib extra (pip install 'rummy-env[rllib]'): {e}") from None
        return rllib.main(cfg, args)
    from .trainer import train

    train(cfg, resume=args.resume)
    return 0


if __name__ == "__main__":  # pragma: no cover
    p = argparse.ArgumentParser(prog="rummy train")
    add_arguments(p)
    sys.exit(main(p.parse_args()))
