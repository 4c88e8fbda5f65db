"""Row passes on a dask.distributed cluster: shards of a cache mapped by the workers, tasks per
shard, one reduction per pass on the driver.

dask.distributed (an optional dependency: ``pip install svmtool[dask]``) does the scheduling,
the transfers and the recovery; this module only decides what runs where:

* :class:`Session` opens the cluster -- ``local:N`` starts a LocalCluster of N single-threaded
  worker processes on the loopback interface (closed with the session), anything else is the
  address of a running scheduler -- and cuts a cache into one row range per worker (about equal
  stored values, :func:`svmtool.io.shards.shard_bounds`);
* :class:`Shard` is what a worker keeps for the whole run: the row range of the cache mapped
  read-only from a path every worker can read (nothing is sent but the path and two row
  numbers), with a :class:`svmtool.engine.blocks.BlockOracle` streaming it in blocks.  A Shard
  pickles as that recipe, so if dask ever moves one, the receiving worker maps the file itself;
* every task is a pure function of a shard, a state (per-row vectors of that shard, which stay
  on its worker) and d-vectors or scalars; a pass returns a d-vector or a scalar per shard and
  the driver adds them in shard order (so the result does not depend on which worker ran what).

Lost workers: a task's inputs are futures whose lineage dask keeps, so when a worker dies its
shard and states are recomputed elsewhere (the same values: the tasks are deterministic) and the
run goes on; when dask gives up (a task was on ``distributed.scheduler.allowed-failures`` + 1
workers that died), or the scheduler goes away, :class:`ClusterError` stops the run with one
line and no model is written.
"""

import threading
import uuid

import numpy as np

from svmtool.engine.blocks import BlockOracle
from svmtool.errors import SvmtoolError, require


class ClusterError(SvmtoolError):
    """The cluster could not finish a task (exit status 1, no model written)."""


def require_dask():
    require("distributed", "--dask")


class Shard:
    """Rows ``r0..r1`` of the cache at ``path``, mapped read-only, streamed in blocks; their
    labels ``y`` and instance weights (``weights``, None when the cache has none), mapped."""

    def __init__(self, path, r0, r1, bias, block_values, threads=1):
        from svmtool.io.cache import load_cache

        self.recipe = (path, int(r0), int(r1), float(bias), int(block_values), int(threads))
        prob = load_cache(path, mmap="r")
        r0, r1 = int(r0), int(r1)
        if not 0 <= r0 <= r1 <= prob.n_rows:
            raise ValueError(f"rows {r0}..{r1} outside the cache's {prob.n_rows}")
        self.y = prob.y[r0:r1]
        self.weights = None if prob.weights is None else prob.weights[r0:r1]
        self.rows = (r0, r1)
        self.oracle = BlockOracle(prob.indptr[r0:r1 + 1], prob.indices, prob.data,
                                  prob.n_features, bias=bias, threads=threads,
                                  block_values=block_values)
        self.n_rows = r1 - r0
        self.n_features = self.oracle.n_features
        self.lock = threading.Lock()      # the oracle's block buffer is one per shard

    def __reduce__(self):
        return (Shard, self.recipe)

    def __sizeof__(self):
        return 1024                       # the rows are in the page cache, not in the heap


