"""The least-recently-used slot choice of the kernel-row caches (the kernel solvers' and the SMO's).

A cache is ``n_slots`` rows; ``slot_of[i]`` is the slot holding row ``i`` (-1: none),
``slot_row[s]`` the row in slot ``s`` (-1: empty), ``slot_stamp[s]`` the clock of its last use and
``slot_epoch[s]`` the shrinking epoch its values were computed for (-1: the whole row, valid in
every epoch).  The caller computes a missed row into the returned slot and sets its stamp and
epoch.
"""

from svmtool._jit import njit


@njit(inline="always")
def lru_slot(i, epoch, clock, slot_of, slot_row, slot_stamp, slot_epoch):
    """``(slot, hit)`` for row ``i``: its slot when it holds values valid in ``epoch`` (hit; its
    stamp becomes ``clock``); else the slot to compute it into -- its own stale slot, or the
    least recently used one, taken from the row it held."""
    s = slot_of[i]
    if s >= 0:
        if slot_epoch[s] < 0 or slot_epoch[s] == epoch:
            slot_stamp[s] = clock
            return s, True
        return s, False
    s = 0
    best = slot_stamp[0]
    for t in range(1, slot_stamp.shape[0]):
        if slot_stamp[t] < best:
            best = slot_stamp[t]
            s = t
    old = slot_row[s]
    if old >= 0:
        slot_of[old] = -1
    slot_row[s] = i
    slot_of[i] = s
    return s, False
