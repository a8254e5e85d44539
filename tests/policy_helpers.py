"""A tiny MaskablePPO policy and its ONNX export, made once per test process
(shared by test_export, test_serve and test_play; a few seconds on one core)."""
from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path

_CACHE: dict[str, object] = {}


def tiny_policy() -> dict:
    """``{"zip": Path, "export": Path, "model": MaskablePPO, "root": Path}``: a policy
    trained for 128 steps on ``SingleAgentEnv(seed=0)`` (classic, no rummy_config.json)
    and its export made through ``rummy export`` (the CLI's ``main``)."""
    from extras import needs

    for module in ("torch", "sb3_contrib", "onnx", "onnxscript", "onnxruntime"):  # train + export extras
        needs(module)
    if not _CACHE:
        import torch
        from sb3_contrib import MaskablePPO

        from rummy_env import SingleAgentEnv
        from rummy_env.cli import main as rummy

        torch.set_num_threads(1)
        root = Path(tempfile.mkdtemp(prefix="rummy_policy_"))
        atexit.register(shutil.rmtree, root, True)
        model = MaskablePPO("MlpPolicy", SingleAgentEnv(seed=0), n_steps=64, batch_size=64, seed=0, device="cpu")
        model.learn(128)
        (root / "run").mkdir()
        zip_path = root / "run" / "policy.zip"
        model.save(str(zip_path))
        out = root / "export"
        assert rummy(["export", str(zip_path), "--out", str(out)]) == 0
        _CACHE.update(zip=zip_path, export=out, model=model, root=root)
    return dict(_CACHE)
