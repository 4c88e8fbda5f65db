"""What the module docstrings and ARCHITECTURE.md name exists.

A module docstring is the map of its module and its neighbours; ARCHITECTURE.md is the map of
the package.  When a module is renamed, moved or never written, a map that still names it sends
the reader nowhere (``svmtool.selection.easy`` was named long after easy.py's job had gone to
``svmtool.cli.grid_easy``).  This test reads every dotted name ``svmtool.x.y``, every path
``.../name.py`` and every option ``--name`` in the module docstrings of svmtool/ and in
ARCHITECTURE.md and resolves it, without importing anything:

* a dotted name: its longest prefix that is a module or package of svmtool/, then the rest as
  names defined at the top of that module (a function, a class, an assignment, an import) and
  inside a class (a method, a class attribute, a field);
* a name in a role (``:func:`replay```) without ``svmtool.``: a name of the module itself, at
  its top or in one of its classes;
* an option ``--name``: spelled as an option string somewhere in svmtool/'s code;
* a path: relative to the repository's root, to svmtool/ or to svmtool/solvers/ (the families
  of ARCHITECTURE.md's registry section); a bare file name (``spec.py``) must be a file of the
  repository; ``_*_jit.py`` is a glob and an upper-case placeholder (``FAMILY/NAME.py``) one
  path segment.
"""

import ast
import fnmatch
import re
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "svmtool"

DOTTED = re.compile(r"(?<![\w./-])svmtool(?:\.[A-Za-z_]\w*)+")
PATH = re.compile(r"(?<![\w./-])((?:[\w*.-]+/)*[\w*-]+\.py)\b")

# files of other programs that the docstrings name: LIBSVM's tools
EXTERNAL_FILES = {"grid.py", "easy.py", "subset.py", "checkdata.py", "tools/grid.py",
                  "tools/easy.py"}
# where a path may be relative to: the root, the package, and the solvers' folder (whose
# families ARCHITECTURE.md's registry section names as ``common/rng.py``, ``dcsvm/driver.py``)
BASES = ("", "svmtool/", "svmtool/solvers/")
# a placeholder in a path of a recipe: ``svmtool/solvers/FAMILY/NAME.py``, ``_NAME_jit.py``
PLACEHOLDER = re.compile(r"(?<![a-z])[A-Z]{2,}(?![a-z])")


