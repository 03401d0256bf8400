"""The Python API refuses the issue-31 bad inputs with a SimError naming the problem and
its valid range, as the CLI does, before any simulation (bounded time and memory)."""

from __future__ import annotations

import pytest

from quadsim import Push, QuadsimError, simulate


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"duration_s": 1e12}, "at most 600 s"),
        ({"seed": -5}, ">= 0"),
        ({"turn_rate_dps": 1e6}, "within +-360 deg/s"),
        ({"spec": "tiny"}, "choose one of: shepherd, small"),
        # the small dog's trot band is the shepherd's 1.0-2.5 m/s Froude-scaled
        ({"spec": "small", "speed_mps": 2.2}, "outside the trot band 0.815-2.039 m/s"),
    ],
)
def test_simulate_refuses_bad_input(kwargs: dict, message: str) -> None:
    args = {"speed_mps": 2.0, "duration_s": 1.0} | kwargs
    with pytest.raises(QuadsimError, match=message.replace("+", r"\+")):
        simulate("trot", **args)


def test_a_push_beyond_the_bound_is_refused_when_made() -> None:
    with pytest.raises(QuadsimError, match="at most 5000 N"):
        Push(start=0.5, force=(1e9, 0.0, 0.0), duration=0.1)
