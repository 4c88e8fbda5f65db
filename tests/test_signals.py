"""Signals sent to a real ``svmtool`` mid-run: exit 128+N, one line, no partial output, no temp
file, the previous file byte-identical; SIGPIPE from a reader that leaves: a quiet exit."""

import contextlib
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import DATA
from svmtool_proc import one_line, snapshot, svmtool, wait_for_handlers, wait_until
from svmtool_proc import start as _start

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="waits for the handlers through /proc/PID/status")

HEART = DATA / "heart_scale"
OLD = b"previous output, must survive byte for byte\n"
SIGNALS = {"SIGINT": 130, "SIGTERM": 143, "SIGHUP": 129}


def _default_signals():
    """preexec_fn: the signals under test at their defaults in the child, as in a foreground
    shell.  A test run started with nohup or as a background job hands its children SIGHUP or
    SIGINT ignored, and svmtool rightly keeps an ignored signal ignored."""
    for name in SIGNALS:
        signal.signal(getattr(signal, name), signal.SIG_DFL)


def start(*args, **kw):
    kw.setdefault("preexec_fn", _default_signals)
    return _start(*args, **kw)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "heart.model"
    assert svmtool("train", "-q", HEART, path).returncode == 0
    return path


def _finish(p, timeout=30):
    try:
        if p.stdin is not None:
            with contextlib.suppress(OSError):
                p.stdin.close()
        p.wait(timeout)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    err = p.stderr.read()
    p.stderr.close()
    return p.returncode, err


def _commands(out, model):
    return {
        "train": ["train", "-q", "-", out],
        "predict": ["predict", "-q", "-", model, out],
        "convert": ["convert", "-q", "-", out],
    }


