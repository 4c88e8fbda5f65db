"""Reading and writing data: svmtool's parser and cache against scikit-learn, and the writer.

The measurements live in :mod:`svmtool.bench.iobench` (``svmtool bench --io`` and ``make bench``
use them too); this script runs them over every data file under ``--data-dir`` (default
``../shared/data`` beside the repository) and prints markdown tables.

    python benchmarks/read_bench.py                         # everything (about two minutes)
    python benchmarks/read_bench.py --only a9a --repeats 3 --memory none
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from svmtool.bench.iobench import DEFAULT_DATA, data_files, run  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=str(DEFAULT_DATA),
                    help="folder of svmlight files (searched recursively); default "
                         "../shared/data beside the repository")
    ap.add_argument("--only", nargs="*", default=None,
                    help="only files whose path contains one of these strings")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--memory", choices=["all", "largest", "none"], default="largest",
                    help="peak-memory subprocesses for every file, the largest, or none")
    ap.add_argument("--no-write", action="store_true", help="skip the writer benchmark")
    ap.add_argument("--no-jit", action="store_true", help="skip the compile-time measurement")
    args = ap.parse_args(argv)

    if not Path(args.data_dir).is_dir():
        raise SystemExit(f"no data folder {args.data_dir} (use --data-dir)")
    files = data_files(args.data_dir, args.only)
    if not files:
        raise SystemExit("no data files found")
    _, md = run(files, repeats=args.repeats, memory=args.memory, write=not args.no_write,
                jit=not args.no_jit, base=Path(args.data_dir))
    print("# svmtool read/write benchmark\n")
    print(md)


if __name__ == "__main__":
    main()
