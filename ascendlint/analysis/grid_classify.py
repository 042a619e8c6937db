"""Classifies one grid axis (or one launch argument) into factors by how each grows with the data.

A literal, a core count (device properties such as ``num_aicore``, core-count functions such as ``get_aicore_num()``,
also behind an override ``n_cores or cube_core_count(dev)``), a tile count of a runtime extent (``triton.cdiv(M, BM)``,
``(n + B - 1) // B``), a total size (``x.numel()``, ``cdiv(B * T * D, BLOCK)``) or a plain extent (``B``,
``x.shape[0]``). Host names are followed through their assignments (``host_resolver``); a factor under ``min(...,
cap)`` is capped; a name the conditions guarding the launch bound by a literal (``if N <= 128:``) is that bound
(``host_bounds``); a conditional expression keeps the sides that can be taken; ``cdiv(n,
next_power_of_2(ceil(sqrt(n))))`` counts about ``sqrt(n)``.

Serves ``grid`` (whole launch grids) and ``launch_factors`` (one factor per constexpr argument of a launch).
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from . import host_facts as hf
from . import magnitudes as mag
from .literal_helpers import helper_item_literals, helper_literals
from .module_facts import Launch, dotted_name
from .literals import integer_value
from .grid_factors import (
    DIVIDE_UP,
    Factor,
    Kind,
    RUNTIME_KINDS,
    add_factors,
    division_parts,
    fold,
    fold_max,
    fold_min,
    root_split_bounded,
    divides_rounding_up,
)
from .grid_names import (
    CORE_PROPERTIES,
    MODEL_DIM,
    ROUTED_TILES,
    SEQUENCE_LENGTH,
    TILE_LIST,
    core_function_kind,
    core_name_kind,
    is_tile_size,
    is_token_name,
    spells_tile,
    string_key,
)
from .host_bounds import SiteFacts, site_facts
from .host_resolver import HostResolver, MAX_DEPTH
from .launch_arguments import launch_argument
from .syntax import is_integer, is_none


_TRANSPARENT_CALLS = {"int", "abs", "next_power_of_2", "triton.next_power_of_2", "ceil", "floor"}


_ROOTS = {"sqrt", "isqrt"}


_RESHAPES = {"view", "reshape"}


_PASS_METHODS = {"contiguous", "to", "float", "half", "bfloat16", "int", "long", "clone", "detach"}


class FactorClassifier:
    """Turns one grid axis into classified product factors, following host names from one launch site."""

    def __init__(self, grids: HostResolver, site: cst.CSTNode, launch: Launch | None = None) -> None:
        self.grids = grids
        self.facts = grids.facts
        self.site = site
        self.launch = launch
        self._guards: SiteFacts | None = None
        # the assignment each name is being read from: a name read again inside its own new value
        # (``BLOCK = max(BLOCK, TILE)``) is the value it had before that assignment
        self._reading: dict[str, cst.CSTNode] = {}

    @property
    def guards(self) -> SiteFacts:
        if self._guards is None:
            self._guards = site_facts(self.grids, self.facts, self.site)
        return self._guards

    def factors(self, expr: cst.BaseExpression, depth: int, names: frozenset[str]) -> list[Factor]:
        if type(expr) is cst.BinaryOperation and type(expr.operator) is cst.Multiply:
            found = self.factors(expr.left, depth, names) + self.factors(expr.right, depth, names)
            return self._batch_times_length(self._flattened_rows(found, expr))
        if type(expr) is cst.Name:
            return self._name(expr, depth, names)
        return [self._single(expr, depth, names)]

    @staticmethod
    def _batch_times_length(factors: list[Factor]) -> list[Factor]:
        """``batch * seq_len`` with ``batch = x.shape[0]`` of an activation: the tokens of the batch (the rows of
        ``x`` flattened), also when the length is a literal at this launch."""
        batches = [f for f in factors if f.batch_rows]
        if not batches:
            return factors
        if not any(f not in batches and any(is_token_name(n) for n in f.names) for f in factors):
            return factors
        return [replace(f, tokens=True, host_tokens=True,
                        evidence=f"`{sorted(f.names)[0]}` is the leading dimension of an activation"
                        " times a sequence length") if f.batch_rows else f for f in factors]

    def _flattened_rows(self, factors: list[Factor], expr: cst.BaseExpression) -> list[Factor]:
        """``b * s`` of ``b, s, _ = x.shape``: leading dimensions of one tensor, one of them named as a token count,
        multiply into the rows of the flattened tensor, a total size (``B * H`` of ``B, H, D = q.shape`` does not)."""
        by_tensor: dict[str, list[tuple[int, int, Factor]]] = {}
        for factor in factors:
            item = self.grids.shape_items.get(id(factor.expr))
            if item is not None and factor.kind is Kind.EXTENT:
                by_tensor.setdefault(item[0], []).append((item[1], item[2], factor))
        for dims in by_tensor.values():
            indices = {index for index, _, _ in dims}
            leading = len(indices) >= 2 and indices == set(range(len(indices)))
            if leading and any(is_token_name(name) for _, _, f in dims for name in f.names):
                merged = [f for _, _, f in dims]
                rows = Factor(Kind.TOTAL_SIZE, expr, names=frozenset().union(*(f.names for f in merged)), rows=True,
                              tokens=True, host_tokens=True)
                return [f for f in factors if all(f is not m for m in merged)] + [rows]
        return factors

    def _name(self, expr: cst.Name, depth: int, names: frozenset[str]) -> list[Factor]:
        name = expr.value
        site = self.site
        if name in names:  # read inside its own new value: the value before, else a name defined through itself
            site = self._reading.get(name)
        if depth >= MAX_DEPTH or site is None:
            return [Factor(Kind.UNKNOWN, expr, names=names)]
        names = names | {name}
        bound = self.guards.bounds.get(name)
        if bound is not None:  # if N <= 128: ... kernel[(N,)]
            return [Factor(Kind.LITERAL, expr, value=bound, capped=True, names=names)]
        status, value = self.grids.lookup(name, site)
        if status == "value" and isinstance(value, cst.BaseExpression):
            outer = self._reading.get(name)
            self._reading[name] = self._assignment_of(value)
            try:
                found = [replace(f, names=f.names | names) for f in self.factors(value, depth + 1, names)]
            finally:
                if outer is None:
                    del self._reading[name]
                else:
                    self._reading[name] = outer
        elif status == "value" and type(value) is cst.AugAssign:  # a product of dimensions built in a loop
            found = [Factor(Kind.TOTAL_SIZE, expr, names=names | _receiver_names(value.value))]
        elif status == "param":
            found = [Factor(Kind.EXTENT, expr, names=names)]
        else:
            found = [Factor(Kind.UNKNOWN, expr, names=names)]
        found = self._named(name, found, expr)
        if name in self.guards.core_bounded:  # if total_tiles <= self.cube_core_num: ... kernel[(total_tiles,)]
            found = [replace(f, capped=True) for f in found]
        if len(found) == 1 and found[0].tokens and not found[0].rows and mag.name_bits(name) <= mag.BATCH_BITS:
            found = [replace(found[0], tokens=False, host_tokens=False, evidence="", batch_rows=True,
                             batch_axis=True)]  # batch = x.shape[0]
        if len(found) == 1 and found[0].kind in (*RUNTIME_KINDS, Kind.UNKNOWN) and ROUTED_TILES.fullmatch(name):
            found = [replace(found[0], kind=Kind.TILE_COUNT, tokens=True, host_tokens=True, launch_wide=True,
                             evidence=f"`{name}` counts tiles of the routed tokens")]
        if len(found) == 1 and found[0].kind in RUNTIME_KINDS and not found[0].tokens and is_token_name(name):
            found = [replace(found[0], tokens=True, evidence=found[0].evidence or f"`{name}` counts tokens or rows",
                             host_tokens=found[0].host_tokens or SEQUENCE_LENGTH.fullmatch(name) is not None)]
        return found

    def _assignment_of(self, value: cst.BaseExpression) -> cst.CSTNode | None:
        """The assignment (or loop) that binds ``value``: where a name read again inside it is looked up from."""
        for ancestor in self.grids.index.ancestors(value):
            if type(ancestor) in (cst.Assign, cst.AnnAssign, cst.For):
                return ancestor
            if type(ancestor) in (cst.FunctionDef, cst.Lambda):
                return None
        return None

    @staticmethod
    def _named(name: str, found: list[Factor], expr: cst.Name) -> list[Factor]:
        """A host name that says what it counts refines an opaque value: ``_, num_vectorcore = props()`` is a core
        count, ``H = A_log.numel()`` counts heads (not a whole tensor's size)."""
        if len(found) != 1:
            return found
        factor = found[0]
        core = core_name_kind(name)
        if core is not None and factor.kind in (Kind.EXTENT, Kind.UNKNOWN):
            return [replace(factor, kind=core, expr=expr)]
        if factor.kind is Kind.TOTAL_SIZE and not factor.rows and mag.name_bits(name) <= mag.BATCH_BITS:
            return [replace(factor, kind=Kind.EXTENT)]
        return found

    def _one(self, expr: cst.BaseExpression, depth: int, names: frozenset[str]) -> Factor:
        """The expression as a single factor (a product inside a sum or a division is folded)."""
        return fold(self.factors(expr, depth, names), expr)

    def _single(self, expr: cst.BaseExpression, depth: int, names: frozenset[str]) -> Factor:
        if type(expr) is cst.Integer:
            return Factor(Kind.LITERAL, expr, value=integer_value(expr))
        if type(expr) is cst.Call:
            return self._call(expr, depth, names)
        if type(expr) is cst.Attribute:
            kind = CORE_PROPERTIES.get(expr.attr.value)
            return Factor(kind or Kind.UNKNOWN, expr, names=names)
        if type(expr) is cst.Subscript:
            return self._subscript(expr, depth, names)
        if type(expr) is cst.BooleanOperation and type(expr.operator) is cst.Or:
            return self._override_or_default(expr, depth, names)
        if type(expr) is cst.IfExp:  # NT = cdiv(T, BT) if cu_seqlens is None else len(chunk_indices)
            return self._conditional(expr, depth, names)
        if type(expr) is cst.BinaryOperation:
            if type(expr.operator) in (cst.FloorDivide, cst.Divide):
                numerator, denominator = division_parts(expr) if divides_rounding_up(expr) else (expr.left, expr.right)
                return self._divide(expr, numerator, denominator, depth, names)
            if type(expr.operator) in (cst.Add, cst.Subtract):
                left = self._one(expr.left, depth, names)
                if _is_segment_count(expr, left):
                    return replace(left, kind=Kind.EXTENT, expr=expr)
                return add_factors(left, self._one(expr.right, depth, names), expr)
        return Factor(Kind.UNKNOWN, expr, names=names)

    def _conditional(self, expr: cst.IfExp, depth: int, names: frozenset[str]) -> Factor:
        """``a if test else b``: the faster-growing side that can be taken. A side the test bounds is bounded
        (``g if g < 65536 else 2048``, ``t if t <= cores else min(t, cores * 6)``); a ``x is None`` test that the
        launch's own guard decides (``if max_programs is not None:``) leaves one side."""
        sides = []
        decided = self._decided(expr.test)
        for taken, side in ((True, expr.body), (False, expr.orelse)):
            if decided is not None and decided is not taken:
                continue
            factor = self._one(side, depth, names)
            limit = _side_limit(expr.test, side, taken)
            if limit is not None:
                bound, strict = limit
                value = self.grids.literal_value(bound, self.site)
                if value is not None:
                    factor = Factor(Kind.LITERAL, side, value=value - 1 if strict else value, capped=True,
                                    names=factor.names)
                else:
                    factor = fold_min([factor, self._one(bound, depth, names)], side)
            sides.append(factor)
        return fold_max(sides, expr)

    def _decided(self, test: cst.BaseExpression) -> bool | None:
        """The value of ``x is None`` / ``x is not None`` where the launch is guarded by ``x is not None``."""
        if not (type(test) is cst.Comparison and len(test.comparisons) == 1):
            return None
        target = test.comparisons[0]
        if not (type(test.left) is cst.Name and is_none(target.comparator)):
            return None
        if test.left.value not in self.guards.not_none:
            return None
        if type(target.operator) is cst.Is:
            return False
        return True if type(target.operator) is cst.IsNot else None

    def _override_or_default(self, expr: cst.BooleanOperation, depth: int, names: frozenset[str]) -> Factor:
        """``n_cores or vector_core_count(dev)``: an optional caller override in front of a computed default.

        The default says what the value is meant to be; a core-count default makes the whole a core count.
        """
        left, right = self._one(expr.left, depth, names), self._one(expr.right, depth, names)
        if right.is_core_count and (left.is_core_count
                                    or left.kind in (Kind.EXTENT, Kind.UNKNOWN, Kind.CONSTANT, Kind.LITERAL)):
            return replace(right, expr=expr, names=left.names | right.names)
        return fold_max([left, right], expr)

    def _call(self, call: cst.Call, depth: int, names: frozenset[str]) -> Factor:
        func = call.func
        short = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else ""
        args = [a.value for a in call.args if a.keyword is None and not a.star]
        qualified = self.facts.qualname(func) or dotted_name(func) or ""
        if short in DIVIDE_UP and len(args) == 2:
            return self._divide(call, args[0], args[1], depth, names, rounds_up=True)
        if short == "min" and type(func) is cst.Name and len(args) >= 2:
            return fold_min([self._one(a, depth, names) for a in args], call)
        if short == "max" and type(func) is cst.Name and args:
            return fold_max([self._one(a, depth, names) for a in args], call)
        if (short in _TRANSPARENT_CALLS or qualified in _TRANSPARENT_CALLS) and len(args) == 1:
            return replace(self._one(args[0], depth, names), expr=call)
        if short in _ROOTS and len(args) == 1:
            inner = self._one(args[0], depth, names)
            if inner.kind in RUNTIME_KINDS:
                return Factor(Kind.EXTENT, call, names=inner.names, root=inner.names)
            return replace(inner, expr=call)
        if short == "numel":
            bound = self.guards.numels.get(func.value.value) if type(func) is cst.Attribute and \
                type(func.value) is cst.Name else None
            if bound is not None:  # assert x.numel() == 4096 * 1024
                return Factor(Kind.LITERAL, call, value=bound, capped=True, names=names | _receiver_names(func))
            return Factor(Kind.TOTAL_SIZE, call, names=names | _receiver_names(func))
        if short == "size" and type(func) is cst.Attribute and type(func.value) is cst.Name and len(args) == 1:
            bound = self.guards.dim_bound(func.value.value, hf.literal_dim(args[0]))
            if bound is not None:  # assert x.size(0) <= 512
                return Factor(Kind.LITERAL, call, value=bound, capped=True, names=names | _receiver_names(func))
        if short == "prod" and len(args) == 1 and _is_shape_slice(args[0]):  # math.prod(shape[:dim])
            return Factor(Kind.TOTAL_SIZE, call, names=names | _receiver_names(args[0]))
        if short in ("size", "len", "dim"):
            tensor = hf.receiver(func.value if short == "size" and type(func) is cst.Attribute else args[0]) if (
                short != "dim" and (args or short == "size")) else None
            dim = 0 if short == "len" else hf.literal_dim(args[0]) if args else None
            tokens = tensor is not None and short != "dim" and dim == 0 and hf.leading_dimension_counts_rows(tensor)
            kind = Kind.TILE_COUNT if tokens and TILE_LIST.search(tensor) else Kind.EXTENT
            return Factor(kind, call, names=names | _receiver_names(func) | _receiver_names(*args[:1]),
                          tokens=tokens, host_tokens=tokens and hf.is_activation(tensor), evidence=f"`{self.facts.module.code_for_node(call)}` counts rows" if tokens
                          else "")
        core = core_function_kind(short)
        if core is not None:
            return Factor(core, call, names=names)
        helper = helper_literals(self.facts, call)
        if helper and not isinstance(helper[0], tuple):  # a helper that returns one of a few literals
            return Factor(Kind.LITERAL, call, value=max(helper), names=names)
        return Factor(Kind.UNKNOWN, call, names=names)

    def _subscript(self, expr: cst.Subscript, depth: int, names: frozenset[str]) -> Factor:
        helper = helper_item_literals(self.facts, expr)
        if helper:  # BM, BN = _tiles(M, N): an item of a helper's literal tuples
            return Factor(Kind.LITERAL, expr, value=max(helper), names=names)
        key = expr.slice[0].slice if len(expr.slice) == 1 else None
        index = key.value if type(key) is cst.Index else None
        if type(index) is cst.SimpleString:
            text = index.evaluated_value
            if text in CORE_PROPERTIES:
                return Factor(CORE_PROPERTIES[text], expr, names=names)
            if self._is_lambda_param(expr.value):
                return self._meta(text, expr, depth, names)
            return Factor(Kind.UNKNOWN, expr, names=names)
        receivers = _receiver_names(expr.value)
        if is_integer(index, 0) and self._is_flattened(expr.value):
            return Factor(Kind.TOTAL_SIZE, expr, names=names | receivers, rows=True, tokens=True, host_tokens=True)
        item = self.grids.shape_items.get(id(expr))
        tensor, dim = (item[0], item[1]) if item is not None else (hf.receiver(expr.value), hf.literal_dim(index))
        asserted = self._asserted_dim(expr.value, tensor, dim)
        if asserted is not None:  # assert x.shape == (4096, 1024) before the launch
            return Factor(Kind.LITERAL, expr, value=asserted, capped=True, names=names | receivers)
        shape = expr.value
        if type(shape) is cst.Name:  # shape = dY.shape; batch = shape[0]
            status, value = self.grids.lookup(shape.value, self.site)
            if status == "value" and type(value) is cst.Attribute and value.attr.value == "shape":
                shape, tensor = value, hf.receiver(value)
        tokens = (type(shape) is cst.Attribute and shape.attr.value == "shape" and dim == 0
                  and tensor is not None and hf.leading_dimension_counts_rows(tensor)
                  and (item is None or item[2] <= 3))  # [B, T, H, D]: the leading axis is the batch
        kind = Kind.TILE_COUNT if tokens and TILE_LIST.search(tensor) else Kind.EXTENT
        batch = dim == 0 and item is not None and item[2] >= 3
        sequence = dim == 1 and item is not None and (item[2] >= 3 and hf.is_per_token(tensor)  # T of [B, T, H, K]
                                                      or item[2] == 2 and hf.is_token_ids(tensor))  # [B, seq_len]
        tokens = tokens or sequence and item[2] == 2
        host = tokens and hf.is_activation(tensor) or sequence
        return Factor(kind, expr, names=names | receivers, tokens=tokens, batch_axis=batch, host_tokens=host,
                      evidence=f"`{tensor}.shape[0]` counts rows" if tokens else "")

    def _asserted_dim(self, shape: cst.BaseExpression, tensor: str | None, dim: int | None) -> int | None:
        """The literal a guard before the launch bounds ``tensor.shape[dim]`` by, read where the shape is the
        tensor's own (``x.shape[0]``, or a name unpacked from ``x.shape``)."""
        guards = self.guards
        if not guards.dims or tensor is None or dim is None:
            return None
        if type(shape) is cst.Attribute and shape.attr.value == "shape" and type(shape.value) is cst.Name \
                and shape.value.value == tensor:
            return guards.dim_bound(tensor, dim)
        return None

    def _meta(self, key: str, expr: cst.Subscript, depth: int, names: frozenset[str]) -> Factor:
        """``meta["M"]`` in a grid function: what the launch passes for ``M`` (a runtime size for an int
        parameter, a host tile size for a constexpr); a constant chosen by autotuning when the launch passes none."""
        passed = launch_argument(self.launch, key) if self.launch is not None else None
        if passed is None or depth >= MAX_DEPTH:
            return Factor(Kind.CONSTANT, expr, names=names)
        found = self._one(passed, depth + 1, names)
        return replace(found, names=found.names | {key})

    def _is_flattened(self, shape: cst.BaseExpression) -> bool:
        """``x.view(-1, D).shape``, or ``g.shape`` after ``g = g.reshape(-1, D)``: its first dimension is every row
        of the tensor folded into one."""
        if not (type(shape) is cst.Attribute and shape.attr.value == "shape"):
            return False
        tensor = shape.value
        for _ in range(MAX_DEPTH):
            if type(tensor) is cst.Name:
                status, value = self.grids.lookup(tensor.value, self.site)
                if status != "value" or not isinstance(value, cst.BaseExpression) or value is tensor:
                    return False
                tensor = value
                continue
            if not (type(tensor) is cst.Call and type(tensor.func) is cst.Attribute):
                return False
            method = tensor.func.attr.value
            if method in _RESHAPES:
                args = [a.value for a in tensor.args if a.keyword is None and not a.star]
                return len(args) >= 2 and _is_minus_one(args[0])
            if method not in _PASS_METHODS:
                return False
            tensor = tensor.func.value
        return False

    def _is_model_dimension(self, numerator: cst.BaseExpression, folded: Factor) -> bool:
        """A head dim or hidden size, as spelled at the division (``cdiv(V, BV)``, ``cdiv(head_dim, BD)``,
        ``cdiv(meta["D"], meta["BD"])``) or as resolved (the last dimension of a tensor of rank 3 or more)."""
        spelled = numerator.value if type(numerator) is cst.Name else string_key(numerator)
        if spelled is not None and MODEL_DIM.fullmatch(spelled):
            return True
        item = self.grids.shape_items.get(id(folded.expr))  # [B, T, H, D]: not a matrix's columns (GEMM N)
        return item is not None and item[2] >= 3 and item[1] == item[2] - 1

    def _is_lambda_param(self, expr: cst.BaseExpression) -> bool:
        """``meta`` in ``lambda meta: ...`` or ``def grid(meta)``: the launch's compile-time meta-parameters."""
        if type(expr) is not cst.Name:
            return False
        for ancestor in self.grids.index.ancestors(expr):
            if type(ancestor) in (cst.Lambda, cst.FunctionDef):
                params = ancestor.params
                return expr.value in {p.name.value for p in (*params.posonly_params, *params.params)}
        return False

    def _divide(self, expr, numerator, denominator, depth, names, rounds_up: bool = False) -> Factor:
        top = self.factors(numerator, depth, names)
        bottom = self._one(denominator, depth, names)
        folded = fold(top, numerator)
        if folded.is_core_count:
            return replace(folded, expr=expr)
        if folded.kind is Kind.LITERAL and bottom.kind is Kind.LITERAL and folded.value is not None and bottom.value:
            return Factor(Kind.LITERAL, expr, value=-(-folded.value // bottom.value))
        if folded.kind in (Kind.LITERAL, Kind.CONSTANT) or spells_tile(numerator) and is_tile_size(bottom, denominator):
            return Factor(Kind.CONSTANT, expr, names=folded.names)  # cdiv(BT, BC): sub-tiles of one tile
        shared = bottom.share
        if shared is not None and shared[2] & folded.names:  # cdiv(n, ceil(n / CORES)): about CORES programs
            kind, value, _ = shared
            return Factor(kind, expr, value=value, names=folded.names | bottom.names)
        if bottom.root & folded.names and root_split_bounded(bottom):  # cdiv(n, next_power_of_2(sqrt(n)))
            return Factor(Kind.EXTENT, expr, names=folded.names | bottom.names)
        runtime = sum(f.weight for f in top if f.kind in RUNTIME_KINDS or f.kind is Kind.UNKNOWN)
        share = None
        if folded.kind in RUNTIME_KINDS and (bottom.is_core_count or bottom.kind in (Kind.LITERAL, Kind.CONSTANT)):
            share = (bottom.kind, bottom.value, folded.names)
        if folded.kind is Kind.TOTAL_SIZE and not folded.rows or runtime >= 3:
            kind = Kind.TOTAL_SIZE  # ``cdiv(x.numel(), BLOCK)``; the rows of a flattened tensor are tokens
        elif not rounds_up and not divides_rounding_up(expr) and not is_tile_size(bottom, denominator):
            kind = Kind.EXTENT  # ``N // group_size``: a ratio of two sizes, not a count of tiles
        else:
            kind = Kind.TILE_COUNT
        return Factor(
            kind,
            expr,
            capped=folded.capped,
            weight=max(1, runtime),
            names=folded.names | bottom.names,
            share=share,
            model_bounded=kind is Kind.TILE_COUNT and self._is_model_dimension(numerator, folded),
            rows=folded.rows,
            tokens=(folded.tokens or folded.batch_rows) and kind is not Kind.EXTENT,
            host_tokens=(folded.host_tokens or folded.batch_rows) and kind is not Kind.EXTENT,
            evidence=folded.evidence or (f"`{sorted(folded.names)[0]}` is the leading dimension of an activation,"
                                         " tiled by the host" if folded.batch_rows and kind is Kind.TILE_COUNT else ""),
            wide=kind is Kind.TILE_COUNT and self._weight_rows(folded) and self._small_tile(denominator),
            tile=self._literal_tile(bottom, denominator),
        )

    def _literal_tile(self, bottom: Factor, denominator: cst.BaseExpression) -> int | None:
        choices = [c for c in self.grids.literal_choices(denominator, self.site, 0) if c > 0]
        if choices:
            return min(choices)  # the smallest tile the host can pick counts the most programs
        if bottom.kind is Kind.LITERAL and bottom.value:  # min(..., 2048): at most the cap
            return bottom.value
        return None

    def _weight_rows(self, folded: Factor) -> bool:
        """The leading dimension of a weight (``D, W = weight.shape``): its output channels or features."""
        item = self.grids.shape_items.get(id(folded.expr))
        if item is not None:
            return item[1] == 0 and item[2] == 2 and hf.is_weight(item[0])
        expr = folded.expr
        return (type(expr) is cst.Subscript and type(expr.value) is cst.Attribute and expr.value.attr.value == "shape"
                and len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index
                and hf.literal_dim(expr.slice[0].slice.value) == 0 and hf.is_weight(hf.receiver(expr.value) or ""))

    def _small_tile(self, denominator: cst.BaseExpression) -> bool:
        """Every value the host gives the tile is a literal of at most 16."""
        choices = self.grids.literal_choices(denominator, self.site, 0)
        return bool(choices) and max(choices) <= 16


def _side_limit(test: cst.BaseExpression, side: cst.BaseExpression, taken: bool):
    """(bound, strict) when ``test`` bounds ``side`` on the branch where it is ``taken``: ``g`` in
    ``g if g < 65536 else ...`` is below 65536, ``t`` in ``... if t > cap else t`` is at most ``cap``."""
    if not (type(test) is cst.Comparison and len(test.comparisons) == 1):
        return None
    operator, left, right = test.comparisons[0].operator, test.left, test.comparisons[0].comparator
    below = {cst.LessThan: True, cst.LessThanEqual: False}  # left below right when true
    above = {cst.GreaterThan: True, cst.GreaterThanEqual: False}  # left above right when true
    kind = type(operator)
    if taken:
        if left.deep_equals(side) and kind in below:
            return right, below[kind]
        if right.deep_equals(side) and kind in above:
            return left, above[kind]
    else:
        if left.deep_equals(side) and kind in above:  # not (g > cap): g <= cap
            return right, not above[kind]
        if right.deep_equals(side) and kind in below:  # not (cap < g): g <= cap
            return left, not below[kind]
    return None


def _is_shape_slice(expr: cst.BaseExpression) -> bool:
    """``x.shape``, ``x.shape[:dim]`` or ``shape[1:]``: several dimensions of a tensor."""
    if type(expr) is cst.Subscript:
        if not (len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Slice):
            return False
        expr = expr.value
    if type(expr) is cst.Attribute:
        return expr.attr.value == "shape"
    return type(expr) is cst.Name and "shape" in expr.value.lower()


def _receiver_names(*exprs: cst.BaseExpression) -> frozenset[str]:
    """The variable a method or attribute chain starts from: ``part`` in ``part.numel`` or ``part.shape[0]``."""
    found = set()
    for expr in exprs:
        while type(expr) in (cst.Attribute, cst.Subscript, cst.Call):
            expr = expr.func if type(expr) is cst.Call else expr.value
        if type(expr) is cst.Name:
            found.add(expr.value)
    return frozenset(found)


def _is_segment_count(expr: cst.BinaryOperation, left: Factor) -> bool:
    """``offsets.numel() - 1``: the number of segments an offsets array delimits, not a total size."""
    return (
        type(expr.operator) is cst.Subtract
        and is_integer(expr.right, 1)
        and left.kind is Kind.TOTAL_SIZE
        and type(expr.left) is cst.Call
        and type(expr.left.func) is cst.Attribute
        and expr.left.func.attr.value == "numel"
    )


def _is_minus_one(node) -> bool:
    return (
        type(node) is cst.UnaryOperation
        and type(node.operator) is cst.Minus
        and is_integer(node.expression, 1)
    )
