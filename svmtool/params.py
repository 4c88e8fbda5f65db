"""TrainParams: every training option in one frozen object, checked in one place.

The options common to all solvers are fields of :class:`TrainParams`; each solver family's own
options are a frozen object of their own, a field of TrainParams with valid defaults:

* :class:`KernelParams` -- the kernel of ``-s kernel`` and ``-s dcsvm`` (LIBSVM's -t -g -d -r -m);
* :class:`DcsvmParams` -- DC-SVM's levels, clustering and early-prediction model;
* :class:`CuttingPlaneParams` -- the cutting-plane family (cp, ocas, gca2, tca, ocas-mc,
  ordinal): OCAS's line search and stopping options, the working-set limit, and -s cp's
  multivariate loss (``--loss``, SVMperf's ``-l``) with its k for prec@k / rec@k;
* :class:`DcdParams` -- dual coordinate descent's warm start and engine choice (API only);
* :class:`SvrParams` -- the width ``p`` of the insensitive tube of -s 11, 12, 13 (LIBLINEAR's -p);
* :class:`OneClassParams` -- ``nu`` of the one-class SVM -s 21 (LIBLINEAR's -n);
* :class:`LibsvmParams` -- LIBSVM's ``-b 1`` (probability estimates) for c_svc, nu_svc,
  one_class, epsilon_svr and nu_svr;
* :class:`BiasRegParams` -- LIBLINEAR's -R: leave the bias weight out of the regulariser
  (-s 0, 2, 5, 6, 11, with -B 1).

Every option is declared once, in :data:`svmtool.options.OPTIONS` (flags, field, group,
default, help, check): the dataclasses' defaults and checks below are read from there.

Where options are checked -- each check is written once, here, and returns one message naming
the field that is wrong (:func:`named`; each front end spells it, :func:`render`):

* :meth:`TrainParams.check` (called by :func:`make_params`, so by every entry of the API): every
  value and the combinations of values, whatever the solver;
* :func:`check_for_solver`: the combinations of options with a solver, from its registry entry
  (:mod:`svmtool.solvers`): class weights of a problem without classes, a bias column of a
  solver whose offset is rho; the API calls it for every training run;
* :func:`check_cross_validation`: the number of folds and the data source of a cross
  validation (``-v``, ``-C``).

The command line calls the same functions before it reads any data, and checks there only what is
its own: which option groups the chosen solver reads (its registry entry's ``options``), the
model format, the publishing options (``--wait``, ``--validate``, ...).  The API checks what needs
more than the options: labels against the task, --dask's and --out-of-core's needs (a cache, the
dask extra: :func:`svmtool.api.check_streaming`), a warm-start model against the solver
(:mod:`svmtool.solvers.common.warm`).
"""

from dataclasses import dataclass, field, replace
from typing import Any, Optional

# the declarations (svmtool.options): read by the dataclasses below, and named here too, so
# that svmtool.params stays the one import of the types layer for options and parameters
from svmtool.options import (  # noqa: F401
    LINE_SEARCHES,
    PERF_LOSSES,
    DCD_ENGINES,
    DUAL_STARTS,
    named,
    Option,
    Bound,
    OneOf,
    OPTIONS,
    FIELDS,
    option,
    check_value,
    _default,
    _declared_fields,
    field_name,
    flag_name,
    sklearn_name,
    render,
    Message,
    _message,
    check_declared,
    options_markdown,
    check_dask_address,
)


@dataclass(frozen=True)
@_declared_fields("kernel")
class KernelParams:
    """The kernel of the kernel solvers (LIBSVM's -t, -g, -d, -r) and their row cache (-m)."""

    kernel_type: int = _default("kernel.kernel_type")  # 0 linear, 1 polynomial, 2 rbf,
                                    # 3 sigmoid (LIBSVM's -t), 4 precomputed (LIBSVM's only)
    gamma: Optional[float] = _default("kernel.gamma")  # None: 1 / number of features
    degree: int = _default("kernel.degree")
    coef0: float = _default("kernel.coef0")
    cache_mb: float = _default("kernel.cache_mb")      # kernel row cache (-m)

    @_message
    def check(self) -> Optional[str]:
        return check_declared(self, "kernel")


