"""JupyterLab in Debian's Chromium, driven by Playwright: what the browser tests share.

Needs Chromium at /usr/bin/chromium (``apt-get install -y chromium``; Playwright cannot
download its own browser here) and the built lab extension in ``ipymemory/labextension``
(``pip install -e .`` builds it). Either missing is a failure, not a skip.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "ARTIFACTS",
    "BUILT_EXTENSION",
    "CHROMIUM",
    "OUTPUTS",
    "PANEL",
    "POLL_SLACK",
    "REPO",
    "RUN_TIMEOUT",
    "UI_TIMEOUT",
    "chromium",
    "lab_home",
    "open_page",
    "open_panel",
    "open_review",
    "require_prerequisites",
    "review_ticks",
    "run_all_cells",
    "shot",
    "wait_kernel_idle",
]

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = REPO / "tests" / "artifacts"
BUILT_EXTENSION = REPO / "ipymemory" / "labextension"
LABEXTENSION_NAME = "@ipymemory/labextension"
CHROMIUM = Path("/usr/bin/chromium")

# Bounds for UI waits (milliseconds); whole-notebook execution gets the long one.
UI_TIMEOUT = 30_000
RUN_TIMEOUT = 150_000
POLL_SLACK = 12_000  # the panel polls every 3 s

OUTPUTS = ".jp-OutputArea-output"
PANEL = "#ipymemory-panel"

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def require_prerequisites() -> None:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium")
    if not (BUILT_EXTENSION / "package.json").exists():
        pytest.fail(
            f"the lab extension is not built in {BUILT_EXTENSION}: "
            "pip install -e . (or: cd labextension && npm install && npm run build:prod)"
        )


def lab_home(tmp_path: Path) -> Path:
    """Isolated Jupyter dirs: this checkout's built extension, quiet and unvirtualised lab."""
    home = tmp_path / "home"
    extensions = home / "data" / "labextensions" / LABEXTENSION_NAME
    extensions.parent.mkdir(parents=True)
    extensions.symlink_to(BUILT_EXTENSION, target_is_directory=True)
    settings = {
        "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
        "@jupyterlab/apputils-extension/notification": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
    }
    for plugin, values in settings.items():
        path = home / "lab-settings" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    return home


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (Playwright's ``Browser``), closed on exit."""
    require_prerequisites()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


def open_page(browser: Any, lab: Any, path: str, errors: list[str]) -> Any:
    page = browser.new_page(viewport={"width": 1500, "height": 1000})
    page.set_default_timeout(UI_TIMEOUT)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{lab.url}lab/tree/{path}?token={lab.token}")
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
    return page


def wait_kernel_idle(page: Any) -> None:
    """The notebook's kernel is connected and idle (menu commands are enabled then)."""
    page.wait_for_function(
        """() => {
            const text = document.querySelector('.jp-StatusBar-Widget')?.textContent ?? '';
            return text.includes('| Idle') && !text.includes('No Kernel');
        }""",
        timeout=60_000,
    )


def run_all_cells(page: Any) -> None:
    wait_kernel_idle(page)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
    # Every code cell shows an execution count once the whole queue has run.
    page.wait_for_function(
        """() => {
            const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')];
            return prompts.length > 0 && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
        }""",
        timeout=RUN_TIMEOUT,
    )


def open_panel(page: Any) -> Any:
    page.locator('.lm-TabBar-tab[data-id="ipymemory-panel"]').click()
    panel = page.locator(PANEL)
    panel.wait_for(state="visible")
    return panel


def open_review(panel: Any, batch: str) -> Any:
    """Click the Review button of pending batch ``batch`` in the panel; its review,
    once loaded."""
    row = panel.locator(f'.jp-ipymemory-pending-batch[data-batch="{batch}"]')
    row.locator(".jp-ipymemory-review-toggle").click()
    review = row.locator('.jp-ipymemory-review[data-state="ready"]')
    review.wait_for(state="visible")
    return review


def review_ticks(review: Any) -> dict[str, bool]:
    """Item name -> whether its tick is set, in the review's order."""
    return {
        row.get_attribute("data-name"): row.locator("input").is_checked()
        for row in review.locator(".jp-ipymemory-review-item").all()
    }


def shot(page: Any, case: str, step: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"lab-{case}-{step}.png"), full_page=True)
