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

Every option is declared once, in :data:`OPTIONS` (flags, field, group, default, help, check;
see the comment above it): the dataclasses' defaults and checks below are read from there.

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

LINE_SEARCHES = ("exact", "sorted", "gca2", "tca")
# -s cp --loss: SVMperf's multivariate losses (Joachims 2005);
# svmtool.solvers.cutting_plane.multivariate
PERF_LOSSES = ("errorrate", "f1", "prbep", "prec@k", "rec@k", "rocarea")
DCD_ENGINES = ("auto", "jit", "python")
DUAL_STARTS = ("margin", "scaled", "clipped", "cold")


# ---- the options: each declared once --------------------------------------------------------
#
# One Option per training option: the field of TrainParams it sets (``"dcsvm.levels"``: field
# ``levels`` of the ``dcsvm`` group), the flags of ``svmtool train``, the registry's option group
# that reads it, its default, help and check.  The parameter dataclasses below take their
# defaults and checks from here; the command line (svmtool.cli.train) its click options and the
# groups it refuses; docs/solvers.md its option table (:func:`options_markdown`); the
# scikit-learn estimators their defaults and ``_parameter_constraints``; the other command
# lines (svm-train, svm_learn, svm_perf_learn, grid.py's) map their spellings onto the fields.
#
# A check message names a field by :func:`named`; :func:`render` writes it in the spelling of
# the front end that reports it: the flag on the command line ("--levels must be >= 0"), the
# parameter's name in the API and in scikit-learn ("levels must be >= 0").

_MARK = "\x1f"
_SAME = object()


def named(path):
    """The field ``path`` inside a check message, for :func:`render` to spell."""
    return f"{_MARK}{path}{_MARK}"


@dataclass(frozen=True)
class Option:
    flags: tuple                # svmtool train's spellings (the first names it in messages)
    help: str                   # --help's text; {default} and {implied} are filled in
    field: str = ""             # "group.name" or "name" of TrainParams; "": the command's own
    type: Any = None            # int, float, str, "file", (float, float); None: a flag
    default: Any = None         # the field's default
    group: str = ""             # the registry option group that reads it ("": every solver)
    check: Any = None           # (value, owner, name) -> message or None; None values pass
    needs: tuple = ()           # (field, why): only with that (boolean) field set
    name: str = ""              # the command line's parameter name ("": the field's)
    cli_default: Any = _SAME    # the command line's value when not given (_SAME: default)
    show_default: bool = False
    metavar: Optional[str] = None
    choices: tuple = ()         # the values a str option takes
    invert: bool = False        # a flag that turns the field off (--no-shrinking)
    multiple: bool = False
    implied: Any = None         # what a None default stands for (the help's {implied}; of
                                # --early-level: the number of clusters of the level it picks)
    sklearn: str = ""           # the estimators' parameter of the field ("": none)
    shown: str = ""             # how messages spell it on the command line ("": flags[0])
    estimators: tuple = ()      # the estimators that take it as parameter ``sklearn``, with
                                # this default (svmtool.sklearn: declared_parameters)

    @property
    def attr(self):
        return self.field.rsplit(".", 1)[-1]

    @property
    def owner(self):
        return self.field.rsplit(".", 1)[0] if "." in self.field else ""

    @property
    def key(self):
        return self.name or self.attr

    @property
    def given_default(self):
        return self.default if self.cli_default is _SAME else self.cli_default

    def help_text(self):
        return self.help.format(default=self.default, implied=self.implied)


@dataclass(frozen=True)
class Bound:
    """The check of a number: lo <= v (lo < v when lo_open) and v <= hi (v < hi when hi_open);
    a NaN is out of every bound.  ``text`` follows the field's name in the message."""
    text: str
    lo: Any = None
    hi: Any = None
    lo_open: bool = False
    hi_open: bool = False

    def __call__(self, v, owner, name):
        ok = ((self.lo is None or (v > self.lo if self.lo_open else v >= self.lo))
              and (self.hi is None or (v < self.hi if self.hi_open else v <= self.hi)))
        return None if ok else f"{name} {self.text.format(v=v)}"


@dataclass(frozen=True)
class OneOf:
    """The check of a value that must be one of ``choices``."""
    choices: tuple
    text: str = ""

    def __call__(self, v, owner, name):
        if v in self.choices:
            return None
        text = self.text or f"must be one of {', '.join(self.choices)} (got {{v!r}})"
        return f"{name} {text.format(v=v)}"


