"""What every svmtool estimator shares: turning ``X`` (an array, a sparse matrix, a path or a
svmtool Problem) into the Problem that :func:`svmtool.api.train` takes, the options every
solver reads (tol, max_iter, random_state, threads, memory, dask), warm starts, the training
report as scikit-learn's warnings and ``n_iter_``, and ``save``.

Classifiers train on label *codes*, never on the user's labels: with two classes -1 stands for
``classes_[0]`` and +1 for ``classes_[1]``, with more, ``k`` for ``classes_[k]``.  svmtool groups
a {-1, +1} problem with +1 first, so a binary model's decision value is already scikit-learn's
(positive means ``classes_[1]``); with more classes the model's columns (one-vs-rest) or pairs
(one-vs-one) are put in the order of ``classes_`` through the positions that
:meth:`ClassifierCodes._set_positions` records.  ``save`` writes the user's labels back into
the file, ``load`` turns them into codes again, so a model file means the same to the C
programs, to ``svmtool predict`` and to the estimator.
"""

import copy
import inspect
import numbers
import os
import sys
import warnings
from contextlib import contextmanager
from numbers import Integral, Real
from dataclasses import replace

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

import svmtool
from svmtool import api
from svmtool.engine.memory import mapped_file
from svmtool.errors import InputError
from svmtool.labels import class_labels
from svmtool.params import OPTIONS, Bound, OneOf, render, sklearn_name
from svmtool.problem import Problem

# problems of at most FINISH_ROWS rows are solved to FINISH_TOL when the solver gets there
# within its iteration budget (SvmtoolEstimator._exact_finish), whatever the estimator's tol
FINISH_ROWS = 2000
FINISH_TOL = 1e-10

# save(format=...): the formats a model kind can be written in, and what api.save_model calls them
MODEL_FORMATS = {
    "LinearModel": {"liblinear": None, "svmlight": "svmlight", "svmperf": "svmperf"},
    "KernelModel": {"libsvm": None, "svmlight": "svmlight", "svmperf": "svmperf"},
    "EarlyModel": {"early": None},
}


def keep_params(est, params):
    """What scikit-learn's ``__init__`` does: store every parameter as given (``locals()`` of
    the ``__init__``), validate nothing."""
    for name, value in params.items():
        if name != "self":
            setattr(est, name, value)


def is_path(X):
    return isinstance(X, (str, os.PathLike))


@contextmanager
def value_errors():
    """svmtool's input errors (bad parameters, unreadable files) as scikit-learn's ValueError; a
    parameter check's fields spelled as the estimators' parameters."""
    try:
        yield
    except InputError as e:
        template = getattr(e, "template", None)
        raise ValueError(str(e) if template is None else render(template, sklearn_name)) from e


def _constraint(name, default):
    """scikit-learn's constraint list of parameter ``name`` from its declaration, or
    "no_validation" when no declaration names it."""
    opt = next((o for o in OPTIONS if o.sklearn == name), None)
    if opt is None:
        return "no_validation"
    kind = Integral if opt.type is int else Real
    check = opt.check
    if isinstance(check, Bound):
        hi = None if check.hi == float("inf") else check.hi
        left = check.lo is not None and not check.lo_open
        right = hi is not None and not check.hi_open
        closed = {(True, True): "both", (True, False): "left", (False, True): "right",
                  (False, False): "neither"}[(left, right)]
        out = [Interval(kind, check.lo, hi, closed=closed)]
    elif isinstance(check, OneOf) and all(isinstance(c, str) for c in check.choices):
        out = [StrOptions(set(check.choices))]
    elif opt.type is None or opt.type is bool:
        out = ["boolean"]
    else:
        out = [{int: Integral, float: Real, str: str}.get(opt.type, "no_validation")]
    if default is None or opt.default is None:
        out.append(None)
    return out


def declared_values(est, owner):
    """{field: value} of the declared parameters of ``est`` in option group ``owner``."""
    out = {}
    for o in OPTIONS:
        if o.owner == owner and type(est).__name__ in o.estimators:
            v = getattr(est, o.sklearn)
            conv = bool if o.type is None else o.type if o.type in (int, float) else None
            out[o.attr] = v if v is None or conv is None else conv(v)
    return out


