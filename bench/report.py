"""Results on disk: ``<date>-<suite>.json``, a Markdown summary beside it, and PNG plots."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # after matplotlib.use: the backend must be chosen first
import numpy as np

from bench import tables
from bench.datasets import REPO_ROOT

RESULTS_DIR = REPO_ROOT / "bench" / "results"


def stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d")


def fits(points: list[dict[str, Any]]) -> dict[str, float]:
    """How latency, RSS and disk grow with N: a power-law exponent and linear bytes per memory."""
    if len(points) < 2:
        return {}
    n = np.array([p["n"] for p in points], dtype=float)
    p95 = np.array([p["search"]["p95_ms"] for p in points], dtype=float)
    rss = np.array([p["rss_mb"] for p in points], dtype=float) * 2**20
    disk = np.array([p["disk_bytes"] for p in points], dtype=float)
    exponent = float(np.polyfit(np.log(n), np.log(np.maximum(p95, 1e-6)), 1)[0])
    rss_slope, rss_base = np.polyfit(n, rss, 1)
    disk_slope, _ = np.polyfit(n, disk, 1)
    return {
        "search_p95_exponent": round(exponent, 2),
        "rss_bytes_per_memory": round(float(rss_slope), 1),
        "rss_intercept_mb": round(float(rss_base) / 2**20, 1),
        "disk_bytes_per_memory": round(float(disk_slope), 1),
    }


def add_fits_and_ratios(scale: dict[str, Any]) -> None:
    stores = scale["stores"]
    for result in stores.values():
        result["fit"] = fits(result.get("points", []))
    ours = {p["n"]: p for p in stores.get("memstrata", {}).get("points", [])}
    ratios: dict[str, list[dict[str, Any]]] = {}
    for name, result in stores.items():
        if name == "memstrata":
            continue
        rows = []
        for p in result.get("points", []):
            mine = ours.get(p["n"])
            if not mine:
                continue
            rows.append(
                {
                    "n": p["n"],
                    "search_p50_x_faster": _ratio(p["search"]["p50_ms"], mine["search"]["p50_ms"]),
                    "search_p95_x_faster": _ratio(p["search"]["p95_ms"], mine["search"]["p95_ms"]),
                    "insert_x_faster": _ratio(mine["insert_per_s"], p["insert_per_s"]),
                    "rss_ratio": _ratio(mine["rss_mb"], p["rss_mb"]),
                    "disk_ratio": _ratio(mine["disk_bytes"], p["disk_bytes"]),
                }
            )
        ratios[name] = rows
    scale["memstrata_vs"] = ratios


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 2) if b and not math.isnan(a) and not math.isnan(b) else None


def write_json_and_markdown(result: dict[str, Any], markdown: str, out_dir: Path, name: str) -> Path:
    """``<out_dir>/<date>-<name>.json`` and ``.md`` for a bench of its own; the table is printed too."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = out_dir / f"{stamp()}-{name}"
    stem.with_suffix(".json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    stem.with_suffix(".md").write_text(markdown, encoding="utf-8")
    print(markdown)
    print(f"wrote {stem}.json and {stem}.md")
    return stem


def write(result: dict[str, Any], suite: str, out_dir: Path | None = None) -> list[Path]:
    out_dir = out_dir or RESULTS_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    base = out_dir / f"{stamp()}-{suite}"
    written = []
    details = result.get("quality", {}).get("locomo", {}).pop("details", None)
    if details is not None:
        path = base.with_name(base.name + "-locomo-details.json")
        path.write_text(json.dumps(details, ensure_ascii=False, indent=0))
        written.append(path)
    if "scale" in result.get("speed", {}):
        add_fits_and_ratios(result["speed"]["scale"])
    json_path = base.with_suffix(".json")
    json_path.write_text(json.dumps(result, ensure_ascii=False, indent=1, default=str))
    written.append(json_path)
    md_path = base.with_suffix(".md")
    md_path.write_text(tables.markdown(result, suite))
    written.append(md_path)
    written += plots(result, base)
    return written


def rerender(json_path: Path) -> list[Path]:
    """Markdown and plots again from a saved result (after a change to the tables or plots)."""
    result = json.loads(json_path.read_text())
    base = json_path.with_suffix("")
    md_path = base.with_suffix(".md")
    md_path.write_text(tables.markdown(result, base.name.split("-", 3)[-1]))
    return [md_path, *plots(result, base)]


def plots(result: dict[str, Any], base: Path) -> list[Path]:
    written = []
    locomo = result.get("quality", {}).get("locomo")
    if locomo:
        fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8))
        for name, res in locomo["systems"].items():
            ks = [5, 10, 25, 50]
            left.plot(ks, [res["overall"][f"recall@{k}"] for k in ks], marker="o", label=name)
        left.axhline(0.8, color="grey", linestyle="--", linewidth=0.8)
        left.annotate("goal: recall@10 >= 0.80", (10, 0.81), fontsize=7, color="grey")
        left.set(xlabel="k", ylabel="recall@k", title="LoCoMo recall@k, all questions", ylim=(0, 1))
        left.legend(fontsize=8)
        names = list(locomo["systems"])
        width = 0.8 / len(names)
        for i, name in enumerate(names):
            cats = locomo["systems"][name]["by_category"]
            right.bar(
                np.arange(5) + i * width,
                [cats[str(c)].get("recall@10", np.nan) for c in range(1, 6)],
                width=width,
                label=name,
            )
        labels = [f"{c} {locomo['systems'][names[0]]['by_category'][str(c)]['name']}" for c in range(1, 6)]
        right.set_xticks(np.arange(5) + 0.4 - width / 2, labels, fontsize=8)
        right.set(ylabel="recall@10", title="LoCoMo recall@10 by category", ylim=(0, 1))
        fig.suptitle(tables.machine_caption(result), fontsize=7)
        fig.tight_layout()
        path = base.with_name(base.name + "-locomo.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    scale = result.get("speed", {}).get("scale")
    if scale:
        fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
        for i, (name, res) in enumerate(scale["stores"].items()):
            pts = res.get("points", [])
            if not pts:
                continue
            n, color = [p["n"] for p in pts], f"C{i}"
            axes[0].plot(n, [p["search"]["p95_ms"] for p in pts], marker="o", color=color, label=f"{name} p95")
            axes[0].plot(n, [p["search"]["p50_ms"] for p in pts], marker=".", linestyle=":", color=color, label="p50")
            axes[1].plot(n, [p["rss_mb"] for p in pts], marker="o", color=color, label=name)
            axes[2].plot(n, [p["disk_bytes"] / 2**20 for p in pts], marker="o", color=color, label=name)
        axes[0].axhline(20, color="grey", linestyle="--", linewidth=0.8)
        axes[0].axhline(100, color="grey", linestyle=":", linewidth=0.8)
        axes[1].axhline(1536, color="grey", linestyle="--", linewidth=0.8)
        titles = (
            "scoped search, k=10 (ms); goals: p95 20 @10k, 100 @1M",
            "process RSS (MB); goal 1.5 GB @1M",
            "size on disk (MB)",
        )
        for ax, title in zip(axes, titles, strict=True):
            ax.set(xscale="log", yscale="log", xlabel="memories in one scope", title=title)
            ax.legend(fontsize=7)
        fig.suptitle(tables.machine_caption(result) + " | " + scale["vectors"], fontsize=7)
        fig.tight_layout()
        path = base.with_name(base.name + "-scale.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written
