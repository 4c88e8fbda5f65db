"""LIBSVM in process: libsvm-official's ``svm_train`` (C-SVC, the kernel of the bench run) on an
``svm_problem`` built beforehand; the anchor of the kernel solvers (``kernel``, ``dcsvm``).  The
same program end to end (``svm-train`` on the text file) is in
:mod:`svmtool.bench.anchors.programs`.
"""

import re

import numpy as np

from svmtool.bench.anchors.base import Evaluation, KernelAnchor


class LibsvmRunner(KernelAnchor):
    name = "libsvm"

    def prepare(self, data):
        from libsvm import svm, svmutil

        self._messages = []
        self._cb = svm.PRINT_STRING_FUN(lambda s: self._messages.append(s.decode()))
        return svmutil.svm_problem(data.y, data.X)

    def fit(self, state, C, eps, cap=None, callback=None, capture=False):
        from libsvm import svm, svmutil

        k = self.kernel_opts
        e = self.tolerance(eps, cap)
        opts = (f"-s 0 -t {k['kernel_type']} -g {k['gamma']!r} -d {k.get('degree', 3)} "
                f"-r {k.get('coef0', 0.0)!r} -c {C!r} -e {e!r} -m {k.get('cache_mb', 100.0):g}"
                + ("" if capture else " -q"))
        param = svmutil.svm_parameter(opts)
        if capture:                 # svm_train installs param.print_func itself
            self._messages = []
            param.print_func = self._cb
        try:
            return svmutil.svm_train(state, param)
        finally:
            if capture:
                svm.libsvm.svm_set_print_string_function(svm.ctypes_print_null)

    def iterations_of_messages(self):
        found = [int(x) for x in re.findall(r"#iter = (\d+)", "".join(self._messages))]
        return sum(found) if found else None

    def evaluate(self, state, raw, data):
        from libsvm import svmutil

        m = raw
        ev = Evaluation()
        labels = m.get_labels()
        if len(labels) == 2:
            _, _, dec = svmutil.svm_predict(data.y, data.X, m, "-q")
            dec = np.asarray(dec, dtype=float)[:, 0]
            sv = np.asarray(m.get_sv_indices(), dtype=np.int64) - 1
            coef = np.asarray([c[0] for c in m.get_sv_coef()], dtype=float)
            ev.kernel = {"dec": dec, "pos": float(labels[0]), "coef": coef, "f_sv": dec[sv],
                         "offset": -float(m.rho[0])}
        if data.test is not None:
            pred, _, _ = svmutil.svm_predict(data.yt, data.Xt_raw, m, "-q")
            ev.test_pred = np.asarray(pred, dtype=float)
        return ev
