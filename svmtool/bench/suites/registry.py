"""The suite registry: a suite is a named list of cases, each case one bench run
(:class:`svmtool.bench.run.BenchConfig`) or the reader's throughput, built for a data folder.

A suite says what it compares and against which anchors (``what``), whether ``make bench`` runs
it (``default``), and builds its cases from a :class:`Where` (the shared data folder, or the
bundled data for ``--quick`` and for a clone without ../shared/data).  Suites register here from
the family modules beside this one; ``svmtool bench --list-suites`` prints them.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

REPO = Path(__file__).resolve().parents[3]
BUNDLED = REPO / "data"
SHARED = REPO.parent / "shared" / "data"

# data sets by name: (train, test) under the shared folder; the bundled copies where there are
SETS = {
    "a9a": ("a9a/a9a", "a9a/a9a.t"),
    "w8a": ("w8a/w8a", "w8a/w8a.t"),
    "ijcnn1": ("ijcnn1/ijcnn1", "ijcnn1/ijcnn1.t"),
    "news20": ("news20/news20", "news20/news20.t"),
    "letter": ("letter/letter.scale", "letter/letter.scale.t"),
    "mushrooms": ("mushrooms/mushrooms", None),
    "heart": ("heart/heart_scale", None),
    "letor": ("letor_ohsumed/Fold1_trainingset.txt", None),
}
BUNDLED_SETS = {"a9a": ("a9a", "a9a.t"), "heart": ("heart_scale", None)}


@dataclass
class Where:
    """Where a suite finds its data: ``data_dir`` (the shared sets) or, with ``quick``, only the
    bundled ``data/`` (heart_scale, a9a); ``large`` asks for the larger cases of the suites
    that have them, ``work`` is the folder for data sets built from the shared ones."""

    data_dir: Optional[Path] = None
    quick: bool = False
    large: bool = False             # --large: the suites' larger cases (built data sets)
    work: Optional[Path] = None     # where built data sets go (svmtool.bench.suites.derived)

    @property
    def shared(self):
        d = Path(self.data_dir) if self.data_dir else SHARED
        return None if self.quick or not (d / "a9a" / "a9a").exists() else d

    def files(self, name):
        """(train, test or None) of data set ``name``, or None when it is not here."""
        if self.shared is not None and name in SETS:
            tr, te = SETS[name]
            if (self.shared / tr).exists():
                return str(self.shared / tr), (str(self.shared / te) if te else None)
            return None
        if name in BUNDLED_SETS:
            tr, te = BUNDLED_SETS[name]
            return str(BUNDLED / tr), (str(BUNDLED / te) if te else None)
        return None

    def describe(self):
        if self.quick:
            return "data/heart_scale (bundled; --quick)"
        return "../shared/data" if self.shared is not None else "data/ (bundled)"

    def sets(self, names, fallback=("a9a",)):
        """[(name, train, test, options)] of the named sets that are here.  --quick: the bundled
        heart_scale alone; without the shared folder: the bundled sets among ``fallback``.  A set
        without a test file holds rows out (``split``) so that accuracy is measured."""
        if self.quick:
            picked = ["heart"]
        elif self.shared is None:
            picked = [n for n in fallback if n in BUNDLED_SETS] or ["heart"]
        else:
            picked = list(names)
        out = []
        for n in picked:
            f = self.files(n)
            if f is None:
                continue
            opts = {"split": 200} if n == "heart" else {}
            out.append((n, f[0], f[1], opts))
        return out


@dataclass
class Case:
    """One titled part of a suite: a bench run (``config``), reading throughput (``io``: the
    files) or a study of its own (``table``: ``table(repeat, log) -> markdown``, see
    :mod:`svmtool.bench.studies`; ``files`` names the data it reads)."""

    title: str
    config: object = None
    io: list = field(default_factory=list)
    io_options: dict = field(default_factory=dict)   # iobench.run's memory, write, jit
    table: Optional[Callable] = None
    files: list = field(default_factory=list)


@dataclass
class Suite:
    name: str
    summary: str                    # one line: --list-suites
    what: str                       # the paragraph above its tables: what, against which anchors
    cases: Callable                 # Where -> [Case]
    default: bool = False           # part of `make bench` (svmtool bench --suite default)
    replaces: str = ""              # the benchmarks/ script it replaced, if any


SUITES = {}


def register(suite):
    if suite.name in SUITES:
        raise ValueError(f"suite {suite.name!r} registered twice")
    SUITES[suite.name] = suite
    return suite


def ordered():
    """The suites, the default set first, each part in registration order."""
    return ([s for s in SUITES.values() if s.default]
            + [s for s in SUITES.values() if not s.default])


def select(names):
    """Suites for a comma-separated list of names ('default': the make bench set, 'all')."""
    out = []
    for n in [x.strip() for x in names.split(",") if x.strip()]:
        if n == "default":
            picked = [s for s in ordered() if s.default]
        elif n == "all":
            picked = ordered()
        elif n in SUITES:
            picked = [SUITES[n]]
        else:
            raise KeyError(f"unknown suite {n!r}: choose from {', '.join(SUITES)}, default, all "
                           f"(svmtool bench --list-suites)")
        out += [s for s in picked if s not in out]
    return out
