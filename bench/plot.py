#!/usr/bin/env python3
"""bench/plot.py REPORT.json... [--out-dir DIR | --out PNG] [--y SUFFIX]... [--hline Y]...: PNG plots of any benchmark report of the
apps' JSON format (apps/README.md, "JSON reports"). The one plotting path of the toolkit: bench/*.sh call
it on the reports they write.

Every array of records under "results" (a list of objects) becomes one figure, REPORT-<array>.png beside
the report (or in --out-dir):
  * y: every numeric key ending in one of the --y suffixes (default: _us and _ms, the times), one panel
    each; keys named IMPL_rest for an implementation prefix (ours_plain_us, cub_plain_us) share the panel
    "rest" with one line style (or hatch) per implementation;
  * series: the record's name key (op, algorithm, kernel, variant, impl, ...): one line or bar each;
  * x: with a category key (matrix, class, type, case) grouped bars per category; else the first
    size-like key (n, nnz, rows, cols, nx, size_bytes, ...) with lines, log axes where the values span two
    decades or more; else bars per series.
Axes switch to log scale where the plotted values span two decades or more (x: base 2 for powers of two).
--hline Y draws a dashed horizontal line at Y on every panel (a target such as a ratio of 1). Files are written to a
temporary name and renamed. Without matplotlib it says so on stderr, writes nothing and exits 0 (a
benchmark's JSON stays its result); exit 2 for an unreadable report or bad usage.
"""
import argparse
import json
import math
import os
import sys

SERIES_KEYS = ("op", "algorithm", "kernel", "variant", "impl", "series", "name")
CATEGORY_KEYS = ("matrix", "class", "case", "type")
SIZE_KEYS = ("iteration", "n", "nnz", "rows", "cols", "nx", "ny", "nz", "size_bytes", "traffic_bytes", "steps", "segments")
IMPL_PREFIXES = ("ours", "cub", "cusparse", "peer", "probe", "gpu", "cpu", "ref")


def ensure_matplotlib():
    """matplotlib.pyplot with the Agg backend, or None. A pyenv shim may shadow the system python3 that has
    matplotlib: then this re-runs the script under /usr/bin/python3 once."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        system = "/usr/bin/python3"
        if (os.environ.get("GPUKIT_PLOT_REEXEC") != "1" and os.path.exists(system)
                and os.path.realpath(sys.executable) != os.path.realpath(system)):
            os.environ["GPUKIT_PLOT_REEXEC"] = "1"
            os.execv(system, [system] + sys.argv)
        return None


def record_arrays(node, path):
    """(path, records) for every list of objects below `node`."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield from record_arrays(v, f"{path}.{k}" if path else k)
    elif isinstance(node, list) and node and all(isinstance(r, dict) for r in node):
        yield path, node
        for i, r in enumerate(node):
            for k, v in r.items():
                if isinstance(v, (list, dict)):
                    yield from record_arrays(v, f"{path}[{i}].{k}")


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def first_key(records, candidates, want):
    for k in candidates:
        if all(k in r and want(r[k]) for r in records):
            return k
    return None


def y_panels(records, suffixes):
    """{panel name: [(key, implementation or None)]}, in the order the keys first appear."""
    keys = []
    for r in records:
        for k, v in r.items():
            if is_number(v) and k.endswith(tuple(suffixes)) and k not in keys:
                keys.append(k)
    panels = {}
    for k in keys:
        head, _, rest = k.partition("_")
        if head in IMPL_PREFIXES and rest:
            panels.setdefault(rest, []).append((k, head))
        else:
            panels.setdefault(k, []).append((k, None))
    for keys in panels.values():  # ours first (solid lines, plain bars), then the peers
        keys.sort(key=lambda kv: IMPL_PREFIXES.index(kv[1]) if kv[1] else -1)
    return panels


def spans_decades(values):
    v = [x for x in values if is_number(x) and x > 0]
    return len(v) > 1 and max(v) / min(v) >= 100


def powers_of_two(values):
    return all(is_number(x) and x > 0 and float(x).is_integer() and int(x) & (int(x) - 1) == 0 for x in values)


