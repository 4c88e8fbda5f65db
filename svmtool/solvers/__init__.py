"""The solver registry: the one description of every solver, and the only place that decides
anything by a solver's name.

Each solver is one :class:`SolverSpec`, registered under its name, its aliases and its
LIBLINEAR (or LIBSVM) number.  A spec says what the solver solves and how, how the API drives it,
what it can do -- warm start, threads, training out of core or on a dask cluster, the solver it
falls back to at its iteration cap -- which option groups of :class:`svmtool.params.TrainParams`
it reads, and what model it makes.  Everything that treats solvers differently asks the spec:
the API's dispatch (:mod:`svmtool.api`), the fallback step (:mod:`svmtool.solvers.common.train_one`,
LIBLINEAR's ``train_one``), the out-of-core and dask drivers (:mod:`svmtool.solvers.scale_out`),
the -C search, the command line's checks and help (``svmtool train -s``'s table,
:func:`help_table`), docs/solvers.md's solver table (``python -m svmtool.solvers``) and
bench's list of solvers.  Modules are imported only when a solver is used.

A binary solver's fit function (``fit``) is

    fit(indptr, indices, data, y, n_features, C_pos, C_neg, params, init_w=None, callback=None)
        -> SolverResult

over raw CSR arrays (see :mod:`svmtool.problem`), with ``y`` in {-1.0, +1.0} (int8 signs for the
entries that say ``sign_labels``); the bias column, if any, is already part of the arrays.
``params`` is a :class:`svmtool.params.TrainParams`; ``callback(iteration, info_dict)`` is called
by the Python driver once per outer iteration, never from jitted code.  The other kinds' drivers
take the whole problem (``driver``).  A fit over rows that are not in memory (``out_of_core``)
takes a row source of :mod:`svmtool.solvers.scale_out.out_of_core` in place of the three arrays.

Adding a solver is one module and one ``register`` call here (see ARCHITECTURE.md).
"""

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True, kw_only=True)
class SolverSpec:
    # -- the names -s accepts ---------------------------------------------------------------
    name: str                     # svmtool's name, e.g. "dcd-l2"
    liblinear_id: Optional[int] = None   # LIBLINEAR's -s number, when it has one
    libsvm_id: Optional[int] = None      # LIBSVM's svm-train -s number, when it has one
    aliases: tuple = ()           # more names -s accepts
    programs: tuple = ()          # other tools' training command lines that run this solver
                                  # (svmtool's svm_perf_learn, svm_learn -z p)
    # -- what it solves, and how ----------------------------------------------------------------
    problem: str = ""             # short: the problem solved, e.g. "L2-loss SVM"
    method: str = ""              # short: the algorithm, e.g. "dual CD"
    task: str = "classification"  # classification | ranking | regression | one-class
    loss: str = "hinge"           # hinge | squared hinge | logistic | crammer-singer | pairwise
                                  # hinge | eps-insensitive | squared eps-insensitive
    regulariser: str = "L2"       # L2 | L1 (the scikit-learn estimators' penalty)
    eps_means: str = ""           # short: what -e measures
    default_eps: float = 0.1
    # -- how the API drives it -----------------------------------------------------------------
    fit: str                      # "module:function" of the fit (see the module docstring)
    kwargs: tuple = ()            # fixed keyword arguments of its fits, e.g. (("loss", "l2"),)
    kind: str = "binary"          # "binary": once per class (one-vs-rest) with y in {-1, +1};
                                  # "single": once on the whole problem, rows in file order
                                  #   (regression: real targets; one-class: labels ignored);
                                  # "multiclass": all classes at once (fit gets class indices
                                  #   0..K-1 and a C per class);
                                  # "ranking": raw labels (and qid) as ranks;
                                  # "kernel": one-vs-one over pairs of classes, a KernelModel
    driver: str = ""              # "module:function" the API hands the whole problem to (every
                                  # kind but "binary", which the API drives one-vs-rest)
    options: tuple = ()           # option groups of TrainParams it reads: "kernel", "dcsvm",
                                  # "cp", "ocas" (the OCAS-only options of "cp"), "loss" (-s
                                  # cp's --loss, --k-fraction, --perf-e, also in "cp"), "dcd",
                                  # "svr" (-p), "oneclass" (-n), "bias_reg" (-R), "libsvm" (-b)
    sign_labels: bool = False     # kind "binary": the API hands y as int8 signs (1 byte a row)
    # -- what it can do ------------------------------------------------------------------------
    warm_start: str = ""          # what it starts from (--init-model): "w", "alpha" or "" (cold)
    threads: str = ""             # what --threads speeds up ("" nothing)
    class_batches: bool = False   # kind "binary": its fit takes batch= (its one-vs-rest classes
                                  # share their Hessian passes, svmtool.solvers.newton.batch):
                                  # where every row takes part in every pass (the logistic
                                  # loss; the squared hinge's few active rows differ by class,
                                  # and its short passes do not pay for the classes' turns)
    small_without_numba: bool = False  # runs small problems in plain Python (dual CD: up to
                                  # SMALL_NNZ stored entries), so train reads small text
                                  # without numba too (io.svmlight.PY_PARSE_LIMIT_NUMBA_FREE)
    instance_weights: bool = False  # it honours per-row weights (Problem.weights: cost:
                                  # tokens, -W): row i's C becomes C * w_class * W_i; the API
                                  # refuses a weighted problem for any other solver
    fallback: str = ""            # the solver that goes on from its w when it stops at its
                                  # iteration cap (LIBLINEAR's train_one), with -e times
    fallback_eps: float = 0.1     # this factor
    out_of_core: str = ""         # "module:function" of its fit over rows that are not in
                                  # memory (a row source of svmtool.solvers.scale_out); "":
                                  # in memory only
    out_of_core_weights: bool = False  # its out_of_core fit honours instance weights too,
                                  # on blocks and (dask="passes") on dask shards (else the
                                  # API refuses a weighted problem on those paths)
    dask: str = ""                # "passes": its out_of_core fit also runs on dask shards;
                                  # "tasks": its subproblems go to the cluster as tasks
    # -- the model it makes --------------------------------------------------------------------
    liblinear_type: str           # solver_type of LIBLINEAR's model file (LIBSVM: svm_type)
    model_type: str = "linear"    # linear | kernel (| early with DC-SVM's --early)
    model_formats: tuple = ("liblinear", "svmlight", "svmperf")   # --model-format values
    default_bias: float = -1.0    # the command line's -B default

    def load(self):
        """The fit function (``fit``) with ``kwargs`` bound."""
        return _load(self.fit, self.kwargs)

    def load_driver(self):
        """The function the API hands the whole problem to (kinds other than "binary")."""
        return _load(self.driver)

    def load_out_of_core(self):
        """The fit over a row source (``out_of_core``) with ``kwargs`` bound."""
        return _load(self.out_of_core, self.kwargs)

    def weights_refused(self, params):
        """Why this solver, run with ``params``, refuses instance weights (one line), or None:
        not ``instance_weights``, or ``-s cp`` with a multivariate ``--loss`` (a loss of the
        whole labeling, which no per-example weight enters)."""
        if not self.instance_weights:
            return f"solver {self.name} does not take instance weights (cost: tokens or -W)"
        loss = params.cp.loss if self.reads("loss") else None
        if loss not in (None, "errorrate"):
            return (f"solver {self.name} with --loss {loss} does not take instance weights "
                    f"(cost: tokens or -W): the loss is one of the whole labeling, not a sum "
                    f"over the examples")
        return None

    def takes_weights(self, streaming=None) -> bool:
        """Whether its fit honours instance weights on the path ``streaming`` (None: in memory;
        "blocks": out of core; "dask": on a cluster -- its out-of-core fit over shards, or its
        subproblems as tasks, which carry their rows' costs)."""
        if streaming is None or not self.instance_weights:
            return self.instance_weights
        if streaming == "dask" and self.dask == "tasks":
            return True
        return self.out_of_core_weights and (streaming == "blocks" or self.dask == "passes")

    def reads(self, group) -> bool:
        """Whether the solver reads the TrainParams option group ``group``."""
        return group in self.options


