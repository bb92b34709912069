"""The import contract of `rose_core`: one folder per layer, each importing only its own layer or those below it.

Read from the source with `ast` (nothing is imported), lazy imports inside functions included. The layers, top
to bottom, are `LAYERS` read backwards; the app (app.py, app_pages/, ui/, tools/, bench/) sits above them all and
may import anything of `rose_core`, which imports nothing of the app. It fails, naming file:line and the import, on
(a) an import from a lower layer to a higher one, (b) a circle between modules, (c) a module loose at
`rose_core`'s top or in a folder that is no layer, (d) `rose_core` importing the app, (e) an import the graph cannot
see (`importlib.import_module(…)`, `__import__(…)`).
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


def _layer(module: str) -> str | None:
    """The layer a module belongs to: its folder under rose_core/ (None: a face in TOP, loose at the top, or a folder
    that is no layer)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and module not in TOP and parts[1] in LAYERS else None


def _rank(module: str) -> int:
    if module in TOP:
        return len(LAYERS)
    return LAYERS.index(module.split(".")[1])


def _rel(path: Path) -> Path:
    """A file's path from the repository's root (a checker test's fake package: from its rose_core/)."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else Path(*path.parts[path.parts.index(PACKAGE):])


def _edges() -> dict[str, list[tuple[int, str, str]]]:
    edges: dict[str, list[tuple[int, str, str]]] = {}
    for name, path in MODULES.items():
        for line, written, imported in _imports(name, path):
            target = _target(imported)
            if target and target != name:
                edges.setdefault(name, []).append((line, written, target))
    return edges


def _where(module: str, line: int) -> str:
    return f"{_rel(MODULES[module])}:{line}"


def test_nothing_loose_at_the_top():
    loose = [f"{path.relative_to(ROOT)}" for name, path in MODULES.items()
             if name.count(".") == 1 and name not in TOP
             and name.split(".")[1] not in LAYERS]
    assert not loose, "modules loose at rose_core's top (move each into its layer's folder): " + ", ".join(loose)


def _outside_the_layers() -> list[str]:
    """A message per folder under rose_core/ that is no layer (at any depth below it: the folder's first part
    decides), naming its modules."""
    folders: dict[str, list[str]] = {}
    for name, path in MODULES.items():
        if name.count(".") >= 2 and _layer(name) is None:
            folders.setdefault(name.split(".")[1], []).append(str(_rel(path)))
    return [f"{PACKAGE}/{folder}/ is no layer ({', '.join(sorted(files))}): move its modules into a layer's folder, or make "
            f"it a layer: add {folder!r} to LAYERS in tests/test_layers.py (in its place, bottom to top) and to the "
            "layers' table in docs/architecture.md" for folder, files in sorted(folders.items())]


def test_every_folder_is_a_layer():
    bad = _outside_the_layers()
    assert not bad, f"folders under {PACKAGE}/ that are no layer (layers: {', '.join(LAYERS)}):\n" + "\n".join(bad)


def _upward() -> list[str]:
    """`file:line: import …` of every import of a higher layer or of a module in no layer, from a module in a
    layer or a face (a module in no layer is reported by test_nothing_loose_at_the_top and test_every_folder_is_a_layer)."""
    bad = []
    for module, imports in _edges().items():
        if module not in TOP and _layer(module) is None:
            continue
        for line, written, target in imports:
            if target not in TOP and _layer(target) is None:
                bad.append(f"{_where(module, line)}: `{written}` reaches {target}, which is in no layer")
            elif _rank(target) > _rank(module):
                bad.append(f"{_where(module, line)}: `{written}` imports {target} "
                           f"(a layer above {module}'s)")
    return bad


def test_no_import_upward():
    bad = _upward()
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


def _dynamic_imports(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, the call) of every import the graph cannot see: `importlib.import_module(…)` (or `import_module(…)`
    imported from importlib) and `__import__(…)` (or `importlib.__import__(…)`)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name in ("import_module", "__import__"):
            found.append((node.lineno, ast.unparse(node)))
    return found


def _dynamic_imports_in_core() -> list[str]:
    return [f"{_where(name, line)}: `{call}`" for name, path in MODULES.items()
            for line, call in _dynamic_imports(_tree(path))]


def test_no_dynamic_imports():
    bad = _dynamic_imports_in_core()
    assert not bad, ("imports the layer contract cannot see (write a plain `import` or `from … import …`, so the "
                     "edge is in the graph):\n" + "\n".join(bad))


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


def test_the_contract_sees_a_folder_that_is_no_layer(tmp_path, monkeypatch):
    """The checker itself: a module in a folder that is no layer (at any depth) is named, with what to do, and an
    import of it from a layer is reported, not a crash."""
    fakes = {"rose_core.newlayer.mod": "from ..storage import participants\n",
             "rose_core.newlayer.deep.inner": "x = 1\n",
             "rose_core.common.fake": "from ..newlayer import mod\n"}
    for name, source in fakes.items():
        path = tmp_path.joinpath(*name.split(".")).with_suffix(".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
        monkeypatch.setitem(MODULES, name, path)
    (message,) = _outside_the_layers()
    assert message.startswith("rose_core/newlayer/ is no layer (rose_core/newlayer/deep/inner.py, "
                              "rose_core/newlayer/mod.py): move its modules into a layer's folder, or make it a layer: "
                              "add 'newlayer' to LAYERS")
    assert "docs/architecture.md" in message
    assert _upward() == ["rose_core/common/fake.py:1: `from ..newlayer import mod` reaches rose_core.newlayer.mod, "
                         "which is in no layer"]


@pytest.mark.parametrize("source, calls", [
    ("import importlib\nm = importlib.import_module('.simulate', __package__)\n", [2]),
    ("from importlib import import_module\n\ndef f(n):\n    return import_module(n)\n", [4]),
    ("m = __import__('rose_core.cli.manage')\n", [1]),
    ("import importlib\nm = importlib.__import__('os')\n", [2]),
    ("import importlib\nfrom . import simulate\nimportlib.reload(simulate)\n", []),   # plain imports: seen
])
def test_the_contract_sees_a_dynamic_import(source, calls, tmp_path, monkeypatch):
    fake = tmp_path / "rose_core" / "cli" / "fake.py"
    fake.parent.mkdir(parents=True)
    fake.write_text(source)
    monkeypatch.setitem(MODULES, "rose_core.cli.fake", fake)
    found = [m for m in _dynamic_imports_in_core() if m.startswith("rose_core/cli/fake.py:")]
    assert [int(m.split(":")[1]) for m in found] == calls


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

# A string handed to a database call is SQL in whatever case it is written: there the patterns above match any case.
_DB_CALLS = {"execute", "executemany", "executescript", "query"}
_SQL_ANY_CASE, _TRANSACTION_ANY_CASE, _CLAUSE_ANY_CASE = (re.compile(p.pattern, re.IGNORECASE)
                                                          for p in (_SQL, _TRANSACTION, _CLAUSE))


def _app_files() -> list[Path]:
    files = [ROOT / "app.py"] if (ROOT / "app.py").is_file() else []
    for folder in ("app_pages", "ui", "tools", "bench"):
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
    db_arguments: set[int] = set()   # the arguments of `.execute(…)`, `.executemany(…)`, `.executescript(…)`, `.query(…)`
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
            skip.add(id(node.body[0].value))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _DB_CALLS:
            db_arguments.update(id(a) for a in [*node.args, *(k.value for k in node.keywords)])
    found = []
    for node in ast.walk(tree):   # outermost first: a joined expression is read whole, its pieces not again
        if id(node) in skip or not isinstance(node, (ast.Constant, ast.JoinedStr, ast.BinOp)):
            continue
        text = _folded(node)
        if text is None:
            continue
        skip.update(id(n) for n in ast.walk(node))
        sql, clause, transaction = ((_SQL_ANY_CASE, _CLAUSE_ANY_CASE, _TRANSACTION_ANY_CASE) if id(node) in db_arguments
                                    else (_SQL, _CLAUSE, _TRANSACTION))
        if sql.search(text) or clause.search(text) or transaction.fullmatch(text):
            found.append((node.lineno, text))
    return found


def _sql_outside_storage() -> dict[str, list[str]]:
    """file → the `file:line: statement` of each SQL string outside rose_core/storage/ (the package, the app,
    tools/ and bench/)."""
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
    # a string handed to a database call: SQL in any case
    ('c.execute("select id from responses where run_id = ?")\n', 1),
    ('c.executemany("insert into t(a) values (?)", rows)\nc.executescript("drop table t")\n', 2),
    ('store.query(sql="select count(*) " + "from runs")\nc.execute("begin immediate")\n', 2),
    ('c.execute("delete from t " + f"where a = {x}")\n', 1),                # joined: read whole, once
    ('c.execute("SELECT a FROM t")\n', 1),                                 # upper case: still one, not two
    ('log.info("select a row from the list")\nc.execute(sql)\n', 0),       # not a database call; a name
])
def test_the_sql_check_sees_a_statement(source, statements):
    assert len(_sql_strings(source, "fake.py")) == statements
