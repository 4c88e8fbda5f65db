"""LIBLINEAR's ``train_one``: one subproblem (a one-vs-rest class, or the whole problem of a
regression), solved by its registry entry's fit and, when that stops at its iteration cap, by the
solver the entry names as its ``fallback``, from the first one's ``w``.

LIBLINEAR does this for its dual solvers whose primal problem has a Newton solver: -s 1 goes on
with -s 2 (``-e`` times 0.1), -s 7 with -s 0 (0.1), -s 12 with -s 11 (0.001) -- the dual's
tolerance is too loose a primal one.  A run stopped by the time limit (``extra["stopped"]``) is
not rescued: its budget is spent.  This is the one place where a solver hands over to another;
the in-memory, out-of-core and -C paths all solve their subproblems here.
"""

from dataclasses import replace


def train_one(spec, solve, params, init_w=None, weighted=False, streaming=None):
    """``solve(spec, params, init_w) -> SolverResult`` for ``spec``, then for its fallback if
    due (the Newton result, with ``extra["notice"]`` saying why).  ``weighted``: the rows carry
    instance weights; a fallback that does not take them (on the path ``streaming``: None in
    memory, "blocks" out of core) is not run (the first solver's result
    stands, its warning saying so)."""
    res = solve(spec, params, init_w)
    if not spec.fallback or res.converged or res.extra.get("stopped"):
        return res
    from svmtool.solvers import get_spec

    then = get_spec(spec.fallback)
    if weighted and not then.takes_weights(streaming):
        res.extra["warning"] = ((res.extra.get("warning") or "") + f" (the fallback "
                                f"{then.name} does not take instance weights: not run)")
        return res
    eps = float(res.extra["eps"]) * spec.fallback_eps
    out = solve(then, replace(params, eps=eps, max_iter=None), res.w)
    what = res.extra.get("method", "dual coordinate descent")
    out.extra["notice"] = (f"{what} (-s {spec.liblinear_id}) reached its iteration cap "
                           f"({res.iterations}); switched to the primal Newton solver (-s "
                           f"{then.liblinear_id}) with eps={eps:g}, as LIBLINEAR does")
    out.extra["dual_iterations"] = int(res.iterations)
    out.extra["dual_solve_time"] = res.extra.get("solve_time")
    return out