def _load(where, kwargs=()):
    import functools
    import importlib

    module, _, function = where.partition(":")
    fn = getattr(importlib.import_module(module), function)
    return functools.partial(fn, **dict(kwargs)) if kwargs else fn


REGISTRY = {}
_LIBSVM_IDS = {}


def register(spec: SolverSpec):
    for key in (spec.name, *spec.aliases) + (
            (str(spec.liblinear_id),) if spec.liblinear_id is not None else ()):
        if key in REGISTRY:
            raise ValueError(f"solver name {key!r} registered twice")
        REGISTRY[key] = spec
    if spec.libsvm_id is not None:
        _LIBSVM_IDS[spec.libsvm_id] = spec
    if spec.dask == "passes" and not spec.out_of_core:
        raise ValueError(f"{spec.name}: dask passes run its out_of_core fit, which it lacks")


_S = "svmtool.solvers."

# -- linear SVMs and logistic regression, one-vs-rest (LIBLINEAR's -s numbers) --------------------
_DUAL_CD = dict(options=("dcd",), threads="one-vs-rest classes")
register(SolverSpec(
    name="dcd-l2", liblinear_id=1, liblinear_type="L2R_L2LOSS_SVC_DUAL",
    fit=_S + "dual_cd.dcd:fit", kwargs=(("loss", "l2"),), default_eps=0.1,
    problem="L2-loss SVM", method="dual CD (LIBLINEAR -s 1)", eps_means="max PG violation",
    loss="squared hinge", warm_start="alpha", fallback="newton", fallback_eps=0.1,
    out_of_core=_S + "scale_out.dcd_blocks:fit_rows", small_without_numba=True,
    instance_weights=True, out_of_core_weights=True, **_DUAL_CD))
