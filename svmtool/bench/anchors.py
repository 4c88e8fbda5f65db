"""Runners: svmtool's solvers (discovered from the registry) and the anchors they are compared with.

A runner has three steps, and the harness times only the middle one:

* ``prepare(data)``: untimed conversion of the data to what the tool eats (LIBLINEAR's
  ``problem``, a scipy matrix, a text file for an external command);
* ``fit(state, C, eps, cap=None, callback=None)``: one training run, the timed region;
* ``evaluate(state, raw, data)``: untimed; returns what the harness needs to compute the
  objective itself (``W`` and the label of every column for a linear model; decision values,
  support-vector coefficients and offset for a kernel model) and the test predictions.

``group`` names the optimisation problem a runner solves (``hinge``: 1/2 w'w + C sum
max(0, 1 - y w'x); ``squared_hinge``; ``logistic``; ``kernel``: the hinge loss in a kernel's
feature space), so that the runs solving the same problem share a row group and a best objective.
``cap`` is the knob the trace replays turn: ``"max_iter"`` (outer iterations) or ``"eps"``.

Anchors are used only when their package is installed (liblinear-official, libsvm-official,
scikit-learn) or, for ``--external``, when the command template is given.
"""

import ctypes
import importlib.util
import os
import re
import shlex
import subprocess
import warnings
from dataclasses import dataclass, field, replace
from typing import Optional

import numpy as np

from svmtool import api
from svmtool.labels import class_index, class_weights, group_classes
from svmtool.problem import with_bias
GROUP_TITLES = {
    "hinge": "L1-loss (hinge) SVM: 1/2 w'w + C sum max(0, 1 - y w'x)",
    "squared_hinge": "L2-loss SVM: 1/2 w'w + C sum max(0, 1 - y w'x)^2",
    "logistic": "logistic regression: 1/2 w'w + C sum log(1 + exp(-y w'x))",
    "kernel": ("kernel SVM (hinge loss in feature space): 1/2 |w|^2 + C sum max(0, 1 - y f(x)); "
               "LIBSVM and SVC also fit an unregularised offset b (one more free variable), so "
               "their optimum can be lower"),
    "l1_squared_hinge": "L1-regularised L2-loss SVM: |w|_1 + C sum max(0, 1 - y w'x)^2",
    "l1_logistic": "L1-regularised logistic regression: |w|_1 + C sum log(1 + exp(-y w'x))",
    "svr_squared": "L2-loss SVR: 1/2 w'w + C sum max(0, |w'x - y| - p)^2 (p = 0.1)",
    "svr": "L1-loss SVR: 1/2 w'w + C sum max(0, |w'x - y| - p) (p = 0.1)",
    "own": "other problems (objective as the solver reports it)",
}

_TYPE_LOSS = {"L2R_L1LOSS_SVC_DUAL": "hinge", "L2R_L2LOSS_SVC_DUAL": "squared_hinge",
              "L2R_L2LOSS_SVC": "squared_hinge", "L2R_LR": "logistic",
              "L2R_LR_DUAL": "logistic", "L1R_L2LOSS_SVC": "l1_squared_hinge",
              "L1R_LR": "l1_logistic", "L2R_L2LOSS_SVR": "svr_squared",
              "L2R_L2LOSS_SVR_DUAL": "svr_squared", "L2R_L1LOSS_SVR_DUAL": "svr"}
# the groups whose models are one weight vector fitted to real targets (no labels)
REGRESSION_GROUPS = ("svr_squared", "svr")
_KW_LOSS = {"l1": "hinge", "l2": "squared_hinge", "lr": "logistic", "hinge": "hinge",
            "squared_hinge": "squared_hinge", "logistic": "logistic"}


def have(package):
    return importlib.util.find_spec(package) is not None


def spec_group(spec):
    """The problem a registry spec solves (its row group)."""
    if spec.kind == "kernel":
        return "kernel"
    if spec.kind == "single" and spec.task == "regression":
        return _TYPE_LOSS.get(spec.liblinear_type, "own")
    if spec.kind != "binary":
        return "own"
    kw = dict(spec.kwargs)
    if "loss" in kw and kw["loss"] in _KW_LOSS:
        return _KW_LOSS[kw["loss"]]
    return _TYPE_LOSS.get(spec.liblinear_type, "own")


