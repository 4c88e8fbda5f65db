"""Solver registry and the result every solver returns.

A binary linear solver is a function

    fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None)
        -> SolverResult

over raw CSR arrays (see :mod:`svmtool.problem`), with ``y`` in {-1.0, +1.0}.  The bias column, if
any, is already part of the arrays (the API appends it).  ``params`` is a
:class:`svmtool.params.TrainParams`.  ``callback(iteration, info_dict)`` is called by the Python
driver once per outer iteration (progress bars, benchmark traces); it is never called from jitted
code.

The table below maps every name and LIBLINEAR number that ``-s`` accepts to a spec; the API picks
the solver from this one table.  Modules are imported only when a solver is used.
"""

from dataclasses import dataclass, field
from typing import Optional

import numpy as np


@dataclass
class SolverResult:
    w: np.ndarray                 # float64 weights, length n_features (bias column included)
    iterations: int               # outer iterations done
    primal: float                 # primal objective at w, in LIBLINEAR's convention
    gap: float                    # a gap or violation measure (see `gap_kind`)
    gap_kind: str                 # e.g. "duality gap", "max PG violation", "relative gap"
    converged: bool               # stopping rule met (False: iteration cap hit)
    dual: Optional[float] = None  # dual objective where the solver has one
    n_sv: Optional[int] = None    # support vectors (alpha > 0) where the solver has them
    alpha: Optional[np.ndarray] = None
    extra: dict = field(default_factory=dict)   # solver-specific counters and timings

    def as_report(self, label) -> dict:
        """What the CLI, ``--report`` and bench print of this result, for class ``label``."""
        r = {
            "label": float(label),
            "iterations": int(self.iterations),
            "primal": float(self.primal),
            "gap": float(self.gap),
            "gap_kind": self.gap_kind,
            "converged": bool(self.converged),
        }
        if self.dual is not None:
            r["dual"] = float(self.dual)
        if self.n_sv is not None:
            r["n_sv"] = int(self.n_sv)
        for k, v in self.extra.items():
            if isinstance(v, (int, float, str, bool)) or v is None:
                r[k] = v
        return r


@dataclass(frozen=True)
class SolverSpec:
    name: str                     # svmtool's name, e.g. "dcd-l2"
    liblinear_id: Optional[int]   # LIBLINEAR's -s number, when it has one
    liblinear_type: str           # solver_type written in LIBLINEAR's model file
    module: str                   # module holding `fit`
    function: str                 # name of the fit function in that module
    kwargs: tuple = ()            # fixed keyword arguments, e.g. (("loss", "l2"),)
    default_eps: float = 0.1
    description: str = ""
    kind: str = "binary"          # "binary": the API runs it per class (one-vs-rest);
                                  # "multiclass": it takes all classes at once (fit gets y with
                                  # class indices 0..K-1 and weighted_c per class);
                                  # "ranking": it takes the raw labels (and qid) as ranks

    def load(self):
        import functools
        import importlib

        fn = getattr(importlib.import_module(self.module), self.function)
        return functools.partial(fn, **dict(self.kwargs)) if self.kwargs else fn


REGISTRY = {}


def register(spec: SolverSpec, *aliases):
    REGISTRY[spec.name] = spec
    if spec.liblinear_id is not None:
        REGISTRY[str(spec.liblinear_id)] = spec
    for a in aliases:
        REGISTRY[a] = spec


register(SolverSpec("dcd-l2", 1, "L2R_L2LOSS_SVC_DUAL", "svmtool.solvers.dcd", "fit",
                    (("loss", "l2"),), 0.1,
                    "L2-regularised L2-loss SVM, dual coordinate descent (LIBLINEAR -s 1)"))
register(SolverSpec("dcd-l1", 3, "L2R_L1LOSS_SVC_DUAL", "svmtool.solvers.dcd", "fit",
                    (("loss", "l1"),), 0.1,
                    "L2-regularised L1-loss SVM, dual coordinate descent (LIBLINEAR -s 3)"))
