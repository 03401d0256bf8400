"""quadsim: physics-based quadruped locomotion (Coros et al. 2011) on pybullet.

The API::

    import quadsim
    result, summary = quadsim.simulate("trot", 2.0, 10.0, seed=0)

Subpackages: ``quadsim.models`` (the dog's body), ``quadsim.controller`` (World, the control
step, the episode loop), ``quadsim.gaits`` (gait graphs and parameters), ``quadsim.mocap``
(motion capture), ``quadsim.optimize`` (CMA-ES), ``quadsim.ik`` (the IK toolkit, no pybullet),
``quadsim.export`` (a run as BVH or glTF) and ``quadsim.scripts`` (the command line).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from quadsim.errors import QuadsimError

__version__ = "0.2.0"

# loaded on first use, so `import quadsim.ik` does not pull pybullet in
_LAZY = {
    "simulate": "quadsim.controller.simulate",
    "World": "quadsim.controller.sim",
    "Push": "quadsim.controller.sim",
    "Controller": "quadsim.controller.loop",
    "Profile": "quadsim.controller.profile",
    "GaitParams": "quadsim.gaits.params",
}

__all__ = [
    "Controller",
    "GaitParams",
    "Profile",
    "Push",
    "QuadsimError",
    "World",
    "__version__",
    "simulate",
]

if TYPE_CHECKING:
    from quadsim.controller.loop import Controller
    from quadsim.controller.profile import Profile
    from quadsim.controller.sim import Push, World
    from quadsim.controller.simulate import simulate
    from quadsim.gaits.params import GaitParams


def __getattr__(name: str) -> object:
    if name not in _LAZY:
        raise AttributeError(f"module 'quadsim' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
