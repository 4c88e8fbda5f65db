"""Measured figures stay out of the code.

Comments and docstrings keep the maths, the invariants and the reasons; what was measured
(seconds, speed ratios, shares of the time, peak memory, throughput, test accuracies of runs)
lives in BENCHMARKS.md, which ``svmtool bench`` writes, and the code refers to its sections.  A
figure in a comment ages the day the code around it changes; one in BENCHMARKS.md is rewritten
with the command that measured it.

The scan reads the comments (``tokenize``) and the docstrings (``ast``) of every module under
svmtool/ outside svmtool/bench/ and allows at most ``ALLOWED`` lines that look like a
measurement.  Facts that are not measurements do not match: defaults and limits (4096 features,
``1 << 22`` values), complexities, tolerances (1e-3), bit counts, version numbers (LIBLINEAR 2.4x).
"""

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "svmtool"

ALLOWED = 5


_NUM = r"\d+(?:[.,]\d+)?"
_RANGE = rf"{_NUM}(?:\s*(?:-|to)\s*\+?{_NUM})?"

PATTERNS = {
    # durations: "0.3 s", "20-30 ms", "50 us", "2.4 min"
    "seconds": re.compile(
        rf"(?<![\w.-]){_RANGE}(?:\s*(?:ms|us|µs|min)|\s+(?:s|sec|seconds|milliseconds"
        rf"|microseconds|minutes))\b(?!-)|(?<![\w.])\d+\.\d+s\b"),
    # ratios: "1.6x faster", "2.2-2.9x", "10x fewer"; not a version ("LIBLINEAR 2.4x", "2.4x-2.50")
    "ratio": re.compile(rf"(?<!LIBLINEAR )(?<!LIBSVM )(?<![\w.]){_RANGE}x\b(?!-\d)"),
    # "N times faster", "N% slower", "faster by N"
    "faster/slower": re.compile(
        rf"{_NUM}\s*(?:%|times|-fold)?\s+(?:faster|slower|quicker|less time|more time)\b"
        rf"|\b(?:faster|slower)\s+(?:by|than)\s+(?:about\s+)?{_NUM}"),
    # percentages of time, of work, of rows, accuracies -- but not a definition such as
    # "0.1% of training loss" (a tolerance) or "per 100% of average loss" (a unit)
    "percent": re.compile(
        rf"(?<![\w.]){_RANGE}\s*%(?!\s+of\s+(?:the\s+)?(?:training|average)\s+loss)"),
    # accuracy won or lost: "2.4 points of accuracy"
    "accuracy points": re.compile(rf"{_RANGE}\s*points?\s+of\s+(?:test\s+)?accuracy"),
    # throughput and the memory a run took
    "throughput": re.compile(rf"{_NUM}\s*(?:[KMG]i?B|rows)/s\b"),
    "peak memory": re.compile(
        rf"{_RANGE}\s*[KMG]i?B\b[^.;]{{0,40}}\b(?:peak|RSS|RssAnon|resident)\b"
        rf"|\b(?:peak|RSS|RssAnon|resident)\b[^.;]{{0,40}}?{_NUM}\s*[KMG]i?B\b"),
}


def _texts(path):
    """(line number, text) of every comment and docstring line of one module."""
    src = path.read_text(encoding="utf-8")
    out = [(tok.start[0], tok.string)
           for tok in tokenize.generate_tokens(io.StringIO(src).readline)
           if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                doc = body[0].value
                out.extend((doc.lineno + i, line)
                           for i, line in enumerate(doc.value.splitlines()))
    return out


def measured_lines(package=PACKAGE):
    """'path:line: [kind] text' for every comment or docstring line that carries a figure."""
    hits = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package)
        if rel.parts[0] == "bench":
            continue
        for lineno, text in _texts(path):
            kinds = [kind for kind, pat in PATTERNS.items() if pat.search(text)]
            if kinds:
                hits.append(f"svmtool/{rel.as_posix()}:{lineno}: [{', '.join(kinds)}] "
                            f"{text.strip()}")
    return hits


def test_at_most_five_measured_lines_in_the_code():
    hits = measured_lines()
    assert len(hits) <= ALLOWED, (
        f"{len(hits)} comment/docstring lines carry measured figures (at most {ALLOWED}); "
        "move the numbers to BENCHMARKS.md (svmtool bench) and refer to its section:\n"
        + "\n".join(hits))


SAMPLES_MEASURED = [
    "# the row 2.2-2.9x faster than the double one",
    "numba's start-up costs about 0.3 s",
    "(0.5-0.7 s, against milliseconds of solving)",
    "each 62k-long dot product cost 20-30 ms instead of 50 us",
    "the per-call overhead was 12% of the pass",
    "405 MB peak for the whole run",
    "How it stays fast (10-15 MB/s on ordinary files)",
    "expansions about 1.6x faster.)",
    "outer iteration measured +2 to +5% on a9a",
    "test accuracy 98.31-98.74%, mean 98.53%",
    "it ran 3 times faster",
    "a partition into 64 clusters lost 2.4 points of accuracy",
    "the import took 0.3s",
    "solving took 2 seconds",
]

SAMPLES_FACTS = [
    "LIBLINEAR 2.4x's ``NEWTON`` class",
    "``solve_l2r_l1l2_svc`` in linear.cpp, 2.4x-2.50",
    "is 0.1% of training loss, the same size as SVMperf's ``-e 0.1``",
    "SVMperf's C is per 100% of average loss",
    "DEFAULT_BLOCK_VALUES = 1 << 22  # stored values per block (48 MB)",
    "a relative error below 6e-7 x max(1, gamma)",
    "at most 4096 features; O(n log n); tolerance 1e-3; 53 bits",
    "Drop the trailing zeros (8, 4, 2 at a time, then 1s)",
    "runs that converge faster than the worst case",
    "LIBLINEAR -s 4 and svm-train -s 0 -t 2",
]


def test_the_patterns_tell_measurements_from_facts():
    """The scan is only as honest as its patterns: each sample of a measurement matches, and
    none of the facts that must stay in the code does."""
    def kinds(text):
        return [k for k, p in PATTERNS.items() if p.search(text)]
    assert [s for s in SAMPLES_MEASURED if not kinds(s)] == []
    assert [(s, kinds(s)) for s in SAMPLES_FACTS if kinds(s)] == []
