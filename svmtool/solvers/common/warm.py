"""Warm starts from an earlier model: the starting point of every solver family.

A nightly retrain sees yesterday's data with a few rows changed, so yesterday's model is nearly
today's solution.  What a solver can start from is said by its registry entry (``warm_start``):

* ``w`` (newton, lr, the cutting-plane family, ocas-mc, ordinal): the old weights, mapped onto the
  new problem by :func:`linear_start` -- columns by label (the same classes in another order are
  mapped, a binary model's sign flipped when the positive class changed), features by index
  (features the old model never saw start at 0, features the new data no longer has are
  dropped), and the bias weight rescaled so that ``bias * w_bias`` is unchanged (0 when the old
  model had no bias column);
* ``alpha`` of dual coordinate descent (dcd-l1, dcd-l2): derived from that ``w`` by
  :func:`dual_start`.  For the L2 loss the optimality conditions give
  ``alpha_i = 2 C_i max(0, 1 - y_i w'x_i)``, exact when ``w`` is the optimum of the same data;
  for the L1 loss a dual point is ``alpha_i = C_i`` where the margin is below 1 and 0 above it,
  the rows on the margin being the free ones (Tsai, Lin and Lin, "Incremental and decremental
  training for linear classification", KDD 2014, section 3).  The solver rebuilds ``w`` from
  this ``alpha``.  On the nightly scenario (a9a with a few of its rows replaced; measured by
  ``svmtool bench --suite warm-start``) no variant beat a cold start -- a model stopped at the
  default tolerance is far enough from the optimum that the margin alpha rebuilds a much
  longer ``w`` -- so ``DcdParams.warm_start`` defaults to ``"cold"``:
  the model is checked (kind, classes) and the dual solvers start from zero;
* ``alpha`` of the kernel solvers (kernel, dcsvm): :class:`KernelStart` gives every row of the new
  data that equals a support vector of the old model (by content: its indices and values) that
  vector's alpha in the pair; every other row starts at 0.

A model of another kind (a kernel model for a linear solver, a Crammer-Singer model for one-vs-rest,
a ranking model for a classifier, ...) or of another class set is refused with a
:class:`~svmtool.errors.ParameterError` naming both.
"""

import numpy as np

from svmtool.errors import ParameterError

# the one-vs-rest classifiers' model types: one is as good a start as another (the same w layout)
_OVR_TYPES = frozenset({"L2R_LR", "L2R_L2LOSS_SVC", "L2R_L2LOSS_SVC_DUAL",
                        "L2R_L1LOSS_SVC_DUAL", "L1R_L2LOSS_SVC", "L1R_LR", "L2R_LR_DUAL"})


def source_of(model):
    """How messages name a warm-start model: its file (``report["source"]``, set when the API
    loaded it) or "the initial model"."""
    report = getattr(model, "report", None) or {}
    return report.get("source", "the initial model")


def _what(model):
    kind = type(model).__name__
    if kind == "LinearModel":
        return f"a linear {model.solver_type} model"
    if kind == "KernelModel":
        return "a kernel (LIBSVM) model"
    if kind == "EarlyModel":
        return "a DC-SVM early-prediction model"
    return f"a {kind}"


def _fmt_labels(labels):
    return "{" + ", ".join(f"{v:g}" for v in labels) + "}"


def _refuse(model, name, need):
    raise ParameterError(f"--init-model {name}: {_what(model)} cannot start -s {need}")


def cold_only(spec):
    """The message of a solver that cannot start from a model (registry ``warm_start``), or
    None."""
    if not spec.warm_start:
        return f"-s {spec.name} cannot start from a model (--init-model)"
    return None


def check_kind(model, spec):
    """Refuse, before any data is read, a model that cannot start ``spec``'s solver."""
    name = source_of(model)
    kind = type(model).__name__
    if cold_only(spec):
        raise ParameterError(cold_only(spec))
    if spec.kind == "kernel":
        if kind != "KernelModel" or model.labels is None:
            _refuse(model, name, spec.name)
        return
    if kind != "LinearModel":
        _refuse(model, name, spec.name)
    if spec.task == "regression" and not model.is_regression():
        _refuse(model, name, spec.name)
    if spec.kind == "multiclass" and model.solver_type != "MCSVM_CS":
        _refuse(model, name, spec.name)
    if spec.kind == "binary" and model.solver_type not in _OVR_TYPES:
        _refuse(model, name, spec.name)


