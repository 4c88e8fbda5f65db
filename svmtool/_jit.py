"""The only place that imports numba -- and only when a kernel needs it.

Kernels elsewhere are declared with ``from svmtool._jit import njit`` (serial, cached on disk,
releasing the GIL).  ``njit`` does not compile anything nor import numba: it returns a
:class:`Kernel`, which on each call from Python runs

* the kernel's ahead-of-time compiled twin from svmtool's kernel extension
  (:mod:`svmtool._aot`, compiled while the wheel is built) when the extension is current and
  holds a twin for exactly these argument types -- no numba at all, so a command whose kernels
  are all there never pays numba's import and cache loads;
* else numba's jitted kernel, numba being imported (once, here) at that moment.

The twin is the same function compiled by numba, for any CPU of the wheel's architecture where
the JIT compiles for this one: kernels of exact IEEE arithmetic give the same bits, fastmath
kernels (which let LLVM fuse and reorder) may round differently (tests/test_aot.py holds both
to that).  Inside jitted code a Kernel stands for its numba dispatcher (``_numba_type_``), so
kernels call kernels, inline them and cache as before.  ``NUMBA_DISABLE_JIT=1`` is honoured by
numba itself (the kernels then run as plain Python, and the extension is not used).  numba is
used through its public API only: nothing of it, nor of any other library, is replaced.
"""

import os
import threading
import time
import warnings

from svmtool import _aot, _startup

_LOCK = threading.RLock()
_NUMBA = None            # the numba module once imported here
_REAL = {}               # the numba objects behind c_strtod and prefetch, once numba is


def jit_disabled():
    """True when numba is told to run kernels as plain Python (``NUMBA_DISABLE_JIT``)."""
    return os.environ.get("NUMBA_DISABLE_JIT", "0").strip() not in ("", "0")


class Kernel:
    """A jitted kernel, compiled ahead of time or on first use (see the module's docstring)."""

    def __init__(self, func, options):
        self.py_func = func
        self.targetoptions = dict(options)
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__module__ = func.__module__
        self.__doc__ = func.__doc__
        self.__wrapped__ = func
        self.name = f"{func.__module__}.{func.__qualname__}"
        self._dispatcher = None
        self._twins = None          # argument-type key -> compiled twin (None: not looked up)
        _KERNELS[self.name] = self

    def __call__(self, *args):
        twins = self._twins
        if twins is None:
            twins = self._twins = _aot_twins(self)
        if twins:
            twin = twins.get(_aot.arg_key(args))
            if twin is not None:
                return twin(*args)
        if _RECORDING is not None:
            _record(self, args)
        else:
            _aot.miss(self.name)
        return self.dispatcher(*args)

    @property
    def dispatcher(self):
        """numba's dispatcher of this kernel (numba imported and set up on the first one)."""
        d = self._dispatcher
        if d is None:
            with _LOCK:
                if self._dispatcher is None:
                    options = dict(self.targetoptions)
                    numba = _load_numba()
                    options.setdefault("cache", CACHING and _RECORDING is None)
                    self._dispatcher = numba.njit(**options)(self.py_func)
                d = self._dispatcher
        return d

    @property
    def _numba_type_(self):
        # how numba types this object where jitted code refers to it: as its dispatcher
        return _NUMBA.types.Dispatcher(self.dispatcher)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.dispatcher, name)

    def __reduce__(self):
        return (_kernel_named, (self.__module__, self.__qualname__))

    def __repr__(self):
        return f"<svmtool kernel {self.name}>"


_KERNELS = {}    # "module.qualname" -> Kernel


def _kernel_named(module, qualname):
    import importlib

    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _aot_twins(kernel):
    """{argument-type key: compiled twin} of a kernel, empty when there are none to use."""
    if jit_disabled() or _RECORDING is not None:
        return {}
    return _aot.twins(kernel.name)


