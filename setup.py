"""Builds the compiled parts of the control step (controller/legchain.pyx, the legs and leg
frames; controller/jointservo.pyx, the joint servo; controller/heightgrid.pyx, the ground
map's grid read on terrain); the rest of the project's metadata is in pyproject.toml."""

from Cython.Build import cythonize
from setuptools import Extension, setup

# no fused multiply-adds (gcc contracts a * b + c by default where the CPU has FMA): the
# same floats on every machine, as determinism asks
extensions = [
    Extension(
        f"quadsim.controller.{name}",
        [f"controller/{name}.pyx"],
        extra_compile_args=["-O2", "-ffp-contract=off"],
    )
    for name in ("legchain", "jointservo", "heightgrid")
]
setup(ext_modules=cythonize(extensions, language_level=3))
