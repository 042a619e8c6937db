"""The shared analysis every rule reads: computed once per file, never inside a rule.

- ``walk``: one flat pre-order walk of the tree (nodes, parents, subtree extents);
- ``module_facts``: import aliases, kernels and jit helpers, launch sites;
- ``flow``: the forward data-flow solver over a kernel's statements;
- ``values``: per-kernel values (constexpr-ness, integer widths, indices and extents, pointers), built from
  ``value_lattice``, ``value_pass``, ``value_sources`` and ``kernel_reads``;
- ``grid``: what a launch grid is made of (tile counts, core counts, caps), from ``grid_factors``, ``grid_names``
  and ``grid_classify`` over host code read by ``host_resolver``, ``host_guards``, ``host_bounds``,
  ``host_arguments`` and ``launch_arguments``;
- ``block_pointers``: where block pointers come from and their rank;
- ``distributed``: Triton-distributed facts (waits, notifies, fences, UDMA calls, ranks), with
  ``distributed_calls``, ``distributed_values``, ``signal_protocol`` and ``rank_loops``.

Rules import from here; nothing here imports a rule, an output format or the CLI.

Node classes are tested with ``type(node) is cst.Name`` (or ``in`` a tuple of classes) rather than ``isinstance``
wherever the class is a concrete libcst node: libcst's node classes are abstract base classes, so every
``isinstance`` that answers no runs ``ABCMeta.__instancecheck__``, a Python call, and on real kernels those calls
were a sixth of the analysis. A concrete node class has no subclasses, so both tests agree
(``tests/analysis/test_node_type_tests.py`` keeps it so).
"""
