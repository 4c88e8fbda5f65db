"""The API's driver for the solvers that fit ONE weight vector to the whole problem: support
vector regression (LIBLINEAR -s 11, 12, 13) and the one-class SVM (-s 21).

LIBLINEAR's ``train()`` does no class grouping for these: the rows keep the file's order (which
is what makes ``--liblinear-rng`` runs bit-identical), the labels are real-valued targets
(regression) or ignored (one-class), every row has the same cost ``C`` (times its instance weight, when the problem has them and
the registry entry says ``instance_weights``) and class weights (``-wLABEL``) mean nothing, so
they are refused (:func:`svmtool.params.check_for_solver`).  The model holds no labels (``nr_class 2``);
a one-class model carries ``rho``.

When -s 12 stops at its iteration cap, LIBLINEAR goes on with the primal Newton solver (-s 11)
from the same ``w`` with ``eps * 0.001``; so does this driver (the registry entry's fallback,
through :func:`svmtool.solvers.common.train_one.train_one`).
"""

import time

import numpy as np

from svmtool.problem import with_bias
from svmtool.solvers.common.train_one import train_one


def train_single(problem, params, spec, callback=None, init_model=None, fit_for=None):
    """Train ``spec``'s solver on the whole problem; returns a LinearModel.  ``fit_for`` (from
    the API, for --out-of-core): ``fit_for(spec)`` is a spec's fit over the raw mapped arrays,
    which appends the bias column itself."""
    from svmtool.models.linear import LinearModel

    if fit_for is not None:
        indptr, indices, data = problem.indptr, problem.indices, problem.data
        n_cols = problem.n_features + (1 if params.bias >= 0 else 0)
    else:
        indptr, indices, data, n_cols = with_bias(problem, params.bias)
    y = np.ascontiguousarray(problem.y, dtype=np.float64)
    cb = None if callback is None else (lambda it, info: callback(0, it, info))
    init_w = None if params.init_w is None else np.asarray(params.init_w).reshape(-1)
    if init_model is not None:
        from svmtool.solvers.common.warm import linear_start

        init_w = linear_start(init_model, spec, None, problem.n_features, params.bias)

    weights = problem.weights
    more = {} if weights is None else {"weights": weights}

    def solve(s, p, w0):
        fit = s.load() if fit_for is None else fit_for(s)
        return fit(indptr, indices, data, y, n_cols, params.C, params.C, p, init_w=w0,
                   callback=cb, **more)

    t0 = time.perf_counter()
    res = train_one(spec, solve, params, init_w, weighted=weights is not None)
    elapsed = time.perf_counter() - t0
    model = LinearModel(solver_type=spec.liblinear_type, labels=None,
                        nr_feature=problem.n_features, bias=float(params.bias), w=res.w,
                        rho=res.extra.get("rho"))
    label = 1.0
    model.report = {"solver": spec.name, "train_time": elapsed,
                    "classes": [res.as_report(label)],
                    "params": {"C": params.C, "eps": params.eps, "bias": params.bias}}
    return model