register(SolverSpec(
    name="dcd-l1", liblinear_id=3, liblinear_type="L2R_L1LOSS_SVC_DUAL",
    fit=_S + "dual_cd.dcd:fit", kwargs=(("loss", "l1"),), default_eps=0.1,
    problem="L1-loss SVM", method="dual CD (LIBLINEAR -s 3)", eps_means="max PG violation",
    warm_start="alpha", out_of_core=_S + "scale_out.dcd_blocks:fit_rows",
    small_without_numba=True, instance_weights=True, out_of_core_weights=True, **_DUAL_CD))
_NEWTON = dict(eps_means="relative gradient norm", options=("bias_reg",), warm_start="w",
               threads="one-vs-rest classes, row passes",
               out_of_core=_S + "newton.newton:fit_rows", dask="passes",
               instance_weights=True, out_of_core_weights=True)
register(SolverSpec(
    name="lr", liblinear_id=0, liblinear_type="L2R_LR",
    fit=_S + "newton.newton:fit", kwargs=(("loss", "lr"),), default_eps=0.01,
    problem="logistic regression", method="primal Newton-CG (LIBLINEAR -s 0)", loss="logistic",
    class_batches=True, **_NEWTON))
register(SolverSpec(
    name="newton", liblinear_id=2, liblinear_type="L2R_L2LOSS_SVC",
    fit=_S + "newton.newton:fit", kwargs=(("loss", "l2"),), default_eps=0.01,
    problem="L2-loss SVM", method="primal Newton-CG (LIBLINEAR -s 2)", loss="squared hinge",
    **_NEWTON))
register(SolverSpec(
    name="lr-dual", liblinear_id=7, liblinear_type="L2R_LR_DUAL",
    fit=_S + "dual_cd.lr_dual:fit", default_eps=0.1,
    problem="logistic regression", method="dual CD (LIBLINEAR -s 7)",
    eps_means="max |dual gradient|", loss="logistic", fallback="lr", fallback_eps=0.1,
    instance_weights=True, **_DUAL_CD))
