"""svmtool's kernels compiled ahead of time: finding the extension and deciding to trust it.

The wheel's build (``setup.py``) and ``make aot`` run :mod:`svmtool._aot_build`, which compiles,
with numba's ahead-of-time compiler, every kernel that svmtool's main commands call from Python,
for the argument types they call it with, into one extension module in the package
(``_kernels_aot*.so``) and a manifest (``_kernels_aot.json``): for each kernel its argument-type
keys and the extension's symbol, and a digest of every source file the kernels come from.
Calling a twin needs neither numba's import nor a cache load: that is most of a short command's
fixed cost (:mod:`svmtool._startup` says where the rest goes).

The extension comes in variants compiled for successive CPU levels (:data:`VARIANTS`: generic
code for the architecture, and on x86-64 also the x86-64-v3 level, AVX2 and FMA, where LLVM's
loops run four doubles at a time instead of two, and x86-64-v4, AVX-512); the best one this CPU
runs is used, by the instruction sets the kernel reports in ``/proc/cpuinfo`` (elsewhere: the
generic one).  ``SVMTOOL_AOT`` set to a variant's CPU name (``generic``, ``x86-64-v3``,
``x86-64-v4``) asks for that one.

The extension is used only when all of it holds: ``SVMTOOL_AOT`` is not ``0``, the files on disk
are the manifest's sources (each file's CRC-32 and length as the build recorded them: any edit of a
kernel module turns it off until the next build), it was built for this Python, and it imports
(numpy's own check of its C API is part of that).  A call whose argument types have no twin
goes to numba (``misses`` in ``--report``'s start-up block).  This module imports neither
numba nor the extension until a kernel is first called (numpy, which every kernel's caller has,
it does).
"""

import os
import sys

import numpy as np

from svmtool import _startup

NAME = "_kernels_aot"
HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, NAME + ".json")
FORMAT = 4          # 4: the sources' digests are CRC-32 (3: sha256)

# The x86-64-v3 level (psABI): v2's instruction sets and AVX, AVX2, BMI1/2, F16C, FMA, LZCNT,
# MOVBE, XSAVE, as Linux names them in /proc/cpuinfo (LZCNT is "abm", SSE3 "pni"); the kernel
# lists AVX only where the OS saves its registers.
_V3_FLAGS = ("cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3",
             "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave")

# x86-64-v4: v3 and AVX-512's foundation, byte/word, conflict-detection, dword/qword and
# vector-length sets.
_V4_FLAGS = _V3_FLAGS + ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")

# (module suffix, CPU name for numba's compiler -- "" is its generic code --, the CPU flags it
# needs), from the plainest to the best, for each architecture the build knows.
VARIANTS = {
    "x86_64": (("", "", ()), ("_v3", "x86-64-v3", _V3_FLAGS), ("_v4", "x86-64-v4", _V4_FLAGS)),
}
GENERIC = (("", "", ()),)

_STATE = None        # None until looked at; then "used", "off", "absent", "stale: <why>"
_ENTRIES = {}        # kernel name -> {key: symbol}
_MODULE = None
_MISSES = {}         # kernel name -> calls that went to numba
_SERVED = set()      # kernels called that have twins
_VARIANT = None      # the CPU name of the variant in use


def build_variants(machine=None):
    """The variants a build on this architecture compiles (:data:`VARIANTS`)."""
    import platform

    machine = (machine or platform.machine()).lower()
    return VARIANTS.get({"amd64": "x86_64"}.get(machine, machine), GENERIC)


def cpu_flags(path="/proc/cpuinfo"):
    """The instruction-set flags of this CPU as the OS reports them (empty where it does not
    say: the generic variant then)."""
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("flags", "Features"):
                    return frozenset(value.split())
    except OSError:
        pass
    return frozenset()


def runnable_variants(variants, flags):
    """The variants (manifest entries) whose CPU flags are all in ``flags``, plainest first."""
    return [v for v in variants if set(v["needs"]) <= flags]


def runnable_levels(manifest_path=MANIFEST):
    """The CPU names (``generic`` for the plain one) of the built variants that this CPU runs,
    plainest first; empty when there is no readable manifest."""
    import json

    try:
        with open(manifest_path, encoding="utf-8") as fh:
            variants = json.load(fh).get("variants", [])
    except (OSError, ValueError):
        return []
    return [v["cpu"] or "generic" for v in runnable_variants(variants, cpu_flags())]


