"""The reading suite: svmtool's parser (1 and 2 threads) and binary cache against
scikit-learn's ``load_svmlight_file``, and the writer against ``dump_svmlight_file``
(:mod:`svmtool.bench.iobench`)."""

from svmtool.bench.suites.registry import Case, Suite, register


def _cases(w):
    files = []
    for name, tr, te, _ in w.sets(["a9a"]):
        files += [tr] + ([te] if te else [])
    return ([Case("reading and writing", io=files,
                  io_options={"memory": "none", "write": True, "jit": False})] if files else [])


def _all_cases(w):
    from svmtool.bench.iobench import data_files

    if w.shared is None:
        return _cases(w)
    return [Case("reading and writing, every shared file",
                 io=[str(p) for p in data_files(w.shared, None)],
                 io_options={"memory": "largest", "write": True, "jit": True,
                             "base": w.shared})]


register(Suite(
    "io",
    "reading and writing svmlight text: svmtool (1, 2 threads), its cache, scikit-learn",
    "Throughput of svmtool's reader (1 and 2 threads), its binary cache (memory-mapped, touched, "
    "read) and scikit-learn's `load_svmlight_file`, and of the writers; MB/s of the text file, "
    "medians of interleaved runs after a warm-up call.",
    _cases,
    default=True,
    needs=("sklearn",)))

register(Suite(
    "io-all",
    "the io suite over every file of the shared data folder, with peak memory",
    "The io suite over every data file of the shared folder, with each reader's peak memory in "
    "a subprocess of its own for the largest file and the JIT cost of a first read.",
    _all_cases,
    replaces="benchmarks/read_bench.py",
    needs=("sklearn",)))
