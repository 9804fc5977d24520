r"""Candidate neighbouring datasets of records, for mechanisms whose bugs hide at the edges of the record domain.

:func:`.tester.statdp_pairs` gives StatDP's patterns for query-answer vectors
(Ding, Wang, Wang, Zhang & Kifer, CCS 2018, Table 1): all queries move, or one,
up or down. A mechanism on records needs the same idea one level lower: a
truncated Laplace count is wrong only where the count sits at its bounds, and
a randomized response whose prior is computed from the data is wrong only when
the changed record moves that prior. :func:`record_neighbours` builds, for a
record domain (a finite set of records, or a box [lo, hi] per column) and a
dataset size n:

* base datasets: all-same datasets of each extreme record (a box's lower and
  upper corners and its centre; a finite domain's records), half one extreme
  and half another, and ``random_datasets`` datasets drawn uniformly from the
  domain with ``rng``;
* neighbours under the relation asked: ``"replace_one"`` replaces the record at
  each of ``positions`` (first, last) by each extreme record that differs from
  it (one-different datasets, duplicates of an extreme included);
  ``"add_remove"`` appends each extreme record and removes the first and the
  last record.

Pairs equal as ordered arrays (or reversed) are listed once. The list is a set
of candidates for :func:`.tester.find_violation` (pass it as ``pairs``), which
tests both orders of each; a pair not listed is not tested, so a search that
finds nothing on them says nothing about other pairs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import validation as check

RELATIONS = ("replace_one", "add_remove")
POSITIONS = ("first", "last")
# A finite domain with more records than this contributes its first, last and a uniform draw of the rest as extremes.
LARGEST_EXTREMES = 8


@dataclass(frozen=True)
class RecordBox:
    """Numeric records with each column in [lower_j, upper_j]; ``lower``, ``upper``: scalars or 1-D arrays of one length."""

    lower: ArrayLike
    upper: ArrayLike

    def __post_init__(self) -> None:
        lower = np.atleast_1d(check.real_array("lower", self.lower, "a finite real number or 1-D array")).astype(float)
        upper = np.atleast_1d(check.real_array("upper", self.upper, "a finite real number or 1-D array")).astype(float)
        if lower.ndim != 1 or lower.shape != upper.shape or not np.all(np.isfinite(lower) & np.isfinite(upper)):
            raise ValueError(f"lower and upper must be finite 1-D arrays of one length (got shapes {lower.shape} and {upper.shape})")
        if np.any(lower > upper):
            raise ValueError(f"lower must be <= upper in every column (got {lower} and {upper})")
        object.__setattr__(self, "lower", lower)
        object.__setattr__(self, "upper", upper)

    @property
    def corners(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(lower, upper) as the 1-D float arrays ``__post_init__`` stored."""
        return np.asarray(self.lower, dtype=np.float64), np.asarray(self.upper, dtype=np.float64)

    @property
    def scalar(self) -> bool:
        return self.corners[0].size == 1


def _extremes(domain: RecordBox | ArrayLike, rng: np.random.Generator) -> tuple[list[str], NDArray[np.generic]]:
    """(names, records): the extreme records of a domain, one row each (scalars as length-1 rows)."""
    if isinstance(domain, RecordBox):
        lower, upper = domain.corners
        return ["lo", "hi", "mid"], np.stack([lower, upper, 0.5 * (lower + upper)])
    records = np.asarray(domain)
    if records.ndim not in (1, 2) or records.shape[0] == 0:
        raise ValueError(f"domain must be a RecordBox or a non-empty 1-D or 2-D array of records, one per row (got shape {records.shape})")
    rows = records.reshape(records.shape[0], -1)
    _, first = np.unique(rows, axis=0, return_index=True)
    rows = rows[np.sort(first)]
    if rows.shape[0] > LARGEST_EXTREMES:
        middle = rng.choice(np.arange(1, rows.shape[0] - 1), size=LARGEST_EXTREMES - 2, replace=False)
        rows = rows[np.r_[0, np.sort(middle), rows.shape[0] - 1]]
    return [repr(row[0].item()) if row.size == 1 else repr(row.tolist()) for row in rows], rows