class Session:
    """A dask client (and the LocalCluster it started, if any)."""

    def __init__(self, address, threads=None, quiet=True):
        require_dask()
        import logging

        import dask
        from distributed import Client, LocalCluster

        self.cluster = None
        self._config = dask.config.set({"distributed.scheduler.work-stealing": False})
        self._config.__enter__()
        # dask reports a lost connection as log lines of its own; svmtool says it in one line
        # (ClusterError) when the run cannot go on
        self._logger = logging.getLogger("distributed")
        self._level = self._logger.level
        if quiet:
            self._logger.setLevel(logging.CRITICAL)
        try:
            if address.startswith("local:"):
                import warnings

                n = int(address[len("local:"):])
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message=".*already in use")
                    self.cluster = LocalCluster(n_workers=n, threads_per_worker=1,
                                                processes=True, host="127.0.0.1",
                                                dashboard_address=":0",
                                                # the workers are svmtool's own: a worker's
                                                # heartbeat racing the shutdown logs a
                                                # traceback at ERROR; real failures reach
                                                # the user as ClusterError's one line
                                                silence_logs=logging.CRITICAL)
                self.client = Client(self.cluster)
            else:
                self.client = Client(address)   # timeout: distributed.comm.timeouts.connect
        except OSError as e:
            self.close()
            raise ClusterError(f"dask: cannot reach the scheduler {address}: {e}") from None
        except Exception:
            self.close()
            raise
        self.address = address
        self._shards = {}

    # ---- lifetime --------------------------------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for closer in (getattr(self, "client", None), self.cluster):
            if closer is not None:
                try:
                    closer.close()
                except Exception:
                    pass
        self.client = None
        self.cluster = None
        if self._config is not None:
            self._config.__exit__(None, None, None)
            self._config = None
        logger = getattr(self, "_logger", None)
        if logger is not None:
            logger.setLevel(self._level)
            self._logger = None

    # ---- shards ------------------------------------------------------------------------------
    def workers(self):
        return sorted(self.client.scheduler_info()["workers"])

    def shards(self, path, bias, block_values):
        """Shard futures, created once per (path, bias) and kept for the session.

        ``path`` is a cache (one row range per worker, about equal stored values) or a list of
        pieces ``(cache path, first row, end row)`` -- the shards of a shard index -- given to
        the workers in turn.  Returns (futures, row ranges in the whole problem)."""
        from svmtool.io.cache import load_cache
        from svmtool.io.shards import shard_bounds

        key = (path if isinstance(path, str) else tuple(path), float(bias), int(block_values))
        if key not in self._shards:
            workers = self.workers()
            if not workers:
                raise ClusterError(f"dask: the cluster at {self.address} has no workers")
            if isinstance(path, str):
                prob = load_cache(path, mmap="r")
                cuts = shard_bounds(prob.indptr, len(workers))
                pieces = [(path, cuts[k], cuts[k + 1]) for k in range(len(cuts) - 1)]
            else:
                pieces = [(p, int(a), int(b)) for p, a, b in path]
            futures = [self.client.submit(Shard, p, a, b, bias, block_values, 1,
                                          workers=[workers[k % len(workers)]],
                                          allow_other_workers=True, pure=False)
                       for k, (p, a, b) in enumerate(pieces)]
            self.gather(futures)              # map every shard now: errors surface here
            ranges, row = [], 0
            for _, a, b in pieces:
                ranges.append((row, row + b - a))
                row += b - a
            self._shards[key] = (futures, ranges)
        return self._shards[key]

    # ---- tasks -------------------------------------------------------------------------------
    def submit(self, fn, *args):
        return self.client.submit(fn, *args, pure=False)

    def split(self, future, n):
        """Futures of the ``n`` items of the tuple ``future`` will hold (kept on the worker)."""
        import operator

        return [self.client.submit(operator.getitem, future, i, pure=False) for i in range(n)]

    def gather(self, futures):
        """The results of ``futures`` (in order); a failure of the cluster is one ClusterError."""
        try:
            return self.client.gather(futures)
        except (KeyboardInterrupt, MemoryError):
            raise
        except Exception as e:
            name = type(e).__name__
            if name == "KilledWorker":
                raise ClusterError("dask: a task failed on every worker that tried it (workers "
                                   "died); no model written") from None
            if isinstance(e, (OSError, TimeoutError)) or "Comm" in name or \
                    "Cancelled" in name:
                raise ClusterError(f"dask: lost the cluster ({name}: {e}); no model "
                                   f"written") from None
            raise

    def wait(self, futures):
        """Wait until ``futures`` are computed (their values stay on the workers)."""
        from distributed import wait

        try:
            wait(futures)
        except Exception as e:
            raise ClusterError(f"dask: lost the cluster ({type(e).__name__}: {e}); no model "
                               f"written") from None
        bad = [f for f in futures if f.status == "error"]
        if bad:
            self.gather(bad)            # raises the task's error (a ClusterError if a worker died)

    def reduce(self, futures):
        """Sum, in shard order, of the arrays or floats the futures hold."""
        parts = self.gather(futures)
        total = parts[0]
        if isinstance(total, np.ndarray):
            total = total.copy()
            for p in parts[1:]:
                total += p
            return total
        total = float(total)
        for p in parts[1:]:
            total += float(p)
        return total


