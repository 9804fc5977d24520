"""``dpmech run``'s ε → accuracy curve in a second thread (issue 32): the summary of the sequential job, bit for bit."""

import threading

import pytest

import app.main_job as main_job


@pytest.mark.slow  # two whole FedAUXfdp jobs on digits: about 16 s of CPU
def test_the_curve_in_a_second_thread_is_the_sequential_curve(tmp_path, monkeypatch):
    threads = []
    release_accuracies = main_job._release_accuracies

    def recorded(*arguments):
        threads.append(threading.current_thread().name)
        return release_accuracies(*arguments)

    monkeypatch.setattr(main_job, "_release_accuracies", recorded)
    monkeypatch.setattr(main_job, "_usable_cores", lambda: 2)
    beside = main_job.run_main_job(dataset="digits", out=tmp_path / "beside", progress=False, trials=200)
    # FedAUXfdp's curve (trained once, released per ε) ran in the second thread, beside the target's release and audit.
    assert len(threads) == 1 and threads[0].startswith("dpmech-run-curve")
    monkeypatch.setattr(main_job, "_usable_cores", lambda: 1)
    alone = main_job.run_main_job(dataset="digits", out=tmp_path / "alone", progress=False, trials=200)
    assert len(threads) == 1  # one core: the curve ran in order, in this thread
    assert len(beside["accuracy_curve"]) == len(main_job.CURVE_EPSILONS) + 1
    for summary in (beside, alone):
        summary.pop("report_dir")
    # Every number, the audit's included: the second thread changes when the curve is computed, nothing it computes.
    assert beside == alone
    assert (tmp_path / "beside" / "report.md").read_text(encoding="utf-8") == (
        tmp_path / "alone" / "report.md").read_text(encoding="utf-8")
