"""Plain numpy references of the control step's compiled arithmetic (controller/legchain.pyx).

Written for reading, from the paper's formulas, not the kernels' order of operations: the
tests hold the kernels to them within float tolerance, and test_controller_parts holds these
to their physical meaning. They are test code, not shipped with the package."""
