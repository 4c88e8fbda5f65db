"""The random numbers of the coordinate-descent solvers: the coordinate permutations of the
dual, L1 and SVR solvers and of the one-class SVM's pairs.

Two generators share one state layout, a uint64 array of 33 slots, so that the jitted loops
(:mod:`svmtool.solvers.common._rng_jit`) and their pure-Python twins take either:

* svmtool's default, splitmix64 seeded from ``--seed`` (slot 0), with Lemire's multiply-shift
  bounded draw;
* with ``--liblinear-rng``, glibc's ``rand()`` (the TYPE_3 additive feedback generator,
  ``r_k = r_{k-3} + r_{k-31}``, output ``r_k >> 1``; slots 0..30 its table, ``GLIBC_FRONT`` and
  ``GLIBC_REAR`` its two positions) seeded as ``srand(seed)`` and drawn as LIBLINEAR draws,
  ``rand() % n``: the permutations, hence the models, are then LIBLINEAR's bit for bit.

This module imports no numba: a small training run builds its generator state here.
"""

import numpy as np

GLIBC_FRONT = 31           # slots of the state holding glibc's front and rear positions
GLIBC_REAR = 32
SPLITMIX_GAMMA = 0x9E3779B97F4A7C15     # splitmix64's increment and its two multipliers
SPLITMIX_M1 = 0xBF58476D1CE4E5B9
SPLITMIX_M2 = 0x94D049BB133111EB


def glibc_rand_state(seed=1):
    """The state of glibc's ``rand()`` right after ``srand(seed)``, as a uint64 array of 33 slots.

    Slots 0..30 hold the 31 words of the TYPE_3 table (32-bit values), slot 31 the front and
    slot 32 the rear position.  glibc seeds ``r_0 = seed`` (0 is taken as 1),
    ``r_i = 16807 r_{i-1} mod (2^31 - 1)`` (Schrage's method on a signed 32-bit word), puts the
    front 3 words ahead of the rear one, and discards 310 outputs.
    """
    seed = int(seed) & 0xFFFFFFFF
    if seed == 0:
        seed = 1
    word = seed - (1 << 32) if seed >= (1 << 31) else seed   # int32_t word = seed
    table = [0] * 31
    table[0] = word & 0xFFFFFFFF
    for i in range(1, 31):
        hi = abs(word) // 127773
        if word < 0:
            hi = -hi                                          # C division truncates toward 0
        lo = word - hi * 127773
        word = 16807 * lo - 2836 * hi
        if word < 0:
            word += 2147483647
        table[i] = word & 0xFFFFFFFF
    front, rear = 3, 0
    for _ in range(310):
        table[front] = (table[front] + table[rear]) & 0xFFFFFFFF
        front = (front + 1) % 31
        rear = (rear + 1) % 31
    state = np.zeros(33, dtype=np.uint64)
    state[:31] = table
    state[GLIBC_FRONT] = front
    state[GLIBC_REAR] = rear
    return state


def splitmix_state(seed):
    """State of the default generator: one uint64 word derived from the seed."""
    state = np.zeros(33, dtype=np.uint64)
    state[0] = np.uint64((int(seed) * SPLITMIX_GAMMA + 0x632BE59BD9B4E019) & (2**64 - 1))
    return state


def permutation_rng(params):
    """The generator of the coordinate permutations of the dual and L1 solvers: LIBLINEAR's
    rand() with --liblinear-rng, one for all the subproblems of a training run as in LIBLINEAR's
    process (the API passes it in params.dcd.rand_state; a lone call starts from srand(seed)),
    else svmtool's splitmix generator from --seed."""
    if params.liblinear_rng:
        shared = params.dcd.rand_state
        return shared if shared is not None else glibc_rand_state(params.seed)
    return splitmix_state(params.seed)
