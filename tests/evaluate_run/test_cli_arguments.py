"""Every evaluate/optimize CLI returns argparse's exit code from main() instead of raising SystemExit."""

import pytest

import collate.compile as compile_cli
import collate.demo as demo
import collate.run as evaluate_run
import collate.score as score

CLIS = [
    (evaluate_run, "python -m evaluate.run"),
    (demo, "python -m evaluate.demo"),
    (score, "python -m evaluate.score"),
    (compile_cli, "python -m optimize.compile"),
]


@pytest.mark.parametrize("module, prog", CLIS)
def test_unknown_flag_is_exit_2_with_argparse_reason(module, prog, capsys):
    assert module.main(["--no-such-flag"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    # one line naming the command and the fix, not argparse's usage block (issue 32 item 5)
    assert captured.err.startswith(f"{prog}: error: unrecognized argument --no-such-flag")


@pytest.mark.parametrize("module, prog", CLIS)
def test_help_is_exit_0_on_stdout(module, prog, capsys):
    assert module.main(["--help"]) == 0
    assert capsys.readouterr().out.startswith(f"usage: {prog}")
