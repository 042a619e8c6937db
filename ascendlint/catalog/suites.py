"""Rule suites, as code-scanning users know them from CodeQL's query suites: ``default``, ``review`` and ``all``.

- ``default``: the rules that run without any selection, each at least 90% precise on real kernels.
- ``review``: the default rules, plus the opt-in rules and sweeps that catch real upstream fixes and were at
  least 70% precise on code no rule was tuned on: for a code review, where a reviewer reads each finding once.
  Today that adds the grid-size rule ASC105. Its sweep ASC110, ASC107, the int32 offset rules ASC202, ASC203 and
  ASC207 and the tile-size rule ASC304 measured below the bar and stay in ``all`` until a set they were not tuned
  on says otherwise.
- ``all``: every rule (the same as the ``ALL`` selector).

A suite name is a selector (``select = ["review"]``, ``--extend-select review``); it selects the rules that are
members and nothing else. Each rule's precision (CodeQL's ``very-high`` / ``high`` / ``medium`` / ``low``) is
what ``docs/precision.md`` measured; a rule class may state its own (``Rule.precision``, ``Rule.review``), which
plugins do, and the built-in rules take theirs from ``MEASURED`` below, so that the figures live in one place next
to the page that records how they were measured.
"""

from __future__ import annotations

from typing import NamedTuple

SUITES = ("DEFAULT", "REVIEW", "ALL")  # upper case, as selectors are compared
PRECISIONS = ("very-high", "high", "medium", "low")


class Measured(NamedTuple):
    # CodeQL's scale: very-high >= 90%, high >= 70%, medium >= 50%, low below (or too few findings to say); from the
    # figure on the untuned sets read after the rule's last change when it judged five findings or more, else from
    # every untuned set as read, else from every judgement of real code
    precision: str
    review: bool  # a member of the review suite (every default rule is)
    basis: str  # the figures the precision was decided from (docs/precision.md), for the docs


def precision_band(right: int, judged: int) -> str:
    """CodeQL's precision word for ``right`` of ``judged`` findings."""
    share = right / judged if judged else 0.0
    if share >= 0.9:
        return "very-high"
    if share >= 0.7:
        return "high"
    if share >= 0.5:
        return "medium"
    return "low"


