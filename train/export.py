"""``rummy export SOURCE --out DIR``: a trained policy as ``policy.onnx`` + ``spec.json``.

SOURCE is an SB3 zip (``MaskablePPO``, or ``PPO`` trained on the same spaces),
``pretrained`` (the policy shipped at ``agents/pretrained/policy.zip``), or an RLlib
checkpoint folder written by ``rummy train --backend rllib`` (``checkpoints/iter_N``;
exported by ``export_rllib_checkpoint``, which needs ``ray[rllib]``).

``policy.onnx`` (opset 18, one dynamic ``batch`` axis):

=================  =========  =================  ==============================================
name               dtype      shape              meaning
=================  =========  =================  ==============================================
``observation``    float32    [batch, obs_dim]   the env's ``"observation"`` vector (``spec["observation"]``)
``action_mask``    int8       [batch, N]         the env's ``"action_mask"``: 1 = legal, 0 = illegal
``masked_logits``  float32    [batch, N]         the policy's logits; illegal actions set to ``MASK_FILL`` (-1e9)
``action``         int64      [batch]            argmax of ``masked_logits``: the greedy legal action
=================  =========  =================  ==============================================

``N`` is the action count of the table the policy plays (``spec["actions"]["num_actions"]``,
``Table.num_actions``: 579 at a standard table, 631 at a 500 Rum one, 632 at the jokers
table). The mask is applied inside the graph, so ``softmax(masked_logits)`` gives illegal
actions probability exactly 0 (``exp(-1e9 - max)`` underflows to 0 in float32). The
logits are those of SB3's ``policy.action_net(mlp_extractor.policy_net(features))``,
the network SB3's ``docs/guide/export.md`` exports (with a discard head, its scores added
to the discard logits: ``features.CardDiscardHead``). A row whose mask is all zeros
(no seat to move) has no meaning: every logit is ``MASK_FILL`` and ``action`` is 0.

``spec.json`` describes everything a frontend in another language needs: the env
version, the rules the policy was trained on, the observation layout (every named
piece with offset, shape and meaning), the card numbering, the action table
(id -> action text) and the graph's inputs and outputs (see ``build_spec``).

The rules come from a ``rummy_config.json`` with key ``"rules"`` that the trainer
saves in the zip's directory (or inside the zip); without one, ``classic`` is
assumed and ``spec["rules"]["source"]`` says so.
"""
from __future__ import annotations

import argparse
import json
import numbers
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from rummy_env import Rules, __version__ as ENV_PACKAGE_VERSION
from rummy_env.actions import ACTION_TEXTS
from rummy_env.cards import JOKER
from rummy_env.cards import CARD_TEXT
from rummy_env.agents.masking import MASK_FILL, mask_logits
from rummy_env.table import Table

ENV_VERSION = "rummy_v0"
SPEC_FORMAT = 1
OPSET = 18
CONFIG_NAME = "rummy_config.json"

INPUTS = (
    {"name": "observation", "dtype": "float32", "shape": ["batch", "obs_dim"],
     "meaning": "the env's observation vector (layout in 'observation')"},
    {"name": "action_mask", "dtype": "int8", "shape": ["batch", "num_actions"],
     "meaning": "the env's action mask: 1 = legal, 0 = illegal"},
)
OUTPUTS = (
    {"name": "masked_logits", "dtype": "float32", "shape": ["batch", "num_actions"],
     "meaning": f"policy logits; illegal actions are {MASK_FILL:g} so softmax gives them probability 0"},
    {"name": "action", "dtype": "int64", "shape": ["batch"],
     "meaning": "argmax of masked_logits: the greedy legal action id (first index on ties)"},
)


# ---------------------------------------------------------------------------- sources