def _random_records(domain: RecordBox | ArrayLike, count: int, rng: np.random.Generator) -> NDArray[np.generic]:
    if isinstance(domain, RecordBox):
        lower, upper = domain.corners
        return lower + (upper - lower) * rng.random((count, lower.size))
    records = np.asarray(domain)
    rows = records.reshape(records.shape[0], -1)
    return rows[rng.integers(0, rows.shape[0], size=count)]


def record_neighbours(
    domain: RecordBox | ArrayLike,
    size: int,
    relation: str = "replace_one",
    rng: np.random.Generator | int | None = None,
    *,
    random_datasets: int = 2,
    positions: str | Iterable[str] = POSITIONS,
) -> list[tuple[str, NDArray[np.generic], NDArray[np.generic]]]:
    """Candidate neighbouring datasets (name, D, D') of ``size`` records from ``domain``; see the module docstring.

    Args:
        domain: a :class:`RecordBox`, or a finite set of records (1-D array of scalar records, or 2-D,
            one record per row).
        size: records in each base dataset, >= 1 (with ``"add_remove"`` the neighbours have size ± 1).
        relation: ``"replace_one"`` or ``"add_remove"``.
        rng: ``numpy.random.Generator`` or integer seed, for the random datasets (and for the extremes of
            a finite domain of more than ``LARGEST_EXTREMES`` records).
        random_datasets: >= 0 random base datasets.
        positions: a non-empty subset of ``("first", "last")``, where ``"replace_one"`` replaces a record.

    Returns:
        A list of (name, D, D'): D and D' numpy arrays, shape (n,) for scalar records and (n, d) otherwise.
    """
    size = check.integer_scalar("size", size, 1)
    relation = check.choice("relation", relation, RELATIONS)
    generator = check.generator("rng", rng)
    random_datasets = check.integer_scalar("random_datasets", random_datasets, 0)
    positions = (positions,) if isinstance(positions, str) else tuple(positions)
    if not positions or any(position not in POSITIONS for position in positions):
        raise ValueError(f"positions must be a non-empty subset of {POSITIONS} (got {positions!r})")
    names, extremes = _extremes(domain, generator)
    scalar = extremes.shape[1] == 1 and (isinstance(domain, RecordBox) or np.asarray(domain).ndim == 1)

    bases = [(f"all {name}", np.repeat(record[None, :], size, axis=0)) for name, record in zip(names, extremes)]
    if len(names) >= 2 and size >= 2:
        half = size // 2
        bases.append((f"half {names[0]} half {names[1]}",
                      np.concatenate([np.repeat(extremes[:1], size - half, axis=0), np.repeat(extremes[1:2], half, axis=0)])))
    bases += [(f"random {index}", _random_records(domain, size, generator)) for index in range(random_datasets)]

    pairs: list[tuple[str, NDArray[np.generic], NDArray[np.generic]]] = []
    seen: set[tuple[tuple[int, ...], bytes, tuple[int, ...], bytes]] = set()

    def add(name: str, first: NDArray[np.generic], second: NDArray[np.generic]) -> None:
        key = (first.shape, first.tobytes(), second.shape, second.tobytes())
        if key in seen or (key[2:] + key[:2]) in seen:
            return
        seen.add(key)
        pairs.append((name, first[:, 0] if scalar else first, second[:, 0] if scalar else second))

    for base_name, base in bases:
        if relation == "replace_one":
            for position in positions:
                index = 0 if position == "first" else size - 1
                for name, record in zip(names, extremes):
                    if np.array_equal(base[index], record):
                        continue
                    neighbour = base.copy()
                    neighbour[index] = record
                    add(f"{base_name}, {position} -> {name}", base, neighbour)
        else:
            for name, record in zip(names, extremes):
                add(f"{base_name}, add {name}", base, np.concatenate([base, record[None, :]]))
            add(f"{base_name}, remove first", base, base[1:])
            add(f"{base_name}, remove last", base, base[:-1])
    return pairs
