"""Schedule exploration: schedules named by tokens, deterministic, replayable, and explored by default."""

import pytest

from ascendlint.emulate.schedules import (
    DEFAULT_EXPLORATION,
    FIXED_ONLY,
    REPLAY_VARIABLE,
    Exploration,
    Schedule,
    resolve,
)

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("token", ["fixed", "random:0", "random:17", "pct:3:d3", "pct:3:d2:k420"])
def test_tokens_name_schedules_and_parse_back(token):
    assert Schedule.parse(token).token == token


@pytest.mark.parametrize("token", ["", "lifo", "random", "random:x", "pct:1:z3", "fixed:1"])
def test_unreadable_tokens_are_refused(token):
    with pytest.raises(ValueError):
        Schedule.parse(token)


def test_the_default_exploration_starts_with_the_fixed_order_then_random_then_pct(monkeypatch):
    monkeypatch.delenv(REPLAY_VARIABLE, raising=False)
    planned = resolve(None)
    assert planned == DEFAULT_EXPLORATION.schedules()
    assert planned[0] == Schedule("fixed")
    assert [s.strategy for s in planned[1:]] == ["random"] * DEFAULT_EXPLORATION.random + \
        ["pct"] * DEFAULT_EXPLORATION.pct
    assert resolve(FIXED_ONLY) == [Schedule("fixed")]
    assert resolve("pct:2:d3:k9") == [Schedule("pct", 2, 3, 9)]
    assert [s.seed for s in Exploration(random=2, pct=0, first_seed=5).schedules()[1:]] == [5, 6]


def test_the_environment_variable_replaces_every_launch_s_schedules(monkeypatch):
    monkeypatch.setenv(REPLAY_VARIABLE, "random:4")
    assert resolve(None) == resolve(FIXED_ONLY) == [Schedule("random", 4)]


def _ticket_order(emulate, kernels, schedule):
    """Which program took which ticket: the order the programs ran their atomics in."""
    counter, order = torch.zeros(1, dtype=torch.int32), torch.full((8,), -1, dtype=torch.int32)
    emulate.launch(kernels.ticket_kernel, (8,), counter, order, schedules=schedule)
    return order.tolist()


@pytest.mark.kernels
def test_a_schedule_replays_exactly_and_seeds_give_different_interleavings(emulate, kernels, monkeypatch):
    monkeypatch.delenv(REPLAY_VARIABLE, raising=False)
    orders = {token: _ticket_order(emulate, kernels, token)
              for token in ("fixed", "random:0", "random:1", "pct:0:d3:k40", "pct:1:d3:k40")}
    for token, order in orders.items():
        assert sorted(order) == list(range(8))
        assert _ticket_order(emulate, kernels, token) == order, f"{token} did not replay"
    assert len({tuple(order) for order in orders.values()}) > 2


@pytest.mark.kernels
def test_a_result_that_depends_on_the_schedule_fails_the_default_exploration(emulate, kernels, monkeypatch):
    monkeypatch.delenv(REPLAY_VARIABLE, raising=False)
    from ascendlint.emulate.images import ScheduleDependentResult

    with pytest.raises(ScheduleDependentResult, match="depends on the interleaving") as caught:
        _ticket_order(emulate, kernels, None)
    assert caught.value.schedule != Schedule("fixed")
    assert any("replay it with" in note for note in caught.value.__notes__)


@pytest.mark.kernels
def test_memory_is_restored_before_every_schedule(emulate, kernels, monkeypatch):
    """An in-place kernel run under several schedules acts once on its inputs, not once per schedule."""
    monkeypatch.delenv(REPLAY_VARIABLE, raising=False)
    x = torch.arange(16, dtype=torch.float32)
    emulate.launch(kernels.add_kernel, (2,), x, x, x, 16, BLOCK=8)  # x += x, in place
    assert x.tolist() == [2.0 * i for i in range(16)]


def test_hazards_are_on_unless_turned_off():
    import inspect

    from ascendlint import emulate

    assert inspect.signature(emulate.launch).parameters["hazards"].default is True
    from ascendlint.emulate.world import World

    assert inspect.signature(World.launch).parameters["hazards"].default is True
