// The matrix corpus of `spmv bench --corpus` (host only): the matrix files of directories or paths the
// user names, and the generated cases (--corpus-generated), each read or generated as float values and
// int32 indices. Errors are gpukit::bad_input (exit 2) naming the path.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sparse/csr.hpp"
#include "sparse/generate.hpp"

namespace spmv_app {

struct corpus_entry {
  std::string name;               ///< the row name in tables and reports (unique within a corpus)
  std::string path;               ///< the matrix file as the user named it; empty for a generated case
  sparse::generate_params params; ///< a generated case's parameters (unused for a file)
  bool generated() const { return path.empty(); }
};

/// The matrix files of `paths`, in the given order: a directory gives every regular file in it (not
/// recursively) whose extension is .mtx, .h5 or .hdf5 (any case), sorted by name; a file must have one of
/// those extensions. A file named twice is listed once. Names are the file names, or the paths as given
/// where two files share a name. Each directory entry left out (other extensions, subdirectories) is
/// appended to `skipped` as "DIR/NAME". bad_input for a missing path, a file of another extension, a
/// directory without matrix files, or no path at all.
std::vector<corpus_entry> corpus_files(const std::vector<std::string>& paths, std::vector<std::string>& skipped);

/// The generated cases: banded, block-diagonal, power-law, arrow, random k per row, one dense row,
/// rectangular and the Laplacians, 1,000 to 10,000,000 rows (the list and sizes in corpus.cpp).
std::vector<corpus_entry> generated_corpus();

/// The entries of a generated case without generating it: exact for the Laplacians, block_diagonal and
/// square banded and arrow matrices; an upper bound for random_k, dense_row (k per short row) and
/// rectangular banded and arrow ones; power_law: its expected count for the default cap (~6.2 per row).
std::int64_t expected_entries(const sparse::generate_params& p);

/// The matrix of `e`, float values and int32 indices: read (bad_input naming the file for anything the
/// reader refuses, and for an empty matrix: nothing to time) or generated.
sparse::host_csr<float, std::int32_t> load(const corpus_entry& e);

}  // namespace spmv_app
