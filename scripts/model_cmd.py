"""`quadsim model`: what the dog is made of, and its URDF."""

from __future__ import annotations

import argparse
import json

from quadsim.models import build_skeleton, preset, urdf_text
from quadsim.scripts.common import writable_path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("model", help="show the dog model or write its URDF")
    p.add_argument("--preset", default="shepherd", help="dog preset (shepherd, small)")
    p.add_argument("--info", action="store_true", help="mass, DOF, links, joints with limits")
    p.add_argument("--urdf", metavar="FILE", help="write the generated URDF to FILE")
    p.add_argument("--json", action="store_true", help="--info as JSON")
    p.set_defaults(func=run)


def info(preset_name: str) -> dict:
    sk = build_skeleton(preset(preset_name))
    return {
        "preset": sk.spec.name,
        "total_mass_kg": round(sk.total_mass, 4),
        "dof": len(sk.joints),
        "links": len(sk.links),
        "rigid_bodies": sk.n_bodies,
        "joints": [
            {
                "name": j.name,
                "kind": j.kind,
                "lower_rad": j.lower,
                "upper_rad": j.upper,
                "torque_limit_Nm": round(j.torque_limit, 3),
            }
            for j in sk.joints
        ],
        "legs": {leg: list(m.joints) for leg, m in sk.legs.items()},
    }


def run(args: argparse.Namespace) -> int:
    spec = preset(args.preset)
    if args.urdf:
        path = writable_path(args.urdf)
        path.write_text(urdf_text(spec))
        print(f"wrote {path}")
    if args.info or not args.urdf:
        data = info(args.preset)
        if args.json:
            print(json.dumps(data))
            return 0
        print(
            f"preset {data['preset']}: {data['total_mass_kg']} kg, {data['dof']} DOF, "
            f"{data['links']} links ({data['rigid_bodies']} rigid bodies)"
        )
        print(f"{'joint':22} {'lower':>7} {'upper':>7} {'torque':>8}")
        for j in data["joints"]:
            print(
                f"{j['name']:22} {j['lower_rad']:7.2f} {j['upper_rad']:7.2f} "
                f"{j['torque_limit_Nm']:8.1f}"
            )
    return 0
