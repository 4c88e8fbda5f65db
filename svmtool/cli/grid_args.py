"""The argument vector of ``svmtool grid``: grid.py's own options, svm-train's options passed
through, and svmtool's long options.  Everything is checked here, before any data is read."""

import os
from dataclasses import dataclass, field
from typing import Optional

from svmtool.cli.common import warn
from svmtool.cli.libsvm_cli import TRAIN_OPTIONS, _int, _number
from svmtool.errors import ParameterError
from svmtool.params import check_value, refuse
from svmtool.selection.spec import DEFAULT_LOG2C, DEFAULT_LOG2G, DEFAULT_FOLD, parse_range

USAGE = "svmtool grid [grid.py's options] [svm-train's options] [options] TRAIN" \
        "   |   svmtool grid --easy [options] TRAIN [TEST]"

# svm-train's options that take a value (libsvm_cli.TRAIN_OPTIONS but -c and -g, which the grid
# sets), and LIBLINEAR's -B, passed through to every cell
TRAIN_VALUE_OPTS = tuple(f for f in TRAIN_OPTIONS if f not in ("-c", "-g")) + ("-B",)
# svmtool's long options: name -> (key, kind)
LONG = {
    "--easy": ("easy", "flag"), "--order": ("order", str), "--threads": ("threads", int),
    "--dask": ("dask", str), "--time-limit": ("time_limit", float),
    "--report": ("report", str), "--halving": ("halving", "flag"),
    "--early": ("early", "flag"), "--refine": ("refine", int),
    "--libsvm-folds": ("folds", "libsvm"), "--svmtool-folds": ("folds", "svmtool"),
    "--seed": ("seed", int), "--seed-alpha": ("seed_alpha", str),
    "--no-row-sharing": ("share_rows", "off"), "--quiet": ("quiet", "flag"),
}


@dataclass
class GridArgs:
    data: str = ""
    test: Optional[str] = None
    log2c: Optional[tuple] = DEFAULT_LOG2C
    log2g: Optional[tuple] = DEFAULT_LOG2G
    log2c_given: bool = False
    log2g_given: bool = False
    log2p: Optional[tuple] = None       # a linear SVR's p (svmtool's; grid.py has none)
    fold: int = DEFAULT_FOLD
    out: Optional[str] = None           # None: dataset.out; "" (null): none
    png: Optional[str] = None           # None: dataset.png; "" (null): none
    png_given: bool = False
    resume: Optional[str] = None
    ignored: list = field(default_factory=list)     # -svmtrain, -gnuplot
    train: dict = field(default_factory=dict)       # svm-train's options: key -> value
    weights: list = field(default_factory=list)
    quiet: bool = False
    easy: bool = False
    order: str = "grid"
    threads: Optional[int] = None
    dask: Optional[str] = None
    time_limit: Optional[float] = None
    report: Optional[str] = None
    halving: bool = False
    early: bool = False
    refine: int = 0
    folds: str = "libsvm"
    seed: int = 1
    seed_alpha: str = "c"
    share_rows: bool = True

    @property
    def title(self):
        return os.path.basename(self.data.rstrip("/")) if self.data else ""


def parse(args):
    """The argument vector -> GridArgs (ParameterError naming the option when it is wrong)."""
    a = GridArgs()
    args = list(args)
    rest = []
    i = 0
    while i < len(args):
        i = _take(a, args, i, rest)
    want = (1, 2) if a.easy else (1,)
    if len(rest) not in want:
        raise ParameterError(f"usage: {USAGE}")
    a.data = rest[0]
    a.test = rest[1] if len(rest) > 1 else None
    if a.resume is True:
        a.resume = a.title + ".out"
    _check(a)
    return a


def _take(a, args, i, rest):
    """Read the option (or file) at ``args[i]`` into ``a`` (``rest``: the files); the index of
    the next argument."""
    opt = args[i]

    def value():
        if i + 1 >= len(args):
            raise ParameterError(f"option {opt} needs a value")
        return args[i + 1]

    if opt in LONG:
        key, kind = LONG[opt]
        if kind in ("flag", "libsvm", "svmtool", "off"):
            setattr(a, key, {"flag": True, "off": False}.get(kind, kind))
            return i + 1
        setattr(a, key, _typed(opt, value(), kind))
        return i + 2
    if opt.startswith("--"):
        raise ParameterError(f"unknown option: {opt} (see 'svmtool grid --help')")
    if opt == "-q":
        a.quiet = True
        return i + 1
    if opt == "-resume":
        if i + 1 < len(args) - 1 and not args[i + 1].startswith("-"):
            a.resume = args[i + 1]
            return i + 2
        a.resume = True          # dataset.out, known once the data file is
        return i + 1
    if not opt.startswith("-") or len(opt) == 1:
        rest.append(opt)
        return i + 1
    _take_value(a, opt, value)
    return i + 2


