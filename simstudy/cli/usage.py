"""The words of ``simstudy --help`` and of each subcommand's ``--help``: what every command and key means.

Every command's words come from its registered spec (:class:`simstudy.registry.Command`): a data command's keys
(``simstudy curve``, ``bands``, ``audit``), their explanations and defaults from its schema (``options``), a plain
command's keys from its ``keys``, its usage line, examples and outputs from ``usage``, ``examples`` and ``writes``,
its one-line summary from the commands' registry (:data:`simstudy.extend.commands`). A study's keys come from its
kind's schema. A key cannot ship without its help.

``help_asked`` picks the page a command line asks for (none: the command runs), ``version`` answers ``--version``,
and :func:`preset_help` is a study's (``simstudy experiment=NAME --help``: the config groups and the composed
config, without the schemas simstudy stores for them).
"""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from simstudy import extend

__all__ = ["main_help", "command_help", "study_help", "preset_help"]


#: The study command's main keys (the rest are listed by ``simstudy experiment=NAME --help``).
STUDY_KEYS = {
    "experiment": "a preset reproducing a paper result (listed below); its keys can still be overridden",
    "seed": "the random seed: every number of a run follows from it",
    "distribution": "the score distribution(s) searches draw from: a group option (listed below) and its "
    "keys, e.g. distribution=truncnorm distribution.sd=0.1",
    "budget.B": "the number of trials (scores) in one simulated search; a list gives one cell per value",
    "budget.n": "the budgets n (in trials) at which estimators are evaluated, sorted, distinct, each at most "
    "min(B) (null: every budget 1..B of each cell)",
    "estimators": "which estimators to compare: any of u, v, w, bootstrap, e.g. estimators=[u,v]",
    "study": "the study kind (listed below), e.g. study=band_coverage; its options are study.KEY=VALUE",
    "study.KEY": "an option of the study, e.g. study.reps=2000 (simstudy study=KIND --help lists every option of "
    "a kind with its default)",
    "runner.n_jobs": "worker processes (-1: every core); never changes a number",
    "runner": "local (joblib) or dask (runner.address=tcp://host:8786 for a running scheduler)",
    "runner.shard": "i/N: run only the i-th of N slices of the chunks (array jobs), then simstudy collect",
    "runner.progress": "true, false or auto (a bar on a terminal, log lines otherwise)",
    "runner.max_failure_fraction": "the share of chunks that may fail before the run fails: exit status 1; default 0",
    "runner.figures": "the figure's formats: any of png, pdf, svg ([] for none); default [png]",
    "+design": "cross values of keys into cells of one run, stacked into one summary and figure, e.g. "
    "'+design={distribution.sd: [0.05, 0.1], budget.B: [10, 30]}'",
}


def _yaml(value) -> str:
    """A default as it is typed on the command line (YAML): null, true, 0.8, [6, 48]."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_yaml(v) for v in value) + "]"
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _wrap(key: str, text: str, width: int = 100, indent: int = 24) -> str:
    head = f"  {key:<{indent - 3}} "
    body = " " * indent
    if len(head) > indent:  # the key on a line of its own; the text then wraps at the full width
        return f"  {key}\n" + textwrap.fill(text, width=width, initial_indent=body, subsequent_indent=body)
    return textwrap.fill(text, width=width, initial_indent=head, subsequent_indent=body)


def _options(config_dir: Path, group: str) -> str:
    return ", ".join(sorted(p.stem for p in (config_dir / group).glob("*.yaml")))


def _load_plugins() -> None:
    """The plug-ins (their studies and commands), loaded only if there are any: the built-ins' summaries are in
    the registries' tables, so ``simstudy --help`` imports no study or command module (it would otherwise import
    every study's dependencies, scipy and pandas among them)."""
    if extend.entry_points() or os.environ.get(extend.PLUGINS_ENV):
        extend.load_plugins()


def _studies() -> list[str]:
    """The study kinds and their summaries, as the registry lists them (:data:`simstudy.extend.studies`)."""
    _load_plugins()
    return [_wrap(kind, extend.studies.summary(kind) or "(no summary)") for kind in extend.studies.names()]


