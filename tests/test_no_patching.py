"""svmtool uses its dependencies through their public API: nowhere in svmtool/ does it assign to an
attribute of another library (numba, llvmlite, os, numpy, setuptools, ...), replace an entry of
``sys.modules``, or ``setattr`` on something it imported; and no path in svmtool/ is computed
from the source checkout around the package."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "svmtool"


def _foreign_names(tree):
    """Names a module binds by importing something that is not svmtool's (``import os``,
    ``import numba.core.caching as c``, ``from numba.pycc import compiler``)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not alias.name.startswith("svmtool"):
                    names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            if not (node.module or "").startswith("svmtool"):
                names.update(alias.asname or alias.name for alias in node.names)
    return names


def _root(node):
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


# The one attribute of the standard library whose documentation asks for it to be assigned:
# ``warnings.showwarning`` ("You may replace this function with any callable"), set inside a
# ``warnings.catch_warnings()`` block, which puts the original back.
ALLOWED = {"warnings.showwarning"}


def _target_parts(target):
    """The names, attributes and subscripts an assignment target writes (unpacking included),
    not the expressions it reads to find them (``a[np.where(x)] = 1`` writes ``a``)."""
    if isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from _target_parts(elt)
    elif isinstance(target, ast.Starred):
        yield from _target_parts(target.value)
    else:
        yield target


def _patches(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    foreign = _foreign_names(tree)
    found = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for t in targets:
            for sub in _target_parts(t):
                if (isinstance(sub, ast.Attribute) and _root(sub) in foreign
                        and ast.unparse(sub) not in ALLOWED):
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{sub.lineno}: "
                                 f"{ast.unparse(sub)} assigned")
                if (isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Attribute)
                        and ast.unparse(sub.value) == "sys.modules"):
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{sub.lineno}: "
                                 "sys.modules entry replaced")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("setattr", "delattr") and node.args
                and _root(node.args[0]) in foreign):
            found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: "
                         f"{node.func.id} on {ast.unparse(node.args[0])}")
    return found


def test_no_attribute_of_a_dependency_is_replaced():
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in _patches(path)]
    assert found == [], "\n".join(found)


def test_the_scan_sees_a_patch():
    # the rule itself, on the kinds of patch svmtool once had
    import tempfile

    code = ("import os\nimport sys\nimport numba.np.linalg as nla\nfrom numba.core import caching\n"
            "os.getloadavg = lambda: (0, 0, 0)\nnla.ensure_blas = None\n"
            "caching.Cache.load_overload = None\nsys.modules['yaml'] = None\n"
            "setattr(os, 'x', 1)\nimport svmtool.engine.local as own\nown.MAX_BLOCKS = 4\n")
    with tempfile.TemporaryDirectory(dir=PACKAGE) as folder:
        path = Path(folder) / "patchy.py"
        path.write_text(code)
        found = _patches(path)
    assert len(found) == 5, found


def test_no_path_is_computed_from_the_checkout():
    """A wheel installs svmtool/ alone: nothing in it may reach for the folder around it
    (``Path(__file__).parents[2]``, ``os.path.dirname`` twice over ``__file__``)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            squeezed = line.replace(" ", "")
            own = "__file__" in line.replace(".__file__", "")
            if own and (".parents[" in squeezed or ".parent.parent" in squeezed
                                       or squeezed.count("dirname(") >= 2):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{n}: {line.strip()}")
    assert found == [], "\n".join(found)
