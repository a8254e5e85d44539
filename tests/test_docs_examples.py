"""Every example in README.md and the docs works (issue 17 "What must show").

- Each ```` ```python ```` block of README.md, docs/*.md and the model card
  (agents/pretrained/README.md) runs in a fresh interpreter, in an empty folder; a block
  preceded by the line ``<!-- skip-test -->`` is not run (for the rare block that
  cannot run in a test, e.g. a long training).
- Each ``rummy ...`` command shown, in a shell block or as inline code, is parsed by
  the real argument parser (``rummy_env.cli.build_parser``) without running it. A
  usage line with metasyntax (``[--out DIR]``, ``env|train``) or a bare sub-command
  name (`` `rummy export` ``) only has to name a sub-command that exists.
- README's two commands (the main job and the tests) use separate venvs, and
  ``.ci/run`` runs exactly README's test command (issue 18 item 7).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from extras import skip_for_missing

from rummy_env.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "agents" / "pretrained" / "README.md"]
SKIP_MARK = "<!-- skip-test -->"
SHELL_LANGS = {"", "bash", "sh", "shell", "console"}
RUN_TIMEOUT_S = 600  # one block; the slowest (a 10k-step MaskablePPO fit) takes well under a minute


@dataclass(frozen=True)
class Block:
    """A fenced code block: where it starts (1-based line of the fence), its language and text."""

    path: Path
    line: int
    lang: str
    code: str
    skip: bool

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def fenced_blocks(path: Path, text: str | None = None) -> list[Block]:
    """The fenced code blocks of a Markdown file, in order.

    A fence is a line whose stripped text starts with three backticks; the info string's
    first word is the language. ``skip`` is true when the last non-blank line before
    the fence is ``<!-- skip-test -->``.

    Raises:
        ValueError: a fence is opened and never closed (names the file and line).
    """
    lines = (path.read_text(encoding="utf-8") if text is None else text).splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped.startswith("```"):
            info = stripped[3:].strip()
            lang = info.split()[0] if info else ""
            prev = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            if j == len(lines):
                raise ValueError(f"{path}:{i + 1}: code fence is never closed")
            blocks.append(Block(path, i + 1, lang, "\n".join(lines[i + 1:j]) + "\n", prev == SKIP_MARK))
            i = j + 1
        else:
            i += 1
    return blocks


def _outside_fences(text: str) -> str:
    out, inside = [], False
    for line in text.splitlines():
        if line.strip().startswith("```"):
            inside = not inside
            continue
        if not inside:
            out.append(line)
    return "\n".join(out)


def shell_commands(code: str) -> list[list[str]]:
    """The simple commands of a shell block, as argv lists.

    Continuation lines (a trailing backslash) are joined, ``host$`` prompts are dropped,
    comments removed, and a line is split on ``&&``, ``||``, ``;`` and ``|``.
    """
    joined = re.sub(r"\\\n", " ", code)
    commands: list[list[str]] = []
    for line in joined.splitlines():
        line = re.sub(r"^\s*[\w-]+\$\s+", "", line)
        if not line.strip():
            continue
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        current: list[str] = []
        for token in lexer:
            if token in ("&&", "||", ";", "|", "&"):
                if current:
                    commands.append(current)
                current = []
            else:
                current.append(token)
        if current:
            commands.append(current)
    return commands


def rummy_argv(command: list[str]) -> list[str] | None:
    """``command``'s arguments when it runs the ``rummy`` script (``rummy``, ``venv/bin/rummy``), else None."""
    if command and (command[0] == "rummy" or command[0].endswith("/rummy")):
        return command[1:]
    return None


def parse_rummy(argv: list[str]) -> tuple[int, str]:
    """Parse ``rummy ARGV`` with the real parser, running nothing: (exit code, argparse's output).

    0 when the arguments parse (``--help`` exits 0 too), argparse's exit code (2) otherwise.
    """
    out = io.StringIO()
    with contextlib.redirect_stderr(out), contextlib.redirect_stdout(out):
        try:
            args = build_parser(argv).parse_args(argv)
        except SystemExit as e:
            return int(e.code or 0), out.getvalue()
        except ModuleNotFoundError as e:  # the sub-command's module needs an extra not installed here
            skip_for_missing(e.name)
            raise
    if not args.command:
        return 2, "no sub-command"
    return 0, out.getvalue()


def _is_usage_line(text: str) -> bool:
    """A usage line: metasyntax (``[--out DIR]``, ``env|train``, ``…``) or an upper-case placeholder (``DIR``)."""
    words = [w for w in text.split()[1:] if not w.startswith("-")]
    return any(c in text for c in "[|…") or "..." in text or any(re.fullmatch(r"[A-Z][A-Z_]*", w) for w in words)


def sub_parser(words: list[str]) -> argparse.ArgumentParser:
    """The parser of ``rummy WORDS`` (``["train"]``, ``["bench", "env"]``); KeyError for an unknown name."""
    try:
        parser = build_parser(words[:1])
    except ModuleNotFoundError as e:  # the sub-command's module needs an extra not installed here
        skip_for_missing(e.name)
        raise
    for word in words:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    return parser


