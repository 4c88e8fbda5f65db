"""The ``sklearn`` suite: svmtool.sklearn's estimators against scikit-learn's own, whole fit calls
in one process (:func:`svmtool.bench.estimators.fit_table`), and fit on a cache larger than the
memory budget (:func:`svmtool.bench.estimators.out_of_core_table`)."""

import shutil
import tempfile

from svmtool.bench.suites.registry import Case, Suite, register

# name: (kind, options): LinearSVC on the sparse sets, SVC (RBF) on ijcnn1's first 10,000 rows
_SETS = {"a9a": ("linear", {"tols": (0.1, 1e-4)}),
         "news20": ("linear", {"tols": (0.1, 1e-4)}),
         "ijcnn1": ("rbf", {"rows": 10000, "C": 1.0, "gamma": "scale"})}
_OUT_OF_CORE_ROWS = 1_000_000


def _fit(sets):
    def table(repeat, log=None):
        from svmtool.bench.estimators import fit_table

        return fit_table(sets, repeat=repeat, log=log)
    return table


def _out_of_core(train, rows, budget):
    def table(repeat, log=None):
        from svmtool.bench.estimators import out_of_core_table

        folder = tempfile.mkdtemp(prefix="svmtool-sklearn-")
        try:
            return out_of_core_table(train, rows, folder, budget_mb=budget, repeat=repeat,
                                     log=log)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return table


def _cases(w):
    if w.quick or w.shared is None:
        sets = [(name, tr, te, "linear", {"tols": (0.1,)})
                for name, tr, te, _ in w.sets([], fallback=("heart",))]
        sets += [(f"{name} (rbf)", tr, te, "rbf", {}) for name, tr, te, _ in
                 w.sets([], fallback=("heart",))]
        out = [Case("fit", table=_fit(sets), files=[s[1] for s in sets])]
        out += [Case("fit out of core", table=_out_of_core(sets[0][1], 20000, 1.0),
                     files=[sets[0][1]])]
        return out
    sets = []
    for name, (kind, opts) in _SETS.items():
        f = w.files(name)
        if f is not None:
            label = f"{name} {opts['rows']} rows" if "rows" in opts else name
            sets.append((label, f[0], f[1], kind, opts))
    out = [Case("fit", table=_fit(sets), files=[s[1] for s in sets])] if sets else []
    f = w.files("a9a")
    if f is not None:
        out.append(Case("fit out of core", table=_out_of_core(f[0], _OUT_OF_CORE_ROWS, 64.0),
                        files=[f[0]]))
    return out


register(Suite(
    "sklearn",
    "svmtool.sklearn's LinearSVC and SVC against scikit-learn's; fit on a cache beyond memory",
    "svmtool's scikit-learn estimators (`svmtool.sklearn`) against scikit-learn's LinearSVC "
    "(liblinear, dual CD) and SVC (its LIBSVM) on the same rows, whole `fit` calls in one warm "
    "process, interleaved: LinearSVC (`dcd-l2`) on a9a and news20 at LIBLINEAR's tolerance 0.1 "
    "and scikit-learn's 1e-4, SVC (RBF, scikit-learn's defaults C 1, gamma 'scale') on the "
    "first 10,000 rows of ijcnn1; then `LinearSVC(memory_budget=...).fit(cache)` in a process "
    "of its own on a cache of a million rows (copies of a9a), in memory and out of core.",
    _cases,
    needs=("sklearn",)))
