"""The import graph: no loops among the project's modules, and the layers import only downward.

Every import counts, also those inside functions (a lazy import hides a loop, it does not remove it).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
                return stack[stack.index(nxt):] + [nxt]
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


# The layers of docs/ARCHITECTURE.md, lowest first: a module imports its own layer and those below only.
LAYERS = [
    {"elmo_core.paths", "elmo_core.tokenize", "elmo_core.text", "elmo_core.metrics", "elmo_core.fetch",
     "elmo_core.wordforms", "elmo_core.download"},
    {"elmo_core", "elmo_core.config", "elmo_core.chars", "elmo_core.char_cnn", "elmo_core.lstm", "elmo_core.onednn", "elmo_core.derived",
     "elmo_core.bilm",
     "elmo_core.weights", "elmo_core.mix", "elmo_core.embedder", "elmo_core.loading", "elmo_core.published"},
    {"elmo_core.vocab", "elmo_core.wordnet", "elmo_core.brown", "elmo_core.senses", "elmo_core.corpus",
     "elmo_core.corpus.pipeline", "elmo_core.corpus.cleaners", "elmo_core.corpus.sources", "elmo_core.corpus.build",
     "elmo_core.corpus.card", "elmo_core.reference"},
    {"elmo_core.lm", "elmo_core.teacher", "elmo_core.train", "elmo_core.evaluate", "elmo_core.embed_file",
     "elmo_core.probes",
     "elmo_core.probes.task", "elmo_core.probes.results", "elmo_core.probes.mix_classifier",
     "elmo_core.probes.sense_means", "elmo_core.probes.pos", "elmo_core.probes.loo_sense"},
    {"elmo_core.cli", "elmo_core.__main__", "elmo_core.corpus.__main__"},
]


def test_layers_import_only_downward():
    graph = import_graph()
    level = {m: k for k, layer in enumerate(LAYERS) for m in layer}
    core = {m for m in graph if m.startswith("elmo_core")}
    assert core == set(level), f"place these in LAYERS: {sorted(core ^ set(level))}"
    for name in core:
        for target in graph[name]:
            assert level[target] <= level[name], f"{name} (layer {level[name]}) imports {target} (layer {level[target]})"


def test_the_library_never_imports_the_app_or_the_command_line():
    graph = import_graph()
    for name, targets in graph.items():
        if name.startswith("elmo_core"):
            assert not any(t.startswith("app") for t in targets), (name, targets)
            if name not in ("elmo_core.cli", "elmo_core.__main__", "elmo_core.corpus.__main__"):
                assert "elmo_core.cli" not in targets, name


def test_only_the_command_line_parses_arguments():
    for path in (ROOT / "elmo_core").rglob("*.py"):
        if _module_name(path) not in ("elmo_core.cli",):
            assert "argparse" not in _imports(path, _module_name(path)), path


def test_the_finder_sees_a_loop():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
