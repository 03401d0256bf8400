# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The joint servo's arithmetic in C: it runs at every physics step (4 kHz), where numpy's
per-call cost was most of its time (see benchmarks/bench_step.py). The same floats as the
numpy expressions it replaces (`ServoCommand.torques`, `World.clip_torques`)."""

from libc.math cimport isfinite


def read_joint_states(joint_states, double[::1] q, double[::1] qd):
    """Joint angles [rad] and rates [rad/s] from pybullet's getJointStates answer into q, qd."""
    cdef Py_ssize_t j, n = q.shape[0]
    if len(joint_states) != n or qd.shape[0] != n:
        raise ValueError(f"expected {n} joint states, got {len(joint_states)}")
    for j in range(n):
        state = joint_states[j]
        q[j] = state[0]
        qd[j] = state[1]


def servo_torques(const double[::1] q, const double[::1] qd, const double[::1] tau_ff,
                  const double[::1] q_target, const double[::1] qd_target,
                  const double[::1] kp, const double[::1] kd, const double[::1] limit,
                  double[::1] out):
    """tau = tau_ff + kp (q_target - q) + kd (qd_target - qd) [N*m], clipped to +-limit,
    into out; returns the torques as a list of floats (what pybullet takes), or None (and
    out all 0) when a torque is not finite."""
    cdef Py_ssize_t j, n = out.shape[0]
    cdef double tau
    cdef bint finite = True
    if not (q.shape[0] == qd.shape[0] == tau_ff.shape[0] == q_target.shape[0]
            == qd_target.shape[0] == kp.shape[0] == kd.shape[0] == limit.shape[0] == n):
        raise ValueError(f"expected {n} values per joint in every servo array")
    for j in range(n):
        tau = tau_ff[j] + kp[j] * (q_target[j] - q[j]) + kd[j] * (qd_target[j] - qd[j])
        finite = finite and isfinite(tau)
        out[j] = min(max(tau, -limit[j]), limit[j])
    if not finite:
        out[:] = 0.0
        return None
    return [out[j] for j in range(n)]
