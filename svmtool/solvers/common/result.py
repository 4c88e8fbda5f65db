"""What every solver returns (:class:`SolverResult`) and how a solver keeps a time budget."""

import time
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
    return time.monotonic() >= deadline


def time_limit_warning(name, iterations, what="the current point"):
    return (f"{name} stopped by the time limit after {iterations} iterations, before its "
            f"stopping rule was met; the model is {what}")