def class_map(old_labels, new_labels, name):
    """Index of every new label among the old ones; ParameterError for another class set."""
    old = [float(v) for v in np.asarray(old_labels, dtype=np.float64).reshape(-1)]
    new = [float(v) for v in np.asarray(new_labels, dtype=np.float64).reshape(-1)]
    if sorted(old) != sorted(new):
        raise ParameterError(f"--init-model {name}: its classes {_fmt_labels(old)} are not the "
                             f"training data's {_fmt_labels(new)}")
    return np.array([old.index(v) for v in new], dtype=np.int64)


def _feature_rows(W, old_nf, old_bias, new_nf, new_bias):
    """Rows of the old weights (features [, bias]) laid out for the new problem's columns."""
    n_cols = new_nf + (1 if new_bias >= 0 else 0)
    out = np.zeros((n_cols, W.shape[1]), dtype=np.float64)
    k = min(old_nf, new_nf)
    out[:k] = W[:k]
    if new_bias >= 0 and old_bias >= 0 and new_bias > 0:
        # the same contribution bias * w_bias to every decision value
        out[new_nf] = W[old_nf] * (old_bias / new_bias)
    return out


def linear_start(model, spec, labels, n_features, bias, name=None):
    """The starting ``w`` of the problem's solver from a linear ``model``.

    ``labels``: the classes of the new problem in the API's order (None for ranking);
    returns, by ``spec.kind``: ``binary`` -- an array (n_cols, n_tasks), one column per
    one-vs-rest task (one for two classes, whose positive class is ``labels[0]``);
    ``multiclass`` -- (n_cols, K) in the order of ``labels``; ``ranking`` -- (n_features,).
    """
    name = name or source_of(model)
    if type(model).__name__ != "LinearModel":
        _refuse(model, name, spec.name)
    W = np.asarray(model.w, dtype=np.float64)
    old_nf, old_bias = int(model.nr_feature), float(model.bias)
    if spec.kind == "ranking":
        if W.shape[1] != 1:
            raise ParameterError(f"--init-model {name}: a ranking starts from a model with one "
                                 f"weight vector; {_what(model)} has {W.shape[1]}")
        return _feature_rows(W, old_nf, old_bias, n_features, -1.0)[:, 0]
    if spec.task == "regression":
        if not model.is_regression() or W.shape[1] != 1:
            _refuse(model, name, spec.name)
        return _feature_rows(W, old_nf, old_bias, n_features, bias)[:, 0]
    if model.is_regression() or model.is_oneclass() or model.labels is None:
        _refuse(model, name, spec.name)
    if spec.kind == "multiclass":
        if model.solver_type != "MCSVM_CS":
            _refuse(model, name, spec.name)
        cols = class_map(model.labels, labels, name)
        return _feature_rows(W[:, cols], old_nf, old_bias, n_features, bias)
    if model.solver_type not in _OVR_TYPES:
        _refuse(model, name, spec.name)
    cols = class_map(model.labels, labels, name)
    if len(labels) == 2:
        # one column: positive class labels[0] for the new problem, model.labels[0] for the old
        col = W[:, :1] if cols[0] == 0 else -W[:, :1]
        return _feature_rows(col, old_nf, old_bias, n_features, bias)
    return _feature_rows(W[:, cols], old_nf, old_bias, n_features, bias)


def dual_start(margins, y, c, loss, variant="scaled", rebuild=None):
    """A starting alpha of dual CD from the margins ``y_i w'x_i`` of a warm-start ``w``.

    ``c``: the per-row costs C_i.  ``variant``:

    * ``"margin"`` -- the optimality conditions: L2 loss ``2 C_i max(0, 1 - margin)``, L1 loss
      ``C_i`` below the margin and 0 on or above it;
    * ``"scaled"`` -- that alpha times the step s >= 0 that minimises the dual along it,
      ``s = e'alpha / (|w(alpha)|^2 + alpha'D alpha)`` (clipped to the box for the L1 loss),
      which needs ``rebuild(v) = |sum_i v_i x_i|^2``: on a model that is not exactly optimal the
      margin alpha rebuilds a ``w`` far longer than the model's (a9a: 716 against 2.4), and the
      step pulls it back;
    * ``"clipped"`` -- L1 loss: the L2 formula clipped to [0, C_i];
    * ``"cold"`` -- zeros (for measuring).
    """
    slack = np.maximum(0.0, 1.0 - np.asarray(margins, dtype=np.float64))
    c = np.asarray(c, dtype=np.float64)
    if variant == "cold":
        return np.zeros_like(slack)
    if variant == "clipped":
        return np.minimum(2.0 * c * slack, c)
    alpha = 2.0 * c * slack if loss == "l2" else np.where(slack > 0.0, c, 0.0)
    if variant == "margin":
        return alpha
    if variant != "scaled":
        raise ValueError(f"unknown dual start variant {variant!r}")
    diag = np.zeros_like(c)
    if loss == "l2":                  # (a row of weight 0 has C_i = 0 and alpha_i = 0)
        np.divide(0.5, c, out=diag, where=c > 0)
    curv = float(rebuild(np.asarray(y) * alpha)) + float(alpha @ (diag * alpha))
    if not curv > 0:
        return alpha
    s = max(0.0, float(alpha.sum()) / curv)
    if loss == "l1":
        s = min(s, 1.0)
    return s * alpha


