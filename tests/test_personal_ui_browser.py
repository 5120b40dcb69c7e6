"""The local page, in a real browser: ``funes-py ui`` started as a process on a memory indexed from a small Claude
Code history, Debian's chromium driven headless through selenium. Search a fact -> the hit is listed -> its
conversation opens with the hit turn highlighted and in view -> forget it (confirm page, confirm) -> the
same search finds nothing. A screenshot of each step lands in tests/artifacts/ui/."""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from ui_helpers import FACT, FACT_QUERY, FACT_SESSION, build_memory, fact_turn_uuid, running_ui

pytestmark = pytest.mark.models

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
SHOTS = Path(__file__).parent / "artifacts" / "ui"


@pytest.fixture
def browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    from selenium.webdriver.chrome.service import Service

    for tool in (CHROMIUM, CHROMEDRIVER):
        if not Path(tool).exists():
            pytest.skip(f"{tool} is not installed (apt-get install chromium chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(options=opts, service=Service(CHROMEDRIVER))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _shot(driver, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    assert driver.save_screenshot(str(SHOTS / f"{name}.png"))


def _follow(driver, element) -> None:
    """Clicks ``element`` and waits for the next page to replace this one."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    page = driver.find_element(By.TAG_NAME, "html")
    element.click()
    WebDriverWait(driver, 60).until(lambda _: _gone(page))
    WebDriverWait(driver, 60).until(lambda d: d.execute_script("return document.readyState") == "complete")


def _gone(element) -> bool:
    """Whether ``element`` no longer belongs to the page. Selenium's ``staleness_of`` expects a stale-element
    error only; chromedriver sometimes answers a node of the page being replaced with another error ("Node
    with given id does not belong to the document", CI 2026-12-04), which means the same."""
    from selenium.common.exceptions import WebDriverException

    try:
        element.is_enabled()
    except WebDriverException:  # StaleElementReferenceException is one
        return True
    return False


def _search(driver, query: str) -> None:
    from selenium.webdriver.common.by import By

    box = driver.find_element(By.NAME, "q")
    box.clear()
    box.send_keys(query)
    _follow(driver, driver.find_element(By.CSS_SELECTOR, "form.search button"))


def test_search_open_forget_and_search_again(tmp_path, browser):
    shutil.rmtree(SHOTS, ignore_errors=True)
    home = build_memory(tmp_path)
    with running_ui(home) as base:
        try:
            _walk(browser, base)
        except Exception:  # the page as it stood, for whoever reads the failure
            _shot(browser, "99-failure")
            (SHOTS / "99-failure.html").write_text(browser.page_source, encoding="utf-8")
            raise


def _walk(browser, base: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(base + "/")
    _shot(browser, "01-search-page")

    _search(browser, FACT_QUERY)
    hits = browser.find_elements(By.CSS_SELECTOR, "#hits .hit")
    assert hits, browser.page_source[-2000:]
    # the fact is listed (among the top hits: two passages close in score may swap under another thread count)
    listed = [h for h in hits[:3] if "third rain barrel" in h.find_element(By.CSS_SELECTOR, ".text").text]
    assert listed, [h.text[:200] for h in hits]
    first = listed[0]
    marked = {m.text.lower() for m in first.find_elements(By.TAG_NAME, "mark")}
    assert {"spare", "key", "allotment", "shed"} <= marked
    assert "/home/ana/projects/garden" in first.text and "UTC" in first.text
    _shot(browser, "02-hit-listed")

    _follow(browser, first.find_element(By.CSS_SELECTOR, "a.session"))
    assert f"/c/{FACT_SESSION}" in browser.current_url
    marked_turn = browser.find_element(By.CSS_SELECTOR, ".turn.highlight")
    assert marked_turn.get_attribute("id") == f"t-{fact_turn_uuid()}"
    assert FACT in marked_turn.text
    assert len(browser.find_elements(By.CSS_SELECTOR, ".turn")) == 4
    in_view = browser.execute_script(
        "const r = arguments[0].getBoundingClientRect(); return r.top >= 0 && r.top < window.innerHeight;", marked_turn
    )
    assert in_view
    _shot(browser, "03-conversation-hit-highlighted")

    _follow(browser, browser.find_element(By.ID, "forget"))
    assert urlsplit(browser.current_url).path == f"/c/{FACT_SESSION}/forget"  # a GET form adds a bare "?"
    assert "Forget this conversation?" in browser.page_source and "4 turns" in browser.page_source
    _shot(browser, "04-forget-confirm")

    _follow(browser, browser.find_element(By.ID, "confirm"))
    assert browser.find_elements(By.ID, "forgotten"), browser.page_source[-1500:]
    notice = browser.find_element(By.ID, "forgotten")
    assert FACT_SESSION in notice.text
    _shot(browser, "05-forgotten-notice")

    _search(browser, FACT_QUERY)
    assert browser.find_elements(By.ID, "nothing"), browser.page_source[-2000:]
    assert "rain barrel" not in browser.page_source and FACT_SESSION not in browser.page_source
    _shot(browser, "06-search-again-nothing")

    browser.get(f"{base}/c/{FACT_SESSION}")
    assert "No such conversation" in browser.page_source
    browser.get(base + "/sessions")
    assert len(browser.find_elements(By.CSS_SELECTOR, "tbody tr")) == 2
    _shot(browser, "07-sessions")
