"""README tables are generated from the declared layouts (they must not drift)."""
from pathlib import Path

from rummy_env import docs
from rummy_env.actions import NUM_ACTIONS
from rummy_env.observation import obs_size


def test_readme_tables_are_current():
    text = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert docs.render(text) == text, "run: python -m rummy_env.docs"


def test_tables_cover_the_layouts():
    obs = docs.observation_table(2)
    assert "`hand` | 0 | 52 |" in obs
    assert f"2 → {obs_size(2)}" in obs
    assert f"Discrete({NUM_ACTIONS})" in docs.action_table()
    pres = docs.presets_table()
    for name in ("classic", "turnover", "deadwood", "stalemate", "practice"):
        assert f"`{name}`" in pres