register(SolverSpec(
    name="l1r-l2", liblinear_id=5, liblinear_type="L1R_L2LOSS_SVC",
    fit=_S + "primal_cd.l1r_svc:fit", default_eps=0.01,
    problem="L1-regularised L2-loss SVM", method="primal CD, Newton directions (LIBLINEAR -s 5)",
    eps_means="relative subgradient 1-norm", loss="squared hinge",
    regulariser="L1", options=("dcd", "bias_reg"), threads="one-vs-rest classes",
    instance_weights=True))
register(SolverSpec(
    name="l1r-lr", liblinear_id=6, liblinear_type="L1R_LR",
    fit=_S + "primal_cd.l1r_lr:fit", default_eps=0.01,
    problem="L1-regularised logistic regression", method="newGLMNET (LIBLINEAR -s 6)",
    eps_means="relative subgradient 1-norm", loss="logistic",
    regulariser="L1", options=("dcd", "bias_reg"), threads="one-vs-rest classes",
    instance_weights=True))

# -- support vector regression and the one-class SVM: one weight vector for the whole problem,
#    rows in the file's order, real targets (LIBLINEAR's -s 11, 12, 13, 21) ----------------------
_SINGLE = dict(kind="single", driver=_S + "common.single:train_single",
               model_formats=("liblinear",))
register(SolverSpec(
    name="svr-l2", liblinear_id=11, liblinear_type="L2R_L2LOSS_SVR",
    fit=_S + "newton.svr_newton:fit", default_eps=0.0001,
    problem="L2-loss SVR", method="primal Newton-CG (LIBLINEAR -s 11)",
    eps_means="relative gradient norm", task="regression", loss="squared eps-insensitive",
    options=("svr", "bias_reg"), warm_start="w", threads="row passes",
    out_of_core=_S + "newton.svr_newton:fit_rows", instance_weights=True,
    out_of_core_weights=True, **_SINGLE))
register(SolverSpec(
    name="svr-l2-dual", liblinear_id=12, liblinear_type="L2R_L2LOSS_SVR_DUAL",
    fit=_S + "dual_cd.svr:fit", kwargs=(("loss", "l2"),), default_eps=0.1,
    problem="L2-loss SVR", method="dual CD (LIBLINEAR -s 12)",
    eps_means="relative 1-norm of the dual subgradient", task="regression",
    loss="squared eps-insensitive", options=("svr",), fallback="svr-l2", fallback_eps=0.001,
    instance_weights=True, **_SINGLE))
register(SolverSpec(
    name="svr-l1-dual", liblinear_id=13, liblinear_type="L2R_L1LOSS_SVR_DUAL",
    fit=_S + "dual_cd.svr:fit", kwargs=(("loss", "l1"),), default_eps=0.1,
    problem="L1-loss SVR", method="dual CD (LIBLINEAR -s 13)",
    eps_means="relative 1-norm of the dual subgradient", task="regression",
    loss="eps-insensitive", options=("svr",), instance_weights=True, **_SINGLE))
register(SolverSpec(
    name="one-class", liblinear_id=21, liblinear_type="ONECLASS_SVM", instance_weights=True,
    fit=_S + "dual_cd.oneclass:fit", default_eps=0.01,
    problem="one-class SVM", method="two-level dual CD (LIBLINEAR -s 21)",
    eps_means="max dual violation", task="one-class", options=("oneclass",), **_SINGLE))

# -- the cutting-plane family: the same L1-loss problem as -s 3, so models say L2R_L1LOSS_SVC_DUAL
_HINGE_CP = dict(liblinear_type="L2R_L1LOSS_SVC_DUAL", problem="L1-loss SVM", warm_start="w",
                 threads="row passes", sign_labels=True, dask="passes", instance_weights=True,
                 out_of_core_weights=True)
_OCAS = dict(fit=_S + "cutting_plane.ocas:fit", default_eps=0.01, eps_means="relative gap",
             options=("cp", "ocas"), out_of_core=_S + "cutting_plane.ocas:fit_rows", **_HINGE_CP)
