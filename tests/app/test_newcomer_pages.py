"""Issue 40 ("the newcomer's list") in Streamlit's AppTest: the token table (every row up to 30, the best match
with its position, raw and rescaled totals), calibration bands shown only where they apply, with their source, and
Compare's drill-down saying "side by side" only when A and B are drawn side by side.
"""

import csv
import io
import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from bertscore_viz import Scorer
from bertscore_viz.app.shared.explain_view import MAX_WIDTH, SIDE_BY_SIDE_WIDTH, table_height
from bertscore_viz.figures import plots
from bertscore_viz.files.upload import content_key

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 240
EX_CAND, EX_REF = "The cat sat on the mat.", "There is a cat sitting on the mat."
#: Two WMT16 de-en sentences (newstest2016) each side: about 95 words, a summary's length.
LONG_REF = ('"Not infrequently, too, many services provided by insurers are not used because the complexity of the '
            'insurance is so difficult to understand," the new manager, Jutta Weigand, who as head of the services '
            "division for old people's welfare is also responsible for the Antonistift and the Bürgerspital as well "
            'as for "Amadeus" outpatient services, explained. The group based in Palo Alto, California, which '
            "initially grew through its printer sales, is currently splitting its business: this year the computer "
            "and printer side will be combined in a new company.")
LONG_MT = ('"Also, not infrequently, be taken many benefits of the funds, because of the complexity of the insurance '
           'is poorly understood," explained the new house mistress Jutta Weigand, the head of the Business division '
           'old-age assistance is also available for the Antoni pen and the civic hospital as well as for the '
           'outpatient service "Amadeus". The printers group growing up in Palo Alto, California is currently '
           "dividing: The computer and printer business this year is going to be bundled into a new company.")
BANDS = "Bands from WMT16 DA newstest2016 translations into English, sentences of 6-40 words"


def _run(**state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in state.items():
        at.session_state[k] = v
    return at.run()


def _type(at: AppTest, cand: str, ref: str) -> AppTest:
    at.text_area(key="inspect_candidate").input(cand)
    at.text_area(key="inspect_reference_0").input(ref)
    at.run()
    assert not at.exception, at.exception
    return at


def _texts(at) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "warning")
                     for e in getattr(at, kind)).replace("\\", "")


def test_the_token_table_shows_every_row_positions_and_raw_and_rescaled_totals():
    at = _type(_run(inspect_view="Token table", rescale=True), EX_CAND, EX_REF)
    pair = Scorer(rescale_with_baseline=True).explain(EX_CAND, EX_REF)
    text = _texts(at)
    assert (f"contributions add up to raw P = {pair.precision:.4f}; rescaled with the baseline: "
            f"{pair.rescaled[0]:.4f}") in text
    assert (f"contributions add up to raw R = {pair.recall:.4f}; rescaled with the baseline: "
            f"{pair.rescaled[1]:.4f}") in text
    tables = [t.value for t in at.dataframe if "best match" in t.value.columns]
    assert len(tables) == 2
    for frame in tables:
        assert all(m.endswith(")") and " (#" in m for m in frame["best match"])
        assert table_height(len(frame)) >= 35 * (len(frame) + 1)  # tall enough for every row
    assert table_height(60) == table_height(30) > 35 * 31 > 400  # 30 rows (the old one: ~10, 400 px), then scrolls
    assert "cat (#4)" in tables[0]["best match"].tolist()


def test_inspect_does_not_place_long_texts_on_the_ladder_and_names_the_bands_source():
    at = _type(_run(), EX_CAND, EX_REF)
    text = _texts(at)
    assert "stands:" in text and BANDS in text
    at = _type(at, LONG_MT, LONG_REF)
    text = _texts(at)
    words = (len(LONG_MT.split()) + len(LONG_REF.split())) / 2
    assert f"Not placed on the calibration ladder: these texts average {words:,.0f} words" in text
    assert "sentences of 6-40 words and do not apply" in text
    assert "stands:" not in text and "bottom third" not in text