def inline_rummy_spans(text: str) -> list[str]:
    """Inline code spans (outside code fences) that start with ``rummy ``."""
    return re.findall(r"`(rummy [^`]+)`", _outside_fences(text))


# ---------------------------------------------------------------- collection

ALL_BLOCKS = [b for p in DOC_FILES for b in fenced_blocks(p)]
PYTHON_BLOCKS = [b for b in ALL_BLOCKS if b.lang in ("python", "py")]
SHELL_BLOCKS = [b for b in ALL_BLOCKS if b.lang in SHELL_LANGS]
COMMANDS = [(f"{b.id}:{' '.join(argv)[:60]}", argv) for b in SHELL_BLOCKS
            for cmd in shell_commands(b.code) if (argv := rummy_argv(cmd)) is not None]
INLINE = [(f"{p.relative_to(ROOT)}:{span}", span) for p in DOC_FILES
          for span in dict.fromkeys(inline_rummy_spans(p.read_text(encoding="utf-8")))]


def test_the_docs_have_examples_to_test():
    # the collection itself must find the examples (a broken extractor would pass everything)
    files_with_python = {b.path.name for b in PYTHON_BLOCKS}
    assert {"README.md", "env.md", "agents.md", "export.md", "architecture.md"} <= files_with_python
    assert len(PYTHON_BLOCKS) >= 9
    assert len(COMMANDS) >= 25
    assert sum(b.skip for b in PYTHON_BLOCKS) <= 2, "skip-test is for the rare block that cannot run"


@pytest.mark.parametrize("block", [b for b in PYTHON_BLOCKS if not b.skip], ids=lambda b: b.id)
def test_python_block_runs(block, tmp_path):
    # the interpreter and import path of this test run (an installed checkout, or PYTHONPATH)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-c", block.code], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=RUN_TIMEOUT_S)
    if proc.returncode != 0:
        missing = re.findall(r"ModuleNotFoundError: (?:No module named '([\w.]+)'|import of ([\w.]+) halted)",
                             proc.stderr)
        if missing:
            skip_for_missing("".join(missing[-1]))  # the block needs an extra not installed here
    assert proc.returncode == 0, f"{block.id} failed:\n{block.code}\n--- stderr ---\n{proc.stderr[-4000:]}"


@pytest.mark.parametrize("argv", [a for _, a in COMMANDS], ids=[i for i, _ in COMMANDS])
def test_rummy_command_in_a_shell_block_parses(argv):
    code, out = parse_rummy(argv)
    assert code == 0, f"rummy {shlex.join(argv)} does not parse:\n{out}"


@pytest.mark.parametrize("span", [s for _, s in INLINE], ids=[i for i, _ in INLINE])
def test_inline_rummy_command_parses(span):
    tokens = shlex.split(span.replace("…", " "))[1:]
    if not _is_usage_line(span) and any(t.startswith("-") for t in tokens):
        code, out = parse_rummy(tokens)
        assert code == 0, f"`{span}` does not parse:\n{out}"
        return
    # a usage line or a sub-command's name: the sub-command (bench: and its mode) exists,
    # and so does every flag the line names
    words = [re.split(r"[|\[]", t)[0] for t in tokens[:2] if not t.startswith(("-", "["))][:2]
    words = words[:2] if words[:1] in (["bench"], ["benchmark"]) else words[:1]  # their sub-commands have the flags
    assert words, f"`{span}` names no sub-command"
    try:
        parser = sub_parser(words)
    except KeyError as e:
        pytest.fail(f"`{span}`: rummy has no sub-command {e}")
    flags = {t.strip("[]").split("=")[0] for t in tokens if t.strip("[").startswith("--")}
    assert flags <= set(parser._option_string_actions), f"`{span}`: unknown flags {flags - set(parser._option_string_actions)}"


# ---------------------------------------------------------------- the checker can fail

def test_parse_rummy_refuses_what_the_cli_refuses():
    assert parse_rummy(["train", "--rules", "classic", "--out", "runs/x"])[0] == 0
    assert parse_rummy(["train", "--no-such-flag"])[0] == 2
    assert parse_rummy(["no-such-command"])[0] == 2
    assert parse_rummy(["export"])[0] == 2                       # SOURCE is required
    assert parse_rummy([])[0] == 2
    assert "--backend" in sub_parser(["train"])._option_string_actions
    assert "--cpu" in sub_parser(["bench", "env"])._option_string_actions
    with pytest.raises(KeyError):
        sub_parser(["no-such-command"])
    assert _is_usage_line("rummy serve --policy DIR --port P")
    assert not _is_usage_line("rummy serve --policy exported/ --port 8000")


