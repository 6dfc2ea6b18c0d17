# gpukit_warnings(<target>): warnings on for host code (g++) and device code (nvcc, ptxas), for the
# project's own targets only. Third-party headers come in as SYSTEM includes and stay quiet.
function(gpukit_warnings target)
  set(host_flags -Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wcast-align -Wunused -Woverloaded-virtual)
  list(JOIN host_flags "," host_flags_csv)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${host_flags}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${host_flags_csv} --expt-relaxed-constexpr>)
  # Register spills and local arrays are performance choices, not defects (WSM5 keeps level loops in
  # local arrays by design): report them on request instead of failing -Werror builds.
  if(GPUKIT_PTXAS_REPORT)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-Xptxas=-v,-warn-spills,-warn-lmem-usage>)
  endif()
  if(GPUKIT_WERROR)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-Werror>
      $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
  endif()
endfunction()