def resolve_source(source: str | os.PathLike, rules: Any = None) -> Path:
    """The path named by SOURCE (``"pretrained"``, ``"pretrained:PRESET"`` or a path: a zip,
    or a folder for an RLlib checkpoint). ``pretrained`` with ``rules`` given (a preset
    name, dict or ``Rules``) is the policy shipped for that table
    (``rummy_env.agents.pretrained_for``; the classic one without rules).

    Raises:
        ValueError: that policy is not shipped (no policy plays the table), or the path
            does not exist.
    """
    from rummy_env.agents import PRETRAINED, pretrained_for
    from rummy_env.agents.shipped import shipped_zip

    text = str(source).strip()
    if text.lower().startswith("pretrained:") or text == "pretrained":
        preset = (text.partition(":")[2].strip().lower() if ":" in text
                  else "classic" if rules is None else pretrained_for(Rules.make(rules)))
        if preset is None:
            raise ValueError(f"no shipped policy plays this table (shipped: {', '.join(PRETRAINED)}); export a "
                             f"policy trained for it (rummy train --rules ...)")
        return Path(shipped_zip(f"pretrained:{preset}"))  # an unknown, unshipped or missing one: its message
    p = Path(source)
    if not p.exists():
        raise ValueError(f"{p} does not exist (give an SB3 policy zip, an RLlib checkpoint folder "
                         f"run/checkpoints/iter_N, or pretrained / pretrained:PRESET)")
    return p


#: What a run's zip holds of its last rollout and episodes, which a shipped policy does not
#: need: the last observations of every game (256 x 548 float32 numbers for the default
#: classic run, 0.75 MB pickled) and the recent episodes' infos.
ROLLOUT_LEFTOVERS = ("_last_obs", "_last_episode_starts", "_last_original_obs", "ep_info_buffer",
                     "ep_success_buffer")


def save_slim(source: str | os.PathLike, dest: str | os.PathLike) -> int:
    """Copy the SB3 zip ``source`` to ``dest`` with the optimizer's state reset (a fresh
    Adam holds no moments) and without the last rollout's observations and episode infos
    (``ROLLOUT_LEFTOVERS``), which makes a shipped policy about a third of a run's
    ``best_model.zip``; the policy's weights, spaces and the rest of the zip are kept, so
    it plays exactly as the source (it can still be trained on: ``learn`` resets the
    environment). Returns the size of ``dest`` in bytes.

    Raises:
        ValueError: ``source`` does not load (``load_model``)."""
    model = load_model(source)
    pol = model.policy
    pol.optimizer = pol.optimizer_class(pol.parameters(), lr=model.lr_schedule(1), **pol.optimizer_kwargs)
    Path(dest).parent.mkdir(parents=True, exist_ok=True)
    model.save(os.fspath(dest), exclude=list(ROLLOUT_LEFTOVERS))
    return Path(dest).stat().st_size


def load_model(path: str | os.PathLike) -> Any:
    """Load an SB3 ``MaskablePPO`` (or ``PPO``) zip on the CPU.

    Raises:
        ValueError: the file is missing, is not a zip (corrupt), or SB3 cannot load it.
    """
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"policy zip {p} does not exist")
    if not zipfile.is_zipfile(p):
        raise ValueError(f"{p} is not an SB3 zip (not a zip archive: corrupt or another format)")
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    from rummy_env.agents.ppo_agent import legacy_module_names

    errors = []
    for cls in (MaskablePPO, PPO):
        try:
            with legacy_module_names():
                return cls.load(str(p), device="cpu")
        except Exception as e:  # noqa: BLE001 - SB3 raises many kinds on a bad file
            errors.append(f"{cls.__name__}: {type(e).__name__}: {e}")
    raise ValueError(f"cannot load {p} as an SB3 MaskablePPO or PPO zip ({'; '.join(errors)})")


