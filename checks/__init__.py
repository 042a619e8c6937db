"""ascendlint's built-in rules, one module per rule (installed as ``ascendlint.checks``)."""