def test_compare_does_not_place_a_summary_upload_and_names_the_bands_source():
    head = "reference,short,wordy\n"
    rows = "".join(f'"{LONG_REF}","{LONG_MT.replace(chr(34), "")}","{LONG_MT.replace(chr(34), "")} Indeed."\n'
                   .replace('"Not', "Not").replace('understand,"', "understand,").replace('"Amadeus"', "Amadeus")
                   for _ in range(3))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page(str(ROOT / "bertscore_viz" / "app" / "app_pages" / "compare" / "page.py"))
    at.session_state["compare_input"] = {"name": "summaries.csv", "data": (head + rows).encode("utf-8")}
    at.run()
    assert not at.exception, at.exception
    text = _texts(at)
    assert "Not placed on the calibration ladder: the texts of this upload have a median length of" in text
    assert "do not apply" in text and "On the calibration ladder:" not in text
    assert not any("Above random pairs (%)" in t.value.columns for t in at.dataframe)
    at.button(key="cmp_load_example").click().run()  # sentences: placed, with the bands' source
    assert not at.exception, at.exception
    text = _texts(at)
    assert "On the calibration ladder:" in text and BANDS in text


#: One short segment (each heatmap fits half the page) and one long one (the WMT16 pair above: it does not).
SHORT = ("There is a cat sitting on the mat.", "The cat sat on the mat.", "A cat was on a mat.")
LONG = (LONG_REF, LONG_MT, LONG_MT.replace("Also, ", ""))


def _drill(at: AppTest, fkey: str, segment: int) -> tuple[list[str], list]:
    """Open segment ``segment`` in the drill-down: its captions, and each column of the page with what is in it."""
    at.session_state["cmp_tab"] = "Drill-down"
    at.session_state[f"cmp_drill_seg_{fkey}"] = segment
    at.run()
    assert not at.exception, at.exception
    return [str(c.value) for c in at.caption], list(at.columns)


def _widths(block) -> list[int]:
    """The pixel width of every Plotly figure drawn in ``block``."""
    return [json.loads(chart.proto.spec)["layout"]["width"] for chart in block.get("plotly_chart")]


def _holding(columns: list, tag: str) -> list:
    """The columns holding the heading of side ``tag`` (``"**A: tidy**"``) of the drill-down."""
    return [c for c in columns if any(str(m.value).startswith(f"**{tag}: ") for m in c.markdown)]


def test_the_drill_down_says_side_by_side_only_when_a_and_b_are_side_by_side():
    for ref, a, b in (SHORT, LONG):  # the premise: short fits half the page at 16 px cells, long does not
        fits = [not plots.needs_overview(Scorer().explain(c, ref), max_width=SIDE_BY_SIDE_WIDTH) for c in (a, b)]
        assert fits == ([True, True] if ref == SHORT[0] else [False, False])
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["segment_id", "reference", "tidy", "loose"])
    w.writerows([["short", *SHORT], ["long", *LONG]])
    data = buf.getvalue().encode("utf-8")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page(str(ROOT / "bertscore_viz" / "app" / "app_pages" / "compare" / "page.py"))
    at.session_state["compare_input"] = {"name": "pairs.csv", "data": data, "origin": "upload"}
    at.session_state["cmp_tab"] = "Segments"
    at.run()
    assert not at.exception, at.exception
    assert any("A and B side by side when both heatmaps fit half the page, else A above B" in str(c.value)
               for c in at.caption)
    fkey = content_key(data)

    captions, columns = _drill(at, fkey, 0)  # short: two columns, each heatmap within half the page
    assert "A and B side by side." in captions and not any(c.startswith("A above B") for c in captions)
    (col_a,), (col_b,) = _holding(columns, "A"), _holding(columns, "B")
    assert col_a is not col_b
    for col in (col_a, col_b):
        assert _widths(col) and all(width <= SIDE_BY_SIDE_WIDTH for width in _widths(col)), _widths(col)

    captions, columns = _drill(at, fkey, 1)  # long: one above the other, at the page's full width
    assert any(c.startswith("A above B") for c in captions), captions
    assert not any("side by side" in c for c in captions), captions
    assert not _holding(columns, "A") and not _holding(columns, "B")  # in no column: stacked
    widths = _widths(at)
    assert widths and max(widths) > SIDE_BY_SIDE_WIDTH and all(width <= MAX_WIDTH for width in widths), widths
    headings = [str(m.value) for m in at.markdown if str(m.value).startswith(("**A: ", "**B: "))]
    assert [h[:5] for h in headings] == ["**A: ", "**B: "]  # A above B
