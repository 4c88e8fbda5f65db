"""The suite registry: a suite is a named list of cases, each case one bench run
(:class:`svmtool.bench.run.BenchConfig`) or the reader's throughput, built for a data folder.

A suite says what it compares and against which anchors (``what``), whether ``make bench`` runs
it (``default``), and builds its cases from a :class:`Where` (the shared data folder, or the
bundled data for ``--quick`` and for a clone without ../shared/data).  Suites register here from
the family modules beside this one; ``svmtool bench --list-suites`` prints them.
"""

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from svmtool.bench.data import bundled

# the default data folders, relative to the current folder (a checkout's root, as `make bench`
# runs): the shared sets beside it, and the flat data/ that holds a9a
SHARED = Path("..") / "shared" / "data"
LOCAL = Path("data")

# data sets by name: (train, test) under a shared folder (a folder of its own per set)
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
# the sets of a bench without a shared folder: heart_scale is package data (pyproject.toml's
# [tool.setuptools.package-data]), a9a is read from the current folder's data/ when it is there
BUNDLED_SETS = {"a9a": ("a9a", "a9a.t"), "heart": ("heart_scale", None)}


def _flat(folder, rel):
    """``rel`` (a shared layout path such as a9a/a9a.t) in ``folder``, in its own subfolder or
    directly in the folder (the layout of a checkout's data/); None when absent."""
    for p in (Path(folder) / rel, Path(folder) / Path(rel).name):
        if p.is_file():
            return Path(os.path.abspath(p))     # commands may run in folders of their own
    return None


def holds_sets(folder):
    """The names of SETS whose training file is in ``folder`` (either layout)."""
    return [n for n, (tr, _) in SETS.items() if _flat(folder, tr) is not None]


@dataclass
class Where:
    """Where a suite finds its data: ``data_dir`` (the shared sets; default ../shared/data of the
    current folder, when it holds a9a) or, with ``quick`` or without such a folder, the bundled
    sets (the packaged heart_scale; a9a from data/ of the current folder, when there);
    ``large`` asks for the larger cases of the suites that have them, ``work`` is the folder for
    data sets built from the shared ones.  ``missing`` collects the sets a suite asked for that
    are not here (the runner says so in one line)."""

    data_dir: Optional[Path] = None
    quick: bool = False
    large: bool = False             # --large: the suites' larger cases (built data sets)
    work: Optional[Path] = None     # where built data sets go (svmtool.bench.suites.derived)
    missing: list = field(default_factory=list)

    @property
    def shared(self):
        if self.quick:
            return None
        if self.data_dir:
            d = Path(os.path.abspath(self.data_dir))
            return d if holds_sets(d) else None
        return Path(os.path.abspath(SHARED)) if _flat(SHARED, SETS["a9a"][0]) is not None else None

    def _miss(self, name):
        if name not in self.missing:
            self.missing.append(name)

    def files(self, name):
        """(train, test or None) of data set ``name``, or None when it is not here."""
        if self.shared is not None and name in SETS:
            tr, te = SETS[name]
            p = _flat(self.shared, tr)
            if p is not None:
                t = _flat(self.shared, te) if te else None
                return str(p), (str(t) if t is not None else None)
            if name != "heart":
                self._miss(name)
                return None
        if name == "heart":
            return bundled(BUNDLED_SETS["heart"][0]), None
        if name in BUNDLED_SETS and not self.quick:
            tr, te = BUNDLED_SETS[name]
            p, t = _flat(LOCAL, tr), (_flat(LOCAL, te) if te else None)
            if p is not None:
                return str(p), (str(t) if t is not None else None)
        self._miss(name)
        return None

    def describe(self):
        if self.quick:
            return "heart_scale (bundled; --quick)"
        if self.shared is not None:
            return str(self.data_dir) if self.data_dir else "../shared/data"
        return "data/ (bundled)" if (LOCAL / "a9a").is_file() else "heart_scale (bundled)"

    def sets(self, names, fallback=("a9a",)):
        """[(name, train, test, options)] of the named sets that are here.  --quick: the bundled
        heart_scale alone; without the shared folder: the bundled sets among ``fallback`` that
        are here, else heart_scale.  A set without a test file holds rows out (``split``) so
        that accuracy is measured."""
        if self.quick:
            picked = ["heart"]
        elif self.shared is None:
            picked = [n for n in fallback if n in BUNDLED_SETS]
            if not [n for n in picked if self.files(n) is not None]:
                picked = ["heart"]
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
    needs: tuple = ()               # optional dependencies it cannot run without (module names)


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
