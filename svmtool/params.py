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

Where options are checked -- each check is written once, here, and returns one message naming
the option that is wrong:

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

LINE_SEARCHES = ("exact", "sorted", "gca2", "tca")
# -s cp --loss: SVMperf's multivariate losses (Joachims 2005);
# svmtool.solvers.cutting_plane.multivariate
PERF_LOSSES = ("errorrate", "f1", "prbep", "prec@k", "rec@k", "rocarea")
DCD_ENGINES = ("auto", "jit", "python")
DUAL_STARTS = ("margin", "scaled", "clipped", "cold")


@dataclass(frozen=True)
class KernelParams:
    kernel_type: int = 2            # 0 linear, 1 polynomial, 2 rbf, 3 sigmoid (LIBSVM's -t),
                                    # 4 precomputed (LIBSVM's problems only)
    gamma: Optional[float] = None   # None: 1 / number of features
    degree: int = 3
    coef0: float = 0.0
    cache_mb: float = 100.0         # kernel row cache (-m)

    def check(self) -> Optional[str]:
        if self.kernel_type not in (0, 1, 2, 3, 4):
            return (f"-t must be 0 (linear), 1 (polynomial), 2 (rbf), 3 (sigmoid) or 4 "
                    f"(precomputed) (got {self.kernel_type})")
        if self.gamma is not None and not self.gamma >= 0:
            return f"gamma (-g) must be >= 0 (got {self.gamma})"
        if self.degree < 0:
            return f"degree (-d) must be >= 0 (got {self.degree})"
        if not self.cache_mb > 0:
            return f"cache size (-m) must be > 0 (got {self.cache_mb})"
        return None


@dataclass(frozen=True)
class DcsvmParams:
    levels: int = 4                 # level l has k^l clusters
    k_clusters: int = 4             # branching factor k
    sample: int = 1000              # points sampled for kernel k-means
    early: bool = False             # stop early and return the early-prediction model
    early_level: Optional[int] = None   # its level; None: the level with about 64 clusters
    overlap: Optional[int] = None   # multi-class early model: clusters a border row joins
    overlap_quantile: Optional[float] = None
    level_eps: Optional[float] = None   # tolerance of the levels' subproblems (None: -e)
    keep_level_models: bool = False     # keep every level's early model (per-level accuracy)
    test: Any = field(default=None, compare=False, repr=False)   # a Problem: per-level accuracy
    # runtime, not an option: a dask Session (svmtool.engine.dask_backend) on which the levels'
    # cluster subproblems run as tasks (--dask); None: threads of this process
    tasks: Any = field(default=None, compare=False, repr=False)

    def check(self) -> Optional[str]:
        if self.levels < 0:
            return f"--levels must be >= 0 (got {self.levels})"
        if self.k_clusters < 2:
            return f"--clusters must be >= 2 (got {self.k_clusters})"
        if self.sample < 1:
            return f"--sample must be >= 1 (got {self.sample})"
        if self.early_level is not None:
            if not self.early:
                return "--early-level needs --early"
            if not 1 <= self.early_level <= max(self.levels, 1):
                return (f"--early-level must be between 1 and --levels ({self.levels}) "
                        f"(got {self.early_level})")
        for name, value in (("--overlap", self.overlap),
                            ("--overlap-quantile", self.overlap_quantile)):
            if value is not None and not self.early:
                return f"{name} needs --early (it shapes the multi-class early model)"
        if self.overlap is not None and self.overlap < 1:
            return f"--overlap must be >= 1 (got {self.overlap})"
        q = self.overlap_quantile
        if q is not None and not 0.0 <= q <= 1.0:
            return f"--overlap-quantile must be between 0 and 1 (got {q})"
        if self.level_eps is not None and not self.level_eps > 0:
            return f"level eps must be > 0 (got {self.level_eps})"
        return None


