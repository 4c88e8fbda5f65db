"""The command that the ``sklearn-svc`` and ``sklearnex`` anchors time
(svmtool.bench.anchors.programs): read an svmlight text file with scikit-learn's
``load_svmlight_file``, fit an ``SVC`` (scikit-learn's, or scikit-learn-intelex's oneDAL one)
and write the model in LIBSVM's format, as one Python process -- what a Python user runs.  It may
run under the interpreter of another venv, so it imports nothing of svmtool.

Usage: python svc_child.py [--dense] MODULE PARAMS TRAIN MODEL

MODULE: ``sklearn.svm`` or ``sklearnex.svm``; PARAMS: the SVC's arguments as a JSON object (C,
kernel "rbf", gamma, tol, cache_size, ...); ``--dense``: fit a dense copy of the rows (numpy)
instead of the scipy CSR matrix the reader gives.  Two classes only.  Prints the solver's iteration
count (``iterations N``) and, for sklearnex, oneDAL's thread count (``threads N``).
"""

import json
import sys


def _g(x):
    return repr(float(x)) if float(x) != int(float(x)) else str(int(float(x)))


def write_libsvm_model(path, clf, params):
    """``clf`` (a fitted binary SVC) as a LIBSVM model file: the decision value
    sum coef_i K(sv_i, x) - rho is positive for the first label, as svm-predict reads it."""
    import numpy as np
    import scipy.sparse as sp

    classes = list(clf.classes_)
    coef = clf.dual_coef_
    coef = np.asarray(coef.toarray() if hasattr(coef, "toarray") else coef, dtype=float)[0]
    svs = sp.csr_matrix(clf.support_vectors_)
    counts = [int(c) for c in clf.n_support_]
    # scikit-learn: f(x) = dual_coef_ K + intercept_ > 0 picks classes_[1]; its support vectors
    # come grouped by class in classes_ order.  LIBSVM: the first label's vectors first.
    first = np.arange(counts[0], counts[0] + counts[1])
    order = np.concatenate([first, np.arange(counts[0])])
    kernel = params.get("kernel", "rbf")
    lines = ["svm_type c_svc", f"kernel_type {kernel}"]
    if kernel in ("rbf", "poly", "sigmoid"):
        lines.append(f"gamma {float(params['gamma'])!r}")
    if kernel == "poly":
        lines.append(f"degree {int(params.get('degree', 3))}")
    if kernel in ("poly", "sigmoid"):
        lines.append(f"coef0 {float(params.get('coef0', 0.0))!r}")
    lines += ["nr_class 2", f"total_sv {len(order)}", f"rho {-float(clf.intercept_[0])!r}",
              f"label {_g(classes[1])} {_g(classes[0])}", f"nr_sv {counts[1]} {counts[0]}",
              "SV"]
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
        for i in order:
            lo, hi = svs.indptr[i], svs.indptr[i + 1]
            feats = " ".join(f"{j + 1}:{v!r}" for j, v in zip(svs.indices[lo:hi].tolist(),
                                                             svs.data[lo:hi].tolist()))
            fh.write(f"{float(coef[i])!r} {feats}\n")


def main(argv):
    dense = argv[:1] == ["--dense"]
    if dense:
        argv = argv[1:]
    if len(argv) != 4:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    module, params, train, model = argv
    if module not in ("sklearn.svm", "sklearnex.svm"):
        sys.stderr.write(f"unknown module {module!r} (sklearn.svm or sklearnex.svm)\n")
        return 2
    import importlib

    import numpy as np
    from sklearn.datasets import load_svmlight_file

    params = json.loads(params)
    SVC = importlib.import_module(module).SVC
    x, y = load_svmlight_file(train)
    if dense:
        x = x.toarray()
    elif module == "sklearn.svm" and x.indices.dtype != np.int32 and x.nnz < 2**31:
        # scikit-learn's SVC takes 32-bit sparse indices only; its reader gives 64-bit ones
        x.indices, x.indptr = x.indices.astype(np.int32), x.indptr.astype(np.int32)
    if len(np.unique(y)) != 2:
        sys.stderr.write(f"{train}: {len(np.unique(y))} classes; this command trains two\n")
        return 2
    clf = SVC(**params).fit(x, y)
    write_libsvm_model(model, clf, params)
    its = getattr(clf, "n_iter_", None)
    if its is not None:
        print(f"iterations {int(np.sum(its))}")
    if module == "sklearnex.svm":
        try:
            import daal4py

            print(f"threads {daal4py.num_threads()}")
        except Exception:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
