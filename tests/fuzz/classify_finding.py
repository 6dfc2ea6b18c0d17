#!/usr/bin/env python3
"""Classifies a libFuzzer finding (its log) as libhdf5's own defect or ours.

    classify_finding.py LOG           exit 0: inside libhdf5 (third party); 1: ours, or no such finding
    classify_finding.py --replay LOG  prints why the unit must be replayed alone (rss, no-report), exit 0;
                                      exit 1 when the log decides by itself
    classify_finding.py --peak LOG    prints the largest heap profile's size, share and first stack
    classify_finding.py --self-test

A timeout, a crash (an AddressSanitizer memory error, a deadly signal) or an out-of-memory is libhdf5 1.10's
defect when the innermost frame of library code (not the sanitizer, libFuzzer, libc or an interceptor) lies
in libhdf5 and, for an overflow, the block overflowed was allocated by libhdf5 too; for out-of-memory the
frame is the allocation's (the one malloc over the limit), or for an RSS out-of-memory the context holding
most of the largest heap profile in the log, if that profile holds at least 512 MB. Seen on corrupted
files: the global-heap code loops forever or copies from a wild address when a variable-length string
attribute points at a corrupted heap object (libhdf5 1.10 checks the object's index by assert only;
HDFGroup/hdf5 pull 2808, in 1.14.2, validates it), the metadata cache frees an address it never allocated
when closing such a file, and the local heap of a corrupted symbol table makes H5Lexists allocate tens of
millions of free-list nodes (24 GB, 2 minutes, for a 13 KB file).
Ours, always: leaks (our handles), UBSan reports, a frame of our code innermost, an allocation by our code
holding the memory, and an overflow of a block our code allocated (a buffer we sized wrong, even if
libhdf5 wrote past it).

Two logs cannot decide and scripts/fuzz replays their unit alone, in a fresh process:
- rss: an RSS out-of-memory that its profiles do not place inside libhdf5 (libFuzzer samples the
  process's peak resident size once a second, which an earlier input may have set, or which the unit set
  and freed before libFuzzer looked; its profile then shows libFuzzer's own buffers). When the replay
  reproduces it and still cannot place it, scripts/fuzz replays once more with ASan's heap_profile=1,
  whose samples every 100 ms catch the heap near its peak, and that log decides; one that places the
  memory in our code, or places it nowhere, fails;
- no-report: a death with no report at all (no sanitizer or libFuzzer "ERROR:", no UBSan "runtime error"),
  nothing to classify (the sanitizer's own CHECK failure is classified by its stack like the rest).
"""
import re
import sys

# "AddressSanitizer: CHECK failed" (no "ERROR:"): ASan's own assertion, seen when libhdf5's H5HG_read
# memcpy's a corrupted global-heap object's size (2.6 TB) and the memcpy interceptor's range check fails.
FINDING = re.compile(r"ERROR: (libFuzzer: (timeout|deadly signal|out-of-memory)|AddressSanitizer: )"
                     r"|AddressSanitizer: CHECK failed")
NOT_LIBRARY_CODE = re.compile(r"sanitizer|__asan|fuzzer::|libc\.so|__interceptor_|sysdeps/")
SOURCE_LOCATION = re.compile(r"\.(cpp|hpp|cc|h|c):\d+")


def innermost(stack):
    """The first frame of library code; interceptors are frames of the fuzz binary without a source line."""
    for line in stack:
        if NOT_LIBRARY_CODE.search(line):
            continue
        if "/fuzz_" in line and not SOURCE_LOCATION.search(line):
            continue
        return line
    return ""


def stacks(text):
    blocks, current = [], []
    for line in text.splitlines():
        if re.match(r"^ +#\d+ ", line):
            current.append(line)
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