def _take_value(a, opt, value):
    """An option of grid.py or svm-train that takes a value (``value()``)."""
    if opt in ("-log2c", "-log2g", "-log2p"):
        setattr(a, opt[1:], parse_range(opt, value()))
        if opt != "-log2p":
            setattr(a, opt[1:] + "_given", True)
    elif opt == "-v":
        a.fold = _int(opt, value())
        if a.fold < 2:
            raise ParameterError(f"-v {a.fold}: n-fold cross validation needs n >= 2")
    elif opt in ("-c", "-g"):
        raise ParameterError(f"{opt}: use -log2c and -log2g (grid.py's rule: the grid "
                             f"sets C and gamma)")
    elif opt in ("-svmtrain", "-gnuplot"):
        a.ignored.append((opt, value()))
    elif opt in ("-out", "-png"):
        v = value()
        setattr(a, opt[1:], "" if v == "null" else v)
        a.png_given = a.png_given or opt == "-png"
    elif opt in TRAIN_VALUE_OPTS:
        a.train[opt[1:]] = value()
    elif opt.startswith("-w") and len(opt) > 2:
        a.weights.append((_number(opt, opt[2:]), _number(opt, value())))
    else:
        raise ParameterError(f"unknown option: {opt} (see 'svmtool grid --help')")


def _check(a):
    """The combinations of grid's options: ParameterError naming the first that is wrong."""
    if a.log2c is None and a.log2g is None:
        raise ParameterError("-log2c and -log2g should not be null simultaneously")
    refuse(check_value("threads", a.threads))           # train's declared checks
    refuse(check_value("time_limit", a.time_limit))
    if a.order not in ("grid", "path"):
        raise ParameterError(f"--order must be grid or path (got {a.order!r})")
    if a.seed_alpha not in ("c", "fold", "none"):
        raise ParameterError(f"--seed-alpha must be c, fold or none (got {a.seed_alpha!r})")
    if a.refine < 0:
        raise ParameterError(f"--refine must be >= 0 (got {a.refine})")
    if a.refine and not a.early:
        raise ParameterError("--refine re-runs the best cells of an --early grid exactly: it "
                             "needs -s dcsvm --early")


def _typed(opt, text, kind):
    if kind is int:
        return _int(opt, text)
    if kind is float:
        return _number(opt, text)
    return text


def solver_name(a):
    """-s: svm-train's 0-4, or a solver of svmtool's registry by name."""
    s = a.train.get("s", "0")
    if s.lstrip("-").isdigit():
        k = int(s)
        if k not in range(5):
            raise ParameterError(f"-s {s}: svm-train's types are 0 to 4 (C-SVC, nu-SVC, "
                                 f"one-class, epsilon-SVR, nu-SVR); svmtool's other solvers "
                                 f"go by name (-s dcd-l2, -s dcsvm, ...)")
        from svmtool.solvers import libsvm_spec

        return libsvm_spec(k).name
    return s


def build_params(a, spec_name):
    """TrainParams of every cell from the pass-through options (svm-train's names)."""
    from svmtool.cli.libsvm_cli import check_train_settings, train_defaults, train_params
    from svmtool.params import DcsvmParams, KernelParams, TrainParams, make_params
    from svmtool.solvers import get_spec

    spec = get_spec(spec_name)
    t = a.train
    if spec.libsvm_id is not None:
        s = dict(train_defaults(), svm_type=spec.libsvm_id, weights=a.weights)
        for k, v in t.items():
            if k not in ("s", "B"):
                key, _, typ = TRAIN_OPTIONS["-" + k]
                s[key] = _num("-" + k, v, typ)
            elif k == "B":
                raise ParameterError(f"-B: -s {spec.name} takes no bias column (LIBSVM's "
                                     f"problem has rho)")
        check_train_settings(s)
        return train_params(s), spec
    kw = {"solver": spec.name}
    if "e" in t:
        kw["eps"] = _num("-e", t["e"], float)
    kw["bias"] = _num("-B", t["B"], float) if "B" in t else spec.default_bias
    if a.weights:
        kw["weights"] = tuple((float(k), float(v)) for k, v in a.weights)
    if "h" in t:
        kw["shrinking"] = bool(_num("-h", t["h"], int))
    if "kernel" in spec.options:
        kp = {}
        for key in ("t", "d", "r", "m"):
            if key in t:
                _, path, typ = TRAIN_OPTIONS["-" + key]
                kp[path.split(".")[1]] = _num("-" + key, t[key], typ)
        kw["kernel"] = KernelParams(**kp)
    else:
        for key in ("t", "d", "r", "m", "n", "b"):
            if key in t:
                raise ParameterError(f"-{key} does not apply to -s {spec.name}")
    if "dcsvm" in spec.options:
        kw["dcsvm"] = DcsvmParams(early=bool(a.early))
    elif a.early:
        raise ParameterError(f"--early is DC-SVM's early-prediction model: it needs -s dcsvm, "
                             f"not -s {spec.name}")
    if "p" in t:
        if "svr" not in spec.options:
            raise ParameterError(f"-p does not apply to -s {spec.name}")
        from svmtool.params import SvrParams

        kw["svr"] = SvrParams(p=_num("-p", t["p"], float))
    return make_params(TrainParams(**kw), {}), spec


def _num(opt, text, typ):
    from svmtool.cli.libsvm_cli import TRAIN_OPTIONS, _int, _number

    return _int(opt, text) if typ is int else _number(opt, text)


def note_ignored(a, quiet):
    for opt, v in a.ignored:
        if not quiet:
            warn(f"{opt} {v} is ignored: svmtool grid runs every cell in this process"
                 + (" and draws with matplotlib" if opt == "-gnuplot" else ""))
