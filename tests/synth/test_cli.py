"""Bad arguments exit 2 with one clear line naming the fix."""

from __future__ import annotations

import pytest

from collate.synth import main


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--companies", "1"], "--companies"),
        (["--companies", "500"], "--companies"),
        (["--pages", "1"], "--pages"),
        (["--years", "21"], "--years"),
    ],
)
def test_bad_values_exit_2_with_the_flag_named(tmp_path, capsys, args, needle):
    assert main(["--out", str(tmp_path / "x"), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1
    assert not (tmp_path / "x").exists()


def test_missing_out_and_non_numbers_are_usage_errors(capsys):
    assert main([]) == 2
    assert "--out" in capsys.readouterr().err
    assert main(["--out", "x", "--companies", "many"]) == 2
    assert "--companies" in capsys.readouterr().err


def test_unwritable_out_exits_2(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert (
        main(["--out", str(blocker / "sub"), "--companies", "2", "--years", "2021", "--pages", "3", "-q"])
        == 2
    )
    assert "--out" in capsys.readouterr().err


def test_pages_knob_sets_the_length_of_every_document(tmp_path):
    assert (
        main(["--out", str(tmp_path / "p"), "--companies", "2", "--years", "2022", "--pages", "12", "-q"])
        == 0
    )
    catalog = (tmp_path / "p" / "catalog.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(catalog) == 5  # one US report + four A-share documents
    assert all('"pages": 12' in line for line in catalog)
