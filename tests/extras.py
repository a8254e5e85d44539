"""``needs(module, extra)``: skip a test module (or test) when an optional extra is not
installed, with a reason that names the extra and how to install it (issue 27 item 16).

    torch = needs("torch", "train")  # at module level, before importing what needs it
"""
from __future__ import annotations

from typing import Any

import pytest

EXTRA_OF = {
    "torch": "train", "sb3_contrib": "train", "stable_baselines3": "train", "matplotlib": "eval",
    "openskill": "eval", "onnx": "export", "onnxscript": "export", "onnxruntime": "serve", "fastapi": "serve",
    "uvicorn": "serve", "httpx": "export", "playwright": "web", "hypothesis": "dev", "torchrl": "dev",
    "ray": "rllib",
}
"""The extra (pyproject.toml) that installs each optional module the tests use."""


def needs(module: str, extra: str | None = None) -> Any:
    """``pytest.importorskip(module)`` with the reason ``needs the EXTRA extra: pip
    install 'rummy-env[EXTRA]'`` (``extra`` defaults to ``EXTRA_OF[module]``)."""
    extra = extra or EXTRA_OF.get(module.split(".")[0], "all")
    return pytest.importorskip(module, reason=f"needs the {extra} extra ({module} is not installed): "
                                              f"pip install 'rummy-env[{extra}]'")
