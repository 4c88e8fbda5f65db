"""The suites of ``svmtool bench --suite NAME`` (``make bench``: ``--suite default``).

registry.py  Suite, Case, Where (data folder), the registry, name selection
linear.py    linear, c-sweep (default); dcd, newton, cutting-plane, line-search, ordinal,
             warm-start
kernel.py    kernel (default); dcsvm, kernel-bias, kernel-peers
programs.py  end-to-end (default): svmtool train against the C programs, whole commands;
             dcsvm-e2e, c-programs (also against multi-core LIBLINEAR)
reading.py   io (default), io-all: reading and writing throughput
studies.py   param-search, ocas-split, dcsvm-levels, predict: tables of their own
             (svmtool.bench.studies), each case a ``Case(table=...)``
estimators.py  sklearn: svmtool.sklearn's estimators against scikit-learn's
             (svmtool.bench.estimators)
selection.py grid: svmtool grid against grid.py + svm-train, GridSearchCV, liblinear-train -C
             (svmtool.bench.grid_study)
runner.py    running a suite, its markdown section, merging sections into BENCHMARKS.md

Adding a suite: a ``register(Suite(...))`` in the module of its family (or a new module imported
here), whose cases are :class:`svmtool.bench.run.BenchConfig` runs -- svmtool's solvers come from
the registry, its options as :class:`svmtool.bench.anchors.Variant`.
"""

# the suites register on import, in this order (that of --list-suites and of BENCHMARKS.md)
from svmtool.bench.suites import linear  # noqa: F401  (isort: skip)
from svmtool.bench.suites import kernel, programs, reading, selection, studies  # noqa: F401
from svmtool.bench.suites import estimators  # noqa: F401
from svmtool.bench.suites.registry import SUITES, Case, Suite, Where, ordered, register, select
from svmtool.bench.suites.runner import command_line, merge_markdown, run_suite

__all__ = ["SUITES", "Case", "Suite", "Where", "command_line", "merge_markdown", "register",
           "ordered", "run_suite", "select"]
