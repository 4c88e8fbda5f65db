"""``svmtool svm-predict``: LIBSVM's svm-predict, its argument vector unchanged (see
:mod:`svmtool.cli.libsvm_cli`)."""

from svmtool.cli.libsvm_cli import make_command, run_predict

command = make_command("svm-predict", run_predict)
