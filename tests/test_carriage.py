"""The presets carry the tail and the head as the real dog does in the clips (issue 29: tail
and head per gait): the sagittal angles of marker lines, simulated at the clip's
Froude-scaled speed against the clip. The clips are read from ../shared/data/dog_mocap
(CC BY-NC 4.0, never copied in)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from sim_slots import one_per_core

from quadsim.controller.simulate import simulate
from quadsim.mocap.motion import load_mocap

CLIPS = Path(__file__).resolve().parents[1].parent / "shared/data/dog_mocap"
# gait -> (speed [m/s], clip): the Froude-scaled speeds
REAL = {"walk": (1.2, "dog_walk03"), "trot": (2.1, "dog_trot")}
TAIL_WITHIN_DEG = 8.0  # the clips' own tail moves 10-58 degrees peak to peak
HEAD_WITHIN_DEG = 5.0


def carriage(marker: Callable[[str], np.ndarray]) -> tuple[float, float]:
    """Mean angles [deg] below the horizontal of the tail (tail_base -> tail_mid, pointing
    back) and of the head (mid_neck -> head, pointing ahead), in the body's vertical plane
    (forward: pelvis -> neck_base on the ground), of markers (T, 3) z up by name."""
    forward = marker("neck_base") - marker("pelvis")
    forward[:, 2] = 0.0
    forward /= np.linalg.norm(forward, axis=1, keepdims=True)

    def below(v: np.ndarray, ahead: float) -> float:
        along = ahead * np.sum(v * forward, axis=1)
        return float(np.degrees(np.arctan2(-v[:, 2], along)).mean())

    tail = below(marker("tail_mid") - marker("tail_base"), -1.0)
    head = below(marker("head") - marker("mid_neck"), 1.0)
    return tail, head


@pytest.mark.parametrize("gait", list(REAL))
def test_tail_and_head_hang_as_the_real_dogs(gait: str) -> None:
    if not CLIPS.is_dir():
        pytest.skip("the dog clips are not in ../shared/data/dog_mocap")
    speed, clip = REAL[gait]
    motion = load_mocap(CLIPS / f"{clip}_joint_pos.txt")
    real_tail, real_head = carriage(motion.marker)
    result, summary = one_per_core(simulate)(gait, speed, 8.0, seed=0, log_hz=50.0)
    assert not summary["fell"]
    names = list(result.log["marker_names"])
    settled = np.asarray(result.log["markers"])[len(result.log["t"]) // 2 :]
    tail, head = carriage(lambda name: settled[:, names.index(name)])
    assert abs(tail - real_tail) < TAIL_WITHIN_DEG, (tail, real_tail)
    assert abs(head - real_head) < HEAD_WITHIN_DEG, (head, real_head)
