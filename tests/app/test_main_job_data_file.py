"""``dpmech run --data FILE.npz``: the user's own arrays, checked as the built-in sets, give the report the
built-in path gives on the same arrays; a malformed file exits 2 with one line naming the file."""

import json

import numpy as np
import pytest

import trainers.data as data_module
from trainers.data import LabelledData, load_digits_dataset

RUN = ("run", "--pipeline", "dphelmet", "--epsilon", "2", "--trials", "500", "--no-accuracy-curve", "--json")


@pytest.fixture(scope="module")
def digits_subset():
    digits = load_digits_dataset()
    # Every other record: 899 of the 1,797, all ten classes (DP-Helmet's 50 users × 10 records need 500 private).
    return LabelledData(digits.features[::2], digits.labels[::2])


@pytest.mark.slow  # two `dpmech run`s end to end: 5 s of CPU
def test_a_file_gives_the_report_of_the_built_in_path_on_the_same_arrays(dpmech_main, digits_subset, tmp_path,
                                                                         monkeypatch):
    path = tmp_path / "mine.npz"
    np.savez(path, X=digits_subset.features, y=digits_subset.labels)
    status, out, err = dpmech_main(*RUN, "--data", str(path), "--out", str(tmp_path / "file"))
    assert status == 0, err
    from_file = json.loads(out)

    loaded = []
    monkeypatch.setattr(data_module, "load_dataset", lambda name, **_: loaded.append(name) or digits_subset)
    status, out, err = dpmech_main(*RUN, "--dataset", "digits", "--out", str(tmp_path / "built-in"))
    assert status == 0 and loaded == ["digits"], err
    built_in = json.loads(out)

    assert (from_file["dataset"], from_file["data_file"]) == ("user-data", str(path))
    assert built_in["dataset"] == "digits" and "data_file" not in built_in
    assert sum(from_file["round"]["records_per_client"]) < len(digits_subset) < 1797
    same = {key: value for key, value in from_file.items() if key not in ("dataset", "data_file", "report_dir")}
    assert same == {key: value for key, value in built_in.items() if key not in ("dataset", "report_dir")}
    # The reports differ in the name of the data only.
    file_lines, built_in_lines = ((tmp_path / folder / "report.md").read_text(encoding="utf-8").splitlines()
                                  for folder in ("file", "built-in"))
    differing = [(one, other) for one, other in zip(file_lines, built_in_lines) if one != other]
    assert len(file_lines) == len(built_in_lines) and len(differing) == 2
    assert differing[0] == ("# dpmech run: dphelmet on user-data", "# dpmech run: dphelmet on digits")
    assert differing[1][0].startswith(f"Data: your own arrays from `{path}`")


def _save(path, **arrays):
    np.savez(path, **arrays)
    return path


FEATURES = np.random.default_rng(0).normal(size=(30, 4))
LABELS = np.arange(30) % 3


@pytest.mark.parametrize(
    "make,fragment",
    [
        (lambda tmp: tmp / "missing.npz", "cannot be read"),
        (lambda tmp: (tmp / "text.npz").write_text("x") and tmp / "text.npz", "not an array file"),
        (lambda tmp: np.save(tmp / "one.npy", FEATURES) or tmp / "one.npy", "single array"),
        (lambda tmp: _save(tmp / "keys.npz", x=FEATURES, labels=LABELS), "holds arrays ['labels', 'x']"),
        (lambda tmp: _save(tmp / "flat.npz", X=FEATURES.ravel(), y=LABELS), "X must be real features of shape (n, d)"),
        (lambda tmp: _save(tmp / "text_x.npz", X=FEATURES.astype(str), y=LABELS), "X must be real features"),
        (lambda tmp: _save(tmp / "real_y.npz", X=FEATURES, y=LABELS + 0.5), "y must be integer labels of shape (30,)"),
        (lambda tmp: _save(tmp / "short_y.npz", X=FEATURES, y=LABELS[:-1]), "y must be integer labels of shape (30,)"),
        (lambda tmp: _save(tmp / "nan.npz", X=np.where(LABELS[:, None] == 0, np.nan, FEATURES), y=LABELS), "X must be finite"),
        (lambda tmp: _save(tmp / "classes.npz", X=FEATURES, y=LABELS + 1), "y must be 0..C-1 with every class present"),
    ],
)
def test_a_malformed_file_exits_2_with_one_line_naming_it(dpmech_main, tmp_path, make, fragment):
    path = make(tmp_path)
    status, out, err = dpmech_main(*RUN, "--data", str(path), "--out", str(tmp_path / "r"))
    lines = err.strip().splitlines()
    assert status == 2 and out == "" and not (tmp_path / "r").exists()
    assert len(lines) == 1 and f"data file {str(path)!r}" in lines[0] and fragment in lines[0], err


def test_data_and_dataset_exclude_each_other(dpmech_main, tmp_path):
    path = _save(tmp_path / "mine.npz", X=FEATURES, y=LABELS)
    status, out, err = dpmech_main(*RUN, "--data", str(path), "--dataset", "digits", "--out", str(tmp_path / "r"))
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1 and "--data" in err