@dataclass(frozen=True)
@_declared_fields("dcsvm")
class DcsvmParams:
    """DC-SVM's options (-s dcsvm): levels, clusters, sampling, the early-prediction model."""

    levels: int = _default("dcsvm.levels")              # level l has k^l clusters
    k_clusters: int = _default("dcsvm.k_clusters")      # branching factor k
    sample: int = _default("dcsvm.sample")              # points sampled for kernel k-means
    early: bool = _default("dcsvm.early")   # stop early and return the early-prediction model
    early_level: Optional[int] = _default("dcsvm.early_level")  # its level; None: the level
                                                # with about option(...).implied clusters
    overlap: Optional[int] = _default("dcsvm.overlap")  # multi-class early model: clusters a
                                                        # border row joins
    overlap_quantile: Optional[float] = _default("dcsvm.overlap_quantile")
    level_eps: Optional[float] = _default("dcsvm.level_eps")  # the levels' subproblems' tolerance
    keep_level_models: bool = False     # keep every level's early model (per-level accuracy)
    test: Any = field(default=None, compare=False, repr=False)   # a Problem: per-level accuracy
    # runtime, not an option: a dask Session (svmtool.engine.dask_backend) on which the levels'
    # cluster subproblems run as tasks (--dask); None: threads of this process
    tasks: Any = field(default=None, compare=False, repr=False)

    @_message
    def check(self) -> Optional[str]:
        return check_declared(self, "dcsvm")


@dataclass(frozen=True)
@_declared_fields("cp")
class CuttingPlaneParams:
    """The cutting-plane solvers' options (OCAS, GCA2, TCA, SVMperf's -s cp)."""

    line_search: Optional[str] = _default("cp.line_search")  # OCAS: exact | sorted | gca2 |
                                    # tca (None: the solver's)
    tol_abs: float = _default("cp.tol_abs")   # OCAS: also stop when F(w) - lower bound <= tol_abs
    mu0_guard: bool = _default("cp.mu0_guard")  # OCAS: small forced step after repeated mu = 0
    mu0_patience: int = 5           # ... this many times in a row ...
    mu0_step: float = 0.02          # ... of this length (a fraction of the way to the cut's w)
    inactive_limit: int = _default("cp.inactive_limit")  # drop a cut inactive this long
    loss: Optional[str] = _default("cp.loss")  # -s cp: a multivariate loss of PERF_LOSSES (None:
                                    # the hinge loss of each row, the same problem as "errorrate")
    k_fraction: float = _default("cp.k_fraction")  # prec@k / rec@k: k = k_fraction * number of
                                    # positives (SVMperf's --p; 0: 0.5 for prec@k, 2 for rec@k)
    perf_eps: Optional[float] = _default("cp.perf_eps")  # -s cp: SVMperf's stopping rule with
                                    # its -e (an absolute tolerance on its slack, in percent;
                                    # None: the -e rule)

    @_message
    def check(self) -> Optional[str]:
        return check_declared(self, "cp")


@dataclass(frozen=True)
@_declared_fields("dcd")
class DcdParams:
    """Dual coordinate descent's options (LIBLINEAR's dual solvers): warm starts, inner loop."""

    init_alpha: Any = field(default=None, compare=False, repr=False)  # dual warm start, per row
    engine: str = _default("dcd.engine")  # auto | jit | python (tests: force one inner loop)
    python_budget: Optional[int] = None  # tests: hand over to the jitted loop after this work
    w_recalc: bool = False          # recompute w from alpha at the end
    rand_state: Any = field(default=None, compare=False, repr=False)  # shared LIBLINEAR rand()
    # runtime: the work the pure-Python loop may still do in this training run (a one-element
    # list, shared by the run's fits; see svmtool.solvers.dual_cd.dcd); None: a fit's own
    python_work: Any = field(default=None, compare=False, repr=False)
    # the alpha --init-model's w gives (svmtool.solvers.common.warm.dual_start); on the nightly
    # a9a scenario every variant took at least as long as cold (measured by svmtool bench
    # --suite warm-start, its section of BENCHMARKS.md)
    warm_start: str = _default("dcd.warm_start")

    @_message
    def check(self) -> Optional[str]:
        return check_declared(self, "dcd")