_INF = float("inf")
_POSITIVE = Bound("must be > 0 (got {v})", lo=0, lo_open=True)
_NON_NEGATIVE = Bound("must be >= 0 (got {v})", lo=0)
_AT_LEAST_1 = Bound("must be at least 1 (got {v})", lo=1)
_FINITE_POSITIVE = Bound("must be a finite number > 0 (got {v})", lo=0, hi=_INF, lo_open=True,
                         hi_open=True)


def _early_level(v, dp, name):
    if not 1 <= v <= max(dp.levels, 1):
        return (f"{name} must be between 1 and {named('dcsvm.levels')} ({dp.levels}) "
                f"(got {v})")
    return None


def _k_fraction(v, cp, name):
    if not v >= 0 or v == float("inf"):
        return f"{name} must be a finite number >= 0 (got {v})"
    if v and cp.loss not in ("prec@k", "rec@k"):
        return f"{name} only applies to {named('cp.loss')} prec@k and rec@k"
    if cp.loss == "prec@k" and v > 1:
        return f"{name} of prec@k must not be larger than 1 (got {v:g}), as in SVMperf"
    if cp.loss == "rec@k" and 0 < v < 1:
        return f"{name} of rec@k must not be smaller than 1 (got {v:g}), as in SVMperf"
    return None


