"""TrainParams: every training option in one frozen object, checked in one place."""

from dataclasses import dataclass, field, replace
from typing import Optional


@dataclass(frozen=True)
class TrainParams:
    solver: str = "dcd-l2"          # a name or number from svmtool.solvers.REGISTRY
    C: float = 1.0                  # LIBLINEAR's C: 1/2 w'w + C sum(loss_i)
    eps: Optional[float] = None     # stopping tolerance; None: the solver's default
    bias: float = -1.0              # LIBLINEAR's -B: < 0 no bias column, else its value
    weights: tuple = ()             # ((label, factor), ...): C of that class is C * factor
    max_iter: Optional[int] = None  # outer-iteration cap; None: the solver's default
    seed: int = 1                   # permutation / sampling seed
    liblinear_rng: bool = False     # emulate LIBLINEAR's rand() and ordering (bit-identical w)
    shrinking: bool = True
    threads: Optional[int] = None   # None: all cores
    extra: dict = field(default_factory=dict, hash=False, compare=False)

    def check(self) -> Optional[str]:
        """Return a message naming what is wrong, or None."""
        if not (self.C > 0):
            return f"C must be > 0 (got {self.C})"
        if self.eps is not None and not (self.eps > 0):
            return f"eps (-e) must be > 0 (got {self.eps})"
        if self.max_iter is not None and self.max_iter < 1:
            return f"--max-iter must be at least 1 (got {self.max_iter})"
        for label, factor in self.weights:
            if not (factor > 0):
                return f"weight of class {label:g} must be > 0 (got {factor})"
        if self.threads is not None and self.threads < 1:
            return f"--threads must be at least 1 (got {self.threads})"
        return None


def make_params(params, kwargs):
    """``params`` (or a new TrainParams) with ``kwargs`` applied, checked; ParameterError if not."""
    if params is None:
        params = TrainParams(**kwargs)
    elif kwargs:
        params = replace(params, **kwargs)
    msg = params.check()
    if msg:
        from svmtool.errors import ParameterError

        raise ParameterError(msg)
    return params
