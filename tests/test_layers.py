"""The import contract of `rose_core`: one folder per layer, each importing only its own layer or those below it.

Read from the source with `ast` (nothing is imported), lazy imports inside functions included. The layers, top
to bottom, are `LAYERS` read backwards; the app (app.py, app_pages/, ui/, tools/, bench/) sits above them all and
may import anything of `rose_core`, which imports nothing of the app. It fails, naming file:line and the import, on
(a) an import from a lower layer to a higher one, (b) a circle between modules, (c) a module loose at
`rose_core`'s top, (d) `rose_core` importing the app.
"""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "rose_core"

# Bottom to top: a module may import its own layer or any layer earlier in this tuple.
LAYERS = ("common", "storage", "benchmarks", "instrument", "runs", "analysis", "cli")

# The package's faces, above every layer: the public re-exports and `python -m rose_core`.
TOP = {f"{PACKAGE}", f"{PACKAGE}.__main__"}

APP = ("app", "app_pages", "ui", "tools", "bench")


def _modules() -> dict[str, Path]:
    mods = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        if name.endswith(".__init__"):
            name = name[: -len(".__init__")]
        mods[name] = path
    return mods


MODULES = _modules()


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A file's syntax tree, parsed once per process: four checks here read every module (read only), and parsing
    is most of their time."""
    return ast.parse(path.read_text(), str(path))


def _imports(name: str, path: Path) -> list[tuple[int, str, str]]:
    """(line, the import as written, the rose_core module it reaches, or the app package) for every import."""
    out = []
    is_package = path.name == "__init__.py"
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out.append((node.lineno, f"import {alias.name}", alias.name))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = name.split(".") if is_package else name.split(".")[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            written = f"from {'.' * node.level}{node.module or ''} import {', '.join(a.name for a in node.names)}"
            submodules = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
            if len(submodules) < len(node.names):  # a name taken from the module itself
                out.append((node.lineno, written, base))
            out += [(node.lineno, written, sub) for sub in submodules]
    return out


def _target(imported: str) -> str | None:
    """The rose_core module an import reaches (its longest known prefix), or None outside the package."""
    while imported and imported not in MODULES:
        imported = imported.rsplit(".", 1)[0] if "." in imported else ""
    return imported or None


def _rank(module: str) -> int:
    if module in TOP:
        return len(LAYERS)
    return LAYERS.index(module.split(".")[1])


def _edges() -> dict[str, list[tuple[int, str, str]]]:
    edges: dict[str, list[tuple[int, str, str]]] = {}
    for name, path in MODULES.items():
        for line, written, imported in _imports(name, path):
            target = _target(imported)
            if target and target != name:
                edges.setdefault(name, []).append((line, written, target))
    return edges


def _where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(ROOT)}:{line}"


def test_nothing_loose_at_the_top():
    loose = [f"{path.relative_to(ROOT)}" for name, path in MODULES.items()
             if name.count(".") == 1 and name not in TOP
             and name.split(".")[1] not in LAYERS]
    assert not loose, "modules loose at rose_core's top (move each into its layer's folder): " + ", ".join(loose)


def test_no_import_upward():
    bad = []
    for module, imports in _edges().items():
        if module.count(".") == 1 and module not in TOP \
                and module.split(".")[1] not in LAYERS:
            continue  # loose: reported by test_nothing_loose_at_the_top
        for line, written, target in imports:
            if target.count(".") == 1 and target not in TOP \
                    and target.split(".")[1] not in LAYERS:
                bad.append(f"{_where(module, line)}: `{written}` reaches {target}, which is in no layer")
            elif _rank(target) > _rank(module):
                bad.append(f"{_where(module, line)}: `{written}` imports {target} "
                           f"(a layer above {module}'s)")
    assert not bad, f"upward imports (layers bottom to top: {' < '.join(LAYERS)}):\n" + "\n".join(bad)


def test_no_circles():
    edges = {m: sorted({t for _, _, t in imports}) for m, imports in _edges().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in MODULES:
        if module not in index:
            visit(module)
    lines = []
    for component in circles:
        members = set(component)
        lines.append("circle: " + " <-> ".join(component))
        for module in component:
            for line, written, target in _edges().get(module, ()):
                if target in members:
                    lines.append(f"  {_where(module, line)}: `{written}` ({module} -> {target})")
    assert not circles, "import circles between modules:\n" + "\n".join(lines)


def test_core_imports_nothing_of_the_app():
    bad = []
    for name, path in MODULES.items():
        for line, written, imported in _imports(name, path):
            if imported.split(".")[0] in APP:
                bad.append(f"{_where(name, line)}: `{written}`")
    assert not bad, "rose_core imports the app (app.py, app_pages/, ui/, tools/, bench/):\n" + "\n".join(bad)


def test_every_layer_is_a_folder():
    missing = [layer for layer in LAYERS if not (ROOT / PACKAGE / layer / "__init__.py").is_file()]
    assert not missing, f"layers without a package folder under {PACKAGE}/: {missing}"


@pytest.mark.parametrize("source", [
    "from ..storage import participants\n",
    "import rose_core.cli\n",
])
def test_the_contract_sees_an_upward_import(source, tmp_path, monkeypatch):
    """The checker itself: a module of the lowest layer (common) importing a higher one, relative and absolute, is
    found."""
    fake = tmp_path / "rose_core" / "common" / "fake.py"
    fake.parent.mkdir(parents=True)
    fake.write_text(source)
    monkeypatch.setitem(MODULES, "rose_core.common.fake", fake)
    found = [t for _, _, i in _imports("rose_core.common.fake", fake) if (t := _target(i))]
    assert found and all(_rank(t) > _rank("rose_core.common.fake") for t in found)


# --------------------------------------------------------------------------- every SQL statement in storage/

# SQL verbs followed by what makes them a statement (upper case, as the project writes SQL: prose and LaTeX's
# \begin are not matched), or a whole string that is a transaction statement.
_SQL = re.compile(r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+(?:OR\s+\w+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b"
                  r"|\bDELETE\s+FROM\b|\b(?:CREATE|DROP|ALTER)\s+(?:UNIQUE\s+)?(?:TABLE|INDEX|VIEW)\b|\bPRAGMA\s+\w+")
_TRANSACTION = re.compile(r"\s*(?:BEGIN(?:\s+\w+)*|COMMIT|ROLLBACK|SAVEPOINT\s+\w+|RELEASE\s+\w+)\s*;?\s*")
# A clause handed to a helper that completes the statement (`fetch_columns(conn, "responses WHERE kind = 'main'")`,
# `sql + " ORDER BY x"`): a WHERE with its condition, an ORDER or GROUP BY, a JOIN with its USING or ON.
_CLAUSE = re.compile(r"\bWHERE\s+[\w.()]+\s*(?:[=<>!]|\bIS\b|\bNOT\b|\bIN\b|\bLIKE\b|\bBETWEEN\b)"
                     r"|\b(?:ORDER|GROUP)\s+BY\b|\bJOIN\s+\w+(?:\s+\w+)?\s+(?:USING|ON)\b")

def _app_files() -> list[Path]:
    files = [ROOT / "app.py"] if (ROOT / "app.py").is_file() else []
    for folder in ("app_pages", "ui", "tools"):
        files += sorted((ROOT / folder).rglob("*.py")) if (ROOT / folder).is_dir() else []
    return files


def _folded(node: ast.AST) -> str | None:
    """The text of a string expression: a constant, an f-string (its replacement fields as `{}`), or pieces joined
    by `+` (a piece that is not a string literal as `{}`); None when no string literal is in it."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _folded(node.left), _folded(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "{}") + (right if right is not None else "{}")
    return None


