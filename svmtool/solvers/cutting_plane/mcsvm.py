"""Crammer-Singer multi-class SVM by OCAS (``-s ocas-mc``; ``-s 4`` is solved by it).

LIBLINEAR's ``-s 4`` problem (Crammer & Singer 2001; per-example costs ``c_i`` = the weighted C of
the example's class, times its instance weight when the fit is given ``weights``; a row of
weight 0 takes no part)::

    min_W  F(W) = 1/2 sum_m |w_m|^2 + sum_i c_i max_m (1 - delta(m, y_i) + w_m'x_i - w_{y_i}'x_i).

The risk is a sum of maxima of linear functions, so OCAS applies as in the binary case (Franc &
Sonnenburg, JMLR 2009, the multi-class OCAS; Arnosti 2010 for the line searches):

* scores ``Z = X W`` (one block pass, K columns); the most violated label per row ``y*``
  (:func:`svmtool.engine.passes_cp.cs_cut_coef`) gives the cut ``R(W) >= <G, W> + b`` with
  ``G = X'V`` (``V[i, y*] = c_i``, ``V[i, y_i] = -c_i`` for rows whose ``y*`` is wrong) and
  ``b = sum of those c_i``: one block pass over the violators;
* the reduced QP, line search (``exact``: the kinks of every row's upper envelope of K lines,
  then the same search as in the binary case; ``gca2``/``tca``: O(nK) per evaluation),
  best-so-far point, cut near it, mu = 0 guard and stopping rule (relative gap ``-e``, default
  0.01) are those of :mod:`svmtool.solvers.cutting_plane.ocas`.

``W`` is kept flat (feature-major, ``W[j, m]`` at ``j K + m``) as LIBLINEAR's model file lays it
out; the result's ``w`` has shape ``(n_features, K)`` and the model is written as MCSVM_CS.
Dense cuts take ``n_features K`` numbers each: nothing for letter-like data, the bulk of the
memory on news20 (62,061 x 20 numbers per cut: there the run needs an order of magnitude more
memory than LIBLINEAR -s 4, and less time).
"""

import numpy as np

from svmtool.engine.passes_cp import CPOracle, cs_cut_coef, cs_risk_line
from svmtool.solvers.cutting_plane.linesearch import CSLine
from svmtool.solvers.cutting_plane.ocas import solve_with


class CSRisk:
    def __init__(self, oracle, cls, K, cost):
        self.oracle = oracle
        self.cls = np.ascontiguousarray(cls, dtype=np.int64)
        self.K = int(K)
        self.cost = np.ascontiguousarray(cost, dtype=np.float64)
        self.d = oracle.n_features
        self.dim = self.d * self.K
        self.scale = float(self.cost.sum())
        self._V = np.zeros((len(self.cls), self.K), dtype=np.float64)

    def zeros_scores(self):
        return np.zeros((len(self.cls), self.K), dtype=np.float64)

    def scores(self, w, out=None):
        return self.oracle.matmat(w.reshape(self.d, self.K))

    def risk(self, Z):
        return float(cs_risk_line(Z, Z, self.cls, self.cost, 0.0))

    def cut(self, Z):
        risk, off = cs_cut_coef(np.ascontiguousarray(Z), self.cls, self.cost, self._V)
        if off > 0:
            a = self.oracle.rmatmat(self._V).reshape(-1)
        else:
            a = np.zeros(self.dim, dtype=np.float64)
        return a, float(off), float(risk)

    def line(self, zb, zt, A, B, c0):
        return CSLine(np.ascontiguousarray(zb), np.ascontiguousarray(zt - zb), self.cls,
                      self.cost, A, B, c0)

    def step(self, zb, zt, mu):
        zd = zt - zb
        np.multiply(zd, mu, out=zd)
        np.add(zb, zd, out=zd)
        return zd

    def cut_point(self, zb, zt, lam):
        zt *= lam
        zc = (1.0 - lam) * zb
        zc += zt
        return zc


def fit(indptr, indices, data, y, n_features, weighted_c, params, init_w=None, callback=None,
        weights=None):
    """``y``: class indices 0..K-1 (floats or ints); ``weighted_c[k]``: C of class k;
    ``weights``: one instance weight a row (row i's cost ``weighted_c[y_i] W_i``), or None."""
    from svmtool.solvers.common import weighted

    weights = weighted.checked(weights, len(indptr) - 1)
    if weighted.has_zeros(weights):
        return weighted.fit_positive(fit, indptr, indices, data, y, weights, n_features,
                                     weighted_c, params, init_w=init_w, callback=callback)
    cls = np.asarray(y).astype(np.int64).reshape(-1)
    weighted_c = np.asarray(weighted_c, dtype=np.float64).reshape(-1)
    K = len(weighted_c)
    if cls.shape[0] != len(indptr) - 1:
        raise ValueError(f"{cls.shape[0]} labels for {len(indptr) - 1} rows")
    if cls.size and (cls.min() < 0 or cls.max() >= K):
        raise ValueError("class indices must lie in 0..K-1")
    if not np.all(weighted_c > 0):
        raise ValueError("every class needs C > 0")
    oracle = CPOracle(indptr, indices, data, n_features, params.threads)
    cost = weighted_c[cls] if weights is None else weighted_c[cls] * weights
    risk = CSRisk(oracle, cls, K, cost)
    if init_w is not None:
        init_w = np.asarray(init_w, dtype=np.float64).reshape(-1)
    res = solve_with(risk, params, init_w=init_w, callback=callback, name="ocas-mc")
    res.w = res.w.reshape(n_features, K)
    return res


def train_multiclass(problem, params, spec, callback=None, init_model=None):
    """The API's path for kind "multiclass": one solve over every class, an MCSVM_CS model."""
    import time

    from svmtool.labels import class_index, class_weights, group_classes
    from svmtool.models.linear import LinearModel
    from svmtool.problem import with_bias

    fit_fn = spec.load()
    labels = group_classes(problem.y)[0]
    cls = class_index(problem.y, labels)
    weighted_c = class_weights(params, labels)
    indptr, indices, data, n_cols = with_bias(problem, params.bias)
    cb = None
    if callback is not None:
        cb = (lambda it, info: callback(0, it, info))
    init_w = params.init_w
    if init_model is not None:
        from svmtool.solvers.common.warm import linear_start

        init_w = linear_start(init_model, spec, labels, problem.n_features, params.bias)
    more = {} if problem.weights is None else {"weights": problem.weights}
    t0 = time.perf_counter()
    res = fit_fn(indptr, indices, data, np.asarray(cls), n_cols, weighted_c, params,
                 init_w=init_w, callback=cb, **more)
    elapsed = time.perf_counter() - t0
    model = LinearModel(solver_type=spec.liblinear_type, labels=labels,
                        nr_feature=problem.n_features, bias=float(params.bias),
                        w=np.asarray(res.w).reshape(n_cols, len(labels)))
    model.report = {"solver": spec.name, "train_time": elapsed,
                    "classes": [res.as_report(labels[0])],
                    "params": {"C": params.C, "eps": params.eps, "bias": params.bias}}
    return model
