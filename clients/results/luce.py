"""The numerical fit behind the ratings (ratings.py): maximum a posteriori Plackett-Luce strengths,
many fits at once (the bootstrap's samples), in work proportional to the choices.

A choice involves the two or three bots of its field, so every array here is choices x seats
(padded to the widest field), never choices x bots: the gradient and the information matrix's
products are gathers from, and scatters (``np.bincount``) to, the bots. Newton's method with
backtracking maximises each sample's log-likelihood; its step is solved exactly (batched dense
solve) up to ``DENSE`` bots, and beyond by conjugate gradients on the sparse information matrix,
preconditioned by its diagonal, to a tolerance that tightens as the gradient falls (an inexact
Newton method: the answer is the same maximum, to the same gradient). The bootstrap's samples
start from the full fit, which is near each of them: a few steps each.

Why our own numpy code rather than choix (the well-kept library for Luce-model inference): choix
takes unweighted observations (lucasmaystre/choix#22) and regularises with an L2 penalty, while
these fits need fractional counts (a shared pairwise place is half a choice each way; a bootstrap
sample counts a set 0, 1, 2... times) and the virtual-draws prior the published tables were
computed with, which must keep matching to 1e-6 Elo; choix fits one data set at a time in Python
loops where the bootstrap needs a thousand at once; and it would bring scipy into the runtime
install. numpy is already a dependency.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Flags = npt.NDArray[np.bool_]
Indices = npt.NDArray[np.intp]
Choice = tuple[tuple[str, ...], tuple[str, ...]]
"""(the bots chosen, the field they were chosen from), both sorted."""

DENSE = 48
"""Up to this many bots a Newton step is solved exactly; beyond, by conjugate gradients."""
GRADIENT = 1e-10
"""A fit is done when no bot's gradient (in choices) is larger."""
STEPS = 100


class Counts:
    """Choice counts per part (a duplicate set, say), sparse: each part touches a few choices."""

    def __init__(self, parts: int, choices: int, rows: Indices, columns: Indices, values: Floats) -> None:
        self.parts, self.choices = parts, choices
        order = np.argsort(columns, kind="stable")
        self.rows, self.columns, self.values = rows[order], columns[order], values[order]
        self.used, self.starts = np.unique(self.columns, return_index=True)

    def total(self) -> Floats:
        """One row: every part counted once."""
        return np.bincount(self.columns, weights=self.values, minlength=self.choices)[None, :]

    def weighted(self, weights: Floats) -> Floats:
        """A row of choice counts per row of ``weights`` (how often each part is counted)."""
        out = np.zeros((len(weights), self.choices))
        if self.values.size:
            out[:, self.used] = np.add.reduceat(weights[:, self.rows] * self.values, self.starts, axis=1)
        return out


