"""Every training option is one declaration (svmtool.params.OPTIONS): the click options of
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