def find_rules(zip_path: str | os.PathLike | None) -> tuple[Rules, str]:
    """The rules a zip was trained on, and where they were read from.

    Looks for ``rummy_config.json`` (key ``"rules"``: a preset name or an object of
    options, as in STATE) in the zip's directory, then inside the zip archive. Falls
    back to ``classic`` and says so.

    Raises:
        ValueError: a ``rummy_config.json`` exists but is not JSON, lacks ``"rules"``,
            or names unknown rules.
    """
    if zip_path is not None:
        p = Path(zip_path)
        cfg = p.parent / CONFIG_NAME
        text, where = None, None
        if cfg.is_file():
            text, where = cfg.read_text(encoding="utf-8"), str(cfg)
        elif zipfile.is_zipfile(p):
            with zipfile.ZipFile(p) as z:
                names = [n for n in z.namelist() if n.rsplit("/", 1)[-1] == CONFIG_NAME]
                if names:
                    text, where = z.read(names[0]).decode("utf-8"), f"{p}:{names[0]}"
        if text is not None:
            try:
                cfg_obj = json.loads(text)
            except json.JSONDecodeError as e:
                raise ValueError(f"{where} is not valid JSON: {e}") from None
            if not isinstance(cfg_obj, dict) or "rules" not in cfg_obj:
                raise ValueError(f"{where} has no 'rules' key")
            try:
                return Rules.make(cfg_obj["rules"]), where
            except (ValueError, TypeError) as e:
                raise ValueError(f"{where}: bad rules: {e}") from None
    return Rules.preset("classic"), f"default: no {CONFIG_NAME} found beside the policy; assumed classic"


# ---------------------------------------------------------------------------- the graph

def _onnx_module(policy: Any) -> Any:
    """A ``torch.nn.Module`` ``(observation, action_mask) -> (masked_logits, action)``
    over the SB3 policy's actor (features extractor, policy MLP, action head)."""
    import torch

    class OnnxablePolicy(torch.nn.Module):
        def __init__(self, policy: Any) -> None:
            super().__init__()
            self.features_extractor = getattr(policy, "pi_features_extractor", policy.features_extractor)
            self.policy_net = policy.mlp_extractor.policy_net
            self.action_net = policy.action_net

        def forward(self, observation: torch.Tensor, action_mask: torch.Tensor):
            fx = self.features_extractor
            if getattr(fx, "discard_scorer", None) is None:
                logits = self.action_net(self.policy_net(fx(observation.float())))
            else:  # the discard head's scores added to the discard logits (train/features.py)
                full = fx.full_features(observation)
                logits = fx.scored(self.action_net(self.policy_net(fx(full))), full)
            masked = mask_logits(logits, action_mask)
            return masked, torch.argmax(masked, dim=1)

    return OnnxablePolicy(policy).eval()


def masked_graph(logits_net: Any) -> Any:
    """A ``torch.nn.Module`` ``(observation, action_mask) -> (masked_logits, action)`` over
    any module mapping observations ``[B, obs_dim]`` to logits ``[B, N]`` (N: the table's action count, ``Table.num_actions``: 579 at a standard table) (the graph
    ``_onnx_module`` builds for an SB3 policy, for other sources such as RLlib)."""
    import torch

    class MaskedPolicy(torch.nn.Module):
        def __init__(self, net: Any) -> None:
            super().__init__()
            self.net = net

        def forward(self, observation: torch.Tensor, action_mask: torch.Tensor):
            logits = self.net(observation.float())
            masked = mask_logits(logits, action_mask)
            return masked, torch.argmax(masked, dim=1)

    return MaskedPolicy(logits_net).eval()


def export_graph_onnx(mod: Any, obs_dim: int, path: Path, n_actions: int) -> None:
    """Write ``mod`` (``(observation, action_mask) -> (masked_logits, action)``) to
    ``path`` as the ONNX graph described in this module's docstring; ``obs_dim`` and
    ``n_actions`` are the table's observation size and action count (``Table.obs_size``,
    ``Table.num_actions``)."""
    import contextlib
    import io
    import logging
    import warnings

    import onnx
    import torch

    logging.getLogger("torch.onnx").setLevel(logging.ERROR)  # e.g. "torchvision is not installed"
    obs = torch.zeros(2, obs_dim, dtype=torch.float32)
    mask = torch.ones(2, n_actions, dtype=torch.int8)
    batch = torch.export.Dim("batch", min=1)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        torch.onnx.export(
            mod, (obs, mask), str(path),
            input_names=["observation", "action_mask"],
            output_names=["masked_logits", "action"],
            dynamic_shapes={"observation": {0: batch}, "action_mask": {0: batch}},
            opset_version=OPSET, dynamo=True, external_data=False, verbose=False,
        )
    m = onnx.load(str(path))
    onnx.checker.check_model(m)
    # name the batch axis "batch" on every input and output
    for v in list(m.graph.input) + list(m.graph.output):
        d0 = v.type.tensor_type.shape.dim[0]
        if not d0.HasField("dim_value"):
            d0.dim_param = "batch"
    onnx.save(m, str(path))


