"""The MCP tool's floor is chosen on tuning sets with answers only: the highest floor of the grid whose cost
(against no floor) stays within a point on every one of them, stopping at the first floor that costs more."""

from benches.lab.floor_lab import choose, service
from benches.lab.sets import Query, QuerySet


def _set(name: str, split: str, negative: bool = False) -> QuerySet:
    return QuerySet(name, split, "ops-1000", [Query("q1", "a question", None if negative else "x", negative=negative)])


SETS = [_set("tune a", "tuning"), _set("tune b", "tuning"), _set("tune ood", "tuning", negative=True),
        _set("held", "held-out")]


def test_highest_floor_within_a_point_on_every_tuning_set() -> None:
    table = {"tune a": {0.0: 0.90, 0.1: 0.90, 0.2: 0.895, 0.3: 0.88},
             "tune b": {0.0: 0.80, 0.1: 0.80, 0.2: 0.80, 0.3: 0.80},
             "tune ood": {0.0: 0.0, 0.1: 0.2, 0.2: 0.5, 0.3: 1.0},      # negatives never limit the floor
             "held": {0.0: 0.9, 0.1: 0.1, 0.2: 0.1, 0.3: 0.1}}          # held-out sets are not looked at
    assert choose(SETS, table) == 0.2


def test_a_costly_floor_stops_the_search_even_if_a_higher_one_recovers() -> None:
    table = {"tune a": {0.0: 0.90, 0.1: 0.85, 0.2: 0.90}, "tune b": {0.0: 0.8, 0.1: 0.8, 0.2: 0.8},
             "tune ood": {0.0: 0.0, 0.1: 0.0, 0.2: 0.0}, "held": {0.0: 0.0, 0.1: 0.0, 0.2: 0.0}}
    assert choose(SETS, table) == 0.0


def test_service_config_is_the_services_defaults_with_the_floor() -> None:
    cfg = service(0.3)
    assert (cfg.k, cfg.candidates, cfg.guard, cfg.floor, cfg.depth) == (3, 8, True, 0.3, 100)
    assert service(0.0).floor is None


def test_the_floor_spares_rows_naming_a_queried_identifier_only_when_asked() -> None:
    from benches.lab.fusion import Pool, finish

    pool = Pool(dense=[(0, 0.6), (1, 0.2)], bm25=[(1, 3.0)], cos={0: 0.6, 1: 0.2}, bm={0: 0.0, 1: 3.0},
                id_count={1: 1}, wanted=1)
    fused = [(1, 2.0), (0, 1.0)]
    assert finish(pool, fused, 8, 3, 0.3, False, 0.0) == [0]
    assert finish(pool, fused, 8, 3, 0.3, False, 0.0, floor_spares_ids=True) == [1, 0]
    assert finish(pool, fused, 8, 3, 0.3, True, 0.0) == [], "guard after the floor: nothing left"
    assert finish(pool, fused, 8, 3, 0.3, True, 0.0, floor_spares_ids=True) == [1]


def test_the_answer_floor_reads_the_best_cosine_and_exempts_identifier_questions() -> None:
    from benches.lab.floor_lab import answers_nothing
    from benches.lab.fusion import Pool

    weak = Pool(dense=[(0, 0.38), (1, 0.30)], bm25=[], cos={0: 0.38, 1: 0.30}, bm={0: 0.0, 1: 0.0})
    assert answers_nothing(weak, 0.425) and not answers_nothing(weak, 0.35)
    named = Pool(dense=weak.dense, bm25=[], cos=weak.cos, bm=weak.bm, id_count={1: 1}, wanted=1)
    assert not answers_nothing(named, 0.425), "a query naming identifiers is left to the identifier guard"
    assert answers_nothing(Pool(dense=[], bm25=[], cos={}, bm={}), 0.1), "no passage at all: nothing"