def registry_specs():
    """Every distinct solver of the registry, in registration order."""
    from svmtool.solvers import REGISTRY

    seen, out = set(), []
    for spec in REGISTRY.values():
        if spec.name not in seen:
            seen.add(spec.name)
            out.append(spec)
    return out


@dataclass
class Evaluation:
    iterations: Optional[int] = None
    W: Optional[np.ndarray] = None              # linear: (n_cols, nr_w)
    col_labels: Optional[np.ndarray] = None     # label each column of W scores as positive
    kernel: Optional[dict] = None               # see harness.kernel_objective
    test_pred: Optional[np.ndarray] = None      # kernel/other runners predict themselves
    own_objective: Optional[float] = None       # as the solver reports it, for the record
    extra: dict = field(default_factory=dict)


class Runner:
    name = "?"
    group = "own"
    source = "anchor"
    cap = None              # "max_iter" | "eps" | None: what the trace replays turn
    default_eps = None
    time_from_outside = False
    counterpart = None      # the svmtool solver an anchor is paired with in the ratios

    def prepare(self, data):
        return None

    def fit(self, state, C, eps, cap=None, callback=None):
        raise NotImplementedError

    def evaluate(self, state, raw, data):
        raise NotImplementedError

    def describe(self):
        return self.name


# --- svmtool ------------------------------------------------------------------------------------

class SvmtoolRunner(Runner):
    """One registry solver through the public API (api.train), as a user runs it."""

    source = "svmtool"

    def __init__(self, spec, bias=-1.0, kernel_opts=None, threads=None):
        self.spec = spec
        self.name = spec.name
        self.group = spec_group(spec)
        self.default_eps = spec.default_eps
        self.bias = -1.0 if spec.kind == "kernel" else float(bias)
        self.kernel_opts = dict(kernel_opts or {})
        self.threads = threads
        if spec.kind == "binary" and self.group != "own":
            self.cap = "max_iter"
        elif spec.kind == "kernel":
            self.cap = "eps"

    def _params(self, C, eps, max_iter=None):
        from svmtool.params import KernelParams, TrainParams

        kernel = KernelParams(**self.kernel_opts) if self.spec.kind == "kernel" else KernelParams()
        return TrainParams(solver=self.spec.name, C=float(C), eps=eps, bias=self.bias,
                           max_iter=max_iter, threads=self.threads, kernel=kernel)

    def fit(self, state, C, eps, cap=None, callback=None):
        problem = state
        if cap is not None and self.cap == "max_iter":
            return self._fit_direct(problem, self._params(C, eps, int(cap)), callback)
        if cap is not None and self.cap == "eps":
            eps = cap
        return api.train(problem, self._params(C, eps), callback=callback)

    def prepare(self, data):
        return data.train

    def _fit_direct(self, problem, params, callback):
        """The API's one-vs-rest loop without LIBLINEAR's -s 1 -> -s 2 rescue, so that a capped
        run stops where the cap says (used only for the trace replays)."""
        if params.eps is None:
            params = replace(params, eps=self.spec.default_eps)
        fit = self.spec.load()
        labels, _, _, _ = group_classes(problem.y)
        cls = class_index(problem.y, labels)
        indptr, indices, data, n_cols = with_bias(problem, params.bias)
        wc = class_weights(params, labels)
        tasks = ([(0, wc[0], wc[1])] if len(labels) == 2
                 else [(i, wc[i], params.C) for i in range(len(labels))])
        W = np.zeros((n_cols, len(tasks)))
        its = 0
        for col, (i, cp, cn) in enumerate(tasks):
            yb = np.where(cls == i, 1.0, -1.0)
            cb = None if callback is None else (lambda it, info, _i=i: callback(_i, it, info))
            res = fit(indptr, indices, data, yb, n_cols, cp, cn, params, callback=cb)
            W[:, col] = res.w
            its += int(res.iterations)
        col_labels = labels[:1] if len(labels) == 2 else labels
        return ("direct", W, col_labels, its)

    def evaluate(self, state, raw, data):
        if isinstance(raw, tuple) and raw[0] == "direct":
            _, W, col_labels, its = raw
            return Evaluation(iterations=its, W=W, col_labels=col_labels)
        model = raw
        rep = getattr(model, "report", {}) or {}
        classes = rep.get("classes", [])
        # after LIBLINEAR's -s 1 -> -s 2 rescue the report counts both (as LIBLINEAR prints)
        its = (sum(int(c.get("iterations", 0)) + int(c.get("dual_iterations") or 0)
                   for c in classes) if classes else None)
        own = (sum(float(c.get("primal", np.nan)) for c in classes) if classes else None)
        ev = Evaluation(iterations=its, own_objective=own)
        if self.spec.kind == "kernel":
            ev.kernel = _svmtool_kernel_terms(model, data)
            if data.test is not None:
                ev.test_pred = api.predict(model, data.test)[0]
        elif self.group == "own":
            if data.test is not None:
                ev.test_pred = api.predict(model, data.test)[0]
        elif self.group in REGRESSION_GROUPS:
            ev.W = model.w
            ev.col_labels = np.array([np.nan])     # no labels: the targets are y itself
        else:
            ev.W = model.w
            ev.col_labels = model.labels[:1] if len(model.labels) == 2 else model.labels
        return ev