@dataclass(frozen=True)
@_declared_fields("svr")
class SvrParams:
    """Support vector regression's epsilon (LIBLINEAR's -p)."""

    p: float = _default("svr.p")    # LIBLINEAR's -p: no loss while |w'x_i - y_i| <= p

    @_message
    def check(self) -> Optional[str]:
        return check_declared(self, "svr")


@dataclass(frozen=True)
@_declared_fields("oneclass")
class OneClassParams:
    """The one-class SVM's nu (LIBLINEAR's -n)."""

    nu: float = _default("oneclass.nu")  # LIBLINEAR's -n: the fraction nu of (bounded) SVs

    @_message
    def check(self) -> Optional[str]:
        return check_declared(self, "oneclass")


@dataclass(frozen=True)
@_declared_fields("libsvm")
class LibsvmParams:
    """LIBSVM's probability estimates (-b 1) and the generator of their folds."""

    probability: bool = _default("libsvm.probability")  # LIBSVM's -b 1
    seed: int = 1                   # generator of the probability folds

    @_message
    def check(self) -> Optional[str]:
        return check_declared(self, "libsvm")


@dataclass(frozen=True)
@_declared_fields("bias_reg")
class BiasRegParams:
    """Whether the bias weight is regularised (LIBLINEAR's -R turns it off)."""

    regularize: bool = _default("bias_reg.regularize")  # False: LIBLINEAR's -R, the bias
                                                        # weight is not regularised

    @_message
    def check(self) -> Optional[str]:
        return check_declared(self, "bias_reg")


@dataclass(frozen=True)
@_declared_fields("")
class TrainParams:
    """Every option of a training run: one field (or group) an option, its default here."""

    solver: Optional[str] = _default("solver")  # a name or number of svmtool.solvers.REGISTRY;
                                    # None: its default (svmtool.solvers.DEFAULT_SOLVER)
    C: float = _default("C")        # LIBLINEAR's C: 1/2 w'w + C sum(loss_i)
    eps: Optional[float] = _default("eps")  # stopping tolerance; None: the solver's default
    bias: float = _default("bias")  # LIBLINEAR's -B: < 0 no bias column, else its value
    weights: tuple = _default("weights")  # ((label, factor), ...): C of that class is C * factor
    max_iter: Optional[int] = _default("max_iter")  # outer-iteration cap; None: the solver's
    seed: int = _default("seed")    # permutation / sampling seed
    liblinear_rng: bool = _default("liblinear_rng")  # emulate LIBLINEAR's rand() and ordering
    shrinking: bool = _default("shrinking")
    threads: Optional[int] = _default("threads")  # None: all cores
    perf_c: Optional[float] = _default("perf_c")  # C in SVMperf's convention (ordinal: per pair)
    init_w: Any = field(default=None, compare=False, repr=False)   # primal warm start
    time_limit: Optional[float] = _default("time_limit")  # seconds for training; then the
                                    # current/best point
    deadline: Optional[float] = field(default=None, compare=False, repr=False)
    # ^ time.monotonic() at which the solvers stop (set from time_limit by the API, or earlier
    #   by a caller whose budget also covers reading the data)
    out_of_core: Optional[bool] = _default("out_of_core")  # True: stream blocks of the mapped
                                    # cache; None: when the cache is larger than memory_budget
    memory_budget: Optional[float] = _default("memory_budget")  # MB; None: half of the
                                    # available memory
    dask: Optional[str] = _default("dask")  # a dask.distributed scheduler address, or "local:N"
    kernel: KernelParams = KernelParams()
    dcsvm: DcsvmParams = DcsvmParams()
    cp: CuttingPlaneParams = CuttingPlaneParams()
    dcd: DcdParams = DcdParams()
    svr: SvrParams = SvrParams()
    oneclass: OneClassParams = OneClassParams()
    bias_reg: BiasRegParams = BiasRegParams()
    libsvm: LibsvmParams = LibsvmParams()

    @_message
    def check(self) -> Optional[str]:
        """Return a message naming what is wrong (its fields by :func:`named`), or None."""
        for label, factor in self.weights:
            if not (factor > 0) or factor == float("inf"):
                return f"weight of class {label:g} must be a finite number > 0 (got {factor})"
        msg = check_declared(self, "")
        if msg:
            return msg
        if self.cp.perf_eps is not None and self.eps is not None:
            return (f"{named('eps')} and {named('cp.perf_eps')} are two stopping rules of -s cp "
                    f"(relative, and SVMperf's absolute one): give one of them")
        for group in (self.kernel, self.dcsvm, self.cp, self.dcd, self.svr, self.oneclass,
                      self.bias_reg, self.libsvm):
            msg = group.check()
            if msg:
                return msg
        if self.cp.loss not in (None, "errorrate") and self.weights:
            return (f"class weights ({named('weights')}) do not apply to {named('cp.loss')} "
                    f"{self.cp.loss}: the loss is one number of the whole prediction vector")
        if not self.bias_reg.regularize and self.bias != 1.0:
            return (f"{named('bias_reg.regularize')} (an unregularised bias) needs "
                    f"{named('bias')} 1, as in LIBLINEAR")
        return None


