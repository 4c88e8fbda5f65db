"""When the cutting-plane drivers stop (:func:`svmtool.solvers.cutting_plane.cutting_plane.solve_cp`
and :func:`svmtool.solvers.cutting_plane.ocas.solve_ocas`), and the warning each way of stopping
gives.

A driver stops when its own rule is met (``-e``: each driver's docstring), and else after ``done``
completed iterations by the first of :func:`stop_reason`'s rules: the iteration cap
(``--max-iter``), no progress (a C far too large), a cap foreseen far beyond reach (an ``-e`` far
too small) or the time budget (``--time-limit``).  The result's ``extra["stopped"]`` names an
early stop (not the cap, the ordinary end of a run that did not converge) and
``extra["warning"]`` is :func:`stop_warning`'s message.
"""

from svmtool.solvers.common.result import STOPPED_TIME, time_limit_warning, time_up

ITERATION_CAP = "iteration cap"
NO_PROGRESS = "no progress"
CAP_FORESEEN = "cap foreseen"


# The cutting-plane solvers' "no progress" stop, for a C far too large for them (their iteration
# count grows with C: O(C R^2 / eps), Joachims, Finley & Yu 2009; Teo et al. 2010).  After
# NO_PROGRESS_START iterations their lower bound has normally reached a fraction of the objective
# orders of magnitude above NO_PROGRESS_FRACTION (cp and ocas on a9a at C 1000, on heart_scale at
# C 1e6).  With -c 1e12 on heart_scale it is well below that fraction, grows slowly, and every
# iteration's reduced QP costs more than the last: the run would not finish in hours, at any -e.
# A run whose bound is below NO_PROGRESS_FRACTION of the objective at that point stops with the
# best point found and a warning (exit 0, as at the iteration cap).
NO_PROGRESS_START = 100
NO_PROGRESS_FRACTION = 1e-6


def no_progress(it, lower, best):
    """Whether a cutting-plane run stops here: iteration ``it``, lower bound ``lower``, best
    objective ``best`` (see NO_PROGRESS_FRACTION)."""
    return it == NO_PROGRESS_START and lower < NO_PROGRESS_FRACTION * best


# The "cap foreseen" stop, for a tolerance far beyond reach (-c 1e6 -e 1e-12 on heart_scale: the
# cutting-plane runs progress, but each iteration's reduced QP grows with the working set and the
# 100,000-iteration cap was hours away).  The family's worst-case rate is O(1/t): after t
# iterations the gap is at most K/t (Joachims 2006, Theorem 5; Teo et al. 2010 for OCAS's bundle
# form), so a run whose gap at iteration t is g, with a stopping target e, needs about t g / e
# iterations at that rate.  At iterations 100, 200, 400, ... a run for which that estimate exceeds
# CAP_FORESEEN_FACTOR times its iteration cap stops with the cap's kind of warning (exit 0): the
# factor leaves room for runs that converge faster than the worst case, so only a tolerance that
# is out of reach by orders of magnitude stops early (a9a, C 100, -s cp at its default -e: the
# estimate at iteration 100 is 26,000 iterations, a quarter of the cap; the heart_scale case
# above: 4e13).
CAP_FORESEEN_FACTOR = 100.0


def cap_foreseen(it, gap, target, max_iter):
    """Whether a cutting-plane run stops at iteration ``it`` because, at the worst-case rate, its
    ``gap`` would need more than CAP_FORESEEN_FACTOR times ``max_iter`` iterations to reach
    ``target`` (see above).  Checked at iterations 100, 200, 400, ..."""
    if it < NO_PROGRESS_START or it % NO_PROGRESS_START:
        return False
    k = it // NO_PROGRESS_START
    if k & (k - 1):
        return False
    if not (gap > 0.0) or not (target > 0.0):
        return False
    return it * (gap / target) > CAP_FORESEEN_FACTOR * max_iter


def cap_foreseen_warning(name, it, gap, target, max_iter, eps):
    return (f"{name} stopped at iteration {it}, far from eps={eps:g}: its gap ({gap:.3g}) is "
            f"{gap / target:.3g} times the stopping tolerance, which at the cutting-plane "
            f"solvers' worst-case rate of O(1/iterations) needs about {it * gap / target:.2g} "
            f"iterations, beyond the cap of {max_iter} (raise -e, lower C, or use -s dcd-l1 or "
            f"-s newton)")


def no_progress_warning(name, it, lower, best, eps):
    return (f"{name} stopped at iteration {it}, far from eps={eps:g}: its lower bound "
            f"({lower:.3g}) is still below {NO_PROGRESS_FRACTION:g} of the objective "
            f"({best:.3g}); C is too large for the cutting-plane solvers, whose iteration count "
            f"grows with C (try -s dcd-l1, -s newton or a smaller C)")


def stop_reason(done, gap, target, lower, best, max_iter, deadline):
    """Why a run that has not met its stopping rule stops after ``done`` completed iterations
    (None: it goes on): its gap to the stopping ``target``, its lower bound and best objective,
    its iteration cap and time budget (``deadline``, checked after the first iteration)."""
    if done >= max_iter:
        return ITERATION_CAP
    if no_progress(done, lower, best):
        return NO_PROGRESS
    if cap_foreseen(done, gap, target, max_iter):
        return CAP_FORESEEN
    if done > 0 and time_up(deadline):
        return STOPPED_TIME
    return None


def stop_warning(reason, name, it, max_iter, eps, *, gap, target, lower, best, rule_eps=None,
                 rule="the stopping tolerance", point="the current point"):
    """The warning of a run stopped by ``reason`` (None: it converged, no warning).  ``rule``
    and ``rule_eps`` name the stopping rule missed (default: ``eps``); ``point``, what the model
    is when the time budget ends the run."""
    if reason is None:
        return None
    if reason == NO_PROGRESS:
        return no_progress_warning(name, it, lower, best, eps)
    if reason == CAP_FORESEEN:
        return cap_foreseen_warning(name, it, gap, target, max_iter,
                                    eps if rule_eps is None else rule_eps)
    if reason == STOPPED_TIME:
        return time_limit_warning(name, it, point)
    return (f"{name} reached the maximum number of iterations ({max_iter}) before {rule} "
            f"eps={eps:g} was met; raise --max-iter or -e")


def early_stop(reason):
    """``extra["stopped"]`` of a run stopped by ``reason`` (None at the cap or when converged)."""
    return None if reason in (None, ITERATION_CAP) else reason
