"""When an int32 offset product wraps, in the kernel's own names, for the int32-overflow findings.

"`row * row_stride` wraps once `row` >= 2^31 / `row_stride`, i.e. at `row` >= 65,536 when `row_stride` is 32,768":
the index of the product is solved for the value at which the product reaches 2^31, the other factors taken at
their literal values or at the size the magnitude model allows them (``magnitudes.py``); when those alone already
reach 2^31 no figure is given, only the relation.
"""

from __future__ import annotations

import libcst as cst

INT32_LIMIT = 2**31


def product_factors(product: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The multiplicands of a product, through nested multiplications (``a * b * c``)."""
    if type(product) is cst.BinaryOperation and type(product.operator) is cst.Multiply:
        return product_factors(product.left) + product_factors(product.right)
    return [product]


def wrap_index(extent: int) -> int:
    """The smallest index whose product with ``extent`` reaches 2^31."""
    return -(-INT32_LIMIT // extent)


def offset_threshold(analysis, product: cst.BaseExpression, text) -> str | None:
    """``wraps once `i` >= 2^31 / `extent`, i.e. at `i` >= N when `extent` is E``; None for a product of fewer than
    two factors. ``text`` renders a node on one line."""
    factors = product_factors(product)
    if len(factors) < 2:
        return None
    index = next((f for f in factors if analysis.is_runtime_index(f)), factors[0])
    rest = [f for f in factors if f is not index]
    extent_text = " * ".join(text(f) for f in rest)
    index_text = text(index)
    relation = f"wraps once `{index_text}` >= 2^31 / `{extent_text}`"
    extent = 1
    for factor in rest:
        extent *= _example_size(analysis, factor)
    if extent >= INT32_LIMIT:
        return relation
    power = extent & (extent - 1) == 0 and not all(type(f) is cst.Integer for f in rest)
    where = f"`{extent_text}` is {extent:,}" + (f" (2^{extent.bit_length() - 1})" if power else "")
    return f"{relation}, i.e. at `{index_text}` >= {wrap_index(extent):,} when {where}"


def _example_size(analysis, factor: cst.BaseExpression) -> int:
    if type(factor) is cst.Integer:
        return int(factor.value, 0)
    return 2 ** analysis.magnitude(factor)
