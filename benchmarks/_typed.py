"""TrainParams for the benchmark scripts from flat keyword options (the names of the CLI's
options), sorted into the typed option groups of svmtool.params.  ``early``: None for the exact
model, else the early model's level (0: the solver's default level)."""

from svmtool.params import CuttingPlaneParams, DcsvmParams, KernelParams, TrainParams

KERNEL = ("kernel_type", "gamma", "degree", "coef0", "cache_mb")
DCSVM = ("levels", "k_clusters", "sample", "overlap", "overlap_quantile", "level_eps",
         "keep_level_models", "test")
CP = ("line_search", "tol_abs", "mu0_guard", "mu0_patience", "mu0_step", "inactive_limit")


def train_params(solver, early=None, **flat):
    groups = {"kernel": {}, "dcsvm": {}, "cp": {}}
    top = {}
    for key, value in flat.items():
        if key in KERNEL:
            groups["kernel"][key] = value
        elif key in DCSVM:
            groups["dcsvm"][key] = value
        elif key in CP:
            groups["cp"][key] = value
        else:
            top[key] = value
    if early is not None:
        groups["dcsvm"]["early"] = True
        if early:
            groups["dcsvm"]["early_level"] = int(early)
    return TrainParams(solver=solver, kernel=KernelParams(**groups["kernel"]),
                       dcsvm=DcsvmParams(**groups["dcsvm"]), cp=CuttingPlaneParams(**groups["cp"]),
                       **top)
