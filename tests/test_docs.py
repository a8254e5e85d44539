"""The tables of docs/env.md are generated from the declared layouts (they must not drift)."""
from pathlib import Path

from rummy_env import docs
from rummy_env.actions import NUM_ACTIONS
from rummy_env.observation import obs_size

ROOT = Path(__file__).resolve().parent.parent


def test_env_page_tables_are_current():
    text = (ROOT / docs.PAGE).read_text(encoding="utf-8")
    assert docs.missing_blocks(text) == []
    assert docs.render(text) == text, "run: python -m rummy_env.docs"
    assert docs.main(["--check"]) == 0


def test_readme_holds_no_generated_block():
    # the tables live on the env page only: a copy in the README would drift unchecked
    assert "<!-- BEGIN" not in (ROOT / "README.md").read_text(encoding="utf-8")


def test_tables_cover_the_layouts():
    obs = docs.observation_table(2)
    assert "`hand` | 0 | 52 |" in obs
    assert f"2 → {obs_size(2)}" in obs
    assert f"Discrete({NUM_ACTIONS})" in docs.action_table()
    pres = docs.presets_table()
    for name in ("classic", "turnover", "deadwood", "stalemate", "practice"):
        assert f"`{name}`" in pres


def _page(tmp_path: Path, text: str) -> Path:
    (tmp_path / "docs").mkdir()
    page = tmp_path / docs.PAGE
    page.write_text(text, encoding="utf-8")
    return page


def test_check_finds_a_stale_table_and_the_rewrite_fixes_it(tmp_path):
    current = (ROOT / docs.PAGE).read_text(encoding="utf-8")
    stale = current.replace("| `hand` | 0 | 52 | own hand |", "| `hand` | 0 | 51 | own hand |")
    assert stale != current
    page = _page(tmp_path, stale)
    assert docs.main(["--check", "--root", str(tmp_path)]) == 1
    assert page.read_text(encoding="utf-8") == stale      # --check writes nothing
    assert docs.main(["--root", str(tmp_path)]) == 0
    assert page.read_text(encoding="utf-8") == current


def test_a_page_without_its_blocks_is_refused_and_left_alone(tmp_path, capsys):
    text = "# env\n<!-- BEGIN presets -->\n<!-- END presets -->\n"
    page = _page(tmp_path, text)
    assert docs.main(["--root", str(tmp_path)]) == 2
    assert page.read_text(encoding="utf-8") == text
    err = capsys.readouterr().err
    assert "'observation'" in err and "'actions'" in err and "'presets'" not in err


def test_a_missing_page_is_a_clear_error(tmp_path, capsys):
    assert docs.main(["--check", "--root", str(tmp_path)]) == 2
    assert "env.md not found" in capsys.readouterr().err
