"""Open the built book in headless Chromium with the network off, as a reader would.

The distribution's Chromium (Debian's ``chromium`` package) is driven by Playwright; no
browser is ever downloaded. The site is served from ``127.0.0.1`` on a free port, every other
request is refused at two levels (the browser resolves no other host name, and a route aborts
and records any request that does not go to the local server), and the browser starts from a
fresh profile with its background services (updates, sync, QUIC) switched off.

:class:`BrowserSession` opens one page after another in one browser and returns, per page,
what a reader would have seen go wrong: console errors and uncaught exceptions, requests that
failed or left the machine, formulas MathJax did not typeset or reported as erroneous, raw
TeX left in the text, images that did not load, listings and display equations wider than
their box, the download menu's entries and the notebook it serves.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: The switches that keep Chromium quiet and off the network besides headless mode.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Every host name but the local address fails to resolve: nothing can leave the machine
    # even if a request slipped past the route below.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
)

#: TeX that MathJax should have replaced: any dollar sign (a formula that Markdown did not
#: turn into one, as when a wrapped line inside it starts with "- " and opens a list), the
#: delimiters Sphinx writes, environments, and any control sequence such as ``\frac``.
RAW_TEX = re.compile(r"\$|\\[()\[\]]|\\begin\{|\\end\{|\\[A-Za-z]{2,}")

#: Text outside code (listings, outputs, inline code) and outside MathJax's own output.
VISIBLE_PROSE = """() => {
  const skip = "pre, code, script, style, textarea, mjx-container, .highlight";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) =>
      node.parentElement && node.parentElement.closest(skip)
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
  });
  const pieces = [];
  while (walker.nextNode()) pieces.push(walker.currentNode.nodeValue);
  return pieces.join(" ");
}"""

#: Waits for MathJax's first typesetting pass where the page loads MathJax, then counts the
#: formulas Sphinx marked (``.math``), those holding MathJax output and MathJax's errors: a
#: formula it cannot parse becomes an error message (``merror``), an undefined macro its name
#: in red (``mtext`` with ``mathcolor="red"``, MathJax's ``noundefined`` extension).
MATH_STATE = """async () => {
  if (window.MathJax && MathJax.startup === undefined) {
    // The configuration object is there, the library not yet: wait for it to start.
    for (let i = 0; i < 600 && MathJax.startup === undefined; i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const loaded = !!(window.MathJax && MathJax.startup && MathJax.startup.promise);
  if (loaded) await MathJax.startup.promise;
  const formulas = Array.from(document.querySelectorAll(".math"));
  return {
    loaded: loaded,
    formulas: formulas.length,
    containers: document.querySelectorAll("mjx-container").length,
    untypeset: formulas.filter((f) => !f.querySelector("mjx-container"))
      .map((f) => f.textContent.trim().slice(0, 120)),
    errors: Array.from(document.querySelectorAll("mjx-merror"))
      .map((e) => e.getAttribute("data-mjx-error") || e.textContent.slice(0, 120))
      .concat(Array.from(document.querySelectorAll('mjx-assistive-mml mtext[mathcolor="red"]'))
        .map((e) => `undefined macro ${e.textContent}`)),
  };
}"""

#: Loads every image now (lazy ones included) and lists those without pixels.
BROKEN_IMAGES = """async () => {
  const images = Array.from(document.images);
  for (const image of images) image.loading = "eager";
  await Promise.all(images.map((image) => image.decode().catch(() => null)));
  return {
    count: images.length,
    broken: images.filter((image) => !image.complete || image.naturalWidth === 0)
      .map((image) => image.currentSrc || image.src),
  };
}"""


#: The library listings (``{listing}``, whose code block has the class ``library-listing``) and
#: the display equations that do not fit their box at the window's width. Each box scrolls
#: sideways when its content is wider (a listing's ``pre`` and, in the theme, a display's
#: ``mjx-container``), so a box whose scrolling width exceeds its visible width is one a reader
#: would have to scroll; a pixel is allowed for the rounding of fractional widths.
WIDE_BLOCKS = """() => {
  const wide = [];
  const describe = (box) => `${box.scrollWidth} px of content in a ${box.clientWidth} px box`;
  for (const pre of document.querySelectorAll(".library-listing pre")) {
    if (pre.scrollWidth > pre.clientWidth + 1) {
      const first = pre.textContent.split("\\n").find((line) => line.trim()) || "";
      wide.push(`listing "${first.trim().slice(0, 60)}": ${describe(pre)}`);
    }
  }
  for (const formula of document.querySelectorAll("mjx-container[display]")) {
    if (formula.scrollWidth > formula.clientWidth + 1) {
      const math = formula.closest(".math");
      const name = math && math.id ? math.id.replace(/^equation-/, "")
        : (formula.querySelector("mjx-assistive-mml") || formula).textContent.slice(0, 60);
      wide.push(`equation ${name}: ${describe(formula)}`);
    }
  }
  return wide;
}"""


def find_chromium() -> Path | None:
    """The distribution's Chromium, if installed."""
    found = shutil.which("chromium")
    return Path(found) if found else None


def unavailable() -> str | None:
    """Why the browser tests cannot run here, or ``None`` if they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (it is in the [test] extra)"
    if find_chromium() is None:
        return "no chromium on PATH (Debian/Ubuntu: apt-get install chromium)"
    return None


@dataclass
class PageReport:
    """What went wrong on one page, as seen in the browser (empty lists when nothing did)."""

    url: str
    console_errors: list[str] = field(default_factory=list)
    #: Requests that failed, answered with an HTTP error, or were blocked for leaving the site.
    failed_requests: list[str] = field(default_factory=list)
    #: MathJax's state after its first pass: see ``MATH_STATE``.
    math: dict = field(default_factory=dict)
    raw_tex: list[str] = field(default_factory=list)
    images: dict = field(default_factory=dict)
    #: Listings and display equations wider than their box: see ``WIDE_BLOCKS``.
    wide_blocks: list[str] = field(default_factory=list)
    downloads: dict[str, str] = field(default_factory=dict)
    #: The text the download menu's ``.ipynb`` entry serves, if it has one.
    notebook: str | None = None


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@contextlib.contextmanager
def serve(site: Path) -> Iterator[str]:
    """Serve ``site`` on 127.0.0.1 at a free port; yield the base URL (ending in ``/``)."""
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


#: Set (to anything) to keep whole-page screenshots instead of the first screen of each page.
#: A book page is 30,000 to 45,000 pixels tall, and its whole-page screenshot costs one to
#: two seconds of a two-core machine, nearly a minute over the book: ``make test`` keeps what
#: a reader sees on opening the page, a review of the rendering asks for the rest.
FULL_PAGE_SETTING = "RLFOUND_FULL_PAGE_SCREENSHOTS"


class BrowserSession:
    """One headless Chromium over the served site; :meth:`inspect` opens a page in it."""

    def __init__(self, context, base_url: str, screenshots: Path):
        self.context = context
        self.base_url = base_url
        self.screenshots = screenshots
        self.full_page = bool(os.environ.get(FULL_PAGE_SETTING))
        self._problems: list[str] = []
        context.route("**/*", self._only_local)
        context.on("requestfailed", self._request_failed)
        context.on("response", self._response)

    def _only_local(self, route):
        url = route.request.url
        if url.startswith(self.base_url):
            route.continue_()
        else:
            self._problems.append(f"blocked request to {url}")
            route.abort("blockedbyclient")

    def _request_failed(self, request):
        if request.url.startswith(self.base_url):
            self._problems.append(f"request failed: {request.url} ({request.failure})")

    def _response(self, response):
        if response.status >= 400:
            self._problems.append(f"HTTP {response.status}: {response.url}")

    def open(self, path: str):
        """Open ``path`` (relative to the site) in a fresh tab; return the page and its report.

        The report collects console errors, uncaught exceptions and failed or blocked
        requests while the tab is open.
        """
        page = self.context.new_page()
        report = PageReport(url=self.base_url + path)
        self._problems = report.failed_requests
        page.on(
            "console",
            lambda message: (
                report.console_errors.append(f"{message.text} ({message.location['url']})")
                if message.type == "error"
                else None
            ),
        )
        page.on("pageerror", lambda error: report.console_errors.append(f"uncaught: {error}"))
        page.goto(report.url, wait_until="load")
        return page, report

    def inspect(self, document: str) -> PageReport:
        """Load a book page, let MathJax typeset it, check it, and keep a screenshot (of the
        first screen, or of the whole page with :data:`FULL_PAGE_SETTING`)."""
        page, report = self.open(f"{document}.html")
        try:
            report.math = page.evaluate(MATH_STATE)
            report.images = page.evaluate(BROKEN_IMAGES)
            # After MathJax's pass (MATH_STATE waits for it): the formulas have their widths.
            report.wide_blocks = page.evaluate(WIDE_BLOCKS)
            prose = page.evaluate(VISIBLE_PROSE)
            report.raw_tex = sorted(
                {prose[max(0, m.start() - 30) : m.end() + 30] for m in RAW_TEX.finditer(prose)}
            )
            report.downloads = self.download_menu(page)
            if ".ipynb" in report.downloads:
                report.notebook = self.fetch_text(page, report.downloads[".ipynb"])
            page.wait_for_load_state("networkidle")
            target = self.screenshots / f"{document}.png"
            target.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(target), full_page=self.full_page)
        finally:
            page.close()
        return report

    @staticmethod
    def download_menu(page) -> dict[str, str]:
        """Open the page's download menu as a reader would; its entries' texts and links."""
        menu = page.locator(".dropdown-download-buttons")
        if menu.count() == 0:
            return {}
        menu.locator("button.dropdown-toggle").click()
        items = menu.locator(".dropdown-menu a, .dropdown-menu button")
        items.first.wait_for(state="visible")
        entries = {}
        for index in range(items.count()):
            item = items.nth(index)
            if item.is_visible():
                text = " ".join(item.inner_text().split())
                entries[text] = item.evaluate("(element) => element.href || ''")
        page.keyboard.press("Escape")
        return entries

    @staticmethod
    def fetch_text(page, url: str) -> str:
        """Fetch ``url`` from within ``page``, as a click on a download link would."""
        return page.evaluate(
            """async (url) => {
              const response = await fetch(url);
              if (!response.ok) throw new Error(`HTTP ${response.status} for ${url}`);
              return await response.text();
            }""",
            url,
        )


@contextlib.contextmanager
def open_site(site: Path, screenshots: Path) -> Iterator[BrowserSession]:
    """Serve ``site`` locally and open it in headless Chromium from a fresh profile."""
    from playwright.sync_api import sync_playwright

    with (
        serve(site) as base_url,
        tempfile.TemporaryDirectory(prefix="rlfound-chromium-") as profile,
        sync_playwright() as playwright,
    ):
        context = playwright.chromium.launch_persistent_context(
            profile,
            executable_path=str(find_chromium()),
            headless=True,
            args=list(CHROMIUM_ARGS),
            viewport={"width": 1280, "height": 900},
            # Screenshots at half resolution: pages are 30,000 to 45,000 pixels tall, and the
            # text stays readable at half the pixels while taking them costs half the time.
            device_scale_factor=0.5,
            service_workers="block",
        )
        # A loaded two-core CI machine takes several seconds for a long page; Playwright's
        # default of 30 s per step would make the test fail on load instead of on a fault.
        context.set_default_timeout(120_000)
        try:
            yield BrowserSession(context, base_url, screenshots)
        finally:
            context.close()