def declared_parameters(cls):
    """Give estimator ``cls`` the parameters the option declarations name it for
    (svmtool.params.OPTIONS, ``estimators``: their ``sklearn`` name and default) beside those
    of its own ``__init__`` (which keep_params only stores), and ``_parameter_constraints``:
    the declared constraint of each declared parameter, "no_validation" for the others."""
    sig = inspect.signature(cls.__init__)
    own = list(sig.parameters.values())
    extra = [inspect.Parameter(o.sklearn, inspect.Parameter.KEYWORD_ONLY, default=o.default)
             for o in OPTIONS if cls.__name__ in o.estimators and o.sklearn not in sig.parameters]
    params = own + extra
    positional = [p.name for p in own[1:] if p.kind == p.POSITIONAL_OR_KEYWORD]

    def __init__(self, *args, **kwargs):
        if len(args) > len(positional):
            raise TypeError(f"{cls.__name__}() takes {len(positional)} positional arguments")
        kwargs.update(zip(positional, args))
        for p in params[1:]:
            setattr(self, p.name, kwargs.pop(p.name, p.default))
        if kwargs:
            raise TypeError(f"{cls.__name__}() got an unexpected keyword argument "
                            f"{next(iter(kwargs))!r}")

    __init__.__signature__ = sig.replace(parameters=params)
    __init__.__doc__ = cls.__init__.__doc__
    __init__.__qualname__ = f"{cls.__name__}.__init__"
    cls.__init__ = __init__
    cls._parameter_constraints = {p.name: _constraint(p.name, p.default) for p in params[1:]}
    return cls


def seed_of(random_state):
    """svmtool's seed from scikit-learn's random_state (None: svmtool's default seed 1, so that
    every fit is deterministic)."""
    if random_state is None:
        return 1
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def canonical_csr(X):
    """A CSR matrix with sorted, unique column indices (``X`` itself when it has them)."""
    if not sp.issparse(X):
        return sp.csr_matrix(np.asarray(X, dtype=np.float64))
    if X.format != "csr":
        X = X.tocsr()
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def csr_problem(X, y, qid=None):
    """A Problem over the arrays of ``X`` (shared, not copied, when they already have svmtool's
    types: int32 column indices, float64 values)."""
    X = canonical_csr(X)
    wide = X.shape[1] > np.iinfo(np.int32).max
    return Problem(np.ascontiguousarray(X.indptr, dtype=np.int64),
                   np.ascontiguousarray(X.indices, dtype=np.int64 if wide else np.int32),
                   np.ascontiguousarray(X.data, dtype=np.float64),
                   np.ascontiguousarray(y, dtype=np.float64).reshape(-1), int(X.shape[1]),
                   qid=None if qid is None else np.ascontiguousarray(qid, dtype=np.int64))


def load_path(path, n_features=None):
    """A data file (svmlight text, a binary cache -- memory-mapped -- or a shard index)."""
    with value_errors():
        return svmtool.load_data(os.fspath(path), n_features=n_features)


def with_labels(problem, y, qid=None):
    """A shallow copy of ``problem`` (its arrays shared) with labels ``y`` (and ``qid``)."""
    out = copy.copy(problem)
    if y is not None:
        out.y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    if qid is not None:
        out.qid = np.ascontiguousarray(qid, dtype=np.int64).reshape(-1)
    return out


def with_sample_weight(problem, sample_weight):
    """``problem`` with ``sample_weight`` as its instance weights (row i's C times it; 0: the
    row takes no part); the problem as it is when None or all ones (a cache's or a file's own
    weights, if it has them, stay).  A ValueError for weights that are not one finite number >= 0 a row,
    or that come on top of the data's own weights (a cache's section or ``cost:`` tokens: the
    two are not multiplied, give them one way)."""
    if sample_weight is None:
        return problem
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 0:
        w = np.full(problem.n_rows, float(w))
    if w.shape != (problem.n_rows,):
        raise ValueError(f"sample_weight has shape {w.shape}, expected ({problem.n_rows},)")
    if not (np.all(np.isfinite(w)) and np.all(w >= 0)):
        raise ValueError("sample_weight must be finite numbers >= 0")
    if len(w) and not np.any(w > 0):
        raise ValueError("sample_weight: every weight is zero, no row to train on")
    if np.all(w == 1.0):
        return problem                # weights of 1 are no weights (any solver takes them)
    if problem.weights is not None:
        raise ValueError(f"{problem.source} has instance weights already (a cache's weights "
                         f"or cost: tokens): give them one way, not with sample_weight too")
    out = copy.copy(problem)
    out.weights = w
    return out


