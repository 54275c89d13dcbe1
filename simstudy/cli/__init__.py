"""The ``simstudy`` command: the only package that runs Hydra apps, a thin shell over :mod:`simstudy.launch`.

``simstudy experiment=dodge2021_fig1 [key=value ...]`` composes the config, resolves it into plain frozen
objects (:func:`simstudy.config.parse`) before any compute, runs the study in this process (joblib inside
it), and writes the summary, the replicates, the figure and the run metadata into the run directory
``outputs/<study.name>/<overrides>/``. Invalid input exits with status 2 and one line on stderr, and leaves
no new directory behind; a run that cannot finish (failed chunks beyond ``runner.max_failure_fraction``,
missing chunks at ``collect``, a full disk) exits with status 1 and one line.

``simstudy COMMAND ...`` runs a registered command (:data:`simstudy.extend.commands`): a data command
(``curve``, ``bands``, ``audit``, ``extrapolate``) as a Hydra app over :func:`simstudy.launch.run`, a plain one
(``collect``, ``replay``, ``reproduce`` ...) from its ``key=value`` arguments.

=======================  ==========================================================================================
:mod:`.main`             :func:`~simstudy.cli.main.main`: dispatch, and the one place exceptions become lines and
                         exit statuses
:mod:`.plain`            the commands without a Hydra config
:mod:`.sweeps`           :class:`~simstudy.cli.sweeps.SweepCallback`, a multirun's stacked summary
:mod:`.usage`            the help pages
:mod:`.compose`          Hydra's composition and the checks of the overrides (the one module :mod:`simstudy.api`
                         imports: it neither prints, nor exits, nor reads ``sys.argv``)
:mod:`.args`             the ``key=value`` arguments as text (paths quoted, a key given twice, ``overwrite=``)
=======================  ==========================================================================================

Hydra and OmegaConf are imported here only (``.importlinter`` forbids them elsewhere), when a command runs, not
when this package is imported: ``simstudy --help`` needs neither. This package's ``__init__`` imports nothing, so
that :mod:`simstudy.api` loads :mod:`.compose` without the command line's modules.
"""
