"""Runners: svmtool's solvers (discovered from the registry) and the anchors they are compared with.

One module per family, each saying what it runs:

base.py           the Runner protocol (prepare / fit / evaluate), Evaluation, the row groups
ours.py           svmtool's solvers through the Python API, and their Variants
liblinear_lib.py  LIBLINEAR in process (liblinear-official)
libsvm_lib.py     LIBSVM in process (libsvm-official)
scikit.py         scikit-learn (LinearSVC, SGDClassifier, SVC)
programs.py       whole command lines timed from outside: liblinear-train, svm-train, svmocas,
                  svm_perf_learn, ``svmtool train`` itself, Python processes (scikit-learn's and
                  scikit-learn-intelex's SVC, multi-core LIBLINEAR; each may run under an
                  interpreter of its own), any --external template

This module chooses the runners of a bench run (:func:`build_runners`).  Anchors are used only
when installed (the pip wheels, or the programs on PATH); a note says which were skipped and why.
"""

from svmtool.bench.anchors.base import (GROUP_TITLES, REGRESSION_GROUPS, Evaluation, Runner,
                                        have, spec_group)
from svmtool.bench.anchors.liblinear_lib import LiblinearRunner
from svmtool.bench.anchors.libsvm_lib import LibsvmRunner
from svmtool.bench.anchors.ours import (SvmtoolRunner, Variant, registry_specs,
                                        select_solvers)
from svmtool.bench.anchors.peers import (SVC_ANCHORS, SvcCommand, liblinear_mc_runners,
                                         svc_runners)
from svmtool.bench.anchors.programs import (PROGRAMS, CommandRunner, ExternalCommand,
                                            SvmtoolCommand, program_runners)
from svmtool.bench.anchors.scikit import SklearnLinearSVC, SklearnSGD, SklearnSVC

# what --against accepts: the in-process anchors, the programs (also by the names of the C
# builds they stand for: liblinear-c, libsvm-c, svmperf), the optional peers (each skipped, with
# one line, where it is not installed), and shorthands
IN_PROCESS = ("liblinear", "libsvm", "sklearn")
PEERS = SVC_ANCHORS + ("liblinear-mc",)       # Python processes, whole commands
ANCHORS = IN_PROCESS + PROGRAMS + PEERS
SHORTHANDS = {"programs": PROGRAMS, "all": ANCHORS, "none": (),
              "liblinear-c": ("liblinear-train",), "libsvm-c": ("svm-train",),
              "svmperf": ("svm_perf_learn",)}


def expand_against(names):
    """The anchor names of ``--against`` (shorthands expanded); unknown names raise ValueError."""
    out = []
    for n in names or []:
        n = n.strip().lower()
        if not n:
            continue
        for a in SHORTHANDS.get(n, (n,)):
            if a not in ANCHORS:
                raise ValueError(f"unknown anchor {a!r} (choose from {', '.join(ANCHORS)}, "
                                 f"{', '.join(SHORTHANDS)})")
            if a not in out:
                out.append(a)
    return out


def kernel_defaults(n_features, gamma=None, kernel_type=2):
    return {"kernel_type": int(kernel_type),
            "gamma": float(gamma) if gamma is not None else 1.0 / max(1, n_features),
            "degree": 3, "coef0": 0.0}


def build_runners(specs, against, bias, kernel_opts, external=None, external_predict=None,
                  external_group="hinge", threads=None, variants=(), end_to_end=False,
                  labels=None, external_model=None):
    """svmtool runners for ``specs`` and ``variants``, and the anchors that solve one of their
    problems.  ``end_to_end``: svmtool's own runs are ``svmtool train`` commands on the text
    file too (see programs.py).  Returns (runners, notes): notes say which anchors were skipped
    and why."""
    from svmtool.solvers import REGISTRY, get_spec

    if end_to_end:
        runners = [SvmtoolCommand(s, bias, kernel_opts) for s in specs]
        runners += [SvmtoolCommand(get_spec(v.solver), bias, kernel_opts, variant=v)
                    for v in variants]
    else:
        runners = [SvmtoolRunner(s, bias=bias, kernel_opts=kernel_opts, threads=threads)
                   for s in specs]
        runners += [SvmtoolRunner(get_spec(v.solver), bias=bias, kernel_opts=kernel_opts,
                                  threads=threads, variant=v) for v in variants]
    groups = {r.group for r in runners}
    against = expand_against(against)
    notes = []
    if "liblinear" in against:
        if not have("liblinear"):
            notes.append("liblinear anchors skipped: pip install liblinear-official")
        else:
            for s in (1, 2, 3, 0, 5, 6, 7, 11, 12, 13):
                spec = REGISTRY.get(str(s))
                g = spec_group(spec) if spec is not None else None
                if g in groups:
                    runners.append(LiblinearRunner(s, g, spec.default_eps, spec.name))
    if "sklearn" in against:
        if not have("sklearn"):
            notes.append("scikit-learn anchors skipped: pip install scikit-learn")
        else:
            if "hinge" in groups:
                runners.append(SklearnLinearSVC("hinge"))
            if "squared_hinge" in groups:
                runners.append(SklearnLinearSVC("squared_hinge"))
            if "hinge" in groups:
                runners.append(SklearnSGD())
            if "kernel" in groups:
                runners.append(SklearnSVC(kernel_opts))
    if "libsvm" in against and "kernel" in groups:
        if not have("libsvm"):
            notes.append("libsvm anchor skipped: pip install libsvm-official")
        else:
            runners.append(LibsvmRunner(kernel_opts))
    if any(a in PROGRAMS for a in against):
        runners += program_runners(against, groups, kernel_opts,
                                   labels if labels is not None else [], notes)
    if any(a in SVC_ANCHORS for a in against):
        runners += svc_runners(against, groups, kernel_opts,
                               labels if labels is not None else [], notes)
    if "liblinear-mc" in against:
        runners += liblinear_mc_runners(groups, notes)
    if external:
        runners.append(ExternalCommand(external, external_predict, group=external_group,
                                       model_kind=external_model))
    return runners, notes


__all__ = ["ANCHORS", "GROUP_TITLES", "PEERS", "REGRESSION_GROUPS", "CommandRunner", "Evaluation",
           "LiblinearRunner", "LibsvmRunner", "Runner", "SklearnLinearSVC", "SklearnSGD",
           "SklearnSVC", "SvcCommand", "SvmtoolCommand", "SvmtoolRunner", "Variant",
           "build_runners", "expand_against", "have", "kernel_defaults", "registry_specs",
           "select_solvers", "spec_group"]
