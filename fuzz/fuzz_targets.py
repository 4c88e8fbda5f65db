"""Coverage-guided fuzzing of svmtool's readers with atheris (``make fuzz``; not part of CI).

    python fuzz/fuzz_targets.py TARGET [libFuzzer options] [CORPUS_DIR ...]

TARGET is one of: text-python, text-jit, model, cache, ranges, compressed.  Every reader must
either return its object or raise svmtool.errors.InputError (the documented, exit-2 error) --
any other exception, a crash or a hang (libFuzzer's -timeout) is a finding.

atheris instruments Python bytecode; numba-compiled code is machine code it cannot see.  The
grammar is therefore explored through the pure-Python parser (text-python), which gives the same
arrays and errors as the jitted one, and text-jit runs the jitted parser on the same inputs
without coverage feedback for its inner loop (it still catches crashes and wrong exceptions).
"""

import io
import os
import sys
import tempfile

import atheris

# only plain-Python reader modules are instrumented: numba cannot compile instrumented bytecode
_READERS = ["svmtool.io._grammar", "svmtool.io._parse_py", "svmtool.io.source",
            "svmtool.io.svmlight",
            "svmtool.io.early_model", "svmtool.io.liblinear_model", "svmtool.io.libsvm_model",
            "svmtool.io.model_text", "svmtool.io.svmlight_model", "svmtool.io.model_io",
            "svmtool.io.cache", "svmtool.io.scale"]
import svmtool.io._parse  # noqa: E402,F401  (jitted modules loaded first, uninstrumented)
import svmtool.ops.kernels  # noqa: E402,F401

with atheris.instrument_imports(include=_READERS):
    # the readers import their helpers lazily; import them here so they are instrumented too
    import svmtool.io._grammar  # noqa: F401
    import svmtool.io._parse_py  # noqa: F401
    import svmtool.io.early_model  # noqa: F401
    import svmtool.io.liblinear_model  # noqa: F401
    import svmtool.io.libsvm_model  # noqa: F401
    import svmtool.io.model_text  # noqa: F401
    import svmtool.io.svmlight_model  # noqa: F401
    from svmtool.errors import InputError
    from svmtool.io import cache as cache_io
    from svmtool.io import model_io, scale, svmlight

# a RAM-backed folder for readers that take a path
_TMP = tempfile.mkdtemp(prefix="svmtool-fuzz-", dir="/dev/shm" if os.path.isdir("/dev/shm")
                        else None)
_PATH = os.path.join(_TMP, "input")


def _as_file(data):
    with open(_PATH, "wb") as f:
        f.write(data)
    return _PATH


def text_python(data):
    svmlight.load_svmlight(_as_file(data), engine="python", comments=True)


def text_jit(data):
    svmlight.load_svmlight(_as_file(data), engine="jit", comments=True, threads=1)


def model(data):
    model_io.load_model(_as_file(data))


def cache(data):
    cache_io.load_cache(bytes(data), mmap=False, verify=True)


def ranges(data):
    scale.restore_ranges(_as_file(data))


def compressed(data):
    # the first byte picks a container; the rest is its (possibly broken) payload
    import bz2
    import gzip
    import lzma

    if not data:
        return
    pack = (gzip.compress, bz2.compress, lzma.compress, lambda b: b)[data[0] % 4]
    body = data[1:]
    packed = pack(body)
    # cut or keep the stream (a truncated container must be an InputError too)
    cut = len(packed) if data[0] < 128 else max(1, len(packed) * (data[0] % 7 + 1) // 8)
    svmlight.load_svmlight(_as_file(packed[:cut]), threads=1)


TARGETS = {"text-python": text_python, "text-jit": text_jit, "model": model, "cache": cache,
           "ranges": ranges, "compressed": compressed}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(TARGETS)}}} [libFuzzer options] [corpus]")
    target = TARGETS[sys.argv.pop(1)]

    def one(data):
        try:
            target(data)
        except InputError:
            pass

    atheris.Setup(sys.argv, one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
