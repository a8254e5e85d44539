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
    "uvicorn": "serve", "httpx": "export", "playwright": "web", "hypothesis": "dev", "torchrl": "dev", "tensordict": "dev",
    "ray": "rllib",
}
"""The extra (pyproject.toml) that installs each optional module the tests use."""


def needs(module: str, extra: str | None = None) -> Any:
    """``pytest.importorskip(module)`` with the reason ``needs the EXTRA extra: pip
    install 'rummy-env[EXTRA]'`` (``extra`` defaults to ``EXTRA_OF[module]``)."""
    extra = extra or EXTRA_OF.get(module.split(".")[0], "all")
    return pytest.importorskip(module, reason=f"needs the {extra} extra ({module} is not installed): "
                                              f"pip install 'rummy-env[{extra}]'")


def missing_extra(module_name: str | None) -> str | None:
    """The extra to install when ``module_name`` (a ``ModuleNotFoundError.name``) is an
    optional module that is not installed here; None for any other module (a real
    error, not a missing extra)."""
    import importlib.util

    root = (module_name or "").split(".")[0]
    if root not in EXTRA_OF:
        return None
    try:
        found = importlib.util.find_spec(root) is not None
    except (ImportError, ValueError):
        found = False
    return None if found else EXTRA_OF[root]


def skip_for_missing(module_name: str | None) -> None:
    """``pytest.skip`` naming the extra when ``module_name`` is a missing optional module
    (``missing_extra``); returns when it is not, so the caller reports the real error."""
    extra = missing_extra(module_name)
    if extra is not None:
        pytest.skip(f"needs the {extra} extra ({module_name} is not installed): pip install 'rummy-env[{extra}]'")
