"""The numeric precision of training (``TrainConfig.precision``): float32, or bfloat16
matrix products under ``torch.autocast`` on a CPU that multiplies bfloat16 natively.

A module of its own, importing nothing of the package, so that the config, the warm
start and the trainer can all ask it."""
from __future__ import annotations

import functools

PRECISIONS = ("auto", "float32", "bfloat16")
"""``TrainConfig.precision``: the matrix products of the network in training."""


@functools.lru_cache(maxsize=1)
def cpu_has_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 matrices natively: the x86 flags ``avx512_bf16``
    or ``amx_bf16`` in ``/proc/cpuinfo`` (Linux). False elsewhere, and on CPUs without them,
    where torch emulates bfloat16 more slowly than float32. Read once per process."""
    try:
        with open("/proc/cpuinfo") as fh:
            flags = next((line for line in fh if line.startswith("flags")), "").split()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def use_bf16(precision: str) -> bool:
    """Whether ``precision`` (one of ``PRECISIONS``) trains in bfloat16 on this machine:
    ``"bfloat16"`` always, ``"auto"`` when ``cpu_has_bf16()``, ``"float32"`` never.

    Raises:
        ValueError: ``precision`` is not one of ``PRECISIONS``."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    return precision == "bfloat16" or (precision == "auto" and cpu_has_bf16())