def study_help(kind: str) -> str:
    """The text of ``simstudy study=KIND --help``: what the study does and each of its options, explained.

    Generated from the study's registered schema (:attr:`simstudy.registry.Study.options`, made with
    :mod:`simstudy.schema`), so it cannot drift from it: each option as ``study.KEY``, its field's help text
    and its default as typed on the command line (YAML: ``null``, ``true``, ``[6, 48]``); then whether the
    study needs continuous distributions and whether it takes plug-in estimators.

    Parameters
    ----------
    kind : str
        A registered study kind (:func:`simstudy.registry.study_kinds`), e.g. ``"evp_accuracy"``.

    Returns
    -------
    str
        The help text, one option per entry, wrapped at 100 characters.

    Raises
    ------
    KeyError
        If ``kind`` is not a registered study kind (raised by :func:`simstudy.registry.study`).

    Examples
    --------
    >>> from simstudy.cli.usage import study_help
    >>> text = study_help("evp_accuracy")
    >>> print(text.splitlines()[0])
    study evp_accuracy: bias, variance and MSE of expected-maximum estimators (Dodge et al. 2021, Figure 1).
    >>> lines = text.splitlines()
    >>> at = next(i for i, line in enumerate(lines) if line.lstrip().startswith("study.reps "))
    >>> print("\\n".join(lines[at : at + 2]))
      study.reps                simulated searches per cell (more: a smaller Monte Carlo error)
                                [default: 10000]
    """
    from simstudy import registry, schema

    spec = registry.study(kind)
    lines = [
        f"study {kind}: {spec.summary}.",
        "",
        f"Usage: simstudy study={kind} distribution=NAME [study.KEY=VALUE ...]",
        "       (or a preset that selects it: simstudy experiment=NAME study.KEY=VALUE)",
        "",
        "Options:",
    ]
    for key, (doc, default) in schema.docs(spec.options).items():
        lines.append(_wrap(f"study.{key}", f"{doc} [default: {_yaml(default)}]", indent=28))
    if spec.continuous:
        lines += ["", "Needs continuous distributions (no atoms)."]
    if spec.plugin_estimators:
        lines += [
            "",
            "Takes plug-in estimators beside u, v, w and bootstrap: +estimators.NAME._target_=module.function",
        ]
    return "\n".join(lines)