class Evidence:
    """Choices over one sorted list of bots, as index arrays: ``members[c]`` the bots of choice c's
    field (padded with ``len(bots)``, no one), ``chosen[c]`` which of them were chosen. Every pair
    of bots that share a field also has its two one-of-two choices, where the prior puts its
    virtual draws."""

    def __init__(self, found: Iterable[Choice]) -> None:
        keys = set(found)
        pairs = sorted({(a, b) for _, among in keys for i, a in enumerate(among) for b in among[i + 1 :]})
        keys.update(((bot,), pair) for pair in pairs for bot in pair)
        self.choices = sorted(keys)
        self.bots = sorted({bot for _, among in self.choices for bot in among})
        self.column = {choice: c for c, choice in enumerate(self.choices)}
        index = {bot: i for i, bot in enumerate(self.bots)}
        players, width = len(self.bots), max((len(among) for _, among in self.choices), default=1)
        self.members = np.full((len(self.choices), width), players, dtype=np.intp)
        self.chosen = np.zeros((len(self.choices), width))
        for c, (chosen, among) in enumerate(self.choices):
            self.members[c, : len(among)] = [index[bot] for bot in among]
            self.chosen[c, : len(among)] = [bot in chosen for bot in among]
        self.in_field = self.members < players
        self.picks = self.chosen.sum(axis=1)
        self.pairs = np.array([(index[a], index[b]) for a, b in pairs], dtype=np.intp).reshape(-1, 2)
        self.pair_choices = np.array(
            [(self.column[(a,), (a, b)], self.column[(b,), (a, b)]) for a, b in pairs], dtype=np.intp
        ).reshape(-1, 2)
        number = {pair: q for q, pair in enumerate(pairs)}
        held = sorted(
            (number[a, b], c)
            for c, (_, among) in enumerate(self.choices)
            for i, a in enumerate(among)
            for b in among[i + 1 :]
        )
        self.held = np.array(held, dtype=np.intp).reshape(-1, 2)  # (pair, a choice whose field holds it)
        _, self.held_starts = np.unique(self.held[:, 0], return_index=True)
        over = [
            (c, index[i], index[j])
            for c, (chosen, among) in enumerate(self.choices)
            for i in chosen
            for j in among
            if j != i
        ]
        self.over = np.array(over, dtype=np.intp).reshape(-1, 3)  # (choice, i chosen over j)

    def counts(self, parts: Sequence[Mapping[Choice, float]]) -> Counts:
        """The choice counts of each part."""
        entries = [(row, self.column[choice], n) for row, part in enumerate(parts) for choice, n in part.items()]
        rows, columns, values = zip(*entries, strict=True) if entries else ((), (), ())
        return Counts(
            len(parts),
            len(self.choices),
            np.array(rows, dtype=np.intp),
            np.array(columns, dtype=np.intp),
            np.array(values, dtype=float),
        )

    def fit(self, counts: Floats, prior: float, start: Floats | None = None) -> tuple[Floats, Flags]:
        """Natural-log strengths, a row per row of ``counts`` (NaN for a bot absent from it), each
        linked group's mean 0; and which rows have a finite maximum (all of them with a prior)."""
        if prior < 0:
            raise ValueError(f"the prior is a number of virtual draws, not {prior}")
        rows, players = len(counts), len(self.bots)
        if not players:
            return np.zeros((rows, 0)), np.ones(rows, dtype=bool)
        real = counts > 0
        met = np.zeros((rows, len(self.pairs)), dtype=bool)
        if len(self.held):
            met[:, self.held[self.held_starts, 0]] = np.logical_or.reduceat(
                real[:, self.held[:, 1]], self.held_starts, axis=1
            )
        n = np.where(real, counts, 0.0)
        n[:, self.pair_choices[:, 0]] += prior / 2 * met
        n[:, self.pair_choices[:, 1]] += prior / 2 * met
        both = np.concatenate([self.pairs, self.pairs[:, ::-1]])
        linked = _lowest_reaching(players, both, np.concatenate([met, met], axis=1))
        finite: Flags = np.ones(rows, dtype=bool)
        if not prior:  # finite only if, within each group, everyone was chosen over everyone, by a chain
            active = real[:, self.over[:, 0]]
            ahead = _lowest_reaching(players, self.over[:, 1:], active)
            behind = _lowest_reaching(players, self.over[:, :0:-1], active)
            finite = np.all((ahead == linked) & (behind == linked), axis=1)
        r = np.zeros((rows, players)) if start is None else np.tile(np.nan_to_num(start), (rows, 1))
        r = self._newton(r, n, linked)
        r -= _group_means(r, linked)
        present = self._scatter(np.broadcast_to(real[:, :, None] & self.in_field, (rows, *self.members.shape)))
        r[present == 0] = np.nan
        return r, finite

    def _newton(self, r: Floats, n: Floats, linked: Indices) -> Floats:
        """Maximise each row's log-likelihood by Newton's method with backtracking. It is concave
        and flat only along each group's common offset: the dense step adds the averaging over
        each group to the information matrix, which keeps the groups' means where they are;
        conjugate gradients from 0 never leave the gradient's span, where the matrix is regular."""
        current = self._log_likelihood(r, n)
        active = np.arange(len(r))
        for _ in range(STEPS):
            shares, _ = self._shares(r[active])
            grad = self._gradient(n[active], shares)
            size = np.abs(grad).max(axis=1, initial=0.0)
            going = size >= GRADIENT
            active, grad, shares, size = active[going], grad[going], shares[going], size[going]
            if not active.size:
                break
            weight = n[active] * self.picks
            if len(self.bots) <= DENSE:
                mean = linked[active, :, None] == linked[active, None, :]
                mean = mean / mean.sum(axis=2, keepdims=True)
                step = np.linalg.solve(self._information(weight, shares) + mean, grad[..., None])[..., 0]
            else:
                step = self._conjugate_gradients(weight, shares, grad, np.minimum(0.1, np.sqrt(size)))
            scale = np.ones(len(active))
            trial = r[active] + step
            value = self._log_likelihood(trial, n[active])
            worse = value < current[active] - 1e-12
            while worse.any():
                scale[worse] /= 2
                trial[worse] = r[active[worse]] + scale[worse, None] * step[worse]
                value[worse] = self._log_likelihood(trial[worse], n[active[worse]])
                worse &= (value < current[active] - 1e-12) & (scale >= 1e-6)
            r[active], current[active] = trial, value
        return r

    def _gather(self, values: Floats, padding: float) -> Floats:
        """Each choice's field of per-bot ``values`` (rows x choices x seats)."""
        padded = np.concatenate([values, np.full((len(values), 1), padding)], axis=1)
        gathered: Floats = padded[:, self.members]
        return gathered

    def _scatter(self, values: npt.ArrayLike) -> Floats:
        """Per-seat ``values`` (rows x choices x seats) summed onto their bots (rows x bots)."""
        values = np.asarray(values, dtype=float)
        rows, players = len(values), len(self.bots)
        at = np.arange(rows)[:, None, None] * (players + 1) + self.members
        total = np.bincount(at.ravel(), weights=values.ravel(), minlength=rows * (players + 1))
        summed: Floats = total.reshape(rows, players + 1)[:, :players]
        return summed

    def _shares(self, r: Floats) -> tuple[Floats, Floats]:
        """Each seat's chance to be picked from its choice's field, and log of the field's total."""
        x = self._gather(r, -np.inf)
        top = x.max(axis=2, keepdims=True)  # log-sum-exp without overflow
        weights = np.exp(x - top)
        total = weights.sum(axis=2, keepdims=True)
        return weights / total, (top + np.log(total))[..., 0]

    def _log_likelihood(self, r: Floats, n: Floats) -> Floats:
        _, log_field = self._shares(r)
        chosen = (self._gather(r, 0.0) * self.chosen).sum(axis=2)
        result: Floats = (n * (chosen - self.picks * log_field)).sum(axis=1)
        return result

    def _gradient(self, n: Floats, shares: Floats) -> Floats:
        return self._scatter(n[..., None] * (self.chosen - self.picks[:, None] * shares))

    def _information(self, weight: Floats, shares: Floats) -> Floats:
        """The information matrix (minus the Hessian), dense: rows x bots x bots."""
        rows, players = len(weight), len(self.bots)
        side = players + 1
        at = (
            np.arange(rows)[:, None, None, None] * side * side
            + self.members[:, :, None] * side
            + self.members[:, None, :]
        )
        seats = self.members.shape[1]
        cell = np.eye(seats)[None, None] * shares[..., None] - shares[..., :, None] * shares[..., None, :]
        total = np.bincount(
            at.ravel(), weights=(weight[..., None, None] * cell).ravel(), minlength=rows * side * side
        )
        info: Floats = total.reshape(rows, side, side)[:, :players, :players]
        return info

    def _times_information(self, weight: Floats, shares: Floats, v: Floats) -> Floats:
        """The information matrix times ``v``, row by row, without forming it."""
        field = self._gather(v, 0.0)
        mean = (shares * field).sum(axis=2, keepdims=True)
        return self._scatter(weight[..., None] * shares * (field - mean))

    def _conjugate_gradients(self, weight: Floats, shares: Floats, grad: Floats, tolerance: Floats) -> Floats:
        """The Newton step, to ``tolerance`` of the gradient's size (per row), by conjugate
        gradients preconditioned by the information matrix's diagonal."""
        diagonal = self._scatter(weight[..., None] * shares * (1 - shares))
        inverse = np.where(diagonal > 0, 1 / np.where(diagonal > 0, diagonal, 1), 0.0)
        x = np.zeros_like(grad)
        residual = grad.copy()
        z = inverse * residual
        direction = z.copy()
        rz = (residual * z).sum(axis=1)
        goal = tolerance * np.linalg.norm(grad, axis=1)
        for _ in range(10 * len(self.bots)):
            going = np.linalg.norm(residual, axis=1) > goal
            if not going.any():
                break
            product = self._times_information(weight[going], shares[going], direction[going])
            curvature = (direction[going] * product).sum(axis=1)
            alpha = np.where(curvature > 0, rz[going] / np.where(curvature > 0, curvature, 1), 0.0)
            x[going] += alpha[:, None] * direction[going]
            residual[going] -= alpha[:, None] * product
            z_new = inverse[going] * residual[going]
            rz_new = (residual[going] * z_new).sum(axis=1)
            beta = np.where(rz[going] > 0, rz_new / np.where(rz[going] > 0, rz[going], 1), 0.0)
            direction[going] = z_new + beta[:, None] * direction[going]
            rz[going] = rz_new
        return x