def module_docstrings():
    """(where, text) of every module docstring under svmtool/."""
    for path in sorted(PACKAGE.rglob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
        if doc:
            yield path.relative_to(ROOT).as_posix(), doc


def sources():
    yield from module_docstrings()
    yield "ARCHITECTURE.md", (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")


def _module_file(parts):
    base = PACKAGE.joinpath(*parts[1:])
    for cand in (base.with_suffix(".py"), base / "__init__.py"):
        if cand.is_file():
            return cand
    return None


@lru_cache(maxsize=None)
def _names(path):
    """Top-level names of a module: {name: ast node or None}."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    return _scope_names(tree.body)


def _scope_names(body):
    out = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        out[n.id] = None
            # the lazy names of a package's module __getattr__ (PEP 562): _LAZY = {"name": ...}
            if (any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets)
                    and isinstance(node.value, ast.Dict)):
                out.update((k.value, None) for k in node.value.keys
                           if isinstance(k, ast.Constant) and isinstance(k.value, str))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
            out[node.target.id] = None
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                out[(a.asname or a.name).split(".")[0]] = None
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            inner = list(node.body) + list(getattr(node, "orelse", []))
            for h in getattr(node, "handlers", []):
                inner += h.body
            out.update(_scope_names(inner))
    return out


def dotted_exists(name):
    parts = name.rstrip(".").split(".")
    for k in range(len(parts), 0, -1):
        f = _module_file(parts[:k])
        if f is None:
            continue
        rest = parts[k:]
        if not rest:
            return True
        names = _names(str(f))
        if rest[0] not in names:
            # a submodule imported by name only (``svmtool.x.sub`` with x a package)
            return False
        node = names[rest[0]]
        if len(rest) == 1:
            return True
        if isinstance(node, ast.ClassDef) and len(rest) == 2:
            inner = _scope_names(node.body)
            return rest[1] in inner or any(
                isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
                and n.target.id == rest[1] for n in node.body)
        return node is None   # an attribute of an imported or assigned object: not checked
    return False


@lru_cache(maxsize=None)
def _repo_files():
    """Every file of the checkout (relative posix paths), hidden folders and outputs aside."""
    out = []
    for p in ROOT.rglob("*"):
        rel = p.relative_to(ROOT)
        if rel.parts[0].startswith(".") or rel.parts[0] in ("bench-out", "build", "dist"):
            continue
        if p.is_file():
            out.append(rel.as_posix())
    return tuple(out)


def path_exists(text):
    files = _repo_files()
    if text in EXTERNAL_FILES:
        return True
    text = PLACEHOLDER.sub("*", text)
    if "/" not in text:
        return any(fnmatch.fnmatchcase(f.rsplit("/", 1)[-1], text) for f in files)
    for base in BASES:
        pattern = base + text
        if any(fnmatch.fnmatchcase(f, pattern) for f in files):
            return True
    return False


OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")


@lru_cache(maxsize=None)
def declared_options():
    """Every long option the code spells as a string of options alone: click's ``"--early"``,
    ``"--shrinking/--no-shrinking"``, the translators' tables (``"--easy": ...``)."""
    out = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                parts = [x for x in re.split(r"[/ ,]", node.value) if x]
                if parts and all(OPTION.fullmatch(x) or re.fullmatch(r"-[A-Za-z]\w*", x)
                                 for x in parts):
                    out.update(x for x in parts if x.startswith("--"))
    return frozenset(out)


# a Sphinx role with a name of the module itself: :func:`replay`, :meth:`take_rows`
ROLE = re.compile(r":(?:func|class|meth|attr|data|exc|obj):`~?([A-Za-z_][\w.]*)`")


def local_names(path):
    """The names a module's own docstring may use unqualified: its top-level names and the
    names defined in its classes."""
    names = dict(_names(str(path)))
    for node in list(names.values()):
        if isinstance(node, ast.ClassDef):
            names.update(_scope_names(node.body))
            names.update((n.target.id, None) for n in node.body
                         if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name))
    return names


def false_roles():
    bad = []
    for where, text in module_docstrings():
        names = local_names(ROOT / where)
        for m in ROLE.finditer(text):
            name = m.group(1)
            if not name.startswith("svmtool.") and name.split(".")[0] not in names:
                bad.append(f"{where}: {m.group(0)}")
    return bad


def false_names():
    bad = false_roles()
    options = declared_options()
    for where, text in sources():
        for m in OPTION.finditer(text):
            if m.group(0) not in options:
                bad.append(f"{where}: option {m.group(0)}")
        for m in DOTTED.finditer(text):
            if not dotted_exists(m.group(0)):
                bad.append(f"{where}: {m.group(0)}")
        for m in PATH.finditer(text):
            if not path_exists(m.group(1)):
                bad.append(f"{where}: {m.group(1)}")
    return sorted(set(bad))


def test_what_the_docstrings_name_exists():
    bad = false_names()
    assert bad == [], "named in a docstring or ARCHITECTURE.md but not there:\n" + "\n".join(bad)


def test_the_resolver_tells_true_from_false():
    assert dotted_exists("svmtool.selection.grid.run_grid")
    assert dotted_exists("svmtool.cli.grid_easy")
    assert dotted_exists("svmtool.solvers.kernel.kernel_cd.CacheArena")
    assert not dotted_exists("svmtool.selection.easy")
    assert not dotted_exists("svmtool.selection.grid.no_such_function")
    assert path_exists("svmtool/io/_parse_py.py") and path_exists("io/_parse_py.py")
    assert path_exists("spec.py") and path_exists("svmtool/solvers/FAMILY/NAME.py")
    assert dotted_exists("svmtool.train")          # a lazy name of svmtool/__init__.py
    assert not path_exists("solvers/smo.py")       # it is solvers/kernel/smo.py
    assert not path_exists("no_such_module.py")
    assert {"--early", "--line-search", "--easy", "--no-shrinking"} <= declared_options()
    assert "--no-such-option" not in declared_options()