register(SolverSpec(
    name="cp", fit=_S + "cutting_plane.multivariate:fit", default_eps=0.001,
    method="1-slack cutting plane (SVMperf)", eps_means="violation / training loss",
    options=("cp", "loss"), programs=("svm_perf_learn",),
    out_of_core=_S + "cutting_plane.cutting_plane:fit_rows", **_HINGE_CP))
register(SolverSpec(name="ocas", method="OCAS, exact line search", **_OCAS))
register(SolverSpec(name="gca2", kwargs=(("line_search", "gca2"),),
                    method="OCAS, Arnosti's GCA2 search", **_OCAS))
register(SolverSpec(name="tca", kwargs=(("line_search", "tca"),),
                    method="OCAS, Arnosti's TCA search", **_OCAS))
register(SolverSpec(
    name="ocas-mc", liblinear_id=4, liblinear_type="MCSVM_CS", instance_weights=True,
    fit=_S + "cutting_plane.mcsvm:fit", default_eps=0.01,
    kind="multiclass", driver=_S + "cutting_plane.mcsvm:train_multiclass",
    problem="Crammer-Singer multi-class", method="OCAS (LIBLINEAR -s 4's problem)",
    eps_means="relative gap", loss="crammer-singer", options=("cp", "ocas"), warm_start="w",
    threads="row passes", model_formats=("liblinear",)))
register(SolverSpec(
    name="ordinal", aliases=("rank", "roc"), programs=("svm_learn -z p",),
    liblinear_type="L2R_L1LOSS_SVR_DUAL",
    fit=_S + "cutting_plane.ordinal:fit", default_eps=0.001,
    kind="ranking", driver=_S + "cutting_plane.ordinal:train_ranking",
    problem="ranking / ordinal / ROC area", method="1-slack cutting plane over pairs",
    eps_means="violation / training loss", task="ranking", loss="pairwise hinge",
    options=("cp",), warm_start="w", threads="row passes",
    out_of_core=_S + "cutting_plane.ordinal:fit_rows"))

# -- kernel SVMs, one-vs-one as LIBSVM, LIBSVM model files ---------------------------------------
# -B default of the kernel solvers on the command line: 1, a kernel bias K + 1 (< 0 would be
# problem (1) of the DC-SVM paper, no bias).  The test accuracy with and without it on ijcnn1,
# a9a, w8a, letter and mushrooms, exact and early, is measured by `svmtool bench --suite
# kernel-bias` (its section of BENCHMARKS.md): with the bias, equal or better everywhere but a
# 10k-row sample of ijcnn1, and the early prediction's local models steady across seeds (erratic
# without).  It is the same model class as LIBSVM (its users get what they expect), and since the
# two-variable steps the bias no longer slows the solver down.  -B -1 gives the paper's problem.
KERNEL_DEFAULT_BIAS = 1.0

_KERNEL = dict(liblinear_type="c_svc", default_eps=1e-3, kind="kernel",
               problem="kernel SVM (K + B^2)", eps_means="max PG violation", warm_start="alpha",
               model_type="kernel", model_formats=("libsvm",), default_bias=KERNEL_DEFAULT_BIAS,
               instance_weights=True)
register(SolverSpec(
    name="kernel", fit=_S + "kernel.kernel_cd:fit", driver=_S + "kernel.ovo:train_ovo",
    method="greedy dual CD, shrinking", options=("kernel",), threads="one-vs-one pairs",
    **_KERNEL))
register(SolverSpec(
    name="dcsvm", fit=_S + "dcsvm.dcsvm:fit", driver=_S + "dcsvm.driver:train_dcsvm",
    method="divide and conquer (DC-SVM)", options=("kernel", "dcsvm"),
    threads="clusters, pairs, kernel blocks", dask="tasks", **_KERNEL))

# -- LIBSVM's five problems, exactly (its svm_type names; SMO with second-order working sets) ---
_LIBSVM = dict(
    default_eps=1e-3, kind="kernel", driver=_S + "kernel.libsvm_train:train_libsvm",
    method="SMO, 2nd-order WSS, shrinking (LIBSVM)", eps_means="max violating pair",
    threads="one-vs-one pairs", model_type="kernel", model_formats=("libsvm",),
    instance_weights=True)
