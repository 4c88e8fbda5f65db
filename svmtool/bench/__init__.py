"""Benchmarks: `svmtool bench` and `make bench`, the one mechanism behind BENCHMARKS.md.

harness.py  timing (warm-up excluded), peak memory, objectives computed from w, accuracy, traces
anchors/    runners: svmtool's solvers (from the registry, with variants) and the anchors --
            LIBLINEAR and LIBSVM in process, scikit-learn, the C programs end to end
run.py      one bench run on one data set (what `svmtool bench TRAIN` does, and every suite case)
suites/     the registered suites (`svmtool bench --suite NAME`, `--list-suites`) and the
            markdown sections they write into BENCHMARKS.md
report.py   markdown tables and JSON
plots.py    PNG plots (matplotlib, optional)
iobench.py  reading/writing throughput (svmtool vs scikit-learn vs the cache)
"""
