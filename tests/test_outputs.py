"""The output rule (svmtool/io/output.py) and disk faults, through the installed ``svmtool``.

Regular files and new paths are replaced atomically; devices, pipes, /dev/fd/N and stdout are
written directly; a symlink's target is replaced, never the link; every failure is one line,
exit status 1, the old file intact and no temporary file left.
"""

import ctypes
import os
import resource
import stat
import subprocess
import sys
import threading

import pytest

from conftest import DATA
from svmtool_proc import one_line, snapshot, start, svmtool

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="device nodes, /proc and /dev/fd as on Linux")

HEART = DATA / "heart_scale"
OLD = b"old model, must survive\n"


@pytest.fixture(scope="module")
def heart_model(tmp_path_factory):
    """The model `svmtool train -q heart_scale` writes (the reference bytes)."""
    path = tmp_path_factory.mktemp("ref") / "heart.model"
    r = svmtool("train", "-q", HEART, path)
    assert r.returncode == 0, r.stderr
    return path.read_bytes()


def full_device(folder):
    """A node that fails every write with ENOSPC: a copy of /dev/full made with mknod when we
    are root (so that a rename over it would show), else /dev/full itself."""
    if os.geteuid() == 0:
        node = os.path.join(folder, "full")
        try:
            os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
            with open(node, "wb") as f:        # the device cgroup may forbid opening it
                f.write(b"")
            return node
        except OSError as e:
            pytest.skip(f"cannot make a /dev/full node here: {e}")
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    return "/dev/full"


# --- paths that are not regular files ---------------------------------------------------------

# every command that writes a file: (arguments before OUT, arguments after OUT)
WRITERS = {
    "train model": (["train", "-q", HEART], []),
    "predict output": (["predict", "-q", HEART, "{model}"], []),
    "convert text": (["convert", "-q", HEART], []),
    "convert cache": (["convert", "-q", "--to", "cache", HEART], []),
    "convert ranges": (["convert", "-q", "--scale", "0,1", HEART, "{tmp}/scaled", "--save-ranges"],
                       []),
}


def writer_args(name, out, tmp_path, heart_model):
    model = tmp_path / "given.model"
    model.write_bytes(heart_model)
    before, after = WRITERS[name]
    fill = {"model": str(model), "tmp": str(tmp_path)}
    return [str(a).format(**fill) for a in before] + [out] + after


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_full_device_one_line_exit_1_node_kept(tmp_path, heart_model, name):
    node = full_device(tmp_path)
    args = writer_args(name, node, tmp_path, heart_model)
    before = snapshot(tmp_path)
    r = svmtool(*args)
    assert r.returncode == 1, r.stderr
    assert one_line(r.stderr) == f"cannot write {node}: no space left on device"
    assert stat.S_ISCHR(os.stat(node).st_mode)          # the device node was not replaced
    after = snapshot(tmp_path)
    after.pop("scaled", None)              # convert --save-ranges: the data itself is fine
    assert after == before


def test_stdout_on_a_full_device_is_an_error_not_exit_0(tmp_path):
    node = full_device(tmp_path)
    with open(node, "wb") as out:
        r = svmtool("train", "-q", HEART, "-", stdout=out)
    assert r.returncode == 1
    assert one_line(r.stderr) == "cannot write standard output: no space left on device"


def test_named_pipe_is_written_not_replaced(tmp_path, heart_model):
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    r = svmtool("train", "-q", HEART, fifo)
    reader.join(30)
    assert r.returncode == 0, r.stderr
    assert got == [heart_model]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["p"]


def test_named_pipe_whose_reader_leaves_is_an_error(tmp_path):
    fifo = tmp_path / "p"
    os.mkfifo(fifo)

    def read_nothing():
        with open(fifo, "rb"):
            pass

    reader = threading.Thread(target=read_nothing)
    reader.start()
    # megabytes of text: more than a pipe holds, so a write meets the closed pipe
    r = svmtool("convert", "-q", DATA / "a9a", fifo)
    reader.join(30)
    assert r.returncode == 1
    assert one_line(r.stderr) == f"cannot write {fifo}: broken pipe (its reader went away)"