register(SolverSpec(
    name="c_svc", libsvm_id=0, liblinear_type="c_svc", fit=_S + "kernel.smo:solve_c_svc",
    problem="C-SVC (LIBSVM -s 0)", options=("kernel", "libsvm"), **_LIBSVM))
register(SolverSpec(
    name="nu_svc", libsvm_id=1, liblinear_type="nu_svc", fit=_S + "kernel.smo:solve_nu_svc",
    problem="nu-SVC (LIBSVM -s 1)", options=("kernel", "libsvm", "oneclass"), **_LIBSVM))
register(SolverSpec(
    name="one_class", libsvm_id=2, liblinear_type="one_class",
    fit=_S + "kernel.smo:solve_one_class", problem="one-class SVM (LIBSVM -s 2)",
    task="one-class", options=("kernel", "libsvm", "oneclass"), **_LIBSVM))
register(SolverSpec(
    name="epsilon_svr", libsvm_id=3, liblinear_type="epsilon_svr",
    fit=_S + "kernel.smo:solve_epsilon_svr", problem="epsilon-SVR (LIBSVM -s 3)",
    task="regression", loss="eps-insensitive", options=("kernel", "libsvm", "svr"), **_LIBSVM))
register(SolverSpec(
    name="nu_svr", libsvm_id=4, liblinear_type="nu_svr", fit=_S + "kernel.smo:solve_nu_svr",
    problem="nu-SVR (LIBSVM -s 4)", task="regression", loss="eps-insensitive",
    options=("kernel", "libsvm", "oneclass"), **_LIBSVM))

DEFAULT_SOLVER = "dcd-l2"       # -s's default (TrainParams(solver=None))


def get_spec(name=None) -> SolverSpec:
    """The spec of a name, alias or LIBLINEAR number (None: ``DEFAULT_SOLVER``)."""
    from svmtool.errors import ParameterError

    spec = REGISTRY.get(DEFAULT_SOLVER if name is None else str(name).lower())
    if spec is None:
        names = ", ".join(s.name for s in specs())
        ids = ", ".join(str(s.liblinear_id) for s in sorted(
            (s for s in specs() if s.liblinear_id is not None), key=lambda s: s.liblinear_id))
        raise ParameterError(
            f"unknown solver {name!r}: choose one of {names} (or LIBLINEAR's numbers {ids})")
    return spec


def default_eps(name) -> float:
    """The default tolerance -e of solver ``name``: its entry's ``default_eps`` (the one place
    it is written; the solvers' modules read it here)."""
    return get_spec(name).default_eps


def libsvm_spec(number) -> SolverSpec:
    """The solver of LIBSVM's ``svm-train -s number`` (KeyError if none)."""
    return _LIBSVM_IDS[int(number)]


def program_spec(program) -> SolverSpec:
    """The solver another tool's training command line runs on (``programs``)."""
    return next(s for s in specs() if program in s.programs)


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
        text = f"{r[2]}; {r[3]}"
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
    lines = ["| `-s` | no. | problem | method | `-e` means (default) | warm start | threads | "
             "instance weights |",
             "|---|---|---|---|---|---|---|---|"]
    for spec in specs():
        names = ", ".join(f"`{n}`" for n in (spec.name,) + spec.aliases)
        weights = "yes" if spec.instance_weights else "-"
        if spec.instance_weights and spec.reads("loss"):
            weights = "hinge loss only"
        paths = [what for what, mode, has in (("out of core", "blocks", spec.out_of_core),
                                              ("dask", "dask", spec.dask))
                 if has and spec.takes_weights(mode)]
        if paths:
            weights += ", " + " and ".join(paths) + " too"
        lines.append(f"| {names} | {_number(spec)} | {spec.problem} | {spec.method} | "
                     f"{spec.eps_means} ({_default(spec.default_eps)}) | "
                     f"{spec.warm_start or '-'} | {spec.threads or '-'} | {weights} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown_table())