@dataclass(frozen=True)
class CuttingPlaneParams:
    line_search: Optional[str] = None   # OCAS: exact | sorted | gca2 | tca (None: the solver's)
    tol_abs: float = 0.0            # OCAS: also stop when F(w) - lower bound <= tol_abs
    mu0_guard: bool = True          # OCAS: small forced step after repeated mu = 0 ...
    mu0_patience: int = 5           # ... this many times in a row ...
    mu0_step: float = 0.02          # ... of this length (a fraction of the way to the cut's w)
    inactive_limit: int = 50        # drop a cut inactive for this many iterations
    loss: Optional[str] = None      # -s cp: a multivariate loss of PERF_LOSSES (None: the hinge
                                    # loss of each row, the same problem as "errorrate")
    k_fraction: float = 0.0         # prec@k / rec@k: k = k_fraction * number of positives
                                    # (SVMperf's --p; 0: 0.5 for prec@k, 2 for rec@k)
    perf_eps: Optional[float] = None  # -s cp: SVMperf's stopping rule with its -e (an absolute
                                    # tolerance on its slack, in percent; None: the -e rule)

    def check(self) -> Optional[str]:
        if self.loss is not None and self.loss not in PERF_LOSSES:
            return f"--loss must be one of {', '.join(PERF_LOSSES)} (got {self.loss!r})"
        if not self.k_fraction >= 0 or self.k_fraction == float("inf"):
            return f"--k-fraction must be a finite number >= 0 (got {self.k_fraction})"
        if self.k_fraction and self.loss not in ("prec@k", "rec@k"):
            return "--k-fraction only applies to --loss prec@k and rec@k"
        if self.loss == "prec@k" and self.k_fraction > 1:
            return (f"--k-fraction of prec@k must not be larger than 1 (got "
                    f"{self.k_fraction:g}), as in SVMperf")
        if self.loss == "rec@k" and 0 < self.k_fraction < 1:
            return (f"--k-fraction of rec@k must not be smaller than 1 (got "
                    f"{self.k_fraction:g}), as in SVMperf")
        if self.line_search is not None and self.line_search not in LINE_SEARCHES:
            return (f"--line-search must be one of {', '.join(LINE_SEARCHES)} "
                    f"(got {self.line_search!r})")
        if not self.tol_abs >= 0:
            return f"--abs-gap must be >= 0 (got {self.tol_abs})"
        if self.perf_eps is not None and not 0 < self.perf_eps < float("inf"):
            return f"--perf-e must be a number > 0 (got {self.perf_eps})"
        if self.inactive_limit < 1:
            return f"inactive limit must be >= 1 (got {self.inactive_limit})"
        return None


@dataclass(frozen=True)
class DcdParams:
    init_alpha: Any = field(default=None, compare=False, repr=False)  # dual warm start, per row
    engine: str = "auto"            # auto | jit | python (tests: force one inner loop)
    python_budget: Optional[int] = None  # tests: hand over to the jitted loop after this work
    w_recalc: bool = False          # recompute w from alpha at the end
    rand_state: Any = field(default=None, compare=False, repr=False)  # shared LIBLINEAR rand()
    # runtime: the work the pure-Python loop may still do in this training run (a one-element
    # list, shared by the run's fits; see svmtool.solvers.dual_cd.dcd); None: a fit's own
    python_work: Any = field(default=None, compare=False, repr=False)
    # the alpha --init-model's w gives (svmtool.solvers.common.warm.dual_start); on the nightly
    # a9a scenario every variant took at least as long as cold (measured by svmtool bench
    # --suite warm-start, its section of BENCHMARKS.md)
    warm_start: str = "cold"

    def check(self) -> Optional[str]:
        if self.engine not in DCD_ENGINES:
            return f"dcd engine must be one of {', '.join(DCD_ENGINES)} (got {self.engine!r})"
        if self.warm_start not in DUAL_STARTS:
            return (f"dcd warm_start must be one of {', '.join(DUAL_STARTS)} "
                    f"(got {self.warm_start!r})")
        return None


@dataclass(frozen=True)
class SvrParams:
    p: float = 0.1                  # LIBLINEAR's -p: no loss while |w'x_i - y_i| <= p

    def check(self) -> Optional[str]:
        if not self.p >= 0:
            return f"-p (the SVR tube's width epsilon) must be >= 0 (got {self.p})"
        return None


@dataclass(frozen=True)
class OneClassParams:
    nu: float = 0.5                 # LIBLINEAR's -n: the fraction nu of (bounded) support vectors

    def check(self) -> Optional[str]:
        if not 0 < self.nu <= 1:
            return f"-n (nu of the one-class SVM) must be in (0, 1] (got {self.nu})"
        return None


@dataclass(frozen=True)
class LibsvmParams:
    probability: bool = False       # LIBSVM's -b 1: Platt / Laplace / density-mark models
    seed: int = 1                   # generator of the probability folds

    def check(self) -> Optional[str]:
        return None


@dataclass(frozen=True)
class BiasRegParams:
    regularize: bool = True         # False: LIBLINEAR's -R, the bias weight is not regularised

    def check(self) -> Optional[str]:
        return None


