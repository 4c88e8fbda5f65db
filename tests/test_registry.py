"""The solver registry is the one description of a solver: the -s help, docs/solvers.md's table and
the API's dispatch come from it, and the command line refuses, before reading any data, every
option or output format the chosen solver cannot use."""

import ast
import re
from pathlib import Path

import pytest
from conftest import DATA, run_cli

from svmtool.solvers import REGISTRY, get_spec, help_table, markdown_table, specs

ROOT = Path(__file__).resolve().parents[1]
HEART = DATA / "heart_scale"


def test_docs_solver_table_is_the_registry():
    """docs/solvers.md holds exactly the table `python -m svmtool.solvers` prints."""
    doc = (ROOT / "docs" / "solvers.md").read_text()
    assert markdown_table() in doc, "docs/solvers.md's solver table is stale: paste " \
        "`python -m svmtool.solvers` into it"


def test_help_table_fits_a_terminal_and_names_every_solver():
    table = help_table(78)
    assert max(len(line) for line in table.splitlines()) <= 78
    for spec in specs():
        assert re.search(rf"^{re.escape(spec.name)}\b", table, re.M), spec.name
    r = run_cli("train", "--help")
    assert r.returncode == 0
    out = r.stdout.decode()
    # the table reaches --help unwrapped: one line per solver starts with its name
    for spec in specs():
        assert re.search(rf"^\s*{re.escape(spec.name)}[/ ]", out, re.M), spec.name


def test_every_key_resolves_to_one_spec_with_a_complete_description():
    for key, spec in REGISTRY.items():
        assert get_spec(key) is spec
        assert spec.problem and spec.method and spec.eps_means and spec.default_eps > 0
        assert spec.kind in ("binary", "multiclass", "ranking", "kernel", "single")
        assert bool(spec.driver) == (spec.kind != "binary")
        assert spec.warm_start in ("", "w", "alpha")
        assert spec.model_formats
    # LIBLINEAR's numbers map to the solvers of the same problem
    assert get_spec("1").name == "dcd-l2" and get_spec("3").name == "dcd-l1"
    assert get_spec("0").name == "lr" and get_spec("2").name == "newton"
    assert get_spec("4").name == "ocas-mc"
    assert get_spec("11").name == "svr-l2" and get_spec("12").name == "svr-l2-dual"
    assert get_spec("13").name == "svr-l1-dual"


def test_drivers_and_fit_functions_load():
    for spec in specs():
        assert callable(spec.load())
        if spec.driver:
            assert callable(spec.load_driver())


@pytest.mark.parametrize("args, message", [
    (["-s", "kernel", "-t", "2", "--model-format", "liblinear"], "--model-format liblinear"),
    (["-s", "ocas-mc", "--model-format", "svmlight"], "--model-format svmlight"),
    (["-s", "dcsvm", "--early", "--model-format", "liblinear"], "early-prediction"),
    (["-s", "1", "--model-format", "libsvm"], "--model-format libsvm"),
    (["-s", "1", "-t", "2"], "-t only applies to -s kernel, dcsvm"),
    (["-s", "kernel", "--early"], "--early only applies to -s dcsvm"),
    (["-s", "newton", "--line-search", "tca"], "--line-search only applies"),
    (["-s", "dcsvm", "--early-level", "2"], "--early-level needs --early"),
    (["-s", "dcsvm", "--early", "--early-level", "9"], "--early-level must be between 1 and"),
    (["-s", "kernel", "-g", "-1"], "-g must be >= 0"),
    (["-s", "kernel", "-m", "0"], "-m must be > 0"),
    (["-s", "1", "-p", "0.2"], "-p only applies to -s svr-l2"),
    (["-s", "3", "-R", "-B", "1"], "-R only applies to -s lr, newton"),
    (["-s", "2", "-R"], "-R (an unregularised bias) needs -B 1"),
    (["-s", "12", "-p", "-1"], "-p must be >= 0"),
])
def test_impossible_combinations_fail_before_reading(tmp_path, args, message):
    """One line, exit 2, no model -- and before the data is read: a missing TRAIN file is not
    what gets reported."""
    model = tmp_path / "m"
    r = run_cli("train", *args, tmp_path / "no-such-file", model)
    err = r.stderr.decode().strip()
    assert r.returncode == 2 and len(err.splitlines()) == 1, err
    assert message in err and "Traceback" not in err
    assert not model.exists()


def test_svmlight_format_refuses_a_multiclass_model_before_training(tmp_path):
    data = tmp_path / "three.svm"
    data.write_text("1 1:1\n2 1:2\n3 1:3\n1 1:1.5\n")
    model = tmp_path / "m"
    r = run_cli("train", "--model-format", "svmlight", data, model)
    err = r.stderr.decode().strip()
    assert r.returncode == 2 and "cannot hold a model of 3 classes" in err, err
    assert not model.exists()