OPTIONS = (
    Option(("-s",), "Solver: a name or LIBLINEAR's number (the table below).", field="solver",
           type=str),
    Option(("-c",), "Cost C of 1/2 w'w + C sum(loss_i) (LIBLINEAR's and SVMlight's "
           "convention).", field="C", type=float, default=1.0, show_default=True,
           check=_FINITE_POSITIVE, sklearn="C"),
    Option(("-e",), "Stopping tolerance (default per solver; dual solvers: max "
           "projected-gradient violation 0.1).", field="eps", type=float, sklearn="tol",
           check=_FINITE_POSITIVE),
    Option(("-B",), "Bias: if >= 0 each example gets an extra feature of this value (its "
           "weight is the bias, regularised as LIBLINEAR does); -1: none (the default of the "
           "linear solvers).  Kernel solvers: b^2 is added to every kernel value (a "
           "regularised bias; the LIBSVM model gets rho = -b^2 sum(alpha_i y_i)); their "
           "default is 1.", field="bias", type=float, default=-1.0, cli_default=None,
           check=Bound("must be a finite number (got {v})", hi=_INF, hi_open=True)),
    Option(("--weight",), "Multiply C of class LABEL by W (LIBLINEAR's -wLABEL W).",
           field="weights", type=(float, float), default=(), multiple=True, metavar="LABEL W",
           shown="-wLABEL"),
    Option(("-v",), "n-fold cross validation: print the accuracy, write no model.",
           name="folds", type=int),
    Option(("-C",), "Find C by n-fold cross validation (-v n, default 5) along a "
           "warm-started doubling path, as LIBLINEAR's -C; prints each C and the best; writes "
           "no model.", name="find_c", cli_default=False),
    Option(("--seed",), "Seed of the random permutations and of the cross-validation folds.",
           field="seed", type=int, default=1, show_default=True),
    Option(("--max-iter",), "Outer-iteration cap (default per solver, as LIBLINEAR's).",
           field="max_iter", type=int, check=_AT_LEAST_1),
    Option(("--liblinear-rng",), "Draw permutations as LIBLINEAR does (its rand() and "
           "ordering): the model is then bit-identical to LIBLINEAR's for the same data and "
           "options.", field="liblinear_rng", default=False),
    Option(("--no-shrinking",), "Turn the shrinking heuristic off.", field="shrinking",
           default=True, invert=True, name="no_shrinking"),
    Option(("--threads",), "Threads for reading, row passes and one-vs-rest classes.",
           field="threads", type=int, check=_AT_LEAST_1, sklearn="threads"),
    Option(("--out-of-core", "--in-memory"), "Train from the binary cache (or shard index) "
           "TRAIN in blocks, without loading it (default: when it is larger than "
           "--memory-budget and the solver can).", field="out_of_core", type=bool,
           sklearn="out_of_core"),
    Option(("--memory-budget",), "Memory for the data: a larger cache is trained out of core, "
           "in blocks sized from it (default: half of the available memory).",
           field="memory_budget", type=float, metavar="MB",
           sklearn="memory_budget",
           check=Bound("must be a number of megabytes > 0 (got {v})", lo=0, hi=_INF,
                       lo_open=True, hi_open=True)),
    Option(("--dask",), "Train on a dask.distributed cluster: a scheduler address "
           "(tcp://host:8786) or local:N (N local worker processes).  TRAIN must be a cache or "
           "a shard index (convert --shards) all workers can read at the same paths.  Needs "
           "the 'dask' extra.", field="dask", type=str, metavar="ADDRESS",
           sklearn="dask",
           check=lambda v, owner, name: check_dask_address(v)),
    Option(("-t",), "Kernel of -s kernel / dcsvm (LIBSVM's -t): 0 linear, 1 polynomial "
           "(gamma u'v + coef0)^degree, 2 rbf exp(-gamma |u-v|^2), 3 sigmoid "
           "tanh(gamma u'v + coef0).", field="kernel.kernel_type", type=int, default=2,
           group="kernel", show_default=True,
           check=OneOf((0, 1, 2, 3, 4), "must be 0 (linear), 1 (polynomial), 2 (rbf), 3 "
                       "(sigmoid) or 4 (precomputed) (got {v})")),
    Option(("-g",), "Kernel gamma (default 1/number of features).", field="kernel.gamma",
           type=float, group="kernel", check=_NON_NEGATIVE),
    Option(("-d",), "Polynomial degree.", field="kernel.degree", type=int, default=3,
           group="kernel", show_default=True, check=_NON_NEGATIVE, sklearn="degree"),
    Option(("-r",), "Kernel coef0.", field="kernel.coef0", type=float, default=0.0,
           group="kernel", show_default=True),
    Option(("-m",), "Kernel row cache size in MB (kernel solvers).", field="kernel.cache_mb",
           type=float, default=100.0, group="kernel", show_default=True, sklearn="cache_size",
           check=_POSITIVE),
    Option(("--levels",), "DC-SVM: number of levels; level l has k^l clusters.",
           field="dcsvm.levels", type=int, default=4, group="dcsvm", show_default=True,
           check=_NON_NEGATIVE, sklearn="levels", estimators=("DCSVC",)),
    Option(("--clusters",), "DC-SVM: k, the branching factor of the clustering.",
           field="dcsvm.k_clusters", type=int, default=4, group="dcsvm", show_default=True,
           check=Bound("must be >= 2 (got {v})", lo=2), sklearn="clusters",
           estimators=("DCSVC",)),
    Option(("--sample",), "DC-SVM: points sampled for kernel k-means at each level.",
           field="dcsvm.sample", type=int, default=1000, group="dcsvm", show_default=True,
           name="sample_size", check=Bound("must be >= 1 (got {v})", lo=1), sklearn="sample",
           estimators=("DCSVC",)),
    Option(("--early",), "DC-SVM: stop at a level (--early-level) and save an "
           "early-prediction model (each row scored by its nearest cluster's local model).",
           field="dcsvm.early", default=False, group="dcsvm", sklearn="early",
           estimators=("DCSVC",)),
    Option(("--early-level",), "DC-SVM --early: the level to stop at (default: the level "
           "with about {implied} clusters).", field="dcsvm.early_level", type=int, group="dcsvm",
           implied=64,
           metavar="N", needs=("dcsvm.early", ""), check=_early_level, sklearn="early_level",
           estimators=("DCSVC",)),
    Option(("--overlap",), "DC-SVM --early, multi-class: a border row also trains the local "
           "models of up to N-1 neighbouring clusters (default {implied}; 1: the clusters "
           "partition the rows).", field="dcsvm.overlap", type=int, group="dcsvm",
           metavar="N", implied=4,
           needs=("dcsvm.early", " (it shapes the multi-class early model)"),
           check=Bound("must be >= 1 (got {v})", lo=1)),
    Option(("--overlap-quantile",), "DC-SVM --early, multi-class: a row is a border row of a "
           "neighbouring cluster when that centre is at most as much farther than its own as "
           "the Q-quantile over all rows of the second-nearest centre's (default {implied}).",
           field="dcsvm.overlap_quantile", type=float, group="dcsvm", metavar="Q",
           implied=0.7, needs=("dcsvm.early", " (it shapes the multi-class early model)"),
           check=Bound("must be between 0 and 1 (got {v})", lo=0.0, hi=1.0)),
    Option(("--test",), "DC-SVM: report the accuracy of every level on this test file.",
           name="test_file", type="file", group="dcsvm"),
    Option(("--line-search",), "OCAS line search (-s ocas, ocas-mc): exact (the exact "
           "minimiser by selection, O(n)), sorted (the same by OCAS's sort of the breakpoints, "
           "O(n log n)), gca2 (Arnosti's grid search) or tca (three-point search).",
           field="cp.line_search", type=str, choices=LINE_SEARCHES, group="ocas",
           check=OneOf(LINE_SEARCHES)),
    Option(("--abs-gap",), "OCAS (-s ocas/gca2/tca/ocas-mc): also stop when F(w) - lower "
           "bound <= this absolute gap (default: the relative gap -e only).",
           field="cp.tol_abs", type=float, default=0.0, cli_default=None, group="ocas",
           name="abs_gap", check=_NON_NEGATIVE),
    Option(("--no-mu0-guard",), "OCAS: turn off the guard that takes a small positive step "
           "after the line search returned mu = 0 five times in a row.", field="cp.mu0_guard",
           default=True, invert=True, group="ocas", name="no_mu0_guard"),
    Option(("--loss",), "-s cp: SVMperf's multivariate loss of the whole prediction vector "
           "(its -l): errorrate (the hinge loss, -s cp's default problem), f1, prbep "
           "(precision/recall break-even), prec@k, rec@k, rocarea; C as for the hinge loss "
           "(--perf-c: SVMperf's C).  Use -B 1 for a threshold, as SVMperf's --b 1.",
           field="cp.loss", type=str, choices=PERF_LOSSES, group="loss", name="perf_loss",
           check=OneOf(PERF_LOSSES)),
    Option(("--k-fraction",), "--loss prec@k / rec@k: k = this fraction of the positive "
           "training rows (SVMperf's --p; default 0.5 for prec@k, 2 for rec@k).",
           field="cp.k_fraction", type=float, default=0.0, group="loss", check=_k_fraction,
           sklearn="k_fraction", estimators=("LinearSVC",)),
    Option(("--perf-e",), "-s cp: stop by SVMperf's own rule with its -e (an absolute "
           "tolerance on its slack, in percent of the loss: svm_perf_learn -w 3 -e E is "
           "--perf-e E), instead of -e's relative rule.", field="cp.perf_eps", type=float,
           group="loss",
           check=Bound("must be a number > 0 (got {v})", lo=0, hi=_INF, lo_open=True,
                       hi_open=True)),
    Option(("-p",), "SVR (-s 11, 12, 13): the width epsilon of the insensitive tube, no loss "
           "while |w'x - y| <= epsilon (LIBLINEAR's -p).", field="svr.p", type=float,
           default=0.1, group="svr", show_default=True, name="svr_p", sklearn="epsilon",
           check=_NON_NEGATIVE),
    Option(("-n",), "One-class SVM (-s 21): nu, the fraction of support vectors (LIBLINEAR's "
           "-n).", field="oneclass.nu", type=float, default=0.5, group="oneclass",
           show_default=True, sklearn="nu",
           check=Bound("must be in (0, 1] (got {v})", lo=0, hi=1, lo_open=True)),
    Option(("-R",), "Do not regularise the bias weight (-s 0, 2, 5, 6, 11; needs -B 1), as "
           "LIBLINEAR's -R.", field="bias_reg.regularize", default=True, invert=True,
           group="bias_reg", name="no_reg_bias"),
    Option(("--perf-c",), "C in SVMperf's convention instead of -c: C = C_perf * 100 / n (per "
           "pair for -s ordinal: C = C_perf * 100 / number of pairs).", field="perf_c",
           type=float, check=_POSITIVE),
    Option(("--model-format",), "Model file format (default: LIBLINEAR's for linear models, "
           "SVMlight's for ranking models, LIBSVM's for kernel models). svmlight: SVMlight "
           "6.02's (svm_classify reads it): a linear model of two classes, regression or "
           "ranking as one vector, a two-class or regression kernel model (kernels 0-3) with "
           "its support vectors; svmperf: the same with the version line SVMperf's "
           "svm_perf_classify reads (V6.20).", name="model_format", type=str,
           choices=("liblinear", "svmlight", "svmperf", "libsvm")),
    Option(("-W",), "Instance weights: a file of one weight a line (>= 0), row i's C becomes "
           "C * W_i (LIBLINEAR-weights' -W; SVMlight's cost: tokens in TRAIN do the same).  "
           "A solver that does not take them yet refuses them.", name="weight_file",
           type="file",
           metavar="FILE"),
    Option(("--init-model",), "Warm start from this model (e.g. yesterday's): same classes, "
           "any order; new features start at 0.  Every solver family (see docs/cron.md).",
           name="init_model", type="file", metavar="FILE"),
    Option(("--time-limit",), "Stop training when this many seconds (from the start, reading "
           "included) are spent and write the current (OCAS: best) model, with a warning; "
           "exit 0.", field="time_limit", type=float, metavar="SECONDS",
           check=Bound("must be > 0 seconds (got {v:g})", lo=0, lo_open=True)),
    Option(("--wait",), "If another svmtool is writing MODEL, wait up to this long for it "
           "(default: fail at once with exit status 75).", name="wait", type=float,
           metavar="SECONDS", check=Bound("must be >= 0 seconds (got {v:g})", lo=0.0)),
    Option(("--report",), "Write a JSON record of the run (written atomically).",
           name="report_file", type="file", metavar="FILE"),
    Option(("--log",), "Append the same record as one JSON line.", name="log_file",
           type="file", metavar="FILE"),
    Option(("--validate",), "Score the new model (and the existing MODEL) on this data before "
           "publishing.", name="validate_file", type="file", metavar="FILE"),
    Option(("--min-accuracy",), "With --validate: publish only if the new model's accuracy is "
           ">= PCT.", name="min_accuracy", type=float, metavar="PCT",
           check=Bound("must be between 0 and 100 (got {v:g})", lo=0.0, hi=100.0)),
    Option(("--max-drop",), "With --validate: publish only if the new model's accuracy is at "
           "most POINTS below the existing MODEL's.  A refused model exits 3, MODEL "
           "untouched.", name="max_drop", type=float, metavar="POINTS",
           check=Bound("must be >= 0 (got {v:g})", lo=0.0)),
    # fields of the API only (no flag of svmtool train)
    Option((), "OCAS: drop a cut inactive for this many iterations.", field="cp.inactive_limit",
           type=int, default=50, check=Bound("must be >= 1 (got {v})", lo=1)),
    Option((), "DC-SVM: the tolerance of the levels' subproblems (None: -e).",
           field="dcsvm.level_eps", type=float, check=_POSITIVE),
    Option((), "LIBSVM's -b 1: Platt / Laplace / density-mark probability models.",
           field="libsvm.probability", default=False, sklearn="probability"),
    Option((), "Dual CD's inner loop: auto, jit or python (tests force one).",
           field="dcd.engine", type=str, default="auto", choices=DCD_ENGINES,
           check=OneOf(DCD_ENGINES)),
    Option((), "The alpha --init-model's w gives dual CD (svmtool.solvers.common.warm).",
           field="dcd.warm_start", type=str, default="cold", choices=DUAL_STARTS,
           check=OneOf(DUAL_STARTS)),
)
FIELDS = {o.field: o for o in OPTIONS if o.field}


