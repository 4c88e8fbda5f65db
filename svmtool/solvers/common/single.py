"""The API's driver for the solvers that fit ONE weight vector to the whole problem: support
vector regression (LIBLINEAR -s 11, 12, 13) and the one-class SVM (-s 21).

LIBLINEAR's ``train()`` does no class grouping for these: the rows keep the file's order (which
is what makes ``--liblinear-rng`` runs bit-identical), the labels are real-valued targets
(regression) or ignored (one-class), every row has the same cost ``C`` and class weights
(``-wLABEL``) mean nothing, so they are refused.  The model holds no labels (``nr_class 2``);
a one-class model carries ``rho``.

When -s 12 stops at its iteration cap, LIBLINEAR goes on with the primal Newton solver (-s 11)
from the same ``w`` with ``eps * 0.001``; so does this driver.
"""

import time
from dataclasses import replace

import numpy as np

from svmtool.errors import ParameterError
from svmtool.problem import with_bias


def train_single(problem, params, spec, callback=None, init_model=None, streaming_fit=None):
    """Train ``spec``'s solver on the whole problem; returns a LinearModel.  ``streaming_fit``
    (from the API, for --out-of-core) is a fit over the raw mapped arrays that appends the bias
    column itself."""
    from svmtool.models.linear import LinearModel

    if params.weights:
        what = "regression" if spec.task == "regression" else "one-class SVM"
        raise ParameterError(f"class weights (-wLABEL) do not apply to {what} (-s {spec.name}):"
                             f" there are no classes")
    if spec.task == "one-class" and params.bias >= 0:
        raise ParameterError("-s one-class takes no bias column (-B): its offset is rho, "
                             "as in LIBLINEAR")
    if streaming_fit is not None:
        indptr, indices, data = problem.indptr, problem.indices, problem.data
        n_cols = problem.n_features + (1 if params.bias >= 0 else 0)
        fit = streaming_fit
    else:
        indptr, indices, data, n_cols = with_bias(problem, params.bias)
        fit = spec.load()
    y = np.ascontiguousarray(problem.y, dtype=np.float64)
    cb = None if callback is None else (lambda it, info: callback(0, it, info))
    init_w = None if params.init_w is None else np.asarray(params.init_w).reshape(-1)
    if init_model is not None:
        from svmtool.solvers.common.warm import linear_start

        init_w = linear_start(init_model, spec, None, problem.n_features, params.bias)
    t0 = time.perf_counter()
    res = fit(indptr, indices, data, y, n_cols, params.C, params.C, params, init_w=init_w,
              callback=cb)
    if not res.converged and res.extra.get("liblinear_fallback") == "L2R_L2LOSS_SVR":
        from svmtool.solvers.newton.svr_newton import fit as newton_fit

        dual_eps = res.extra["eps"]
        p2 = replace(params, eps=dual_eps * 0.001, max_iter=None)
        out = newton_fit(indptr, indices, data, y, n_cols, params.C, params.C, p2,
                         init_w=res.w, callback=cb)
        out.extra["notice"] = (f"dual coordinate descent (-s 12) reached its iteration cap "
                               f"({res.iterations}); switched to the primal Newton solver (-s 11)"
                               f" with eps={dual_eps * 0.001:g}, as LIBLINEAR does")
        res = out
    elapsed = time.perf_counter() - t0
    model = LinearModel(solver_type=spec.liblinear_type, labels=None,
                        nr_feature=problem.n_features, bias=float(params.bias), w=res.w,
                        rho=res.extra.get("rho"))
    label = 1.0
    model.report = {"solver": spec.name, "train_time": elapsed,
                    "classes": [res.as_report(label)],
                    "params": {"C": params.C, "eps": params.eps, "bias": params.bias}}
    return model