def test_early_is_a_plain_flag(tmp_path):
    """`--early DATA MODEL` reads DATA as the data file, not as the level."""
    model = tmp_path / "m"
    r = run_cli("train", "-q", "-s", "dcsvm", "--early", HEART, model)
    assert r.returncode == 0, r.stderr
    assert model.read_text().startswith("svmtool_early_model 1")
    assert "\nlevel 1\n" in model.read_text() or "\nlevel " in model.read_text()


# ---- the registry is the only place that decides by a solver's name ----------------------------

def _own_modules(spec):
    """The modules of a registry entry (its fit, driver and out-of-core fit)."""
    return {w.partition(":")[0] for w in (spec.fit, spec.driver, spec.out_of_core) if w}


def _solver_constants(node, names):
    """The solver names among the string constants of ``node`` (a constant or a literal
    tuple/list/set of them)."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else [node]
    return {n.value for n in items if isinstance(n, ast.Constant) and n.value in names}


def _decisions_by_name(tree, names, option_values):
    """(line, what) of every place ``tree`` decides by a solver's name: a name compared with
    ``x.name`` / ``x.solver`` (or a bare ``name`` / ``solver`` variable, unless the word is also
    another option's value, such as the line searches gca2 and tca), a solver chosen by name
    (``solver="cp"``, ``get_spec("ocas")``), or a literal list of two or more solver names (a
    capability list such as the old DASK_SOLVERS)."""
    out = []
    # module-level names bound to a literal of solver names (DASK_TASK_SOLVERS = ("dcsvm",))
    lists = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, (ast.Tuple, ast.List,
                                                                    ast.Set)):
            found = _solver_constants(node.value, names)
            if found and len(found) == len(node.value.elts):
                lists.update({tg.id: found for tg in node.targets if isinstance(tg, ast.Name)})
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            found = set().union(*(_solver_constants(o, names) for o in operands),
                                *(lists.get(getattr(o, "id", None), set()) for o in operands))
            by_attr = any(isinstance(o, ast.Attribute) and o.attr in ("name", "solver")
                          for o in operands)
            by_var = any(isinstance(o, ast.Name) and o.id in ("name", "solver")
                         for o in operands)
            if found and (by_attr or (by_var and found - option_values)):
                out.append((node.lineno, f"compares with {sorted(found)}"))
        elif isinstance(node, ast.keyword) and node.arg == "solver":
            found = _solver_constants(node.value, names)
            if found:
                out.append((node.value.lineno, f"solver={sorted(found)[0]!r}"))
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(
                node.func, "attr", "")) == "get_spec" and node.args:
            found = _solver_constants(node.args[0], names)
            if found:
                out.append((node.lineno, f"get_spec({sorted(found)[0]!r})"))
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            found = _solver_constants(node, names)
            if len(found) >= 2 and len(found) == len(node.elts):
                out.append((node.lineno, f"lists solvers {sorted(found)}"))
    return out


def test_only_the_registry_decides_by_a_solver_name():
    """What a solver can do is its registry entry's fields: outside svmtool/solvers/__init__.py
    no module names a solver to decide anything, except a solver's own modules (its fit, driver
    and out-of-core fit) naming itself.  Not scanned: tests, bench/ (its suites list which
    solvers to measure, as the tests do) and the layers below the solvers, io/ and models/,
    which cannot know the registry (LIBSVM's svm_type words c_svc, ..., nu_svr are their file
    format's vocabulary)."""
    from svmtool.params import DCD_ENGINES, DUAL_STARTS, LINE_SEARCHES, PERF_LOSSES

    option_values = set(LINE_SEARCHES) | set(PERF_LOSSES) | set(DCD_ENGINES) | set(DUAL_STARTS)
    owners = {}
    for spec in specs():
        for key in (spec.name, *spec.aliases):
            owners[key] = _own_modules(spec)
    offenders = []
    for path in sorted((ROOT / "svmtool").rglob("*.py")):
        rel = path.relative_to(ROOT)
        module = ".".join(rel.with_suffix("").parts)
        if module == "svmtool.solvers.__init__" or rel.parts[1] in ("bench", "io", "models"):
            continue
        names = {n for n, mods in owners.items() if module not in mods}
        tree = ast.parse(path.read_text())
        offenders += [f"{rel}:{line}: {what}"
                      for line, what in _decisions_by_name(tree, names, option_values)]
    assert offenders == [], "\n".join(offenders)


def test_the_scan_finds_what_it_looks_for():
    """The scan above flags the shapes the registry replaced (so that its silence means
    something)."""
    names = {"dcsvm", "cp", "ocas", "gca2", "tca", "newton", "lr"}
    values = {"gca2", "tca"}
    code = '''
SUPPORTED = ("newton", "lr", "cp")
TASKS = ("dcsvm",)
def f(spec, params, name):
    if spec.name in TASKS:
        pass
    if spec.name == "dcsvm":
        pass
    if name in ("ocas", "cp"):
        pass
    if name == "gca2":          # a line search's name, not a solver's
        pass
    return get_spec("ocas"), TrainParams(solver="cp"), params.solver != "lr"
'''
    found = [what for _, what in _decisions_by_name(ast.parse(code), names, values)]
    assert sorted(found) == sorted([
        "lists solvers ['cp', 'lr', 'newton']", "compares with ['dcsvm']",
        "compares with ['cp', 'ocas']", "lists solvers ['cp', 'ocas']", "get_spec('ocas')",
        "solver='cp'", "compares with ['lr']", "compares with ['dcsvm']"]), found


def test_fallbacks_name_solvers_that_can_go_on_where_their_first_ran():
    for spec in specs():
        if spec.fallback:
            then = get_spec(spec.fallback)
            assert then.warm_start == "w" and then.task == spec.task, spec.name
            assert then.liblinear_id is not None and spec.liblinear_id is not None
            assert not spec.out_of_core or then.out_of_core, spec.name
            assert not spec.dask or then.dask == spec.dask, spec.name
        if spec.dask == "passes":
            assert spec.out_of_core, spec.name
        assert spec.dask in ("", "passes", "tasks")


# ---- a new solver is one module and one registry entry ------------------------------------------

TRIVIAL = '''"""A trivial solver, for the registry's test: w = sum_i C_i y_i x_i (the centroid direction),
in memory and over any row source (out of core)."""
import numpy as np

from svmtool.solvers.common.result import SolverResult


def _result(w, z, y, C_pos, C_neg):
    cost = np.where(np.asarray(y) > 0, C_pos, C_neg)
    primal = 0.5 * float(w @ w) + float(cost @ np.maximum(0.0, 1.0 - np.asarray(y) * z))
    return SolverResult(w=w, iterations=1, primal=primal, gap=0.0, gap_kind="none",
                        converged=True)


def fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None,
        callback=None):
    import scipy.sparse as sp

    X = sp.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, n_features))
    v = np.where(np.asarray(y) > 0, C_pos, -C_neg)
    w = np.asarray(X.T @ v).ravel()
    if callback is not None:
        callback(1, {})
    return _result(w, X @ w, y, C_pos, C_neg)


def fit_rows(rows, y, n_features, C_pos, C_neg, params, init_w=None, callback=None):
    passes = rows.passes()
    v = np.where(np.asarray(y) > 0, C_pos, -C_neg)
    w = passes.rmatvec(v)
    return _result(w, passes.matvec(w), y, C_pos, C_neg)
'''


@pytest.fixture
def trivial_solver(tmp_path, monkeypatch):
    """The two edits a new solver takes: its module and one register call."""
    import svmtool.solvers as registry
    from svmtool.solvers import SolverSpec, register

    (tmp_path / "trivial_solver.py").write_text(TRIVIAL)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "REGISTRY", dict(registry.REGISTRY))
    register(SolverSpec(
        name="trivial", fit="trivial_solver:fit", out_of_core="trivial_solver:fit_rows",
        liblinear_type="L2R_L1LOSS_SVC_DUAL", problem="centroid", method="one pass",
        eps_means="nothing", default_eps=1.0, threads="nothing"))
    return get_spec("trivial")


