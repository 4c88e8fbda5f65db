"""Benchmarks: `svmtool bench` and `make bench`.

harness.py  timing (warm-up excluded), peak memory, objectives computed from w, accuracy, traces
anchors.py  runners: svmtool's solvers (from the registry) and LIBLINEAR, LIBSVM, scikit-learn,
            an external command
report.py   markdown tables and JSON
plots.py    PNG plots (matplotlib, optional)
iobench.py  reading/writing throughput (svmtool vs scikit-learn vs the cache)
suites.py   one run (what the CLI does) and the standard suite of `make bench`
"""
