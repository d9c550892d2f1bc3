"""Document context in a real server and Debian's Chromium (issue 45): on Inspect, a pair typed with the sentences
before it shows the context greyed beside the pair's own text, the engine's F1 with the context and alone, and the
tokens whose match the context moved; no exception, no page error; a screenshot is kept."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from bertscore_viz import Scorer

from .conftest import ARTIFACTS, fill

CAND = "He cleaned it all weekend."
REF = "She cleaned it all weekend."
CONTEXT = ["Marta found an old bicycle in the barn.", "Its frame was rusty."]


def test_inspect_with_document_context_in_the_browser(page, app_url):
    page.set_viewport_size({"width": 1400, "height": 1600})
    page.goto(app_url)
    nav = page.get_by_role("link", name=re.compile("Inspect"))
    expect(nav.first).to_be_visible(timeout=90_000)
    nav.first.click()
    expect(page.get_by_role("textbox", name="Candidate", exact=True)).to_be_visible(timeout=60_000)
    fill(page, "Candidate", CAND)
    fill(page, "Reference", REF)
    page.get_by_text("Document context (optional)").click()
    box = page.get_by_role("textbox", name="Sentences before the reference")
    expect(box).to_be_visible(timeout=30_000)
    box.fill("\n".join(CONTEXT))
    box.press("Control+Enter")
    want = Scorer(context=2).score(["a", "b", CAND], CONTEXT + [REF], doc_ids=["d"] * 3).f1[2]
    alone = Scorer().score([CAND], [REF]).f1[0]
    expect(page.get_by_text(re.compile(rf"With the context: F1 {want:.4f} \(raw\); alone: {alone:.4f}"))
           ).to_be_visible(timeout=90_000)
    greyed = page.locator("[data-testid='stMarkdownContainer'] span",
                          has_text="marta found an old bicycle in the barn").last
    expect(greyed).to_be_visible()
    expect(page.get_by_text(re.compile(r"Signature: .*_ctx:2-ref")).first).to_be_visible()
    colour = greyed.evaluate("e => getComputedStyle(e).color")
    body = page.locator("h1").first.evaluate("e => getComputedStyle(e).color")
    assert colour != body  # drawn greyed, not as the pair's own text
    expect(page.locator("[data-testid='stException']")).to_have_count(0)
    page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / "inspect_context.png"), full_page=True)
    assert not page.errors, page.errors