# ---- prediction over pieces of a cache or of the shards of an index ----------------------------

def t_predict(path, r0, r1, model):
    """(labels, qid, decision values) of rows ``r0..r1`` of the cache at ``path``, computed on
    the worker from its own map of the file (only the results travel back)."""
    from svmtool.io.cache import load_cache
    from svmtool.problem import Problem

    prob = load_cache(path, mmap="r")
    if not 0 <= r0 <= r1 <= prob.n_rows:
        raise ValueError(f"rows {r0}..{r1} outside the cache's {prob.n_rows}")
    lo, hi = int(prob.indptr[r0]), int(prob.indptr[r1])
    chunk = Problem(prob.indptr[r0:r1 + 1] - lo, prob.indices[lo:hi], prob.data[lo:hi],
                    prob.y[r0:r1], prob.n_features)
    qid = None if prob.qid is None else np.array(prob.qid[r0:r1])
    return np.array(chunk.y, dtype=np.float64), qid, model.decision_function(chunk)


def prediction_pieces(files, chunk_bytes):
    """Row ranges ``(path, r0, r1)``, in row order, of the caches ``files`` (a cache, or the
    shards of an index), each cut into pieces of about ``chunk_bytes`` of stored values."""
    from svmtool.io.cache import load_cache

    pieces = []
    for path in files:
        prob = load_cache(path, mmap="r")
        n = prob.n_rows
        per_row = 12.0 * max(prob.nnz, 1) / max(n, 1)
        step = max(1, int(chunk_bytes // per_row))
        pieces += [(path, a, min(n, a + step)) for a in range(0, n, step)]
    return pieces


def t_model(model):
    """``model`` itself, as a task's result: dask computes it again if the worker holding it
    dies (scattered data has no lineage, and dask's memory manager drops its extra copies)."""
    return model


def predict_in_order(session, pieces, model, window=None):
    """Yield ``t_predict``'s results for ``pieces`` in row order: one task per piece, the pieces
    dealt to the workers in turn, each worker's pieces using that worker's own copy of the
    model, the result of a ``t_model`` task of its own (one key per worker: no copy is a
    replica that the memory manager drops, and a worker never fetches the model from a peer,
    which may be dying -- a fetch cut by the peer's death while the model was being computed
    again left dask's scheduler and worker disagreeing, and the run waiting for ever); at most
    ``window`` pieces (default: two per worker) are computed ahead of the one being yielded,
    so the driver holds a few pieces' results."""
    from collections import deque

    client = session.client
    workers = session.workers()
    if not workers:
        raise ClusterError(f"dask: the cluster at {session.address} has no workers")
    tag = uuid.uuid4().hex
    copies = [client.submit(t_model, model, pure=False, key=f"svmtool-model-{tag}-{k}",
                            workers=[w], allow_other_workers=True)
              for k, w in enumerate(workers)]
    window = max(1, window or 2 * len(workers))
    dealt = [0]

    def submit(piece):
        k = dealt[0] % len(workers)
        dealt[0] += 1
        return client.submit(t_predict, *piece, copies[k], pure=False, workers=[workers[k]],
                             allow_other_workers=True)

    todo = deque()
    it = iter(pieces)
    for piece in it:
        todo.append(submit(piece))
        if len(todo) >= window:
            break
    while todo:
        future = todo.popleft()
        [result] = session.gather([future])
        future.release()
        nxt = next(it, None)
        if nxt is not None:
            todo.append(submit(nxt))
        yield result