# primal truncated Newton (svmtool.solvers.newton); -e: relative gradient norm, LIBLINEAR's rule
register(SolverSpec("lr", 0, "L2R_LR", "svmtool.solvers.newton", "fit", (("loss", "lr"),), 0.01,
                    "L2-regularised logistic regression, primal Newton-CG (LIBLINEAR -s 0)"))
register(SolverSpec("newton", 2, "L2R_L2LOSS_SVC", "svmtool.solvers.newton", "fit",
                    (("loss", "l2"),), 0.01,
                    "L2-regularised L2-loss SVM, primal Newton-CG (LIBLINEAR -s 2)"))

# cutting-plane family: the same L1-loss problem as -s 3, so models say L2R_L1LOSS_SVC_DUAL
register(SolverSpec("cp", None, "L2R_L1LOSS_SVC_DUAL", "svmtool.solvers.cutting_plane", "fit",
                    (), 0.001,
                    "L1-loss SVM, 1-slack cutting plane (Joachims 2006, SVMperf); -e: fraction "
                    "of training loss"))
register(SolverSpec("ocas", None, "L2R_L1LOSS_SVC_DUAL", "svmtool.solvers.ocas", "fit",
                    (), 0.01,
                    "L1-loss SVM, OCAS cutting plane with line search (--line-search); -e: "
                    "relative gap"))
register(SolverSpec("gca2", None, "L2R_L1LOSS_SVC_DUAL", "svmtool.solvers.ocas", "fit",
                    (("line_search", "gca2"),), 0.01,
                    "OCAS with Arnosti's grid-search line search (GCA2)"))
register(SolverSpec("tca", None, "L2R_L1LOSS_SVC_DUAL", "svmtool.solvers.ocas", "fit",
                    (("line_search", "tca"),), 0.01,
                    "OCAS with Arnosti's three-point line search (TCA)"))

register(SolverSpec("ordinal", None, "L2R_L1LOSS_SVR_DUAL", "svmtool.solvers.ordinal", "fit",
                    (), 0.001,
                    "ordinal regression / ROC-area SVM over pairs (Joachims 2006 Alg. 2; pairs "
                    "within each qid as SVMrank); -c per pair", kind="ranking"),
         "rank", "roc")

register(SolverSpec("ocas-mc", 4, "MCSVM_CS", "svmtool.solvers.mcsvm", "fit", (), 0.01,
                    "Crammer-Singer multi-class SVM (LIBLINEAR -s 4's problem) by OCAS; -e: "
                    "relative gap", kind="multiclass"))

# kernel SVMs (kind "kernel": the API hands the whole problem to svmtool.solvers.kernel_cd's
# one-vs-one driver, which calls `fit` per pair and returns a KernelModel in LIBSVM's format)
register(SolverSpec("kernel", None, "c_svc", "svmtool.solvers.kernel_cd", "fit", (), 1e-3,
                    "kernel SVM without bias (LIBSVM's -t -g -d -r -m), greedy dual coordinate "
                    "descent with shrinking; -e: max projected-gradient violation",
                    kind="kernel"))
register(SolverSpec("dcsvm", None, "c_svc", "svmtool.solvers.dcsvm", "fit", (), 1e-3,
                    "divide-and-conquer kernel SVM (Hsieh et al. 2014): --levels, --clusters, "
                    "--sample, --early; same problem as -s kernel",
                    kind="kernel"))

DEFAULT_SOLVER = "dcd-l2"


def get_spec(name) -> SolverSpec:
    from svmtool.errors import ParameterError

    spec = REGISTRY.get(str(name).lower())
    if spec is None:
        names = sorted({s.name for s in REGISTRY.values()})
        ids = sorted({str(s.liblinear_id) for s in REGISTRY.values() if s.liblinear_id is not None})
        raise ParameterError(
            f"unknown solver {name!r}: choose one of {', '.join(names)} "
            f"(or LIBLINEAR's numbers {', '.join(ids)})")
    return spec
