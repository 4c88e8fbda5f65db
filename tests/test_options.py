"""Every training option is one declaration (svmtool.options.OPTIONS): the click options of
``svmtool train``, the parameter dataclasses' defaults and checks, docs/solvers.md's option table
and the scikit-learn estimators' parameters come from it, and a check message names the field,
which each front end spells its own way."""

import dataclasses
from pathlib import Path

import pytest
from conftest import DATA, run_cli

from svmtool import params as P
from svmtool.errors import ParameterError

ROOT = Path(__file__).resolve().parents[1]
HEART = DATA / "heart_scale"


def test_docs_option_table_is_the_declarations():
    """docs/solvers.md holds exactly the table `python -m svmtool.params` prints."""
    doc = (ROOT / "docs" / "solvers.md").read_text()
    assert P.options_markdown() in doc, "docs/solvers.md's option table is stale: paste " \
        "`python -m svmtool.params` into it"


def test_every_declared_field_is_a_dataclass_field_with_the_declared_default():
    base = P.TrainParams()
    for opt in P.OPTIONS:
        if not opt.field:
            continue
        owner = getattr(base, opt.owner) if opt.owner else base
        names = {f.name: f for f in dataclasses.fields(owner)}
        assert opt.attr in names, opt.field
        assert getattr(owner, opt.attr) == opt.default, opt.field


def test_every_flag_of_train_is_declared_once():
    flags = [f for opt in P.OPTIONS for f in opt.flags]
    assert len(flags) == len(set(flags))
    from svmtool.cli.train import command

    spelled = {s for p in command.params for s in p.opts + p.secondary_opts if s.startswith("-")}
    assert set(flags) == spelled - {"--zero-based", "-q", "--quiet", "-h", "--help"}


@pytest.mark.parametrize("args, cli, api", [
    (["-s", "dcsvm", "--levels", "-1"], "--levels must be >= 0 (got -1)",
     "levels must be >= 0 (got -1)"),
    (["-s", "dcsvm", "--clusters", "1"], "--clusters must be >= 2 (got 1)",
     "k_clusters must be >= 2 (got 1)"),
    (["-s", "kernel", "-g", "-1"], "-g must be >= 0 (got -1.0)", "gamma must be >= 0 (got -1.0)"),
    (["-s", "dcsvm", "--early-level", "2"], "--early-level needs --early",
     "early_level needs early"),
])
def test_a_check_names_the_field_in_each_front_ends_spelling(args, cli, api):
    r = run_cli("train", *args, HEART, "-")
    assert r.returncode == 2
    assert r.stderr.decode() == f"svmtool: error: {cli}\n"
    from svmtool.cli.train import _given  # noqa: F401  (the CLI module loads)

    values = {"dcsvm": {"--levels": ("levels", -1), "--clusters": ("k_clusters", 1),
                        "--early-level": ("early_level", 2)}, "kernel": {"-g": ("gamma", -1.0)}}
    group = "dcsvm" if args[1] == "dcsvm" else "kernel"
    name, value = values[group][args[2]]
    with pytest.raises(ParameterError) as e:
        P.make_params(None, {group: dataclasses.replace(getattr(P.TrainParams(), group),
                                                        **{name: value})})
    assert str(e.value) == api


def test_render_spells_fields_per_front_end():
    msg = f"{P.named('dcsvm.k_clusters')} must be >= 2"
    assert P.render(msg) == "k_clusters must be >= 2"
    assert P.render(msg, P.flag_name) == "--clusters must be >= 2"
    assert P.render(msg, P.sklearn_name) == "clusters must be >= 2"


# ---- a new option is one declaration ------------------------------------------------------------

NEW_OPTION = '''    Option(("--level-growth",), "DC-SVM: how much larger each level's tolerance is than the "
           "next one's (a test's option).", field="dcsvm.level_growth", type=float,
           default=2.5, group="dcsvm", show_default=True, sklearn="level_growth",
           estimators=("DCSVC",),
           check=Bound("must be > 1 (got {v})", lo=1, lo_open=True)),
'''

