"""Stride waves: trajectories over the stride as sums of harmonics of the gait phase.

A wave is sum_n a_n cos(2 pi n (phase - psi_n)) for n = 1..len(HARMONICS): harmonic n
peaks at psi_n (and every 1/n of the stride after it). It is added to a constant
parameter (a leg frame's height, the body's pitch, the head's and the tail's pitch; the
spine's flexion and lateral bend, straight without a wave), so that the dog's body can
rise, fall, pitch and flex with its feet. Amplitude and peak phase,
rather than splines or cosine-sine pairs, because a gait shifted in phase (the gait
schedule does this) is the same gait with every psi_n moved by the shift, exactly.
"""

from __future__ import annotations

import math

import numpy as np

HARMONICS = ("h1", "h2", "h3", "h4")
ORDERS = np.arange(1, len(HARMONICS) + 1, dtype=float)
# (wave name, unit of its amplitude, largest amplitude per harmonic, what it moves)
WAVES: tuple[tuple[str, str, float, str], ...] = (
    ("height_front_wave", "m", 0.05, "chest (front leg frame) height"),
    ("height_back_wave", "m", 0.05, "pelvis (back leg frame) height"),
    ("pitch_wave", "rad", 0.15, "leg-frame pitch"),
    ("head_pitch_wave", "rad", 0.3, "head pitch"),
    ("tail_pitch_wave", "rad", 0.5, "tail base pitch"),
    ("spine_flex_wave", "rad", 0.3, "spine flexion (chest pitched nose down from the pelvis)"),
    ("spine_bend_wave", "rad", 0.15, "spine lateral bend (chest yawed left of the pelvis)"),
)
# a wave that changes sign when the gait is mirrored left for right
LATERAL_WAVES = ("spine_bend_wave",)


def amplitude_name(wave: str) -> str:
    unit = next(u for name, u, _, _ in WAVES if name == wave)
    return f"{wave}_{unit}"


def phase_name(wave: str) -> str:
    return f"{wave}_phase"


def harmonic_order(key: str) -> int:
    """The order n of a flat per-harmonic name ("pitch_wave_phase.h2" -> 2)."""
    return HARMONICS.index(key.rpartition(".")[2]) + 1


def wave_values(
    amplitude: np.ndarray, peak: np.ndarray, phase: float, period_s: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Values (W,), first and second time derivatives (W,) [unit/s, unit/s^2] at gait
    `phase` of W waves, given their amplitudes and peak phases (W, n harmonics) and the
    stride period [s]."""
    values, rates, accelerations = StrideWaves(amplitude, peak)(phase, period_s)
    return np.array(values), np.array(rates), np.array(accelerations)


class StrideWaves:
    """W waves of one gait, given their amplitudes and peak phases (W, n harmonics), for
    evaluation at every control step: float math over the harmonics that are not zero
    (numpy's per-call cost dwarfs the arithmetic on a few harmonics; a gait that flexes
    only its spine has one)."""

    def __init__(self, amplitude: np.ndarray, peak: np.ndarray) -> None:
        amplitude, peak = np.asarray(amplitude, dtype=float), np.asarray(peak, dtype=float)
        self.n_waves = len(amplitude)
        # (wave, 2 pi n, n, amplitude, peak phase) of each harmonic that moves something
        self._terms = [
            (w, 2.0 * math.pi * n, n, float(amplitude[w, k]), float(peak[w, k]))
            for w in range(self.n_waves)
            for k, n in enumerate(ORDERS.tolist())
            if amplitude[w, k] != 0.0
        ]

    @property
    def on(self) -> bool:
        return bool(self._terms)

    def __call__(
        self, phase: float, period_s: float
    ) -> tuple[list[float], list[float], list[float]]:
        """Values, first and second time derivatives of the waves at gait `phase`, as lists."""
        values, rates, accelerations = ([0.0] * self.n_waves for _ in range(3))
        stride_omega = 2.0 * math.pi / period_s  # [rad/s] of harmonic 1
        for w, two_pi_n, n, a, psi in self._terms:
            angle = two_pi_n * (phase - psi)
            omega = stride_omega * n
            cos = a * math.cos(angle)
            values[w] += cos
            rates[w] -= a * math.sin(angle) * omega
            accelerations[w] -= cos * (omega * omega)
        return values, rates, accelerations