def _lowest_reaching(players: int, edges: Indices, active: Flags) -> Indices:
    """Per row, for every bot the lowest-numbered bot from which the row's ``active`` edges
    (``edges``: from, to) lead to it (itself if none): over undirected edges (both ways given),
    each group's lowest bot. Label propagation with pointer jumping: a few passes of the edges."""
    rows = len(active)
    labels = np.tile(np.arange(players, dtype=np.intp), (rows, 1))
    if not len(edges):
        return labels
    order = np.argsort(edges[:, 1], kind="stable")
    source, target = edges[order, 0], edges[order, 1]
    active = active[:, order]
    ends, starts = np.unique(target, return_index=True)
    while True:
        arriving = np.where(active, labels[:, source], players)
        lowest = np.minimum.reduceat(arriving, starts, axis=1)
        new = labels.copy()
        new[:, ends] = np.minimum(labels[:, ends], lowest)
        new = np.take_along_axis(new, new, axis=1)  # a label's own label reaches it too
        if np.array_equal(new, labels):
            return labels
        labels = new


def _group_means(r: Floats, labels: Indices) -> Floats:
    """Each bot's group's mean of ``r``, per row."""
    rows, players = r.shape
    at = (np.arange(rows)[:, None] * players + labels).ravel()
    sums = np.bincount(at, weights=r.ravel(), minlength=rows * players)
    sizes = np.bincount(at, minlength=rows * players)
    means: Floats = (sums / np.maximum(sizes, 1)).reshape(rows, players)
    return np.take_along_axis(means, labels, axis=1)
