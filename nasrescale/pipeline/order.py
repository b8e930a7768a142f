"""The order in which sliced runs visit a pipeline's cells: *spread order*.

The van der Corput sequence over the selection order: when the selection is ordered by benchmark
accuracy, as a stratified one is, every prefix of the visiting order covers the whole accuracy
range, so what is finished after any slice is itself a stratified sample.

>>> spread_order(8)
[0, 4, 2, 6, 1, 5, 3, 7]
>>> spread_order(6)
[0, 3, 1, 4, 2, 5]
>>> sorted(spread_order(5)) == list(range(5))
True
"""

from __future__ import annotations

from typing import Sequence

__all__ = ["spread_order", "visit_cells"]


def _radical_inverse(k: int) -> float:
    """``k``'s binary digits mirrored behind the point (van der Corput): 0, 1/2, 1/4, 3/4, 1/8..."""
    value, scale = 0.0, 0.5
    while k:
        k, bit = divmod(k, 2)
        value, scale = value + bit * scale, scale / 2
    return value


def spread_order(n: int) -> list[int]:
    """``0..n-1`` in van der Corput order: for every power of two ``m <= n``, the first ``m``
    indices fall one in each of ``m`` equal parts of the range (and other prefixes nearly so)."""
    order: list[int] = []
    seen: set[int] = set()
    k = 0
    while len(order) < n:
        i = int(_radical_inverse(k) * n)
        if i not in seen:
            seen.add(i)
            order.append(i)
        k += 1
    return order


def visit_cells(archs: Sequence[str]) -> list[str]:
    """The pipeline's architectures in the order slices visit them."""
    return [archs[i] for i in spread_order(len(archs))]