def test_dev_fd_of_a_pipe_as_process_substitution(heart_model):
    # what bash's >(gzip > m.gz) passes: /dev/fd/N, the write end of a pipe
    rfd, wfd = os.pipe()
    p = start("train", "-q", HEART, f"/dev/fd/{wfd}", pass_fds=[wfd], stderr=subprocess.PIPE)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as f:
        data = f.read()
    assert p.wait(60) == 0, p.stderr.read()
    p.stderr.close()
    assert data == heart_model


# The tests never name /dev/stdout itself: a broken build run as root would rename over the
# machine's /dev/stdout.  A symlink of our own to /proc/self/fd/1 is what /dev/stdout is.

def test_proc_self_fd_and_dev_stdout_append_to_a_redirected_file(tmp_path, heart_model):
    # `svmtool train ... /dev/stdout >> log`: written through the open descriptor, so the
    # shell's append mode holds and the file is neither truncated nor renamed over
    out = tmp_path / "log"
    out.write_bytes(b"first line\n")
    dev_stdout = tmp_path / "stdout"
    dev_stdout.symlink_to("/proc/self/fd/1")
    for path in (dev_stdout, "/proc/self/fd/1"):
        with open(out, "ab") as f:
            r = svmtool("train", "-q", HEART, path, stdout=f)
        assert r.returncode == 0, r.stderr
    assert out.read_bytes() == b"first line\n" + heart_model + heart_model


def test_symlink_to_stdout_is_followed_to_the_descriptor(tmp_path, heart_model):
    dev_stdout = tmp_path / "stdout"
    dev_stdout.symlink_to("/proc/self/fd/1")
    link = tmp_path / "out"
    link.symlink_to(dev_stdout)
    r = svmtool("train", "-q", HEART, link)
    assert r.returncode == 0, r.stderr
    assert r.stdout == heart_model
    assert os.readlink(link) == str(dev_stdout)
    assert os.readlink(dev_stdout) == "/proc/self/fd/1"


def test_symlink_to_regular_file_replaces_the_target_keeps_the_link(tmp_path, heart_model):
    (tmp_path / "sub").mkdir()
    target = tmp_path / "sub" / "real.model"
    target.write_bytes(OLD)
    link = tmp_path / "current.model"
    link.symlink_to(os.path.join("sub", "real.model"))
    r = svmtool("train", "-q", HEART, link)
    assert r.returncode == 0, r.stderr
    assert os.readlink(link) == os.path.join("sub", "real.model")
    assert target.read_bytes() == heart_model
    assert sorted(os.listdir(tmp_path / "sub")) == ["real.model"]     # the temp file was beside it


def test_dangling_symlink_creates_its_target(tmp_path, heart_model):
    link = tmp_path / "m.model"
    link.symlink_to("new.model")
    assert svmtool("train", "-q", HEART, link).returncode == 0
    assert os.path.islink(link) and (tmp_path / "new.model").read_bytes() == heart_model


def test_replaced_file_keeps_its_permissions(tmp_path, heart_model):
    model = tmp_path / "m.model"
    model.write_bytes(OLD)
    model.chmod(0o640)
    assert svmtool("train", "-q", HEART, model).returncode == 0
    assert model.read_bytes() == heart_model
    assert stat.S_IMODE(os.stat(model).st_mode) == 0o640


def test_directory_as_output_is_misuse(tmp_path):
    r = svmtool("train", "-q", HEART, tmp_path)
    assert r.returncode == 2
    assert one_line(r.stderr) == f"cannot write {tmp_path}: is a directory"


def test_two_runs_on_one_path_leave_one_complete_model(tmp_path):
    """Concurrent runs on one model: the lock lets one write at a time; a run that finds it held
    exits 75 at once (or, with --wait, writes after the holder); never a mixed or partial file,
    no temporary or lock file left behind."""
    refs = []
    for c in ("1", "4"):
        ref = tmp_path / f"ref{c}"
        assert svmtool("train", "-q", "-c", c, HEART, ref).returncode == 0
        refs.append(ref.read_bytes())
    assert refs[0] != refs[1]
    model = tmp_path / "shared.model"
    model.write_bytes(OLD)
    for wait in ([], ["--wait", "120"]):
        procs = [start("train", "-q", *wait, "-c", c, HEART, model, stderr=subprocess.PIPE)
                 for c in ("1", "4", "1", "4")]
        codes = []
        for p in procs:
            code = p.wait(180)
            err = p.stderr.read().decode()
            p.stderr.close()
            assert code in (0, 75), err
            if code == 75:
                assert "is writing" in err and len(err.splitlines()) == 1, err
            codes.append(code)
        assert 0 in codes
        if wait:
            assert codes == [0, 0, 0, 0]
        assert model.read_bytes() in refs
        assert sorted(os.listdir(tmp_path)) == ["ref1", "ref4", "shared.model"]