def main_help(config_dir: Path) -> str:
    """The text of ``simstudy --help``: the subcommands, the study command and its main keys.

    Lists the registered commands (:data:`simstudy.extend.commands`) with their summaries, the study command's main keys, the presets and distribution options
    found in ``config_dir``, the registered study kinds with their summaries, and a few example command lines.

    Parameters
    ----------
    config_dir : pathlib.Path
        The Hydra config directory (``configs/`` at the top of a source tree, ``simstudy/configs`` in a
        wheel); the preset and distribution names listed are the stems of the ``*.yaml`` files in its
        ``experiment/`` and ``distribution/`` subdirectories.

    Returns
    -------
    str
        The help text, in lines of about 100 characters.

    Examples
    --------
    A config directory with one preset and one distribution option:

    >>> import tempfile
    >>> from pathlib import Path
    >>> from simstudy.cli.usage import main_help
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     for group, name in [("experiment", "my_preset"), ("distribution", "truncnorm")]:
    ...         (Path(tmp) / group).mkdir()
    ...         (Path(tmp) / group / f"{name}.yaml").touch()
    ...     text = main_help(Path(tmp))
    >>> print(text.splitlines()[0])
    simstudy: Monte Carlo simulation studies for the statistics of hyperparameter tuning.
    >>> [line for line in text.splitlines() if line.startswith(("Experiments:", "Distributions:"))]
    ['Experiments: my_preset', 'Distributions: truncnorm']
    """
    _load_plugins()  # a plug-in's commands are listed too
    lines = [
        "simstudy: Monte Carlo simulation studies for the statistics of hyperparameter tuning.",
        "",
        "Usage:",
        "  simstudy [experiment=NAME] [key=value ...]      run a study: a paper preset, or your own",
        "  simstudy -m [key=a,b ...]                       a sweep: one study per combination",
        "  simstudy COMMAND [key=value ...]                one of the commands below",
        "  simstudy COMMAND --help                         what COMMAND does and every key it takes",
        "",
        "Commands:",
        *(_wrap(name, extend.commands.summary(name), indent=15) for name in extend.commands.names()),
        "",
        "Study keys (simstudy experiment=NAME --help prints a preset's full resolved config):",
        *(_wrap(key, text) for key, text in STUDY_KEYS.items()),
        "",
        textwrap.fill("Experiments: " + _options(config_dir, "experiment"), width=100, subsequent_indent="  "),
        textwrap.fill("Distributions: " + _options(config_dir, "distribution"), width=100, subsequent_indent="  "),
        "",
        "Studies (study=KIND; simstudy study=KIND --help lists its options):",
        *_studies(),
        "",
        "Examples:",
        "  simstudy experiment=dodge2021_fig1                  # Dodge et al. (2021), Figure 1, paper scale",
        "  simstudy experiment=dodge2021_fig1 study.reps=1000 runner.n_jobs=2",
        "  simstudy -m experiment=dodge2021_fig1 distribution.sd=0.05,0.1",
        "  simstudy curve data=my_results.csv target=0.395",
        "Results go to outputs/<study>/<overrides>/; rerunning the same command resumes. See README.md.",
        "A run directory keeps one command and its inputs (by content): overwrite=true moves earlier results",
        "to previous/<time>/ inside it and computes afresh.",
        "A key given twice takes its last value (with a note). simstudy --version prints the version.",
    ]
    return "\n".join(lines)


def command_help(command: str) -> str:
    """The text of ``simstudy COMMAND --help``: usage, examples, what it writes, and every key explained -- for a
    data command with its default, generated from the command's schema (:attr:`simstudy.registry.Command.options`).

    Parameters
    ----------
    command : str
        A registered command (:func:`simstudy.registry.command_names`: ``"curve"``, ``"bands"``, ``"collect"``
        ...).

    Returns
    -------
    str
        The help text: usage, example command lines and what the command writes (not wrapped), then each key
        and its explanation, wrapped at 100 characters; a data command's keys end in ``[required]`` or
        ``[default: VALUE]``.

    Raises
    ------
    KeyError
        If no command of that name is registered.

    Examples
    --------
    >>> print(command_help("curve").splitlines()[0])
    simstudy curve: expected best score against tuning budget (EVP curves, +/- 1 SD) of your own results.
    >>> text = command_help("curve")
    >>> print("\\n".join(text.splitlines()[9:15]))  # the first key, required
    Keys:
      data                  a CSV/TSV (one score column, or model and score columns; header optional for
                            one column), JSON Lines or JSON file, a shipped data set: reuters_hedwig,
                            deberta_mnli, tdsa_fiesta, or a tuning source (an Optuna storage or journal,
                            an MLflow store, a Ray Tune directory, a W&B export, SMAC3's, HpBandSter's
                            or Syne Tune's results), each of its studies a model [required]
    """
    from simstudy import registry, schema
    from simstudy.commands._data import REQUIRED

    spec = registry.command(command)  # the words live with the command, imported only for its own --help
    lines = [
        f"simstudy {command}: {spec.summary}.",
        "",
        f"Usage: {spec.usage}",
        "Examples:",
        *(f"  {e}" for e in spec.examples),
        f"Writes: {spec.writes}",
        "",
        "Keys:",
    ]
    if spec.options is not None:
        for key, (text, default) in schema.docs(spec.options).items():
            text += " [required]" if default == REQUIRED else f" [default: {_yaml(default)}]"
            lines.append(_wrap(key, text))
    else:
        lines += [_wrap(key, text) for key, text in spec.keys.items()]
    return "\n".join(lines)


