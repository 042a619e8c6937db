"""ascendlint: static analysis for Triton kernels on Huawei Ascend NPUs.

The packages follow the pipeline (docs/architecture.md): ``cli`` and ``server`` take requests, ``workspace`` turns
paths into files with their settings, ``linter`` runs the rules, ``output`` prints. The modules left at this level
are the rule API, where ``checks/`` and third-party rules import it, so their import paths stay as they are:
``ascendlint.rule`` (the ``Rule`` base class, ``Valid``/``Invalid`` examples), ``ascendlint.reports`` and
``ascendlint.diagnostics`` (what a rule reports), ``ascendlint.edits`` (building fixes) and ``ascendlint.docs_links``
(where a rule's page lives).
"""

__version__ = "0.1.0"
