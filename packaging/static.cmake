# JMT_STATIC=ON: the jmethodtime executable as one static binary that needs nothing at run time
# (no libbpf1, libelf1, zlib1g, libstdc++6 or libc6; its BPF objects are in the skeleton headers).
#
# The imported targets from pkg-config (PkgConfig::LIBBPF, PkgConfig::LIBELF) and FindZLIB
# (ZLIB::ZLIB) point at shared objects. Here they are re-pointed at the archives, in the order
# `pkg-config --static --libs libbpf` / `libelf` gives them (libbpf.a needs libelf.a and libz.a;
# a libelf.a built with zstd or lzma lists those too), and jmethodtime is linked with -static,
# which also takes glibc, libstdc++ and libgcc from their archives. jmt_core's own link line
# is unchanged. The other executables (jmt-floor, jmt-probe-cost, the tests) link the same
# archives but stay dynamic executables.

# jmt_static_archives(OUT NAME...): OUT = the lib<NAME>.a of each pkg-config library name, in
# order; the C runtime's own names (c, m, pthread, dl, rt) stay names: -static takes them from
# glibc's archives.
function(jmt_static_archives out)
  set(archives)
  foreach(name IN LISTS ARGN)
    if(name MATCHES "^(c|m|pthread|dl|rt)$")
      list(APPEND archives ${name})
      continue()
    endif()
    string(MAKE_C_IDENTIFIER "JMT_STATIC_LIB_${name}" var)
    find_library(${var} NAMES lib${name}.a)
    mark_as_advanced(${var})
    if(NOT ${var})
      message(FATAL_ERROR "JMT_STATIC=ON: lib${name}.a not found (pkg-config --static names -l${name}); "
                          "install the -dev package that has it, or configure with -DJMT_STATIC=OFF")
    endif()
    list(APPEND archives ${${var}})
  endforeach()
  set(${out} ${archives} PARENT_SCOPE)
endfunction()

jmt_static_archives(jmt_libbpf_archives ${LIBBPF_STATIC_LIBRARIES})
jmt_static_archives(jmt_libelf_archives ${LIBELF_STATIC_LIBRARIES})
jmt_static_archives(jmt_zlib_archive z)
set_property(TARGET PkgConfig::LIBBPF PROPERTY INTERFACE_LINK_LIBRARIES ${jmt_libbpf_archives})
set_property(TARGET PkgConfig::LIBELF PROPERTY INTERFACE_LINK_LIBRARIES ${jmt_libelf_archives})
foreach(prop IMPORTED_LOCATION IMPORTED_LOCATION_RELEASE IMPORTED_LOCATION_DEBUG)
  get_target_property(loc ZLIB::ZLIB ${prop})
  if(loc)
    set_property(TARGET ZLIB::ZLIB PROPERTY ${prop} ${jmt_zlib_archive})
  endif()
endforeach()
target_link_options(jmethodtime PRIVATE -static)
message(STATUS "JMT_STATIC: jmethodtime links -static with ${jmt_libbpf_archives};${jmt_libelf_archives}")
