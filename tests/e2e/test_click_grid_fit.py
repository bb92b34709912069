"""The whole item fits the screen, on a desktop and on a phone, for every grid size and output kind."""
from __future__ import annotations

import pytest

from .grid_harness import DESKTOP, PHONE, harness, open_grid  # noqa: F401  (fixture)

SIZES = [(4, 4), (5, 5), (6, 6), (7, 7), (8, 8), (8, 4), (4, 8)]
MODES = ["count", "click", "click_submit"]

MEASURE = """() => {
  const box = s => { const e = document.querySelector(s); if (!e) return null;
                     const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  const img = document.querySelector('.rg-stage img').getBoundingClientRect();
  const nat = document.querySelector('.rg-stage img');
  const misaligned = [];
  for (const b of document.querySelectorAll('.rg-cell')) {
    // the saved box of this cell, scaled to the image as shown
    const r = b.getBoundingClientRect();
    misaligned.push([r.left - img.left, r.top - img.top, r.right - img.left, r.bottom - img.top,
                     img.width / nat.naturalWidth, img.height / nat.naturalHeight]);
  }
  const scrollers = [...document.querySelectorAll('*')].filter(e => e.scrollHeight > e.clientHeight + 1
      && ['auto', 'scroll'].includes(getComputedStyle(e).overflowY)).map(e => e.className);
  return {w: innerWidth, h: innerHeight, doc: document.scrollingElement.scrollHeight,
          docw: document.scrollingElement.scrollWidth, scrollers, cells: misaligned,
          stage: box('.rg-stage'), instruction: box('.rg-instruction'), submit: box('.rg-submit'),
          count: box('.rg-count-input'), undo: box('.rg-undo')};
}"""


def check_fits(page, mode: str, cell_boxes: list[list[int]] | None = None) -> dict:
    m = page.evaluate(MEASURE)
    for part in ("stage", "instruction", "submit") + (("count",) if mode != "click" else ("undo",)):
        x0, y0, x1, y1 = m[part]
        assert 0 <= x0 and 0 <= y0 and x1 <= m["w"] + 0.5 and y1 <= m["h"] + 0.5, (part, m[part], m["w"], m["h"])
    assert m["doc"] <= m["h"] and m["docw"] <= m["w"], m  # the document itself does not scroll
    assert m["scrollers"] == [], m["scrollers"]  # nor does any inner container
    if cell_boxes is not None:  # every button exactly over its saved cell box, at this scale
        assert len(m["cells"]) == len(cell_boxes)
        for (x0, y0, x1, y1, sx, sy), (_, _, bx0, by0, bx1, by1) in zip(m["cells"], cell_boxes):
            assert abs(x0 - bx0 * sx) < 0.6 and abs(y0 - by0 * sy) < 0.6, (x0, y0, bx0 * sx, by0 * sy)
            assert abs(x1 - bx1 * sx) < 0.6 and abs(y1 - by1 * sy) < 0.6, (x1, y1, bx1 * sx, by1 * sy)
    return m


@pytest.mark.parametrize("device", ["desktop", "phone"])
def test_every_grid_size_fits_without_scrolling(browser, harness, small_dataset, device):  # noqa: F811
    from rose_core.benchmarks.rose.render import layout_for

    ctx = browser.new_context(**(DESKTOP if device == "desktop" else PHONE))
    page = ctx.new_page()
    page.set_default_timeout(20_000)
    try:
        for rows, cols in SIZES:
            boxes = layout_for(rows, cols).cell_boxes()
            for mode in MODES:
                open_grid(page, harness, rows=rows, cols=cols, mode=mode, view=f"fit-{device}-{rows}x{cols}-{mode}",
                          progress="Item 12 of 20")
                m = check_fits(page, mode, boxes if mode != "count" else None)
                if mode != "count":
                    assert len(m["cells"]) == rows * cols
                assert page.locator(".rg-progress").inner_text() == "Item 12 of 20"
    finally:
        ctx.close()


def test_refits_on_resize_and_rotation(browser, harness, small_dataset):  # noqa: F811
    from rose_core.benchmarks.rose.render import layout_for

    boxes = layout_for(8, 8).cell_boxes()
    ctx = browser.new_context(**PHONE)
    page = ctx.new_page()
    page.set_default_timeout(20_000)
    try:
        open_grid(page, harness, rows=8, cols=8, mode="click_submit", view="fit-rotate")
        portrait = check_fits(page, "click_submit", boxes)
        page.set_viewport_size({"width": 844, "height": 390})  # landscape: height is now the limit
        page.wait_for_function("() => document.querySelector('.rg-bar').getBoundingClientRect().bottom <= innerHeight")
        landscape = check_fits(page, "click_submit", boxes)
        page.get_by_role("button", name="row 8 column 8", exact=True).tap()  # a finger reaches the last cell
        assert page.get_by_role("button", name="row 8 column 8", exact=True).get_attribute("aria-pressed") == "true"
        assert landscape["stage"][3] - landscape["stage"][1] < portrait["stage"][3] - portrait["stage"][1]
        desk = browser.new_context(**DESKTOP)
        dp = desk.new_page()
        open_grid(dp, harness, rows=8, cols=4, mode="click", view="fit-shrink")
        dp.set_viewport_size({"width": 1280, "height": 560})
        dp.wait_for_function("() => document.querySelector('.rg-bar').getBoundingClientRect().bottom <= innerHeight")
        check_fits(dp, "click", layout_for(8, 4).cell_boxes())
        desk.close()
    finally:
        ctx.close()