def option(path):
    """The declaration of field ``path`` ("C", "dcsvm.levels")."""
    return FIELDS[path]


def check_value(key, value):
    """The declared check of option ``key`` (a command's own option: its name) on ``value``,
    named by its flag: a message, or None (None values pass)."""
    opt = next(o for o in OPTIONS if o.key == key)
    if value is None or opt.check is None:
        return None
    return opt.check(value, None, opt.shown or opt.flags[0])


def _default(path):
    return FIELDS[path].default


def _declared_fields(owner):
    """Class decorator (under @dataclass) of option group ``owner`` ("": TrainParams): every
    declared field the class does not spell out becomes a field, with its declared default.
    The fields written out keep their place (and the comment of what they mean)."""
    def add(cls):
        annotations = dict(cls.__dict__.get("__annotations__", {}))
        for opt in OPTIONS:
            if opt.field and opt.owner == owner and opt.attr not in annotations:
                annotations[opt.attr] = Any
                setattr(cls, opt.attr, opt.default)
        cls.__annotations__ = annotations
        return cls
    return add


def field_name(path):
    """The API's spelling of a field: its name in its parameter dataclass."""
    return path.rsplit(".", 1)[-1]


def flag_name(path):
    """The command line's spelling of a field: svmtool train's flag."""
    opt = FIELDS.get(path)
    if opt is None or not opt.flags:
        return field_name(path)
    return opt.shown or opt.flags[0]