# -- kernel models --------------------------------------------------------------------------------

def dual_start_of(spec, variant, indptr, indices, data, yb, c_pos, c_neg, w, n_cols,
                  weights=None):
    """:func:`dual_start` for a binary dual solver's subproblem (labels ``yb``, costs ``c_pos``
    / ``c_neg``, times the instance ``weights`` when given: each row's own box) from the old
    model's ``w`` over the CSR arrays (bias column included); its loss from the registry entry
    (squared hinge: L2, else L1)."""
    margins = yb * _row_dots(indptr, indices, data, w)

    def rebuild(v):
        u = np.bincount(indices[indptr[0]:indptr[-1]], minlength=n_cols,
                        weights=data[indptr[0]:indptr[-1]] * np.repeat(
                            v, np.diff(np.asarray(indptr, dtype=np.int64))))
        return float(u @ u)

    loss = "l2" if spec.loss == "squared hinge" else "l1"
    cost = np.where(yb > 0, c_pos, c_neg)
    if weights is not None:
        cost = cost * np.asarray(weights, dtype=np.float64)
    return dual_start(margins, yb, cost, loss, variant, rebuild)


def _row_dots(indptr, indices, data, w):
    """x_i'w of every CSR row, in numpy (no numba import for a small warm-started run)."""
    n = len(indptr) - 1
    start = int(indptr[0])
    counts = np.diff(np.asarray(indptr, dtype=np.int64))
    rows = np.repeat(np.arange(n), counts)
    stop = int(indptr[-1])
    vals = data[start:stop] * w[indices[start:stop]]
    return np.bincount(rows, weights=vals, minlength=n)


def _row_key(indices, data):
    keep = data != 0.0
    return (np.ascontiguousarray(indices[keep], dtype=np.int64).tobytes()
            + b"|" + np.ascontiguousarray(data[keep], dtype=np.float64).tobytes())


class KernelStart:
    """The support vectors of an old kernel model, looked up by row content, per class pair."""

    def __init__(self, model, labels, name=None):
        name = name or source_of(model)
        kind = type(model).__name__
        if kind != "KernelModel" or model.labels is None:
            _refuse(model, name, "kernel/dcsvm")
        self.cls_map = class_map(model.labels, labels, name)      # new class -> old class
        self.old_K = len(model.labels)
        sv = model.sv_rows
        old_cls = np.repeat(np.arange(self.old_K), np.asarray(model.nr_sv, dtype=np.int64))
        self.coef = np.asarray(model.sv_coef, dtype=np.float64)
        # (content, old class) -> the old SVs with it, in file order: equal rows stay distinct,
        # the k-th new row of that content and class gets the k-th SV's alpha
        self.by_key = {}
        for s in range(sv.n_rows):
            a, b = int(sv.indptr[s]), int(sv.indptr[s + 1])
            key = (_row_key(sv.indices[a:b], sv.data[a:b]), int(old_cls[s]))
            self.by_key.setdefault(key, []).append(s)

    def _alpha_of(self, s, c, other):
        """alpha of old SV ``s`` (of old class c) in the old pair of classes {c, other}."""
        row = other - 1 if other > c else other
        return abs(float(self.coef[row, s]))

    def pair_alpha(self, X, rows_i, rows_j, i, j):
        """Starting alpha over the rows of new classes i (first) and j of the pair."""
        a, b = int(self.cls_map[i]), int(self.cls_map[j])
        out = np.zeros(len(rows_i) + len(rows_j), dtype=np.float64)
        used = {}
        for pos, (r, own, other) in enumerate(
                [(r, a, b) for r in rows_i] + [(r, b, a) for r in rows_j]):
            p, q = int(X.indptr[r]), int(X.indptr[r + 1])
            key = (_row_key(X.indices[p:q], X.data[p:q]), own)
            hits = self.by_key.get(key)
            k = used.get(key, 0)
            if hits and k < len(hits):
                out[pos] = self._alpha_of(hits[k], own, other)
                used[key] = k + 1
        return out
