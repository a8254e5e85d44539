"""Issue 25 item 3: a shipped policy per table (``pretrained:PRESET``), and the frontends
(``rummy play``, ``rummy web``, ``rummy serve``, ``rummy export``) default to the policy of
the table they are given."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from rummy_env.agents import PRETRAINED, make_agent, pretrained_for, pretrained_path
from rummy_env.rules import Rules
from rummy_env.table import Table

pytest.importorskip("torch", reason="needs the train extra: pip install 'rummy-env[train]'")
pytest.importorskip("sb3_contrib", reason="needs the train extra: pip install 'rummy-env[train]'")

ROOT = Path(__file__).resolve().parents[1]


def test_every_shipped_policy_fits_its_table_and_has_a_card():
    assert {"classic", "rum500", "jokers"} <= set(PRETRAINED)
    for preset, file in PRETRAINED.items():
        agent = make_agent(f"pretrained:{preset}")
        table = Table.of(Rules.preset(preset))
        assert agent.n_actions == table.num_actions and agent.obs_shape == (table.obs_size,), preset
        folder = Path(pretrained_path(preset)).parent
        card = (folder / "README.md").read_text(encoding="utf-8")
        assert f"pretrained:{preset}" in card or preset == "classic"
        size = Path(pretrained_path(preset)).stat().st_size
        assert size < 4_000_000, (preset, size)  # the optimizer's state is not shipped (save_slim)
        assert f"{size / 1e6:.1f} MB" in card, (preset, f"{size / 1e6:.1f} MB")
        ev = json.loads((folder / "evaluation.json").read_text())
        assert ev["rules"] == preset and ev["results"], preset
    assert make_agent("pretrained:rum500").n_actions == 631  # 500 Rum keeps its 631 ids
    jk = make_agent("pretrained:jokers")  # the jokers table: 632 ids, 814 observation numbers heads-up
    assert (jk.n_actions, jk.obs_shape) == (632, (814,))


@pytest.mark.parametrize("rules, preset", [
    (Rules.preset("classic"), "classic"),
    (Rules.preset("turnover"), "classic"),  # the classic layouts: the classic policy plays it
    (Rules.preset("rum500"), "rum500"),
    (Rules.preset("jokers"), "jokers"),
    (Rules.preset("turnover", jokers=2), "jokers"),  # the jokers table's rules under another name
    (Rules.preset("jokers", num_players=3), None),
    (Rules.preset("turnover", num_players=3), None),
    (Rules.preset("rum500", num_players=3), None),
])
def test_pretrained_for_picks_the_tables_policy(rules, preset):
    assert pretrained_for(rules) == preset


def test_pretrained_preset_errors():
    with pytest.raises(ValueError, match="no policy is shipped for the two_decks table yet"):
        make_agent("pretrained:two_decks")
    with pytest.raises(ValueError, match="unknown preset 'chess'"):
        make_agent("pretrained:chess")
    with pytest.raises(ValueError, match=r"no policy is shipped for the two_decks table \(shipped: classic"):
        pretrained_path("two_decks")


def test_rummy_play_meets_the_tables_policy():
    from rich.console import Console

    from rummy_env.frontends.play import Game

    out = io.StringIO()
    g = Game("rum500", "pretrained", 0, 1, "hand", io.StringIO("q\n"), Console(file=out))
    assert g.opponent_name == "pretrained:rum500" and "heuristic" not in out.getvalue()
    g = Game("classic", "pretrained", 0, 1, "hand", io.StringIO("q\n"), Console(file=io.StringIO()))
    assert g.opponent_name == "pretrained"
    out = io.StringIO()
    g = Game("jokers", "pretrained", 0, 1, "hand", io.StringIO("q\n"), Console(file=out))
    assert g.opponent_name == "pretrained:jokers" and "heuristic" not in out.getvalue()
    from rummy_env.frontends.play import make_opponent

    out = io.StringIO()
    agent, used = make_opponent("pretrained", 0, Console(file=out), Rules.preset("turnover", num_players=3))
    assert used == "heuristic" and "no shipped policy plays this table" in out.getvalue()


def test_export_and_serve_take_the_tables_policy(classic_onnx_cache):
    """The exports land in the suite's shared cache (``classic_onnx_cache``: the classic one is
    there already; the 500 Rum and jokers ones are exported once here and reused)."""
    pytest.importorskip("onnx")
    from rummy_env.frontends.serve import shipped_policy_dir
    from rummy_env.train.export import resolve_source

    assert resolve_source("pretrained", "rum500") == Path(pretrained_path("rum500"))
    assert resolve_source("pretrained:rum500") == Path(pretrained_path("rum500"))
    assert resolve_source("pretrained", "classic") == Path(pretrained_path("classic"))
    with pytest.raises(ValueError, match="no shipped policy plays this table"):
        resolve_source("pretrained", {"preset": "turnover", "num_players": 3})
    folder = Path(shipped_policy_dir("pretrained", "rum500", str(classic_onnx_cache)))
    spec = json.loads((folder / "spec.json").read_text())
    assert spec["actions"]["num_actions"] == 631 and "rum500" in json.dumps(spec["rules"])
    assert shipped_policy_dir(str(folder), None, str(classic_onnx_cache)) == str(folder)  # a folder is itself
    with pytest.raises(ValueError, match="carries its own rules"):
        shipped_policy_dir(str(folder), "classic", str(classic_onnx_cache))
    with pytest.raises(ValueError, match="pretrained:rum500 is the policy of the rum500 table, but --rules classic"):
        shipped_policy_dir("pretrained:rum500", "classic", str(classic_onnx_cache))
    with pytest.raises(ValueError, match="no policy is shipped for two_decks"):
        shipped_policy_dir("pretrained:two_decks", "classic", str(classic_onnx_cache))
    # the web table's default opponent at a 500 Rum table: that export, played with onnxruntime
    pytest.importorskip("onnxruntime")
    pytest.importorskip("fastapi")
    from rummy_env.frontends.web import WebTable, opponent_factory

    make, name = opponent_factory("pretrained-onnx", cache_dir=classic_onnx_cache)
    table = WebTable(make, name, rules="rum500", seed=1)
    assert table.table_agent == "pretrained-onnx (the policy shipped for rum500)" and table.agent_note is None
    game = table.new_match({"seed": 3})
    assert game["view"]["agent"] == "pretrained-onnx (the policy shipped for rum500)"
    classic = table.new_match({"rules": "classic", "seed": 3})
    assert classic["view"]["agent"] == name
    # rummy web --rules jokers: the jokers policy, exported and played with onnxruntime
    table = WebTable(make, name, rules="jokers", seed=1)
    assert table.table_agent == "pretrained-onnx (the policy shipped for jokers)" and table.agent_note is None
    game = table.new_match({"seed": 4})
    assert game["view"]["agent"] == "pretrained-onnx (the policy shipped for jokers)"


def test_one_loopback_answer_for_every_server():
    from rummy_env.frontends.serve import _is_loopback
    from rummy_env.loopback import is_loopback

    for host in ("127.0.0.1", "127.3.2.1", "::1", "[::1]", "localhost"):
        assert is_loopback(host) and _is_loopback(host), host
    for host in ("0.0.0.0", "10.0.0.1", "192.168.1.2", "::", "example.com", "", None):
        assert not is_loopback(host), host
