"""The ``rummy`` command: ``train``, ``eval``, ``export``, ``serve``, ``play``, ``web``, ``bench``, ``benchmark``.

Each sub-command lives in its own module, which exposes ``add_arguments(parser)``
and ``main(args) -> int``; modules are imported only when their command runs, so
``rummy --help`` starts fast and needs no torch.
"""
from __future__ import annotations

import argparse
import importlib
import sys

COMMANDS: dict[str, tuple[str, str]] = {
    "train": ("rummy_env.train.cli", "self-play MaskablePPO training (the main job; --backend rllib: Ray RLlib PPO)"),
    "eval": ("rummy_env.eval.cli", "a duplicate-deal tournament between agents, with intervals and ratings"),
    "export": ("rummy_env.train.export", "export a trained policy to policy.onnx + spec.json"),
    "serve": ("rummy_env.frontends.serve", "serve an exported policy over HTTP on 127.0.0.1"),
    "play": ("rummy_env.frontends.play", "play against an agent in the terminal"),
    "web": ("rummy_env.frontends.web", "play against an agent in the browser: a practice table on 127.0.0.1"),
    "bench": ("rummy_env.benchmark.speed_train", "speed benchmarks of the env and of training"),
    "benchmark": ("rummy_env.benchmark.cli", "the RL benchmark: versioned tasks, one protocol, rows, a leaderboard"),
}


_EXTRA_OF = {"torch": "train", "sb3_contrib": "train", "stable_baselines3": "train", "tensorboard": "train",
             "matplotlib": "eval", "openskill": "eval", "onnx": "export", "onnxscript": "export",
             "onnxruntime": "serve", "fastapi": "serve", "uvicorn": "serve", "starlette": "serve", "ray": "rllib",
             "rlcard": "bench", "pyspiel": "bench"}
"""The extra (pyproject.toml) that installs each optional module a command may need."""


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rummy", description="Straight Rummy for reinforcement learning.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = None
    if argv:
        wanted = next((a for a in argv if not a.startswith("-")), None)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name == wanted:
            importlib.import_module(module).add_arguments(p)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``rummy`` console script; returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    cmd = next((a for a in argv if not a.startswith("-")), None)
    if cmd in ("eval", "play", "serve", "export", "web"):
        # one observation at a time: torch's thread pool only adds overhead (and
        # oversubscribes a small machine); set before torch is imported
        import os

        os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
        if not args.command:
            parser.print_help()
            return 2
        module = importlib.import_module(COMMANDS[args.command][0])
        return int(module.main(args) or 0)
    except ModuleNotFoundError as e:
        extra = _EXTRA_OF.get((e.name or "").split(".")[0])
        if extra is None:  # not an optional module: a real error
            raise
        if cmd == "web" and extra == "serve":
            extra = "web"
        print(f"rummy {cmd}: error: needs the {extra} extra ({e.name} is not installed): "
              f"pip install 'rummy-env[{extra}]'", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except ValueError as e:
        print(f"rummy {cmd}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
