"""A --program file that is not this program's state is one line naming the fix (issue 22 item 7)."""

from __future__ import annotations

import json

import pytest

from programs import compiled
from signatures.errors import BadInput


@pytest.mark.parametrize(
    "content",
    [
        [1, 2, 3],  # a JSON list
        {"some_other_program.predict": {"demos": [], "signature": {}}},  # another program's state
        {"planner.plan": {"demos": []}},  # predictors missing
        "not json at all",
    ],
)
def test_a_file_that_is_not_the_analyst_is_refused_naming_the_fix(make_program, tmp_path, content):
    path = tmp_path / "compiled.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    with pytest.raises(BadInput, match=r"cannot load .*compiled\.json into the program.*recompile it"):
        compiled.load(make_program(), path)
