"""scikit-learn estimators over svmtool's API (the ``svmtool[sklearn]`` extra).

Linear: :class:`LinearSVC`, :class:`LogisticRegression`, :class:`LinearSVR`,
:class:`LinearOneClassSVM` (any linear registry solver by ``solver=``); kernel: :class:`SVC`,
:class:`NuSVC`, :class:`SVR`, :class:`NuSVR`, :class:`OneClassSVM` (LIBSVM's problems, solved
exactly) and :class:`DCSVC` (DC-SVM); ranking: :class:`RankSVM` (``fit(X, y, qid=...)``).
Every estimator also fits on a path (svmlight text, a binary cache -- memory-mapped, out of
core above ``memory_budget`` -- or a shard index), and ``save(path, format=...)`` writes the
model file the C programs and ``svmtool predict`` read; :func:`load` reads one back.

Importing this package imports scikit-learn; nothing else in svmtool does (but bench's
anchors).  docs/python.md shows the uses.
"""

from svmtool.errors import require

# without scikit-learn: one ImportError that names the extra, before any module below imports it
require("sklearn", "svmtool.sklearn")

from svmtool.sklearn._checks import expected_failed_checks  # noqa: E402
from svmtool.sklearn._io import load  # noqa: E402
from svmtool.sklearn._kernel import DCSVC, NuSVC, NuSVR, OneClassSVM, SVC, SVR  # noqa: E402
from svmtool.sklearn._linear import (LinearOneClassSVM, LinearSVC, LinearSVR,  # noqa: E402
                                     LogisticRegression)
from svmtool.sklearn._ranking import RankSVM  # noqa: E402

ESTIMATORS = (LinearSVC, LogisticRegression, LinearSVR, LinearOneClassSVM, SVC, NuSVC, SVR,
              NuSVR, OneClassSVM, DCSVC, RankSVM)

__all__ = [cls.__name__ for cls in ESTIMATORS] + ["ESTIMATORS", "expected_failed_checks", "load",
                                                  "markdown_table"]


def default_solver(cls):
    """The registry solver an estimator class trains with by default."""
    return cls()._solver()


def markdown_table():
    """The estimators' table of docs/python.md: what each is, the registry solvers its
    ``solver=`` takes (:mod:`svmtool.sklearn._table`), its default."""
    from svmtool.sklearn._table import ESTIMATOR_SOLVERS, solvers_of

    lines = ["| estimator | what | `solver=` (registry names) | default |",
             "|---|---|---|---|"]
    for cls in ESTIMATORS:
        names = ", ".join(f"`{n}`" for n in solvers_of(cls.__name__))
        lines.append(f"| `{cls.__name__}` | {ESTIMATOR_SOLVERS[cls.__name__][0]} | {names} | "
                     f"`{default_solver(cls)}` |")
    return "\n".join(lines)