# ---------------------------------------------------------------------------- spec.json

def build_spec(rules: Rules, rules_source: str, obs_dim: int, source: str) -> dict[str, Any]:
    """The ``spec.json`` contents for a policy trained on ``rules``.

    Keys: ``format``, ``env`` (``"rummy_v0"``), ``env_package_version``, ``source``,
    ``rules`` (``preset``, ``json`` (the STATE form), ``options``, ``num_players``,
    ``source``, ``generalises``: false, the ``rummy serve`` switch for other rules),
    ``observation`` (``dtype``, ``size``, ``pieces``: ``name``, ``offset``,
    ``shape``, ``meaning``), ``cards`` (card number -> text), ``actions``
    (``num_actions``, ``ranges``, ``table``: ``{"id", "text"}`` for every id),
    ``inputs`` / ``outputs`` (``name``, ``dtype``, ``shape``, ``meaning``),
    ``mask_fill`` and ``opset``.
    """
    n = rules.num_players
    table = Table.of(rules)
    kind, n_act = table.kind, table.num_actions
    shapes = {"obs_dim": obs_dim, "num_actions": n_act}
    return {
        "format": SPEC_FORMAT,
        "env": ENV_VERSION,
        "env_package_version": ENV_PACKAGE_VERSION,
        "source": source,
        "rules": {
            "preset": rules.preset_name,
            "json": rules.to_json(),
            "options": rules.options(),
            "num_players": n,
            "source": rules_source,
            # rummy serve plays positions at other rules only when this is true (set by hand
            # once a policy is shown to hold up on them)
            "generalises": False,
        },
        "observation": {
            "dtype": "float32",
            "size": obs_dim,
            "seen_from": "the seat to move; oppK_* pieces describe the seat K places after it in turn order",
            "pieces": [
                {"name": name, "offset": off, "shape": [size], "meaning": meaning}
                for name, off, size, meaning in table.obs_layout
            ],
        },
        "cards": {
            "numbering": "card = 13 * suit + rank; suits C D H S = 0..3, ranks A 2 3 4 5 6 7 8 9 T J Q K = 0..12",
            "texts": list(CARD_TEXT),
            **({"joker": {"number": JOKER, "text": "JK", "meld_form": "JK=<card> (the card it stands for)"}}
               if table.jokers else {}),
        },
        "actions": {
            "kind": kind,
            "num_actions": n_act,
            "ranges": [{"name": nm, "first": first, "count": cnt, "meaning": meaning}
                       for nm, first, cnt, meaning in table.action_ranges],
            "table": [{"id": i, "text": t} for i, t in enumerate(
                ACTION_TEXTS[:n_act] if table.fixed_layout else table.action_layout.texts)],
        },
        "inputs": [dict(d, shape=[shapes.get(s, s) for s in d["shape"]]) for d in INPUTS],
        "outputs": [dict(d, shape=[shapes.get(s, s) for s in d["shape"]]) for d in OUTPUTS],
        "mask_fill": MASK_FILL,
        "opset": OPSET,
    }


# ---------------------------------------------------------------------------- export

