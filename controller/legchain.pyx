# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The control step's arithmetic on the legs and leg frames, in C (Cython).

Arithmetic only: which legs stand, swing or support, and every limit, are decided by the
step (controller/loop.py) and come in as flags. LegChains: the legs' forward kinematics,
world foot Jacobians, hip axes, swing-leg gravity torques, the legs' feed-forward torques
(J^T F, the hips' share of the frame torque) and the analytic leg IK. SwingPlan: a gait's
foot placement, swing paths and foot angles. LegFrames: the leg frames' virtual forces and
torques, and their sharing among the supporting feet. Then the spine split and the joint
targets' rates. tests/test_legchain.py holds them to plain numpy references
(tests/reference/) and to properties (finite differences, FK of the IK). Compiled because
numpy's and Python's per-call costs on four legs were most of the control step. Built with
-ffp-contract=off (setup.py): no fused multiply-adds, the same floats on every machine.
"""

import numpy as np

from libc.math cimport M_PI, acos, asin, atan2, copysign, cos, fmod, hypot, sin, sqrt

# the segment each leg joint (hip roll, hip pitch, knee, hock, toe) turns, from the thigh
cdef int SEG_OF_JOINT[5]
SEG_OF_JOINT[:] = [0, 0, 1, 2, 3]


cdef inline double py_mod(double a, double b) noexcept:
    """a % b as Python computes it for floats (the result takes b's sign)."""
    cdef double r = fmod(a, b)
    if r != 0.0:
        if (r < 0.0) != (b < 0.0):
            r += b
    else:
        r = copysign(0.0, b)
    return r


cdef class LegChains:
    """The four legs of one skeleton (LF, RF, LH, RH), each a hip roll (x) and four pitch
    joints (y) with segments hanging along -z at zero angles.

    update() poses the legs for joint angles and leg-frame placements; the other methods
    read that pose. Returned arrays are buffers of this object, overwritten by the next
    call: copy what must outlive a control step.
    """

    cdef double hip[4][3]
    cdef double length[4][4]
    cdef double half_weight[4][4]
    cdef double weight_below[4][5]
    cdef double bend[4]
    cdef double l1[4]
    cdef double l2[4]
    cdef double rmin[4]
    cdef double rmax[4]
    # the pose of the last update(): leg-frame joint positions and axes, world rotations
    cdef double pos[4][5][3]
    cdef double axes[4][5][3]
    cdef double R[4][3][3]
    cdef readonly object jacobian, hip_world, hip_axes, angles, torques
    cdef double[:, :, ::1] _jac
    cdef double[:, ::1] _hip_world
    cdef double[:, :, ::1] _hip_axes
    cdef double[:, ::1] _angles
    cdef double[:, ::1] _torques

    def __init__(self, hip, lengths, bend, seg_weight, max_reach: float = 0.995):
        """hip (4, 3) [m, leg frame], lengths (4, 4) thigh/upper arm, shank/forearm, cannon,
        toe [m], bend (4,) +1 knees, -1 elbows, seg_weight (4, 4) [N] the segments' weights;
        max_reach: the IK's reach limit as a share of the upper two segments."""
        hip_a = np.asarray(hip, dtype=float).reshape(4, 3)
        len_a = np.asarray(lengths, dtype=float).reshape(4, 4)
        bend_a = np.asarray(bend, dtype=float).reshape(4)
        w_a = np.asarray(seg_weight, dtype=float).reshape(4, 4)
        if not 0.0 < max_reach <= 1.0:
            raise ValueError(f"max_reach must be a fraction in (0, 1], got {max_reach!r}")
        cdef int k, s, j
        cdef double below
        for k in range(4):
            for j in range(3):
                self.hip[k][j] = hip_a[k, j]
            for s in range(4):
                self.length[k][s] = len_a[k, s]
                self.half_weight[k][s] = 0.5 * w_a[k, s]
            for j in range(5):
                below = 0.0
                for s in range(SEG_OF_JOINT[j], 4):
                    below += w_a[k, s]
                self.weight_below[k][j] = below
            self.bend[k] = -1.0 if bend_a[k] < 0.0 else 1.0
            self.l1[k], self.l2[k] = len_a[k, 0], len_a[k, 1]
            self.rmin[k] = abs(self.l1[k] - self.l2[k])
            self.rmax[k] = max_reach * (self.l1[k] + self.l2[k])
        self.jacobian = np.zeros((4, 3, 5))
        self.hip_world = np.zeros((4, 3))
        self.hip_axes = np.zeros((4, 2, 3))
        self.angles = np.zeros((4, 5))
        self.torques = np.zeros((4, 5))
        self._jac, self._hip_world = self.jacobian, self.hip_world
        self._hip_axes, self._angles, self._torques = self.hip_axes, self.angles, self.torques

    def update(self, const double[:, ::1] q_leg, const double[:, :, ::1] R_leg,
               const double[:, ::1] p_leg):
        """Pose the legs: joint angles q_leg (4, 5) [rad], each leg frame's rotation R_leg
        (4, 3, 3) and origin p_leg (4, 3) [m, world]. Fills `jacobian` (4, 3, 5): d foot /
        d angles in the world; `hip_world` (4, 3) [m]; `hip_axes` (4, 2, 3): each hip's
        roll and pitch axes in the world."""
        cdef int k, s, i, j, n
        cdef double c[5]
        cdef double sn[5]
        cdef double r[3][3]
        cdef double t[3][3]
        cdef double jl[3][5]
        cdef double d[3]
        cdef double acc
        for k in range(4):
            for j in range(5):
                c[j] = cos(q_leg[k, j])
                sn[j] = sin(q_leg[k, j])
            # roll about x, then the first pitch about y: rot_x(q0) rot_y(q1)
            r[0][0], r[0][1], r[0][2] = c[1], 0.0, sn[1]
            r[1][0], r[1][1], r[1][2] = sn[0] * sn[1], c[0], -sn[0] * c[1]
            r[2][0], r[2][1], r[2][2] = -c[0] * sn[1], sn[0], c[0] * c[1]
            for i in range(3):
                self.pos[k][0][i] = self.hip[k][i]
            for s in range(4):
                if s:  # the next pitch joint: r = r rot_y(q_{s+1})
                    for i in range(3):
                        t[i][0] = r[i][0] * c[s + 1] - r[i][2] * sn[s + 1]
                        t[i][2] = r[i][0] * sn[s + 1] + r[i][2] * c[s + 1]
                        r[i][0], r[i][2] = t[i][0], t[i][2]
                # the segment hangs along its -z
                for i in range(3):
                    self.pos[k][s + 1][i] = self.pos[k][s][i] - r[i][2] * self.length[k][s]
            # axes: the roll's x, then the pitch joints' y after the roll
            self.axes[k][0][0], self.axes[k][0][1], self.axes[k][0][2] = 1.0, 0.0, 0.0
            for j in range(1, 5):
                self.axes[k][j][0], self.axes[k][j][1], self.axes[k][j][2] = 0.0, c[0], sn[0]
            # foot Jacobian in the leg frame: axis x (foot - pivot), then turned to the world
            for j in range(5):
                for i in range(3):
                    d[i] = self.pos[k][4][i] - self.pos[k][SEG_OF_JOINT[j]][i]
                jl[0][j] = self.axes[k][j][1] * d[2] - self.axes[k][j][2] * d[1]
                jl[1][j] = self.axes[k][j][2] * d[0] - self.axes[k][j][0] * d[2]
                jl[2][j] = self.axes[k][j][0] * d[1] - self.axes[k][j][1] * d[0]
            for i in range(3):
                for j in range(3):
                    self.R[k][i][j] = R_leg[k, i, j]
            for i in range(3):
                for n in range(5):
                    self._jac[k, i, n] = (self.R[k][i][0] * jl[0][n] + self.R[k][i][1] * jl[1][n]
                                          + self.R[k][i][2] * jl[2][n])
                acc = 0.0
                for j in range(3):
                    acc = acc + self.R[k][i][j] * self.hip[k][j]
                self._hip_world[k, i] = p_leg[k, i] + acc
                # roll axis: the frame's x; pitch axis: the frame's rotation of (0, c0, s0)
                self._hip_axes[k, 0, i] = self.R[k][i][0]
                self._hip_axes[k, 1, i] = self.R[k][i][1] * c[0] + self.R[k][i][2] * sn[0]

    def local_pose(self):
        """Leg-frame joint positions (4, 5, 3) [m] and joint axes (4, 5, 3) of the last
        update(), as new arrays (for tests and plots, not the control step)."""
        return np.array(self.pos), np.array(self.axes)

    def swing_gravity(self, legs):
        """Joint torques [N*m] holding each flagged leg's segments up, sum_s J_s^T (m_s g z)
        with each segment's mass at its midpoint, at the last update()'s pose: a row of five
        floats per leg in `legs` (4 flags), None for the others."""
        cdef double row[5]
        rows = []
        for k in range(4):
            if legs[k]:
                self._gravity(k, row)
                rows.append([row[j] for j in range(5)])
            else:
                rows.append(None)
        return rows

    cdef void _gravity(self, int k, double* out) noexcept:
        """swing_gravity of leg k into out[5]."""
        cdef int s, j, i
        cdef double pw[5][2]
        cdef double aw[5][2]
        cdef double below[4][2]
        cdef double hw, rx, ry
        # joint positions and axes turned to the world (x and y: upward forces' torques need
        # no more)
        for s in range(5):
            for i in range(2):
                pw[s][i] = (self.R[k][i][0] * self.pos[k][s][0]
                            + self.R[k][i][1] * self.pos[k][s][1]
                            + self.R[k][i][2] * self.pos[k][s][2])
                aw[s][i] = (self.R[k][i][0] * self.axes[k][s][0]
                            + self.R[k][i][1] * self.axes[k][s][1]
                            + self.R[k][i][2] * self.axes[k][s][2])
        # first moment of the weight below each segment's top (distal sums)
        for s in range(3, -1, -1):
            hw = self.half_weight[k][s]
            for i in range(2):
                below[s][i] = hw * (pw[s][i] + pw[s + 1][i])
                if s < 3:
                    below[s][i] = below[s + 1][i] + below[s][i]
        for j in range(5):
            s = SEG_OF_JOINT[j]
            rx = below[s][0] - self.weight_below[k][j] * pw[s][0]
            ry = below[s][1] - self.weight_below[k][j] * pw[s][1]
            out[j] = aw[j][0] * ry - aw[j][1] * rx  # (a x r) . z

    def leg_torques(self, const double[:, ::1] leg_force, const double[:, ::1] frame_torque,
                    const double[:, ::1] hip_servo, support, swinging):
        """The legs' feed-forward torques (4, 5) [N*m] at the last update()'s pose; fills
        `torques`.

        leg_force (4, 3): per leg the force [N] (world) its foot's frame wants from the
        ground; the foot pushes with -F: tau = J^T (-F). frame_torque (2, 3): per frame
        (front, back) the torque [N*m] it wants; hip_servo (4, 2): the PD torques of each
        hip's roll and pitch; support: the legs that bear weight; swinging: the legs whose
        weight their own hips carry (swing_gravity). A joint acts on its parent with -tau, so the frame
        torque still needed is the wanted one plus what the swinging hips already do
        (sum tau a); the supporting hips share it: -(a . needed) / N_support each.
        """
        cdef int k, f, a, i, j, n_support
        cdef double fx, fy, fz, along
        cdef double needed[3]
        cdef double gravity[5]
        cdef double[:, ::1] tau = self._torques
        for k in range(4):
            fx, fy, fz = -leg_force[k, 0], -leg_force[k, 1], -leg_force[k, 2]
            for j in range(5):
                tau[k, j] = 0.0 + (self._jac[k, 0, j] * fx + self._jac[k, 1, j] * fy
                                   + self._jac[k, 2, j] * fz)
        for f in range(2):
            for i in range(3):
                needed[i] = frame_torque[f, i]
            n_support = 0
            for k in range(2 * f, 2 * f + 2):
                if support[k]:
                    n_support += 1
                else:
                    for a in range(2):
                        for i in range(3):
                            needed[i] += (tau[k, a] + hip_servo[k, a]) * self._hip_axes[k, a, i]
            for k in range(2 * f, 2 * f + 2):
                if support[k]:
                    for a in range(2):
                        along = (self._hip_axes[k, a, 0] * needed[0]
                                 + self._hip_axes[k, a, 1] * needed[1]
                                 + self._hip_axes[k, a, 2] * needed[2])
                        tau[k, a] += along / -n_support
        for k in range(4):
            if swinging[k]:
                self._gravity(k, gravity)
                for j in range(5):
                    tau[k, j] += gravity[j]
        return self.torques

    def solve_ik(self, foot_target, cannon_pitch, toe_pitch):
        """Joint angles (4, 5) [rad] putting each foot at foot_target (4 rows of 3) [m, leg
        frame] with the cannon (wrist/hock) and toe at the given absolute pitches (4,) [rad]
        in the leg plane: hip roll from the lateral offset, then the law of cosines for the
        upper two segments (reach clamped). As `leg_ik` of tests/reference/legs.py; fills `angles`."""
        cdef double target[4][3]
        cdef double cp[4]
        cdef double tp[4]
        cdef int k, i
        for k in range(4):
            for i in range(3):
                target[k][i] = foot_target[k][i]
            cp[k], tp[k] = cannon_pitch[k], toe_pitch[k]
        self._solve_ik(target, cp, tp)
        return self.angles

    cdef void _solve_ik(self, double[4][3] target, double* cannon_pitch,
                        double* toe_pitch) noexcept:
        cdef int k
        cdef double dx, dy, dz, h, cp, tp, down, back, dist, dc, full, num, den
        cdef double theta1, theta2, a1
        for k in range(4):
            dx = target[k][0] - self.hip[k][0]
            dy = target[k][1] - self.hip[k][1]
            dz = target[k][2] - self.hip[k][2]
            cp, tp = cannon_pitch[k], toe_pitch[k]
            h = hypot(dy, dz)
            # in the rolled leg plane: "down" below the hip, "back" behind it
            down = h - self.length[k][2] * cos(cp) - self.length[k][3] * cos(tp)
            back = -dx - self.length[k][2] * sin(cp) - self.length[k][3] * sin(tp)
            dist = hypot(down, back)
            dc = min(max(dist, self.rmin[k]), self.rmax[k])
            full = self.l1[k] + self.l2[k]
            # tan^2(theta2 / 2) = ((L - d)(L + d)) / ((d - m)(d + m)): accurate at both ends
            num = sqrt(max((full - dc) * (full + dc), 0.0))
            den = sqrt(max((dc - self.rmin[k]) * (dc + self.rmin[k]), 0.0))
            theta2 = self.bend[k] * (2.0 * atan2(num, den))
            a1 = -atan2(self.l2[k] * sin(theta2), self.l1[k] + self.l2[k] * cos(theta2))
            theta1 = py_mod(atan2(back, down) + a1 + M_PI, 2.0 * M_PI) - M_PI
            self._angles[k, 0] = atan2(dy, -dz)
            self._angles[k, 1] = theta1
            self._angles[k, 2] = theta2
            self._angles[k, 3] = cp - theta1 - theta2
            self._angles[k, 4] = tp - cp


cdef inline double clamp01(double x) noexcept:
    return min(max(x, 0.0), 1.0)


cdef class SwingPlan:
    """A gait's swing paths and foot angles (cannon and toe pitch) of the four legs, as
    `swing_path` and `foot_angles` of tests/reference/swing.py (their references), and the
    leg targets the control step asks of the IK.

    height, lift_skew, reach_early: (4,) [m, 1, 1] the swing's lift and shape (`swing_path`);
    lead_off, lead_strike: (4,) [s] toe-off and foot-strike anticipation; cannon: (stance,
    swing) pitch (4,) each [rad]; toe_off, foot_strike: (4,) [rad] the toe's angles;
    stance_time (4,) [s]; fp_gains (4, 2) the foot-placement gains s_fp [s] along and across
    the heading, acting on velocity errors up to max_fp_error [m/s]; max_extend_m [m]: how
    far below a stance foot its leg's target may lie.
    """

    cdef double height[4]
    cdef double skew[4]  # lift_skew * height
    cdef double early[4]
    cdef double touch_at, reach_below, max_extend
    cdef double span_off[4]
    cdef double span_strike[4]
    cdef bint on_off[4]
    cdef bint on_strike[4]
    # per joint (cannon, toe), per leg: stance, swing, off, strike values
    cdef double angle_values[2][4][4]
    cdef double path[4][3]
    cdef double angle[2][4]
    cdef double t_stance[4]
    cdef double s_fp[4][2]
    cdef double max_fp_error

    def __init__(self, height, lift_skew, reach_early, lead_off, lead_strike, stance_cannon,
                 swing_cannon, toe_off, foot_strike, stance_time, fp_gains,
                 max_fp_error: float = 0.5, touch_at: float = 0.85, reach_below_m: float = 0.02,
                 max_extend_m: float = 1.0):
        cdef int k
        fp = np.asarray(fp_gains, dtype=float).reshape(4, 2)
        t_stance = np.asarray(stance_time, dtype=float).reshape(4)
        self.max_fp_error = max_fp_error
        for k in range(4):
            self.t_stance[k] = t_stance[k]
            self.s_fp[k][0], self.s_fp[k][1] = fp[k, 0], fp[k, 1]
        values = [np.broadcast_to(np.asarray(v, dtype=float), (4,)) for v in (
            height, lift_skew, reach_early, lead_off, lead_strike, stance_cannon, swing_cannon,
            toe_off, foot_strike)]
        h, skew, early, off, strike, stance_c, swing_c, toe_o, toe_s = values
        if not 0.0 < touch_at < 1.0:
            raise ValueError(f"touch_at must lie in (0, 1), got {touch_at!r}")
        self.touch_at, self.reach_below = touch_at, reach_below_m
        self.max_extend = max_extend_m
        for k in range(4):
            self.height[k], self.skew[k], self.early[k] = h[k], skew[k] * h[k], early[k]
            # a lead of 0 is a step
            self.span_off[k], self.on_off[k] = max(off[k], 1e-6), off[k] > 0.0
            self.span_strike[k], self.on_strike[k] = max(strike[k], 1e-6), strike[k] > 0.0
            # the cannon holds its stance pitch but in swing; the toe flexes off and strikes
            self.angle_values[0][k][:] = [stance_c[k], swing_c[k], stance_c[k], stance_c[k]]
            self.angle_values[1][k][:] = [0.0, swing_c[k], toe_o[k], toe_s[k]]

    cdef void _path(self, int k, double progress, double x0, double y0, double x1, double y1,
                    double ground, double landing_ground) noexcept:
        """The swing target of leg k into path[k]: from (x0, y0) at lift-off to (x1, y1),
        lifted above the ground (foot-sphere centre height) [m], which goes from `ground`
        under the lift-off to `landing_ground` under the landing as the foot moves on."""
        cdef double s = clamp01(progress)
        cdef double u = min(s / self.touch_at, 1.0)
        cdef double b = sin(M_PI * u)
        cdef double blend = u * u * (3.0 - 2.0 * u) + self.early[k] * (b * b)
        cdef double lift = self.height[k] * (b if u < 0.5 else b * b)
        lift += self.skew[k] * (b * b * cos(M_PI * u))
        cdef double sink = -self.reach_below * max(s - self.touch_at, 0.0) / (1.0 - self.touch_at)
        self.path[k][0] = x0 + (x1 - x0) * blend
        self.path[k][1] = y0 + (y1 - y0) * blend
        self.path[k][2] = ground + (landing_ground - ground) * blend + lift + sink

    cdef void _angles(self, int k, double progress, double t_off, double t_strike) noexcept:
        """The cannon and toe angles of leg k into angle[:, k]: progress < 0 in stance;
        t_off, t_strike: the time [s] to lift-off and to the strike."""
        cdef double ramp_off = clamp01(1.0 - t_off / self.span_off[k]) if self.on_off[k] else 0.0
        cdef double s = clamp01(progress)
        cdef double ramp_mid = clamp01(2.0 * s)
        cdef double ramp_strike, first_half, stance, swing, off, strike
        cdef int j
        if self.on_strike[k]:
            ramp_strike = clamp01(1.0 - t_strike / self.span_strike[k])
        else:
            ramp_strike = 1.0 if s >= 1.0 else 0.0
        for j in range(2):
            stance, swing = self.angle_values[j][k][0], self.angle_values[j][k][1]
            off, strike = self.angle_values[j][k][2], self.angle_values[j][k][3]
            if progress >= 0.0:  # in swing: from toe-off through mid-swing to the strike
                first_half = off + (swing - off) * ramp_mid
                self.angle[j][k] = first_half + (strike - first_half) * ramp_strike
            else:  # in stance: ramping to toe-off
                self.angle[j][k] = stance + (off - stance) * ramp_off

    def place_feet(self, LegChains chains, const double[:, :] frame_vel,
                   const double[:, ::1] frame_v_d, const double[:, :] H2, offset,
                   time_to_strike, in_swing, double[:, ::1] anchor,
                   double stance_scale=1.0):
        """Write each swinging leg's landing point [m] into its `anchor` row (4, 2):
        P = P_hip + v (t_strike + T_stance / 2) + offset + (v - v_d) s_fp, the hip (at
        chains' last update()) carried on to the strike and half a stance beyond, a nominal
        offset (4 rows of x, y) [m] and the paper's feedback, its gains along and across the
        heading (H2 (2, 2)). frame_vel (2, 3) [m/s], frame_v_d (2, 2) [m/s] each frame's
        velocity and desired velocity; time_to_strike (4,) [s]; stance_scale: the share of
        T_stance the stance will last (a quickened stride clock's)."""
        cdef int k, f, i
        cdef double e0, e1, a0, a1, ahead
        cdef double fb[2]
        for k in range(4):
            if not in_swing[k]:
                continue
            f = k // 2
            # the velocity error along and across the heading, clipped, times the gains
            e0 = frame_vel[f, 0] - frame_v_d[f, 0]
            e1 = frame_vel[f, 1] - frame_v_d[f, 1]
            a0 = min(max(e0 * H2[0, 0] + e1 * H2[1, 0], -self.max_fp_error), self.max_fp_error)
            a1 = min(max(e0 * H2[0, 1] + e1 * H2[1, 1], -self.max_fp_error), self.max_fp_error)
            a0, a1 = a0 * self.s_fp[k][0], a1 * self.s_fp[k][1]
            fb[0] = a0 * H2[0, 0] + a1 * H2[0, 1]
            fb[1] = a0 * H2[1, 0] + a1 * H2[1, 1]
            ahead = <double>time_to_strike[k] + 0.5 * self.t_stance[k] * stance_scale
            for i in range(2):
                anchor[k, i] = (chains._hip_world[k, i] + frame_vel[f, i] * ahead
                                + <double>offset[k][i] + fb[i])

    def swing_path(self, progress, liftoff, landing, ground):
        """Swing targets (4 rows of x, y, z) [m], as SwingPath: progress (4,), lift-off and
        landing points (4 rows of x, y) [m], ground (4,) [m] (foot-sphere centre height)."""
        for k in range(4):
            self._path(k, progress[k], liftoff[k][0], liftoff[k][1], landing[k][0],
                       landing[k][1], ground[k], ground[k])
        return [[self.path[k][i] for i in range(3)] for k in range(4)]

    def leg_targets(self, progress, stance, support, const double[:, ::1] liftoff,
                    const double[:, ::1] anchor, ground, landing_ground, floor,
                    const double[:, :, ::1] frames,
                    const double[:, :, ::1] R, const double[:, ::1] height_d,
                    const double[:, :, ::1] R_d, const double[:, ::1] foot_pos):
        """Each leg's IK target (4 rows of x, y, z) [m] in its leg frame's coordinates. A
        swinging foot follows its path (swing_path) from `liftoff` to `anchor` (4, 2), over
        the ground (4,) (the foot sphere's centre height: `ground` under its lift-off,
        `landing_ground` under its anchor) and never below `floor` (4,) [m] (the terrain it
        crosses; None on flat ground), seen from its frame as it is
        (frames (2, 3, 3): position, velocity, angular velocity; R (2, 3, 3)). A stance
        foot holds its anchor on the ground, reaching below it while it does not `support`,
        seen from its frame at its desired height (height_d[:, 0]) and orientation R_d
        (2, 3, 3), never above where the foot is now (foot_pos (4, 3) [m, world]) and at most
        `max_extend_m` below it (a leg landing under a low, tilted frame does not kick it)."""
        cdef int k, f, i
        cdef double p[3]
        cdef double d0, d1, d2, now_z
        out = np.empty((4, 3))
        cdef double[:, ::1] o = out
        for k in range(4):
            f = k // 2
            if not stance[k]:
                self._path(k, progress[k], liftoff[k, 0], liftoff[k, 1], anchor[k, 0],
                           anchor[k, 1], ground[k], landing_ground[k])
                if floor is not None:
                    self.path[k][2] = max(self.path[k][2], <double>floor[k])
                d0 = self.path[k][0] - frames[f, 0, 0]
                d1 = self.path[k][1] - frames[f, 0, 1]
                d2 = self.path[k][2] - frames[f, 0, 2]
                for i in range(3):
                    o[k, i] = R[f, 0, i] * d0 + R[f, 1, i] * d1 + R[f, 2, i] * d2
                continue
            p[2] = <double>ground[k] if support[k] else <double>ground[k] - self.reach_below
            d0 = anchor[k, 0] - frames[f, 0, 0]
            d1 = anchor[k, 1] - frames[f, 0, 1]
            d2 = p[2] - height_d[f, 0]
            for i in range(3):
                o[k, i] = R_d[f, 0, i] * d0 + R_d[f, 1, i] * d1 + R_d[f, 2, i] * d2
            d0 = foot_pos[k, 0] - frames[f, 0, 0]
            d1 = foot_pos[k, 1] - frames[f, 0, 1]
            d2 = foot_pos[k, 2] - frames[f, 0, 2]
            now_z = R[f, 0, 2] * d0 + R[f, 1, 2] * d1 + R[f, 2, 2] * d2
            o[k, 2] = max(min(o[k, 2], now_z), now_z - self.max_extend)
        return out

    def foot_angles(self, progress, time_to_liftoff, time_to_strike):
        """[cannon, toe] angles per leg [rad] (lists), as FootAngles."""
        for k in range(4):
            self._angles(k, progress[k], time_to_liftoff[k], time_to_strike[k])
        return [[self.angle[j][k] for k in range(4)] for j in range(2)]


cdef class LegFrames:
    """The virtual force and torque each leg frame (front: chest, back: pelvis) wants, and
    how a frame's force is shared among its supporting feet: arithmetic only. The step
    decides the rest in Python (which feet support, the pull limit, the integrals).

    frame_weight: (2,) [N] the weight each frame carries; gravity [m/s^2].
    """

    cdef double weight[2]
    cdef double gravity
    cdef double kv[2][2]  # per frame: along and across the heading [N*s/m]
    cdef double kp_h[2]
    cdef double kd_h[2]
    cdef double kp_o[2]
    cdef double kd_o[2]
    cdef double kp_yaw[2]
    cdef double kd_yaw[2]
    cdef readonly object frame_force, frame_torque, yaw_torque, leg_force
    cdef double[:, ::1] _frame_force
    cdef double[:, ::1] _frame_torque
    cdef double[::1] _yaw_torque
    cdef double[:, ::1] _leg_force

    def __init__(self, frame_weight, double gravity):
        self.weight[0], self.weight[1] = frame_weight[0], frame_weight[1]
        self.gravity = gravity
        self.frame_force = np.zeros((2, 3))
        self.frame_torque = np.zeros((2, 3))
        self.yaw_torque = np.zeros(2)
        self.leg_force = np.zeros((4, 3))
        self._frame_force, self._frame_torque = self.frame_force, self.frame_torque
        self._yaw_torque, self._leg_force = self.yaw_torque, self.leg_force

    def set_gains(self, kv, kp_height, kd_height, kp_orient, kd_orient, kp_yaw, kd_yaw):
        """Per frame (front, back): kv (2, 2) along and across the heading [N*s/m], the height
        PD [N/m, N*s/m], the orientation PD [N*m/rad, N*m*s/rad], the heading PD [N*m/rad,
        N*m*s/rad]."""
        cdef int f
        for f in range(2):
            self.kv[f][0], self.kv[f][1] = kv[f][0], kv[f][1]
            self.kp_h[f], self.kd_h[f] = kp_height[f], kd_height[f]
            self.kp_o[f], self.kd_o[f] = kp_orient[f], kd_orient[f]
            self.kp_yaw[f], self.kd_yaw[f] = kp_yaw[f], kd_yaw[f]

    def wrenches(self, const double[:, :, ::1] frames, const double[:, :, ::1] frame_R,
                 const double[:, ::1] R_desired, const double[:, ::1] H2,
                 const double[:, ::1] v_d, const double[:, ::1] height_d,
                 const double[::1] yaw_err, const double[::1] w_d, double speed,
                 double turn_rate):
        """Fill `frame_force` (2, 3) [N], `yaw_torque` (2,) [N*m] and `frame_torque` (2, 3)
        [N*m]: what each frame wants from its supporting legs.

        frames (2, 3, 3): per frame its position [m], velocity [m/s] and angular velocity
        [rad/s]; frame_R (2, 3, 3) its rotation; R_desired (3, 3) the desired orientation;
        H2 (2, 2) the heading's rotation on the ground; v_d (2, 2) [m/s] each frame's desired
        ground velocity (speed integral included); height_d (2, 3): desired height [m], its
        rate and acceleration; yaw_err (2,) [rad], heading integral included; w_d (3,)
        [rad/s] the desired angular velocity; speed [m/s] and turn_rate [rad/s] commanded.
        """
        cdef int f, i, k
        cdef double h00 = H2[0, 0], h01 = H2[0, 1], h10 = H2[1, 0], h11 = H2[1, 1]
        cdef double ex, ey, along, across, centripetal, weight, e_cos, angle, sin_angle, scale
        cdef double err[3][3]
        for f in range(2):
            # k_v acts on the velocity error along and across the heading
            ex = v_d[f, 0] - frames[f, 1, 0]
            ey = v_d[f, 1] - frames[f, 1, 1]
            along = self.kv[f][0] * (ex * h00 + ey * h10)
            across = self.kv[f][1] * (ex * h01 + ey * h11)
            # the centripetal force of a turn, fed forward (0 going straight)
            centripetal = self.weight[f] / self.gravity * speed * turn_rate
            self._frame_force[f, 0] = h00 * along + h01 * across + centripetal * h01
            self._frame_force[f, 1] = h10 * along + h11 * across + centripetal * h11
            # the height PD against the height wave's rate, the weight fed its acceleration
            weight = self.weight[f] * (1.0 + height_d[f, 2] / self.gravity)
            self._frame_force[f, 2] = (self.kp_h[f] * (height_d[f, 0] - frames[f, 0, 2])
                                       - self.kd_h[f] * (frames[f, 1, 2] - height_d[f, 1])
                                       + weight)
            # the heading PD; damping acts on the yaw rate's error against the turn rate
            self._yaw_torque[f] = (self.kp_yaw[f] * yaw_err[f]
                                   + self.kd_yaw[f] * (turn_rate - frames[f, 2, 2]))
            # orientation PD: the rotation vector of R_desired R^T, damping on the angular
            # velocity's error against the desired one
            for i in range(3):
                for k in range(3):
                    err[i][k] = (R_desired[i, 0] * frame_R[f, k, 0]
                                 + R_desired[i, 1] * frame_R[f, k, 1]
                                 + R_desired[i, 2] * frame_R[f, k, 2])
            e_cos = 0.5 * (err[0][0] + err[1][1] + err[2][2] - 1.0)
            angle = acos(min(max(e_cos, -1.0), 1.0))
            sin_angle = sin(angle)
            scale = 0.5 if sin_angle < 1e-9 else angle / (2.0 * sin_angle)  # small: skew part
            self._frame_torque[f, 0] = (self.kp_o[f] * (err[2][1] - err[1][2]) * scale
                                        - self.kd_o[f] * (frames[f, 2, 0] - w_d[0]))
            self._frame_torque[f, 1] = (self.kp_o[f] * (err[0][2] - err[2][0]) * scale
                                        - self.kd_o[f] * (frames[f, 2, 1] - w_d[1]))
            self._frame_torque[f, 2] = (self.kp_o[f] * (err[1][0] - err[0][1]) * scale
                                        - self.kd_o[f] * (frames[f, 2, 2] - w_d[2]))

    def share(self, const double[:, ::1] frame_force, const double[::1] yaw_torque,
              const double[:, ::1] foot, const double[:, :, ::1] frames, support):
        """Fill `leg_force` (4, 3) [N]: each frame's force shared equally among its
        supporting feet (`support`, 4 flags), plus its yaw torque as horizontal forces at
        those feet, f = tau z x r / sum |r|^2 (r from the frame's origin, frames[f, 0]);
        0 for the other feet. foot (4, 3) [m]."""
        cdef int f, k, n
        cdef double x, y, denom
        self._leg_force[:, :] = 0.0
        for f in range(2):
            n = 0
            denom = 0.0
            for k in range(2 * f, 2 * f + 2):
                if support[k]:
                    n += 1
                    x, y = foot[k, 0] - frames[f, 0, 0], foot[k, 1] - frames[f, 0, 1]
                    denom += x * x + y * y
            for k in range(2 * f, 2 * f + 2):
                if support[k]:
                    x, y = foot[k, 0] - frames[f, 0, 0], foot[k, 1] - frames[f, 0, 1]
                    if denom >= 1e-6:
                        self._leg_force[k, 0] = -yaw_torque[f] * y / denom
                        self._leg_force[k, 1] = yaw_torque[f] * x / denom
                    self._leg_force[k, 0] += frame_force[f, 0] / n
                    self._leg_force[k, 1] += frame_force[f, 1] / n
                    self._leg_force[k, 2] += frame_force[f, 2] / n


cdef class HangingChains:
    """The upper body's chains of pitch-then-yaw joints that hang off a leg frame (neck and
    head off the chest, the tail off the pelvis): the joint torques [N*m] that hold each
    chain up against gravity in its pose now, tau_j = (a_j x (C_j - M_j p_j)) . g z, with
    M_j and C_j the mass and first moment of everything beyond joint j.

    Per link, in chain order (a chain's links follow one another; `root` says which frame a
    chain starts from, 0 chest, 1 pelvis, and -1 a link that continues the chain before):
    root, origin (3) [m] in the parent's frame, centre of mass (3) [m] in its own frame,
    mass [kg], and the indices of its pitch and yaw joints among the skeleton's joints.
    """

    cdef int n
    cdef int root[16]
    cdef double origin[16][3]
    cdef double centre[16][3]
    cdef double mass[16]
    cdef Py_ssize_t joint[16][2]
    cdef double gravity

    def __init__(self, root, origin, centre, mass, joint, double gravity):
        cdef int i
        self.n = len(mass)
        if self.n > 16 or root[0] < 0:
            raise ValueError("at most 16 links, the first starting a chain")
        for i in range(self.n):
            self.root[i], self.mass[i] = root[i], mass[i]
            self.joint[i][0], self.joint[i][1] = joint[i][0], joint[i][1]
            self.origin[i][0], self.origin[i][1], self.origin[i][2] = origin[i]
            self.centre[i][0], self.centre[i][1], self.centre[i][2] = centre[i]
        self.gravity = gravity

    def torques(self, const double[:, :, ::1] frame_R, const double[::1] q, double[::1] tau):
        """Write each chain joint's holding torque into tau (n_joints), the chains' roots
        turned by frame_R (2, 3, 3) (chest, pelvis) and their joints at angles q."""
        cdef int i, a, b, k
        cdef double R[3][3]
        cdef double T[3][3]
        cdef double p[16][3]
        cdef double axis[16][2][2]  # the pitch and yaw axes' x and y (z adds no torque)
        cdef double com[16][3]
        cdef double c, s, mass_below, rx, ry
        cdef double moment[3]
        for i in range(self.n):
            if self.root[i] >= 0:  # a new chain: its root frame, its origin at 0
                for a in range(3):
                    p[i][a] = 0.0
                    for b in range(3):
                        R[a][b] = frame_R[self.root[i], a, b]
            else:
                for a in range(3):
                    p[i][a] = p[i - 1][a]
            for a in range(3):
                p[i][a] += (R[a][0] * self.origin[i][0] + R[a][1] * self.origin[i][1]
                            + R[a][2] * self.origin[i][2])
            # pitch: about the parent's y; then yaw: about the pitched frame's z
            axis[i][0][0], axis[i][0][1] = R[0][1], R[1][1]
            c, s = cos(q[self.joint[i][0]]), sin(q[self.joint[i][0]])
            for a in range(3):
                T[a][0] = R[a][0] * c - R[a][2] * s
                T[a][1] = R[a][1]
                T[a][2] = R[a][0] * s + R[a][2] * c
            axis[i][1][0], axis[i][1][1] = T[0][2], T[1][2]
            c, s = cos(q[self.joint[i][1]]), sin(q[self.joint[i][1]])
            for a in range(3):
                R[a][0] = T[a][0] * c + T[a][1] * s
                R[a][1] = T[a][1] * c - T[a][0] * s
                R[a][2] = T[a][2]
            for a in range(3):
                com[i][a] = p[i][a] + (R[a][0] * self.centre[i][0] + R[a][1] * self.centre[i][1]
                                       + R[a][2] * self.centre[i][2])
        # distal sums, from the last link back; a chain's last link starts its sums afresh
        for k in range(self.n - 1, -1, -1):
            if k == self.n - 1 or self.root[k + 1] >= 0:
                mass_below, moment[0], moment[1] = 0.0, 0.0, 0.0
            mass_below += self.mass[k]
            moment[0] += self.mass[k] * com[k][0]
            moment[1] += self.mass[k] * com[k][1]
            rx, ry = moment[0] - mass_below * p[k][0], moment[1] - mass_below * p[k][1]
            for a in range(2):
                tau[self.joint[k][a]] = self.gravity * (axis[k][a][0] * ry - axis[k][a][1] * rx)

def spine_pitch_yaw(double back_pitch, double front_pitch, double cos_half_back_yaw,
                    double sin_half_back_yaw, double cos_half_front_yaw,
                    double sin_half_front_yaw, int n_joints):
    """(pitch, yaw) [rad] of each of n_joints equal spine rotations that turn the back leg
    frame's desired orientation into the front's, each frame's given by its pitch [rad]
    and the cosine and sine of half its yaw (R = Rz(yaw) Ry(pitch)); each joint rotates
    pitch (about its y) then yaw (about its z). As `split_spine` of tests/reference/spine.py."""
    cdef double cp, sp, bx, by, bz, bw, fx, fy, fz, fw, x, y, z, w, norm, angle, half, s
    # the two orientations (pitch_yaw_quat), xyzw
    cp, sp = cos(back_pitch / 2), sin(back_pitch / 2)
    bx, by, bz, bw = -sin_half_back_yaw * sp, cos_half_back_yaw * sp, sin_half_back_yaw * cp, cos_half_back_yaw * cp
    cp, sp = cos(front_pitch / 2), sin(front_pitch / 2)
    fx, fy, fz, fw = -sin_half_front_yaw * sp, cos_half_front_yaw * sp, sin_half_front_yaw * cp, cos_half_front_yaw * cp
    # the relative rotation conj(back) front
    bx, by, bz = -bx, -by, -bz
    x = bw * fx + bx * fw + by * fz - bz * fy
    y = bw * fy - bx * fz + by * fw + bz * fx
    z = bw * fz + bx * fy - by * fx + bz * fw
    w = bw * fw - bx * fx - by * fy - bz * fz
    # its n-th root: the same axis, 1/n of the angle (the shortest way)
    if w < 0:
        x, y, z, w = -x, -y, -z, -w
    norm = sqrt(x * x + y * y + z * z)
    angle = 2.0 * atan2(norm, w)
    if angle < 1e-12:
        return 0.0, 0.0
    half = 0.5 * angle * (1.0 / n_joints)
    s = sin(half)
    x, y, z, w = x / norm * s, y / norm * s, z / norm * s, cos(half)
    # R = Ry(pitch) Rz(yaw): R[1][0] = sin(yaw), R[2][0] / R[0][0] = -tan(pitch)
    return (atan2(-(2 * (x * z - w * y)), 1 - 2 * (y * y + z * z)),
            asin(min(max(2 * (x * y + w * z), -1.0), 1.0)))


def track_targets(double[::1] q_target, const double[::1] lower, const double[::1] upper,
                  double[::1] previous, double[::1] rate, const Py_ssize_t[:, ::1] leg_idx,
                  still, double dt, double max_rate, double smoothing):
    """The joint targets' rates for the PD damping, in place: q_target [rad] clipped to
    [lower, upper]; `rate` [rad/s] moves by `smoothing` of the way to the targets' own rate
    since `previous` (clipped to +-max_rate; the targets jitter), and is 0 on the joints
    (leg_idx (4, 5)) of the legs flagged `still` (4): only swing legs track a moving
    target. previous := q_target."""
    cdef Py_ssize_t j, n = q_target.shape[0]
    cdef int k, i
    cdef double raw
    if not (lower.shape[0] == upper.shape[0] == previous.shape[0] == rate.shape[0] == n):
        raise ValueError("q_target, lower, upper, previous and rate must have one length")
    for j in range(n):
        q_target[j] = min(max(q_target[j], lower[j]), upper[j])
        raw = min(max((q_target[j] - previous[j]) / dt, -max_rate), max_rate)
        previous[j] = q_target[j]
        rate[j] += smoothing * (raw - rate[j])
    for k in range(4):
        if still[k]:
            for i in range(5):
                rate[leg_idx[k, i]] = 0.0


def hip_servo(const double[:, ::1] gains, const double[::1] q_target, const double[::1] q,
              const double[::1] qd_target, const double[::1] qd,
              const Py_ssize_t[:, ::1] hip_idx, double[:, ::1] out):
    """The PD torques [N*m] of the hips (hip_idx (4, 2): each leg's roll and pitch joints)
    into out (4, 2): kp (q_target - q) + kd (qd_target - qd), gains (2, n): kp and kd."""
    cdef int k, a
    cdef Py_ssize_t j
    for k in range(4):
        for a in range(2):
            j = hip_idx[k, a]
            out[k, a] = (gains[0, j] * (q_target[j] - q[j])
                         + gains[1, j] * (qd_target[j] - qd[j]))
