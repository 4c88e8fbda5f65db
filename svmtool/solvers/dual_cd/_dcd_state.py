"""The state of dual coordinate descent's outer iterations, as two numpy records.

The jitted loop (:mod:`svmtool.solvers.dual_cd._dcd_jit`) and its pure-Python twin
(:mod:`svmtool.solvers.dual_cd._dcd_py`) read and write the same two one-element structured
arrays, so that a run can stop (work budget, callback, deadline) and resume in either loop:

* ``BOX``, fixed for a fit: the dual's upper bound ``u`` and diagonal term ``d`` of each class
  (L1 loss: u = C, d = 0; L2 loss: u = inf, d = 1/(2C));
* ``LOOP``, carried from one call to the next: the shrinking thresholds of the last outer
  iteration (the largest and smallest projected gradient, or +-inf when shrinking is off or
  reset), the number of active rows (the first ``active`` entries of the permutation), the
  outer iterations done and whether the run converged.  ``sink`` keeps the jitted loop's
  prefetching loads alive and means nothing.

This module imports numpy only: the small-problem path never loads numba.
"""

import numpy as np

BOX = np.dtype([("u_neg", np.float64), ("u_pos", np.float64),
                ("d_neg", np.float64), ("d_pos", np.float64)])

LOOP = np.dtype([("pg_max_old", np.float64), ("pg_min_old", np.float64),
                 ("active", np.int64), ("iterations", np.int64), ("converged", np.int64),
                 ("sink", np.float64)])


def new_box(loss, C_pos, C_neg):
    """The one-element ``BOX`` array of the loss ("l1" or "l2") and the two classes' C."""
    box = np.zeros(1, dtype=BOX)
    if loss == "l1":
        box[0] = (C_neg, C_pos, 0.0, 0.0)
    else:
        box[0] = (np.inf, np.inf, 0.5 / C_neg, 0.5 / C_pos)
    return box


def new_loop(n_rows):
    """The one-element ``LOOP`` array of a fresh run over ``n_rows`` rows (an empty problem is
    converged from the start)."""
    loop = np.zeros(1, dtype=LOOP)
    loop[0] = (np.inf, -np.inf, n_rows, 0, 0 if n_rows > 0 else 1, 0.0)
    return loop
