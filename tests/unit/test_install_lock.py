"""The install lock taken with ``filelock`` (as on Windows, where there is no ``fcntl``): an install waits for the
process holding ``<home>/.install.lock`` and says so through its progress callback."""

from __future__ import annotations

import threading

from filelock import FileLock

from bertscore_viz.models import install as inst


def test_the_lock_waits_for_its_holder_and_says_so(tmp_path):
    stages, locked = [], []
    waiting = threading.Event()

    def progress(stage: str, done: int, total: int) -> None:
        stages.append((stage, done, total))
        waiting.set()

    def install_like():
        with inst._install_lock(tmp_path, progress) as held:
            locked.append(held)

    with FileLock(str(tmp_path / inst.LOCK_NAME)):  # another install holds the lock
        worker = threading.Thread(target=install_like)
        worker.start()
        assert waiting.wait(30)
        assert stages == [("waiting for another install", 0, 1)] and locked == []
    worker.join(30)
    assert locked == [True]
    with inst._install_lock(tmp_path, progress) as held:  # a free lock: taken without a word
        assert held and len(stages) == 1