def export_policy(model_or_path: Any, out_dir: str | os.PathLike, rules: Rules | str | dict | None = None) -> dict:
    """Export a policy to ``out_dir/policy.onnx`` and ``out_dir/spec.json``.

    Args:
        model_or_path: an SB3 ``MaskablePPO``/``PPO`` model, the path of its zip, or the
            folder of an RLlib checkpoint (``export_rllib_checkpoint``).
        out_dir: the directory to write (created if needed; the two files are replaced).
        rules: the rules it was trained on (preset name, ``Rules`` or dict); ``None``
            reads ``rummy_config.json`` beside the zip, else assumes ``classic``.

    Returns:
        The spec (the contents of ``spec.json``).

    Raises:
        ValueError: a missing or corrupt zip, bad rules, or a model whose spaces are
            not this env's at those rules (``Discrete(num_actions(kind))`` actions, a Box
            of ``obs_size(n, kind)``).
    """
    if isinstance(model_or_path, (str, os.PathLike)):
        path = resolve_source(model_or_path, rules)
        if path.is_dir():
            return _export_rllib(path, out_dir, rules)
        model = load_model(path)
        source = str(path)
    else:
        path, model, source = None, model_or_path, f"in-memory {type(model_or_path).__name__}"
    if not hasattr(model, "policy"):
        raise ValueError(f"expected an SB3 model or a zip path, got {type(model_or_path).__name__}")
    if rules is None:
        rules_obj, rules_source = find_rules(path)
    else:
        rules_obj, rules_source = Rules.make(rules), "given to export_policy"
    table = Table.of(rules_obj)
    n_act = getattr(model.action_space, "n", None)  # a numpy integer in gymnasium's Discrete
    shape = getattr(model.observation_space, "shape", None)
    dim = shape[0] if isinstance(shape, tuple) and len(shape) == 1 else None
    if not isinstance(n_act, numbers.Integral) or dim is None:
        raise ValueError(f"the policy's spaces are {model.observation_space} and {model.action_space}, not a Box of "
                         f"({table.obs_size},) and Discrete({table.num_actions}) of rummy_v0 at {table.describe()}; "
                         f"the rules ({rules_source}) do not match the policy")
    why = table.misfit(dim, n_act)
    if why is not None:
        raise ValueError(f"the policy's observation shape is {shape} and its action space {model.action_space}, "
                         f"but rummy_v0 at {table.describe()} has ({table.obs_size},) and "
                         f"Discrete({table.num_actions}): {why}; the rules ({rules_source}) do not match the policy")
    want = table.obs_size
    spec = build_spec(rules_obj, rules_source, want, source)
    write_policy_dir(_onnx_module(model.policy), spec, want, Path(out_dir))
    return spec


