"""Golden cases: the ratings tables the pure-Python solver gave at 494e82f, pinned before the
solver was replaced, so that any new solver must agree with it to 1e-6 Elo.

The bootstrap draws its resamples from the same ``random.Random(seed)`` sequence as it did then,
so the intervals and LOS are pinned too, not only the point fits. Every case names its prior:
the numbers stay valid whatever the default becomes.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from croupier.clients.results.ratings import Model, Places, RatedSet, Resample, rate


def _set(tournament: str, matches: Sequence[Places]) -> RatedSet:
    return RatedSet(tournament, tuple(sorted({b for m in matches for b in m})), tuple(matches))


TWO: list[list[Places]] = [
    [{"a": 1, "b": 2}, {"b": 1, "a": 2}],
    [{"a": 1, "b": 2}, {"a": 1, "b": 2}],
    [{"a": 1, "b": 1}, {"a": 1, "b": 2}],
    [{"b": 1, "a": 2}, {"a": 1, "b": 1}],
]
THREE: list[list[Places]] = [
    [{"a": 1, "b": 2, "c": 3}, {"b": 1, "a": 1, "c": 3}, {"c": 1, "a": 2, "b": 3}],
    [{"a": 1, "b": 2, "c": 2}, {"b": 1, "c": 2, "a": 3}, {"a": 1, "c": 2, "b": 3}],
    [{"c": 1, "b": 2, "a": 3}, {"a": 1, "b": 1, "c": 1}, {"a": 1, "c": 2, "b": 3}],
    [{"a": 1, "b": 2, "c": 3}, {"a": 1, "c": 2, "b": 3}, {"b": 1, "a": 2, "c": 2}],
]
FOUR: list[list[Places]] = [
    [
        {"a": 1, "b": 2, "c": 3, "d": 4},
        {"b": 1, "a": 2, "d": 3, "c": 4},
        {"c": 1, "d": 1, "a": 3, "b": 4},
        {"d": 1, "a": 2, "b": 2, "c": 4},
    ],
    [
        {"a": 1, "c": 2, "b": 3, "d": 3},
        {"a": 1, "b": 2, "d": 3, "c": 4},
        {"b": 1, "c": 2, "d": 3, "a": 4},
        {"a": 1, "d": 2, "c": 3, "b": 4},
    ],
    [
        {"d": 1, "c": 2, "b": 3, "a": 4},
        {"a": 1, "b": 1, "c": 3, "d": 3},
        {"a": 1, "b": 2, "c": 3, "d": 4},
        {"c": 1, "a": 2, "d": 3, "b": 4},
    ],
]
MIXED = [  # the demo's shape in small: groups of 3 from 4 bots, two tournaments
    _set("t1", [{"a": 1, "b": 2, "c": 3}, {"b": 1, "c": 2, "a": 3}, {"a": 1, "c": 2, "b": 3}]),
    _set("t1", [{"a": 1, "b": 2, "d": 3}, {"d": 1, "a": 2, "b": 3}, {"a": 1, "b": 1, "d": 3}]),
    _set("t1", [{"a": 1, "c": 2, "d": 3}, {"c": 1, "a": 2, "d": 3}, {"a": 1, "d": 2, "c": 3}]),
    _set("t1", [{"b": 1, "c": 2, "d": 3}, {"c": 1, "d": 2, "b": 3}, {"d": 1, "b": 2, "c": 3}]),
    _set("t2", [{"a": 1, "b": 2, "c": 3}, {"a": 1, "c": 2, "b": 3}, {"c": 1, "a": 2, "b": 3}]),
    _set("t2", [{"b": 1, "c": 2, "d": 3}, {"b": 1, "d": 2, "c": 3}, {"c": 1, "b": 2, "d": 2}]),
]
APART: list[list[Places]] = [
    [{"a": 1, "b": 2}, {"b": 1, "a": 2}, {"a": 1, "b": 2}],
    [{"a": 1, "b": 2}, {"a": 1, "b": 1}],
    [{"c": 1, "d": 2, "e": 3}, {"d": 1, "c": 2, "e": 3}, {"c": 1, "e": 2, "d": 3}],
    [{"e": 1, "c": 2, "d": 3}, {"c": 1, "d": 1, "e": 3}],
    [{"c": 1, "d": 2, "e": 3}, {"d": 1, "e": 2, "c": 3}],
]
SWEEP: list[list[Places]] = [  # "top" wins everything: finite only through the prior
    [{"top": 1, "x": 2, "y": 3}, {"top": 1, "y": 2, "x": 3}],
    [{"top": 1, "x": 2, "y": 3}, {"top": 1, "x": 2, "y": 2}],
    [{"top": 1, "y": 2, "x": 3}, {"top": 1, "x": 2, "y": 3}],
]

CASES: dict[str, Sequence[RatedSet | Sequence[Places]]] = {
    "TWO": TWO,
    "THREE": THREE,
    "FOUR": FOUR,
    "MIXED": MIXED,
    "APART": APART,
    "SWEEP": SWEEP,
}

Row = tuple[str, float, float | None, float | None, float | None, float, int, int]
"""bot, Elo, interval low and high, LOS next, points, results, group."""

GOLDEN: dict[tuple[str, Model, Resample, float], list[Row]] = {
    ("TWO", Model.PLACKETT_LUCE, Resample.SETS, 1.0): [
        ("a", 1531.9401685734845, 1421.5606767922552, 1672.901264440523, 0.64, 5.0, 8, 0),
        ("b", 1468.0598314265155, 1327.0987355594775, 1578.4393232077448, None, 3.0, 8, 0),
    ],
    ("TWO", Model.PLACKETT_LUCE, Resample.SETS, 0.0): [
        ("a", 1535.21825181106, 1414.4082230901222, 1694.9271693749256, 0.6381909547738693, 5.0, 8, 0),
        ("b", 1464.78174818894, 1305.0728306250744, 1585.5917769098778, None, 3.0, 8, 0),
    ],
    ("THREE", Model.PLACKETT_LUCE, Resample.SETS, 1.0): [
        ("a", 1555.2135103731534, 1471.2581533523726, 1626.1390170971665, 0.795, 16.0, 24, 0),
        ("c", 1478.3612690475843, 1383.277592667668, 1567.975756578981, 0.55, 10.0, 24, 0),
        ("b", 1466.4252205792623, 1449.9852442341537, 1496.5170953386612, None, 10.0, 24, 0),
    ],
    ("THREE", Model.PAIRWISE, Resample.SETS, 1.0): [
        ("a", 1573.6550431837197, 1486.597835376375, 1653.761643299128, 1.0, 16.0, 24, 0),
        ("b", 1463.1724784081403, 1429.5466686943473, 1513.6879440774203, 0.535, 10.0, 24, 0),
        ("c", 1463.17247840814, 1351.4922518558321, 1583.2320082055278, None, 10.0, 24, 0),
    ],
    ("FOUR", Model.PLACKETT_LUCE, Resample.SETS, 1.0): [
        ("a", 1567.7349064440962, 1492.4602319028663, 1647.2362991595705, 1.0, 24.0, 36, 0),
        ("b", 1490.2771448808874, 1397.3514309203078, 1591.0272667725403, 0.655, 17.5, 36, 0),
        ("d", 1472.809803646365, 1414.2251084051193, 1521.196963905833, 0.6, 15.5, 36, 0),
        ("c", 1469.1781450286512, 1293.2322778019518, 1614.1263914114006, None, 15.0, 36, 0),
    ],
    ("FOUR", Model.PAIRWISE, Resample.SETS, 1.0): [
        ("a", 1583.0043753914433, 1524.6363789166116, 1710.4348629924518, 0.855, 24.0, 36, 0),
        ("b", 1492.867967361678, 1452.176122971335, 1569.4423376827765, 0.77, 17.5, 36, 0),
        ("d", 1465.5080072388696, 1384.1520477413826, 1615.6495969235095, 0.565, 15.5, 36, 0),
        ("c", 1458.619650008009, 1284.9049214919319, 1624.7862569135032, None, 15.0, 36, 0),
    ],
    ("MIXED", Model.PLACKETT_LUCE, Resample.SETS, 1.0): [
        ("a", 1631.6965556392697, 1566.5025793286839, 1704.4252104222878, 0.9949748743718593, 18.5, 24, 0),
        ("b", 1479.9395367720745, 1397.2638929373586, 1544.3933316506818, 0.56, 14.0, 30, 0),
        ("c", 1478.7988348222054, 1452.8320722514745, 1508.5807267839348, 0.995, 14.0, 30, 0),
        ("d", 1409.5650727664504, 1358.4776936023109, 1467.4776490655938, None, 7.5, 24, 0),
    ],
    ("MIXED", Model.PLACKETT_LUCE, Resample.GROUPS, 1.0): [
        ("a", 1631.6965556392697, 1559.1133345480248, 1704.4252104222878, 0.995, 18.5, 24, 0),
        ("b", 1479.9395367720745, 1394.2299001114955, 1544.2658189833458, 0.57, 14.0, 30, 0),
        ("c", 1478.7988348222054, 1452.644743835143, 1501.88871561824, 0.9698492462311558, 14.0, 30, 0),
        ("d", 1409.5650727664504, 1362.4174201677486, 1472.705568834593, None, 7.5, 24, 0),
    ],
    ("MIXED", Model.PAIRWISE, Resample.GROUPS, 1.0): [
        ("a", 1642.8595480595488, 1586.9674073326894, 1711.770996730364, 1.0, 18.5, 24, 0),
        ("b", 1480.297428334248, 1381.1016520728244, 1566.6645452429264, 0.5825, 14.0, 30, 0),
        ("c", 1480.297428334248, 1448.7236427031987, 1521.1132094908507, 0.9045226130653267, 14.0, 30, 0),
        ("d", 1396.5455952719549, 1310.5796147813394, 1481.5079377447541, None, 7.5, 24, 0),
    ],
    ("APART", Model.PLACKETT_LUCE, Resample.SETS, 1.0): [
        ("c", 1568.5473094630443, 1423.0651073509482, 1694.255286754886, 0.7121212121212122, 9.5, 14, 0),
        ("d", 1510.096095191749, 1416.712370982543, 1618.484328487911, 0.8131313131313131, 7.5, 14, 0),
        ("e", 1421.3565953452066, 1340.9728870667147, 1550.8024550560344, None, 4.0, 14, 0),
        ("a", 1551.0545010206613, 1540.468995202376, 1557.6843961148745, 1.0, 3.5, 5, 1),
        ("b", 1448.9454989793387, 1442.3156038851255, 1459.531004797624, None, 1.5, 5, 1),
    ],
    ("APART", Model.PAIRWISE, Resample.SETS, 1.0): [
        ("c", 1576.624393288533, 1455.2873458971321, 1704.2973280688286, 0.7171717171717171, 9.5, 14, 0),
        ("d", 1515.3644149500292, 1416.336994133188, 1619.8319425164914, 0.8131313131313131, 7.5, 14, 0),
        ("e", 1408.0111917614379, 1304.5640465340605, 1553.6782555473937, None, 4.0, 14, 0),
        ("a", 1560.2059991327963, 1535.1288188949418, 1590.8979872488558, 1.0, 3.5, 5, 1),
        ("b", 1439.7940008672037, 1409.1020127511442, 1464.8711811050582, None, 1.5, 5, 1),
    ],
    ("SWEEP", Model.PLACKETT_LUCE, Resample.SETS, 1.0): [
        ("top", 1789.9435884808977, 1788.0518548384257, 1799.8247697443117, 1.0, 12.0, 12, 0),
        ("x", 1374.435045364142, 1323.1985544649874, 1448.145671284587, 0.715, 3.5, 12, 0),
        ("y", 1335.6213661549602, 1252.0295589711013, 1388.7495906965862, None, 2.5, 12, 0),
    ],
    ("SWEEP", Model.PAIRWISE, Resample.SETS, 0.5): [
        ("top", 1873.8930088623706, 1870.9110407399987, 1900.4358251334363, 1.0, 12.0, 12, 0),
        ("x", 1338.1097073953142, 1272.227938587508, 1472.0256195831287, 0.715, 3.5, 12, 0),
        ("y", 1287.9972837423152, 1127.5385552834355, 1356.8610206724932, None, 2.5, 12, 0),
    ],
}


@pytest.mark.parametrize(("case", "model", "resample", "prior"), list(GOLDEN))
def test_the_table_is_what_the_pure_python_solver_gave(
    case: str, model: Model, resample: Resample, prior: float
) -> None:
    table = rate(CASES[case], prior=prior, samples=200, seed=5, model=model, resample=resample)
    expected: list[Row] = GOLDEN[case, model, resample, prior]
    assert [(r.bot, r.points, r.games, r.group) for r in table] == [
        (bot, points, games, group) for bot, _, _, _, _, points, games, group in expected
    ]
    for rating, (_, elo, low, high, los, _, _, _) in zip(table, expected, strict=True):
        assert rating.elo == pytest.approx(elo, abs=1e-6)
        assert rating.low == pytest.approx(low, abs=1e-6)
        assert rating.high == pytest.approx(high, abs=1e-6)
        assert rating.los_next == pytest.approx(los, abs=1e-9)


def test_a_clean_sweep_without_the_prior_has_no_table() -> None:
    with pytest.raises(ValueError, match="won or lost every result"):
        rate(SWEEP, prior=0.0, samples=200, seed=5)