_UNTUNED = "untuned sets"
_LAST = "untuned sets 10 to 14 (each read before any change made from it)"
MEASURED: dict[str, Measured] = {
    # default rules: right at least nine times in ten on real kernels
    "ASC101": Measured("very-high", True, f"{_LAST}: 154/163 (set 14's nine: dicts an assert compares or a test"
                       " records, not launch options, left alone since); {_UNTUNED} as read, code that runs on the"
                       " NPU: 398/409; held out 26/30; 20/20 fixes"),
    "ASC102": Measured("low", True, "one finding on untuned code, wrong (a tensor passed to a helper parameter"
                       " annotated constexpr: read as a tensor since); no finding on sets 5 and 6; 2/3 fixes"),
    "ASC103": Measured("very-high", True, "no finding on real code; the offline compiler refuses the construct"),
    "ASC106": Measured("very-high", True, f"{_LAST}: 25/25; {_UNTUNED} as read 53/53; held out 12/12, corpus"
                       " 2/2; 8/8 fixes"),
    "ASC108": Measured("very-high", True, "fresh 2/2; probed constructs only"),
    "ASC204": Measured("very-high", True, "no finding on real code"),
    "ASC205": Measured("very-high", True, "corpus 13/13; 1 fix (flagged after its fix too)"),
    "ASC301": Measured("very-high", True, f"{_LAST}: 32/33; {_UNTUNED} as read 69/75 (set 8's five were one shape,"
                       " a tile passed again only as a left operand in a later loop, ASC306's since); corpus 30/30,"
                       " held out 30/30; 5/6 fixes"),
    "ASC302": Measured("very-high", True, "corpus 4/4, held out 7/7"),
    "ASC303": Measured("low", False, "opt-in: untuned sets 3/48 (set 1 3/7, set 3 0/4, set 8 0/6: paths the"
                       " callers never take, non-power-of-two head dims; sets 13 and 14 0/31: unit tests whose"
                       " literal shapes the blocks divide); corpus 11/12; 1/1 fix"),
    "ASC408": Measured("low", False, "untuned set 12: 0/1 (a grid the host caps at a 910B's 40 vector cores);"
                       " corpus 0/1 (debatable); mutation tests"),
    # the size rules that catch real fixes: in the review suite only at 70% or more on untuned code
    "ASC105": Measured("high", True, f"{_LAST}: 16/21 = 76% (sets 13 and 14 0/3: unit tests and uncalled"
                       f" prototypes); {_UNTUNED} 5 to 14 as read: 36/60 = 60% (each set read before the changes it"
                       " led to); 13/13 tuning-half fixes, 1/2 measured"),
    "ASC202": Measured("low", False, f"{_LAST}: 15/62 (partly samples); {_UNTUNED} as read 45/161 = 28% (offsets"
                       " that wrap only past 262K tokens per call); 3/4 tuning-half fixes, 0/5 measured"),
    "ASC203": Measured("medium", False, f"{_LAST}: 17/30 = 57%; {_UNTUNED} as read 44/89 = 49% (sequence offsets"
                       " that wrap only past 262K tokens of one inference call); 1/1 tuning-half fix, 0/1 measured"),
    "ASC107": Measured("medium", False, f"{_LAST}: 30/56 = 54% (sets 13 and 14 5/20 after the change made from"
                       " sets 7-12: tile extents and literal test shapes read as data sizes; wrong before: sizes the"
                       f" host buckets or fixes per model, batches varlen callers pass as 1); {_UNTUNED} 3, 4 and 7-14"
                       " as read: 115/165 = 69.7%; 1/1 tuning-half fix, 2/3 measured"),
    "ASC304": Measured("low", False, f"{_LAST}: 0/9 (tiles the host bounds by a path's guard, the model or a"
                       f" test's literal shapes); held out 8/10, {_UNTUNED} as read 0/14; 3/3 tuning-half fixes, 0/2"
                       " measured"),
    # opt-in rules left out of the review suite
    "ASC104": Measured("medium", False, "corpus 4/5, held out 2/4"),
    "ASC109": Measured("low", False, "2/6 (four debatable: the pinned version accepts the keywords); 1 fix"),
    "ASC110": Measured("low", False, f"{_LAST}: 14/30 = 47% (sets 10-12 14/17; sets 13 and 14 0/13: unit"
                       f" tests at literal sizes the size reader missed then); {_UNTUNED} 5 to 14 as read: 46/83 = 55%"
                       " (set 9's decode-step grids, read as tokens then, are batches since)"),
    "ASC201": Measured("low", False, "corpus 10/17, held out 0/12"),
    "ASC206": Measured("low", False, "no finding on real code: not measured"),
    "ASC207": Measured("low", False, f"{_LAST}: 5/50 (partly samples); {_UNTUNED} as read 30/135 = 22%"),
    "ASC307": Measured("low", False, "the compiler's verdict (needs the compiler extra); not judged on real kernels"),
    "ASC308": Measured("low", False, "the compiler's verdict (needs the compiler extra); not judged on real kernels"),
    "ASC305": Measured("low", False, "corpus 0/10 read, held out 0/1 (an estimate for tuning); 1/1 fix"),
    "ASC306": Measured("low", False, f"{_LAST}: 0/21, all debatable (the shape whose effect on the NPU is not"
                       " known); set 9 0/10"),
    "ASC407": Measured("low", False, "advisory; no finding on real code"),
    "ASC412": Measured("low", False, "1 right, 2 debatable on real code"),
    "ASC414": Measured("low", False, "no finding on real code"),
    "ASC415": Measured("low", False, "no finding on real code: not measured"),
    "ASC416": Measured("low", False, "no finding on real code: not measured"),
    "ASC501": Measured("low", False, "advisory; not judged on real code"),
    "ASC502": Measured("medium", False, "advisory; corpus 12/12 (tuned), no untuned figure"),
    "ASC503": Measured("medium", False, "advisory; corpus 9/9 (tuned), no untuned figure"),
}
_DISTRIBUTED_DEFAULT = Measured("very-high", True, "few findings on real code; the mutation tests of the fused"
                                " reference kernels (docs/precision-distributed.md)")
_TOOL = Measured("very-high", True, "reported by the engine itself")


def measured(rule) -> Measured:
    """What is known of a rule's precision (a class or a rule index entry)."""
    own_precision, own_review = getattr(rule, "precision", None), getattr(rule, "review", None)
    found = MEASURED.get(rule.code)
    if found is None:
        if getattr(rule, "tool_rule", False) or rule.code.startswith("ASC0"):
            found = _TOOL
        elif rule.code.startswith("ASC4") and getattr(rule, "default", True):
            found = _DISTRIBUTED_DEFAULT
        else:  # a plugin's rule that states nothing: its tier says what it claims
            default = bool(getattr(rule, "default", True))
            found = Measured("very-high" if default else "medium", default, "")
    return Measured(own_precision or found.precision, found.review if own_review is None else own_review,
                    found.basis)


def in_review(rule) -> bool:
    return bool(getattr(rule, "default", True)) or measured(rule).review


def suites_of(rule) -> tuple[str, ...]:
    """The suites a rule belongs to, lower case: ``default`` implies ``review``; every rule is in ``all``."""
    names = []
    if getattr(rule, "default", True):
        names.append("default")
    if in_review(rule):
        names.append("review")
    return (*names, "all")


def member(suite: str, rule) -> bool:
    """Whether ``rule`` is in the suite named ``suite`` (upper case)."""
    if suite == "ALL":
        return True
    if suite == "DEFAULT":
        return bool(getattr(rule, "default", True))
    if suite == "REVIEW":
        return in_review(rule)
    return False
