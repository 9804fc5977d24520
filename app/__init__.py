"""The application: dpmech's own commands outside the core, on the top floor.

* :mod:`app.main_job`: the main job behind ``dpmech run`` (calibrate, train a one-shot
  federation, account, audit, report), the one place that uses both :mod:`trainers` and
  :mod:`audits`;
* :mod:`app.run_command` and :mod:`app.audit_command`: the ``run`` and ``audit`` commands,
  registered through the ``dpmech.commands`` entry points (pyproject.toml);
* :mod:`app.options`: the options the two commands share.

Layers (tests/test_architecture.py): :mod:`dpmech` imports none of the others, :mod:`trainers`
never imports :mod:`audits`, and neither imports :mod:`app`. Nothing is imported here, so that
``dpmech --help`` reads the commands' help without loading the trainers or the audits.
"""