# A heap profile: libFuzzer's own (printed with its RSS out-of-memory) or one of ASan's heap_profile=1
# samples ("HEAP PROFILE at RSS ..."); its total live bytes, then its first (largest) context's share and stack.
PROFILE = re.compile(r"Live Heap Allocations: (\d+) bytes.*\n\d+ byte\(s\) \((\d+)%\) in \d+ allocation\(s\)\n"
                     r"((?: +#\d+ .*(?:\n|$))*)")
# A profile places an RSS out-of-memory only when it holds at least 512 MB live, a quarter of the 2048 MB
# limit: ASan's 16-byte chunk header, redzone and 1/8 shadow make libhdf5's 32-byte free-list nodes take
# ~1.6 bytes of RSS per live byte (1324 MB live at 2132 MB RSS), and a quarter leaves room for smaller
# nodes; a profile holding less cannot say who took the memory (libFuzzer's own 20 MB buffers then lead it).
PLACING_BYTES = 512 << 20


def peak_profile(text):
    """(live bytes, first context's share in %, its stack lines) of the profile holding the most, or None."""
    best = None
    for m in PROFILE.finditer(text):
        if best is None or int(m.group(1)) > best[0]:
            best = (int(m.group(1)), int(m.group(2)), m.group(3).splitlines())
    return best


def rss_inside_libhdf5(text):
    """An RSS out-of-memory: libFuzzer samples the process's PEAK resident size once a second, so by the time
    it reports, the memory may be freed and its own profile small; ASan's samples (every 100 ms while RSS
    grows by 10 %, in scripts/fuzz's profiled replay) catch the heap near its peak. The largest profile
    decides: at least PLACING_BYTES live, its first context holding most of them, allocated by libhdf5."""
    peak = peak_profile(text)
    return bool(peak) and peak[0] >= PLACING_BYTES and peak[1] >= 50 and "libhdf5" in innermost(peak[2])


def inside_libhdf5(text):
    m = FINDING.search(text)
    if not m or "ERROR: LeakSanitizer" in text:
        return False
    if text.startswith("ERROR: libFuzzer: out-of-memory (used:", m.start()):
        return rss_inside_libhdf5(text)
    report = text[m.start():]
    blocks = stacks(report)
    if not blocks or "libhdf5" not in innermost(blocks[0]):
        return False
    if "allocated by thread" in report and (len(blocks) < 2 or "libhdf5" not in innermost(blocks[1])):
        return False
    return True


def replay_reason(text):
    """Why this log cannot decide (its unit is replayed alone), or None."""
    if "ERROR: libFuzzer: out-of-memory (used:" in text and not inside_libhdf5(text):
        return "rss"
    if "Test unit written" in text and not FINDING.search(text) and not re.search(r"ERROR: |runtime error", text):
        return "no-report"
    return None


def frame(i, where):
    return f"    #{i} 0x7f0000000000 in {where}"


