"""Benchmark the ik solvers against ikpy (and pyfabrik) on the same chains and targets.

Prints one table (success rate, mean / p95 iterations, median microseconds per solve,
median error) per chain and target stratum, then the ratios measured in this run and
whether the issue's targets are met. Success means the forward kinematics of the
returned joint angles is within ``tol = 1e-4 * reach`` of the target (for every
effector of a tree). Our solvers always honour the chain's joint limits; ikpy gets box
bounds on Euler angles that contain our cones (an easier problem), so its rows also
show ``lim %``: answers that reach the target *and* satisfy our limits. ikpy runs with
its defaults (scipy least_squares from the zero pose, converging to ~1e-9).

    python benchmarks/bench_ik.py              # 1000 targets per chain (a few minutes)
    python benchmarks/bench_ik.py --quick      # smoke test, a few seconds
    python benchmarks/bench_ik.py --n 300 --slow-n 50 --md benchmarks/RESULTS_ik.md

Strata (distance of the target from the root over the reach; for the tree, the largest
and smallest ratio over the effectors): ``base`` < 0.3, ``interior`` 0.3..0.85, ``full``
> 0.85 (all reachable: made by forward kinematics of random in-limit angles), and for
chains ``beyond``: 1.05..1.5 times the reach (unreachable; FABRIK must stop after one
iteration).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections import defaultdict

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from ik_chains import Case, all_cases, ikpy_fk_tip  # noqa: E402

from quadsim.ik import ccd, fabrik, fabrik_batch, jacobian_ik  # noqa: E402

STRATA = ("base", "interior", "full", "beyond")
QUOTA = {"base": 0.25, "interior": 0.5, "full": 0.25}


def stratum(tree, pos: np.ndarray, effs) -> str:
    reach_e = _effector_reach(tree, effs)
    d = np.linalg.norm(pos[list(effs)] - tree.root, axis=-1) / reach_e
    if d.max() > 0.85:
        return "full"
    if d.min() < 0.3:
        return "base"
    return "interior"


def _effector_reach(tree, effs) -> np.ndarray:
    acc = np.zeros(tree.n_nodes)
    lens = np.r_[0.0, tree.lengths]
    for v in range(1, tree.n_nodes):
        acc[v] = acc[tree.parents[v]] + lens[v]
    return acc[list(effs)]


def make_targets(case: Case, n: int, rng: np.random.Generator):
    """Stratified reachable targets (+ unreachable ones for chains)."""
    tree = case.tree
    effs = tree.effectors
    want = {k: int(round(q * n)) for k, q in QUOTA.items()}
    got: dict[str, list] = {k: [] for k in QUOTA}
    for _ in range(400):
        if all(len(got[k]) >= want[k] for k in QUOTA):
            break
        scale = rng.uniform(0.0, np.pi, size=(2000, 1))
        q = tree.clamp(rng.uniform(-1.0, 1.0, size=(2000, tree.dof)) * scale)
        pos = tree.forward(q)
        for p in pos:
            s = stratum(tree, p, effs)
            if len(got[s]) < want[s]:
                got[s].append(p[list(effs)])
    out = {k: np.array(v) for k, v in got.items() if v}
    if len(effs) == 1:
        m = max(1, n // 10)
        d = rng.normal(size=(m, tree.dim))
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        out["beyond"] = (tree.root + d * tree.reach * rng.uniform(1.05, 1.5, (m, 1)))[:, None]
    return out


def fk_error(tree, q, target) -> float:
    pos = tree.forward(q)
    return float(np.max(np.linalg.norm(pos[list(tree.effectors)] - target, axis=-1)))


def run_ours(name, case, targets, tol, max_iter):
    tree = case.tree
    effs = tree.effectors
    rows = []
    for t in targets:
        tg = t[0] if len(effs) == 1 else {e: t[k] for k, e in enumerate(effs)}
        t0 = time.perf_counter()
        if name == "fabrik":
            res = fabrik(tree, tg, tol=tol, max_iter=max_iter)
        elif name == "ccd":
            res = ccd(tree, tg, tol=tol, max_iter=max_iter)
        else:
            res = jacobian_ik(tree, tg, tol=tol, max_iter=max_iter, method="dls")
        dt = time.perf_counter() - t0
        rows.append(
            (
                fk_error(tree, res.angles, t),
                res.iterations,
                dt,
                float(tree.violation(res.angles)),
                bone_error(tree, res.angles),
            )
        )
    return rows


def bone_error(tree, q) -> float:
    """Largest relative bone-length error of the forward kinematics of ``q``."""
    pos = tree.forward(q)
    lens = np.linalg.norm(pos[..., 1:, :] - pos[..., tree.parents[1:], :], axis=-1)
    return float(np.max(np.abs(lens / tree.lengths - 1.0)))


def time_loop(case, targets, tol, max_iter) -> float:
    """Seconds for the one-at-a-time loop of ``fabrik`` over ``targets``."""
    tree = case.tree
    effs = tree.effectors
    goals = [t[0] if len(effs) == 1 else {e: t[k] for k, e in enumerate(effs)} for t in targets]
    t0 = time.perf_counter()
    for g in goals:
        fabrik(tree, g, tol=tol, max_iter=max_iter)
    return time.perf_counter() - t0


def run_batch(case, targets, tol, max_iter):
    tree = case.tree
    effs = tree.effectors
    tg = targets[:, 0] if len(effs) == 1 else {e: targets[:, k] for k, e in enumerate(effs)}
    t0 = time.perf_counter()
    res = fabrik_batch(tree, tg, tol=tol, max_iter=max_iter, angles=True)
    dt = time.perf_counter() - t0
    errs = np.max(
        np.linalg.norm(tree.forward(res.angles)[:, list(effs)] - targets, axis=-1), axis=-1
    )
    viol = tree.violation(res.angles)
    per = dt / len(targets)
    return [
        (float(e), int(i), per, float(v), 0.0)
        for e, i, v in zip(errs, res.iterations, viol, strict=True)
    ], dt


def run_ikpy(case, targets):
    kc = case.ikpy
    rows = []
    for t in targets:
        tt = np.zeros(3)
        tt[: case.tree.dim] = t[0]
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            q = kc.inverse_kinematics(target_position=tt)
        dt = time.perf_counter() - t0
        viol = float(case.tree.violation(case.ikpy_q(q))) if case.ikpy_q else 0.0
        rows.append((float(np.linalg.norm(ikpy_fk_tip(kc, q) - tt)), -1, dt, viol, 0.0))
    return rows


def _pyfabrik_capped(dim, cap):
    import pyfabrik

    base = pyfabrik.Fabrik2D if dim == 2 else pyfabrik.Fabrik3D

    class Capped(base):  # pyfabrik has no iteration cap: same loop, stopped at ``cap``
        def _iterate(self, target):
            iteration = 0
            initial_position = self.joints[0]
            last = len(self.joints) - 1
            while (self.joints[-1] - target).length > self.tolerance and iteration < cap:
                iteration += 1
                self.joints[-1] = target
                for i in reversed(range(0, last)):
                    nxt, cur = self.joints[i + 1], self.joints[i]
                    share = self.lengths[i] / (nxt - cur).length
                    self.joints[i] = (1 - share) * nxt + share * cur
                self.joints[0] = initial_position
                for i in range(0, last):
                    nxt, cur = self.joints[i + 1], self.joints[i]
                    share = self.lengths[i] / (nxt - cur).length
                    self.joints[i + 1] = (1 - share) * cur + share * nxt
            return iteration

    return Capped


def pyfabrik_works() -> tuple[bool, str]:
    """pyfabrik 0.4.0 relies on vectormath, whose arithmetic returns plain ndarrays
    under numpy 2 (then ``.length`` fails): probe it instead of assuming it works."""
    try:
        from pyfabrik import Fabrik2D
        from vectormath import Vector2

        Fabrik2D([Vector2(0.0, 0.0), Vector2(1.0, 0.0)], tolerance=1e-3).move_to(Vector2(0.0, 1.0))
    except ImportError as exc:
        return False, f"not installed ({exc})"
    except Exception as exc:  # noqa: BLE001 - any failure means it cannot be benchmarked
        return False, f"does not run with numpy {np.__version__}: {type(exc).__name__}: {exc}"
    return True, ""


def run_pyfabrik(case, targets, tol, cap):
    from vectormath import Vector2, Vector3

    vec = Vector2 if case.tree.dim == 2 else Vector3
    solver_cls = _pyfabrik_capped(case.tree.dim, cap)
    rest = case.tree.rest_positions()
    rows = []
    for t in targets:
        solver = solver_cls([vec(*p) for p in rest], tolerance=tol)
        t0 = time.perf_counter()
        it = solver.move_to(vec(*t[0]))
        dt = time.perf_counter() - t0
        end = np.array(solver.joints[-1])
        rows.append((float(np.linalg.norm(end - t[0])), it, dt, 0.0, 0.0))
    return rows


def summarize(rows, tol, reach):
    err = np.array([r[0] for r in rows])
    its = np.array([r[1] for r in rows])
    dt = np.array([r[2] for r in rows])
    viol = np.array([r[3] for r in rows])
    ok = err <= tol * (1 + 1e-9)
    return {
        "n": len(rows),
        "success": 100.0 * ok.mean(),
        "success_lim": 100.0 * (ok & (viol <= 1e-9)).mean(),
        "max_viol": float(viol.max()),
        "max_bone": float(max(r[4] for r in rows)),
        "mean_it": float(its.mean()) if its[0] >= 0 else float("nan"),
        "p95_it": float(np.percentile(its, 95)) if its[0] >= 0 else float("nan"),
        "median_us": float(np.median(dt) * 1e6),
        "mean_us": float(dt.mean() * 1e6),
        "median_err": float(np.median(err) / reach),
        "iters": its,
    }


def fmt(x, spec):
    return "-" if x != x else format(x, spec)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="targets per chain (default 1000)")
    ap.add_argument(
        "--slow-n",
        type=int,
        default=200,
        help="targets per chain for ccd and jacobian_ik (default 200)",
    )
    ap.add_argument(
        "--peer-n",
        type=int,
        default=None,
        help="targets per chain for ikpy / pyfabrik (default: --n)",
    )
    ap.add_argument("--quick", action="store_true", help="smoke test: 40 targets, 10 slow")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-iter", type=int, default=100)
    ap.add_argument(
        "--chains",
        default=None,
        help="comma-separated substrings: only the chains whose name matches",
    )
    ap.add_argument("--md", default=None, help="also write the table as Markdown to this file")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.slow_n = 40, 10
        args.peer_n = 10 if args.peer_n is None else args.peer_n
    peer_n = args.n if args.peer_n is None else args.peer_n
    rng = np.random.default_rng(args.seed)
    try:
        import ikpy  # noqa: F401

        have_ikpy = True
    except ImportError:
        have_ikpy = False
    have_pyfabrik, why = pyfabrik_works()
    if not have_pyfabrik:
        print(f"pyfabrik skipped: {why}", file=sys.stderr)

    lines = []
    header = (
        f"| {'chain':<24}| {'stratum':<9}| {'solver':<13}| {'N':>5} | {'success %':>9} | "
        f"{'lim %':>6} | {'mean it':>7} | {'p95 it':>6} | {'median us':>10} | "
        f"{'mean us':>8} | {'median err/R':>12} |"
    )
    lines.append(header)
    lines.append("|" + "|".join("-" * (len(c)) for c in header.split("|")[1:-1]) + "|")
    ratios = []
    verdicts = []
    t_start = time.perf_counter()
    for case in all_cases():
        tree = case.tree
        reach = tree.reach
        tol = 1e-4 * reach
        strata = make_targets(case, args.n, rng)  # drawn for every chain: same targets
        if args.chains and not any(c.strip() in case.name for c in args.chains.split(",")):
            continue
        results: dict[str, dict[str, dict]] = defaultdict(dict)
        for sname in STRATA:
            if sname not in strata:
                continue
            tg = strata[sname]
            k_slow = max(1, int(round(len(tg) * args.slow_n / args.n)))
            k_peer = max(1, int(round(len(tg) * peer_n / args.n)))
            results[sname]["fabrik"] = summarize(
                run_ours("fabrik", case, tg, tol, args.max_iter), tol, reach
            )
            brows, _ = run_batch(case, tg, tol, args.max_iter)
            results[sname]["fabrik_batch"] = summarize(brows, tol, reach)
            results[sname]["ccd"] = (
                summarize(run_ours("ccd", case, tg[:k_slow], tol, 500), tol, reach)
                if tree.is_chain
                else None
            )
            results[sname]["jacobian_dls"] = summarize(
                run_ours("jacobian", case, tg[:k_slow], tol, 500), tol, reach
            )
            if have_ikpy and case.ikpy is not None:
                results[sname]["ikpy"] = summarize(run_ikpy(case, tg[:k_peer]), tol, reach)
            if have_pyfabrik and case.pyfabrik_dim is not None:
                results[sname]["pyfabrik"] = summarize(
                    run_pyfabrik(case, tg[:k_peer], tol, 10 * args.max_iter), tol, reach
                )
        # all targets of the chain: one batch call vs the one-at-a-time loop, best of 2 each
        all_t = np.concatenate([strata[s] for s in STRATA if s in strata])
        batch_dt = min(run_batch(case, all_t, tol, args.max_iter)[1] for _ in range(2))
        loop_dt = min(time_loop(case, all_t, tol, args.max_iter) for _ in range(2))
        for sname, per in results.items():
            for solver, s in per.items():
                if s is None:
                    continue
                unreach = sname == "beyond"
                lim = s["success_lim"] if solver == "ikpy" and case.ikpy_q else float("nan")
                lines.append(
                    f"| {case.name:<24}| {sname:<9}| {solver:<13}| {s['n']:>5} | "
                    f"{fmt(s['success'] if not unreach else float('nan'), '9.1f')} | "
                    f"{fmt(lim if not unreach else float('nan'), '6.1f')} | "
                    f"{fmt(s['mean_it'], '7.1f')} | {fmt(s['p95_it'], '6.0f')} | "
                    f"{s['median_us']:>10.0f} | {s['mean_us']:>8.0f} | "
                    f"{s['median_err']:>12.1e} |"
                )
        reach_strata = [s for s in ("base", "interior", "full") if s in results]
        fab = {s: results[s]["fabrik"] for s in reach_strata}
        msg = []
        ok_ikpy = None
        if "ikpy" in results["interior"]:
            ikp = {s: results[s]["ikpy"] for s in reach_strata}
            per_s = []
            ok_ikpy = True
            for s in reach_strata:
                r_med = ikp[s]["median_us"] / fab[s]["median_us"]
                r_mean = ikp[s]["mean_us"] / fab[s]["mean_us"]
                better = fab[s]["success"] >= ikp[s]["success"]
                ok_ikpy &= better and r_med >= 20 and r_mean >= 20
                per_s.append(
                    f"{s} {r_med:.0f}x median / {r_mean:.0f}x mean, success "
                    f"{fab[s]['success']:.1f}% vs {ikp[s]['success']:.1f}% "
                    f"(ikpy within our limits {ikp[s]['success_lim']:.1f}%)"
                )
            msg.append("ikpy/fabrik time: " + "; ".join(per_s))
        if "pyfabrik" in results["interior"]:
            py_us = np.median([results[s]["pyfabrik"]["median_us"] for s in reach_strata])
            fab_us = np.median([fab[s]["median_us"] for s in reach_strata])
            msg.append(f"pyfabrik/fabrik time {py_us / fab_us:.1f}x")
        per_loop = loop_dt / len(all_t)
        per_batch = batch_dt / len(all_t)
        ratio_b = per_loop / per_batch
        msg.append(
            f"batch of {len(all_t)}: {per_batch * 1e6:.1f} us/target vs loop "
            f"{per_loop * 1e6:.0f} us/target = {ratio_b:.1f}x"
        )
        if "beyond" in results:
            one = np.mean(results["beyond"]["fabrik"]["iters"] == 1) * 100
            msg.append(f"unreachable targets solved in exactly 1 iteration: {one:.0f}%")
        viol = max(results[s][k]["max_viol"] for s in results for k in ("fabrik", "fabrik_batch"))
        bone = max(results[s]["fabrik"]["max_bone"] for s in results)
        msg.append(
            f"fabrik: max constraint violation {viol:.1e} rad, max bone-length error "
            f"{bone:.1e} (relative)"
        )
        ratios.append(f"  {case.name}: " + "; ".join(msg))
        inter = fab["interior"]
        v = [
            f"interior {inter['success']:.1f}% / {inter['mean_it']:.1f} it "
            f"({'met' if inter['success'] >= 99.5 and inter['mean_it'] <= 10 else 'NOT met'})",
            f"batch {ratio_b:.1f}x ({'met' if ratio_b >= 10 else 'NOT met'})",
        ]
        if ok_ikpy is not None:
            v.append(f"vs ikpy ({'met' if ok_ikpy else 'NOT met'})")
        verdicts.append(f"  {case.name}: " + ", ".join(v))
    out = "\n".join(lines)
    print(out)
    print()
    print(
        f"ratios (one run, seed {args.seed}, n={args.n}, slow-n={args.slow_n}, "
        f"peer-n={peer_n}, tol=1e-4*reach, {time.perf_counter() - t_start:.0f} s):"
    )
    print("\n".join(ratios))
    print(
        "targets (interior >= 99.5 % and <= 10 iterations; batch >= 10x the loop; "
        ">= 20x faster than ikpy with success >= ikpy's):"
    )
    print("\n".join(verdicts))
    if args.md:
        with open(args.md, "w") as fh:
            fh.write("# ik benchmark results\n\n")
            fh.write(
                "Command: `python benchmarks/bench_ik.py "
                + " ".join(argv if argv is not None else sys.argv[1:])
                + "`\n\n"
            )
            fh.write(out + "\n\nRatios:\n\n")
            fh.write("\n".join("-" + r[1:] for r in ratios) + "\n\nTargets:\n\n")
            fh.write("\n".join("-" + r[1:] for r in verdicts) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
