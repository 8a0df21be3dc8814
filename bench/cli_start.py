"""How long one CLI command takes from a cold process: what a user waits for at each `memstrata` call.

Each command runs in a new process (``python -m memstrata``), on a small SQLite store seeded once, with the rules
write path (no model), the way a user or a script calls it. Runs alternate between the sources compared (the
current checkout, and optionally older checkouts given by ``--source DIR``, run with this virtualenv), so a busy
moment of the machine is shared. Files the current code keeps in the user cache directory are warm, as on a
machine that has run memstrata before; the first run of each source after ``--cold`` clears them is reported apart.

Run: ``python -m bench.cli_start --rounds 7 [--source /tmp/old-checkout]`` (writes
bench/results/<date>-cli-start.{json,md}).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.progress import track

from bench.machine import machine_facts, machine_line
from bench.report import write_json_and_markdown

RESULTS = Path(__file__).parent / "results"
HERE = Path(__file__).resolve().parents[1]
SEED = ["我喜欢喝乌龙茶", "I play tennis on Sundays", "我妹妹在腾讯上班", "My cat is called Mochi"]
COMMANDS = {
    "--help": ["--help"],
    "stats": ["--json", "stats"],
    "add (en)": ["--json", "add", "I switched to green tea last month", "--user", "u1"],
    "add (zh)": ["--json", "add", "我下个月要搬到上海了", "--user", "u1"],
    "search (en)": ["--json", "search", "What tea do I like?", "--user", "u1"],
    "search (zh)": ["--json", "search", "我妹妹在哪里工作？", "--user", "u1"],
}


def _environment(source: Path, store: Path) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("MEMSTRATA_")}
    env |= {"MEMSTRATA_STORE__PATH": str(store), "MEMSTRATA_LLM__PROVIDER": "rules", "PYTHONPATH": str(source / "src")}
    return env


def _call(source: Path, store: Path, args: list[str]) -> float:
    began = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "memstrata", *args], capture_output=True, text=True,
                          env=_environment(source, store), cwd=store.parent, timeout=300)  # fmt: skip
    seconds = time.perf_counter() - began
    if done.returncode != 0:
        raise RuntimeError(f"{source}: memstrata {' '.join(args)} failed: {done.stderr[-2000:]}")
    return seconds


def _clear_cache_files() -> None:
    from memstrata.file_cache import default_cache_dir

    for pattern in ("use-weights-*.npz", "english-words-*.npz", "use-tokenizer-*.pickle"):
        for path in default_cache_dir().glob(pattern):
            path.unlink()


def run(sources: list[Path], rounds: int, cold: bool) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="cli-start-"))
    stores = {source: work / f"{index}" / "store.db" for index, source in enumerate(sources)}
    for source, store in stores.items():
        store.parent.mkdir()
        _call(source, store, ["add", *SEED, "--user", "u1"])
    first: dict[str, float] = {}
    if cold:  # the first call after the cache files are gone, per source
        for source, store in stores.items():
            _clear_cache_files()
            first[str(source)] = _call(source, store, COMMANDS["search (en)"][:])
    for source, store in stores.items():  # warm whatever each source caches
        _call(source, store, COMMANDS["search (zh)"])
    seconds: dict[str, dict[str, list[float]]] = {str(s): {name: [] for name in COMMANDS} for s in sources}
    for _ in track(range(rounds), description="rounds"):
        for name, args in COMMANDS.items():
            for source, store in stores.items():
                seconds[str(source)][name].append(_call(source, store, args))
    return {
        "rounds": rounds,
        "sources": [str(source) for source in sources],
        "median_s": {s: {name: round(statistics.median(v), 3) for name, v in by.items()} for s, by in seconds.items()},
        "seconds": seconds,
        "first_call_after_clearing_the_cache_s": first,
    }


def _label(source: str) -> str:
    return "this checkout" if Path(source) == HERE else source


def markdown(result: dict[str, Any]) -> str:
    sources = result["sources"]
    lines = [
        "# CLI start-up: one command in a new process",
        "",
        f"Machine: {machine_line(result['machine'])}",
        "",
        f"Command: `{result['command']}`. Median seconds of {result['rounds']} runs per command and source, runs "
        "alternating; a store of a few memories; rules write path (no model).",
        "",
        "| command | " + " | ".join(_label(s) for s in sources) + (" | ratio |" if len(sources) == 2 else ""),
        "|---|" + "---:|" * (len(sources) + (1 if len(sources) == 2 else 0)),
    ]
    for name in COMMANDS:
        medians = [result["median_s"][s][name] for s in sources]
        ratio = f" {medians[0] / medians[1]:.2f}x |" if len(sources) == 2 and medians[1] else ""
        lines.append(f"| {name} | " + " | ".join(f"{m:.2f}" for m in medians) + " |" + ratio)
    if first := result["first_call_after_clearing_the_cache_s"]:
        said = ", ".join(f"{_label(source)} {seconds:.2f} s" for source, seconds in first.items())
        lines += ["", f"First `search` after the cache files were removed (derived once per machine): {said}"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument(
        "--source", type=Path, action="append", default=[], help="an older checkout to compare (repeatable)"
    )
    parser.add_argument("--cold", action="store_true", help="also time a first call with the cache files removed")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    sources = [source.resolve() for source in args.source] + [HERE]
    result = {"command": "python -m bench.cli_start " + " ".join(argv if argv is not None else sys.argv[1:]),
              "machine": machine_facts(), **run(sources, args.rounds, args.cold)}  # fmt: skip
    write_json_and_markdown(result, markdown(result), args.out, "cli-start")
    return 0


if __name__ == "__main__":
    sys.exit(main())