HDF5 = "(/lib/x86_64-linux-gnu/libhdf5_serial.so.103+0x1)"
UNIT = "artifact_prefix='/b/crashes/'; Test unit written to /b/crashes/crash-0123"
SAMPLES = {
    # name: (log, expected inside_libhdf5[, expected replay_reason])
    "timeout_in_global_heap": ("==1== ERROR: libFuzzer: timeout after 10 seconds\n" + "\n".join([
        frame(0, "__sanitizer_print_stack_trace (/b/fuzz_csr_hdf5+0x1)"),
        frame(1, "fuzzer::PrintStackTrace() (/b/fuzz_csr_hdf5+0x1)"),
        frame(2, " (/lib/x86_64-linux-gnu/libc.so.6+0x3c04f)"),
        frame(3, " " + HDF5), frame(4, "H5HG_read " + HDF5),
        frame(5, "sparse::read_string_attr() /src/libsparse/src/hdf5_io.cpp:206:9")]), True),
    "wild_copy_in_global_heap": ("==1==ERROR: AddressSanitizer: SEGV on unknown address\n" + "\n".join([
        frame(0, "__memcpy_avx_unaligned_erms string/../sysdeps/x86_64/multiarch/memmove.S:531"),
        frame(1, "__interceptor_memcpy (/b/fuzz_csr_hdf5+0xd1d57)"),
        frame(2, "H5HG_read " + HDF5),
        frame(3, "sparse::read_string_attr() /src/libsparse/src/hdf5_io.cpp:206:9")]), True),
    "bad_free_in_metadata_cache": ("==1==ERROR: AddressSanitizer: attempting free on address\n" + "\n".join([
        frame(0, "free (/b/fuzz_csr_hdf5+0x13a532)"), frame(1, "H5MM_xfree " + HDF5),
        frame(2, "H5Fclose " + HDF5), frame(3, "gpukit::hdf5::handle::reset() /src/hdf5_handle.hpp:52:29")]), True),
    "timeout_in_our_reader": ("==1== ERROR: libFuzzer: timeout after 10 seconds\n" + "\n".join([
        frame(0, "__sanitizer_print_stack_trace (/b/fuzz_csr_hdf5+0x1)"),
        frame(1, " (/lib/x86_64-linux-gnu/libc.so.6+0x3c04f)"),
        frame(2, "sparse::open_csr() /src/libsparse/src/hdf5_io.cpp:313:30"),
        frame(3, "H5Aread " + HDF5)]), False),
    "libhdf5_overflows_our_buffer": ("==1==ERROR: AddressSanitizer: heap-buffer-overflow on address\n" + "\n".join([
        frame(0, "__interceptor_memcpy (/b/fuzz_csr_hdf5+0xd1d57)"), frame(1, "H5D__read " + HDF5),
        frame(2, "sparse::read_dataset() /src/libsparse/src/hdf5_io.cpp:120:3")]) +
        "\n0x1 is located 0 bytes to the right of 40-byte region\nallocated by thread T0 here:\n" + "\n".join([
        frame(0, "operator new(unsigned long) (/b/fuzz_csr_hdf5+0x1)"),
        frame(1, "std::vector<int>::vector() /usr/include/c++/12/bits/stl_vector.h:557:7")]), False),
    "libhdf5_overflows_its_own_block": ("==1==ERROR: AddressSanitizer: heap-buffer-overflow on address\n" + "\n".join([
        frame(0, "H5O_attr_decode " + HDF5), frame(1, "H5Aexists " + HDF5)]) +
        "\nallocated by thread T0 here:\n" + "\n".join([
        frame(0, "malloc (/b/fuzz_wsm5_hdf5+0x1)"), frame(1, "H5FL_blk_malloc " + HDF5)]), True),
    "local_heap_free_list_fills_memory": ("==1== ERROR: libFuzzer: out-of-memory (used: 2278Mb; limit: 2048Mb)\n"
        "Live Heap Allocations: 1218876619 bytes in 37216540 chunks; showing top 95%\n"
        "1193485238 byte(s) (97%) in 37213803 allocation(s)\n" + "\n".join([
        frame(0, "malloc (/b/fuzz_wsm5_hdf5+0xf813e)"), frame(1, " " + HDF5)]), True),
    "our_vector_fills_memory": ("==1== ERROR: libFuzzer: out-of-memory (used: 2278Mb; limit: 2048Mb)\n"
        "Live Heap Allocations: 2218876619 bytes in 7 chunks; showing top 95%\n"
        "2193485238 byte(s) (98%) in 1 allocation(s)\n" + "\n".join([
        frame(0, "operator new(unsigned long) (/b/fuzz_wsm5_hdf5+0x1)"),
        frame(1, "wsm5::domain::domain() /src/libwsm5/src/domain.cpp:60:3"), frame(2, "H5Dread " + HDF5)]), False, "rss"),
    "scattered_heap_growth": ("==1== ERROR: libFuzzer: out-of-memory (used: 2278Mb; limit: 2048Mb)\n"
        "Live Heap Allocations: 2218876619 bytes in 7 chunks; showing top 95%\n"
        "443485238 byte(s) (20%) in 100 allocation(s)\n" + "\n".join([
        frame(0, "malloc (/b/fuzz_wsm5_hdf5+0x1)"), frame(1, "H5FL_reg_malloc " + HDF5)]), False, "rss"),
    "malloc_over_the_limit_in_libhdf5": ("==1== ERROR: libFuzzer: out-of-memory (malloc(2621440000))\n" + "\n".join([
        frame(0, "__sanitizer_print_stack_trace (/b/fuzz_wsm5_hdf5+0x1)"), frame(1, "fuzzer::MallocHook (/b/fuzz_wsm5_hdf5+0x1)"),
        frame(2, "malloc (/b/fuzz_wsm5_hdf5+0x1)"), frame(3, "H5O__cache_deserialize " + HDF5),
        frame(4, "H5Fopen " + HDF5)]), True),
    "leak_of_a_libhdf5_allocation": ("==1==ERROR: LeakSanitizer: detected memory leaks\n" + "\n".join([
        frame(0, "malloc (/b/fuzz_csr_hdf5+0x1)"), frame(1, "H5FL_reg_malloc " + HDF5)]) +
        "\n==1==ERROR: AddressSanitizer: SEGV\n" + frame(0, "H5HG_read " + HDF5), False),
    "asan_check_in_libhdf5_memcpy": ('==1==AddressSanitizer: CHECK failed: sanitizer_libc.cpp:274 "((size)) <= '
        '((1ULL << (40)))" (0x26d60000000, 0x10000000000) (tid=1)\n' + "\n".join([
        frame(0, "__asan::CheckUnwind() asan_rtl.cpp.o"),
        frame(1, "__sanitizer::CheckFailed(char const*, int) (/b/fuzz_csr_hdf5+0x1)"),
        frame(2, "__asan_region_is_poisoned (/b/fuzz_csr_hdf5+0x1)"),
        frame(3, "__interceptor_memcpy (/b/fuzz_csr_hdf5+0x1)"), frame(4, "H5HG_read " + HDF5),
        frame(5, "sparse::read_string_attr() /src/libsparse/src/hdf5_io.cpp:206:9")]) + "\n" + UNIT, True),
    "asan_check_in_our_code": ('==1==AddressSanitizer: CHECK failed: sanitizer_libc.cpp:274 "((size))"\n' + "\n".join([
        frame(0, "__asan::CheckUnwind() asan_rtl.cpp.o"), frame(1, "__interceptor_memcpy (/b/fuzz_csr_hdf5+0x1)"),
        frame(2, "sparse::read_dataset() /src/libsparse/src/hdf5_io.cpp:120:3"), frame(3, "H5Dread " + HDF5)]) +
        "\n" + UNIT, False),
    "death_without_report": ("MS: 1 ChangeByte-; base unit: 0\n" + UNIT, False, "no-report"),
    "rss_peak_of_an_earlier_input": ("==1== ERROR: libFuzzer: out-of-memory (used: 2100Mb; limit: 2048Mb)\n"
        "Live Heap Allocations: 9000 bytes in 7 chunks; showing top 95%\n"
        "4000 byte(s) (44%) in 1 allocation(s)\n" + frame(0, "malloc (/b/fuzz_wsm5_hdf5+0x1)") + "\n" + UNIT,
        False, "rss"),
    "rss_freed_before_libfuzzer_looked_sampled_in_libhdf5": (
        "HEAP PROFILE at RSS 2132Mb\n"
        "Live Heap Allocations: 1324237996 bytes in 40601225 chunks; showing top 90% (at most 20 unique contexts)\n"
        "1299881420 byte(s) (98%) in 40599992 allocation(s)\n" + "\n".join([
        frame(0, "malloc (/b/fuzz_wsm5_hdf5+0xf917e)"), frame(1, " " + HDF5)]) + "\n\n"
        "==1== ERROR: libFuzzer: out-of-memory (used: 2132Mb; limit: 2048Mb)\n"
        "Live Heap Allocations: 25091251 bytes in 3008 chunks; showing top 95% (at most 8 unique contexts)\n"
        "20971840 byte(s) (83%) in 1 allocation(s)\n" + "\n".join([
        frame(0, "operator new(unsigned long) (/b/fuzz_wsm5_hdf5+0x133f2d)"),
        frame(1, "fuzzer::FuzzerDriver(int*, char***) (/b/fuzz_wsm5_hdf5+0x4bc6d)"),
        frame(2, "main (/b/fuzz_wsm5_hdf5+0x763f2)")]) + "\n" + UNIT, True),
    "rss_sampled_in_our_code": (
        "HEAP PROFILE at RSS 2132Mb\n"
        "Live Heap Allocations: 1324237996 bytes in 40 chunks; showing top 90% (at most 20 unique contexts)\n"
        "1299881420 byte(s) (98%) in 20 allocation(s)\n" + "\n".join([
        frame(0, "operator new(unsigned long) (/b/fuzz_wsm5_hdf5+0x1)"),
        frame(1, "wsm5::domain::resize() /src/libwsm5/src/domain.cpp:60:3"), frame(2, "H5Dread " + HDF5)]) + "\n\n"
        "==1== ERROR: libFuzzer: out-of-memory (used: 2132Mb; limit: 2048Mb)\n"
        "Live Heap Allocations: 25091251 bytes in 3008 chunks; showing top 95%\n"
        "20971840 byte(s) (83%) in 1 allocation(s)\n" + frame(0, "main (/b/fuzz_wsm5_hdf5+0x763f2)") + "\n" + UNIT,
        False, "rss"),
    "rss_profiles_too_small_to_place": (
        "HEAP PROFILE at RSS 2100Mb\n"
        "Live Heap Allocations: 300000000 bytes in 9000000 chunks; showing top 90%\n"
        "290000000 byte(s) (96%) in 8999000 allocation(s)\n" + "\n".join([
        frame(0, "malloc (/b/fuzz_wsm5_hdf5+0xf917e)"), frame(1, " " + HDF5)]) + "\n\n"
        "==1== ERROR: libFuzzer: out-of-memory (used: 2100Mb; limit: 2048Mb)\n" + UNIT, False, "rss"),
    "ubsan_report": ("/src/libwsm5/src/domain.cpp:52:7: runtime error: signed integer overflow\n" +
        frame(0, "H5Dread " + HDF5), False),
}


def self_test():
    failures = [name for name, (log, expected, *replay) in SAMPLES.items()
                if inside_libhdf5(log) != expected or replay_reason(log) != (replay[0] if replay else None)]
    for name in failures:
        print(f"classify_finding self-test: {name} misclassified", file=sys.stderr)
    print(f"classify_finding self-test: {len(SAMPLES) - len(failures)} of {len(SAMPLES)} samples classified right")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if sys.argv[1:2] == ["--peak"] and len(sys.argv) == 3:
        with open(sys.argv[2], errors="replace") as f:
            peak = peak_profile(f.read())
        if peak:
            print(f"largest heap profile: {peak[0] >> 20} MB live, {peak[1]}% in its first context:")
            print("\n".join(peak[2]))
        sys.exit(0 if peak else 1)
    if sys.argv[1:2] == ["--replay"] and len(sys.argv) == 3:
        with open(sys.argv[2], errors="replace") as f:
            reason = replay_reason(f.read())
        if reason:
            print(reason)
        sys.exit(0 if reason else 1)
    if len(sys.argv) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    with open(sys.argv[1], errors="replace") as f:
        sys.exit(0 if inside_libhdf5(f.read()) else 1)
