"""Suite-wide fixtures."""
import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _sb3_logs_in_pytest_tmp(tmp_path_factory):
    """Stable-Baselines3 gives a model made without ``tensorboard_log`` a logger folder of
    its own, ``$SB3_LOGDIR`` or else a new ``/tmp/SB3-<date>`` left behind by every
    ``learn()``: the tests' models log into pytest's temporary folder instead. (``rummy
    train`` always names its run's ``tb`` folder.)"""
    old = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3_logs"))
    yield
    if old is None:
        os.environ.pop("SB3_LOGDIR", None)
    else:
        os.environ["SB3_LOGDIR"] = old


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread_per_xdist_worker():
    """Under pytest-xdist (the README's ``-n 2``) each worker process runs torch on one thread:
    two workers of two threads each on two cores oversubscribe them, and the small forward
    passes of the tests (a policy a decision, a batch of rollouts) then wait on each other.
    Tests that need more threads set them (and the trainer sets ``torch_threads``)."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        try:
            import torch
        except ImportError:
            return
        torch.set_num_threads(1)


@pytest.fixture(scope="session")
def classic_onnx_cache(tmp_path_factory):
    """A web/serve cache folder holding the shipped classic policy's ONNX export, made once
    per test run through ``frontends.web.exported_pretrained`` (the exporter takes about 30 s
    over the plan network's graph): under pytest-xdist the worker processes share one folder
    beside their own temporary folders, the first to arrive exporting while the others wait on
    a file lock (filelock comes with torch). Tests may add other tables' exports to it
    (``exported_pretrained`` renames each into place, so two processes never half-write one);
    the tests of the export-on-first-use path make their own folders."""
    from extras import needs

    needs("torch")
    needs("onnx")
    needs("onnxruntime")
    from filelock import FileLock

    from rummy_env.frontends.web import exported_pretrained

    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, shared by its workers
    cache = root / "classic_onnx_cache"
    with FileLock(str(root / "classic_onnx_cache.lock")):
        cache.mkdir(exist_ok=True)
        exported_pretrained(cache)  # a no-op when the export is there (the web's cache check)
    return cache
