"""The solver registry is the one description of a solver: the -s help, docs/solvers.md's table and
the API's dispatch come from it, and the command line refuses, before reading any data, every
option or output format the chosen solver cannot use."""

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
    (["-s", "kernel", "-g", "-1"], "gamma (-g) must be >= 0"),
    (["-s", "kernel", "-m", "0"], "cache size (-m) must be > 0"),
    (["-s", "1", "-p", "0.2"], "-p only applies to -s svr-l2"),
    (["-s", "3", "-R", "-B", "1"], "-R only applies to -s lr, newton"),
    (["-s", "2", "-R"], "-R (an unregularised bias) needs -B 1"),
    (["-s", "12", "-p", "-1"], "-p (the SVR tube's width epsilon) must be >= 0"),
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
