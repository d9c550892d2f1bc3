"""After every other browser test has used the app (this file runs last: pytest collects files in name order), the
server's log has no Streamlit warning with a stack trace (issue 23, item 11: a widget "created with a default value
but also had its value set via the Session State API", on every run after a page visit) and no exception."""

from .conftest import ARTIFACTS


def test_the_server_logged_no_warning_stack_or_exception(app_url):
    log = (ARTIFACTS / "streamlit-server.log").read_text(encoding="utf-8", errors="replace")
    assert "had its value set via the Session State API" not in log
    assert "Traceback" not in log and "Uncaught app exception" not in log
