"""`svmtool bench --suite`: the suite registry (listing, selection, every suite builds its cases),
one tiny suite run end to end into a markdown file whose sections carry their command, and the
end-to-end runners (whole `svmtool train` and `liblinear-train` commands on one text file)."""

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from svmtool.bench import report
from svmtool.bench.data import bundled
from svmtool.bench.suites import SUITES, Where, select
from svmtool.cli import cli, run

DATA = Path(__file__).resolve().parents[1] / "data"
HEART = DATA / "heart_scale"
SHIPPED = Path(bundled("heart_scale"))      # the copy inside the package (package data)
DEFAULT = {"linear", "c-sweep", "kernel", "end-to-end", "io"}


def test_list_suites_names_every_suite_and_marks_the_default_set():
    res = CliRunner().invoke(cli, ["bench", "--list-suites"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    for name, suite in SUITES.items():
        line = next(ln for ln in lines if ln[2:].split()[0] == name)
        assert line.startswith("*") == suite.default, line
    assert {s.name for s in SUITES.values() if s.default} == DEFAULT


def test_selection_by_name_default_and_all(capsys):
    assert {s.name for s in select("default")} == DEFAULT
    assert [s.name for s in select("dcd,newton,dcd")] == ["dcd", "newton"]
    assert len(select("all")) == len(SUITES)
    with pytest.raises(KeyError):
        select("no-such-suite")
    assert run(["bench", "--suite", "no-such-suite"]) == 2
    assert "unknown suite 'no-such-suite'" in capsys.readouterr().err


def test_every_old_benchmark_script_has_a_suite():
    replaced = " ".join(s.replaces for s in SUITES.values())
    for script in ("cutting_plane_bench", "dcd_multiclass", "dcd_vs_liblinear", "dcsvm_vs_libsvm",
                   "end_to_end", "kernel_bias", "newton_vs_liblinear", "read_bench",
                   "warm_start"):
        assert f"benchmarks/{script}.py" in replaced, script


def test_the_shipped_heart_scale_is_the_checkouts():
    assert SHIPPED.parent.parent == Path(__file__).resolve().parents[1] / "svmtool" / "bench"
    assert SHIPPED.read_bytes() == HEART.read_bytes()


@pytest.mark.parametrize("name", sorted(SUITES))
def test_every_suite_builds_cases_on_the_bundled_data(name):
    cases = SUITES[name].cases(Where(quick=True))
    assert cases, name
    for c in cases:
        assert [c.config is not None, bool(c.io), c.table is not None].count(True) == 1, c
        if c.config is not None:
            assert Path(c.config.train).resolve() == SHIPPED.resolve()
        if c.io:
            assert {Path(f).resolve() for f in c.io} == {SHIPPED.resolve()}
        if c.table is not None:
            assert {Path(f).resolve() for f in c.files} == {SHIPPED.resolve()}


def test_data_folders_in_either_layout_and_what_is_missing(tmp_path, monkeypatch):
    """--data-dir holds each set in a folder of its own (a9a/a9a) or side by side (a checkout's
    data/); the sets a suite asks for that are not there are named in one line."""
    from svmtool.bench.suites.runner import missing_note

    flat, nested = tmp_path / "flat", tmp_path / "nested"
    flat.mkdir()
    (nested / "a9a").mkdir(parents=True)
    for folder in (flat, nested / "a9a"):
        shutil.copy(HEART, folder / "a9a")
        shutil.copy(HEART, folder / "a9a.t")
    for folder in (flat, nested):
        w = Where(data_dir=folder)
        assert w.shared == folder
        tr, te = w.files("a9a")
        assert Path(te).name == "a9a.t" and Path(tr).parent == Path(te).parent
        assert w.files("heart") == (str(SHIPPED), None)     # not in the folder: the shipped one
        w.missing.clear()
        assert [n for n, *_ in w.sets(["a9a", "w8a", "ijcnn1"])] == ["a9a"]
        note = missing_note(SUITES["linear"], w)
        assert note == f"linear: not in {folder}: w8a, ijcnn1 (left out)"
    # no data folder at all (an installed svmtool run from an empty folder): heart_scale, said so
    monkeypatch.chdir(tmp_path)
    w = Where()
    assert w.shared is None
    assert [(n, tr) for n, tr, *_ in w.sets(["a9a"])] == [("heart", str(SHIPPED))]
    note = missing_note(SUITES["linear"], w)
    assert note.startswith("linear: a9a not found") and "--data-dir" in note
    assert missing_note(SUITES["linear"], Where(quick=True)) is None
    assert run(["bench", "--suite", "dcd", "--data-dir", str(tmp_path / "no-such")]) == 2
    assert run(["bench", "--suite", "dcd", "--data-dir", str(tmp_path)]) == 2


@pytest.mark.parametrize("args", [["--suite", "kernel", "-c", "1"],
                                  ["--suite", "kernel", str(HEART)],
                                  [str(HEART), "--markdown", "x.md"],
                                  [str(HEART), "--quick"],
                                  []])
def test_option_mixes_are_refused(args, capsys):
    assert run(["bench"] + args) == 2
    assert "svmtool: error: " in capsys.readouterr().err


def _section(text, name):
    start = text.index(f"<!-- suite: {name} -->")
    return text[start:text.index(f"<!-- /suite: {name} -->", start)]


def test_a_suite_run_writes_its_section_with_the_command_and_keeps_the_others(tmp_path):
    md, out = tmp_path / "BENCH.md", tmp_path / "out"
    runner = CliRunner()
    res = runner.invoke(cli, ["bench", "--suite", "line-search", "--quick", "--against", "none",
                              "--repeat", "1", "--markdown", str(md), "--out", str(out)])
    assert res.exit_code == 0, res.output + repr(res.exception)
    text = md.read_text()
    sec = _section(text, "line-search")
    assert ("Command: `svmtool bench --suite line-search --quick --repeat 1 --against none`"
            in sec)
    rows = report.parse_markdown_table(sec[sec.index("| data |"):])
    assert {r["runner"] for r in rows} == {f"ocas --line-search {ls}"
                                           for ls in ("exact", "sorted", "gca2", "tca")}
    # one OCAS problem: the four searches agree to OCAS's relative gap
    assert all(float(r["rel. gap"]) < 0.02 for r in rows)
    assert (out / "bench_heart.json").exists()
    # a second suite joins the file; the first section stays byte for byte
    res = runner.invoke(cli, ["bench", "--suite", "ordinal", "--quick", "--repeat", "1",
                              "--markdown", str(md), "--out", str(out)])
    assert res.exit_code == 0, res.output + repr(res.exception)
    text2 = md.read_text()
    assert _section(text2, "line-search") == sec
    assert "Command: `svmtool bench --suite ordinal --quick --repeat 1`" in text2
    assert text2.startswith("# svmtool benchmarks")


def test_end_to_end_commands_read_the_same_text_file(tmp_path):
    from svmtool.bench.run import BenchConfig, run_one

    have_ll = shutil.which("liblinear-train") is not None
    cfg = BenchConfig(train=str(HEART), solvers=["dcd-l1"], end_to_end=True, split=200,
                      against=["liblinear-train"], repeat=1, trace=False, memory=False)
    result = run_one(cfg)
    rows = {r["runner"]: r for r in result["blocks"][0]["rows"]}
    ours = rows["svmtool train -s dcd-l1"]
    assert ours["timed_from_outside"] and ours["iterations"] > 0
    assert 0.6 < ours["accuracy"] <= 1.0
    if have_ll:
        ll = rows["liblinear-train -s 3"]
        assert abs(ll["objective"] - ours["objective"]) < 1e-2 * abs(ll["objective"])
        ratio = result["blocks"][0]["ratios"][0]
        assert (ratio["ours"], ratio["anchor"]) == ("svmtool train -s dcd-l1",
                                                    "liblinear-train -s 3")
    else:
        assert any("liblinear-train skipped" in n for n in result["notes"])
        pytest.skip("liblinear-train is not on PATH: the comparison with it was not made")


def test_variant_options_reach_the_typed_groups():
    from svmtool.bench.anchors.ours import apply_options
    from svmtool.params import TrainParams

    p = apply_options(TrainParams(solver="ocas"), {"cp.line_search": "tca", "threads": 2,
                                                   "dcsvm.early": True})
    assert (p.cp.line_search, p.threads, p.dcsvm.early) == ("tca", 2, True)
    with pytest.raises(ValueError):
        apply_options(TrainParams(), {"nosuch.field": 1})


STUDIES = ("param-search", "ocas-split", "dcsvm-levels", "predict")


def test_study_suites_are_opt_in_and_their_quick_tables_hold_true(tmp_path):
    """The four study suites, --quick: each writes its table, and the rows agree with what is
    known independently (the C programs' answers, one problem solved by several searches)."""
    assert not any(SUITES[n].default for n in STUDIES)
    md = tmp_path / "BENCH.md"
    res = CliRunner().invoke(cli, ["bench", "--suite", ",".join(STUDIES), "--quick", "--repeat",
                                   "1", "--markdown", str(md), "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output + repr(res.exception)
    text = md.read_text()
    tables = {}
    for name in STUDIES:
        sec = _section(text, name)
        assert f"Command: `svmtool bench --suite {name} --quick --repeat 1`" in sec
        tables[name] = report.parse_markdown_table(sec[sec.index("| data |"):])
    # -C: the search does not depend on the threads; LIBLINEAR's best C lies within a few
    # doublings of ours (its folds differ)
    ps = {r["command"]: r for r in tables["param-search"]}
    ours, one = ps["svmtool train -C -s 2"], ps["svmtool train -C -s 2 --threads 1"]
    assert (ours["best C"], ours["CV score"]) == (one["best C"], one["CV score"])
    assert 70.0 < float(ours["CV score"].rstrip("%")) <= 100.0
    have_ll = shutil.which("liblinear-train") is not None
    if have_ll:
        import math
        ll = ps["*liblinear-train -C -s 2*"]
        assert abs(math.log2(float(ll["best C"]) / float(ours["best C"]))) <= 3
    # OCAS: the exact and the sorted search find the same steps; the split is within the total
    split = {r["solver"]: r for r in tables["ocas-split"]}
    assert split["ocas --line-search exact"]["primal"] == split["ocas --line-search sorted"][
        "primal"]
    assert split["ocas --line-search exact"]["iterations"] == split[
        "ocas --line-search sorted"]["iterations"]
    for r in split.values():
        parts = sum(float(r[k]) for k in ("passes s", "QP s", "line search s"))
        assert parts <= 1.05 * float(r["s median (min)"].split()[0]) + 0.01, r
    # DC-SVM: the exact model's row (level 0) is there with an accuracy on heart_scale
    lv = tables["dcsvm-levels"]
    assert lv[-1]["level"] == "0" and 80.0 < float(lv[-1]["test accuracy"].rstrip("%")) <= 100
    # prediction: svmtool's labels are the C programs' labels, row for row
    for r in tables["predict"]:
        if r["agreement"] != "-":
            same, total = map(int, r["agreement"].split("/"))
            assert same == total == int(r["test rows"]), r
    if not have_ll:
        pytest.skip("liblinear-train is not on PATH: the -C row was not compared with it")


def test_interleaved_runs_alternate_after_one_warm_up_each():
    from svmtool.bench.timing import interleaved_runs

    calls = []

    class Fake:
        def __init__(self, name, fail=False):
            self.name, self.fail = name, fail

        def fit(self, state, C, eps):
            calls.append(self.name)
            if self.fail:
                raise RuntimeError("no such program")
            return (self.name, len(calls))

    runners = [Fake("A"), Fake("B"), Fake("X", fail=True), Fake("C")]
    errors = []
    out = interleaved_runs(runners, {"A": 1, "B": 1, "X": 1}, 1.0, None, 3, errors)
    # C has no state (its prepare failed): never run; X fails its warm-up: left out, reported
    assert calls == ["A", "B", "X"] + ["A", "B"] * 3
    assert set(out) == {"A", "B"} and [e["runner"] for e in errors] == ["X"]
    raw, first, times = out["B"]
    assert raw == ("B", 9) and len(times) == 3 and first >= 0


def test_markdown_keeps_the_hand_written_summary(tmp_path):
    """BENCHMARKS.md opens with a hand-written table against the C programs: rewriting a suite's
    section keeps it, right under the title, and keeps the other suites' sections."""
    from svmtool.bench.suites.runner import merge_markdown

    md = tmp_path / "B.md"
    md.write_text("# svmtool benchmarks\n\n<!-- summary -->\n| a | b |\n<!-- /summary -->\n\n"
                  "<!-- suite: x -->\nold x\n<!-- /suite: x -->\n"
                  "<!-- suite: y -->\nold y\n<!-- /suite: y -->\n")
    merge_markdown(str(md), {"x": "<!-- suite: x -->\nnew x\n<!-- /suite: x -->\n"}, ["x", "y"])
    text = md.read_text()
    assert text.startswith("# svmtool benchmarks\n\n<!-- summary -->\n| a | b |\n"
                           "<!-- /summary -->\n")
    assert "new x" in text and "old x" not in text and "old y" in text
    assert text.index("<!-- /summary -->") < text.index("Every section below")


def test_derived_data_sets_binarised_and_shuffled_split(tmp_path):
    """The data sets the suites build: labels below the first negative class become +1 and the
    rest -1 (features untouched); the split keeps every row once, is the same for the same seed,
    and its train part has the asked number of rows.  Built files are reused while fresh."""
    from svmtool.bench.suites import derived

    tr, te = tmp_path / "multi", tmp_path / "multi.t"
    tr.write_text("1 1:0.5\n10 2:1\n11 3:2\n20 1:-1 4:3\n")
    te.write_text("3 1:1\n15 2:2\n")
    btr, bte = derived.binarised(tr, te, tmp_path / "work", "bin", 11)
    assert Path(btr).read_text() == "+1 1:0.5\n+1 2:1\n-1 3:2\n-1 1:-1 4:3\n"
    assert Path(bte).read_text() == "+1 1:1\n-1 2:2\n"
    s1 = derived.shuffled_split(tr, te, tmp_path / "a", "split", n_train=4, seed=5)
    s2 = derived.shuffled_split(tr, te, tmp_path / "b", "split", n_train=4, seed=5)
    parts = [Path(p).read_text().splitlines() for p in s1]
    assert [Path(p).read_text() for p in s1] == [Path(p).read_text() for p in s2]
    assert len(parts[0]) == 4 and len(parts[1]) == 2
    assert sorted(parts[0] + parts[1]) == sorted(tr.read_text().splitlines()
                                                 + te.read_text().splitlines())
    stamp = Path(s1[0]).stat().st_mtime_ns
    derived.shuffled_split(tr, te, tmp_path / "a", "split", n_train=4, seed=5)
    assert Path(s1[0]).stat().st_mtime_ns == stamp


def test_large_is_a_suite_option(capsys):
    assert run(["bench", str(HEART), "--large"]) == 2
    assert "--large" in capsys.readouterr().err
    w = Where(quick=True, large=True)
    from svmtool.bench.suites.runner import command_line
    assert command_line(SUITES["dcsvm-e2e"], w).endswith("--quick --large")


def test_io_benchmark_from_any_folder(tmp_path, monkeypatch):
    """The reading benchmark's children (peak memory of each reader) run from the current folder
    and read the shipped heart_scale: every reader reports a figure."""
    pytest.importorskip("sklearn", reason="the io benchmark compares with scikit-learn's reader")
    from svmtool.bench import iobench

    monkeypatch.chdir(tmp_path)
    data, md = iobench.run([str(HEART)], repeats=1, memory="all", write=False, jit=False)
    (row,) = data["memory"]
    assert set(row["mib"]) == {"svmtool 1 thread", "svmtool 2 threads", "sklearn", "cache read",
                               "cache mmap+touch"}
    assert all(v is not None for v in row["mib"].values()), row
    assert "### Peak memory" in md
