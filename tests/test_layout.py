"""The installed layout: one ``rummy_env`` namespace in site-packages (issue 17, API.md "Agents").

The folders ``agents/``, ``train/`` and ``eval/`` install as ``rummy_env.agents``,
``rummy_env.train`` and ``rummy_env.eval``; nothing else is put at the top level.
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    pytest.importorskip("setuptools", minversion="77")
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                    "-w", str(out), str(ROOT)], check=True, cwd=out,
                   env={**os.environ, "PIP_NO_INDEX": "1"})
    (whl,) = out.glob("rummy_env-*.whl")
    return whl


def test_wheel_installs_only_rummy_env(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    dist_info = {t for t in tops if t.endswith(".dist-info")}
    assert tops - dist_info == {"rummy_env"}
    for module in ("rummy_env/agents/__init__.py", "rummy_env/train/trainer.py", "rummy_env/eval/tournament.py",
                   "rummy_env/agents/pretrained/policy.zip", "rummy_env/agents/pretrained/README.md",
                   # the web table's page and practice positions (package data, issue 16)
                   "rummy_env/frontends/web.py", "rummy_env/frontends/web_table/static/index.html",
                   "rummy_env/frontends/web_table/static/table.js", "rummy_env/frontends/web_table/static/table.css",
                   "rummy_env/frontends/web_table/positions/lay_off.json"):
        assert module in names, module


def test_no_top_level_agents_train_eval(tmp_path):
    # a fresh interpreter outside the source tree: only the installed packages are visible
    code = ("import importlib.util as u, rummy_env.agents, rummy_env.train, rummy_env.eval; "
            "print([n for n in ('agents', 'train', 'eval') if u.find_spec(n) is not None])")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert out.stdout.strip() == "[]"


def test_legacy_module_names_resolve_old_pickles_only_while_open(tmp_path):
    # release 0.1's zips pickle classes under their old module paths (protocol 0 GLOBAL)
    code = """
import pickle, sys
from rummy_env.agents.ppo_agent import legacy_module_names
from rummy_env.train.policy import FastMaskablePolicy
old = b"ctrain.policy\\nFastMaskablePolicy\\n."
with legacy_module_names():
    assert pickle.loads(old) is FastMaskablePolicy
assert "train" not in sys.modules and "train.policy" not in sys.modules
try:
    pickle.loads(old)
except ModuleNotFoundError:
    print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert out.stdout.strip() == "ok", out.stderr