def palette(n):
    """n distinct colours: matplotlib's cycle up to 10, tab20 beyond."""
    import matplotlib.pyplot as plt
    if n <= 10:
        return [f"C{i}" for i in range(n)]
    cmap = plt.get_cmap("tab20")
    return [cmap(i % 20) for i in range(n)]


def label(series, impl):
    return " ".join(s for s in (series, impl) if s) or "value"


def line_panel(ax, records, xkey, skey, keys):
    styles = ["-o", "--s", ":^", "-.v"]
    ys = []
    names = list(dict.fromkeys(r.get(skey) for r in records)) if skey else [None]
    colors = palette(len(names))
    for j, (key, impl) in enumerate(keys):
        for i, name in enumerate(names):
            pts = sorted((r[xkey], r[key]) for r in records if (not skey or r.get(skey) == name) and is_number(r.get(key)))
            if not pts:
                continue
            xs, vals = zip(*pts)
            ys += vals
            ax.plot(xs, vals, styles[j % len(styles)], color=colors[i], ms=3, label=label(name, impl))
    xs = [r[xkey] for r in records]
    if powers_of_two(xs) and max(xs) >= 4 * min(xs):
        ax.set_xscale("log", base=2)
    elif spans_decades(xs):
        ax.set_xscale("log")
    if spans_decades(ys):
        ax.set_yscale("log")
    ax.set_xlabel(xkey)


def bar_panel(ax, records, ckey, skey, keys):
    cats = list(dict.fromkeys(r.get(ckey) for r in records)) if ckey else [None]
    names = list(dict.fromkeys(r.get(skey) for r in records)) if skey and skey != ckey else [None]
    bars = [(name, key, impl) for name in names for key, impl in keys]
    width = 0.8 / max(1, len(bars))
    colors = palette(len(bars))
    ys = []
    for b, (name, key, impl) in enumerate(bars):
        xs, vals = [], []
        for c, cat in enumerate(cats):
            for r in records:
                if (not ckey or r.get(ckey) == cat) and (name is None or r.get(skey) == name) and is_number(r.get(key)):
                    xs.append(c + (b - len(bars) / 2 + 0.5) * width)
                    vals.append(r[key])
        ys += vals
        ax.bar(xs, vals, width, label=label(name, impl), color=colors[b],
               hatch="//" if impl and impl != "ours" else None)
    ax.set_xticks(range(len(cats)))
    ax.set_xticklabels([str(c) if c is not None else "" for c in cats], rotation=20, fontsize=8)
    if spans_decades(ys):
        ax.set_yscale("log")


