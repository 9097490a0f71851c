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

DENSE = 128
"""Up to this many bots a Newton step is solved exactly; beyond, by conjugate gradients."""
GRADIENT = 1e-10
"""A fit is done when no bot's gradient (in choices) is larger."""
STEPS = 100
SETTLED = 1e-12
"""A fit whose step moves no strength further than this is done (rounding keeps its gradient)."""
ROUNDING = 1e-13
"""A log-likelihood lower by less than this share of itself is the same (the sum's rounding)."""


class Counts:
    """Counts per part (a duplicate set, say), sparse: each part touches a few fields. A row of
    counts is ``Evidence.slots`` long: per field and seat, how often that seat's bot was chosen
    from it; then per field, how many bots were picked from it in all."""

    def __init__(self, parts: int, slots: int, rows: Indices, columns: Indices, values: Floats) -> None:
        self.parts, self.slots = parts, slots
        order = np.argsort(columns, kind="stable")
        self.rows, self.columns, self.values = rows[order], columns[order], values[order]
        self.used, self.starts = np.unique(self.columns, return_index=True)

    def total(self) -> Floats:
        """One row: every part counted once."""
        total: Floats = np.bincount(self.columns, weights=self.values, minlength=self.slots).astype(float)
        return total[None, :]

    def weighted(self, weights: Floats) -> Floats:
        """A row of counts per row of ``weights`` (how often each part is counted)."""
        out = np.zeros((len(weights), self.slots))
        if self.values.size:
            out[:, self.used] = np.add.reduceat(weights[:, self.rows] * self.values, self.starts, axis=1)
        return out


