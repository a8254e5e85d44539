"""The one logit-masking helper: illegal actions' logits become ``MASK_FILL``.

``MASK_FILL = -1e9`` is safe in float32 and in ONNX: ``exp(-1e9 - max)`` underflows
to exactly 0, so softmax gives illegal actions probability 0 and arg-max never
picks one, yet unlike ``-inf`` a row with no legal action gives no NaN (and
``-inf`` is no constant an ONNX runtime needs to special-case). sb3-contrib's own
``-1e8`` gives the same probabilities: both underflow to 0.

Used by the PPO agent (numpy), the exported graph, the SB3 policy, the snapshot
opponents, the RLlib module and the warm start (torch).
"""
from __future__ import annotations

from typing import Any

import numpy as np

MASK_FILL = -1e9


def mask_logits(logits: Any, mask: Any) -> Any:
    """``logits`` with every entry whose ``mask`` entry is 0 (False) set to ``MASK_FILL``.

    Args:
        logits: float ``[..., N]`` (N: the table's action count, ``Table.num_actions``: 579 at a standard table): a numpy array or a torch tensor.
        mask: the action mask, same shape (bool or any int dtype, nonzero = legal),
            of the same kind as ``logits`` (numpy with numpy, torch with torch).

    Returns:
        a new array / tensor of ``logits``' dtype (float32 stays float32); traced
        into ONNX as one ``Where``.
    """
    if isinstance(logits, np.ndarray):
        return np.where(np.asarray(mask) != 0, logits, np.asarray(MASK_FILL, dtype=logits.dtype))
    import torch

    legal = mask if mask.dtype == torch.bool else mask != 0
    return torch.where(legal, logits, torch.full_like(logits, MASK_FILL))


__all__ = ["MASK_FILL", "mask_logits"]
