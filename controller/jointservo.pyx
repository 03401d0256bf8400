# cython: language_level=3, boundscheck=False, wraparound=False, initializedcheck=False
"""The joint servo's arithmetic in C: it runs at every physics step, where numpy's per-call
cost was most of its time (see benchmarks/bench_step.py)."""

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


def servo_torques(const double[::1] q, const double[::1] qd, const double[::1] tau_prev,
                  const double[::1] tau_ff, const double[::1] q_target,
                  const double[::1] qd_target, const double[::1] kp, const double[::1] kd,
                  const double[::1] limit, const double[:, ::1] mobility,
                  const double[:, ::1] solve, double h, double[::1] rhs, double[::1] out):
    """The PD servo with implicit damping (after Tan, Liu and Turk 2011, "stable PD"), into
    out, clipped to +-limit:

        tau = tau_ff + kp (q_target - q - h qd) + kd (qd_target - qd - h qdd),
        qdd = mobility (tau - tau_prev),

    the joints' acceleration over the next step h [s] predicted from the change of torque
    (mobility: the joint block of the inverse mass matrix; the steady state is the plain PD
    law's). So (I + h kd mobility) tau = rhs, and `solve` is that matrix's inverse.
    tau_prev may be out itself. Returns the torques as a list (what pybullet takes), or None
    (and out all 0) when one is not finite."""
    cdef Py_ssize_t i, j, n = out.shape[0]
    cdef double acc, tau
    cdef bint finite = True
    if not (q.shape[0] == qd.shape[0] == tau_prev.shape[0] == tau_ff.shape[0]
            == q_target.shape[0] == qd_target.shape[0] == kp.shape[0] == kd.shape[0]
            == limit.shape[0] == rhs.shape[0] == n
            and mobility.shape[0] == mobility.shape[1] == solve.shape[0]
            == solve.shape[1] == n):
        raise ValueError(f"expected {n} values per joint in every servo array")
    for i in range(n):
        acc = 0.0
        for j in range(n):
            acc = acc + mobility[i, j] * tau_prev[j]
        rhs[i] = (tau_ff[i] + kp[i] * (q_target[i] - q[i] - h * qd[i])
                  + kd[i] * (qd_target[i] - qd[i]) + h * kd[i] * acc)
    for i in range(n):
        tau = 0.0
        for j in range(n):
            tau = tau + solve[i, j] * rhs[j]
        finite = finite and isfinite(tau)
        out[i] = min(max(tau, -limit[i]), limit[i])
    if not finite:
        out[:] = 0.0
        return None
    return [out[j] for j in range(n)]


def joints_sane(const double[::1] q, const double[::1] qd, double max_rate):
    """Whether every joint angle is finite and every rate within +-max_rate [rad/s] (the
    simulation's health check at every step)."""
    cdef Py_ssize_t j
    for j in range(q.shape[0]):
        if not isfinite(q[j]):
            return False
    for j in range(qd.shape[0]):
        if not (-max_rate <= qd[j] <= max_rate):  # false for NaN too
            return False
    return True


def foot_centres(const double[:, ::1] toe_motion, const double[::1] z_offset,
                 double[:, ::1] out):
    """Foot sphere centres (4, 3) [m] into out, from the toes' link motion rows (position,
    quaternion xyzw, ...): frame position plus the frame's z axis times the foot's offset
    along it."""
    cdef Py_ssize_t k
    cdef double px, py, pz, x, y, z, w, oz
    for k in range(out.shape[0]):
        px, py, pz = toe_motion[k, 0], toe_motion[k, 1], toe_motion[k, 2]
        x, y, z, w = toe_motion[k, 3], toe_motion[k, 4], toe_motion[k, 5], toe_motion[k, 6]
        oz = z_offset[k]
        out[k, 0] = px + 2 * (x * z + w * y) * oz
        out[k, 1] = py + 2 * (y * z - w * x) * oz
        out[k, 2] = pz + (1 - 2 * (x * x + y * y)) * oz
