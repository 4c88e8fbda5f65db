"""LIBLINEAR in process: liblinear-official's C ``train()`` on a ``problem`` built beforehand (the
conversion is outside the timed region), one runner per LIBLINEAR ``-s`` number whose problem a
selected svmtool solver solves.  ``srand(1)`` before each run, so every run repeats a fresh
process's random sequence.  The same program end to end (``liblinear-train`` on the text file) is
in :mod:`svmtool.bench.anchors.programs`.
"""

import ctypes
import re

import numpy as np

from svmtool.bench.anchors.base import REGRESSION_GROUPS, Evaluation, Runner


class LiblinearRunner(Runner):
    """liblinear-official's C train() on a problem built beforehand (srand(1) before each run,
    so every run repeats a fresh process's sequence)."""

    cap = "eps"

    def __init__(self, s, group, default_eps, counterpart=None):
        self.counterpart = counterpart      # the svmtool solver of the same -s number
        self.s = int(s)
        self.name = f"liblinear -s {self.s}"
        self.group = group
        self.default_eps = default_eps
        self._messages = []

    def prepare(self, data):
        from liblinear import liblinear as ll

        self.ll = ll
        self.libc = ctypes.CDLL(None)
        self._cb = ll.PRINT_STRING_FUN(lambda s: self._messages.append(s.decode()))
        return ll.problem(data.y, data.Xb, -1)   # the bias column is already in Xb

    def fit(self, state, C, eps, cap=None, callback=None, capture=False):
        ll = self.ll
        e = cap if cap is not None else (eps if eps is not None else self.default_eps)
        param = ll.parameter(f"-s {self.s} -c {C!r} -e {e!r}" + ("" if capture else " -q"))
        if capture:
            self._messages = []
            ll.liblinear.set_print_string_function(self._cb)
        self.libc.srand(1)
        m = ll.liblinear.train(state, param)
        model = ll.toPyModel(m)
        if capture:
            ll.liblinear.set_print_string_function(ll.ctypes_print_null)
        return model

    def iterations_of_messages(self):
        text = "".join(self._messages)
        found = [int(x) for x in re.findall(r"#iter = (\d+)", text)]
        newton = len(re.findall(r"^(?:iter|newton iter)\s*\d+", text, flags=re.M))
        return (sum(found) + newton) if (found or newton) else None

    def evaluate(self, state, raw, data):
        model = raw
        nr_class = model.get_nr_class()
        nr_w = 1 if nr_class == 2 else nr_class
        n = model.nr_feature + (1 if model.bias >= 0 else 0)
        if self.group in REGRESSION_GROUPS:
            w = np.ctypeslib.as_array(model.w, (n,)).reshape(n, 1).copy()
            return Evaluation(W=w, col_labels=np.array([np.nan]))
        w = np.ctypeslib.as_array(model.w, (n * nr_w,)).reshape(n, nr_w).copy()
        labels = np.asarray(model.get_labels(), dtype=float)
        return Evaluation(W=w, col_labels=labels[:1] if nr_class == 2 else labels)
