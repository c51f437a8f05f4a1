"""What the browser tests share: an app started as its own server on a free local port, and
Debian's Chromium (``/usr/bin/chromium``, or ``$NAMESAKE_CHROMIUM``) driven headless by
Playwright; no browser is ever downloaded."""

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import CHROMIUM
from playwright.sync_api import sync_playwright

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STARTUP_SECONDS = 300


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class AppServer:
    """``python APP ARGS...`` serving on a free port of 127.0.0.1, its output kept in a log
    file in `folder`. The address reaches the app as gradio reads it (``GRADIO_SERVER_NAME``,
    ``GRADIO_SERVER_PORT``); `env` adds to the environment, `cwd` is where it runs."""

    def __init__(
        self,
        folder: Path,
        app: Path,
        *args: str,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log_path = folder / "app.log"
        environment = dict(
            os.environ,
            HF_HUB_OFFLINE="1",
            HF_DATASETS_OFFLINE="1",
            XDG_CACHE_HOME=str(folder / "cache"),
            GRADIO_SERVER_NAME="127.0.0.1",
            GRADIO_SERVER_PORT=str(self.port),
        )
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(app), *args],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment | (env or {}),
                cwd=cwd,
            )
        self._wait()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def _wait(self) -> None:
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"the app exited with {self.process.returncode}:\n{self.log()[-3000:]}")
            try:
                with urllib.request.urlopen(self.url, timeout=5) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(1)
        self.stop()
        pytest.fail(f"the app did not serve within {STARTUP_SECONDS}s:\n{self.log()[-3000:]}")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()


@contextlib.contextmanager
def headless_chromium():
    """Chromium, headless (conftest.py stops the run first when it is missing)."""
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        try:
            yield chromium
        finally:
            chromium.close()
