"""The registry of study kinds and commands, and the loading of third-party plug-ins.

A study kind is one module that declares a :class:`Study` -- its typed options (a schema, see
:mod:`simstudy.schema`), its cross-checks, the function that runs it, the figure and the console headline --
and calls :func:`register_study` once. Everything else finds it here: the config layer validates
``study.kind`` and the study's options against it, the CLI draws its figure and logs its headline, a sweep
picks its headline measure (:class:`Headline`). The kinds live in the registry :data:`simstudy.extend.studies`:
the built-in ones are the modules of :mod:`simstudy.studies`, listed there by import path and imported only
when a kind is asked for (``--help`` lists them without importing any).

A command (``simstudy curve``, ``simstudy collect`` ...) is one module of :mod:`simstudy.commands` that declares a
:class:`Command` as its ``COMMAND``: its options schema, parse, run, write and summary lines, and its help. The
command line (:mod:`simstudy.cli`), :func:`simstudy.launch.run` and :func:`simstudy.run` find it in the registry
:data:`simstudy.extend.commands` (:func:`command`), so a new command is its module plus one line there.

Third-party plug-ins
--------------------
A package registers its studies, estimators, distributions and band methods through the entry-point group
``simstudy.plugins``: each entry point names a module (imported: it registers at import) or a function
(called without arguments: it registers). In ``pyproject.toml``::

    [project.entry-points."simstudy.plugins"]
    my_package = "my_package.simstudy_plugin"

Modules listed in the environment variable ``SIMSTUDY_PLUGINS`` (comma-separated, importable from the working
directory) are loaded the same way, for plug-ins not packaged. :func:`load_plugins`
(:func:`simstudy.extend.load_plugins`) loads both once per process; a plug-in that fails to load is a
:class:`~simstudy.plugins.PluginError` naming it, in one line.

Example
-------
>>> sorted(study_kinds())[:3]
['band_coverage', 'band_triviality', 'band_width']
>>> study("band_triviality").options.__name__
'Options'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from simstudy import extend
from simstudy.extend import ENTRY_POINT_GROUP, PLUGINS_ENV, load_plugins

__all__ = [
    "Command",
    "command",
    "command_names",
    "register_command",
    "Study",
    "Headline",
    "register_study",
    "study",
    "study_kinds",
    "load_plugins",
    "ENTRY_POINT_GROUP",
    "PLUGINS_ENV",
    "figure_function",
]


@dataclass(frozen=True)
class Headline:
    """What a sweep's faceted figure shows of a stacked summary (:func:`simstudy.sweeps.headline`).

    The rows matching every ``where`` pair are drawn: ``estimate`` against column ``x``, one line per value of
    column ``hue``, the y-axis labelled ``ylabel``; a coverage (``role="coverage"``) with its nominal level
    dashed. A study declares it as :attr:`Study.sweep`; its charts (:func:`simstudy.charts.estimates`) carry the
    role, so neither the figure nor ``report.html`` guesses it from the label.

    Parameters
    ----------
    where : dict of str to object
        Column -> value: the rows kept (all pairs must match), e.g. ``{"measure": "mse"}``. ``{}`` keeps
        every row.
    x : str
        The column on the x-axis (e.g. ``"n"``, the budget in trials).
    hue : str
        The column whose values are the lines (e.g. ``"estimator"``).
    ylabel : str
        The y-axis label: the measure and its units (e.g. ``"MSE"``).
    role : str, optional
        What the measure is (:data:`simstudy.charts.ROLES`): ``"coverage"`` draws the rows' ``nominal`` level
        as the reference. Default ``"measure"``.

    Examples
    --------
    >>> Headline({"measure": "mse"}, "n", "estimator", "MSE")
    Headline(where={'measure': 'mse'}, x='n', hue='estimator', ylabel='MSE', role='measure')
    >>> study("evp_accuracy").sweep == Headline({"measure": "mse"}, "n", "estimator", "MSE")
    True
    """

    where: dict
    x: str
    hue: str
    ylabel: str
    role: str = "measure"


@dataclass(frozen=True)
class Study:
    """A study kind: what the registry knows of it, given once to :func:`register_study`.

    A frozen dataclass; its fields are the constructor's parameters.

    Parameters
    ----------
    kind : str
        The name ``study.kind`` selects (an identifier).
    options : type
        Its schema: a frozen dataclass of :func:`simstudy.schema.option` fields, the defaults' only home.
        Every study's schema includes ``reps``, ``chunk_reps`` and ``save_replicates`` (subclass
        :class:`simstudy.studies.base.StudyOptions`).
    run : callable
        ``run(config, out_dir, *, stage=None) -> StudyResult``: ``config`` a validated
        :class:`simstudy.config.Config` (its options at ``config.study.options``), ``out_dir`` a
        :class:`pathlib.Path`, ``stage`` the precision rule's (``study.precision``), handed to
        :func:`simstudy.studies.base.run_chunks`; it returns what :func:`simstudy.studies.base.finish` returns.
        A ``run`` without ``stage`` runs, but not under ``study.precision``.
    figure : str or callable
        ``figure(summary, title=None) -> matplotlib Figure`` of the tidy summary, or its import path (resolved
        only when a figure is drawn, so the registry never imports matplotlib).
    headline : callable or None, optional
        ``headline(summary) -> str``: the numbers a reader checks first, logged after the run. Default ``None``
        (nothing logged).
    sweep : Headline or None, optional
        What a sweep's faceted figure shows. Default ``None``: the first measure against the first of ``n, k,
        B, budget, nominal, confidence`` the summary has (:func:`simstudy.sweeps.headline`).
    check : callable or None, optional
        ``check(config)``: cross-checks of the whole config (e.g. the number of distributions), raising
        :class:`~simstudy.schema.ConfigError` in one line; runs at parse time, before any compute. Default
        ``None``.
    continuous : bool, optional
        Needs continuous distributions (no atoms); default ``False``.
    plugin_estimators : bool, optional
        Takes plug-in estimators (``+estimators.NAME._target_=...``) beside the built-in ones; default ``False``.
    summary : str
        One line for ``--help``; default ``""``: a built-in kind's line in :data:`simstudy.extend.studies`.

    See Also
    --------
    register_study : registers it.
    simstudy.studies.base.run_chunks : the chunked run a ``run`` function builds on.

    Examples
    --------
    >>> spec = study("evp_accuracy")
    >>> spec.kind, spec.options.__name__, spec.figure.__name__, spec.plugin_estimators
    ('evp_accuracy', 'Options', 'evp_accuracy_figure', True)
    >>> spec.summary
    'bias, variance and MSE of expected-maximum estimators (Dodge et al. 2021, Figure 1)'
    """

    kind: str
    options: type
    run: Callable
    figure: str | Callable
    headline: Callable | None = None
    sweep: Headline | None = None
    check: Callable | None = None
    continuous: bool = False
    plugin_estimators: bool = False
    summary: str = ""


def register_study(spec: Study) -> Study:
    """Register a study kind (once; registering the same spec again is a no-op).

    A study module calls it at import time; a plug-in package's entry point imports that module
    (:func:`load_plugins`). ``study.kind=KIND`` in a config then selects it.

    Parameters
    ----------
    spec : Study
        The study: its ``kind`` an identifier not taken, its ``options`` a dataclass schema with ``reps`` and
        ``chunk_reps`` fields.

    Returns
    -------
    Study
        ``spec``, so a module may write ``STUDY = register_study(Study(...))``.

    Raises
    ------
    ValueError
        If the kind is not an identifier, its options are not a dataclass with ``reps`` and ``chunk_reps``
        fields, or another study (another ``run`` or ``options``) already took the name; the message names
        the kind.

    Examples
    --------
    >>> spec = study("band_triviality")
    >>> register_study(spec) is spec  # the same spec again: a no-op
    True
    >>> register_study(Study("evp_accuracy", spec.options, run=print, figure="math.sqrt"))
    Traceback (most recent call last):
    ...
    ValueError: study kind 'evp_accuracy' is already registered (by simstudy.studies.evp_accuracy)
    """
    import dataclasses

    if not isinstance(spec.kind, str) or not spec.kind.isidentifier():
        raise ValueError(f"a study kind must be an identifier, got {spec.kind!r}")
    if not dataclasses.is_dataclass(spec.options) or not {"reps", "chunk_reps"} <= {
        f.name for f in dataclasses.fields(spec.options)
    }:
        raise ValueError(
            f"study {spec.kind}: options must be a dataclass schema subclassing "
            f"simstudy.studies.base.StudyOptions (fields reps, chunk_reps, ...), got {spec.options!r}"
        )
    if not spec.summary and extend.studies.is_builtin(spec.kind):
        spec = dataclasses.replace(spec, summary=extend.studies.summary(spec.kind))
    return extend.studies.register(
        spec.kind, spec, same=lambda old, new: (old.run, old.options) == (new.run, new.options)
    )


def study(kind: str) -> Study:
    """The registered study ``kind`` (built-in kinds and loaded plug-ins).

    A built-in kind's module is imported on its first call; an unknown kind loads the plug-ins
    (:func:`load_plugins`) before giving up.

    Parameters
    ----------
    kind : str
        A study kind, e.g. ``"evp_accuracy"`` (see :func:`study_kinds`).

    Returns
    -------
    Study
        Its registered spec.

    Raises
    ------
    KeyError
        If no study of that kind is registered, even after loading the plug-ins; the message lists the
        registered kinds.

    Examples
    --------
    >>> study("band_coverage").kind
    'band_coverage'
    >>> study("toy")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    KeyError: "no study kind 'toy'; the registered kinds are evp_accuracy, wrong_conclusions, ..."
    """
    return extend.studies.get(kind)


def study_kinds() -> tuple[str, ...]:
    """Every registered study kind, built-in ones first, in registration order.

    Loads the plug-ins (:func:`load_plugins`) if they were not yet loaded; imports no built-in kind.

    Returns
    -------
    tuple of str
        The kinds ``study.kind`` may name.

    Examples
    --------
    >>> kinds = study_kinds()
    >>> kinds[:3]
    ('evp_accuracy', 'wrong_conclusions', 'band_coverage')
    >>> "model_selection" in kinds
    True
    """
    load_plugins()
    return extend.studies.names()


def figure_function(spec: Study) -> Callable:
    """The study's figure function (imported from its path if it was given as one).

    Parameters
    ----------
    spec : Study
        A registered study (or any :class:`Study`).

    Returns
    -------
    callable
        ``figure(summary, title=None) -> matplotlib.figure.Figure``: ``spec.figure`` itself if it is callable,
        else the object its import path names.

    Raises
    ------
    simstudy.plugins.PluginError
        If ``spec.figure`` is a path that does not import (no such module or attribute); the message names
        ``study KIND: figure``.

    Examples
    --------
    >>> spec = Study("toy", study("evp_accuracy").options, run=print, figure="math.sqrt")
    >>> figure_function(spec)
    <built-in function sqrt>
    """
    if callable(spec.figure):
        return spec.figure
    return extend.studies.load(spec.figure, key=f"study {spec.kind}: figure")


@dataclass(frozen=True)
class Command:
    """A command (``simstudy NAME ...``): everything the command line, the launcher and the API know of it.

    A command module ends with ``COMMAND = Command(...)``; its line in :data:`simstudy.extend.commands` points
    at it (``simstudy/commands/_template.py`` is one to copy). A *data* command (it has ``options``) reads
    scores and runs from a Hydra config in its run directory (:func:`simstudy.launch.run`); a *plain* one
    (no ``options``: ``collect``, ``replay``, ``reproduce``, ``populations``, ``report``, ``plan``) takes
    ``key=value`` arguments, explained by ``keys``.

    Parameters
    ----------
    name : str
        ``simstudy NAME``; an identifier.
    run : callable
        A data command's ``run(config, inputs) -> result``: ``config`` what ``parse`` returned, ``inputs`` the
        scores by model (or what ``prepare`` made of them), and with ``chunks`` the run directory as a third
        argument; a frozen result, nothing printed. A plain command's ``run(config) -> result`` (see ``keys``).
    usage : str
        The usage line of ``simstudy NAME --help``.
    examples : tuple of str
        Example command lines for ``--help``.
    writes : str
        What it writes, for ``--help``.
    options : type or None, optional
        A data command's schema: a frozen dataclass of :func:`simstudy.schema.option` fields (subclassing
        :class:`simstudy.commands._data.DataOptions`), its keys' only home (defaults, ``--help`` words, checks).
        Default None: a plain command.
    parse : callable or None, optional
        ``parse(mapping) -> config``: the keys validated (a one-line :class:`~simstudy.schema.ConfigError`).
        Optional for a plain command (default None: ``run`` gets the mapping).
    prepare : callable or None, optional
        ``prepare(config, scores) -> prepared``: checks that need the scores, made before the run directory is
        touched (a refusal leaves nothing behind). Default None: the scores as they are.
    write : callable or None, optional
        ``write(result, out_dir)``: the command's files.
    lines : callable or None, optional
        ``lines(result) -> list of str``: what the terminal shows at the end (the headline).
    charts : callable or None, optional
        ``charts(files) -> list of simstudy.charts.Chart``: what ``report.html`` draws of the command's run
        directory, described from the tables ``write`` left there (read through ``files``, a
        :class:`simstudy.report_safe.Files`; none where the directory is not the command's), one description
        per chart (:func:`simstudy.chart_vega.to_vega` draws it on the page, :func:`simstudy.charts.to_matplotlib`
        as a PNG). :func:`simstudy.commands.report.charts` asks the command the run's ``run.json`` names.
        Default None: no chart.
    page : str or None, optional
        The page the command writes at the top of its run directory (``"CURVE.md"``): ``report.html`` shows it
        (:func:`simstudy.commands.report.run` hands every command's page to :func:`simstudy.report_html.build`,
        which knows no command's files). Default None: no page.
    keys : Mapping of str to str, optional
        A plain command's keys, explained for ``--help`` (a data command's come from ``options``); for the
        command line (:func:`simstudy.cli.plain.run`), the keys it takes (a key starting with ``-`` is a flag,
        given to ``parse`` as ``True`` under its name without dashes). A plain command's ``run(config) ->
        result`` runs what its ``parse(mapping) -> config`` made of the arguments (a mapping of key to string;
        without ``parse``, the mapping itself); nothing printed, no exit: ``lines(result)`` is what the terminal
        shows, ``failure(result)`` the one line of a run that did not finish (exit status 1).
    required : tuple of str, optional
        A plain command's keys that must be given (the command line refuses it without them); default ``()``.
    actions : Mapping of str to tuple, optional
        A plain command's actions, taken as its first word (``simstudy populations export ...``): action ->
        ``(required, optional)`` keys; the first is the default (no word). ``parse`` gets the action under
        ``"action"``. Default ``{}``: no actions.
    failure : callable or None, optional
        ``failure(result) -> str or None``: a plain command's run that did not finish, in one line (the
        command line exits 1 after ``lines``). Default None: none.
    logs : {"", "first", "run"}, optional
        A plain command's log lines shown on the terminal (the Hydra commands' format): ``"first"`` before its
        arguments are parsed, ``"run"`` once they are; default ``""``: not set up.
    composes_study : bool, optional
        A plain command that takes a study's overrides (``experiment=NAME key=value ...``): any ``key=value``
        argument is passed on (``parse`` gets them as ``{"argv": [...]}`` and returns ``(experiment,
        overrides)``); the command line composes the study config (Hydra, only in :mod:`simstudy.cli`) and runs ``run(composed)``. Default
        False.
    reads_sweep : str, optional
        A plain command's key naming a sweep's directory: when ``parse``'s config sets it (an attribute of that
        name), the command line reads the sweep's jobs (Hydra's ``multirun.yaml``, only in :mod:`simstudy.cli`)
        and gives them to ``run`` as ``run(config, swept, jobs)``. Default ``""``: none.
    chunks : bool, optional
        ``run`` stores resumable chunks in the run directory, given as ``run(config, inputs, out_dir)``; default
        False.
    runner : bool, optional
        The result has the runner's ``report``: logged, and kept in run.json; default False.
    record : bool, optional
        run.json is written, and the run directory's files are listed at the end; default True (False: the
        command's ``write`` says what it wrote).
    log_scores : bool, optional
        The scores read are logged (per model, and the values many runs share); default True (False: the
        command logs what it does with them itself).
    rerun_may_change : tuple of str, optional
        Keys a rerun into the same run directory may change (not part of its identity), e.g. extrapolate's
        ``n_boot``, which only adds chunks; default ``()``.
    summary : str, optional
        One line for ``--help``; default ``""``: a built-in's line in :data:`simstudy.extend.commands`.

    Examples
    --------
    >>> spec = command("curve")
    >>> spec.name, spec.options.__name__, spec.plain
    ('curve', 'CurveOptions', False)
    >>> command("collect").plain, sorted(command("collect").keys)
    (True, ['plugins', 'run_dir', 'sweep_dir'])
    """

    name: str
    run: Callable
    usage: str
    examples: tuple[str, ...]
    writes: str
    options: type | None = None
    parse: Callable | None = None
    prepare: Callable | None = None
    write: Callable | None = None
    lines: Callable | None = None
    charts: Callable | None = None
    page: str | None = None
    keys: Mapping[str, str] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    actions: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    failure: Callable | None = None
    logs: str = ""
    composes_study: bool = False
    reads_sweep: str = ""
    chunks: bool = False
    runner: bool = False
    record: bool = True
    log_scores: bool = True
    rerun_may_change: tuple[str, ...] = ()
    summary: str = ""

    @property
    def plain(self) -> bool:
        """Whether it takes plain ``key=value`` arguments (no options schema, no Hydra config)."""
        return self.options is None


def register_command(spec: Command) -> Command:
    """Register a command that is not built in (a plug-in's, or a test's): ``simstudy NAME`` then runs it.

    Parameters
    ----------
    spec : Command
        The command; a data command (with ``options`` and ``parse``) runs from the command line without a
        YAML of its own (its Hydra config is made from the schema).

    Returns
    -------
    Command
        ``spec``.

    Raises
    ------
    ValueError
        If the name is not an identifier, a data command has no ``parse``, ``logs`` is not one of its values, or
        the name is taken.

    Examples
    --------
    >>> from simstudy import extend
    >>> spec = Command("toy", run=print, usage="simstudy toy", examples=(), writes="nothing")
    >>> register_command(spec) is spec
    True
    >>> _ = extend.commands.unregister("toy")
    """
    if not isinstance(spec.name, str) or not spec.name.isidentifier():
        raise ValueError(f"a command name must be an identifier, got {spec.name!r}")
    if spec.options is not None and spec.parse is None:
        raise ValueError(f"command {spec.name}: a data command (options={spec.options.__name__}) needs parse")
    if spec.logs not in ("", "first", "run"):
        raise ValueError(f"command {spec.name}: logs must be '', 'first' or 'run', got {spec.logs!r}")
    return extend.commands.register(spec.name, spec)


def command(name: str) -> Command:
    """The registered command ``name`` (its module imported on first use).

    Parameters
    ----------
    name : str
        A command, e.g. ``"bands"`` (see :func:`command_names`).

    Returns
    -------
    Command
        Its spec.

    Raises
    ------
    KeyError
        If no command of that name is registered; the message lists them.

    Examples
    --------
    >>> command("bands").options.__name__
    'BandsOptions'
    """
    spec = extend.commands.get(name)
    if not spec.summary and extend.commands.is_builtin(name):
        import dataclasses

        spec = dataclasses.replace(spec, summary=extend.commands.summary(name))
    return spec


def command_names() -> tuple[str, ...]:
    """Every registered command, built-in ones first (in ``simstudy --help``'s order).

    Loads the plug-ins (:func:`load_plugins`) if they were not yet loaded; imports no built-in command.

    Returns
    -------
    tuple of str
        The names ``simstudy NAME`` takes.

    Examples
    --------
    >>> command_names()[:4]
    ('curve', 'bands', 'audit', 'extrapolate')
    """
    load_plugins()
    return extend.commands.names()
