"""What every runner is: the three steps the harness drives, what ``evaluate`` hands back, and the
optimisation problems (row groups) runs are compared within.

A runner has three steps, and the harness times only the middle one:

* ``prepare(data)``: untimed conversion of the data to what the tool eats (LIBLINEAR's
  ``problem``, a scipy matrix, a text file for a command);
* ``fit(state, C, eps, cap=None, callback=None)``: one training run, the timed region;
* ``evaluate(state, raw, data)``: untimed; returns what the harness needs to compute the
  objective itself (``W`` and the label of every column for a linear model; decision values,
  support-vector coefficients and offset for a kernel model) and the test predictions.

``group`` names the optimisation problem a runner solves (``hinge``: 1/2 w'w + C sum
max(0, 1 - y w'x); ``squared_hinge``; ``logistic``; ``kernel``: the hinge loss in a kernel's
feature space; ...), so that the runs solving the same problem share a row group and a best
objective.  ``cap`` is the knob the trace replays turn: ``"max_iter"`` (outer iterations) or
``"eps"``.
"""

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

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

TYPE_LOSS = {"L2R_L1LOSS_SVC_DUAL": "hinge", "L2R_L2LOSS_SVC_DUAL": "squared_hinge",
             "L2R_L2LOSS_SVC": "squared_hinge", "L2R_LR": "logistic",
             "L2R_LR_DUAL": "logistic", "L1R_L2LOSS_SVC": "l1_squared_hinge",
             "L1R_LR": "l1_logistic", "L2R_L2LOSS_SVR": "svr_squared",
             "L2R_L2LOSS_SVR_DUAL": "svr_squared", "L2R_L1LOSS_SVR_DUAL": "svr"}
# the groups whose models are one weight vector fitted to real targets (no labels)
REGRESSION_GROUPS = ("svr_squared", "svr")
_KW_LOSS = {"l1": "hinge", "l2": "squared_hinge", "lr": "logistic", "hinge": "hinge",
            "squared_hinge": "squared_hinge", "logistic": "logistic"}


# environment variables the harness itself set for its in-process anchors (run.run_one's
# OMP_NUM_THREADS); the peers that pick their own threads run without them
HARNESS_ENV = set()


def have(package):
    from svmtool.errors import installed

    return installed(package)


def spec_group(spec):
    """The problem a registry spec solves (its row group)."""
    if spec.kind == "kernel":
        return "kernel"
    if spec.kind == "single" and spec.task == "regression":
        return TYPE_LOSS.get(spec.liblinear_type, "own")
    if spec.kind != "binary":
        return "own"
    kw = dict(spec.kwargs)
    if "loss" in kw and kw["loss"] in _KW_LOSS:
        return _KW_LOSS[kw["loss"]]
    return TYPE_LOSS.get(spec.liblinear_type, "own")


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

    def close(self, state):
        """Untimed clean-up after the last run on this data (temporary files)."""

    def describe(self):
        return self.name

    def tolerance(self, eps, cap=None):
        """The stopping tolerance of a run: the trace's cap when it turns eps, else eps, else
        the runner's default."""
        if cap is not None and self.cap == "eps":
            return cap
        return eps if eps is not None else self.default_eps


class KernelAnchor(Runner):
    """An in-process anchor of the kernel solvers: C-SVC with the bench run's kernel options
    (``kernel_type``, ``gamma``, ``degree``, ``coef0``), traced by its tolerance."""

    cap = "eps"
    group = "kernel"
    default_eps = 1e-3

    def __init__(self, kernel_opts):
        self.kernel_opts = kernel_opts


def kernel_terms(model, data):
    """An svmtool KernelModel's terms for harness.kernel_objective (binary models only; None for
    more classes and for DC-SVM's early-prediction model, which has no single expansion)."""
    if getattr(model, "sv_coef", None) is None or model.labels is None or len(model.labels) != 2:
        return None
    dec = model.decision_function(data.train)[:, 0]
    coef = model.sv_coef[0]
    f_sv = model.decision_function(model.sv_rows)[:, 0] if len(coef) else np.zeros(0)
    return {"dec": dec, "pos": float(model.labels[0]), "coef": coef, "f_sv": f_sv,
            "offset": -float(model.rho[0])}


def linear_evaluation(model, group):
    """An svmtool LinearModel (trained here, or read from a model file) as an Evaluation."""
    if group in REGRESSION_GROUPS:
        return Evaluation(W=model.w, col_labels=np.array([np.nan]))
    labels = model.labels
    return Evaluation(W=model.w, col_labels=labels[:1] if len(labels) == 2 else labels)
