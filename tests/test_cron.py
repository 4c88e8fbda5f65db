"""The crontab line of examples/cron/crontab (and README.md), run the way cron runs it.

cron starts a job with an almost empty environment -- PATH=/usr/bin:/bin, SHELL=/bin/sh, HOME and
LOGNAME of the user -- and hands the command part of the line to /bin/sh -c.  These tests take the
line from the file, drop its five schedule fields, map its two folders (/srv/svmtool, the
checkout; /srv/models, the data and the model) to places of the test, and run it under exactly
that environment twice: the first run converts, retrains and publishes; the second finds nothing
new and does nothing.  As root, the same once more as an unprivileged user, on an install that
user cannot write (made by `make demo` with a Python every user can run), so numba has to keep
its compiled code elsewhere (~/.cache/numba of that user).
"""

import json
import os
import pwd
import shlex
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from conftest import DATA, ROOT

CRONTAB = ROOT / "examples" / "cron" / "crontab"


def crontab_command():
    """The command part of the one job line in examples/cron/crontab."""
    jobs = [ln for ln in CRONTAB.read_text().splitlines()
            if ln.strip() and not ln.lstrip().startswith("#") and "=" not in ln.split()[0]]
    assert len(jobs) == 1, jobs
    return jobs[0].split(None, 5)[5]


def cron_run(command, checkout, models, home, user="root", as_user=None):
    """Run COMMAND as cron would (/bin/sh -c under cron's environment), with /srv/svmtool and
    /srv/models mapped to CHECKOUT and MODELS."""
    line = command.replace("/srv/svmtool", str(checkout)).replace("/srv/models", str(models))
    env = ["env", "-i", "PATH=/usr/bin:/bin", "SHELL=/bin/sh", f"HOME={home}", f"LOGNAME={user}"]
    prefix = []
    if as_user is not None:
        prefix = ["setpriv", f"--reuid={as_user.pw_uid}", f"--regid={as_user.pw_gid}",
                  "--clear-groups"]
    return subprocess.run(prefix + env + ["/bin/sh", "-c", line], capture_output=True,
                          text=True, timeout=1200)


def publish_then_nothing(command, checkout, models, home, **who):
    """First run publishes a model (one log line, status published, nothing printed: make -s and
    svmtool -q keep a good night silent); the second does nothing and prints nothing."""
    first = cron_run(command, checkout, models, home, **who)
    assert first.returncode == 0, first.stdout + first.stderr
    assert first.stdout == "" and first.stderr == "", first.stdout + first.stderr
    model = models / "current.model"
    assert model.read_text().startswith("solver_type ")
    log = [json.loads(x) for x in (models / "current.model.log.jsonl").read_text().splitlines()]
    assert [r["status"] for r in log] == ["published"]
    before = (model.stat().st_mtime_ns, model.read_bytes())
    second = cron_run(command, checkout, models, home, **who)
    assert second.returncode == 0, second.stdout + second.stderr
    assert second.stdout == "" and second.stderr == ""
    assert (model.stat().st_mtime_ns, model.read_bytes()) == before
    assert len((models / "current.model.log.jsonl").read_text().splitlines()) == 1
    return log[0]


def test_readme_shows_the_crontab_line():
    assert crontab_command() in (ROOT / "README.md").read_text()
    assert crontab_command() in (ROOT / "docs" / "cron.md").read_text()


def test_without_the_path_the_job_says_what_to_set(tmp_path):
    """The line without SVMTOOL=... (the README's line before this fix): one line naming the
    setting, exit 2, nothing written."""
    command = " ".join(w for w in shlex.split(crontab_command()) if not w.startswith("SVMTOOL="))
    shutil.copy(DATA / "heart_scale", tmp_path / "today.svm")
    shutil.copy(DATA / "heart_scale", tmp_path / "valid.svm")
    r = cron_run(command, ROOT, tmp_path, tmp_path)
    assert r.returncode == 2
    assert "SVMTOOL=svmtool is not a command" in r.stderr and r.stderr.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["today.svm", "valid.svm"]


def test_crontab_line_under_cron(tmp_path):
    """The line as root, with the checkout this suite runs in (`make test` made its .venv)."""
    if not (ROOT / ".venv" / "bin" / "svmtool").exists():
        pytest.skip("this checkout has no .venv/bin/svmtool (make test and make demo make it)")
    models, home = tmp_path / "models", tmp_path / "home"
    models.mkdir()
    home.mkdir()
    shutil.copy(DATA / "heart_scale", models / "today.svm")
    shutil.copy(DATA / "heart_scale", models / "valid.svm")
    record = publish_then_nothing(crontab_command(), ROOT, models, home)
    assert record["status"] == "published" and (models / "current.model").stat().st_size > 0