def write_policy_dir(graph: Any, spec: dict[str, Any], obs_dim: int, out: Path) -> None:
    """Write ``graph`` as ``out/policy.onnx`` and ``spec`` as ``out/spec.json`` (both
    written to a temporary folder first, then moved into place)."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        tmp_onnx = Path(tmp) / "policy.onnx"
        export_graph_onnx(graph, obs_dim, tmp_onnx, spec["actions"]["num_actions"])
        tmp_spec = Path(tmp) / "spec.json"
        tmp_spec.write_text(json.dumps(spec, indent=1) + "\n", encoding="utf-8")
        shutil.move(str(tmp_onnx), out / "policy.onnx")
        shutil.move(str(tmp_spec), out / "spec.json")


def _export_rllib(path: Path, out_dir: str | os.PathLike, rules: Any) -> dict:
    """A folder SOURCE: an RLlib checkpoint (``export_rllib_checkpoint``)."""
    try:
        from . import rllib  # noqa: F401  (imports ray only when it loads the module)
    except ImportError as e:
        raise ValueError(
            f"{path} is a folder, taken as an RLlib checkpoint; exporting one needs the rllib extra "
            f"(pip install 'rummy-env[rllib]'): {e}"
        ) from None
    return export_rllib_checkpoint(path, out_dir, rules=rules)


def export_rllib_checkpoint(ckpt_dir: str | os.PathLike, out_dir: str | os.PathLike,
                            rules: Rules | str | dict | None = None) -> dict[str, Any]:
    """Export the learner policy of an RLlib checkpoint to ``out_dir/policy.onnx`` and
    ``out_dir/spec.json``, the format of ``rummy_env.train.export`` (same graph inputs/outputs,
    same spec). Needs ray[rllib]. The rules come from the checkpoint's ``rummy_config.json`` unless given.

    Raises:
        ValueError: not an RLlib checkpoint of this trainer, or a module whose sizes do
            not match the rules.
    """
    from .rllib import STATE_FILE, check_checkpoint, load_actor

    p = Path(ckpt_dir)
    check_checkpoint(p, resume=False)  # a checkpoint of 0.1.0's multi-agent runners exports too
    if rules is None:
        rules_obj, rules_source = find_rules(p / STATE_FILE)  # reads rummy_config.json beside it
    else:
        rules_obj, rules_source = Rules.make(rules), "given to export_rllib_checkpoint"
    net = load_actor(p)
    table = Table.of(rules_obj)
    want = table.obs_size
    import torch

    with torch.no_grad():
        try:
            out = net(torch.zeros(1, want))
        except Exception as e:  # noqa: BLE001
            raise ValueError(f"the policy in {p} does not take observations of size {want} "
                             f"({rules_source}): {e}") from None
    why = table.misfit(want, int(out.shape[-1])) if out.ndim == 2 and out.shape[0] == 1 else "its output is not [1, N]"
    if why is not None:
        raise ValueError(f"the policy in {p} has {tuple(out.shape)[1:]} outputs, not {table.num_actions} "
                         f"({rules_source}): {why}")
    spec = build_spec(rules_obj, rules_source, want, f"rllib:{p}")
    write_policy_dir(masked_graph(net), spec, want, Path(out_dir))
    return spec


# ---------------------------------------------------------------------------- command line

def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", metavar="SOURCE",
                        help="an SB3 MaskablePPO/PPO zip, an RLlib checkpoint folder (run/checkpoints/iter_N), "
                             "or 'pretrained' (the policy shipped for --rules, the classic one by default) or "
                             "'pretrained:PRESET'")
    parser.add_argument("--out", required=True, metavar="DIR", help="directory for policy.onnx and spec.json")
    parser.add_argument("--rules", default=None, metavar="RULES",
                        help="the rules the policy was trained on (preset name or JSON object); "
                             f"default: {CONFIG_NAME} beside the zip, else classic")


def main(args: argparse.Namespace) -> int:
    """Run ``rummy export``; returns 0. Errors raise ``ValueError`` (the CLI prints them)."""
    rules = args.rules
    if rules is not None and rules.lstrip().startswith("{"):
        try:
            rules = json.loads(rules)
        except json.JSONDecodeError as e:
            raise ValueError(f"--rules is not valid JSON: {e}") from None
    if not args.out or not args.out.strip():  # Path("") is the current folder: never meant
        raise ValueError("--out must name a folder for policy.onnx and spec.json, got an empty path")
    fresh = not Path(args.out).exists()
    try:  # an unusable output folder is an error before any work is done
        Path(args.out).mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ValueError(f"--out {args.out!r} cannot be used as an output folder: {e}") from None
    try:
        spec = export_policy(args.source, args.out, rules=rules)
    except ValueError as e:
        if fresh and not any(Path(args.out).iterdir()):  # the folder made above stays only with an export in it
            Path(args.out).rmdir()
        raise ValueError(str(e).replace("(given to export_policy)", "(given with --rules)")) from None
    out = Path(args.out)
    print(f"wrote {out / 'policy.onnx'} and {out / 'spec.json'}")
    print(f"rules: {json.dumps(spec['rules']['json'])} ({spec['rules']['source'].replace('given to export_policy', 'given with --rules')})")
    print(f"inputs: observation float32 [batch, {spec['observation']['size']}], "
          f"action_mask int8 [batch, {spec['actions']['num_actions']}]")
    if "default" in spec["rules"]["source"]:
        print(f"note: no {CONFIG_NAME} found; the spec assumes classic rules", file=sys.stderr)
    return 0
