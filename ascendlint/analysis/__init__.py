"""The shared analysis every rule reads: computed once per file, never inside a rule.

- ``walk``: one flat pre-order walk of the tree (nodes, parents, subtree extents);
- ``module_facts``: import aliases, kernels and jit helpers, launch sites;
- ``flow``: the forward data-flow solver over a kernel's statements;
- ``values``: per-kernel values (constexpr-ness, integer widths, indices and extents, pointers);
- ``grid``: what a launch grid is made of (tile counts, core counts, caps);
- ``block_pointers``: where block pointers come from and their rank;
- ``distributed``: Triton-distributed facts (waits, notifies, fences, UDMA calls, ranks).

Rules import from here; nothing here imports a rule, an output format or the CLI.
"""