def _tracked_files():
    r = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if r.returncode != 0:
        return None
    return [p for p in r.stdout.decode().split("\0") if p and (ROOT / p).is_file()]


def test_crontab_line_as_an_unprivileged_user_on_a_read_only_install():
    """As root: the README's set-up (`make demo`) in a copy of this checkout, with a Python
    every user can run, then the crontab line as user `nobody` with a home of its own, twice.
    The install stays read-only to that user; numba's cache goes to its ~/.cache/numba."""
    if os.geteuid() != 0:
        pytest.skip("runs as root only (it switches to user nobody)")
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("no python3 in /usr/bin:/bin for an install every user can run")
    probe = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                            python, "-c", "import venv, ensurepip"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"{python} cannot make a venv as user nobody (python3-venv missing?)")
    files = _tracked_files()
    if files is None:
        pytest.skip("not a git checkout: cannot copy the tracked files")
    nobody = pwd.getpwnam("nobody")
    top = Path(tempfile.mkdtemp(prefix="svmtool-cron-"))
    try:
        top.chmod(0o755)
        checkout = top / "srv" / "svmtool"
        # the tracked files, and the kernel extension this checkout's `make aot` built from
        # them (times kept: `make demo` finds it current, as in a checkout that built it once;
        # building it -- five minutes on two cores -- is what `make aot` and
        # tools/wheel-check.sh check)
        built = [str(p.relative_to(ROOT)) for p in (ROOT / "svmtool").glob("_kernels_aot*")]
        for rel in files + built:
            dst = checkout / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dst)
        setup = subprocess.run(["make", "demo", f"PYTHON={python}"], cwd=checkout,
                               capture_output=True, text=True, timeout=1800)
        assert setup.returncode == 0, setup.stdout[-2000:] + setup.stderr[-2000:]
        # a new install's first `make demo` compiles in its quiet warm-up and then shows the
        # times every later run has: no compilation among them
        shown = setup.stdout + setup.stderr
        assert "trained in" in shown and "compiling numba's kernels" not in shown, shown
        for d, _, names in os.walk(top):
            for n in [d] + [os.path.join(d, x) for x in names]:
                if not os.path.islink(n):
                    m = os.stat(n).st_mode
                    os.chmod(n, (m | stat.S_IRGRP | stat.S_IROTH |
                                 (stat.S_IXGRP | stat.S_IXOTH if m & stat.S_IXUSR else 0))
                             & ~(stat.S_IWGRP | stat.S_IWOTH))
        models, home = top / "srv" / "models", top / "home"
        for d in (models, home):
            d.mkdir()
            os.chown(d, nobody.pw_uid, nobody.pw_gid)
        # a9a is large enough for the jitted reader and solver: numba's cache is needed
        for src, dst in ((DATA / "a9a", "today.svm"), (DATA / "a9a.t", "valid.svm")):
            shutil.copy(src, models / dst)
            os.chown(models / dst, nobody.pw_uid, nobody.pw_gid)
        pycache_before = sorted(str(p) for p in checkout.rglob("*.nbi"))
        record = publish_then_nothing(crontab_command(), checkout, models, home,
                                      user="nobody", as_user=nobody)
        assert sorted(str(p) for p in checkout.rglob("*.nbi")) == pycache_before
        # the kernels came from the extension `make demo` built: numba was not even loaded
        # (so nothing went to numba's cache either)
        startup = record["startup"]
        assert startup["aot"]["state"] == "used" and "numba" not in startup, startup
        assert not (home / ".cache" / "numba").exists()
        # a user with no writable home either: a private folder under the temporary directory
        probe = subprocess.run(
            ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
             "env", "-i", "PATH=/usr/bin:/bin", "HOME=/nonexistent",
             str(checkout / ".venv" / "bin" / "python"), "-c",
             "import os, svmtool._jit as j; print(j.CACHING, os.environ['NUMBA_CACHE_DIR'])"],
            capture_output=True, text=True)
        assert probe.returncode == 0, probe.stderr
        caching, where = probe.stdout.split()
        assert caching == "True" and os.stat(where).st_uid == nobody.pw_uid
    finally:
        shutil.rmtree(top, ignore_errors=True)
