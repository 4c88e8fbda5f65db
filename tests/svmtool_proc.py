"""Running the installed ``svmtool`` command in a real subprocess, and looking at what it left."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

# the console script of the environment running the tests (.venv/bin/svmtool under make test)
_SCRIPT = Path(sys.executable).with_name("svmtool")
SVMTOOL = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "svmtool"]


def svmtool(*args, timeout=120, **kw):
    """``svmtool ARGS`` to completion; stdout and stderr captured as bytes unless redirected."""
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    return subprocess.run(SVMTOOL + [str(a) for a in args], timeout=timeout, **kw)


def start(*args, **kw):
    """``svmtool ARGS`` started in the background (a Popen)."""
    return subprocess.Popen(SVMTOOL + [str(a) for a in args], **kw)


def one_line(stderr, prefix="svmtool: error: "):
    """The single line of ``stderr`` (bytes), checked to be exactly one line with ``prefix``."""
    text = stderr.decode()
    assert text.count("\n") == 1 and text.endswith("\n"), text
    assert text.startswith(prefix), text
    assert "Traceback" not in text
    return text[len(prefix):-1]


def snapshot(folder):
    """{name: (kind, bytes)} of everything in ``folder``: to prove nothing was created or changed."""
    out = {}
    for name in sorted(os.listdir(folder)):
        p = os.path.join(folder, name)
        if os.path.islink(p):
            out[name] = ("link", os.readlink(p))
        elif os.path.isfile(p):
            with open(p, "rb") as f:
                out[name] = ("file", f.read())
        else:
            out[name] = ("other", os.stat(p).st_mode)
    return out


def handles(pid, signum):
    """True once process ``pid`` has a handler for ``signum`` (Linux: /proc/PID/status SigCgt)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    except OSError:
        pass
    return False


def wait_until(test, timeout=60.0, step=0.02):
    """Poll ``test()`` until it is true; fail after ``timeout`` seconds."""
    end = time.monotonic() + timeout
    while not test():
        if time.monotonic() > end:
            raise AssertionError("timed out waiting")
        time.sleep(step)


def wait_for_handlers(proc, timeout=60.0):
    """Wait until svmtool has installed its SIGTERM handler (it is then running a command)."""
    wait_until(lambda: proc.poll() is not None or handles(proc.pid, signal.SIGTERM), timeout)
    assert proc.poll() is None, "svmtool ended before it could be signalled"