@dataclass(frozen=True)
class TrainParams:
    solver: Optional[str] = None    # a name or number of svmtool.solvers.REGISTRY; None: its
                                    # default (svmtool.solvers.DEFAULT_SOLVER)
    C: float = 1.0                  # LIBLINEAR's C: 1/2 w'w + C sum(loss_i)
    eps: Optional[float] = None     # stopping tolerance; None: the solver's default
    bias: float = -1.0              # LIBLINEAR's -B: < 0 no bias column, else its value
    weights: tuple = ()             # ((label, factor), ...): C of that class is C * factor
    max_iter: Optional[int] = None  # outer-iteration cap; None: the solver's default
    seed: int = 1                   # permutation / sampling seed
    liblinear_rng: bool = False     # emulate LIBLINEAR's rand() and ordering (bit-identical w)
    shrinking: bool = True
    threads: Optional[int] = None   # None: all cores
    perf_c: Optional[float] = None  # C in SVMperf's convention (ordinal: per pair)
    init_w: Any = field(default=None, compare=False, repr=False)   # primal warm start
    time_limit: Optional[float] = None   # seconds for training; then the current/best point
    deadline: Optional[float] = field(default=None, compare=False, repr=False)
    # ^ time.monotonic() at which the solvers stop (set from time_limit by the API, or earlier
    #   by a caller whose budget also covers reading the data)
    out_of_core: Optional[bool] = None  # True: stream blocks of the mapped cache; None: when
                                    # the cache is larger than memory_budget; False: never
    memory_budget: Optional[float] = None   # MB; None: half of the available memory
    dask: Optional[str] = None      # a dask.distributed scheduler address, or "local:N"
    kernel: KernelParams = KernelParams()
    dcsvm: DcsvmParams = DcsvmParams()
    cp: CuttingPlaneParams = CuttingPlaneParams()
    dcd: DcdParams = DcdParams()
    svr: SvrParams = SvrParams()
    oneclass: OneClassParams = OneClassParams()
    bias_reg: BiasRegParams = BiasRegParams()
    libsvm: LibsvmParams = LibsvmParams()

    def check(self) -> Optional[str]:
        """Return a message naming what is wrong, or None."""
        if not (self.C > 0) or self.C == float("inf"):
            return f"C must be a finite number > 0 (got {self.C})"
        if self.eps is not None and (not (self.eps > 0) or self.eps == float("inf")):
            return f"eps (-e) must be a finite number > 0 (got {self.eps})"
        if self.bias != self.bias or self.bias == float("inf"):
            return f"-B must be a finite number (got {self.bias})"
        if self.max_iter is not None and self.max_iter < 1:
            return f"--max-iter must be at least 1 (got {self.max_iter})"
        for label, factor in self.weights:
            if not (factor > 0) or factor == float("inf"):
                return f"weight of class {label:g} must be a finite number > 0 (got {factor})"
        if self.threads is not None and self.threads < 1:
            return f"--threads must be at least 1 (got {self.threads})"
        if self.perf_c is not None and not self.perf_c > 0:
            return f"--perf-c must be > 0 (got {self.perf_c})"
        if self.cp.perf_eps is not None and self.eps is not None:
            return ("-e and --perf-e are two stopping rules of -s cp (relative, and SVMperf's "
                    "absolute one): give one of them")
        if self.time_limit is not None and not self.time_limit > 0:
            return f"--time-limit must be > 0 seconds (got {self.time_limit:g})"
        if self.memory_budget is not None and not (0 < self.memory_budget < float("inf")):
            return (f"--memory-budget must be a number of megabytes > 0 "
                    f"(got {self.memory_budget})")
        if self.dask is not None:
            msg = check_dask_address(self.dask)
            if msg:
                return msg
        for group in (self.kernel, self.dcsvm, self.cp, self.dcd, self.svr, self.oneclass,
                      self.bias_reg, self.libsvm):
            msg = group.check()
            if msg:
                return msg
        if self.cp.loss not in (None, "errorrate") and self.weights:
            return (f"class weights (-wLABEL) do not apply to --loss {self.cp.loss}: the loss "
                    f"is one number of the whole prediction vector")
        if not self.bias_reg.regularize and self.bias != 1.0:
            return "-R (an unregularised bias) needs -B 1, as in LIBLINEAR"
        return None


def check_for_solver(params, spec) -> Optional[str]:
    """A message when ``params`` ask what the solver of registry entry ``spec`` cannot do (see the
    module docstring), else None."""
    if spec.task in ("regression", "one-class") and params.weights:
        what = "regression" if spec.task == "regression" else "one-class SVM"
        return (f"class weights (-wLABEL) do not apply to {what} (-s {spec.name}): there are no "
                f"classes")
    if params.bias >= 0 and (spec.reads("libsvm") or spec.task == "one-class"):
        return (f"-s {spec.name} takes no bias column (-B): its offset is rho, as in "
                f"{'LIBSVM' if spec.reads('libsvm') else 'LIBLINEAR'}")
    return None


def check_cross_validation(params, nr_fold) -> Optional[str]:
    """A message when ``nr_fold``-fold cross validation (``-v``, ``-C``) cannot run with
    ``params``, else None."""
    if nr_fold < 2:
        return f"n-fold cross validation: n must be >= 2 (got {nr_fold})"
    if params.out_of_core or params.dask is not None:
        return ("cross validation (-v, -C) trains on copies of the folds in memory: it cannot "
                "be combined with --out-of-core or --dask")
    return None


def check_dask_address(address) -> Optional[str]:
    """None when ``address`` is ``local:N`` (N >= 1) or a scheduler address, else a message."""
    a = str(address)
    if a.startswith("local:"):
        n = a[len("local:"):]
        if not n.isdigit() or int(n) < 1:
            return f"--dask local:N needs a number of workers N >= 1 (got {a!r})"
        return None
    rest = a.split("://", 1)[-1]
    if not rest or ":" not in rest or not rest.rsplit(":", 1)[1].isdigit():
        return (f"--dask takes a scheduler address such as tcp://host:8786, or local:N "
                f"(got {a!r})")
    return None


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


def refuse(message):
    """Raise ParameterError(message) when a check returned one."""
    if message:
        from svmtool.errors import ParameterError

        raise ParameterError(message)
