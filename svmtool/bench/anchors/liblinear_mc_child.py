"""The command that the ``liblinear-mc`` anchor times (svmtool.bench.anchors.programs): train
with multi-core LIBLINEAR (PyPI's ``liblinear-multicore``) on an svmlight text file and write
the model, as one Python process.  It runs under the interpreter of a venv of its own (that
package's top-level module ``liblinear`` is also liblinear-official's), so it imports nothing of
svmtool.

Usage: python liblinear_mc_child.py READER OPTIONS TRAIN MODEL

READER: ``sklearn`` (scikit-learn's ``load_svmlight_file``, a compiled reader) or ``liblinear``
(the package's own ``svm_read_problem``, in Python); OPTIONS: LIBLINEAR's options as one word,
e.g. ``"-s 0 -c 1 -m 2"``.  Prints LIBLINEAR's messages (its iteration counts).
"""

import sys


def main(argv):
    if len(argv) != 4:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    reader, options, train, model = argv
    from liblinear.liblinearutil import save_model
    from liblinear.liblinearutil import train as fit

    if reader == "sklearn":
        from sklearn.datasets import load_svmlight_file

        x, y = load_svmlight_file(train)
    elif reader == "liblinear":
        from liblinear.commonutil import svm_read_problem

        y, x = svm_read_problem(train, return_scipy=True)
    else:
        sys.stderr.write(f"unknown reader {reader!r} (sklearn or liblinear)\n")
        return 2
    save_model(model, fit(y, x, options))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