def report_classes(model):
    return [r for r in model.report.get("classes", []) if isinstance(r, dict)]


def iterations(model):
    """Outer iterations of every subproblem (one-vs-rest class, pair, or the one problem); a
    dual solver that went on in the primal at its cap (LIBLINEAR's fallback) counts both."""
    its = [int(r.get("iterations", 0)) + int(r.get("dual_iterations", 0) or 0)
           for r in report_classes(model)]
    return np.asarray(its if its else [0], dtype=np.int64)


class SvmtoolEstimator:
    """The machinery of every estimator here: data in, the common options, training through
    ``api.train``, warm starts, the report, model files.  Subclasses hold their parameters
    (scikit-learn's ``__init__``), ``fit`` and the decision functions."""

    def _finish_max_iter(self, problem):
        """The iteration cap of the fit to FINISH_TOL when the user set none (None: the
        solver's own)."""
        return None

    # ---- scikit-learn's contract ---------------------------------------------------------------
    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    # ---- data in ---------------------------------------------------------------------------------
    def _unsupervised_problem(self, X):
        """The problem of an estimator that ignores labels (one-class): zeros as labels."""
        if is_path(X) or isinstance(X, Problem):
            return self._training_problem(X, None, y_numeric=True)[0]
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64)
        return csr_problem(self._transform_train(X), np.zeros(X.shape[0]))

    def _training_problem(self, X, y, qid=None, y_numeric=False):
        """(problem, y): arrays are checked by scikit-learn's validate_data and shared with a
        Problem (whose labels are ``y`` for regression, to be set by a classifier); a path or
        an svmtool Problem is taken as svmtool reads it, labels and qid from the file unless
        given."""
        if is_path(X) or isinstance(X, Problem):
            problem = load_path(X) if is_path(X) else X
            if y is not None:
                y = np.asarray(y).reshape(-1)
                if len(y) != problem.n_rows:
                    raise ValueError(f"{len(y)} labels for {problem.n_rows} rows")
            if y is not None or qid is not None:
                problem = with_labels(problem, y if y_numeric else None, qid)
            self.n_features_in_ = int(problem.n_features)
            return problem, (problem.y if y is None else y)
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y "
                             f"is None")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64,
                             y_numeric=y_numeric)
        problem = csr_problem(self._transform_train(X), y if y_numeric else np.zeros(len(y)),
                              qid)
        return problem, y

    def _transform_train(self, X):
        return X

    def _transform_test(self, X):
        return X

    def _raw_decision(self, X):
        """The model's own decision values of the rows of ``X`` (its columns, its order)."""
        rows = self._test_rows(X)
        return self._model.decision_function(rows)

    def _test_rows(self, X):
        """What a model scores: the rows of ``X`` checked against the training data."""
        check_is_fitted(self)
        if isinstance(X, Problem):
            return X
        if is_path(X):
            return load_path(X)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        if sp.issparse(X):
            X = canonical_csr(X)
        return self._transform_test(X)

    # ---- the options every solver reads --------------------------------------------------------
    def _common_kwargs(self):
        kw = {"seed": seed_of(getattr(self, "random_state", None)),
              "threads": getattr(self, "threads", None)}
        tol = getattr(self, "tol", None)
        if tol is not None:
            kw["eps"] = float(tol)
        max_iter = getattr(self, "max_iter", None)
        if max_iter is not None and max_iter > 0:
            kw["max_iter"] = int(max_iter)
        for name in ("out_of_core", "memory_budget", "dask"):
            if getattr(self, name, None) is not None:
                kw[name] = getattr(self, name)
        return kw

    # ---- training ----------------------------------------------------------------------------
    def _previous(self):
        """(model, classes) of the previous fit when ``warm_start`` is set, else None."""
        if getattr(self, "warm_start", False) and hasattr(self, "_model"):
            return self._model, getattr(self, "classes_", None)
        return None

    def _start_model(self, init_model, previous, spec):
        """(model, classes) to warm-start from: ``init_model`` (a model, a model file or a
        fitted estimator), else the previous fit's model (``warm_start=True``; not for a solver
        that always starts cold).  ``classes`` maps the model's label codes to classes (None:
        the model holds the user's labels)."""
        if init_model is None:
            if previous is None or not spec.warm_start:
                return None, None
            return previous
        if isinstance(init_model, SvmtoolEstimator):
            check_is_fitted(init_model)
            return init_model._model, getattr(init_model, "classes_", None)
        if is_path(init_model):
            with value_errors():
                model = api.load_model(os.fspath(init_model))
            model.report["source"] = os.fspath(init_model)
            return model, None
        return init_model, None

    def _train(self, problem, kwargs, init_model=None):
        model = self._exact_finish(problem, kwargs, init_model)
        self.exact_finish_ = model is not None
        if model is None:
            with value_errors():
                model = api.train(problem, init_model=init_model, **kwargs)
        self._after_training(model)
        return model

    def _exact_finish(self, problem, kwargs, init_model):
        """A small problem's solution to ``FINISH_TOL`` (None: the problem is not small, the
        fit is out of core or on dask, or the solver did not reach that tolerance within its
        cap, and the caller fits at ``tol``).  At ``tol`` a solver stops short of the optimum
        at a point that depends on its path, so the same problem written differently (a row of
        weight k or the row repeated k times, the rows shuffled) gives models about ``tol``
        apart; at ``FINISH_TOL`` they agree to rounding.  The tight fit's warnings are raised
        only when its model is kept."""
        if problem.n_rows > FINISH_ROWS or kwargs.get("out_of_core") or kwargs.get("dask"):
            return None
        tight = dict(kwargs, eps=min(float(kwargs.get("eps", FINISH_TOL)), FINISH_TOL))
        if "max_iter" not in kwargs and self._finish_max_iter(problem) is not None:
            tight["max_iter"] = self._finish_max_iter(problem)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with value_errors():
                    model = api.train(problem, init_model=init_model, **tight)
            except ValueError:
                return None           # the fit at tol raises it again, in the user's words
        if any(r.get("converged") is False for r in report_classes(model)):
            return None
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return model

    def _after_training(self, model):
        reports = report_classes(model)
        if getattr(self, "verbose", 0):
            for r in reports:
                print(f"[svmtool {model.report.get('solver', '')}] label {r.get('label', 0):g}: "
                      f"{r.get('iterations')} iterations, primal {r.get('primal', np.nan):.8g}, "
                      f"{r.get('gap_kind', 'gap')} {r.get('gap', np.nan):.3g}", file=sys.stderr)
        stuck = [r for r in reports if r.get("converged") is False]
        if stuck:
            why = stuck[0].get("warning") or "the iteration cap was reached first"
            warnings.warn(f"{type(self).__name__}: {len(stuck)} of {len(reports)} subproblems "
                          f"stopped before tol was met ({why}); increase max_iter or tol",
                          ConvergenceWarning)
        self.n_iter_ = self._n_iter(model)

    def _n_iter(self, model):
        return int(iterations(model).max())

    # ---- model files -------------------------------------------------------------------------
    @property
    def model_(self):
        """The svmtool model (:mod:`svmtool.models`) with the user's class labels: the model
        ``save`` writes and ``svmtool predict`` reads."""
        check_is_fitted(self)
        return self._file_model(self._model)

    def _file_model(self, model):
        return model

    def save(self, path, format=None):
        """Write the model to ``path`` (``-``: stdout) as the C programs read it.

        ``format``: None (the model's own: LIBLINEAR's for linear models, LIBSVM's for kernel
        models, SVMperf's for ranking models, svmtool's for DC-SVM's early model), or one of
        "liblinear", "libsvm", "svmlight", "svmperf" that can hold the model."""
        model = self.model_
        kinds = MODEL_FORMATS[type(model).__name__]
        if format is not None and format not in kinds:
            raise ValueError(f"a {type(model).__name__} cannot be saved as {format!r}: choose "
                             f"one of {', '.join(kinds)}")
        with value_errors():
            api.save_model(model, os.fspath(path), None if format is None else kinds[format])
        return self