class Evidence:
    """Choices over one sorted list of bots, gathered by *field* (the bots a choice was made
    among), since every choice from one field shares its normaliser: per field, how often each
    of its seats was chosen and how many picks were made from it are all the likelihood needs.
    ``members[f]`` are field f's bots (padded with ``len(bots)``, no one). Every pair of bots
    that share a field is a field too, where the prior puts its virtual draws (half each way)."""

    def __init__(self, found: Iterable[Choice]) -> None:
        choices = set(found)
        pairs = sorted({(a, b) for _, among in choices for i, a in enumerate(among) for b in among[i + 1 :]})
        fields = sorted({among for _, among in choices} | set(pairs))
        self.bots = sorted({bot for among in fields for bot in among})
        self.field = {among: f for f, among in enumerate(fields)}
        index = {bot: i for i, bot in enumerate(self.bots)}
        players, width = len(self.bots), max((len(among) for among in fields), default=1)
        self.members = np.full((len(fields), width), players, dtype=np.intp)
        for f, among in enumerate(fields):
            self.members[f, : len(among)] = [index[bot] for bot in among]
        self.in_field = self.members < players
        self.slots = self.members.size + len(fields)
        self.pairs = np.array([(index[a], index[b]) for a, b in pairs], dtype=np.intp).reshape(-1, 2)
        self.pair_fields = np.array([self.field[pair] for pair in pairs], dtype=np.intp)
        number = {pair: q for q, pair in enumerate(pairs)}
        held = sorted(
            (number[among[k], among[m]], f, k, m)
            for among, f in self.field.items()
            for k in range(len(among))
            for m in range(k + 1, len(among))
        )
        self.held = np.array(held, dtype=np.intp).reshape(-1, 4)  # (pair, field, its seats k < m)
        _, self.held_starts = np.unique(self.held[:, 0], return_index=True)
        over = [
            (f, k, m) for f, among in enumerate(fields) for k in range(len(among)) for m in range(len(among))
        ]
        self.over = np.array([item for item in over if item[1] != item[2]], dtype=np.intp).reshape(-1, 3)

    def counts(self, parts: Sequence[Mapping[Choice, float]]) -> Counts:
        """The counts of each part's choices."""
        width = self.members.shape[1]
        entries: dict[tuple[int, int], float] = {}
        for row, part in enumerate(parts):
            for (chosen, among), n in part.items():
                f = self.field[among]
                for k, bot in enumerate(among):
                    if bot in chosen:
                        entries[row, f * width + k] = entries.get((row, f * width + k), 0.0) + n
                picked = (row, self.members.size + f)
                entries[picked] = entries.get(picked, 0.0) + n * len(chosen)
        keys = np.array(list(entries), dtype=np.intp).reshape(-1, 2)
        return Counts(len(parts), self.slots, keys[:, 0], keys[:, 1], np.array(list(entries.values())))

    def fit(self, counts: Floats, prior: float, start: Floats | None = None) -> tuple[Floats, Flags]:
        """Natural-log strengths, a row per row of ``counts`` (NaN for a bot absent from it), each
        linked group's mean 0; and which rows have a finite maximum (all of them with a prior)."""
        if prior < 0:
            raise ValueError(f"the prior is a number of virtual draws, not {prior}")
        rows, players = len(counts), len(self.bots)
        if not players:
            return np.zeros((rows, 0)), np.ones(rows, dtype=bool)
        chosen, picks, linked = self._with_prior(counts, prior)
        real = counts[:, self.members.size :] > 0
        finite: Flags = np.ones(rows, dtype=bool)
        if not prior:  # finite only if, within each group, everyone was chosen over everyone, by a chain
            f, k, m = self.over.T
            edges = np.stack([self.members[f, k], self.members[f, m]], axis=1)
            active = counts[:, f * self.members.shape[1] + k] > 0
            ahead = _lowest_reaching(players, edges, active)
            behind = _lowest_reaching(players, edges[:, ::-1], active)
            finite = np.all((ahead == linked) & (behind == linked), axis=1)
        r = np.zeros((rows, players)) if start is None else np.tile(np.nan_to_num(start), (rows, 1))
        # a row with no finite maximum is not climbed: its strengths run off and its matrix is singular
        r[finite] = self._newton(r[finite], chosen[finite], picks[finite], linked[finite])
        r -= _group_means(r, linked)
        present = self._scatter(real[:, :, None] & self.in_field)
        r[present == 0] = np.nan
        return r, finite

    def _with_prior(self, counts: Floats, prior: float) -> tuple[Floats, Floats, Indices]:
        """Per row, the chosen counts (rows x fields x seats) and picks (rows x fields) with the
        prior's virtual draws added to every pair that met, and each bot's linked group."""
        rows = len(counts)
        chosen = counts[:, : self.members.size].reshape(rows, *self.members.shape).copy()
        picks = counts[:, self.members.size :].copy()
        met = np.zeros((rows, len(self.pairs)), dtype=bool)
        met[:, self.held[self.held_starts, 0]] = np.logical_or.reduceat(
            picks[:, self.held[:, 1]] > 0, self.held_starts, axis=1
        )
        chosen[:, self.pair_fields, :2] += prior / 2 * met[..., None]
        picks[:, self.pair_fields] += prior * met
        both = np.concatenate([self.pairs, self.pairs[:, ::-1]])
        linked = _lowest_reaching(len(self.bots), both, np.concatenate([met, met], axis=1))
        return chosen, picks, linked

    def one_step(self, estimate: Floats, prior: float) -> OneStep:
        """Samples refitted by one Newton step from ``estimate``, the fit of all the counts."""
        return OneStep(self, estimate, prior)

    def _newton(self, r: Floats, chosen: Floats, picks: Floats, linked: Indices) -> Floats:
        """Maximise each row's log-likelihood by Newton's method with backtracking. It is concave
        and flat only along each group's common offset: the dense step adds the averaging over
        each group to the information matrix, which keeps the groups' means where they are;
        conjugate gradients from 0 never leave the gradient's span, where the matrix is regular."""
        current = self._log_likelihood(r, chosen, picks)
        active = np.arange(len(r))
        for _ in range(STEPS):
            shares, _ = self._shares(r[active])
            grad = self._scatter(chosen[active] - picks[active, :, None] * shares)
            size = np.abs(grad).max(axis=1, initial=0.0)
            going = size >= GRADIENT
            active, grad, shares, size = active[going], grad[going], shares[going], size[going]
            if not active.size:
                break
            weight = self._pair_weights(picks[active], shares)
            step = self._step(weight, linked[active], grad, np.minimum(0.1, size))
            scale = np.ones(len(active))
            trial = r[active] + step
            value = self._log_likelihood(trial, chosen[active], picks[active])
            slack = ROUNDING * np.maximum(1.0, np.abs(current[active]))  # a sum's rounding is no loss
            worse = value < current[active] - slack
            while worse.any():
                scale[worse] /= 2
                trial[worse] = r[active[worse]] + scale[worse, None] * step[worse]
                value[worse] = self._log_likelihood(trial[worse], chosen[active[worse]], picks[active[worse]])
                worse &= (value < current[active] - slack) & (scale >= 1e-6)
            moved = np.abs(scale[:, None] * step).max(axis=1, initial=0.0)
            better = value >= current[active] - slack  # else no step gains: it is as close as it gets
            r[active[better]], current[active[better]] = trial[better], value[better]
            active = active[better & (moved > SETTLED)]
        return r

    def _step(self, weight: Floats, linked: Indices, grad: Floats, tolerance: Floats) -> Floats:
        """Newton's step per row: the information matrix (the Laplacian of the pairs' weights) with
        each group's averaging added, solved against the gradient: exactly up to ``DENSE`` bots,
        beyond by conjugate gradients to ``tolerance`` of the gradient's size."""
        if len(self.bots) > DENSE:
            return self._conjugate_gradients(weight, linked, grad, tolerance)
        mean = linked[:, :, None] == linked[:, None, :]
        mean = mean / mean.sum(axis=2, keepdims=True)
        matrix = self._information(weight) + mean
        try:
            step: Floats = np.linalg.solve(matrix, grad[..., None])[..., 0]
        except np.linalg.LinAlgError:  # a pair's weight rounded to 0 splits a group: least squares
            step = np.stack([np.linalg.lstsq(m, g, rcond=None)[0] for m, g in zip(matrix, grad, strict=True)])
        return step

    def _scatter(self, values: npt.ArrayLike) -> Floats:
        """Per-seat ``values`` (rows x fields x seats) summed onto their bots (rows x bots)."""
        values = np.asarray(values, dtype=float)
        rows, players = len(values), len(self.bots)
        at = np.arange(rows)[:, None, None] * (players + 1) + self.members
        total = np.bincount(at.ravel(), weights=values.ravel(), minlength=rows * (players + 1)).astype(float)
        summed: Floats = total.reshape(rows, players + 1)[:, :players]
        return summed

    def _shares(self, r: Floats) -> tuple[Floats, Floats]:
        """Each seat's chance to be picked from its field, and log of the field's total."""
        padded = np.concatenate([r, np.full((len(r), 1), -np.inf)], axis=1)
        x = padded[:, self.members]
        top = x.max(axis=2, keepdims=True)  # log-sum-exp without overflow
        weights = np.exp(x - top)
        total = weights.sum(axis=2, keepdims=True)
        return weights / total, (top + np.log(total))[..., 0]

    def _log_likelihood(self, r: Floats, chosen: Floats, picks: Floats) -> Floats:
        _, log_field = self._shares(r)
        padded = np.concatenate([r, np.zeros((len(r), 1))], axis=1)
        result: Floats = (chosen * padded[:, self.members]).sum(axis=(1, 2)) - (picks * log_field).sum(axis=1)
        return result

    def _pair_weights(self, picks: Floats, shares: Floats) -> Floats:
        """The information matrix as a weighted graph: per pair of bots, the picks from each field
        holding it times both bots' shares there (rows x pairs)."""
        _, f, k, m = self.held.T
        each = picks[:, f] * shares[:, f, k] * shares[:, f, m]
        weight: Floats = np.add.reduceat(each, self.held_starts, axis=1)
        return weight

    def _information(self, weight: Floats) -> Floats:
        """The information matrix (minus the Hessian), dense: rows x bots x bots, the Laplacian of
        the pairs' weights."""
        players = len(self.bots)
        info = np.zeros((len(weight), players, players))
        a, b = self.pairs[:, 0], self.pairs[:, 1]
        info[:, a, b] = info[:, b, a] = -weight
        diagonal = np.arange(players)
        info[:, diagonal, diagonal] = -info.sum(axis=2)
        return info

    def _times_information(self, weight: Floats, v: Floats) -> Floats:
        """The information matrix times ``v``, row by row, without forming it."""
        rows, players = v.shape
        flow = weight * (v[:, self.pairs[:, 0]] - v[:, self.pairs[:, 1]])
        at = np.arange(rows)[:, None] * players
        total = np.bincount(
            np.concatenate([at + self.pairs[:, 0], at + self.pairs[:, 1]], axis=1).ravel(),
            weights=np.concatenate([flow, -flow], axis=1).ravel(),
            minlength=rows * players,
        ).astype(float)
        product: Floats = total.reshape(rows, players)
        return product

    def _conjugate_gradients(
        self, weight: Floats, linked: Indices, grad: Floats, tolerance: Floats
    ) -> Floats:
        """The Newton step, to ``tolerance`` of the gradient's size (per row), by conjugate
        gradients preconditioned by the diagonal. As the dense step does, the averaging over
        each group is added to the information matrix: it is then regular, and rounding cannot
        send the step along a group's common offset."""
        rows, players = grad.shape
        at = np.arange(rows)[:, None] * players
        diagonal = np.bincount(
            np.concatenate([at + self.pairs[:, 0], at + self.pairs[:, 1]], axis=1).ravel(),
            weights=np.concatenate([weight, weight], axis=1).ravel(),
            minlength=rows * players,
        ).reshape(rows, players)
        sizes = np.bincount((at + linked).ravel(), minlength=rows * players).reshape(rows, players)
        inverse = 1 / (diagonal + 1 / np.take_along_axis(sizes, linked, axis=1))
        x = np.zeros_like(grad)
        residual = grad.copy()
        z = inverse * residual
        direction = z.copy()
        rz = (residual * z).sum(axis=1)
        goal = tolerance * np.linalg.norm(grad, axis=1)
        for _ in range(10 * players):
            going = np.linalg.norm(residual, axis=1) > goal
            if not going.any():
                break
            product = self._times_information(weight[going], direction[going])
            product += _group_means(direction[going], linked[going])
            curvature = (direction[going] * product).sum(axis=1)
            alpha = rz[going] / curvature
            x[going] += alpha[:, None] * direction[going]
            residual[going] -= alpha[:, None] * product
            z_new = inverse[going] * residual[going]
            rz_new = (residual[going] * z_new).sum(axis=1)
            beta = rz_new / rz[going]
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