def sklearn_name(path):
    """scikit-learn's spelling of a field: the estimators' parameter."""
    opt = FIELDS.get(path)
    return (opt.sklearn if opt is not None and opt.sklearn else None) or field_name(path)


def render(message, spell=field_name):
    """``message`` (a :class:`Message` or a text with :func:`named` fields) with every field
    written by ``spell``."""
    template = getattr(message, "template", message)
    if not template or _MARK not in template:
        return template
    parts = template.split(_MARK)
    return "".join(spell(p) if i % 2 else p for i, p in enumerate(parts))


class Message(str):
    """A check's message: it reads with the fields' names (the API's spelling), and keeps its
    ``template`` for a front end to :func:`render` in its own."""

    def __new__(cls, template):
        template = getattr(template, "template", template)
        self = super().__new__(cls, render(template))
        self.template = template
        return self


def _message(check):
    """A check function whose message (when there is one) is a :class:`Message`."""
    from functools import wraps

    @wraps(check)
    def checked(*args, **kwargs):
        message = check(*args, **kwargs)
        return None if message is None else Message(message)
    return checked


def check_declared(obj, owner):
    """The declared checks of the fields of ``obj`` (the group ``owner``; "": TrainParams), in
    declaration order: the first message, or None."""
    for opt in OPTIONS:
        if opt.owner != owner or not opt.field or (opt.check is None and not opt.needs):
            continue
        value = getattr(obj, opt.attr)
        if value is None:
            continue
        if opt.needs and not getattr(obj, opt.needs[0].rsplit(".", 1)[-1]):
            return f"{named(opt.field)} needs {named(opt.needs[0])}{opt.needs[1]}"
        if opt.check is not None:
            msg = opt.check(value, obj, named(opt.field))
            if msg:
                return msg
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


