#!/usr/bin/env python3
"""One line per profiled kernel from an `ncu --csv --page raw` file (the metrics run.sh asks for):
time, DRAM MB read, L2 read sectors and their hit rate, L1 hit rate, L2 and DRAM % of peak. The csv may
start with the profiled program's own output; the table starts at the "ID" header row."""
import csv
import sys

rows = list(csv.reader(open(sys.argv[1])))
start = next((k for k, r in enumerate(rows) if r and r[0] == "ID"), None)
if start is None:
    sys.exit(0)
head = rows[start]
data = [r for r in rows[start + 2:] if len(r) == len(head)]  # skip the units row
col = {k: i for i, k in enumerate(head)}


def g(r, k):
    try:
        return float(r[col[k]].replace(",", ""))
    except Exception:
        return float("nan")


print(f"{'kernel':<60} {'us':>7} {'DRAM rd MB':>10} {'L2 rd sect M':>12} {'L2 hit%':>7} {'L1 hit%':>7} {'L2 %pk':>7} {'DRAM %pk':>8}")
for r in data:
    name = r[col["Kernel Name"]].replace("void ", "").split("(")[0][:60]
    sect = g(r, "lts__t_sectors_srcunit_tex_op_read.sum")
    hit = g(r, "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum")
    print(f"{name:<60} {g(r, 'gpu__time_duration.sum') / 1e3:7.1f} {g(r, 'dram__bytes_read.sum') / 1e6:10.1f} {sect / 1e6:12.2f} "
          f"{100 * hit / sect if sect else 0:7.1f} {g(r, 'l1tex__t_sector_hit_rate.pct'):7.1f} "
          f"{g(r, 'lts__throughput.avg.pct_of_peak_sustained_elapsed'):7.1f} "
          f"{g(r, 'dram__throughput.avg.pct_of_peak_sustained_elapsed'):8.1f}")
