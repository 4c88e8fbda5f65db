"""The training options, each declared once: :data:`OPTIONS`, and what reads it.

An :class:`Option` holds a flag (or several) of ``svmtool train``, the parameter field it sets,
the registry's option group that reads it, its default, help text and check.  From here come the
parameter dataclasses' defaults and checks (:mod:`svmtool.params`), the click options and group
refusals of the command line, docs/solvers.md's option table (:func:`options_markdown`), the
scikit-learn estimators' defaults and constraints, and the other command lines' spellings.
"""

from dataclasses import dataclass
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
    """One option of svmtool train: its spellings, help, field, type, default and checks."""

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
    Option(("--threads",), "Threads for reading, row passes, one-vs-rest classes, one-vs-one "
           "pairs and the kernel solvers' row work (default: the cores this process may use, or "
           "one while the last minute's load leaves no core free).",
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
