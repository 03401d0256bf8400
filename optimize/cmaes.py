"""CMA-ES runner (pycma ask/tell) over a unit-box parameter vector, with exact resume.

The optimizer sees one picklable, module-level objective ``fn(x_unit, seed)`` returning a
float or a record (an object with ``total`` and ``terms()``, or a mapping with "total" and
term entries). x_unit lives in [0, 1]^n (pycma ``bounds``).

After EVERY generation the run directory gets, atomically (tempfile + ``os.replace``):

* ``checkpoint.pkl``: ``es.pickle_dumps()``, ``np.random.get_state()`` (pycma samples
  from numpy's global RNG), best-so-far x and f, history rows, generation, evaluations,
  restarts and the config (gait name, free-parameter names, dimension, ...);
* ``history.csv``: generation, evals, best_f, gen_best_f, median_f, sigma, popsize,
  restart, n_failed (crashed or timed-out evaluations), n_fell (evaluations whose dog
  fell) and the terms of the generation's best candidate.

The budget is exact: a generation that would overrun it evaluates only the candidates the
budget has left (whole candidates, each on every seed), is not told to CMA-ES, and its
checkpoint keeps the CMA state from before it, so a resume with a larger budget samples
that generation again, whole.

At the end (or on Ctrl-C, which keeps the last complete generation) ``convergence.png``
(quadsim.plots).
:func:`resume` continues so that the following samples equal an uninterrupted run's.
pycma writes no ``outcmaes/``: its logger is off and its file prefix points into the run dir.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import pickle
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from quadsim.optimize.errors import EvaluationError, RunDirError
from quadsim.optimize.executors import SerialExecutor, evaluate_batch_outcomes

__all__ = [
    "RunConfig",
    "RunResult",
    "PUSH_FLAG",
    "eval_seed",
    "decode_eval_seed",
    "run",
    "resume",
    "load_checkpoint",
    "CHECKPOINT",
    "HISTORY",
    "PLOT",
]

CHECKPOINT = "checkpoint.pkl"
HISTORY = "history.csv"
PLOT = "convergence.png"
CONFIG_JSON = "config.json"
CHECKPOINT_VERSION = 1
#: Bit set in an evaluation seed when random pushes are on (see :func:`decode_eval_seed`).
PUSH_FLAG = 1 << 30
BASE_COLUMNS = (
    "generation",
    "evals",
    "best_f",
    "gen_best_f",
    "median_f",
    "sigma",
    "popsize",
    "restart",
    "n_failed",
    "n_fell",
)

Callback = Callable[[int, np.ndarray, np.ndarray], None]


@dataclass
class RunConfig:
    """Everything that defines an optimization run (saved in the checkpoint).

    dim: number of free parameters; gait / free_names: identify the problem (a run dir
    of another gait, dimension or parameter set is refused on resume); popsize: None =
    pycma's 4 + 3 ln n; sigma0: initial step in unit-box units; seed: >= 0, drives pycma
    and the evaluation seeds; diagonal: sep-CMA (CMA_diagonal), None = when dim > 40;
    ipop_restarts: restarts with doubled population after pycma's termination criteria;
    starts / start_radius: a multi-start run (the paper's): `starts` searches, each from x0
    plus a uniform offset U(-r, r) per parameter (clipped to the box), each with an equal
    share of the budget (a search that stops early hands the rest on); not with IPOP;
    max_evals: evaluation budget (simulations, counting every seed); seeds_per_candidate:
    the score is the mean over that many seeds; pushes: set PUSH_FLAG in the seeds;
    timeout_s / penalty: per evaluation; x0: start point in [0, 1]^n (default 0.5);
    meta: JSON-able extras (reference file, speed, ...).
    """

    dim: int
    gait: str = "custom"
    free_names: tuple[str, ...] = ()
    popsize: int | None = None
    sigma0: float = 0.2
    seed: int = 0
    diagonal: bool | None = None
    ipop_restarts: int = 0
    starts: int = 1
    start_radius: float = 0.1
    max_evals: int = 2000
    seeds_per_candidate: int = 1
    pushes: bool = False
    timeout_s: float | None = 300.0
    penalty: float = 1e5
    x0: tuple[float, ...] | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.free_names = tuple(self.free_names)
        if self.x0 is not None:
            self.x0 = tuple(float(v) for v in self.x0)
        problems = []
        if self.dim < 1:
            problems.append(f"dim must be >= 1, got {self.dim}")
        if self.free_names and len(self.free_names) != self.dim:
            problems.append(f"{len(self.free_names)} free names for dimension {self.dim}")
        if self.x0 is not None and (
            len(self.x0) != self.dim or not all(0.0 <= v <= 1.0 for v in self.x0)
        ):
            problems.append(f"x0 must have {self.dim} values in [0, 1]")
        if not (0 < self.sigma0 <= 1):
            problems.append(f"sigma0 must be in (0, 1], got {self.sigma0}")
        if self.popsize is not None and self.popsize < 2:
            problems.append(f"popsize must be >= 2, got {self.popsize}")
        if self.seed < 0:
            problems.append(f"seed must be >= 0, got {self.seed}")
        if self.seeds_per_candidate < 1:
            problems.append("seeds_per_candidate must be >= 1")
        if self.max_evals < 1:
            problems.append("max_evals must be >= 1")
        if self.starts < 1 or not 0.0 <= self.start_radius <= 0.5:
            problems.append(
                f"starts must be >= 1 and start_radius in [0, 0.5], got {self.starts} and "
                f"{self.start_radius}"
            )
        if self.starts > 1 and self.ipop_restarts:
            problems.append("a multi-start run (starts > 1) cannot also restart by IPOP")
        if problems:
            raise RunDirError("bad optimization config: " + "; ".join(problems))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RunConfig:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    def identity(self) -> tuple[str, int, tuple[str, ...]]:
        return (self.gait, self.dim, tuple(self.free_names))


@dataclass
class RunResult:
    """Outcome of :func:`run` / :func:`resume`."""

    best_x: np.ndarray
    best_f: float
    best_terms: dict[str, float]
    evals: int
    generations: int
    history: list[dict[str, float]]
    run_dir: Path
    interrupted: bool = False
    stop_reason: str = ""
    # the search distribution's mean at the end (clipped to the unit box): under noisy
    # evaluations a better estimate than the luckiest single evaluation (best_x)
    mean_x: np.ndarray | None = None


def eval_seed(config: RunConfig, k: int, generation: int = 0) -> int:
    """Seed of the k-th evaluation of every candidate of a generation (0 the first): common
    random numbers within a generation, which CMA ranks; new ones each generation, so that
    no gait is tuned to a few start poses (with two fixed seeds the walk's best fell on the
    next seeds)."""
    s = (config.seed * 1009 + generation * config.seeds_per_candidate + k) % PUSH_FLAG
    return s | PUSH_FLAG if config.pushes else s


def decode_eval_seed(seed: int) -> tuple[int, bool]:
    """(seed for the simulation's Generator, random pushes on?) from an evaluation seed."""
    return seed & (PUSH_FLAG - 1), bool(seed & PUSH_FLAG)


# --------------------------------------------------------------------------- files


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def load_checkpoint(run_dir: str | Path) -> dict[str, Any]:
    """The checkpoint dict of a run dir (RunDirError if there is none or it is unreadable)."""
    p = Path(run_dir) / CHECKPOINT
    if not p.is_file():
        raise RunDirError(f"{run_dir}: no {CHECKPOINT}; nothing to resume (start a new run)")
    try:
        with p.open("rb") as f:
            state = pickle.load(f)
    except Exception as e:  # noqa: BLE001
        raise RunDirError(f"{p}: unreadable checkpoint ({type(e).__name__}: {e})") from None
    if not isinstance(state, dict) or state.get("version") != CHECKPOINT_VERSION:
        raise RunDirError(f"{p}: not a quadsim checkpoint of version {CHECKPOINT_VERSION}")
    return state


def _history_csv(history: Sequence[Mapping[str, float]]) -> bytes:
    terms = sorted({k for row in history for k in row} - set(BASE_COLUMNS))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(list(BASE_COLUMNS) + terms)
    for row in history:
        w.writerow([_fmt(row.get(c, "")) for c in list(BASE_COLUMNS) + terms])
    return buf.getvalue().encode()


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return repr(v)
    return str(v)


# --------------------------------------------------------------------------- the runner


def _cma_options(config: RunConfig, run_dir: Path, popsize: int | None, restart: int) -> dict:
    diagonal = config.diagonal if config.diagonal is not None else config.dim > 40
    opts: dict[str, Any] = {
        "bounds": [0.0, 1.0],
        # pycma: seed 0/None means "from the clock"; keep ours deterministic and >= 1
        "seed": (config.seed * 7919 + restart * 104729) % (2**31 - 2) + 1,
        "verbose": -9,
        "verb_disp": 0,
        "verb_log": 0,
        "verb_filenameprefix": str(run_dir / "cma_"),
        "maxfevals": math.inf,
    }
    if popsize is not None:
        opts["popsize"] = int(popsize)
    if diagonal:
        opts["CMA_diagonal"] = True
    return opts


def _new_es(config: RunConfig, run_dir: Path, popsize: int | None, restart: int):  # noqa: ANN202
    import cma

    x0 = np.asarray(config.x0 if config.x0 is not None else [0.5] * config.dim, dtype=float)
    if config.starts > 1:  # each start's own offset, from the run's seed (no global RNG)
        rng = np.random.default_rng([config.seed, restart])
        r = config.start_radius
        x0 = np.clip(x0 + rng.uniform(-r, r, config.dim), 0.0, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if config.dim == 1:  # pycma needs n >= 2; optimize over [x, dummy]
            raise RunDirError("dimension 1 is not supported by pycma; free at least 2 parameters")
        return cma.CMAEvolutionStrategy(
            list(x0), config.sigma0, _cma_options(config, run_dir, popsize, restart)
        )


def _split(value: Any) -> tuple[float, dict[str, float]]:
    """(total, terms) of an objective value: float, record with .total/.terms(), or mapping."""
    if isinstance(value, Mapping):
        total = float(value["total"])
        terms = {
            str(k): float(v)
            for k, v in value.items()
            if k != "total" and isinstance(v, int | float) and not isinstance(v, bool)
        }
        return total, terms
    if hasattr(value, "total"):
        terms = value.terms() if hasattr(value, "terms") else {}
        return float(value.total), {k: float(v) for k, v in terms.items()}
    return float(value), {}


def _fell(value: Any) -> bool:
    """Whether an objective's record says the dog fell (records without the flag: no)."""
    if isinstance(value, Mapping):
        return bool(value.get("fell", False))
    return bool(getattr(value, "fell", False))


def run(
    fn: Callable[[np.ndarray, int], Any],
    config: RunConfig,
    run_dir: str | Path,
    *,
    executor: Executor | None = None,
    quiet: bool = False,
    callback: Callback | None = None,
) -> RunResult:
    """Start a new run in ``run_dir`` (created; must not hold a checkpoint already).

    executor: where evaluations run (default: serial, in this process).
    callback(generation, X (popsize, n), f (popsize,)) after each generation.
    """
    rd = Path(run_dir)
    if (rd / CHECKPOINT).exists():
        old = RunConfig.from_dict(load_checkpoint(rd)["config"])
        if old.identity() != config.identity():
            raise _mismatch(rd, _differences(old, config))
        raise RunDirError(
            f"{rd} already holds a run of gait {old.gait!r} (dimension {old.dim}); "
            f"resume it (--resume) or choose another --out"
        )
    rd.mkdir(parents=True, exist_ok=True)
    _atomic_write(rd / CONFIG_JSON, json.dumps(asdict(config), indent=2).encode())
    es = _new_es(config, rd, config.popsize, 0)
    state: dict[str, Any] = {
        "version": CHECKPOINT_VERSION,
        "config": asdict(config),
        "es": es.pickle_dumps(),
        "np_random_state": np.random.get_state(),  # noqa: NPY002 - pycma samples from it
        "best_x": None,
        "best_f": math.inf,
        "best_terms": {},
        "history": [],
        "generation": 0,
        "evals": 0,
        "restarts": 0,
        "popsize": int(es.popsize),
        "stop_reason": "",
        "wall_s": 0.0,
    }
    _save(rd, state)
    return _loop(fn, config, rd, es, state, executor, quiet, callback)


def _differences(old: RunConfig, new: RunConfig) -> list[str]:
    """What makes `new` another run than `old`: gait, dimension, free parameters, and any
    meta entry both record (how candidates are scored: reference, speed, episode length)."""
    diff = []
    if old.gait != new.gait:
        diff.append(f"gait {old.gait!r} vs requested {new.gait!r}")
    if old.dim != new.dim:
        diff.append(f"dimension {old.dim} vs requested {new.dim}")
    if old.free_names != new.free_names:
        diff.append(f"free parameters {list(old.free_names)} vs requested {list(new.free_names)}")
    for key in sorted(old.meta.keys() & new.meta.keys()):
        if old.meta[key] != new.meta[key]:
            diff.append(f"{key} {old.meta[key]!r} vs requested {new.meta[key]!r}")
    return diff


def _mismatch(rd: Path, diff: list[str]) -> RunDirError:
    return RunDirError(
        f"{rd} holds a different run: "
        + "; ".join(diff)
        + " (resume with the same settings, or choose another --out)"
    )


def resume(
    run_dir: str | Path,
    fn: Callable[[np.ndarray, int], Any],
    *,
    expect: RunConfig | None = None,
    max_evals: int | None = None,
    executor: Executor | None = None,
    quiet: bool = False,
    callback: Callback | None = None,
) -> RunResult:
    """Continue the run in ``run_dir`` exactly where its last complete generation ended.

    expect: the run the caller means (RunDirError if gait, dimension, free names or a meta
    entry both configs record differ).
    max_evals: a new budget (default: the saved one).
    """
    rd = Path(run_dir)
    state = load_checkpoint(rd)
    config = RunConfig.from_dict(state["config"])
    diff = _differences(config, expect) if expect is not None else []
    if diff:
        raise _mismatch(rd, diff)
    if max_evals is not None:
        config.max_evals = int(max_evals)
        state["config"] = asdict(config)
    if state.get("stop_reason") == "budget" and state["evals"] < config.max_evals:
        state["stop_reason"] = ""  # a larger budget goes on
    es = pickle.loads(state["es"])
    np.random.set_state(state["np_random_state"])  # noqa: NPY002 - pycma samples from it
    return _loop(fn, config, rd, es, state, executor, quiet, callback)


def _save(rd: Path, state: dict[str, Any]) -> None:
    try:
        _atomic_write(rd / CHECKPOINT, pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))
        _atomic_write(rd / HISTORY, _history_csv(state["history"]))
    except OSError as exc:  # a full disk, a lost mount: the last checkpoint is still whole
        raise RunDirError(
            f"cannot write the checkpoint of generation {state['generation']} in {rd} "
            f"({exc.strerror or exc}); the checkpoint before it is intact: make room and "
            f"continue with quadsim optimize --resume {rd}"
        ) from None


def _next_start_due(config: RunConfig, state: Mapping[str, Any]) -> bool:
    """Whether the current start of a multi-start run has spent its share of the budget."""
    k = state["restarts"]
    return k < config.starts - 1 and state["evals"] >= config.max_evals * (k + 1) // config.starts


def _loop(fn, config, rd, es, state, executor, quiet, callback) -> RunResult:  # noqa: ANN001
    from tqdm.auto import tqdm

    ex = executor if executor is not None else SerialExecutor()
    bar = tqdm(
        total=config.max_evals,
        initial=min(state["evals"], config.max_evals),
        disable=quiet,
        unit="eval",
        dynamic_ncols=True,
        desc=f"cma {config.gait}",
        smoothing=0.1,
    )
    interrupted = False
    try:
        while state["evals"] < config.max_evals and not state["stop_reason"]:
            started = time.perf_counter()
            k_seeds = range(config.seeds_per_candidate)
            seeds = [eval_seed(config, k, state["generation"]) for k in k_seeds]
            if _next_start_due(config, state):
                state["restarts"] += 1
                es = _new_es(config, rd, config.popsize, state["restarts"])
            left = -(-(config.max_evals - state["evals"]) // len(seeds))  # whole candidates
            partial = left < es.popsize
            if partial:  # the CMA state from before this generation is what stays
                before = es.pickle_dumps(), np.random.get_state()  # noqa: NPY002
            X = np.asarray(es.ask())
            if partial:
                X = X[:left]
            xs = [x for x in X for _ in seeds]
            ss = [s for _ in X for s in seeds]
            outs = evaluate_batch_outcomes(ex, fn, xs, ss, config.timeout_s, config.penalty)
            f = np.empty(len(X))
            terms_per: list[dict[str, float]] = []
            n_failed = n_fell = 0
            k = len(seeds)
            for i in range(len(X)):
                vals, terms = [], []
                for o in outs[i * k : (i + 1) * k]:
                    n_fell += bool(_fell(o.value))
                    try:
                        v, t = _split(o.value)
                    except (TypeError, ValueError, KeyError):
                        v, t = config.penalty, {}
                    if o.status != "ok" or not math.isfinite(v):
                        n_failed += 1
                        v, t = config.penalty, {}
                    vals.append(v)
                    terms.append(t)
                f[i] = float(np.mean(vals))
                keys = set.intersection(*(set(t) for t in terms)) if all(terms) else set()
                terms_per.append({kk: float(np.mean([t[kk] for t in terms])) for kk in keys})
            if n_failed == len(outs) and state["generation"] == 0:
                first = next((o for o in outs if o.message), outs[0])
                raise EvaluationError(
                    f"every evaluation of the first generation failed ({len(outs)}): "
                    f"{first.status}: {first.message or 'no value'}"
                )
            if not partial:
                es.tell(list(X), list(f))
            gen_best = int(np.argmin(f))
            if f[gen_best] < state["best_f"]:
                state["best_f"] = float(f[gen_best])
                state["best_x"] = X[gen_best].tolist()
                state["best_terms"] = terms_per[gen_best]
            state["generation"] += 1
            state["evals"] += len(xs)
            row = {
                "generation": state["generation"],
                "evals": state["evals"],
                "best_f": state["best_f"],
                "gen_best_f": float(f[gen_best]),
                "median_f": float(np.median(f)),
                "sigma": float(es.sigma),
                "popsize": int(len(X)),
                "restart": state["restarts"],
                "n_failed": n_failed,
                "n_fell": n_fell,
                **terms_per[gen_best],
            }
            state["history"].append(row)
            stop = {} if partial else {k_: v for k_, v in es.stop().items() if k_ != "maxfevals"}
            if stop and state["evals"] < config.max_evals:
                if state["restarts"] < config.ipop_restarts:
                    state["restarts"] += 1
                    state["popsize"] = 2 * state["popsize"]
                    es = _new_es(config, rd, state["popsize"], state["restarts"])
                elif state["restarts"] < config.starts - 1:  # the next start takes the rest
                    state["restarts"] += 1
                    es = _new_es(config, rd, config.popsize, state["restarts"])
                else:
                    state["stop_reason"] = ", ".join(sorted(stop))
            if partial:
                state["es"], state["np_random_state"] = before
            else:
                state["es"] = es.pickle_dumps()
                state["np_random_state"] = np.random.get_state()  # noqa: NPY002
            state["wall_s"] = state.get("wall_s", 0.0) + time.perf_counter() - started
            _save(rd, state)
            if callback is not None:
                callback(state["generation"], X, f)
            bar.update(min(len(xs), max(0, config.max_evals - bar.n)))
            bar.set_postfix(gen=state["generation"], best=f"{state['best_f']:.4g}")
    except KeyboardInterrupt:
        interrupted = True
    finally:
        bar.close()
        if executor is None:
            ex.shutdown()
    if not state["stop_reason"] and state["evals"] >= config.max_evals:
        state["stop_reason"] = "budget"
        _save(rd, state)  # a finished run says so (quadsim optimize --status)
    if state["history"]:
        try:
            from quadsim.plots import convergence_png

            # a gait file by its name: the plot is shown beside it, not on this machine
            title = f"{Path(config.gait).name} (seed {config.seed})"
            _atomic_write(rd / PLOT, convergence_png(state["history"], BASE_COLUMNS, title))
        except Exception as e:  # noqa: BLE001 - a plot must not lose a run
            warnings.warn(f"convergence plot failed: {e}", stacklevel=2)
    best_x = np.asarray(state["best_x"] if state["best_x"] is not None else [np.nan] * config.dim)
    return RunResult(
        best_x=best_x,
        best_f=float(state["best_f"]),
        best_terms=dict(state["best_terms"]),
        evals=int(state["evals"]),
        generations=int(state["generation"]),
        history=list(state["history"]),
        run_dir=rd,
        interrupted=interrupted,
        stop_reason="interrupted" if interrupted else state["stop_reason"],
        # the checkpoint's: an interrupt can land after a generation was told but not saved
        mean_x=np.clip(np.asarray(pickle.loads(state["es"]).mean, dtype=float), 0.0, 1.0),
    )


def wall_clock() -> float:
    """Monotonic seconds (separate so that benchmarks can time the runner's overhead)."""
    return time.perf_counter()