def test_extractors_on_a_small_document(tmp_path):
    doc = tmp_path / "x.md"
    text = ("intro `rummy eval --agents random greedy` and `rummy serve`\n\n"
            "<!-- skip-test -->\n```python\nraise SystemExit(1)\n```\n\n"
            "```python\nprint(1)\n```\n\n"
            "```bash\n# a comment\nhead$    rummy train --rules classic \\\n    --out runs/a  # trailing\n"
            "pip install x && rummy eval --agents random greedy; venv/bin/rummy bench env --cpu 1\n```\n")
    blocks = fenced_blocks(doc, text)
    assert [(b.lang, b.skip, b.line) for b in blocks] == [("python", True, 4), ("python", False, 8), ("bash", False, 12)]
    cmds = shell_commands(blocks[2].code)
    assert [rummy_argv(c) for c in cmds] == [["train", "--rules", "classic", "--out", "runs/a"], None,
                                            ["eval", "--agents", "random", "greedy"], ["bench", "env", "--cpu", "1"]]
    assert inline_rummy_spans(text) == ["rummy eval --agents random greedy", "rummy serve"]
    with pytest.raises(ValueError, match="x.md:2: code fence is never closed"):
        fenced_blocks(doc, "a\n```python\nprint(1)\n")


# ---------------------------------------------------------------- README's two commands (issue 18 item 7)

def readme_command(name: str) -> str:
    """The one-line shell block that follows ``<!-- command: NAME -->`` in README.md."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    m = re.search(rf"<!-- command: {name} -->\n```bash\n(.+)\n```\n", text)
    assert m, f"README.md has no '<!-- command: {name} -->' block of one line"
    return m.group(1)


def _venvs_of(command: str) -> list[list[list[str]]]:
    """The command's commands, split at each ``python3 -m venv``: one list per venv, each
    starting with its creation."""
    out: list[list[list[str]]] = []
    for c in shell_commands(command):
        if c[:3] == ["python3", "-m", "venv"]:
            out.append([])
        out[-1].append(c)
    return out


def test_readme_commands_use_separate_venvs():
    main, tests = readme_command("main"), readme_command("tests")
    (main_cmds,) = _venvs_of(main)
    test_cmds, rllib_cmds = _venvs_of(tests)
    for cmds, venv in ((main_cmds, ".venv"), (test_cmds, ".venv-test"), (rllib_cmds, ".venv-rllib")):
        assert cmds[0] == ["python3", "-m", "venv", venv] and cmds[1] == [".", f"{venv}/bin/activate"]
        # each installs the CPU torch first, into its own venv
        assert cmds[2] == ["pip", "install", "torch==2.13.0"]
    # the tests' first venv installs exactly what the main job installs (the newest gymnasium)
    # and runs everything but the Ray tests; only the second takes the rllib extra, for them
    main_install = next(c for c in main_cmds if c[:3] == ["pip", "install", "-e"])
    assert next(c for c in test_cmds if c[:3] == ["pip", "install", "-e"]) == main_install == ["pip", "install",
                                                                                              "-e", ".[all]"]
    assert test_cmds[-2:] == [["python", "-m", "pytest", "-q", "-n", "2", "-m", "not slow and not rllib"],
                              ["mkdocs", "build", "--strict"]]
    assert rllib_cmds[3:] == [["pip", "install", "-e", ".[all,rllib]"], ["python", "-m", "pytest", "-q", "-n", "2",
                                                                         "-m", "rllib"]]
    assert "rllib" not in main
    assert main_cmds[-1] == ["rummy", "train", "--rules", "classic", "--out", "runs/quick"]
    # the venvs are git-ignored, and so is the site mkdocs writes
    ignored = (ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert {".venv/", ".venv-test/", ".venv-rllib/", "site/"} <= set(ignored)


def test_the_rllib_marker_selects_every_test_that_needs_ray():
    # a test that imports ray (or the rllib backend) is marked rllib, so the first venv's
    # run (-m "not rllib", no Ray installed) never meets one
    for f in sorted((ROOT / "tests").glob("test_*.py")):
        text = f.read_text(encoding="utf-8")
        if f.name in ("test_rllib.py", "test_rllib_cluster.py"):  # every test of these files is marked
            assert "\npytestmark = pytest.mark.rllib" in text
            continue
        if f.name == Path(__file__).name:  # this test names ray itself
            continue
        for m in re.finditer(r"\ndef (test_\w+)\(.*?(?=\n(?:def |@|class )|\Z)", text, re.S):
            if re.search(r"from rummy_env\.train\.rllib import|from rummy_env\.train import rllib|import ray"
                         r"|needs\(\"ray|importorskip\(\"ray", m.group(0)):
                head = text[:m.start() + 1].rstrip().splitlines()[-3:]
                assert "@pytest.mark.rllib" in head, f"{f.name}::{m.group(1)} needs Ray but is not marked rllib"


def test_ci_runs_exactly_readme_test_command():
    tests = readme_command("tests")
    lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    code = [ln for ln in lines if ln and not ln.startswith("#")]
    assert code.count(tests) == 1
    # nothing else installs the project, runs the tests or builds the docs
    others = [ln for ln in code if ln != tests]
    assert not [ln for ln in others if re.search(r"pip |pytest|mkdocs|venv", ln)], others
