"""Training where the rows are not in memory: blocks of a memory-mapped cache (out of core) and
shards on a dask.distributed cluster."""
