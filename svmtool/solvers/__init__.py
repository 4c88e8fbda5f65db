"""The solver registry -- the one description of every solver -- and the result every solver
returns.

A binary linear solver is a function

    fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None)
        -> SolverResult

over raw CSR arrays (see :mod:`svmtool.problem`), with ``y`` in {-1.0, +1.0}.  The bias column, if
any, is already part of the arrays (the API appends it).  ``params`` is a
:class:`svmtool.params.TrainParams`.  ``callback(iteration, info_dict)`` is called by the Python
driver once per outer iteration (progress bars, benchmark traces); it is never called from jitted
code.

The table below maps every name, alias and LIBLINEAR number that ``-s`` accepts to a
:class:`SolverSpec`: what problem the solver solves, what ``-e`` means for it and its default,
which option groups it reads, what it supports (warm start, threads, out-of-core) and what model
it makes.  The API picks the solver and its driver from this one table, ``svmtool train -s``'s help
and docs/solvers.md's solver table (``python -m svmtool.solvers``) are printed from it, and bench lists
its solvers from it.  Adding a solver is one module plus one ``register`` call here.  Modules are
imported only when a solver is used.
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


# -- time budgets (--time-limit) ------------------------------------------------------------------
# A solver checks ``time_up(deadline)`` at its outer-iteration boundaries and, when the budget is
# spent, returns its current point (OCAS: its best point) with converged=False,
# extra["stopped"] = STOPPED_TIME and extra["warning"] = time_limit_warning(...), the path the
# iteration cap takes.

STOPPED_TIME = "time limit"


def time_up(deadline) -> bool:
    """Whether the ``time.monotonic()`` deadline (None: no budget) has passed."""
    if deadline is None:
        return False
    import time

    return time.monotonic() >= deadline


def time_limit_warning(name, iterations, what="the current point"):
    return (f"{name} stopped by the time limit after {iterations} iterations, before its "
            f"stopping rule was met; the model is {what}")


@dataclass(frozen=True)
class SolverSpec:
    name: str                     # svmtool's name, e.g. "dcd-l2"
    liblinear_id: Optional[int]   # LIBLINEAR's -s number, when it has one
    liblinear_type: str           # solver_type written in LIBLINEAR's model file (LIBSVM: svm_type)
    module: str                   # module holding `fit`
    function: str                 # name of the fit function in that module
    kwargs: tuple = ()            # fixed keyword arguments, e.g. (("loss", "l2"),)
    default_eps: float = 0.1
    description: str = ""         # one line: the problem and the method
    kind: str = "binary"          # how the API drives it:
                                  # "binary": once per class (one-vs-rest) with y in {-1, +1};
                                  # "single": once on the whole problem, rows in file order
                                  #   (regression: real targets; one-class: labels ignored);
                                  # "multiclass": all classes at once (fit gets class indices
                                  #   0..K-1 and a C per class);
                                  # "ranking": raw labels (and qid) as ranks;
                                  # "kernel": one-vs-one over pairs of classes, a KernelModel
    aliases: tuple = ()           # more names -s accepts
    problem: str = ""             # short: the problem solved, e.g. "L2-loss SVM"
    method: str = ""              # short: the algorithm, e.g. "dual CD"
    eps_means: str = ""           # short: what -e measures
    task: str = "classification"  # classification | ranking | regression | one-class
    loss: str = "hinge"           # hinge | squared hinge | logistic | crammer-singer | pairwise hinge
                                  # | eps-insensitive | squared eps-insensitive
    regulariser: str = "L2"
    driver: str = ""              # "module:function" the API hands the whole problem to
                                  # (kinds multiclass, ranking, kernel); "" = the API's one-vs-rest
    options: tuple = ()           # option groups of TrainParams it reads: "kernel", "dcsvm", "cp",
                                  # "ocas" (the OCAS-only options of "cp"), "loss" (-s cp's
                                  # --loss and --k-fraction, also in "cp"), "dcd", "svr" (-p),
                                  # "oneclass" (-n), "bias_reg" (-R)
    warm_start: str = ""          # what it can start from: "w", "alpha" or "" (cold only)
    threads: str = ""             # what --threads speeds up ("" nothing)
    out_of_core: bool = False     # trains from a memory-mapped cache in blocks
    sign_labels: bool = False     # kind "binary": the API hands y as int8 signs (1 byte a row)
    model_type: str = "linear"    # linear | kernel (| early with DC-SVM's --early)
    model_formats: tuple = ("liblinear", "svmlight", "svmperf")   # --model-format values
    default_bias: float = -1.0    # the command line's -B default

    def load(self):
        import functools
        import importlib

        fn = getattr(importlib.import_module(self.module), self.function)
        return functools.partial(fn, **dict(self.kwargs)) if self.kwargs else fn

    def load_driver(self):
        """The function the API hands the whole problem to (kinds other than "binary")."""
        import importlib

        module, _, function = self.driver.partition(":")
        return getattr(importlib.import_module(module), function)

    def reads(self, group) -> bool:
        """Whether the solver reads the TrainParams option group ``group``."""
        return group in self.options


REGISTRY = {}


def register(spec: SolverSpec):
    for key in (spec.name, *spec.aliases) + (
            (str(spec.liblinear_id),) if spec.liblinear_id is not None else ()):
        if key in REGISTRY:
            raise ValueError(f"solver name {key!r} registered twice")
        REGISTRY[key] = spec


# -- linear SVMs and logistic regression, one-vs-rest (LIBLINEAR's -s numbers) --------------------
register(SolverSpec(
    "dcd-l2", 1, "L2R_L2LOSS_SVC_DUAL", "svmtool.solvers.dcd", "fit", (("loss", "l2"),), 0.1,
    "L2-regularised L2-loss SVM, dual coordinate descent (LIBLINEAR -s 1); falls back to newton "
    "at its iteration cap, as LIBLINEAR",
    problem="L2-loss SVM", method="dual CD (LIBLINEAR -s 1)", eps_means="max PG violation",
    loss="squared hinge", options=("dcd",), warm_start="alpha", threads="one-vs-rest classes",
    out_of_core=True))
register(SolverSpec(
    "dcd-l1", 3, "L2R_L1LOSS_SVC_DUAL", "svmtool.solvers.dcd", "fit", (("loss", "l1"),), 0.1,
    "L2-regularised L1-loss (hinge) SVM, dual coordinate descent (LIBLINEAR -s 3)",
    problem="L1-loss SVM", method="dual CD (LIBLINEAR -s 3)", eps_means="max PG violation",
    options=("dcd",), warm_start="alpha", threads="one-vs-rest classes",
    out_of_core=True))
register(SolverSpec(
    "lr", 0, "L2R_LR", "svmtool.solvers.newton", "fit", (("loss", "lr"),), 0.01,
    "L2-regularised logistic regression, primal truncated Newton-CG (LIBLINEAR -s 0)",
    problem="logistic regression", method="primal Newton-CG (LIBLINEAR -s 0)",
    eps_means="relative gradient norm", loss="logistic", options=("bias_reg",), warm_start="w",
    threads="row passes",
    out_of_core=True))
register(SolverSpec(
    "newton", 2, "L2R_L2LOSS_SVC", "svmtool.solvers.newton", "fit", (("loss", "l2"),), 0.01,
    "L2-regularised L2-loss SVM, primal truncated Newton-CG (LIBLINEAR -s 2, Chapelle & "
    "Keerthi)",
    problem="L2-loss SVM", method="primal Newton-CG (LIBLINEAR -s 2)",
    eps_means="relative gradient norm", loss="squared hinge", options=("bias_reg",),
    warm_start="w", threads="row passes",
    out_of_core=True))
register(SolverSpec(
    "lr-dual", 7, "L2R_LR_DUAL", "svmtool.solvers.lr_dual", "fit", (), 0.1,
    "L2-regularised logistic regression, dual coordinate descent (LIBLINEAR -s 7, Yu, Huang & "
    "Lin 2011); falls back to lr at its iteration cap, as LIBLINEAR",
    problem="logistic regression", method="dual CD (LIBLINEAR -s 7)",
    eps_means="max |dual gradient|", loss="logistic", options=("dcd",),
    threads="one-vs-rest classes"))
register(SolverSpec(
    "l1r-l2", 5, "L1R_L2LOSS_SVC", "svmtool.solvers.l1r_svc", "fit", (), 0.01,
    "L1-regularised L2-loss SVM, coordinate descent with Newton directions and shrinking "
    "(LIBLINEAR -s 5, Yuan, Chang, Hsieh & Lin 2010)",
    problem="L1-regularised L2-loss SVM", method="primal CD, Newton directions (LIBLINEAR -s 5)",
    eps_means="relative subgradient 1-norm", loss="squared hinge", regulariser="L1",
    options=("dcd", "bias_reg"), threads="one-vs-rest classes"))
register(SolverSpec(
    "l1r-lr", 6, "L1R_LR", "svmtool.solvers.l1r_lr", "fit", (), 0.01,
    "L1-regularised logistic regression, newGLMNET (LIBLINEAR -s 6, Yuan, Ho & Lin 2012)",
    problem="L1-regularised logistic regression", method="newGLMNET (LIBLINEAR -s 6)",
    eps_means="relative subgradient 1-norm", loss="logistic", regulariser="L1",
    options=("dcd", "bias_reg"), threads="one-vs-rest classes"))

# -- support vector regression and the one-class SVM: one weight vector for the whole problem,
#    rows in the file's order, real targets (LIBLINEAR's -s 11, 12, 13, 21) ----------------------
register(SolverSpec(
    "svr-l2", 11, "L2R_L2LOSS_SVR", "svmtool.solvers.svr_newton", "fit", (), 0.0001,
    "L2-regularised L2-loss support vector regression, primal truncated Newton-CG (LIBLINEAR "
    "-s 11)",
    kind="single", driver="svmtool.solvers.single:train_single",
    problem="L2-loss SVR", method="primal Newton-CG (LIBLINEAR -s 11)",
    eps_means="relative gradient norm", task="regression", loss="squared eps-insensitive",
    options=("svr", "bias_reg"), warm_start="w", threads="row passes",
    model_formats=("liblinear",),
    out_of_core=True))
register(SolverSpec(
    "svr-l2-dual", 12, "L2R_L2LOSS_SVR_DUAL", "svmtool.solvers.svr", "fit", (("loss", "l2"),),
    0.1,
    "L2-regularised L2-loss support vector regression, dual coordinate descent (LIBLINEAR -s 12,"
    " Ho & Lin 2012); falls back to svr-l2 at its iteration cap, as LIBLINEAR",
    kind="single", driver="svmtool.solvers.single:train_single",
    problem="L2-loss SVR", method="dual CD (LIBLINEAR -s 12)",
    eps_means="relative 1-norm of the dual subgradient", task="regression",
    loss="squared eps-insensitive", options=("svr",), model_formats=("liblinear",)))
register(SolverSpec(
    "svr-l1-dual", 13, "L2R_L1LOSS_SVR_DUAL", "svmtool.solvers.svr", "fit", (("loss", "l1"),),
    0.1,
    "L2-regularised L1-loss support vector regression, dual coordinate descent (LIBLINEAR -s 13,"
    " Ho & Lin 2012)",
    kind="single", driver="svmtool.solvers.single:train_single",
    problem="L1-loss SVR", method="dual CD (LIBLINEAR -s 13)",
    eps_means="relative 1-norm of the dual subgradient", task="regression",
    loss="eps-insensitive", options=("svr",), model_formats=("liblinear",)))
register(SolverSpec(
    "one-class", 21, "ONECLASS_SVM", "svmtool.solvers.oneclass", "fit", (), 0.01,
    "linear one-class SVM (nu, -n), two-level dual coordinate descent (LIBLINEAR -s 21, Chou et "
    "al. 2020); rho in the model",
    kind="single", driver="svmtool.solvers.single:train_single",
    problem="one-class SVM", method="two-level dual CD (LIBLINEAR -s 21)",
    eps_means="max dual violation", task="one-class", loss="hinge",
    options=("oneclass",), model_formats=("liblinear",)))

# -- the cutting-plane family: the same L1-loss problem as -s 3, so models say L2R_L1LOSS_SVC_DUAL
register(SolverSpec(
    "cp", None, "L2R_L1LOSS_SVC_DUAL", "svmtool.solvers.multivariate", "fit", (), 0.001,
    "L1-loss SVM, 1-slack cutting plane (Joachims 2006, SVMperf); --loss for SVMperf's "
    "multivariate losses (F1, PRBEP, prec@k, rec@k, ROC area)",
    problem="L1-loss SVM", method="1-slack cutting plane (SVMperf)",
    eps_means="violation / training loss", options=("cp", "loss"), warm_start="w",
    threads="row passes",
    out_of_core=True, sign_labels=True))
register(SolverSpec(
    "ocas", None, "L2R_L1LOSS_SVC_DUAL", "svmtool.solvers.ocas", "fit", (), 0.01,
    "L1-loss SVM, OCAS cutting plane with exact line search (Franc & Sonnenburg)",
    problem="L1-loss SVM", method="OCAS, exact line search", eps_means="relative gap",
    options=("cp", "ocas"), warm_start="w", threads="row passes",
    out_of_core=True, sign_labels=True))
register(SolverSpec(
    "gca2", None, "L2R_L1LOSS_SVC_DUAL", "svmtool.solvers.ocas", "fit",
    (("line_search", "gca2"),), 0.01,
    "L1-loss SVM, OCAS with Arnosti's grid-search line search (GCA2)",
    problem="L1-loss SVM", method="OCAS, Arnosti's GCA2 search", eps_means="relative gap",
    options=("cp", "ocas"), warm_start="w", threads="row passes",
    out_of_core=True, sign_labels=True))
register(SolverSpec(
    "tca", None, "L2R_L1LOSS_SVC_DUAL", "svmtool.solvers.ocas", "fit",
    (("line_search", "tca"),), 0.01,
    "L1-loss SVM, OCAS with Arnosti's three-point line search (TCA)",
    problem="L1-loss SVM", method="OCAS, Arnosti's TCA search", eps_means="relative gap",
    options=("cp", "ocas"), warm_start="w", threads="row passes",
    out_of_core=True, sign_labels=True))
register(SolverSpec(
    "ocas-mc", 4, "MCSVM_CS", "svmtool.solvers.mcsvm", "fit", (), 0.01,
    "Crammer-Singer multi-class SVM (LIBLINEAR -s 4's problem) by OCAS",
    kind="multiclass", driver="svmtool.solvers.mcsvm:train_multiclass",
    problem="Crammer-Singer multi-class", method="OCAS (LIBLINEAR -s 4's problem)",
    eps_means="relative gap", loss="crammer-singer", options=("cp", "ocas"), warm_start="w",
    threads="row passes", model_formats=("liblinear",)))
register(SolverSpec(
    "ordinal", None, "L2R_L1LOSS_SVR_DUAL", "svmtool.solvers.ordinal", "fit", (), 0.001,
    "ordinal regression / ranking SVM over pairs (Joachims 2006 Alg. 2; pairs within each qid "
    "as SVMrank); ROC-area SVM with two labels; -c per pair",
    kind="ranking", driver="svmtool.solvers.ordinal:train_ranking", aliases=("rank", "roc"),
    problem="ranking / ordinal / ROC area", method="1-slack cutting plane over pairs",
    eps_means="violation / training loss", task="ranking", loss="pairwise hinge",
    options=("cp",), warm_start="w", threads="row passes",
    out_of_core=True))

# -- kernel SVMs, one-vs-one as LIBSVM, LIBSVM model files ---------------------------------------
# -B default of the kernel solvers on the command line: 1, a kernel bias K + 1 (< 0 would be
# problem (1) of the DC-SVM paper, no bias).  Measured (rbf, test accuracy without / with -B 1,
# 3 seeds each, with the two-variable CD steps):
#   ijcnn1 full, C 32 g 2: exact 98.40 / 98.70 (LIBSVM, which has a bias: 98.70); early
#     (64 clusters) 97.59-98.65 / 98.57-98.67 -- without a bias the local models of the early
#     prediction are erratic, with it every seed is within 0.15 of LIBSVM;
#   ijcnn1 10k-row sample: exact 98.12 / 97.96, early 97.38 / 97.31 (means);
#   a9a 10k rows (C 1, g 0.05): 84.75 / 84.75, early 83.08 / 83.09; w8a 10k rows (C 8):
#     97.82 / 97.85; letter (C 8, g 2): 97.86 / 97.88; mushrooms (6000 rows): 99.95 / 99.95.
# Equal or better everywhere but the 10k ijcnn1 sample, the same model class as LIBSVM (its
# users get what they expect), and since the two-variable steps the bias no longer slows the
# solver down (ijcnn1: 5.96 s with it, 6.32 s without).  -B -1 gives the paper's problem.
KERNEL_DEFAULT_BIAS = 1.0

register(SolverSpec(
    "kernel", None, "c_svc", "svmtool.solvers.kernel_cd", "fit", (), 1e-3,
    "kernel SVM (LIBSVM's kernels) with a regularised kernel bias, greedy dual coordinate "
    "descent on one or two variables a step, with shrinking",
    kind="kernel", driver="svmtool.solvers.ovo:train_ovo",
    problem="kernel SVM (K + B^2)", method="greedy dual CD, shrinking",
    eps_means="max PG violation", options=("kernel",), warm_start="alpha",
    threads="one-vs-one pairs", model_type="kernel", model_formats=("libsvm",),
    default_bias=KERNEL_DEFAULT_BIAS))
register(SolverSpec(
    "dcsvm", None, "c_svc", "svmtool.solvers.dcsvm", "fit", (), 1e-3,
    "divide-and-conquer kernel SVM (Hsieh et al. 2014), same problem as -s kernel; --early for "
    "the early-prediction model",
    kind="kernel", driver="svmtool.solvers.ovo:train_ovo",
    problem="kernel SVM (K + B^2)", method="divide and conquer (DC-SVM)",
    eps_means="max PG violation", options=("kernel", "dcsvm"), warm_start="alpha",
    threads="clusters, pairs, kernel blocks", model_type="kernel", model_formats=("libsvm",),
    default_bias=KERNEL_DEFAULT_BIAS))

# -- LIBSVM's five problems, exactly (its svm_type names; SMO with second-order working sets) ---
_LIBSVM_COMMON = dict(
    kind="kernel", driver="svmtool.solvers.libsvm_train:train_libsvm",
    method="SMO, 2nd-order WSS, shrinking (LIBSVM)", eps_means="max violating pair",
    threads="one-vs-one pairs", model_type="kernel", model_formats=("libsvm",))
register(SolverSpec(
    "c_svc", None, "c_svc", "svmtool.solvers.smo", "solve_c_svc", (), 1e-3,
    "C-SVC, LIBSVM's problem (y'a = 0, rho from the KKT conditions), SMO with second-order "
    "working sets and shrinking (LIBSVM -s 0)",
    problem="C-SVC (LIBSVM -s 0)", options=("kernel", "libsvm"), **_LIBSVM_COMMON))
register(SolverSpec(
    "nu_svc", None, "nu_svc", "svmtool.solvers.smo", "solve_nu_svc", (), 1e-3,
    "nu-SVC (-n nu), LIBSVM's problem and solver (LIBSVM -s 1)",
    problem="nu-SVC (LIBSVM -s 1)", options=("kernel", "libsvm", "oneclass"), **_LIBSVM_COMMON))
register(SolverSpec(
    "one_class", None, "one_class", "svmtool.solvers.smo", "solve_one_class", (), 1e-3,
    "one-class SVM (-n nu) with a kernel, LIBSVM's problem and solver (LIBSVM -s 2)",
    problem="one-class SVM (LIBSVM -s 2)", task="one-class",
    options=("kernel", "libsvm", "oneclass"), **_LIBSVM_COMMON))
register(SolverSpec(
    "epsilon_svr", None, "epsilon_svr", "svmtool.solvers.smo", "solve_epsilon_svr", (), 1e-3,
    "epsilon-SVR (-p epsilon) with a kernel, LIBSVM's problem and solver (LIBSVM -s 3)",
    problem="epsilon-SVR (LIBSVM -s 3)", task="regression", loss="eps-insensitive",
    options=("kernel", "libsvm", "svr"), **_LIBSVM_COMMON))
register(SolverSpec(
    "nu_svr", None, "nu_svr", "svmtool.solvers.smo", "solve_nu_svr", (), 1e-3,
    "nu-SVR (-n nu) with a kernel, LIBSVM's problem and solver (LIBSVM -s 4)",
    problem="nu-SVR (LIBSVM -s 4)", task="regression", loss="eps-insensitive",
    options=("kernel", "libsvm", "oneclass"), **_LIBSVM_COMMON))

DEFAULT_SOLVER = "dcd-l2"


def get_spec(name) -> SolverSpec:
    from svmtool.errors import ParameterError

    spec = REGISTRY.get(str(name).lower())
    if spec is None:
        names = ", ".join(s.name for s in specs())
        ids = ", ".join(str(s.liblinear_id) for s in sorted(
            (s for s in specs() if s.liblinear_id is not None), key=lambda s: s.liblinear_id))
        raise ParameterError(
            f"unknown solver {name!r}: choose one of {names} (or LIBLINEAR's numbers {ids})")
    return spec


def specs():
    """Every solver once, in the order of registration."""
    seen, out = set(), []
    for spec in REGISTRY.values():
        if spec.name not in seen:
            seen.add(spec.name)
            out.append(spec)
    return out


def _number(spec):
    return "" if spec.liblinear_id is None else str(spec.liblinear_id)


def _default(v):
    return "%g" % v


def help_table(width=80):
    """``-s``'s help: one solver a line, columns that fit ``width`` (a terminal)."""
    rows = [("-s", "no.", "problem, method", "-e means (default)")]
    for spec in specs():
        names = "/".join((spec.name,) + spec.aliases)
        rows.append((names, _number(spec), f"{spec.problem}, {spec.method}",
                     f"{spec.eps_means} ({_default(spec.default_eps)})"))
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    lines = []
    for r in rows:
        left = f"{r[0]:<{w0}}  {r[1]:>{w1}}  "
        text = f"{r[2]}; {r[3]}" if r is not rows[0] else f"{r[2]}; {r[3]}"
        room = max(20, width - len(left))
        first = True
        while text:
            cut = len(text) if len(text) <= room else (text.rfind(" ", 0, room) + 1 or room)
            lines.append((left if first else " " * len(left)) + text[:cut].rstrip())
            text = text[cut:]
            first = False
    return "\n".join(lines)


def markdown_table():
    """docs/solvers.md's solver table."""
    lines = ["| `-s` | no. | problem | method | `-e` means (default) | warm start | threads |",
             "|---|---|---|---|---|---|---|"]
    for spec in specs():
        names = ", ".join(f"`{n}`" for n in (spec.name,) + spec.aliases)
        lines.append(f"| {names} | {_number(spec)} | {spec.problem} | {spec.method} | "
                     f"{spec.eps_means} ({_default(spec.default_eps)}) | "
                     f"{spec.warm_start or '-'} | {spec.threads or '-'} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown_table())
