"""The Docker image builds, runs JupyterLab as a non-root user behind a token, and imports pysim.

On a machine that cannot pull images the base is built locally with
debootstrap; when no Docker engine runs, one is started (Debian's docker.io).
The test skips only where the kernel cannot run an engine at all.
"""
import os
import secrets
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from http_helpers import free_port, status

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[1]
BASE = "debian:bookworm-slim"
IMAGE = "pysim-lab-test"
MIRROR = os.environ.get("DEBIAN_MIRROR", "http://deb.debian.org/debian")


def sh(*cmd, timeout=600, check=True):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=check)


def engine_running():
    return shutil.which("docker") and sh("docker", "info", check=False, timeout=30).returncode == 0


def ensure_engine(tmp_path):
    if engine_running():
        return
    if shutil.which("dockerd") is None:
        if os.environ.get("CI"):
            pytest.fail("no Docker engine installed (apt-get install docker.io); CI must run the Docker test")
        pytest.skip("no Docker engine installed here (apt-get install docker.io)")
    if os.geteuid() != 0:
        pytest.skip("starting a Docker engine needs root")
    log = open(tmp_path / "dockerd.log", "w")
    subprocess.Popen(["dockerd"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    for _ in range(60):
        if engine_running():
            return
        time.sleep(1)
    pytest.skip("this machine's kernel cannot run a Docker engine: " + (tmp_path / "dockerd.log").read_text()[-400:])


def ensure_base(tmp_path):
    if sh("docker", "image", "inspect", BASE, check=False).returncode == 0:
        return
    if sh("docker", "pull", BASE, check=False, timeout=300).returncode == 0:
        return
    assert shutil.which("debootstrap"), "no base image and no debootstrap to build one (apt-get install debootstrap)"
    rootfs = tmp_path / "rootfs"
    sh("debootstrap", "--variant=minbase", "bookworm", str(rootfs), MIRROR, timeout=900)
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
    subprocess.run(["docker", "import", "-", BASE], stdin=tar.stdout, check=True, capture_output=True, timeout=600)
    tar.wait()




def test_image_builds_runs_and_requires_the_token(tmp_path):
    ensure_engine(tmp_path)
    ensure_base(tmp_path)
    cas = ROOT / "docker" / "ca-certificates"
    copied = []
    for crt in Path("/usr/local/share/ca-certificates").glob("*.crt"):  # as `make docker-build` does
        shutil.copy(crt, cas / crt.name)
        copied.append(cas / crt.name)
    try:
        build = sh("docker", "build", "-t", IMAGE, str(ROOT), check=False, timeout=1800)
    finally:
        for c in copied:
            c.unlink()
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    port = free_port()
    token = secrets.token_hex(16)
    cid = sh("docker", "run", "-d", "--rm", "-p", f"127.0.0.1:{port}:8888", "-e", f"JUPYTER_TOKEN={token}",
             IMAGE).stdout.strip()
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(120):
            if status(f"{base}/api/status?token={token}") == 200:
                break
            time.sleep(0.5)
        else:
            pytest.fail("JupyterLab in the container did not answer: " + sh("docker", "logs", cid, check=False).stderr[-2000:])
        assert status(f"{base}/api/status") == 403
        assert status(f"{base}/api/status?token=wrong") == 403
        who = sh("docker", "exec", cid, "id", "-u").stdout.strip()
        assert who != "0", "JupyterLab must not run as root in the image"
        out = sh("docker", "exec", cid, "python", "-c",
                 "import pysim, pysim._native, pysim.engine; s = pysim.engine.Simulation(); "
                 "s.run(until=s.timeout(1, 'ok')); print(pysim.__version__, s.now)").stdout
        assert out.split() == ["0.1.0", "1.0"]
    finally:
        sh("docker", "rm", "-f", cid, check=False)
