"""A new user's first run on each Python: a fresh venv, `pip install -r requirements.txt`, every page served.

    python bench/fresh_install.py ~/.pyenv/versions/3.12.1/bin/python [more interpreters ...]

For each interpreter: a venv of its own in a temporary folder, the time `pip install -r requirements.txt`
takes (pip's cache as the machine has it: say whether it was warm), the venv's size on disk, then the app
started from that venv as the image starts it (`streamlit run streamlit_app.py`, headless, no file watcher),
timed until `/api/ready` says its warm-up has ended; then one browser-protocol visit to every page
(bench/streamlit_client.py: each must render its title with no exception) and one PNG export (the QKV page's
export panel, the file fetched as a browser fetches it). The server's resident memory (psutil) is read after the
warm-up, after the visits and after the export. The venv is deleted afterwards unless --keep.

It prints a table and asserts nothing beyond "every page rendered and the PNG came back"; deploy/README.md
quotes its figures.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.streamlit_client import ROOT, Session, free_port, memory, stop_tree
from lessons import COURSE
from ui.frame import glossary

PAGES = ["", *(lesson.url_path for lesson in COURSE), glossary.URL_PATH]
EXPORT = "Export the matrices on this page (CSV, PNG, SVG)"
MB = 1024 * 1024


def run(cmd: list[str], **kwargs) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, **kwargs)
    return time.perf_counter() - start


def size_mb(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink()) // MB


def get(url: str, timeout: float = 5) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, b""


def wait_ready(proc: subprocess.Popen, url: str, log: Path, timeout: float = 400) -> float:
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            if get(f"{url}/api/ready")[0] == 200:
                return time.monotonic() - start
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"not ready after {timeout} s:\n{log.read_text()[-3000:]}")


async def visit_every_page(url: str) -> None:
    for page in PAGES:
        session, render = await Session.open(url, page)
        await session.close()
        if render.exceptions or not render.title:
            raise RuntimeError(f"page {page or 'home'!r}: title {render.title!r}, exceptions {render.exceptions}")


async def export_png(url: str) -> int:
    session, first = await Session.open(url, "qkv")
    await session.set_panel(first, EXPORT, True)
    made = await session.press("make_png")
    path = made.downloads.get("Save PNG")
    status, body = get(url + path, timeout=60) if path else (0, b"")
    await session.close()
    if made.exceptions or status != 200 or not body.startswith(b"\x89PNG"):
        raise RuntimeError(f"no PNG: status {status}, exceptions {made.exceptions}")
    return len(body)


def measure(python: str, keep: bool) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="attention-lab-venv-"))
    venv = folder / "venv"
    out: dict = {"python": python}
    try:
        run([python, "-m", "venv", str(venv)])
        vpy = str(venv / ("Scripts" if os.name == "nt" else "bin") / "python")
        run([vpy, "-m", "pip", "install", "-q", "--upgrade", "pip"])
        out["install_s"] = run([vpy, "-m", "pip", "install", "-q", "-r", "requirements.txt"], cwd=ROOT)
        out["venv_mb"] = size_mb(venv)
        out["versions"] = subprocess.run(
            [vpy, "-c", "import platform, numpy, pandas, streamlit; print(platform.python_version(), "
             "'numpy', numpy.__version__, 'pandas', pandas.__version__, 'streamlit', streamlit.__version__)"],
            check=True, capture_output=True, text=True).stdout.strip()
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = folder / "server.log"
        with open(log, "wb") as log_file:
            proc = subprocess.Popen([vpy, "-m", "streamlit", "run", "streamlit_app.py", "--server.address",
                                     "127.0.0.1", "--server.port", str(port), "--server.headless", "true",
                                     "--server.fileWatcherType", "none"], cwd=ROOT, stdout=log_file,
                                    stderr=subprocess.STDOUT, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
                                    start_new_session=True)
        try:
            out["ready_s"] = wait_ready(proc, url, log)
            out["rss_warm_mb"] = memory(proc.pid)["rss"] / MB
            asyncio.run(visit_every_page(url))
            out["rss_pages_mb"] = memory(proc.pid)["rss"] / MB
            out["png_bytes"] = asyncio.run(export_png(url))
            mem = memory(proc.pid)
            out["rss_export_mb"], out["peak_mb"] = mem["rss"] / MB, mem.get("peak", 0) / MB
            if "Traceback" in log.read_text(errors="replace"):
                raise RuntimeError(f"a traceback in the server's log:\n{log.read_text()[-3000:]}")
        finally:
            stop_tree(proc)
    finally:
        if keep:
            print(f"kept {folder}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pythons", nargs="+", help="interpreters to make a venv with")
    ap.add_argument("--keep", action="store_true", help="keep each venv and the server's log")
    args = ap.parse_args()
    rows = [measure(python, args.keep) for python in args.pythons]
    print(f"| Python, what pip chose | install | venv | ready after | RSS warm | every page ({len(PAGES)}) "
          "| + a PNG export | peak |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['versions']} | {r['install_s']:.0f} s | {r['venv_mb']} MB | {r['ready_s']:.0f} s "
              f"| {r['rss_warm_mb']:.0f} MB | {r['rss_pages_mb']:.0f} MB | {r['rss_export_mb']:.0f} MB "
              f"| {r['peak_mb']:.0f} MB |")


if __name__ == "__main__":
    main()