def _sql_strings(source: str, filename: str) -> list[tuple[int, str]]:
    """(line, text) of every string expression holding an SQL statement or clause, docstrings left out; an f-string
    is read whole, its replacement fields as `{}`; pieces joined by `+` are read as one (`_folded`); implicitly
    concatenated pieces are one constant already."""
    return _sql_in(ast.parse(source, filename))


def _sql_in(tree: ast.Module) -> list[tuple[int, str]]:
    """`_sql_strings` of a parsed file."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            skip.add(id(node.body[0].value))
    found = []
    for node in ast.walk(tree):   # outermost first: a joined expression is read whole, its pieces not again
        if id(node) in skip or not isinstance(node, (ast.Constant, ast.JoinedStr, ast.BinOp)):
            continue
        text = _folded(node)
        if text is None:
            continue
        skip.update(id(n) for n in ast.walk(node))
        if _SQL.search(text) or _CLAUSE.search(text) or _TRANSACTION.fullmatch(text):
            found.append((node.lineno, text))
    return found


def _sql_outside_storage() -> dict[str, list[str]]:
    """file → the `file:line: statement` of each SQL string outside rose_core/storage/."""
    out: dict[str, list[str]] = {}
    files = [p for p in MODULES.values() if p.relative_to(ROOT).parts[:2] != (PACKAGE, "storage")] + _app_files()
    for path in files:
        where = str(path.relative_to(ROOT))
        for line, text in _sql_in(_tree(path)):
            out.setdefault(where, []).append(f"{where}:{line}: {' '.join(text.split())[:100]}")
    return out


def test_every_sql_statement_is_in_storage():
    found = _sql_outside_storage()
    bad = [msg for _, msgs in sorted(found.items()) for msg in msgs]
    assert not bad, ("SQL outside rose_core/storage/ (move each statement into the storage module named after its "
                     "table, as a function the caller calls):\n" + "\n".join(bad))


@pytest.mark.parametrize("source, statements", [
    ('x = "SELECT a FROM t WHERE b = ?"\n', 1),
    ('x = ("SELECT a, b "\n     "FROM t")\n', 1),                        # implicit concatenation
    ('x = f"SELECT {cols} FROM {table}"\n', 1),                         # an f-string, read whole
    ('c.execute("INSERT OR IGNORE INTO t(a) VALUES (?)")\n', 1),
    ('c.execute("UPDATE t SET a = 1")\nc.execute("DELETE FROM t")\n', 2),
    ('c.execute("ROLLBACK")\nc.execute("CREATE INDEX i ON t(a)")\n', 2),
    ('def f():\n    """SELECT rows FROM the table, documented."""\n', 0),  # a docstring
    ('x = "select a row from the list"\ny = r"\\begin{table}"\n', 0),     # prose, LaTeX
    ('x = "SELECT count(*) " + "FROM responses"\n', 1),                 # joined by +
    ('x = "SELECT " + cols + " FROM t WHERE a = ?"\n', 1),               # joined by +, a name between
    ('x = "SELECT a " + f"FROM {t}" + " ORDER BY a"\n', 1),              # constant and f-string joined
    ('fetch_columns(conn, "responses WHERE kind = \'main\'", "id")\n', 1),  # a clause for a helper
    ('x = sql + " ORDER BY x"\ny = "JOIN runs USING (run_id)"\n', 2),
    ('x = "GROUP BY a"\ny = "t LEFT JOIN p ON p.a = t.a"\n', 2),
    ('x = "where a = b"\ny = "the order by which they came"\nz = 1 + 2\n', 0),  # prose, numbers
])
def test_the_sql_check_sees_a_statement(source, statements):
    assert len(_sql_strings(source, "fake.py")) == statements