# --- disk faults --------------------------------------------------------------------------------

def _without_dac_override():
    """preexec_fn: a root child loses the capabilities that bypass file permissions."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):          # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, from the bounding set
        if libc.prctl(24, cap, 0, 0, 0) != 0:         # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def test_read_only_folder_one_line_exit_1_old_model_intact(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    model = folder / "m.model"
    model.write_bytes(OLD)
    folder.chmod(0o555)
    pre = _without_dac_override if os.geteuid() == 0 else None
    try:
        before = snapshot(folder)
        try:
            r = svmtool("train", "-q", HEART, model, preexec_fn=pre)
        except subprocess.SubprocessError as e:
            pytest.skip(f"cannot drop root's file-permission override here: {e}")
        assert r.returncode == 1, r.stderr
        assert one_line(r.stderr) == f"cannot write {model}: permission denied"
        assert snapshot(folder) == before
    finally:
        folder.chmod(0o755)


def test_missing_folder_one_line_exit_1_nothing_created(tmp_path):
    out = tmp_path / "no" / "such" / "m.model"
    r = svmtool("train", "-q", HEART, out)
    assert r.returncode == 1
    assert one_line(r.stderr) == f"cannot write {out}: no such folder {out.parent}"
    assert os.listdir(tmp_path) == []


def _file_size_limit(limit):
    def pre():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


@pytest.mark.parametrize("args", [["train", "-q", HEART], ["convert", "-q", HEART]],
                         ids=["train", "convert"])
def test_file_size_limit_efbig_one_line_exit_1_old_file_intact(tmp_path, args):
    out = tmp_path / "out"
    out.write_bytes(OLD)
    before = snapshot(tmp_path)
    r = svmtool(*args, out, preexec_fn=_file_size_limit(200))
    assert r.returncode == 1, r.stderr
    assert one_line(r.stderr) == f"cannot write {out}: file too large (a file size limit, ulimit -f?)"
    assert snapshot(tmp_path) == before


def test_full_device_behind_a_symlink_fails_and_keeps_both(tmp_path):
    node = full_device(tmp_path)
    link = tmp_path / "m.model"
    link.symlink_to(node)
    r = svmtool("train", "-q", HEART, link)
    assert r.returncode == 1
    assert one_line(r.stderr) == f"cannot write {link}: no space left on device"
    assert os.readlink(link) == node and stat.S_ISCHR(os.stat(node).st_mode)


# --- the module itself ------------------------------------------------------------------------

def test_open_output_removes_its_temp_file_on_any_exception(tmp_path):
    from svmtool.io.output import open_output

    path = tmp_path / "m"
    path.write_bytes(OLD)
    with pytest.raises(KeyError):
        with open_output(path) as f:
            f.write("half a model\n")
            assert len(os.listdir(tmp_path)) == 2        # the temp file, beside the target
            raise KeyError("the caller failed")
    assert os.listdir(tmp_path) == ["m"] and path.read_bytes() == OLD


def test_open_output_kinds(tmp_path):
    from svmtool.io.output import output_kind

    reg = tmp_path / "f"
    reg.write_text("x")
    link = tmp_path / "l"
    link.symlink_to(reg)
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    assert output_kind("-") == ("stdout", None)
    assert output_kind(reg) == ("atomic", str(reg))
    assert output_kind(tmp_path / "new") == ("atomic", str(tmp_path / "new"))
    assert output_kind(link) == ("atomic", str(reg))
    assert output_kind(fifo) == ("direct", str(fifo))
    assert output_kind("/dev/null") == ("direct", "/dev/null")
    assert output_kind("/dev/stdout") == ("fd", 1)
    assert output_kind("/dev/fd/7") == ("fd", 7)
    assert output_kind(f"/proc/{os.getpid()}/fd/5") == ("fd", 5)
    assert output_kind("/proc/1/fd/1")[0] == "direct"
