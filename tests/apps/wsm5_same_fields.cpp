// wsm5_same_fields A.h5 B.h5: exit 0 when the two WSM5 domains have the same shape, dt and the same bits
// in every field; otherwise one line naming the first difference and exit 1 (2 when a file cannot be read).
// Compares files field by field (naming the first difference): HDF5 files of the same data from other writers
// may differ in bytes (object timestamps); wsm5::write_hdf5 writes none.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "wsm5/wsm5.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: wsm5_same_fields A.h5 B.h5\n";
    return 2;
  }
  wsm5::domain a, b;
  try {
    a = wsm5::read_hdf5(argv[1]);
    b = wsm5::read_hdf5(argv[2]);
  } catch (const std::exception& e) {
    std::cerr << "wsm5_same_fields: " << e.what() << "\n";
    return 2;
  }
  if (a.nx != b.nx || a.ny != b.ny || a.nz != b.nz || a.dt != b.dt) {
    std::cerr << "wsm5_same_fields: shapes or dt differ\n";
    return 1;
  }
  std::vector<std::string> names = wsm5::field_names_3d();
  names.insert(names.end(), wsm5::field_names_2d().begin(), wsm5::field_names_2d().end());
  for (const auto& n : names) {
    const auto& fa = wsm5::field(a, n);
    const auto& fb = wsm5::field(b, n);
    for (std::size_t x = 0; x < fa.size(); ++x)
      if (std::memcmp(&fa[x], &fb[x], sizeof(float)) != 0) {
        std::cerr << "wsm5_same_fields: " << n << "[" << x << "] differs: " << fa[x] << " vs " << fb[x] << "\n";
        return 1;
      }
  }
  return 0;
}
