"""What reviewdog's ``github-pr-review`` reporter makes of an rdjson diagnostic, and what GitHub then applies.

A re-implementation of reviewdog's own rule (github.com/reviewdog/reviewdog, read at commit 6c307503):

- ``filter/filter.go`` ``FilterCheck``: ``InDiffContext`` when every line of the diagnostic's range is in the
  diff; ``FirstSuggestionInDiffContext`` when every line of the first suggestion's range is; ``SourceLines`` holds
  the diff's text of those lines;
- ``service/github/github.go`` ``githubCommentLineRange``: the comment covers the first suggestion's lines when
  that suggestion is in the diff context, else the diagnostic's lines (an end line of 0 means the start line);
- ``buildSuggestions`` / ``buildSingleSuggestion``: a suggestion whose line range differs from the comment's
  becomes an error block ("GitHub comment range and suggestion line range must be same"); a suggestion with
  columns goes through ``buildNonLineBasedSuggestion``, which keeps the start line's text before the start column
  and the end line's text after the end column (byte columns) around the suggestion text; without columns the
  text is used as is. Each becomes a fenced ``suggestion`` block: the text, and a line break when the text is not
  empty (an empty line-based suggestion deletes the lines).

The replay assumes the whole file is in the pull request's diff (a new file), so every line is in diff context.
GitHub applies a suggestion by replacing the comment's lines with the block's lines.
"""

from __future__ import annotations

from dataclasses import dataclass

SUGGESTION_ERROR = "GitHub comment range and suggestion line range must be same"


@dataclass
class ReviewComment:
    start_line: int
    end_line: int
    suggestions: list[str]  # the content of each ```suggestion block, in order
    errors: list[str]


def _lines(range_: dict) -> tuple[int, int]:
    start = range_["start"]["line"]
    end = range_.get("end", {}).get("line", 0) or start
    return start, end


def review_comment(diagnostic: dict, source: bytes) -> ReviewComment:
    """The review comment reviewdog posts for one rdjson diagnostic of a file added by the pull request."""
    source_lines = {number: line for number, line in enumerate(source.split(b"\n"), start=1)}
    suggestions = diagnostic.get("suggestions", [])
    if suggestions:  # FirstSuggestionInDiffContext: the whole file is in the diff
        start, end = _lines(suggestions[0]["range"])
    else:
        start, end = _lines(diagnostic["location"]["range"])
    comment = ReviewComment(start, end, [], [])
    for suggestion in suggestions:
        s_start, s_end = _lines(suggestion["range"])
        if (s_start, s_end) != (start, end):
            comment.errors.append(f"{SUGGESTION_ERROR}. L{start}-L{end} v.s. L{s_start}-L{s_end}")
            continue
        text = suggestion["text"].encode("utf-8")
        first, last = suggestion["range"]["start"], suggestion["range"].get("end", {})
        if first.get("column", 0) > 0 or last.get("column", 0) > 0:
            before = source_lines[s_start][: max(first.get("column", 0) - 1, 0)]
            after = source_lines[s_end][max(last.get("column", 0) - 1, 0) :]
            comment.suggestions.append((before + text + after).decode("utf-8") + "\n")
        else:
            comment.suggestions.append(text.decode("utf-8") + "\n" if text else "")
    return comment


def apply(source: str, comment: ReviewComment, block: str) -> str:
    """GitHub's "Commit suggestion": the comment's lines replaced by the suggestion block's lines."""
    lines = source.splitlines(keepends=True)
    return "".join(lines[: comment.start_line - 1]) + block + "".join(lines[comment.end_line :])
