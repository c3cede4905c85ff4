"""The import graph: no loops among the project's modules, and the layers import only downward.

Every import counts, also those inside functions (a lazy import hides a loop, it does not remove it).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("elmo_core", "app")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, name: str) -> set[str]:
    is_package = path.name == "__init__.py"
    found = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # `if __name__ == "__main__":` runs only when the file is the program, never on import: not an edge
    tree.body = [n for n in tree.body if not (isinstance(n, ast.If) and "__main__" in ast.unparse(n.test))]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            found.add(target)
            found |= {f"{target}.{alias.name}" for alias in node.names}  # `from . import x` imports a module
    return found


def import_graph() -> dict[str, set[str]]:
    """{module: the project modules it imports}, for every .py file under PACKAGES."""
    files = {_module_name(p): p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")}
    graph = {}
    for name, path in files.items():
        targets = set()
        for imported in _imports(path, name):
            # `import a.b.c` runs a, a.b and a.b.c; an `__init__` re-export is an edge to the package
            while imported and imported not in files:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import loop as [a, b, ..., a], or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_loops():
    graph = import_graph()
    # a package's __init__ that re-exports its modules is not a loop with them: they import their siblings,
    # never the package
    for name in graph:
        graph[name] = {t for t in graph[name] if not name.startswith(t + ".")}
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


# The parts of docs/ARCHITECTURE.md, lowest first: a module imports its own part and those below only. Each
# subpackage is one part; the base modules and the top (the package's re-exports and the command line) are named.
BASE = {"elmo_core.paths", "elmo_core.metrics"}
PARTS = [
    "base",
    "elmo_core.model",
    "elmo_core.data",
    "elmo_core.training",
    "elmo_core.probes",
    "elmo_core.atlas",
    "top",
]
TOP = {"elmo_core", "elmo_core.__main__"}
CLI = "elmo_core.cli"  # a package: one module per command, all of it in the top


def is_cli(module: str) -> bool:
    return module == CLI or module.startswith(CLI + ".")


def part_of(module: str) -> str:
    """The part a module belongs to; AssertionError for a module that no part holds (place it)."""
    if module in BASE:
        return "base"
    if module in TOP or is_cli(module):
        return "top"
    for part in PARTS[1:-1]:
        if module == part or module.startswith(part + "."):
            return part
    raise AssertionError(f"{module}: in no part (a subpackage of elmo_core, BASE or TOP)")


def test_parts_import_only_downward():
    graph = import_graph()
    rank = {part: k for k, part in enumerate(PARTS)}
    for name in (m for m in graph if m.startswith("elmo_core")):
        for target in graph[name]:
            if target.startswith("elmo_core"):
                assert rank[part_of(target)] <= rank[part_of(name)], (
                    f"{name} ({part_of(name)}) imports {target} ({part_of(target)})"
                )


def test_every_subpackage_says_what_it_is_and_what_it_may_import():
    import importlib

    for part in PARTS[1:-1]:
        doc = importlib.import_module(part).__doc__ or ""
        assert doc.strip().split("\n")[0], part
        assert "Imports from outside this package:" in doc, part
        for lower in PARTS[1 : PARTS.index(part)]:  # each part below is named where it is allowed
            assert lower in doc, (part, lower)


def test_the_top_level_holds_only_the_base_and_the_top():
    files = {p.stem for p in (ROOT / "elmo_core").glob("*.py")}
    assert files == {"__init__", "__main__", "paths", "metrics"}, sorted(files)
    assert {p.name for p in (ROOT / "elmo_core").iterdir() if p.is_dir() and (p / "__init__.py").exists()} == {
        "model",
        "data",
        "training",
        "probes",
        "atlas",
        "cli",
    }


def test_the_part_rules_catch_an_upward_import():
    assert part_of("elmo_core.model.bilm") == "elmo_core.model"
    assert part_of("elmo_core.data.corpus.build") == "elmo_core.data"
    assert PARTS.index(part_of("elmo_core.training.train")) > PARTS.index(part_of("elmo_core.data.text"))
    assert part_of("elmo_core.cli") == part_of("elmo_core.cli.embed") == "top"
    assert not is_cli("elmo_core.client") and is_cli("elmo_core.cli.train")
    try:
        part_of("elmo_core.unplaced")
    except AssertionError:
        pass
    else:
        raise AssertionError("an unplaced module must fail")


def test_the_library_never_imports_the_app_or_the_command_line():
    graph = import_graph()
    for name, targets in graph.items():
        if name.startswith("elmo_core"):
            assert not any(t.startswith("app") for t in targets), (name, targets)
            if not is_cli(name) and name != "elmo_core.__main__":
                assert not any(is_cli(t) for t in targets), (name, targets)


def test_only_the_command_line_parses_arguments():
    for path in (ROOT / "elmo_core").rglob("*.py"):
        if not is_cli(_module_name(path)):
            assert "argparse" not in _imports(path, _module_name(path)), path


def test_the_finder_sees_a_loop():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


# app's parts, lowest first (docs/ARCHITECTURE.md): the computation, what is shown, the server's shared resources,
# one visitor's session, the pages, and the top (the entry script that wires them, the console script).
APP_PARTS = ["app.explore", "app.render", "app.serving", "app.session", "app.views", "top"]
APP_TOP = {"app", "app.streamlit_app", "app.launch"}
STREAMLIT_PARTS = {"app.serving", "app.session", "app.views", "top"}  # the parts that draw or keep session state
MAX_LINES = 400
ENTRY_MAX_LINES = 150


def app_part_of(module: str) -> str:
    """The app part a module belongs to; AssertionError for a module that no part holds (place it)."""
    if module in APP_TOP:
        return "top"
    for part in APP_PARTS[:-1]:
        if module == part or module.startswith(part + "."):
            return part
    raise AssertionError(f"{module}: in no part of app (a subpackage of app, or the entry script)")


def _app_modules() -> dict[str, Path]:
    return {_module_name(p): p for p in (ROOT / "app").rglob("*.py")}


def test_app_parts_import_only_downward():
    graph = import_graph()
    rank = {part: k for k, part in enumerate(APP_PARTS)}
    for name in (m for m in graph if m == "app" or m.startswith("app.")):
        for target in graph[name]:
            if target.startswith("app.") and name != "app":
                assert rank[app_part_of(target)] <= rank[app_part_of(name)], (
                    f"{name} ({app_part_of(name)}) imports {target} ({app_part_of(target)})"
                )


def test_the_app_top_level_holds_only_the_entry_and_the_parts():
    files = {p.stem for p in (ROOT / "app").glob("*.py")}
    assert files == {"__init__", "streamlit_app", "launch"}, sorted(files)
    folders = {p.name for p in (ROOT / "app").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == {part.rpartition(".")[2] for part in APP_PARTS[:-1]}, sorted(folders)


def test_only_the_parts_that_need_streamlit_import_it():
    for name, path in _app_modules().items():
        uses = any(t == "streamlit" or t.startswith("streamlit.") for t in _imports(path, name))
        if uses:
            assert app_part_of(name) in STREAMLIT_PARTS, f"{name} imports streamlit"


def test_only_serving_holds_streamlit_caches():
    for name, path in _app_modules().items():
        if "cache_resource" in path.read_text(encoding="utf-8") or "cache_data" in path.read_text(encoding="utf-8"):
            assert app_part_of(name) == "app.serving", f"{name} uses st.cache_*"


def test_every_app_part_says_what_it_is_and_what_it_may_import():
    import importlib

    for part in APP_PARTS[:-1]:
        doc = importlib.import_module(part).__doc__ or ""
        assert doc.strip().split("\n")[0], part
        assert "Imports from outside this package:" in doc, part
        for lower in APP_PARTS[: APP_PARTS.index(part)]:
            assert lower in doc, (part, lower)
        if part not in STREAMLIT_PARTS:
            assert "never Streamlit" in doc or "no Streamlit" in doc, part


def test_the_app_uses_only_elmo_cores_public_names():
    import elmo_core

    public = set(elmo_core.__all__)
    for name, path in _app_modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("elmo_core") for a in node.names), f"{name}: import elmo_core..."
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("elmo_core"):
                assert node.module == "elmo_core", f"{name} imports the internal module {node.module}"
                unknown = {a.name for a in node.names} - public
                assert not unknown, f"{name} imports {sorted(unknown)}, not in elmo_core.__all__"


def test_the_entry_script_only_wires():
    path = ROOT / "app" / "streamlit_app.py"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= ENTRY_MAX_LINES, f"streamlit_app.py has {len(lines)} lines"
    tree = ast.parse("\n".join(lines))
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            assert node.end_lineno - node.lineno < 30, f"streamlit_app.{node.name} is a page's work, not wiring"


def test_no_module_is_over_400_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for pkg in PACKAGES
        for p in (ROOT / pkg).rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, long


def test_the_app_part_rules_catch_an_upward_import():
    assert app_part_of("app.explore.frame") == "app.explore"
    assert app_part_of("app.views.explorer_parts.rail") == "app.views"
    assert APP_PARTS.index(app_part_of("app.session.link")) > APP_PARTS.index(app_part_of("app.serving.models"))
    try:
        app_part_of("app.unplaced")
    except AssertionError:
        pass
    else:
        raise AssertionError("an unplaced module must fail")
