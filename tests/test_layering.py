"""The layering docs/architecture.md states, checked statically over the source (``ast``, no imports).

Core modules, in order: brief, cards, melds, meld_analysis, rules, actions, table, engine, state_json,
observation, env, single_agent; each imports only earlier ones. Then the packages: ``agents``
imports only the core; ``eval`` the core and ``agents``; ``train`` the core,
``agents`` and ``eval``; ``benchmark`` every package before it; ``frontends`` (the terminal play, the
policy server, the web table: applications like the cli) every layer. Every ``import`` statement counts, also the ones inside
functions (a lazy import is still a dependency), and ``importlib.import_module`` of
a literal name; ``rummy_env.cli`` names its sub-command modules in a table of strings
and imports one only when its command runs. And no module imports itself in a circle.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ("brief", "cards", "melds", "meld_analysis", "rules", "actions", "table", "engine", "state_json", "observation", "env", "single_agent")
# core modules outside the chain: what each may import
CORE_EXTRA = {
    "rummy_v0": set(CORE[: CORE.index("env") + 1]),
    "docs": set(CORE[: CORE.index("observation") + 1]),
    "cli": set(),
    "loopback": set(),  # the one loopback check of every server and client (imports nothing)
}
PACKAGES = ("agents", "eval", "train", "benchmark", "frontends")  # in layer order; each may import the ones before it
# applications on top of every layer beyond the packages' order (none since the frontends
# have their own package, the last layer: the web table exports the shipped policy to ONNX
# on first use, rummy_env.train.export)
APPS: set[str] = set()


def _modules() -> dict[str, Path]:
    """Module name (``rummy_env.x``, ``rummy_env.agents.y``) -> source file."""
    mods = {}
    for f in sorted((ROOT / "rummy_env").glob("*.py")):
        mods["rummy_env" if f.stem == "__init__" else f"rummy_env.{f.stem}"] = f
    for pkg in PACKAGES:  # the top-level folders install as rummy_env.<pkg>
        for f in sorted((ROOT / pkg).glob("*.py")):
            mods[f"rummy_env.{pkg}" if f.stem == "__init__" else f"rummy_env.{pkg}.{f.stem}"] = f
    return mods


MODULES = _modules()


def _init_exports() -> dict[str, str]:
    """Names ``rummy_env/__init__.py`` re-exports -> the core module defining them."""
    out = {}
    for node in ast.walk(ast.parse((ROOT / "rummy_env" / "__init__.py").read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            for a in node.names:
                out[a.asname or a.name] = f"rummy_env.{node.module}"
    return out


EXPORTS = _init_exports()


def _target(name: str) -> str | None:
    """The project module an import of ``name`` loads (its longest known prefix)."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        cand = ".".join(parts[:k])
        if cand in MODULES:
            return cand
    return None


def imports_of(module: str) -> set[str]:
    """The project modules ``module`` imports anywhere in its source (package inits
    resolved to the module behind the imported name)."""
    path = MODULES[module]
    package = module if path.stem == "__init__" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                t = _target(a.name)
                if t:
                    found.add(t)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            t = _target(node.args[0].value)  # importlib.import_module("rummy_env.x.y")
            if t:
                found.add(t)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                src = ".".join(base + ([node.module] if node.module else []))
            else:
                src = node.module or ""
            for a in node.names:
                full = f"{src}.{a.name}"
                if full in MODULES:  # from pkg import submodule
                    found.add(full)
                elif src == "rummy_env" and a.name in EXPORTS:  # from rummy_env import Rules
                    found.add(EXPORTS[a.name])
                else:
                    t = _target(src)
                    if t:
                        found.add(t)
    found.discard(module)
    return found


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in PACKAGES else "core"


def allowed(module: str) -> set[str]:
    """The project modules ``module`` may import."""
    core = {f"rummy_env.{m}" for m in CORE} | {"rummy_env"}
    if module in APPS:
        return set(MODULES) - {module}
    layer = _layer(module)
    if layer == "core":
        if module == "rummy_env":  # the package facade (lazy re-exports of the public names)
            return core | {"rummy_env.rummy_v0"}
        short = module.split(".", 1)[1]
        if short in CORE_EXTRA:
            return {f"rummy_env.{m}" for m in CORE_EXTRA[short]} | {"rummy_env"}
        return {f"rummy_env.{m}" for m in CORE[: CORE.index(short)]} | {"rummy_env"}
    ok = core | {"rummy_env.rummy_v0", "rummy_env.loopback"}  # the helpers outside the chain every package may use
    for pkg in PACKAGES[: PACKAGES.index(layer) + 1]:
        ok |= {m for m in MODULES if _layer(m) == pkg}
    return ok


def test_every_module_is_placed():
    core = {m.split(".", 1)[1] for m in MODULES if _layer(m) == "core" and m != "rummy_env"}
    assert core == set(CORE) | set(CORE_EXTRA), "a new core module needs its place in the layering"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_module_imports_only_the_layers_above_it(module):
    bad = sorted(imports_of(module) - allowed(module))
    assert not bad, f"{module} imports {bad}, below its layer"


def test_the_resolver_sees_lazy_relative_and_package_imports():
    # hand-checked facts about the current source: a lazy import inside a function,
    # a relative one, one through rummy_env's re-exports, and the string-only cli
    assert "rummy_env.eval.tournament" in imports_of("rummy_env.train.rllib")  # inside a method
    assert "rummy_env.agents.scripted" in imports_of("rummy_env.agents")  # from .scripted import ...
    assert "rummy_env.rules" in imports_of("rummy_env.train.export")  # from rummy_env import Rules
    assert imports_of("rummy_env.cli") == set()
    assert imports_of("rummy_env.cards") == {"rummy_env.brief"}
    assert imports_of("rummy_env.brief") == set()


def test_no_import_cycles():
    graph = {m: imports_of(m) - {"rummy_env"} for m in MODULES}
    done: set[str] = set()

    def visit(m: str, path: list[str]) -> None:
        if m in path:
            cycle = path[path.index(m):] + [m]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if m in done:
            return
        for n in sorted(graph[m]):
            if n in graph:
                visit(n, path + [m])
        done.add(m)

    for m in sorted(graph):
        visit(m, [])