def plot_array(plt, report, path, records, suffixes, out_png, hlines=()):
    panels = y_panels(records, suffixes)
    if not panels:
        return False
    skey = first_key(records, SERIES_KEYS, lambda v: isinstance(v, str))
    ckey = first_key(records, [k for k in CATEGORY_KEYS if k != skey], lambda v: isinstance(v, str))
    xkey = None if ckey else first_key(records, SIZE_KEYS, is_number)
    if xkey and len({r[xkey] for r in records}) < 3:
        xkey = None
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    if xkey:
        panel_width = 6
    else:  # grouped bars: room for every bar
        groups = len({r.get(ckey or skey) for r in records})
        series = len({r.get(skey) for r in records}) if skey and ckey else 1
        panel_width = min(24, max(8, 0.09 * groups * series * max(len(k) for k in panels.values())))
    fig, axes = plt.subplots(rows, cols, figsize=(panel_width * cols, 4.2 * rows), squeeze=False)
    for i, (panel, keys) in enumerate(panels.items()):
        ax = axes[i // cols][i % cols]
        if xkey:
            line_panel(ax, records, xkey, skey, keys)
        else:
            bar_panel(ax, records, ckey or skey, skey, keys)
        for y in hlines:
            ax.axhline(y, color="black", linestyle="--", linewidth=0.8, label=f"y = {y:g}")
        ax.set_title(panel)
        ax.set_ylabel(panel.rsplit("_", 1)[-1] if panel.endswith(("_us", "_ms")) else panel)
        ax.grid(True, which="both", alpha=0.3)
        n_labels = len(ax.get_legend_handles_labels()[1])
        if n_labels > 1 and (i == 0 or not xkey):
            ax.legend(fontsize=6 if n_labels > 12 else 7, ncol=2 if n_labels > 8 else 1)
    for j in range(len(panels), rows * cols):
        axes[j // cols][j % cols].axis("off")
    device = report.get("device", {})
    fig.suptitle(f"{report.get('tool', '?')} {report.get('command', '?')}: {path} on "
                 f"{device.get('name', device.get('backend', '?'))} (git {report.get('git_commit', '?')})", fontsize=10)
    fig.tight_layout()
    tmp = f"{out_png}.{os.getpid()}.partial.png"  # unique per process: two writers never share it
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, out_png)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("reports", nargs="+", metavar="REPORT.json")
    ap.add_argument("--out-dir", help="where the PNGs go (default: beside each report)")
    ap.add_argument("--y", action="append", metavar="SUFFIX",
                    help="plot numeric keys ending in SUFFIX (repeatable; default _us and _ms)")
    ap.add_argument("--hline", action="append", type=float, default=[], metavar="Y",
                    help="a dashed horizontal line at Y on every panel (repeatable), e.g. a target ratio")
    ap.add_argument("--out", metavar="PNG",
                    help="one report with one record array holding --y keys: write its figure to PNG (apps call it "
                         "this way, e.g. solve run --plot); without matplotlib this is an error (exit 3), as the caller "
                         "asked for it")
    args = ap.parse_args()
    if args.out and (len(args.reports) != 1 or args.out_dir):
        print("plot.py: error: --out takes exactly one report and no --out-dir", file=sys.stderr)
        return 2
    reports = []
    for p in args.reports:
        try:
            with open(p) as f:
                reports.append((p, json.load(f)))
        except (OSError, ValueError) as e:
            print(f"plot.py: error: {p}: {e}", file=sys.stderr)
            return 2
        if not isinstance(reports[-1][1], dict) or not isinstance(reports[-1][1].get("results"), dict):
            print(f"plot.py: error: {p}: not a report of the apps' JSON format (no results object)", file=sys.stderr)
            return 2
    plt = ensure_matplotlib()
    if plt is None and args.out:
        print(f"plot.py: error: {args.out}: matplotlib is not available (python3-matplotlib); nothing written",
              file=sys.stderr)
        return 3
    if plt is None:
        print("plot.py: note: matplotlib not available (python3-matplotlib); no plots written, the JSON reports "
              "stand", file=sys.stderr)
        return 0
    if args.out:
        p, report = reports[0]
        suffixes = args.y or ["_us", "_ms"]
        arrays = list(record_arrays(report["results"], ""))
        if len(arrays) > 1:  # the arrays with keys to plot
            arrays = [(path, records) for path, records in arrays if y_panels(records, suffixes)]
        if len(arrays) != 1:
            print(f"plot.py: error: {p}: --out needs exactly one record array with keys ending in {suffixes}, the "
                  f"report has {len(arrays)}", file=sys.stderr)
            return 2
        path, records = arrays[0]
        if not plot_array(plt, report, path, records, suffixes, args.out, args.hline):
            print(f"plot.py: error: {p}: no numeric keys ending in {args.y or ['_us', '_ms']}", file=sys.stderr)
            return 2
        print(f"plot.py: {p}: {args.out}")
        return 0
    for p, report in reports:
        base = os.path.splitext(os.path.basename(p))[0]
        out_dir = args.out_dir or os.path.dirname(os.path.abspath(p))
        os.makedirs(out_dir, exist_ok=True)
        wrote = []
        for path, records in record_arrays(report["results"], ""):
            png = os.path.join(out_dir, f"{base}-{path.replace('[', '').replace(']', '').replace('.', '-')}.png")
            if plot_array(plt, report, path, records, args.y or ["_us", "_ms"], png, args.hline):
                wrote.append(png)
        print(f"plot.py: {p}: " + (", ".join(wrote) if wrote else "no record arrays with matching keys; nothing plotted"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