def njit(*args, **kwargs):
    """Serial kernel: nopython, cached on disk, releases the GIL so threads can share the work.
    Used bare (``@njit``) or with numba's options (``@njit(fastmath=True)``)."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return Kernel(args[0], {"nogil": True})
    if args:
        raise TypeError("njit takes the kernel or keyword options only")
    kwargs.setdefault("nogil", True)
    return lambda func: Kernel(func, kwargs)


class _NumbaObject:
    """A numba object kernels refer to (``c_strtod``, ``prefetch``), made when numba is."""

    def __init__(self, name):
        self.name = name

    @property
    def real(self):
        _load_numba()
        return _REAL[self.name]

    @property
    def _numba_type_(self):
        # the type numba's typing context gives the real object where code refers to it
        from numba.core.registry import cpu_target

        return cpu_target.typing_context.resolve_value_type(self.real)

    def __call__(self, *args):
        return self.real(*args)


c_strtod = _NumbaObject("c_strtod")
prefetch = _NumbaObject("prefetch")

# set during `python -m svmtool._aot_build`: {(kernel name, argument-type key): numba's types
# of the arguments} of every call from Python
_RECORDING = None


def _record(kernel, args):
    key = _aot.arg_key(args)
    if key is not None and (kernel.name, key) not in _RECORDING:
        numba = _load_numba()
        from numba.core.typing.typeof import Purpose

        _RECORDING[kernel.name, key] = tuple(numba.typeof(a, Purpose.argument) for a in args)


def __getattr__(name):
    # numba's facts, for those who ask: importing numba to answer
    if name in ("CACHING", "NUMBA_VERSION"):
        _load_numba()
        return globals()[name]
    raise AttributeError(name)


# --------------------------------------------------------------------------------------------
# numba, imported and set up on the first kernel that needs it
# --------------------------------------------------------------------------------------------

def _private_cache_dir():
    """A folder of this user's own under the temporary directory, or None if it cannot be had
    safely (it must be ours and writable by us alone: numba loads code from it)."""
    import stat
    import tempfile

    path = os.path.join(tempfile.gettempdir(), f"svmtool-numba-{os.geteuid()}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        st = os.lstat(path)
        if (not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid()
                or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)):
            return None
        tempfile.TemporaryFile(dir=path).close()
    except OSError:
        return None
    return path


def _writable(folder):
    """Whether a file can be made in ``folder`` (made first if missing): numba's own test of a
    cache location."""
    import tempfile

    try:
        os.makedirs(folder, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def _numba_can_cache():
    """Whether numba, imported now, would find a place for its cache on its own: the
    ``NUMBA_CACHE_DIR`` it is given, the ``__pycache__`` folders beside svmtool's sources, or
    the user's cache folder (``$XDG_CACHE_HOME/numba``, ``~/.cache/numba``)."""
    given = os.environ.get("NUMBA_CACHE_DIR", "").strip()
    if given:
        return _writable(given)
    if _writable(os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")):
        return True
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return _writable(os.path.join(home, "numba"))


def _choose_cache_location():
    """Give numba somewhere to keep compiled kernels, before it is imported.

    numba caches beside the sources (``__pycache__``) when it can write there, else in the
    user's cache folder, or in ``NUMBA_CACHE_DIR`` when that is set; with none of them writable
    -- a cron job as a user with no home, on an install it cannot write -- it refuses every
    ``cache=True`` kernel.  Then svmtool names a private folder under the temporary directory
    in ``NUMBA_CACHE_DIR`` (numba reads it at its import; dask workers started from here
    inherit it)."""
    if not _numba_can_cache():
        path = _private_cache_dir()
        if path is not None:
            os.environ["NUMBA_CACHE_DIR"] = path


def _cache_works(numba):
    """Whether numba accepts ``cache=True`` (after :func:`_choose_cache_location`); if not,
    kernels are compiled without a cache, with one warning."""
    try:
        numba.njit(cache=True)(lambda: 0)
        return True
    except RuntimeError:
        warnings.warn("numba has nowhere to cache compiled code (the install and ~/.cache are "
                      "not writable): every run compiles its kernels again; set "
                      "NUMBA_CACHE_DIR to a folder this user can write")
        return False


def _start_clocks(event):
    """numba's event listeners that time its first calls and compilations (see jit_seconds)."""

    class _WallClock(event.Listener):
        """Wall seconds during which some thread was inside numba events of one kind (nested and
        overlapping events counted once), and the number of outermost events."""

        def __init__(self, part=None):
            self._lock = threading.Lock()
            self._depth = 0
            self._t0 = self._c0 = 0.0
            self.seconds = 0.0
            self.cpu = 0.0
            self.count = 0
            self.part = part            # the start-up block's part it also counts in, if any

        def on_start(self, event):
            with self._lock:
                if self._depth == 0:
                    self._t0, self._c0 = time.perf_counter(), time.process_time()
                self._depth += 1

        def on_end(self, event):
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    wall = time.perf_counter() - self._t0
                    cpu = time.process_time() - self._c0
                    self.seconds += wall
                    self.cpu += cpu
                    self.count += 1
                    if self.part is not None:
                        _startup.add_kernel(self.part, _kernel_name(event), wall, cpu)

    # Where numba's time goes in this process: every first call of a kernel for new argument
    # types takes numba's compiler lock (the first one also sets up the CPU target), then loads
    # the kernel from the on-disk cache or, when the cache has none, compiles it -- and a
    # compilation is an event of its own.  Lock time less compile time is the cache loads.
    lock_clock, compile_clock = _WallClock(), _WallClock("compile")
    event.register("numba:compiler_lock", lock_clock)
    event.register("numba:compile", compile_clock)
    return lock_clock, compile_clock


def cache_loads():
    """(wall, CPU, count) of numba's loads of cached kernels so far (the first one includes
    setting up numba's CPU target): its compiler-lock time less its compile time."""
    if _NUMBA is None:
        return 0.0, 0.0, 0
    lock, comp = _CLOCKS
    return (max(lock.seconds - comp.seconds, 0.0), max(lock.cpu - comp.cpu, 0.0),
            max(lock.count - comp.count, 0))


def _kernel_name(event):
    dispatcher = (event.data or {}).get("dispatcher") if hasattr(event, "data") else None
    func = getattr(dispatcher, "py_func", None)
    return f"{func.__module__}.{func.__qualname__}" if func is not None else "?"


def jit_seconds():
    """(start-up, compiling, kernels compiled) so far in this process: start-up is numba's import,
    its target set-up and the loads of cached kernels; compiling is the time spent compiling
    kernels the cache did not have (the first run after an install or a change).  Zeros while
    numba is not loaded."""
    if _NUMBA is None:
        return 0.0, 0.0, 0
    compiling = _CLOCKS[1].seconds
    return IMPORT_SECONDS + _CLOCKS[0].seconds - compiling, compiling, _CLOCKS[1].count


def _numba_objects(numba):
    """The numba objects kernels refer to through this module's placeholders."""
    # The C library's strtod, callable from jitted code (a correctly rounded decimal -> double
    # conversion for the rare numbers outside the exact fast path).  Declared with
    # pointer-sized integer arguments: the address of a NUL-terminated byte buffer and NULL for
    # the end pointer.
    real = {"c_strtod": numba.types.ExternalFunction(
        "strtod", numba.types.float64(numba.types.uintp, numba.types.uintp))}

    # A software prefetch callable from jitted code: ``prefetch(arr, i)`` asks the CPU to start
    # loading ``arr[i]`` into cache.  It never faults and returns nothing.  Dual coordinate
    # descent visits rows in random order, so most of its time is cache misses; prefetching the
    # rows that come next in the permutation roughly halves it.
    if numba.config.DISABLE_JIT:
        def prefetch(arr, i):
            """No-op when the JIT is disabled."""
    else:
        from numba.core import cgutils
        from numba.extending import intrinsic

        @intrinsic
        def prefetch(typingctx, arr, i):
            if not isinstance(arr, numba.types.Array) or not isinstance(i, numba.types.Integer):
                return None

            def codegen(context, builder, sig, args):
                from llvmlite import ir

                ary = context.make_array(sig.args[0])(context, builder, args[0])
                ptr = cgutils.get_item_pointer(context, builder, sig.args[0], ary, [args[1]],
                                               wraparound=False, boundscheck=False)
                i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
                fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
                fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
                # read access, high temporal locality, data cache
                builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
                return context.get_dummy_value()

            return numba.types.void(arr, i), codegen
    real["prefetch"] = prefetch
    return real


def _load_numba():
    """Import numba and set it up, once per process (any thread); returns the numba module."""
    global _NUMBA, _CLOCKS, CACHING, NUMBA_VERSION, IMPORT_SECONDS
    if _NUMBA is not None:
        return _NUMBA
    with _LOCK:
        if _NUMBA is not None:
            return _NUMBA
        # numba imports scipy's top level (to check its version) when scipy is installed:
        # timed apart
        _startup.timed_import("scipy")
        _choose_cache_location()
        t_import, c_import = time.perf_counter(), time.process_time()
        import numba
        from numba.core import event

        NUMBA_VERSION = numba.__version__
        _NUMBA = numba
        CACHING = _cache_works(numba)
        _CLOCKS = _start_clocks(event)
        _REAL.update(_numba_objects(numba))
        IMPORT_SECONDS = time.perf_counter() - t_import
        _startup.add("numba", IMPORT_SECONDS, time.process_time() - c_import)
        return numba
