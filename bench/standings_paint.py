"""The tournament standings page in a real browser: milliseconds from navigation to the first
table drawn, and to the ratings drawn, for a results database of a finished run (the demo's:
192 matches). Headless Chromium through Playwright; figures printed, never asserted.

Usage: python -m bench.standings_paint DATA [--tournament 1] [--times 3]

DATA is a data directory (``make run``'s croupier-data); no referee is needed: the viewer is
started against a port nobody answers on. Each time is a fresh page in a fresh browser
context (nothing cached in the browser); the first load is printed apart: it is the one that
fits the ratings (later loads find them fitted, while the matches have not changed).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import statistics
from pathlib import Path

from croupier.clients.web.app import start_web


async def measure(data: Path, tournament: int, times: int) -> None:
    from playwright.async_api import async_playwright

    chromium = shutil.which("chromium")
    if chromium is None:
        raise SystemExit("bench.standings_paint: needs chromium (apt-get install chromium)")
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        nobody = f"127.0.0.1:{free.getsockname()[1]}"
    viewer = await start_web(nobody, "127.0.0.1:0", data)
    address = f"{viewer.url}tournament/{tournament}"
    tables: list[float] = []
    ratings: list[float] = []
    try:
        async with async_playwright() as driver:
            browser = await driver.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            for attempt in range(times + 1):
                context = await browser.new_context()
                page = await context.new_page()
                await page.goto(address)
                await page.wait_for_selector("section.game table.list", timeout=120_000)
                painted = float(await page.evaluate("performance.now()"))
                await page.wait_for_selector("section.game table.list >> text=Elo", timeout=120_000)
                rated = float(await page.evaluate("performance.now()"))
                await context.close()
                if not attempt:
                    print(f"first load: first table drawn {painted:.0f} ms, ratings drawn {rated:.0f} ms")
                else:
                    tables.append(painted)
                    ratings.append(rated)
            await browser.close()
    finally:
        await viewer.stop()
    print(f"standings page of {data / 'results.db'} tournament {tournament}, {times} loads after it:")
    print(f"  first table drawn: median {statistics.median(tables):.0f} ms (each: {_list(tables)})")
    print(f"  ratings drawn:     median {statistics.median(ratings):.0f} ms (each: {_list(ratings)})")


def _list(values: list[float]) -> str:
    return ", ".join(f"{v:.0f}" for v in values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path)
    parser.add_argument("--tournament", type=int, default=1)
    parser.add_argument("--times", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(measure(args.data, args.tournament, args.times))


if __name__ == "__main__":
    main()