def test_a_new_solver_is_one_module_and_one_registry_entry(trivial_solver, tmp_path):
    import numpy as np

    from svmtool import api
    from svmtool.cli import run
    from svmtool.io.cache import save_cache
    from svmtool.io.svmlight import load_data

    heart = load_data(DATA / "heart_scale")
    model = api.train(heart, solver="trivial", bias=1.0, C=0.5)
    X = np.hstack([heart.X.toarray(), np.ones((heart.n_rows, 1))])
    y = np.where(heart.y == model.labels[0], 1.0, -1.0)
    np.testing.assert_allclose(model.w[:, 0], 0.5 * X.T @ y, rtol=1e-12)
    assert model.report["solver"] == "trivial"
    # the command line, its help and the documentation's table know it from its entry alone
    assert "trivial" in help_table() and "| `trivial` |" in markdown_table()
    assert run(["train", "-q", "-s", "trivial", "-B", "1", "-c", "0.5", str(DATA / "heart_scale"),
                str(tmp_path / "m")]) == 0
    assert api.load_model(str(tmp_path / "m")).w.tolist() == model.w.tolist()
    # out of core from its out_of_core fit; --dask is refused: its entry does not offer it
    cache = tmp_path / "heart.cache"
    save_cache(heart, str(cache))
    ooc = api.train(load_data(str(cache)), solver="trivial", bias=1.0, C=0.5, out_of_core=True)
    np.testing.assert_allclose(ooc.w, model.w, rtol=1e-12)
    assert ooc.report["streaming"] == "blocks"
    assert run(["train", "-q", "-s", "trivial", "--dask", "local:1", str(cache),
                str(tmp_path / "d")]) == 2
