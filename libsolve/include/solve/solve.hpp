// libsolve, everything: Krylov solvers on the GPU (solver.hpp), their CPU twin (reference.hpp), the linear
// operators they accept (linear_operator.hpp), options and results (types.hpp), model problems (problems.hpp).
// No CUDA syntax: a plain C++ program can include it and link solve::solve.
#pragma once
#include "solve/linear_operator.hpp"
#include "solve/problems.hpp"
#include "solve/reference.hpp"
#include "solve/solver.hpp"
#include "solve/types.hpp"