def choose_variant(variants, flags, wanted=""):
    """The variant (a manifest entry: module, cpu, needs) to import: ``wanted`` names one by its
    CPU (``generic`` for the plain one), else the best whose flags this CPU has; (entry, None)
    or (None, why not)."""
    runnable = runnable_variants(variants, flags)
    if wanted:
        named = [v for v in variants if (v["cpu"] or "generic") == wanted]
        if not named:
            return None, f"no variant {wanted!r} in this build"
        if named[0] not in runnable:
            lacking = sorted(set(named[0]["needs"]) - flags)
            return None, f"this CPU lacks {', '.join(lacking)} for the {wanted} variant"
        return named[0], None
    if not runnable:
        return None, "no variant of the build runs on this CPU"
    return runnable[-1], None


def arg_key(args):
    """A string naming the argument types as numba types them (dtype, dimensions, layout and
    writeability of arrays; bool, int or int64, float or float64; other numpy scalars by dtype),
    or None for any other argument (no twin is built for those)."""
    parts = []
    for a in args:
        t = type(a)
        if t is np.ndarray:
            f = a.flags
            layout = "C" if f.c_contiguous else ("F" if f.f_contiguous else "A")
            parts.append(f"{a.dtype.str}{a.ndim}{layout}{'w' if f.writeable else 'r'}")
        elif t is bool or t is np.bool_:
            parts.append("b")
        elif t is int or t is np.int64:         # numba types both as int64
            parts.append("i")
        elif t is float or t is np.float64:     # and both as float64
            parts.append("f")
        elif isinstance(a, np.generic) and a.dtype.kind in "iuf":
            parts.append(a.dtype.str)
        else:
            return None
    return ",".join(parts)


def source_digest(relpath):
    """The CRC-32 and length of one file under the package folder, as "crc32:<hex>:<bytes>"
    (None if it cannot be read): what tells an edited source from the one the extension was
    compiled from.  A check against accidents, not tampering (whoever can edit the sources can
    edit the manifest), so CRC-32, whose module (zlib) a command loads in a fraction of a
    millisecond, rather than a cryptographic hash, whose module (hashlib, with OpenSSL) took
    several milliseconds of every command's start."""
    import zlib

    try:
        with open(os.path.join(HERE, relpath), "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return f"crc32:{zlib.crc32(data):08x}:{len(data)}"


def runtime_tag():
    """What the extension is bound to besides its sources: the interpreter (numpy checks its
    own C API when the extension is imported)."""
    return {"python": sys.implementation.cache_tag}


def _open():
    """Read the manifest, check it, import the extension: the state it ends in."""
    import json

    global _MODULE, _VARIANT
    wanted = os.environ.get("SVMTOOL_AOT", "1").strip()
    if wanted == "0":
        return "off"
    try:
        with open(MANIFEST, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except FileNotFoundError:
        return "absent"
    except (OSError, ValueError) as exc:
        return f"stale: manifest unreadable ({exc})"
    if manifest.get("format") != FORMAT or manifest.get("runtime") != runtime_tag():
        return "stale: built for another Python or by another svmtool"
    for relpath, digest in manifest.get("sources", {}).items():
        if source_digest(relpath) != digest:
            return f"stale: {relpath} changed since the build"
    variant, why = choose_variant(manifest.get("variants", []), cpu_flags(),
                                  "" if wanted in ("", "1") else wanted)
    if variant is None:
        return f"stale: {why}"
    try:
        import importlib

        _MODULE = importlib.import_module(f"svmtool.{variant['module']}")
    except Exception as exc:  # noqa: BLE001 -- ImportError, or numpy's refusal of its C API
        return f"stale: the extension does not import ({type(exc).__name__}: {exc})"
    _VARIANT = variant["cpu"] or "generic"
    _ENTRIES.update(manifest.get("kernels", {}))
    return "used"


def state():
    """"used", "off", "absent" or "stale: <why>" (opening the extension on the first call)."""
    global _STATE
    if _STATE is None:
        t = _startup.clocks()
        _STATE = _open()
        _startup.add_since("aot", t, count=0)
    return _STATE


def twins(name):
    """{argument-type key: compiled twin} of the kernel ``name`` (module.qualname); empty when
    the extension is not used or has none."""
    if state() != "used":
        return {}
    found = {}
    for key, symbol in _ENTRIES.get(name, {}).items():
        fn = getattr(_MODULE, symbol, None)
        if fn is not None:
            found[key] = fn
    if found:
        _SERVED.add(name)
    return found


def miss(name):
    """A call of ``name`` that goes to numba: a miss when the extension is in use."""
    if _STATE == "used":
        _MISSES[name] = _MISSES.get(name, 0) + 1


def report():
    """The ``aot`` entry of the start-up block: state, kernels called that have twins, calls
    that went to numba by kernel (or None if no kernel was called)."""
    if _STATE is None:
        return None
    out = {"state": _STATE, "kernels": len(_SERVED)}
    if _VARIANT is not None:
        out["variant"] = _VARIANT
    if _MISSES:
        out["misses"] = dict(sorted(_MISSES.items()))
    return out
