"""A command is one module plus one registry line: the template command (simstudy/commands/_template.py),
registered under a new name from here, runs from the command line and from simstudy.run, and explains itself in
--help, with nothing of simstudy.cli touched (its Hydra config made from its schema)."""

import dataclasses

import pytest
from _cli import one_line_error, simstudy

import simstudy as ss
from simstudy import extend, registry
from simstudy.commands import _template

SCORES = "model,score\na,0.2\na,0.4\na,0.3\nb,0.5\nb,0.1\n"


@pytest.fixture
def toy():
    spec = registry.register_command(dataclasses.replace(_template.COMMAND, name="toy", summary="a toy command"))
    yield spec
    extend.commands.unregister("toy")


def test_a_registered_command_runs_from_the_command_line_and_the_api_alike(tmp_path, toy, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.csv").write_text(SCORES)
    proc = simstudy("toy", "data=s.csv", "digits=2", cwd=tmp_path)
    assert "a: best 0.40, median 0.30 of 3 runs" in proc.stdout
    assert "b: best 0.50, median 0.30 of 2 runs" in proc.stdout
    cli_dir = tmp_path / "outputs" / "toy" / "data=s.csv,digits=2"
    assert (cli_dir / "best.csv").read_text() == "model,runs,best,median\na,3,0.4,0.3\nb,2,0.5,0.3\n"
    # a command without a page still gets its report (report.html knows no command's files), and no warning
    assert (cli_dir / "report.html").is_file() and "report.html not written" not in proc.stderr
    result = ss.run("toy", data="s.csv", digits=2)  # the command's own directory: resumed, not refused
    assert result.out_dir == cli_dir
    again = ss.run("toy", data="s.csv", digits=2, out_dir=tmp_path / "api")
    for name in ("best.csv", "config.yaml"):
        assert (tmp_path / "api" / name).read_bytes() == (cli_dir / name).read_bytes(), name
    assert again.files["best.csv"] == tmp_path / "api" / "best.csv"
    assert result.result.table["best"].tolist() == [0.4, 0.5]
    assert result.config.digits == 2


def test_a_registered_command_explains_itself_and_refuses_a_bad_key_in_one_line(tmp_path, toy, capsys):
    help_ = simstudy("toy", "--help", cwd=tmp_path).stdout
    assert help_.startswith("simstudy toy: a toy command.")
    assert "digits" in help_ and "[default: 4]" in help_
    assert "  toy " in simstudy("--help", cwd=tmp_path).stdout
    proc = simstudy("toy", "data=s.csv", "digits=-1", cwd=tmp_path, check=False)
    assert one_line_error(proc, "digits must be an integer >= 0, got -1")
    with pytest.raises(ss.ConfigError, match="digits must be an integer >= 0, got -1"):
        ss.run("toy", data="s.csv", digits=-1, out_dir=tmp_path / "api")
    assert not (tmp_path / "api").exists()


@pytest.mark.system  # a process of its own: the plug-in is found through $SIMSTUDY_PLUGINS, as a user's would be
def test_a_plugin_command_is_found_through_the_plugins_and_runs(tmp_path):
    from _cli import clean_env

    (tmp_path / "s.csv").write_text(SCORES)
    (tmp_path / "my_command.py").write_text(
        "import dataclasses\n"
        "from simstudy import registry\n"
        "from simstudy.commands import _template\n"
        "registry.register_command(dataclasses.replace(_template.COMMAND, name='best', summary='best scores'))\n"
    )
    env = clean_env(SIMSTUDY_PLUGINS="my_command")
    assert "  best " in simstudy("--help", cwd=tmp_path, env=env).stdout
    assert simstudy("best", "--help", cwd=tmp_path, env=env).stdout.startswith("simstudy best: best scores.")
    proc = simstudy("best", "data=s.csv", cwd=tmp_path, env=env)
    assert "a: best 0.4000, median 0.3000 of 3 runs" in proc.stdout
    assert (tmp_path / "outputs" / "best" / "data=s.csv" / "best.csv").is_file()


# A plain command (key=value arguments, no Hydra config): its spec is all the command line needs -- its keys (and
# flags), parse, run, lines and failure -- with nothing in simstudy.cli written for it.
def _toy_parse(keys):
    if not keys["n"].isdigit():
        raise ss.ConfigError(f"n must be a whole number, got {keys['n']!r}")
    return {"n": int(keys["n"]), "word": keys.get("word", "tick"), "loud": keys.get("loud", False)}


def _toy_run(config):
    return [config["word"].upper() if config["loud"] else config["word"]] * config["n"]


@pytest.fixture
def toy_plain():
    spec = registry.register_command(
        registry.Command(
            "toy_plain",
            run=_toy_run,
            parse=_toy_parse,
            lines=lambda words: [" ".join(words)],
            failure=lambda words: "nothing to say" if not words else None,
            usage="simstudy toy_plain n=N [word=W] [--loud]",
            examples=("simstudy toy_plain n=3 word=tock",),
            writes="nothing: a line on the terminal",
            keys={"n": "how many words", "word": "the word (default tick)", "--loud": "in capitals"},
            required=("n",),
            summary="a toy plain command",
        )
    )
    assert spec.plain
    yield spec
    extend.commands.unregister("toy_plain")


def test_a_registered_plain_command_runs_from_the_command_line_with_nothing_in_the_cli(tmp_path, toy_plain):
    assert simstudy("toy_plain", "n=2", "word=tock", "--loud", cwd=tmp_path).stdout == "TOCK TOCK\n"
    assert simstudy("toy_plain", "n=3", cwd=tmp_path).stdout == "tick tick tick\n"
    help_ = simstudy("toy_plain", "--help", cwd=tmp_path).stdout
    assert help_.startswith("simstudy toy_plain: a toy plain command.") and "how many words" in help_
    # refusals: the keys from the spec, the value from parse, the failure from the spec; one line each
    proc = simstudy("toy_plain", "word=x", cwd=tmp_path, check=False)
    assert one_line_error(proc, "simstudy toy_plain: n is required: set it with n=...")
    proc = simstudy("toy_plain", "n=2", "colour=red", cwd=tmp_path, check=False)
    assert one_line_error(
        proc, "simstudy toy_plain: unexpected argument 'colour=red' (usage: simstudy toy_plain n=... [word=...])"
    )
    proc = simstudy("toy_plain", "n=two", cwd=tmp_path, check=False)
    assert one_line_error(proc, "n must be a whole number, got 'two'")
    proc = simstudy("toy_plain", "n=0", cwd=tmp_path, check=False)
    assert one_line_error(proc, "nothing to say", status=1) and proc.stdout == "\n"
