"""The pysim command: echoes what it resolved; bad ids, artifacts and parameters give one line with the choices."""
import pytest

from pysim import cli


def run(capsys, *argv):
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_run_echoes_seed_and_parameters_first(capsys):
    code, out, _ = run(capsys, "run", "sosp93_maeda", "table4", "--seed", "3", "--quick",
                       "--set", "memcpy_us_per_byte=0.01")
    assert code == 0
    first = out.splitlines()[0]
    assert first.startswith("command run sosp93_maeda table4 | seed 3 | quick True | params ")
    assert "memcpy_us_per_byte=0.01" in first
    assert "Total" in out


@pytest.mark.parametrize("argv, message", [
    (["run", "nope"], "unknown paper 'nope'; valid: "),
    (["run", "sosp93_maeda", "table9"], "unknown artifact 'table9' for sosp93_maeda; valid: figure1, table1, table2"),
    (["run", "sosp93_maeda", "table4", "--set", "speed=3"], "unknown parameter 'speed'; valid: device_read_us_per_byte"),
    (["run", "sosp93_maeda", "table4", "--set", "memcpy_us_per_byte=-1"], "memcpy_us_per_byte must be > 0"),
    (["run", "sosp93_maeda", "table4", "--set", "memcpy_us_per_byte"], "--set expects name=value"),
    (["reproduce", "nope"], "unknown paper 'nope'"),
])
def test_bad_input_is_one_line_naming_the_choices(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and message in err


def test_list_shows_every_registered_paper(capsys):
    code, out, _ = run(capsys, "list", "--results", "/nonexistent")
    assert code == 0 and "sosp93_maeda" in out and "not run" in out


def test_check_scores_a_paper(capsys):
    code, out, _ = run(capsys, "check", "sosp93_maeda", "--quick")
    assert "table4" in out and "claims" in out
    assert code == 0


def test_help_exists_for_every_command(capsys):
    for command in ("list", "run", "reproduce", "check", "bench", "measure"):
        with pytest.raises(SystemExit) as e:
            cli.main([command, "--help"])
        assert e.value.code == 0
        assert "usage: pysim " + command in capsys.readouterr().out