@pytest.mark.parametrize("sig", sorted(SIGNALS))
@pytest.mark.parametrize("command", ["train", "predict", "convert"])
def test_signal_while_reading_input(tmp_path, model, command, sig):
    # the command reads its data from a pipe that delivers part of a file and then stalls:
    # the signal finds it in the middle of parsing
    out = tmp_path / "out"
    out.write_bytes(OLD)
    before = snapshot(tmp_path)
    p = start(*_commands(out, model)[command], stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write((DATA / "a9a").read_bytes()[:100_000])
    p.stdin.flush()
    wait_for_handlers(p)
    p.send_signal(getattr(signal, sig))
    code, err = _finish(p)
    assert code == SIGNALS[sig], err
    assert one_line(err) == f"interrupted by {sig}"
    assert snapshot(tmp_path) == before


def _training(tmp_path):
    """``svmtool train`` over an old ``a9a.model``, a run that would take minutes (tight eps,
    huge C), once its report line says reading is over: (the process, the folder before)."""
    model = tmp_path / "a9a.model"
    model.write_bytes(OLD)
    before = snapshot(tmp_path)
    p = start("train", "-e", "1e-12", "--max-iter", "100000000", "-c", "1000", DATA / "a9a",
              model, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    first = p.stderr.readline()
    assert first.startswith(b"read 32561 examples"), first
    assert p.poll() is None                   # alive, and past reading: training
    return p, before


@pytest.mark.parametrize("sig", sorted(SIGNALS))
def test_signal_while_training_keeps_previous_model(tmp_path, sig):
    p, before = _training(tmp_path)
    time.sleep(0.3)
    assert p.poll() is None
    p.send_signal(getattr(signal, sig))
    code, err = _finish(p)
    assert code == SIGNALS[sig]
    assert one_line(err) == f"interrupted by {sig}"
    assert snapshot(tmp_path) == before


def test_kill_9_while_training_leaves_the_previous_model(tmp_path):
    """SIGKILL runs no handler: what keeps the old model is that nothing is written before the
    model is complete.  Killed once its report line says the data are read, svmtool has left
    the old model byte for byte and no temporary file; only its lock file stays, holding its
    pid (the kernel released the flock: the next run takes it, tests/test_retrain.py)."""
    p, before = _training(tmp_path)
    p.kill()
    code, _ = _finish(p)
    assert code == -signal.SIGKILL
    after = snapshot(tmp_path)
    assert after.pop(".a9a.model.lock") == ("file", b"%d\n" % p.pid)
    assert after == before


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_signal_while_writing_predictions(tmp_path, model, sig):
    """Signalled in the middle of writing (predictions already on disk, the input stalled):
    the target is still the old file byte for byte, so it was never written in place.  SIGTERM
    removes the partial temporary file; after SIGKILL nothing runs to remove it, and it stays
    behind under its hidden name."""
    out = tmp_path / "pred"
    out.write_bytes(OLD)
    p = start("predict", "-q", "--decision-values", "--chunk-bytes", "4096", "-", model, out,
              stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write((DATA / "a9a").read_bytes()[:400_000])
    p.stdin.flush()

    def temporaries():
        return [n for n in os.listdir(tmp_path) if n != "pred"]

    def written():                            # predictions on disk, wherever they went
        return out.read_bytes() != OLD or any(os.path.getsize(tmp_path / n) for n in temporaries())

    wait_until(written)
    assert p.poll() is None                   # alive, waiting for more input, mid-write
    p.send_signal(getattr(signal, sig))
    code, err = _finish(p)
    assert out.read_bytes() == OLD
    if sig == "SIGTERM":
        assert code == 143 and one_line(err) == "interrupted by SIGTERM"
        assert temporaries() == []
        return
    assert code == -signal.SIGKILL and err == b""
    left = temporaries()
    assert len(left) == 1 and re.fullmatch(r"\.pred\.[0-9a-f]{12}\.tmp", left[0]), left
    assert (tmp_path / left[0]).read_bytes().count(b"\n") > 0     # the predictions so far


def test_ignored_hangup_stays_ignored_as_under_nohup(tmp_path):
    out = tmp_path / "m.model"
    p = start("train", "-q", "-", out, stdin=subprocess.PIPE, stderr=subprocess.PIPE,
              preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    p.stdin.write(HEART.read_bytes()[:5000])
    p.stdin.flush()
    wait_for_handlers(p)
    p.send_signal(signal.SIGHUP)
    time.sleep(0.2)
    assert p.poll() is None
    p.stdin.write(HEART.read_bytes()[5000:])
    code, err = _finish(p)
    assert code == 0, err
    assert out.read_bytes().startswith(b"solver_type ")


def test_reader_of_stdout_going_away_is_a_quiet_exit(model):
    # `svmtool predict ... - | head -1`: far more output than a pipe holds
    p = start("predict", "-q", "--decision-values", DATA / "a9a", model, "-",
              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = p.stdout.readline()
    p.stdout.close()
    assert line.strip()
    assert p.wait(60) == 128 + signal.SIGPIPE
    assert p.stderr.read() == b""
    p.stderr.close()


def test_a_signal_wrapped_by_a_library_is_still_the_signal(monkeypatch, capsys):
    """The handler's Interrupted may come out of a library as another exception (numba's
    compiler wraps what is raised while it works): the exit status and the line are still the
    signal's, never a traceback and exit 1."""
    import svmtool.cli as cli_module

    def interrupted_then_wrapped(args):
        cli_module._SIGNAL_STATE["raised"] = signal.SIGTERM
        raise RuntimeError("a library's wrapper of the handler's exception")

    monkeypatch.setattr(cli_module, "_run", interrupted_then_wrapped)
    assert cli_module.run(["predict"]) == 143
    assert capsys.readouterr().err == "svmtool: error: interrupted by SIGTERM\n"

    def plain_bug(args):
        raise RuntimeError("no signal: a bug stays a bug")

    monkeypatch.setattr(cli_module, "_run", plain_bug)
    with pytest.raises(RuntimeError):
        cli_module.run(["predict"])