class ClassifierCodes:
    """Label codes and class order of the classifiers (see the module's docstring)."""

    def _encode_labels(self, y, problem=None):
        """Set ``classes_`` from ``y``; return the codes the model is trained on (float64), or
        None when ``y`` are the codes already (a file labelled -1/+1, or 0..K-1)."""
        if problem is not None and y is problem.y and mapped_file(y):
            # a memory-mapped label vector: grouped in chunks, a byte a row, not sorted whole
            labels = np.sort(class_labels(problem.y)[0])
            self.classes_ = labels
            y = problem.y
        else:
            check_classification_targets(y)
            self.classes_, _ = np.unique(y, return_inverse=True)
            labels = self.classes_
        K = len(self.classes_)
        if K < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least two classes; "
                             f"the data contain one class: {self.classes_[0]!r}")
        codes_now = (np.array([-1.0, 1.0]) if K == 2 else np.arange(K, dtype=np.float64))
        if labels.dtype.kind in "iuf" and np.array_equal(labels, codes_now) and \
                np.asarray(y).dtype.kind in "iuf":
            return None
        idx = np.searchsorted(self.classes_, np.asarray(y))
        return np.where(idx == 1, 1.0, -1.0) if K == 2 else idx.astype(np.float64)

    def _class_weights(self, y):
        """svmtool's ((code, factor), ...) of ``class_weight`` (a dict or "balanced")."""
        cw = getattr(self, "class_weight", None)
        if cw is None:
            return ()
        if isinstance(cw, str) and cw != "balanced":
            raise ValueError(f"class_weight must be a dict, 'balanced' or None (got {cw!r})")
        if isinstance(cw, dict):
            known = set(self.classes_.tolist())
            unknown = [c for c in cw if c not in known]
            if unknown:
                warnings.warn(f"class_weight names classes that y does not have: {unknown!r}")
            factors = [float(cw.get(c, 1.0)) for c in self.classes_.tolist()]
        else:
            factors = compute_class_weight(cw, classes=self.classes_, y=np.asarray(y))
        return tuple((code, float(f)) for code, f in zip(self.codes(), factors))

    def codes(self):
        K = len(self.classes_)
        return [-1.0, 1.0] if K == 2 else [float(k) for k in range(K)]

    def _set_positions(self, model):
        """``_pos[k]``: where class k is among the model's labels."""
        idx = code_index(model.labels, len(self.classes_))
        self._pos = np.empty(len(idx), dtype=np.intp)
        self._pos[idx] = np.arange(len(idx))

    def _recode(self, model, classes):
        """``model`` (its labels codes of ``classes``, or the user's labels when ``classes`` is
        None) with the codes of this fit's ``classes_``; ValueError for a label y lacks."""
        if model is None or model.labels is None:
            return model
        labels = np.asarray(model.labels, dtype=np.float64)
        if classes is not None:
            labels = np.asarray(classes)[code_index(labels, len(classes))]
        labels = np.asarray(labels)
        pos = np.searchsorted(self.classes_, labels)
        pos = np.minimum(pos, len(self.classes_) - 1)
        if not np.all(self.classes_[pos] == labels):
            raise ValueError(f"the start model's classes {labels!r} are not those of y "
                             f"{self.classes_!r}")
        codes = np.asarray(self.codes())[pos]
        return replace(model, labels=codes, report=model.report)

    def _file_model(self, model):
        """The model with the user's labels (needs integer class labels: a C int each)."""
        classes = self.classes_
        ok = classes.dtype.kind in "iub" or (
            classes.dtype.kind == "f" and np.all(classes == np.round(classes)))
        if not ok:
            raise ValueError(f"model files hold integer class labels; classes_ are "
                             f"{classes[:4]!r}: encode them as integers (LabelEncoder) first")
        idx = code_index(model.labels, len(classes))
        return replace(model, labels=classes[idx].astype(np.float64), report=model.report)

    def _code_model(self, model):
        """A model read from a file (the user's labels) with codes instead; sets classes_."""
        labels = np.asarray(model.labels, dtype=np.float64)
        self.classes_ = np.unique(labels)
        if len(self.classes_) == 2:
            codes = np.where(labels == self.classes_[1], 1.0, -1.0)
        else:
            codes = np.searchsorted(self.classes_, labels).astype(np.float64)
        return replace(model, labels=codes, report=model.report)


def code_index(codes, n_classes):
    """The class index of every label code (-1/+1 with two classes, 0..K-1 with more)."""
    codes = np.asarray(codes, dtype=np.float64)
    return (codes > 0).astype(np.intp) if n_classes == 2 else codes.astype(np.intp)
