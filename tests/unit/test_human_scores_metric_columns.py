"""files/human_scores.py's ``metric_columns`` (issue 44): other metrics' score columns are read as human scores are;
a bad cell (text, empty, not finite, a decimal comma) lists its row and leaves it out for every metric, never 0; a
column that is missing, the human-score or a text column, or holds no number, is refused as a whole with a warning;
the wide layout says it does not read them."""

from __future__ import annotations

from bertscore_viz.files.human_scores import parse_human_scores

CSV = """system,candidate,reference,human,comet,ter,label
a,one,ref one,0.5,0.81,12,x
b,two,ref two,0.1,nan,10,y
a,three,ref three,0.7,,9,z
b,four,ref four,0.2,"0,4",8,w
a,five,ref five,0.9,0.93,7,v
b,six,ref six,0.3,0.55,inf,u
a,seven,ref seven,0.6,0.70,5,t
"""


def test_bad_cells_leave_their_rows_out_for_every_metric_and_are_listed():
    rated = parse_human_scores(CSV.encode(), "r.csv", metric_columns=["comet", "ter"])
    assert rated.candidates == ["one", "five", "seven"]
    assert rated.metrics == {"comet": [0.81, 0.93, 0.70], "ter": [12.0, 7.0, 5.0]}
    listed = {p.row: (p.column, p.problem) for p in rated.errors}
    assert sorted(listed) == [3, 4, 5, 7]
    assert listed[3][0] == "comet" and "not a finite number" in listed[3][1]
    assert listed[4][0] == "comet" and "is empty" in listed[4][1]
    assert "decimal comma" in listed[5][1] and listed[7][0] == "ter"
    assert all("left out for every metric" in p for _, p in listed.values())


def test_unusable_columns_are_refused_as_a_whole():
    rated = parse_human_scores(CSV.encode(), "r.csv", metric_columns=["label", "nope", "human", "candidate"])
    assert rated.metrics == {} and len(rated) == 7 and not rated.errors
    said = {p.column: p.problem for p in rated.problems if p.severity == "warning"}
    assert "holds no number" in said["label"] and "has no column" in said["nope"]
    assert "human-score column" in said["human"] and "text column" in said["candidate"]


def test_without_metric_columns_nothing_changes_and_wide_says_it_does_not_read_them():
    assert parse_human_scores(CSV.encode(), "r.csv").metrics == {}
    wide = "segment_id,reference,A,human_A,B,human_B,comet\n1,r one,a one,0.1,b one,0.2,0.3\n" \
           "2,r two,a two,0.4,b two,0.5,0.6\n"
    rated = parse_human_scores(wide.encode(), "w.csv", metric_columns=["comet"])
    assert rated.layout == "wide" and rated.metrics == {}
    assert any("wide" in p.problem for p in rated.problems if p.severity == "warning")