def _svmtool_kernel_terms(model, data):
    if model.labels is None or len(model.labels) != 2:
        return None
    dec = model.decision_function(data.train)[:, 0]
    coef = model.sv_coef[0]
    f_sv = model.decision_function(model.sv_rows)[:, 0] if len(coef) else np.zeros(0)
    return {"dec": dec, "pos": float(model.labels[0]), "coef": coef, "f_sv": f_sv,
            "offset": -float(model.rho[0])}


# --- LIBLINEAR (liblinear-official) -------------------------------------------------------------

class LiblinearRunner(Runner):
    """liblinear-official's C train() on a problem built beforehand (srand(1) before each run,
    so every run repeats a fresh process's sequence)."""

    cap = "eps"

    def __init__(self, s, group, default_eps, counterpart=None):
        self.counterpart = counterpart      # the svmtool solver of the same -s number
        self.s = int(s)
        self.name = f"liblinear -s {self.s}"
        self.group = group
        self.default_eps = default_eps
        self._messages = []

    def prepare(self, data):
        from liblinear import liblinear as ll

        self.ll = ll
        self.libc = ctypes.CDLL(None)
        self._cb = ll.PRINT_STRING_FUN(lambda s: self._messages.append(s.decode()))
        return ll.problem(data.y, data.Xb, -1)   # the bias column is already in Xb

    def fit(self, state, C, eps, cap=None, callback=None, capture=False):
        ll = self.ll
        e = cap if cap is not None else (eps if eps is not None else self.default_eps)
        param = ll.parameter(f"-s {self.s} -c {C!r} -e {e!r}" + ("" if capture else " -q"))
        if capture:
            self._messages = []
            ll.liblinear.set_print_string_function(self._cb)
        self.libc.srand(1)
        m = ll.liblinear.train(state, param)
        model = ll.toPyModel(m)
        if capture:
            ll.liblinear.set_print_string_function(ll.ctypes_print_null)
        return model

    def iterations_of_messages(self):
        text = "".join(self._messages)
        found = [int(x) for x in re.findall(r"#iter = (\d+)", text)]
        newton = len(re.findall(r"^(?:iter|newton iter)\s*\d+", text, flags=re.M))
        return (sum(found) + newton) if (found or newton) else None

    def evaluate(self, state, raw, data):
        model = raw
        nr_class = model.get_nr_class()
        nr_w = 1 if nr_class == 2 else nr_class
        n = model.nr_feature + (1 if model.bias >= 0 else 0)
        if self.group in REGRESSION_GROUPS:
            w = np.ctypeslib.as_array(model.w, (n,)).reshape(n, 1).copy()
            return Evaluation(W=w, col_labels=np.array([np.nan]))
        w = np.ctypeslib.as_array(model.w, (n * nr_w,)).reshape(n, nr_w).copy()
        labels = np.asarray(model.get_labels(), dtype=float)
        return Evaluation(W=w, col_labels=labels[:1] if nr_class == 2 else labels)