STEP_TOLERANCE = 1e-2
"""A one-step sample's step is solved to this share of its gradient: an Elo or less on steps of
tens, where a 95% bound of 1,000 samples is itself uncertain by several."""


class OneStep:
    """Bootstrap samples refitted by one Newton step from the full fit, each with its own
    gradient and information matrix there. Every sample starts from the same strengths, so the
    shares are computed once, and the step is taken whole (no line search): the one-step
    estimator, which is the refit to second order (the full fit is near every sample's maximum;
    bench/ratings_coverage.py shows its intervals covering as the refits' do)."""

    def __init__(self, evidence: Evidence, estimate: Floats, prior: float) -> None:
        self.evidence, self.prior = evidence, prior
        self.start = np.nan_to_num(estimate)[None, :]
        self.shares, _ = evidence._shares(self.start)

    def __call__(self, counts: Floats) -> Floats:
        """Natural-log strengths, a row per row of ``counts``, NaN for a bot absent from it."""
        ev = self.evidence
        chosen, picks, linked = ev._with_prior(counts, self.prior)
        gradient = ev._scatter(chosen - picks[:, :, None] * self.shares)
        weight = ev._pair_weights(picks, self.shares)
        r = self.start + ev._step(weight, linked, gradient, np.full(len(counts), STEP_TOLERANCE))
        r -= _group_means(r, linked)
        present = ev._scatter((counts[:, ev.members.size :] > 0)[:, :, None] & ev.in_field)
        r[present == 0] = np.nan
        return r