def _markdown_cell(text):
    return text.replace("|", "\\|")


def options_markdown():
    """docs/solvers.md's option table: every flag of svmtool train, from OPTIONS."""
    rows = ["| option | meaning |", "|---|---|"]
    for opt in OPTIONS:
        if not opt.flags:
            continue
        if opt.choices:
            arg = "|".join(opt.choices)
        elif opt.metavar:
            arg = opt.metavar
        elif opt.type in (int, float, str, "file"):
            arg = {int: "N", float: "X", str: "NAME", "file": "FILE"}[opt.type]
        else:
            arg = ""
        flags = " / ".join(f"`{f}{' ' + arg if arg else ''}`" for f in opt.flags)
        default = ""
        if opt.show_default:
            default = f" (default {opt.default:g})"
        rows.append(f"| {_markdown_cell(flags)} | {_markdown_cell(opt.help_text() + default)} |")
    return "\n".join(rows) + "\n"


@dataclass(frozen=True)
@_declared_fields("kernel")
class KernelParams:
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
    p: float = _default("svr.p")    # LIBLINEAR's -p: no loss while |w'x_i - y_i| <= p

    @_message
    def check(self) -> Optional[str]:
        return check_declared(self, "svr")


@dataclass(frozen=True)
@_declared_fields("oneclass")
class OneClassParams:
    nu: float = _default("oneclass.nu")  # LIBLINEAR's -n: the fraction nu of (bounded) SVs

    @_message
    def check(self) -> Optional[str]:
        return check_declared(self, "oneclass")


@dataclass(frozen=True)
@_declared_fields("libsvm")
class LibsvmParams:
    probability: bool = _default("libsvm.probability")  # LIBSVM's -b 1
    seed: int = 1                   # generator of the probability folds

    @_message
    def check(self) -> Optional[str]:
        return check_declared(self, "libsvm")


@dataclass(frozen=True)
@_declared_fields("bias_reg")
class BiasRegParams:
    regularize: bool = _default("bias_reg.regularize")  # False: LIBLINEAR's -R, the bias
                                                        # weight is not regularised

    @_message
    def check(self) -> Optional[str]:
        return check_declared(self, "bias_reg")


@dataclass(frozen=True)
@_declared_fields("")
class TrainParams:
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


@_message
def check_dask_address(address) -> Optional[str]:
    """None when ``address`` is ``local:N`` (N >= 1) or a scheduler address, else a message."""
    a = str(address)
    if a.startswith("local:"):
        n = a[len("local:"):]
        if not n.isdigit() or int(n) < 1:
            return f"{named('dask')} local:N needs a number of workers N >= 1 (got {a!r})"
        return None
    rest = a.split("://", 1)[-1]
    if not rest or ":" not in rest or not rest.rsplit(":", 1)[1].isdigit():
        return (f"{named('dask')} takes a scheduler address such as tcp://host:8786, or local:N "
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
