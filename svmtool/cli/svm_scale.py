"""``svmtool svm-scale``: LIBSVM's svm-scale, its argument vector unchanged (see
:mod:`svmtool.cli.libsvm_cli`)."""

from svmtool.cli.libsvm_cli import make_command, run_scale

command = make_command("svm-scale", run_scale)