PROBE = r'''
import dataclasses, json
from svmtool import params as P
import svmtool.sklearn as S
d = P.DcsvmParams()
msg = P.TrainParams(dcsvm=dataclasses.replace(d, level_growth=0.5)).check()
print(json.dumps({
    "default": d.level_growth,
    "field": "level_growth" in [f.name for f in dataclasses.fields(P.DcsvmParams)],
    "api": P.render(msg), "cli": P.render(msg, P.flag_name), "sk": P.render(msg, P.sklearn_name),
    "docs": [l for l in P.options_markdown().splitlines() if "--level-growth" in l],
    "estimator": S.DCSVC().get_params().get("level_growth"),
    "estimator_set": S.DCSVC(level_growth=4.0).level_growth,
    "constraint": repr(S.DCSVC._parameter_constraints["level_growth"][0]),
    "group": [o.flags[0] for o in __import__("svmtool.cli.train", fromlist=["x"])
              .option_groups()["dcsvm"]],
}))
'''


@pytest.fixture
def tree_with_new_option(tmp_path):
    """A copy of the package with one edit: NEW_OPTION added to svmtool.options.OPTIONS."""
    import shutil

    import svmtool

    src = Path(svmtool.__file__).parent
    dst = tmp_path / "svmtool"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.nbi",
                                                            "*.nbc"))
    params = dst / "options.py"
    text = params.read_text()
    anchor = "    # fields of the API only (no flag of svmtool train)\n"
    assert text.count(anchor) == 1
    params.write_text(text.replace(anchor, NEW_OPTION + anchor))
    return tmp_path


def test_a_new_option_is_one_declaration(tree_with_new_option):
    """The one edit reaches train's help, its option groups and checks, the parameter
    dataclass (field, default, check), the docs table and an estimator's parameters."""
    import json
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=str(tree_with_new_option))
    env.pop("SVMTOOL_AOT", None)

    def svmtool(*args):
        return subprocess.run([sys.executable, "-m", "svmtool", *map(str, args)], env=env,
                              capture_output=True, text=True, cwd=tree_with_new_option)

    out = json.loads(subprocess.run([sys.executable, "-c", PROBE], env=env, check=True,
                                    capture_output=True, text=True,
                                    cwd=tree_with_new_option).stdout)
    assert out["field"] and out["default"] == 2.5
    assert out["api"] == "level_growth must be > 1 (got 0.5)"
    assert out["cli"] == "--level-growth must be > 1 (got 0.5)"
    assert out["sk"] == "level_growth must be > 1 (got 0.5)"
    assert len(out["docs"]) == 1 and "(default 2.5)" in out["docs"][0]
    assert out["estimator"] == 2.5 and out["estimator_set"] == 4.0
    assert "Interval" in out["constraint"] and "--level-growth" in out["group"]

    r = svmtool("train", "--help")
    assert r.returncode == 0 and "--level-growth FLOAT" in r.stdout
    assert "next one's (a test's option). [default: 2.5]" in " ".join(r.stdout.split())
    r = svmtool("train", "-s", "dcsvm", "--level-growth", "0.5", HEART, "-")
    assert (r.returncode, r.stderr) == (2, "svmtool: error: --level-growth must be > 1 "
                                           "(got 0.5)\n")
    r = svmtool("train", "-s", "1", "--level-growth", "3", HEART, "-")
    assert (r.returncode, r.stderr) == (2, "svmtool: error: --level-growth only applies to -s "
                                           "dcsvm, not -s dcd-l2\n")
    # the unedited package has none of it
    assert "--level-growth" not in run_cli("train", "--help").stdout.decode()


def test_estimators_take_the_declared_parameters_and_spell_their_checks():
    S = pytest.importorskip("svmtool.sklearn")
    import numpy as np

    params = S.DCSVC().get_params()
    declared = [o for o in P.OPTIONS if "DCSVC" in o.estimators]
    assert {o.sklearn for o in declared} == {"levels", "clusters", "sample", "early",
                                             "early_level"}
    for o in declared:
        assert params[o.sklearn] == o.default, o.sklearn
        assert S.DCSVC._parameter_constraints[o.sklearn] != "no_validation"
    assert S.LinearSVC().k_fraction == P.option("cp.k_fraction").default
    X = np.random.RandomState(0).randn(40, 3)
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=r"^clusters must be >= 2 \(got 1\)$"):
        S.DCSVC(clusters=1).fit(X, y)
    with pytest.raises(ValueError, match=r"^cache_size must be > 0 \(got 0.0\)$"):
        S.SVC(cache_size=0).fit(X, y)