@_message
def check_for_solver(params, spec) -> Optional[str]:
    """A message when ``params`` ask what the solver of registry entry ``spec`` cannot do (see the
    module docstring), else None."""
    if spec.task in ("regression", "one-class") and params.weights:
        what = "regression" if spec.task == "regression" else "one-class SVM"
        return (f"class weights ({named('weights')}) do not apply to {what} "
                f"({named('solver')} {spec.name}): there are no classes")
    if params.bias >= 0 and (spec.reads("libsvm") or spec.task == "one-class"):
        return (f"{named('solver')} {spec.name} takes no bias column ({named('bias')}): its "
                f"offset is rho, as in {'LIBSVM' if spec.reads('libsvm') else 'LIBLINEAR'}")
    return None


@_message
def check_cross_validation(params, nr_fold) -> Optional[str]:
    """A message when ``nr_fold``-fold cross validation (``-v``, ``-C``) cannot run with
    ``params``, else None."""
    if nr_fold < 2:
        return f"n-fold cross validation: n must be >= 2 (got {nr_fold})"
    if params.out_of_core or params.dask is not None:
        return (f"cross validation (-v, -C) trains on copies of the folds in memory: it cannot "
                f"be combined with {named('out_of_core')} or {named('dask')}")
    return None


def params_from(values):
    """TrainParams from {field path: value} (the other fields at their defaults), unchecked."""
    top, groups = {}, {}
    for path, value in values.items():
        if "." in path:
            g, name = path.split(".", 1)
            groups.setdefault(g, {})[name] = value
        else:
            top[path] = value
    base = TrainParams()
    for g, kw in groups.items():
        top[g] = replace(getattr(base, g), **kw)
    return TrainParams(**top)


def for_one_run(params):
    """``params`` with the state the fits of one training run share (its one-vs-rest classes,
    the folds of a cross validation or of the -C search): the pure-Python loop's work budget."""
    if params.dcd.python_work is not None:
        return params
    return replace(params, dcd=replace(params.dcd, python_work=[]))


def make_params(params, kwargs):
    """``params`` (or a new TrainParams) with ``kwargs`` applied, checked; ParameterError if not."""
    if params is None:
        params = TrainParams(**kwargs)
    elif kwargs:
        params = replace(params, **kwargs)
    refuse(params.check())
    return params


def refuse(message, spell=field_name):
    """Raise ParameterError when a check returned a message: its fields written by ``spell``
    (the API's: the parameter names); the error keeps the message as ``template`` for a front
    end to spell in its own words (:func:`render`)."""
    if message:
        from svmtool.errors import ParameterError

        error = ParameterError(render(message, spell))
        error.template = getattr(message, "template", message)
        raise error


if __name__ == "__main__":
    # python -m svmtool.params: docs/solvers.md's option table
    print(options_markdown(), end="")
