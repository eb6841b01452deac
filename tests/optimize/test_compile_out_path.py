"""Issue 33 item 6: `collate compile ... --out c.txt` paid for the whole optimization, then failed with a
traceback ("could not save the compiled program anywhere": DSPy saves state only to a .json). The path
is checked before anything is spent."""

from __future__ import annotations

import pytest

from collate import compile as collate_compile
from programs.compiled import check_program_path
from signatures.errors import BadInput


@pytest.mark.parametrize("name", ["c.txt", "compiled", "c.JSON", "c.json.bak", "compiled.meta.json"])
def test_a_compile_out_dspy_cannot_save_to_is_refused_before_any_call(
    small_corpus, brain_server, tmp_path, capsys, name
):
    corpus, index = small_corpus
    code = collate_compile.main(
        ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--optimizer", "bootstrap",
         "--out", str(tmp_path / name), "--limit", "2", "--no-autolog"]
    )  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and "Traceback" not in err
    assert err.startswith(f"error: --out {tmp_path / name}:") and ".json" in err
    assert brain_server.calls == 0 and list(tmp_path.iterdir()) == []


def test_the_refusal_suggests_a_json_name():
    with pytest.raises(BadInput, match=r"e\.g\. c\.json\)"):
        check_program_path("c.txt")
    with pytest.raises(BadInput, match=r"e\.g\. compiled\.json\)"):
        check_program_path("compiled")
    assert check_program_path("out/compiled.json").name == "compiled.json"
