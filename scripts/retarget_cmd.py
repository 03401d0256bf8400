"""`quadsim retarget MOCAP --out REF.npz [--plot FIG.png] [--preset shepherd]`: fit the dog
model's skeleton to a motion-capture clip and write joint-angle reference trajectories
(the method: quadsim.mocap.retarget)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from quadsim.mocap.errors import RetargetError
from quadsim.mocap.motion import MOCAP_ATTRIBUTION, load_reference
from quadsim.mocap.retarget import build_fit_model, fit_motion, write_npz
from quadsim.models import build_skeleton, preset
from quadsim.plots import plot_fit
from quadsim.scripts.common import progress_bar, writable_path


def add_parser(subparsers: Any) -> None:
    """Register the ``retarget`` subcommand."""
    p = subparsers.add_parser(
        "retarget",
        help="fit the dog skeleton to motion capture (joint-angle reference)",
        description=__doc__.split("\n\n")[0],
    )
    p.add_argument(
        "mocap",
        type=Path,
        metavar="MOCAP",
        help="dog mocap *_joint_pos.txt (or a t,marker,x,y,z CSV)",
    )
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="REF.npz",
        help="write the reference trajectories here",
    )
    p.add_argument(
        "--plot",
        type=Path,
        metavar="FIG.png",
        help="side view of markers vs the fitted model for a few frames",
    )
    p.add_argument("--preset", default="shepherd", help="dog preset (default shepherd)")
    p.add_argument("--start", type=int, default=0, metavar="K", help="first frame (default 0)")
    p.add_argument(
        "--frames",
        type=int,
        default=None,
        metavar="N",
        help="fit only N frames from --start (default: all)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Fit, write ``--out`` (and ``--plot``); print a short summary. Returns 0."""
    out = writable_path(args.out, (".npz",))
    fig = writable_path(args.plot, (".png", ".pdf", ".svg")) if args.plot else None
    motion = load_reference(args.mocap)
    start = int(getattr(args, "start", 0) or 0)
    frames = getattr(args, "frames", None)
    if start < 0 or start >= motion.n_frames:
        raise RetargetError(f"--start must be in 0..{motion.n_frames - 1}, got {start}")
    if frames is not None:
        if frames < 1:
            raise RetargetError(f"--frames must be >= 1, got {frames}")
        motion = motion.slice(start, min(start + frames, motion.n_frames))
    elif start:
        motion = motion.slice(start, motion.n_frames)
    model = build_fit_model(build_skeleton(preset(args.preset)))
    update, close = progress_bar(not args.quiet, "retarget")
    try:
        fit = fit_motion(model, motion, update)
    finally:
        close()
    arrays = write_npz(out, fit, model, motion, args.preset)
    if fig is not None:
        plot_fit(fig, fit, model, motion.attribution or MOCAP_ATTRIBUTION)
    toe = arrays["toe_error"].mean() * 100
    print(
        f"retarget: {motion.n_frames} frames of {Path(motion.source).name} -> {out} "
        f"(scale {fit.scale:.3f}); mean fit error {arrays['fit_error'].mean() * 100:.2f} cm "
        f"(toes {toe:.2f} cm, all markers {np.nanmean(arrays['all_marker_error']) * 100:.2f} "
        f"cm); FABRIK {fit.iterations.mean():.1f} iterations/frame"
        + (f"; plot: {fig}" if fig else "")
    )
    return 0
