#!/usr/bin/env python3
"""The executed-instruction mix of one profiled kernel, from Nsight Compute's source page with SASS
(`ncu -i REPORT --page source --csv --print-source cuda,sass`, a build with -lineinfo): each SASS
instruction counted once (the page repeats an address under every source line that inlines it), by
opcode and by group (control flow, moves and selects, FP32, MUFU, FP64, memory, integer), with its
share of the warp-stall samples. With `--lines OPCODE...`, the source lines holding most of each
opcode's executions too; with `--at FILE:LINE...`, each line's share and its opcodes (the code inlined
there, e.g. a math function's whole sequence).

usage: ncu_sass_mix.py SOURCE_CSV [--top N] [--lines OPCODE ...] [--at FILE:LINE ...]"""
import argparse
import collections
import csv

GROUPS = {
    "control (compares, branches, convergence)": ["FSETP", "ISETP", "DSETP", "UISETP", "PLOP3", "BRA", "BSSY",
                                                  "BSYNC", "BREAK", "WARPSYNC", "EXIT", "CALL", "RET"],
    "moves and selects": ["MOV", "UMOV", "SEL", "FSEL", "USEL", "CS2R", "S2R", "P2R", "R2P", "R2UR", "PRMT"],
    "FP32 arithmetic and conversions": ["FMUL", "FADD", "FFMA", "FMNMX", "HFMA2", "F2F", "FCHK", "I2FP", "F2I",
                                        "I2F", "FRND"],
    "MUFU (rcp, sqrt, rsq, ex2, lg2)": ["MUFU"],
    "FP64": ["DADD", "DMUL", "DFMA"],
    "memory": ["LDG", "STG", "LDL", "STL", "LDC", "ULDC", "LDS", "STS", "LD", "ST"],
    "integer": ["IADD3", "SHF", "LOP3", "IMAD", "LEA", "UIADD3", "UIMAD", "USHF", "ULEA", "ULOP3", "VIMNMX3",
                "IMNMX", "VIMNMX"],
}


def number(s):
    s = s.replace(",", "").strip()
    return int(float(s)) if s not in ("", "-") else 0


def read(path):
    """address -> (instruction, warp instructions executed, stall samples, (file, line))."""
    rows = list(csv.reader(open(path)))
    head = next(r for r in rows if r and r[0] == "Line No")
    col_exec = head.index("Instructions Executed")
    col_samples = head.index("Warp Stall Sampling (All Samples)")
    seen, file, line = {}, None, None
    for r in rows:
        if not r or r[0] in ("Function Name", "Line No"):
            continue
        if r[0] == "File Path":
            file = r[1].split("/")[-1]
        elif r[0]:
            line = (file, int(r[0]))
        elif len(r) > col_exec and r[2].startswith("0x") and r[2] not in seen:
            seen[r[2]] = (r[3].strip(), number(r[col_exec]), number(r[col_samples]), line)
    return seen


def opcode(instruction):
    body = instruction.split(None, 1)[1] if instruction.startswith("@") else instruction
    return body.split()[0].split(".")[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source_csv")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--lines", nargs="*", default=[])
    ap.add_argument("--at", nargs="*", default=[])
    a = ap.parse_args()
    seen = read(a.source_csv)
    total = sum(v[1] for v in seen.values()) or 1
    samples = sum(v[2] for v in seen.values()) or 1
    by_op, by_op_s = collections.Counter(), collections.Counter()
    for ins, ex, smp, _ in seen.values():
        by_op[opcode(ins)] += ex
        by_op_s[opcode(ins)] += smp
    print(f"{len(seen)} SASS instructions, {total} warp instructions executed, {samples} stall samples")
    print(f"{'opcode':<10} {'% instr':>8} {'% samples':>10}")
    for op, c in by_op.most_common(a.top):
        print(f"{op:<10} {100 * c / total:8.1f} {100 * by_op_s[op] / samples:10.1f}")
    print(f"{'group':<44} {'% instr':>8} {'% samples':>10}")
    grouped = set()
    for g, ops in GROUPS.items():
        grouped.update(ops)
        c, s = sum(by_op[o] for o in ops), sum(by_op_s[o] for o in ops)
        print(f"{g:<44} {100 * c / total:8.1f} {100 * s / samples:10.1f}")
    rest = sum(c for o, c in by_op.items() if o not in grouped)
    print(f"{'other':<44} {100 * rest / total:8.1f}")
    for want in a.lines:
        lines, lines_s = collections.Counter(), collections.Counter()
        for ins, ex, smp, line in seen.values():
            if opcode(ins) == want:
                lines[line] += ex
                lines_s[line] += smp
        print(f"{want} by source line: % instr, % samples")
        for line, c in lines.most_common(12):
            print(f"  {line[0]}:{line[1]:<5} {100 * c / total:6.2f} {100 * lines_s[line] / samples:6.2f}")
    for at in a.at:
        file, line = at.rsplit(":", 1)
        ops = collections.Counter()
        for ins, ex, _, where in seen.values():
            if where == (file, int(line)):
                ops[opcode(ins)] += ex
        parts = ", ".join(f"{o} {100 * c / total:.2f}" for o, c in ops.most_common(8))
        print(f"{at}: {100 * sum(ops.values()) / total:.2f} % of the instructions ({parts})")


if __name__ == "__main__":
    main()
