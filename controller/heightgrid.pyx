# cython: boundscheck=False, wraparound=False, cdivision=True
"""A regular grid of ground heights, read at control-step rate: bilinear heights and the
highest node along a segment (the footing reads both several times a step on terrain)."""

from libc.math cimport INFINITY, hypot

import numpy as np


cdef class HeightGrid:
    """Heights [m] on a grid `cell` [m] apart, its first node at (x0, y0) [m]; `heights`
    (nx, ny)."""

    cdef readonly double x0, y0, cell
    cdef readonly object heights
    cdef const double[:, ::1] h
    cdef Py_ssize_t nx, ny

    def __init__(self, double x0, double y0, double cell, heights):
        self.x0, self.y0, self.cell = x0, y0, cell
        self.heights = np.ascontiguousarray(heights, dtype=float)
        self.h = self.heights
        self.nx, self.ny = self.heights.shape[0], self.heights.shape[1]

    cpdef double at(self, double x, double y):
        """The height at (x, y), bilinear; the edge nodes' beyond the grid."""
        cdef double u = min(max((x - self.x0) / self.cell, 0.0), self.nx - 1.001)
        cdef double v = min(max((y - self.y0) / self.cell, 0.0), self.ny - 1.001)
        cdef Py_ssize_t i = <Py_ssize_t>u, j = <Py_ssize_t>v
        cdef double fu = u - i, fv = v - j
        cdef double near = self.h[i, j] * (1 - fv) + self.h[i, j + 1] * fv
        cdef double far = self.h[i + 1, j] * (1 - fv) + self.h[i + 1, j + 1] * fv
        return near * (1 - fu) + far * fu

    cpdef double max_along(self, double x0, double y0, double x1, double y1):
        """The highest node [m] on the segment from (x0, y0) to (x1, y1): the nearest node
        at every cell's length along it."""
        cdef Py_ssize_t n = <Py_ssize_t>(hypot(x1 - x0, y1 - y0) / self.cell) + 1
        cdef Py_ssize_t m, i, j
        cdef double f, top = -INFINITY  # no Python lookup in the step
        for m in range(n + 1):
            f = m / <double>n
            i = <Py_ssize_t>((x0 + (x1 - x0) * f - self.x0) / self.cell + 0.5)
            j = <Py_ssize_t>((y0 + (y1 - y0) * f - self.y0) / self.cell + 0.5)
            i = min(max(i, 0), self.nx - 1)
            j = min(max(j, 0), self.ny - 1)
            top = max(top, self.h[i, j])
        return top