# --- scikit-learn ---------------------------------------------------------------------------------

class SklearnLinearSVC(Runner):
    cap = "max_iter"

    def __init__(self, loss):
        self.loss = loss
        self.group = "hinge" if loss == "hinge" else "squared_hinge"
        self.name = f"sklearn LinearSVC({loss})"
        self.default_eps = 0.1      # LIBLINEAR's dual default (LinearSVC's own is 1e-4)

    def prepare(self, data):
        import sklearn.svm  # noqa: F401  (the import is not part of the warm-up)

        return data

    def fit(self, state, C, eps, cap=None, callback=None):
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.svm import LinearSVC

        clf = LinearSVC(loss=self.loss, dual=True, C=C, fit_intercept=False,
                        tol=eps if eps is not None else self.default_eps,
                        max_iter=int(cap) if cap is not None else 1000, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(state.Xb, state.y)
        return clf

    def evaluate(self, state, raw, data):
        return _sklearn_linear_eval(raw)


class SklearnSGD(Runner):
    """SGDClassifier(hinge): alpha/2 |w|^2 + mean hinge, i.e. alpha = 1 / (n C)."""

    cap = "max_iter"
    group = "hinge"
    name = "sklearn SGDClassifier(hinge)"
    default_eps = 1e-3

    def prepare(self, data):
        import sklearn.linear_model  # noqa: F401

        return data

    def fit(self, state, C, eps, cap=None, callback=None):
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.linear_model import SGDClassifier

        n = state.Xb.shape[0]
        clf = SGDClassifier(loss="hinge", alpha=1.0 / (n * C), fit_intercept=False,
                            tol=None if cap is not None else
                            (eps if eps is not None else self.default_eps),
                            max_iter=int(cap) if cap is not None else 1000, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(state.Xb, state.y)
        return clf

    def evaluate(self, state, raw, data):
        return _sklearn_linear_eval(raw)


def _sklearn_linear_eval(clf):
    classes = np.asarray(clf.classes_, dtype=float)
    W = np.asarray(clf.coef_, dtype=float).T.copy()
    col_labels = classes[1:2] if len(classes) == 2 else classes
    its = clf.n_iter_
    its = int(np.max(its)) if np.ndim(its) else int(its)
    return Evaluation(iterations=its, W=W, col_labels=col_labels)


class SklearnSVC(Runner):
    cap = "eps"
    group = "kernel"
    name = "sklearn SVC"
    default_eps = 1e-3

    def __init__(self, kernel_opts):
        self.kernel_opts = kernel_opts

    def prepare(self, data):
        import sklearn.svm  # noqa: F401

        return data

    def fit(self, state, C, eps, cap=None, callback=None):
        from sklearn.svm import SVC

        k = self.kernel_opts
        clf = SVC(C=C, kernel={0: "linear", 1: "poly", 2: "rbf", 3: "sigmoid"}[k["kernel_type"]],
                  gamma=k["gamma"], degree=k.get("degree", 3), coef0=k.get("coef0", 0.0),
                  tol=cap if cap is not None else (eps if eps is not None else self.default_eps),
                  cache_size=100, shrinking=True)
        clf.fit(state.X, state.y)
        return clf

    def evaluate(self, state, raw, data):
        clf = raw
        ev = Evaluation(iterations=int(np.sum(getattr(clf, "n_iter_", 0))) or None)
        if len(clf.classes_) == 2:
            dec = clf.decision_function(data.X)
            # sklearn: positive class is classes_[1]; dual_coef_ = y_i alpha_i with that sign
            ev.kernel = {"dec": dec, "pos": float(clf.classes_[1]), "coef": clf.dual_coef_[0],
                         "f_sv": dec[clf.support_], "offset": float(clf.intercept_[0])}
        if data.test is not None:
            ev.test_pred = clf.predict(data.Xt_raw)
        return ev


# --- LIBSVM (libsvm-official) -------------------------------------------------------------------

class LibsvmRunner(Runner):
    cap = "eps"
    group = "kernel"
    name = "libsvm"
    default_eps = 1e-3

    def __init__(self, kernel_opts):
        self.kernel_opts = kernel_opts

    def prepare(self, data):
        from libsvm import svm, svmutil

        self._messages = []
        self._cb = svm.PRINT_STRING_FUN(lambda s: self._messages.append(s.decode()))
        return svmutil.svm_problem(data.y, data.X)

    def fit(self, state, C, eps, cap=None, callback=None, capture=False):
        from libsvm import svm, svmutil

        k = self.kernel_opts
        e = cap if cap is not None else (eps if eps is not None else self.default_eps)
        opts = (f"-s 0 -t {k['kernel_type']} -g {k['gamma']!r} -d {k.get('degree', 3)} "
                f"-r {k.get('coef0', 0.0)!r} -c {C!r} -e {e!r} -m 100"
                + ("" if capture else " -q"))
        param = svmutil.svm_parameter(opts)
        if capture:                 # svm_train installs param.print_func itself
            self._messages = []
            param.print_func = self._cb
        try:
            return svmutil.svm_train(state, param)
        finally:
            if capture:
                svm.libsvm.svm_set_print_string_function(svm.ctypes_print_null)

    def iterations_of_messages(self):
        found = [int(x) for x in re.findall(r"#iter = (\d+)", "".join(self._messages))]
        return sum(found) if found else None

    def evaluate(self, state, raw, data):
        from libsvm import svmutil

        m = raw
        ev = Evaluation()
        labels = m.get_labels()
        if len(labels) == 2:
            _, _, dec = svmutil.svm_predict(data.y, data.X, m, "-q")
            dec = np.asarray(dec, dtype=float)[:, 0]
            sv = np.asarray(m.get_sv_indices(), dtype=np.int64) - 1
            coef = np.asarray([c[0] for c in m.get_sv_coef()], dtype=float)
            ev.kernel = {"dec": dec, "pos": float(labels[0]), "coef": coef, "f_sv": dec[sv],
                         "offset": -float(m.rho[0])}
        if data.test is not None:
            pred, _, _ = svmutil.svm_predict(data.yt, data.Xt_raw, m, "-q")
            ev.test_pred = np.asarray(pred, dtype=float)
        return ev


# --- an external command ------------------------------------------------------------------------

class ExternalRunner(Runner):
    """Any command line, timed from outside (wall time of the child process).

    Placeholders: {train} {test} {model} {predictions} {c} (C as here) {perf_c} (SVMperf's C =
    C * n / 100) {eps} {eps_percent} (100 eps) {n}.  Accuracy from ``predict_template``'s
    predictions file: one value per line, a label, or a score whose sign picks the class of a
    binary problem.
    """

    cap = None
    time_from_outside = True

    def __init__(self, template, predict_template=None, group="hinge", name=None):
        self.template = template
        self.predict_template = predict_template
        self.group = group
        self.name = name or "external " + shlex.split(template)[0].rsplit("/", 1)[-1]
        self.default_eps = 0.001

    def prepare(self, data):
        import tempfile

        tmp = tempfile.mkdtemp(prefix="svmtool-bench-")
        train = data.train_text(os.path.join(tmp, "train.txt"))
        test = data.test_text(os.path.join(tmp, "test.txt")) if data.test is not None else ""
        return {"tmp": tmp, "train": train, "test": test, "n": data.n}

    def _fields(self, state, C, eps):
        e = eps if eps is not None else self.default_eps
        return {"train": state["train"], "test": state["test"],
                "model": os.path.join(state["tmp"], "model"),
                "predictions": os.path.join(state["tmp"], "predictions"),
                "c": repr(float(C)), "perf_c": repr(float(C) * state["n"] / 100.0),
                "eps": repr(float(e)), "eps_percent": repr(100.0 * float(e)),
                "n": str(state["n"])}

    def fit(self, state, C, eps, cap=None, callback=None):
        cmd = self.template.format(**self._fields(state, C, eps))
        out = subprocess.run(cmd, shell=True, capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"external command failed ({out.returncode}): {cmd}\n"
                               f"{out.stderr.strip()[-500:]}")
        return (C, eps, out.stdout)

    def evaluate(self, state, raw, data):
        C, eps, stdout = raw
        ev = Evaluation()
        m = re.findall(r"(?:Number of iterations|#iter =|iterations)\D*(\d+)", stdout)
        if m:
            ev.iterations = int(m[-1])
        if self.predict_template and data.test is not None:
            f = self._fields(state, C, eps)
            cmd = self.predict_template.format(**f)
            out = subprocess.run(cmd, shell=True, capture_output=True, text=True)
            if out.returncode == 0 and os.path.exists(f["predictions"]):
                vals = np.loadtxt(f["predictions"], ndmin=2)[:, 0]
                labels = np.unique(data.y)
                if not np.all(np.isin(vals, labels)) and len(labels) == 2:
                    pos, neg = (1.0, -1.0) if set(labels) == {-1.0, 1.0} else (labels[1], labels[0])
                    vals = np.where(vals > 0, pos, neg)
                ev.test_pred = vals
        return ev


# --- choosing the runners -----------------------------------------------------------------------

def kernel_defaults(n_features, gamma=None, kernel_type=2):
    return {"kernel_type": int(kernel_type),
            "gamma": float(gamma) if gamma is not None else 1.0 / max(1, n_features),
            "degree": 3, "coef0": 0.0}


def select_solvers(names, has_qid=False):
    """Registry specs for ``names`` (a list, or None: every linear solver of the registry, plus
    the ranking ones when the data have query ids).  Unknown names raise ParameterError."""
    from svmtool.solvers import get_spec

    if names:
        out, seen = [], set()
        for n in names:
            if n == "all":
                specs = registry_specs()
            else:
                specs = [get_spec(n)]
            for s in specs:
                if s.name not in seen:
                    seen.add(s.name)
                    out.append(s)
        return out
    return [s for s in registry_specs()
            if s.kind in ("binary", "multiclass") or (s.kind == "ranking" and has_qid)]


def build_runners(specs, against, bias, kernel_opts, external=None, external_predict=None,
                  external_group="hinge", threads=None):
    """svmtool runners for ``specs`` and the anchors that solve one of their problems.

    Returns (runners, notes): notes say which anchors were skipped and why."""
    runners = [SvmtoolRunner(s, bias=bias, kernel_opts=kernel_opts, threads=threads)
               for s in specs]
    groups = {r.group for r in runners}
    against = [a.strip().lower() for a in (against or []) if a.strip()]
    notes = []
    from svmtool.solvers import REGISTRY

    if "liblinear" in against:
        if not have("liblinear"):
            notes.append("liblinear anchors skipped: pip install liblinear-official")
        else:
            for s in (1, 2, 3, 0, 5, 6, 7, 11, 12, 13):
                spec = REGISTRY.get(str(s))
                g = spec_group(spec) if spec is not None else None
                if g in groups:
                    runners.append(LiblinearRunner(s, g, spec.default_eps, spec.name))
    if "sklearn" in against:
        if not have("sklearn"):
            notes.append("scikit-learn anchors skipped: pip install scikit-learn")
        else:
            if "hinge" in groups:
                runners.append(SklearnLinearSVC("hinge"))
            if "squared_hinge" in groups:
                runners.append(SklearnLinearSVC("squared_hinge"))
            if "hinge" in groups:
                runners.append(SklearnSGD())
            if "kernel" in groups:
                runners.append(SklearnSVC(kernel_opts))
    if "libsvm" in against and "kernel" in groups:
        if not have("libsvm"):
            notes.append("libsvm anchor skipped: pip install libsvm-official")
        else:
            runners.append(LibsvmRunner(kernel_opts))
    if external:
        runners.append(ExternalRunner(external, external_predict, group=external_group))
    return runners, notes
