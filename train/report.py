"""The final evaluation report both training backends write (``report.json``, ``report.md``)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_report(run_dir: Path, report: dict[str, Any], title: str, verbose: int = 1) -> str:
    """Write ``report`` (with ``results``: baseline -> ``rummy_env.eval.tournament.evaluate`` dict, and
    ``deals``) as ``report.json`` and a markdown table ``report.md`` headed ``title``;
    print the table when ``verbose``. Returns the markdown."""
    (run_dir / "report.json").write_text(json.dumps(report, indent=2, default=float))
    lines = [f"# {title}", "",
             f"Duplicate deals per baseline: {report['deals']} (each played in both seat rotations)", "",
             "| opponent | hands | win rate | 95% CI | mean points/hand | 95% CI |", "|---|---|---|---|---|---|"]
    for b, r in report["results"].items():
        lo, hi = r["win_ci"]
        plo, phi = r["points_ci"]
        lines.append(f"| {b} | {r['games']} | {r['win_rate']:.3f} | [{lo:.3f}, {hi:.3f}] | "
                     f"{r['mean_points']:+.2f} | [{plo:+.2f}, {phi:+.2f}] |")
    text = "\n".join(lines) + "\n"
    (run_dir / "report.md").write_text(text)
    if verbose:
        print(text, end="", flush=True)
    return text