def preset_help(overrides: list[str], *, resolve: bool = False) -> str:
    """The text of ``simstudy [experiment=NAME] [key=value ...] --help``: configs/config.yaml's help template
    (``hydra.help``) filled as Hydra's own ``--help`` fills it, through Hydra's public compose API: the config
    groups simstudy offers (not the schemas it stores for them, ``_schema/...``; each wrapped at 100 columns),
    and the composed config.

    Parameters
    ----------
    overrides : list of str
        The command line's ``key=value`` overrides (no flags).
    resolve : bool, optional, keyword-only
        Show the config with its interpolations resolved (``--resolve``); default False.

    Returns
    -------
    str
        The help text.

    Raises
    ------
    simstudy.engine.rundir.Refused
        An override Hydra cannot compose: its one line (status 2).

    Examples
    --------
    >>> text = preset_help(["experiment=dodge2021_fig1"])
    >>> [line for line in text.splitlines() if line.startswith("study: ")][0][:40]
    'study: band_coverage, band_triviality, b'
    >>> "_schema" in text
    False
    """
    import copy
    import string

    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig
    from hydra.core.object_type import ObjectType
    from omegaconf import OmegaConf, open_dict

    from simstudy.cli.compose import config_dir, one_line, register_studies
    from simstudy.engine.rundir import fail

    register_studies()  # the studies' schemas the presets select (idempotent: the command line has done it)

    def groups(loader, parent: str = "") -> list[str]:  # every group and subgroup, as Hydra's --help lists them
        found = []
        for group in loader.list_groups(parent):
            name = f"{parent}/{group}" if parent else group
            if loader.get_group_options(name, ObjectType.CONFIG):
                found.append(name)
            if loader.get_group_options(name, ObjectType.GROUP):
                found += groups(loader, name)
        return found

    try:
        with initialize_config_dir(config_dir=config_dir(), version_base="1.3"):
            cfg = compose("config", overrides=overrides, return_hydra_config=True)
            loader = GlobalHydra.instance().config_loader()
            shown = [
                g
                for g in sorted(groups(loader))
                if g != "hydra" and not any(p.startswith(("_", "hydra")) for p in g.split("/"))
            ]
            listing = "".join(
                textwrap.fill(
                    f"{g}: {', '.join(sorted(loader.get_group_options(g)))}", width=100, subsequent_indent="  "
                )
                + "\n"
                for g in shown
            )
    except Exception as exc:
        fail(one_line(exc))
    HydraConfig.instance().set_config(cfg)  # ${hydra:...} in the help's own text
    clean = copy.deepcopy(cfg)
    with open_dict(clean):
        del clean["hydra"]
    template = string.Template(cfg.hydra.help.template)
    return template.safe_substitute(APP_CONFIG_GROUPS=listing, CONFIG=OmegaConf.to_yaml(clean, resolve=resolve))


def help_asked(argv: list[str]) -> str | None:
    """The help asked for, if any: ``simstudy --help`` or ``simstudy COMMAND --help`` (a study's
    ``simstudy experiment=NAME --help`` is Hydra's, which prints the resolved config)."""
    wants = any(a in ("-h", "--help") for a in argv)
    if argv and argv[0] in ("-h", "--help"):
        from simstudy.cli.compose import config_dir

        return main_help(Path(config_dir()))
    kinds = [a.split("=", 1)[1] for a in argv if a.startswith("study=")]
    if wants and kinds and not any(a.startswith(("experiment=", "+experiment=")) for a in argv):
        from simstudy import registry

        if kinds[-1] in registry.study_kinds():  # else Hydra's help names the unknown option
            return study_help(kinds[-1])
    if wants and "=" not in argv[0] and not argv[0].startswith("-"):
        if not extend.commands.is_builtin(argv[0]):
            _load_plugins()  # a plug-in's command explains itself too
        if argv[0] in extend.commands.names():
            return command_help(argv[0])
    return None


def version(argv: list[str]) -> str | None:
    """``simstudy --version`` (also after a command): simstudy's version, not Hydra's."""
    if "--version" not in argv:
        return None
    from simstudy._version import __version__

    return f"simstudy {__version__}"
