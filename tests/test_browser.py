"""JupyterLab in headless Chromium (Debian's, driven by Playwright) runs a notebook through the UI."""
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from http_helpers import free_port, status

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "sosp93_maeda.ipynb"


def chromium():
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is not installed (apt-get install chromium); CI must run the browser test")
        pytest.skip("Chromium is not installed here (apt-get install chromium)")
    return path






@pytest.fixture
def lab(tmp_path):
    """JupyterLab on loopback with a random token, serving a copy of the notebooks."""
    import secrets

    work = tmp_path / "notebooks"
    shutil.copytree(ROOT / "notebooks", work)
    port, token = free_port(), secrets.token_hex(16)
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
           f"--ServerApp.root_dir={work}", f"--IdentityProvider.token={token}"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    # render every cell (no windowing), so every output, errors included, is in the page; no news prompt
    settings = tmp_path / "settings"
    (settings / "@jupyterlab" / "notebook-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings").write_text(
        '{"windowingMode": "none"}')
    (settings / "@jupyterlab" / "apputils-extension").mkdir(parents=True)
    (settings / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        '{"fetchNews": "false"}')
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "cfg"), JUPYTER_RUNTIME_DIR=str(tmp_path / "rt"),
               JUPYTERLAB_SETTINGS_DIR=str(settings))
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            if status(f"{base}/api/status?token={token}") == 200:
                break
            time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start within 60 s")
        yield base, token
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_server_refuses_requests_without_the_token(lab):
    base, token = lab
    assert status(f"{base}/api/status") == 403
    assert status(f"{base}/api/status?token=wrong") == 403
    assert status(f"{base}/api/status?token={token}") == 200


def test_a_notebook_runs_through_the_ui(lab):
    from playwright.sync_api import sync_playwright

    base, token = lab
    shots = ROOT / "results" / "browser"
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{base}/lab/tree/{NOTEBOOK}?token={token}")
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
        dialog = page.locator(".jp-Dialog button", has_text="Select")  # JupyterLab may ask which kernel
        try:
            dialog.first.click(timeout=10_000)
        except Exception:  # no dialog this time
            pass
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        deadline = time.time() + 180
        while time.time() < deadline:  # every code cell numbered, none still running
            prompts = page.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts()
            if prompts and all(t.strip() not in ("[*]:", "[ ]:", "") for t in prompts):
                break
            time.sleep(1)
        else:
            page.screenshot(path=str(shots / "timeout.png"), full_page=True)
            pytest.fail("the notebook did not finish within 180 s")
        page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
        page.locator(".jp-CodeCell").last.scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "sosp93_maeda.png"), full_page=False)
        errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']",
                              has_text="Traceback").count()
        images = page.locator(".jp-OutputArea-output img").count()
        text = page.locator(".jp-Notebook").inner_text()
        browser.close()
    assert errors == 0
    assert images >= 3
    assert "sosp93_maeda: partly replicated" in text or "sosp93_maeda: replicated" in text


def test_the_results_page_renders_every_figure(lab_root, tmp_path):
    """results/index.html, opened from the file system in Chromium: verdicts, counts, every thumbnail drawn."""
    from playwright.sync_api import sync_playwright

    from pysim.reproduce import reproduce

    out = tmp_path / "results"
    statuses, card = reproduce(["zz99_demo", "zz98_raises"], quick=True, out=out, timeout=120, progress=False)
    shots = ROOT / "results" / "browser"
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.goto((out / "index.html").as_uri())
        page.wait_for_load_state("load")
        images = page.locator("img").count()
        drawn = page.evaluate("Array.from(document.images).map(i => i.complete && i.naturalWidth > 0)")
        text = page.locator("body").inner_text()
        hrefs = page.evaluate("Array.from(document.links).map(a => a.getAttribute('href'))")
        page.screenshot(path=str(shots / "results_page.png"), full_page=True)
        browser.close()
    assert images >= 1 and all(drawn)
    assert "partly replicated" in text and "predictions within tolerance" in text
    assert "notebook FAILED" in text  # the failing notebook is reported, not hidden
    assert "zz99_demo/zz99_demo.html" in hrefs and not any(h.startswith(("http:", "https:")) for h in hrefs)
